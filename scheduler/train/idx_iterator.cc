#include "scheduler/train/idx_iterator.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <sstream>

#include "core/error.h"

namespace mxlite {
namespace {

// Deflate cannot expand data by more than this factor, so a gzip file of n bytes holds at most
// n * kMaxDeflateRatio bytes: a bound to check IDX headers against before reading.
constexpr uint64_t kMaxDeflateRatio = 1032;
constexpr size_t kChunkBytes = size_t{1} << 20;
constexpr uint8_t kIdxUnsignedByte = 0x08;

using FilePtr = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

FilePtr OpenForReading(const std::string& path) {
  FilePtr file(std::fopen(path.c_str(), "rb"), &std::fclose);
  MX_CHECK(file != nullptr) << path << ": cannot open for reading: " << std::strerror(errno);
  return file;
}

uint64_t FileSize(std::FILE* file, const std::string& path) {
  MX_CHECK(std::fseek(file, 0, SEEK_END) == 0) << path << ": cannot seek: " << std::strerror(errno);
  long size = std::ftell(file);
  MX_CHECK(size >= 0) << path << ": cannot tell its size: " << std::strerror(errno);
  std::rewind(file);
  return static_cast<uint64_t>(size);
}

// A stream of the file's (decompressed) bytes.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Up to n bytes into destination; fewer only at the end of the data.
  virtual size_t Read(uint8_t* destination, size_t n) = 0;
  // An upper bound on all the bytes this source can produce.
  virtual uint64_t MaxTotalBytes() const = 0;
};

class PlainSource : public ByteSource {
 public:
  PlainSource(FilePtr file, std::string path, uint64_t size)
      : file_(std::move(file)), path_(std::move(path)), size_(size) {}

  size_t Read(uint8_t* destination, size_t n) override {
    size_t got = std::fread(destination, 1, n, file_.get());
    MX_CHECK(got == n || !std::ferror(file_.get()))
        << path_ << ": read error: " << std::strerror(errno);
    return got;
  }
  uint64_t MaxTotalBytes() const override { return size_; }

 private:
  FilePtr file_;
  std::string path_;
  uint64_t size_;
};

// Inflates a gzip file (several concatenated members allowed). zlib checks each member's CRC when
// it reaches the member's end, so callers read to the end (see ReadIdxFile) to have it checked.
class GzipSource : public ByteSource {
 public:
  GzipSource(FilePtr file, std::string path, uint64_t size)
      : file_(std::move(file)), path_(std::move(path)), size_(size), input_(kChunkBytes) {
    std::memset(&stream_, 0, sizeof(stream_));
    // 15 + 16: a 32 KiB window and a gzip (not zlib) wrapper.
    MX_CHECK(inflateInit2(&stream_, 15 + 16) == Z_OK) << path_ << ": cannot start zlib";
  }
  ~GzipSource() override { inflateEnd(&stream_); }

  size_t Read(uint8_t* destination, size_t n) override {
    stream_.next_out = destination;
    stream_.avail_out = static_cast<uInt>(n);
    while (stream_.avail_out > 0 && !finished_) Inflate();
    return n - stream_.avail_out;
  }
  uint64_t MaxTotalBytes() const override { return size_ * kMaxDeflateRatio; }

 private:
  // Refills the input if needed and inflates once.
  void Inflate() {
    if (stream_.avail_in == 0) Refill();
    int status = inflate(&stream_, Z_NO_FLUSH);
    if (status == Z_STREAM_END) {
      if (stream_.avail_in == 0) Refill();
      if (stream_.avail_in == 0) {
        finished_ = true;
      } else {
        inflateReset(&stream_);  // another gzip member follows
      }
      return;
    }
    MX_CHECK(status != Z_BUF_ERROR || stream_.avail_in > 0)
        << path_ << ": the gzip stream ends early (truncated file?)";
    MX_CHECK(status == Z_OK || status == Z_BUF_ERROR)
        << path_ << ": corrupt gzip stream: " << (stream_.msg ? stream_.msg : zError(status));
  }

  void Refill() {
    size_t got = std::fread(input_.data(), 1, input_.size(), file_.get());
    MX_CHECK(got > 0 || !std::ferror(file_.get()))
        << path_ << ": read error: " << std::strerror(errno);
    stream_.next_in = input_.data();
    stream_.avail_in = static_cast<uInt>(got);
  }

