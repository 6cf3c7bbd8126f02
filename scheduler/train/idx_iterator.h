// IdxIterator: batches from IDX files (the MNIST / Fashion-MNIST format), for training loops.
//
//   IdxIterator train({.image_path = dir + "/train-images-idx3-ubyte.gz",
//                      .label_path = dir + "/train-labels-idx1-ubyte.gz",
//                      .batch_size = 64, .shuffle = true, .seed = 7});
//   for (int epoch = 0; epoch < 5; ++epoch, train.Reset()) {
//     DataBatch batch;
//     while (train.Next(&batch)) { ... batch.data (64,1,28,28), batch.label (64) ... }
//   }
//
// Files. Images are an idx3 ubyte file (magic 0x00000803: count, rows, cols), labels an idx1
// ubyte file (magic 0x00000801: count), each plain or gzip-compressed (told apart by the gzip
// magic, not the name). The whole shard is read into memory at construction, as uint8. Every
// problem with a file (missing, bad magic, truncated, longer than its header says, a corrupt gzip
// stream, image and label counts that differ) throws mxlite::Error naming the file and what was
// expected. Sizes in a header are checked against the data actually present before anything that
// size is allocated, so a lying header cannot cause a huge allocation.
//
// Batches. Pixels become float32 x / 255, then (x - mean) / stddev. data is (N,1,rows,cols) and
// label (N) float32 on the CPU; every batch gets fresh arrays, so a caller may keep them. The last,
// short batch of an epoch follows MXNet's `last_batch_handle`: "pad" fills it up with samples from
// the start of the epoch's order and sets DataBatch::pad; "discard" drops it; "roll_over" carries
// its samples into the first batch of the next epoch.
//
// Order. Without shuffle, file order. With shuffle, epoch e uses a permutation drawn from (seed, e)
// by mxlite's own generator, the same on every run and platform. Reset() starts the next epoch.
//
// Sharding. With num_parts > 1 the iterator sees only samples [n*part_index/num_parts,
// n*(part_index+1)/num_parts) of the files, contiguous: the parts partition the data, and shuffling
// happens within a part.
//
// Prefetch. With prefetch_batches > 0 a background thread assembles up to that many batches ahead
// into a bounded queue; the batches are the same as without prefetching. An exception in that
// thread (e.g. from batch_transform) is rethrown by the next Next() call; Reset() clears it. The
// destructor and Reset() stop the thread cleanly, also while it waits on a full queue.
//
// Thread safety: one thread drives an IdxIterator (Next, Reset, accessors). The prefetch thread is
// internal; batch_transform runs on it when prefetching.
#pragma once

#include <array>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/shape.h"
#include "engine/ndarray.h"

namespace mxlite {

// The contents of one IDX ubyte file: its dimensions (dims[0] is the item count) and the bytes.
struct IdxArray {
  std::vector<int64_t> dims;
  std::vector<uint8_t> bytes;
};

// Reads an IDX file of unsigned bytes with `expected_ndim` dimensions, plain or gzip-compressed.
// Only items [first_item, first_item + item_count) are kept (item_count -1: to the end), but the
// whole file is read and checked. Throws mxlite::Error on any problem (see the file comment).
IdxArray ReadIdxFile(const std::string& path, int expected_ndim, int64_t first_item = 0,
                     int64_t item_count = -1);

// MXNet's last_batch_handle values.
enum class LastBatchHandle { kPad, kDiscard, kRollOver };
// "pad", "discard" or "roll_over"; anything else throws, listing these.
LastBatchHandle ParseLastBatchHandle(std::string_view name);
const char* LastBatchHandleName(LastBatchHandle handle);

struct DataBatch {
  NDArray data;   // (batch_size, 1, rows, cols) float32, CPU
  NDArray label;  // (batch_size) float32, CPU
  // Samples at the end of this batch that only fill it up ("pad" mode); 0 otherwise.
  int pad = 0;
  // Index in the files of each sample of the batch (padding included).
  std::vector<int64_t> index;
};

struct IdxIteratorOptions {
  std::string image_path;
  std::string label_path;
  int batch_size = 128;
  bool shuffle = false;
  uint64_t seed = 0;
  LastBatchHandle last_batch_handle = LastBatchHandle::kPad;
  // Normalisation after scaling to [0, 1]: (x - mean) / stddev.
  float mean = 0.0f;
  float stddev = 1.0f;
  int part_index = 0;
  int num_parts = 1;
  // Batches assembled ahead by a background thread; 0 assembles each batch inside Next().
  int prefetch_batches = 2;
  // Called on each assembled batch before Next() returns it (augmentation); may throw.
  std::function<void(DataBatch&)> batch_transform = nullptr;
};

class IdxIterator {
 public:
  explicit IdxIterator(IdxIteratorOptions options);
  ~IdxIterator();
  IdxIterator(const IdxIterator&) = delete;
  IdxIterator& operator=(const IdxIterator&) = delete;

  // The next batch of the current epoch into *batch; false (and *batch untouched) at its end.
  bool Next(DataBatch* batch);
  // Starts the next epoch (a new permutation when shuffling), also before the current one ended.
  void Reset();

  // Batches in the current epoch (with roll_over it depends on what the previous epoch left).
  int64_t num_batches() const { return static_cast<int64_t>(epoch_batches_); }
  // Samples in this iterator's part of the files.
  int64_t num_samples() const { return num_samples_; }
  int epoch() const { return epoch_; }
  // Shape of one batch's data: (batch_size, 1, rows, cols).
  Shape data_shape() const;
  const IdxIteratorOptions& options() const { return options_; }

 private:
  void LoadFiles();
  void StartEpoch();  // computes order_ and epoch_batches_, starts the producer if prefetching
  DataBatch MakeBatch(size_t batch_number) const;
  void ProducerLoop(size_t epoch_batches);
  void StopProducer();

  const IdxIteratorOptions options_;
  int64_t first_sample_ = 0;  // index in the files of this part's first sample
  int64_t num_samples_ = 0;
  int64_t rows_ = 0;
  int64_t cols_ = 0;
  std::vector<uint8_t> pixels_;            // num_samples_ * rows_ * cols_
  std::vector<uint8_t> labels_;            // num_samples_
  std::array<float, 256> pixel_values_{};  // pixel byte -> normalised value

  // Epoch state, written only by the driving thread while no producer runs.
  int epoch_ = 0;
  std::vector<int64_t> order_;  // sample numbers (within the part) for this epoch's batches
  std::vector<int64_t> carry_;  // roll_over: samples left over for the next epoch
  size_t epoch_batches_ = 0;
  size_t next_batch_ = 0;  // consumed so far (driving thread only)

  // Prefetch queue. mutex_ guards ready_, stop_ and error_; the producer waits on space_ while the
  // queue is full, the consumer on filled_ while it is empty.
  std::thread producer_;
  std::mutex mutex_;
  std::condition_variable space_;
  std::condition_variable filled_;
  std::deque<DataBatch> ready_;
  bool stop_ = false;
  std::exception_ptr error_;
};

}  // namespace mxlite