  FilePtr file_;
  std::string path_;
  uint64_t size_;
  std::vector<uint8_t> input_;
  z_stream stream_;
  bool finished_ = false;
};

std::unique_ptr<ByteSource> OpenIdxSource(const std::string& path) {
  FilePtr file = OpenForReading(path);
  uint64_t size = FileSize(file.get(), path);
  std::array<uint8_t, 2> start{};
  size_t got = std::fread(start.data(), 1, start.size(), file.get());
  std::rewind(file.get());
  if (got == 2 && start[0] == 0x1f && start[1] == 0x8b) {
    return std::make_unique<GzipSource>(std::move(file), path, size);
  }
  return std::make_unique<PlainSource>(std::move(file), path, size);
}

std::string Hex(const uint8_t* bytes, size_t n) {
  std::ostringstream out;
  out << std::hex;
  for (size_t i = 0; i < n; ++i) out << (i ? " " : "") << (bytes[i] >> 4) << (bytes[i] & 0xf);
  return out.str();
}

std::string DimsText(const std::vector<int64_t>& dims) {
  std::ostringstream out;
  for (size_t i = 0; i < dims.size(); ++i) out << (i ? " x " : "") << dims[i];
  return out.str();
}

// An open IDX file whose header has been read and checked.
class IdxReader {
 public:
  IdxReader(const std::string& path, int expected_ndim)
      : path_(path), source_(OpenIdxSource(path)) {
    ReadHeader(expected_ndim);
  }

  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t count() const { return dims_[0]; }

  // Reads all the data, keeps items [first, first + count), and checks that nothing follows.
  std::vector<uint8_t> ReadItems(int64_t first, int64_t count) {
    MX_CHECK(first >= 0 && count >= 0 && first + count <= dims_[0])
        << path_ << ": items [" << first << ", " << first + count << ") asked of " << dims_[0];
    const uint64_t keep_begin = static_cast<uint64_t>(first) * item_bytes_;
    const uint64_t keep_end = keep_begin + static_cast<uint64_t>(count) * item_bytes_;
    std::vector<uint8_t> kept;
    std::vector<uint8_t> chunk(std::min<uint64_t>(std::max<uint64_t>(data_bytes_, 1), kChunkBytes));
    uint64_t position = 0;
    while (position < data_bytes_) {
      size_t want = static_cast<size_t>(std::min<uint64_t>(data_bytes_ - position, chunk.size()));
      size_t got = source_->Read(chunk.data(), want);
      uint64_t begin = std::max(position, keep_begin);
      uint64_t end = std::min(position + got, keep_end);
      if (begin < end) {
        kept.insert(kept.end(), chunk.begin() + (begin - position),
                    chunk.begin() + (end - position));
      }
      position += got;
      if (got < want) break;
    }
    MX_CHECK(position == data_bytes_)
        << path_ << ": truncated: the header says " << DimsText(dims_) << " bytes of data ("
        << data_bytes_ << ") but the data ends after " << position;
    uint8_t extra = 0;
    MX_CHECK(source_->Read(&extra, 1) == 0)
        << path_ << ": longer than its header says (" << DimsText(dims_) << " = " << data_bytes_
        << " bytes of data after the header); not the file that was meant?";
    return kept;
  }

 private:
  void ReadHeader(int expected_ndim) {
    std::array<uint8_t, 4> magic{};
    MX_CHECK(source_->Read(magic.data(), 4) == 4) << path_ << ": too short for an IDX header";
    const uint8_t expected[4] = {0, 0, kIdxUnsignedByte, static_cast<uint8_t>(expected_ndim)};
    MX_CHECK(std::equal(magic.begin(), magic.end(), expected))
        << path_ << ": bad magic number " << Hex(magic.data(), 4) << ", expected "
        << Hex(expected, 4) << " (an IDX file of unsigned bytes with " << expected_ndim
        << " dimensions"
        << (expected_ndim == 3   ? ", images"
            : expected_ndim == 1 ? ", labels"
                                 : "")
        << ")";
    for (int axis = 0; axis < expected_ndim; ++axis) {
      std::array<uint8_t, 4> be{};
      MX_CHECK(source_->Read(be.data(), 4) == 4) << path_ << ": truncated IDX header";
      dims_.push_back((int64_t{be[0]} << 24) | (int64_t{be[1]} << 16) | (int64_t{be[2]} << 8) |
                      int64_t{be[3]});
    }
    const uint64_t header_bytes = 4 + 4 * static_cast<uint64_t>(expected_ndim);
    uint64_t bytes = 1;
    bool overflow = false;
    for (int64_t dim : dims_) overflow |= __builtin_mul_overflow(bytes, dim, &bytes);
    MX_CHECK(!overflow && bytes <= source_->MaxTotalBytes() - header_bytes)
        << path_ << ": truncated: the header promises " << DimsText(dims_)
        << (overflow ? "" : " = " + std::to_string(bytes)) << " bytes of data after "
        << header_bytes << " bytes of header, but the file can hold at most "
        << source_->MaxTotalBytes() << " bytes";
    data_bytes_ = bytes;
    item_bytes_ = dims_[0] == 0 ? 0 : bytes / static_cast<uint64_t>(dims_[0]);
  }

  std::string path_;
  std::unique_ptr<ByteSource> source_;
  std::vector<int64_t> dims_;
  uint64_t data_bytes_ = 0;
  uint64_t item_bytes_ = 0;
};

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A uniform integer in [0, n) by rejection: the same on every platform (unlike
// std::uniform_int_distribution, whose algorithm the standard leaves open).
uint64_t UniformBelow(std::mt19937_64& rng, uint64_t n) {
  const uint64_t limit =
      std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % n;
  uint64_t value = 0;
  do value = rng();
  while (value >= limit);
  return value % n;
}

std::vector<int64_t> Permutation(int64_t n, bool shuffle, uint64_t seed, int epoch) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[i] = i;
  if (!shuffle) return order;
  std::mt19937_64 rng(SplitMix64(seed ^ SplitMix64(static_cast<uint64_t>(epoch))));
  for (int64_t i = n - 1; i > 0; --i) {  // Fisher-Yates
    std::swap(order[i], order[UniformBelow(rng, static_cast<uint64_t>(i) + 1)]);
  }
  return order;
}

}  // namespace

IdxArray ReadIdxFile(const std::string& path, int expected_ndim, int64_t first_item,
                     int64_t item_count) {
  MX_CHECK(expected_ndim >= 1 && expected_ndim <= 255) << path << ": ndim " << expected_ndim;
  IdxReader reader(path, expected_ndim);
  if (item_count < 0) item_count = reader.count() - first_item;
  IdxArray array;
  array.bytes = reader.ReadItems(first_item, item_count);
  array.dims = reader.dims();
  array.dims[0] = item_count;
  return array;
}

LastBatchHandle ParseLastBatchHandle(std::string_view name) {
  if (name == "pad") return LastBatchHandle::kPad;
  if (name == "discard") return LastBatchHandle::kDiscard;
  if (name == "roll_over") return LastBatchHandle::kRollOver;
  MX_THROW() << "unknown last_batch_handle '" << name << "'; known: pad, discard, roll_over";
}

const char* LastBatchHandleName(LastBatchHandle handle) {
  switch (handle) {
    case LastBatchHandle::kPad:
      return "pad";
    case LastBatchHandle::kDiscard:
      return "discard";
    case LastBatchHandle::kRollOver:
      return "roll_over";
  }
  return "?";
}

IdxIterator::IdxIterator(IdxIteratorOptions options) : options_(std::move(options)) {
  MX_CHECK(options_.batch_size > 0) << "IdxIterator: batch_size " << options_.batch_size;
  MX_CHECK(options_.num_parts >= 1 && options_.part_index >= 0 &&
           options_.part_index < options_.num_parts)
      << "IdxIterator: part_index " << options_.part_index << " of num_parts "
      << options_.num_parts;
  MX_CHECK(options_.stddev > 0) << "IdxIterator: stddev " << options_.stddev;
  MX_CHECK(options_.prefetch_batches >= 0)
      << "IdxIterator: prefetch_batches " << options_.prefetch_batches;
  for (int p = 0; p < 256; ++p) {
    pixel_values_[p] = (static_cast<float>(p) / 255.0f - options_.mean) / options_.stddev;
  }
  LoadFiles();
  MX_CHECK(options_.last_batch_handle != LastBatchHandle::kDiscard ||
           num_samples_ >= options_.batch_size)
      << "IdxIterator: " << num_samples_ << " samples, fewer than batch_size "
      << options_.batch_size << ", and last_batch_handle 'discard' leaves no batch";
  StartEpoch();
}

IdxIterator::~IdxIterator() { StopProducer(); }

void IdxIterator::LoadFiles() {
  IdxReader labels(options_.label_path, 1);
  IdxReader images(options_.image_path, 3);
  MX_CHECK(images.count() == labels.count())
      << options_.image_path << " holds " << images.count() << " images but " << options_.label_path
      << " holds " << labels.count() << " labels; expected as many";
  const int64_t total = images.count();
  first_sample_ = total * options_.part_index / options_.num_parts;
  num_samples_ = total * (options_.part_index + 1) / options_.num_parts - first_sample_;
  MX_CHECK(num_samples_ > 0) << options_.image_path << ": part " << options_.part_index << " of "
                             << options_.num_parts << " of " << total << " samples is empty";
  rows_ = images.dims()[1];
  cols_ = images.dims()[2];
  labels_ = labels.ReadItems(first_sample_, num_samples_);
  pixels_ = images.ReadItems(first_sample_, num_samples_);
}

Shape IdxIterator::data_shape() const { return Shape{options_.batch_size, 1, rows_, cols_}; }

void IdxIterator::StartEpoch() {
  const size_t batch = static_cast<size_t>(options_.batch_size);
  order_ = Permutation(num_samples_, options_.shuffle, options_.seed, epoch_);
  switch (options_.last_batch_handle) {
    case LastBatchHandle::kPad:
      epoch_batches_ = (order_.size() + batch - 1) / batch;
      break;
    case LastBatchHandle::kDiscard:
      epoch_batches_ = order_.size() / batch;
      break;
    case LastBatchHandle::kRollOver:
      order_.insert(order_.begin(), carry_.begin(), carry_.end());
      epoch_batches_ = order_.size() / batch;
      carry_.assign(order_.begin() + epoch_batches_ * batch, order_.end());
      break;
  }
  next_batch_ = 0;
  ready_.clear();
  stop_ = false;
  error_ = nullptr;
  if (options_.prefetch_batches > 0 && epoch_batches_ > 0) {
    producer_ = std::thread(&IdxIterator::ProducerLoop, this, epoch_batches_);
  }
}

DataBatch IdxIterator::MakeBatch(size_t batch_number) const {
  const int64_t batch = options_.batch_size;
  const int64_t image_bytes = rows_ * cols_;
  DataBatch out;
  out.data = NDArray(data_shape(), Context::CPU(), DType::kFloat32);
  out.label = NDArray(Shape{batch}, Context::CPU(), DType::kFloat32);
  out.data.WaitToWrite();
  out.label.WaitToWrite();
  float* data = out.data.data<float>();
  float* label = out.label.data<float>();
  const size_t first = batch_number * static_cast<size_t>(batch);
  const int64_t past_end =
      static_cast<int64_t>(first) + batch - static_cast<int64_t>(order_.size());
  out.pad = static_cast<int>(std::max<int64_t>(0, past_end));
  out.index.resize(static_cast<size_t>(batch));
  for (int64_t i = 0; i < batch; ++i) {
    const int64_t sample = order_[(first + static_cast<size_t>(i)) % order_.size()];
    const uint8_t* pixels = pixels_.data() + sample * image_bytes;
    float* image = data + i * image_bytes;
    for (int64_t p = 0; p < image_bytes; ++p) image[p] = pixel_values_[pixels[p]];
    label[i] = static_cast<float>(labels_[sample]);
    out.index[i] = first_sample_ + sample;
  }
  if (options_.batch_transform) options_.batch_transform(out);
  return out;
}

void IdxIterator::ProducerLoop(size_t epoch_batches) {
  for (size_t b = 0; b < epoch_batches; ++b) {
    DataBatch batch;
    try {
      batch = MakeBatch(b);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      error_ = std::current_exception();
      filled_.notify_all();
      return;
    }
    std::unique_lock<std::mutex> lock(mutex_);
    space_.wait(lock, [&] {
      return stop_ || ready_.size() < static_cast<size_t>(options_.prefetch_batches);
    });
    if (stop_) return;
    ready_.push_back(std::move(batch));
    filled_.notify_one();
  }
}

bool IdxIterator::Next(DataBatch* batch) {
  MX_CHECK(batch != nullptr) << "IdxIterator::Next: null batch";
  if (next_batch_ >= epoch_batches_) return false;
  if (options_.prefetch_batches == 0) {
    *batch = MakeBatch(next_batch_);
  } else {
    std::unique_lock<std::mutex> lock(mutex_);
    filled_.wait(lock, [&] { return !ready_.empty() || error_ != nullptr; });
    // The producer has stopped at the error; every later call reports it until Reset().
    if (error_ != nullptr) std::rethrow_exception(error_);
    *batch = std::move(ready_.front());
    ready_.pop_front();
    space_.notify_one();
  }
  ++next_batch_;
  return true;
}

void IdxIterator::StopProducer() {
  if (!producer_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  space_.notify_all();
  producer_.join();
}

void IdxIterator::Reset() {
  StopProducer();
  ++epoch_;
  StartEpoch();
}

}  // namespace mxlite
