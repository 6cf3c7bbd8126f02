// IdxIterator and ReadIdxFile: on the real Fashion-MNIST files (Debian dataset-fashion-mnist) and
// on small plain and gzip files written here, including broken ones.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "scheduler/train/idx_iterator.h"

namespace mxlite {
namespace {

namespace fs = std::filesystem;

const std::string kFashionDir = "/usr/share/datasets/fashion-mnist";

std::string FashionFile(const std::string& name) { return kFashionDir + "/" + name; }

bool HaveFashionMnist() { return fs::exists(FashionFile("t10k-labels-idx1-ubyte.gz")); }

#define REQUIRE_FASHION_MNIST()                                   \
  if (!HaveFashionMnist())                                        \
  GTEST_SKIP() << "Fashion-MNIST not found under " << kFashionDir \
               << " (Debian package dataset-fashion-mnist)"

// The message of the mxlite::Error that `body` throws; fails the test when it throws none.
std::string ErrorOf(const std::function<void()>& body) {
  try {
    body();
  } catch (const Error& error) {
    return error.what();
  }
  ADD_FAILURE() << "no mxlite::Error thrown";
  return "";
}

// A fresh folder per test, removed afterwards.
class IdxFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    folder_ = fs::temp_directory_path() /
              ("mxlite_idx_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(folder_);
    fs::create_directories(folder_);
  }
  void TearDown() override { fs::remove_all(folder_); }

  std::string PathOf(const std::string& name) const { return (folder_ / name).string(); }

  static std::vector<uint8_t> IdxBytes(uint8_t ndim, const std::vector<uint32_t>& dims,
                                       const std::vector<uint8_t>& data) {
    std::vector<uint8_t> bytes = {0, 0, 0x08, ndim};
    for (uint32_t dim : dims) {
      for (int shift = 24; shift >= 0; shift -= 8)
        bytes.push_back(static_cast<uint8_t>(dim >> shift));
    }
    bytes.insert(bytes.end(), data.begin(), data.end());
    return bytes;
  }

  std::string WritePlain(const std::string& name, const std::vector<uint8_t>& bytes) const {
    std::ofstream out(PathOf(name), std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    return PathOf(name);
  }

  std::string WriteGzip(const std::string& name, const std::vector<uint8_t>& bytes) const {
    gzFile file = gzopen(PathOf(name).c_str(), "wb");
    EXPECT_NE(file, nullptr);
    EXPECT_EQ(gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size())),
              static_cast<int>(bytes.size()));
    gzclose(file);
    return PathOf(name);
  }

  std::vector<uint8_t> ReadBytes(const std::string& path) const {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  // n images of rows x cols with pseudo-random pixels (image i's first pixel is i), labels i % 10.
  void MakeDataset(int n, int rows, int cols) {
    images_.assign(static_cast<size_t>(n) * rows * cols, 0);
    uint32_t state = 12345;
    for (size_t i = 0; i < images_.size(); ++i) {
      state = state * 1664525u + 1013904223u;
      images_[i] = static_cast<uint8_t>(state >> 24);
    }
    for (int i = 0; i < n; ++i)
      images_[static_cast<size_t>(i) * rows * cols] = static_cast<uint8_t>(i);
    labels_.resize(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) labels_[i] = static_cast<uint8_t>(i % 10);
    image_file_ = IdxBytes(
        3, {static_cast<uint32_t>(n), static_cast<uint32_t>(rows), static_cast<uint32_t>(cols)},
        images_);
    label_file_ = IdxBytes(1, {static_cast<uint32_t>(n)}, labels_);
  }

  IdxIteratorOptions Options(const std::string& images, const std::string& labels) const {
    IdxIteratorOptions options;
    options.image_path = images;
    options.label_path = labels;
    options.batch_size = 4;
    return options;
  }

  fs::path folder_;
  std::vector<uint8_t> images_, labels_, image_file_, label_file_;
};

struct Epoch {
  std::vector<std::vector<int64_t>> indices;
  std::vector<std::vector<float>> data;
  std::vector<std::vector<float>> labels;
  std::vector<int> pads;
};

Epoch ReadEpoch(IdxIterator& iterator) {
  Epoch epoch;
  DataBatch batch;
  while (iterator.Next(&batch)) {
    epoch.indices.push_back(batch.index);
    epoch.data.push_back(batch.data.ToVector<float>());
    epoch.labels.push_back(batch.label.ToVector<float>());
    epoch.pads.push_back(batch.pad);
  }
  return epoch;
}

// The sample indices of an epoch without the padding.
std::vector<int64_t> SamplesOf(const Epoch& epoch) {
  std::vector<int64_t> samples;
  for (size_t b = 0; b < epoch.indices.size(); ++b) {
    samples.insert(samples.end(), epoch.indices[b].begin(), epoch.indices[b].end() - epoch.pads[b]);
  }
  return samples;
}

TEST(IdxFashionMnist, FilesHaveTheKnownCountsLabelsAndPixels) {
  REQUIRE_FASHION_MNIST();
  IdxArray train_labels = ReadIdxFile(FashionFile("train-labels-idx1-ubyte.gz"), 1);
  ASSERT_EQ(train_labels.dims, std::vector<int64_t>{60000});
  EXPECT_EQ(std::vector<uint8_t>(train_labels.bytes.begin(), train_labels.bytes.begin() + 10),
            (std::vector<uint8_t>{9, 0, 0, 3, 0, 2, 7, 2, 5, 5}));
  for (int label = 0; label < 10; ++label) {
    EXPECT_EQ(std::count(train_labels.bytes.begin(), train_labels.bytes.end(), label), 6000);
  }
  IdxArray test_labels = ReadIdxFile(FashionFile("t10k-labels-idx1-ubyte.gz"), 1);
  ASSERT_EQ(test_labels.dims, std::vector<int64_t>{10000});
  EXPECT_EQ(*std::max_element(test_labels.bytes.begin(), test_labels.bytes.end()), 9);

  IdxArray test_images = ReadIdxFile(FashionFile("t10k-images-idx3-ubyte.gz"), 3, 0, 2);
  EXPECT_EQ(test_images.dims, (std::vector<int64_t>{2, 28, 28}));
  EXPECT_EQ(test_images.bytes.size(), 2u * 784);
}

TEST(IdxFashionMnist, TrainEpochGivesEveryImageOnceWithKnownValues) {
  REQUIRE_FASHION_MNIST();
  IdxIterator train({.image_path = FashionFile("train-images-idx3-ubyte.gz"),
                     .label_path = FashionFile("train-labels-idx1-ubyte.gz"),
                     .batch_size = 1000});
  EXPECT_EQ(train.num_samples(), 60000);
  EXPECT_EQ(train.num_batches(), 60);
  EXPECT_EQ(train.data_shape(), (Shape{1000, 1, 28, 28}));
  DataBatch batch;
  ASSERT_TRUE(train.Next(&batch));
  EXPECT_EQ(batch.data.shape(), (Shape{1000, 1, 28, 28}));
  EXPECT_EQ(batch.data.dtype(), DType::kFloat32);
  EXPECT_EQ(batch.label.shape(), (Shape{1000}));
  std::vector<float> data = batch.data.ToVector<float>();
  // The first training image: pixel sum 76247 (of bytes), pixel 99 is 13, pixel 96 is 1.
  double sum = std::accumulate(data.begin(), data.begin() + 784, 0.0);
  EXPECT_NEAR(sum, 76247.0 / 255.0, 1e-3);
  EXPECT_EQ(data[99], 13.0f / 255.0f);
  EXPECT_EQ(data[96], 1.0f / 255.0f);
  EXPECT_EQ(data[0], 0.0f);
  EXPECT_EQ(batch.label.ToVector<float>()[0], 9.0f);
  EXPECT_EQ(*std::max_element(data.begin(), data.end()), 1.0f);

  std::vector<int> per_class(10, 0);
  int64_t batches = 1;
  for (float label : batch.label.ToVector<float>()) ++per_class[static_cast<int>(label)];
  while (train.Next(&batch)) {
    ++batches;
    EXPECT_EQ(batch.pad, 0);
    for (float label : batch.label.ToVector<float>()) {
      ASSERT_GE(label, 0.0f);
      ASSERT_LE(label, 9.0f);
      ++per_class[static_cast<int>(label)];
    }
  }
  EXPECT_EQ(batches, 60);
  EXPECT_EQ(per_class, std::vector<int>(10, 6000));
  EXPECT_FALSE(train.Next(&batch));
}

TEST(IdxFashionMnist, ShuffleIsASeededPermutationThatChangesPerEpoch) {
  REQUIRE_FASHION_MNIST();
  IdxIteratorOptions options{.image_path = FashionFile("t10k-images-idx3-ubyte.gz"),
                             .label_path = FashionFile("t10k-labels-idx1-ubyte.gz"),
                             .batch_size = 128,
                             .shuffle = true,
                             .seed = 42};
  IdxIterator first(options);
  IdxIterator second(options);
  EXPECT_EQ(first.num_batches(), 79);  // 10000 / 128 rounded up, the last one padded
  Epoch a = ReadEpoch(first);
  Epoch b = ReadEpoch(second);
  EXPECT_EQ(a.indices, b.indices);
  EXPECT_EQ(a.pads.back(), 79 * 128 - 10000);

  std::vector<int64_t> samples = SamplesOf(a);
  std::vector<int64_t> identity(10000);
  std::iota(identity.begin(), identity.end(), 0);
  EXPECT_NE(samples, identity);
  std::vector<int64_t> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, identity);

  // Each sample's label and pixels are those of its index in the files.
  IdxArray labels = ReadIdxFile(options.label_path, 1);
  IdxArray images = ReadIdxFile(options.image_path, 3);
  for (size_t i = 0; i < 128; ++i) {
    const int64_t index = a.indices[0][i];
    EXPECT_EQ(a.labels[0][i], labels.bytes[index]);
    EXPECT_EQ(a.data[0][i * 784 + 400], images.bytes[index * 784 + 400] / 255.0f);
  }

  first.Reset();
  EXPECT_EQ(first.epoch(), 1);
  Epoch next = ReadEpoch(first);
  EXPECT_NE(SamplesOf(next), samples);
  options.seed = 43;
  IdxIterator other_seed(options);
  EXPECT_NE(SamplesOf(ReadEpoch(other_seed)), samples);
}

TEST(IdxFashionMnist, PartsPartitionTheData) {
  REQUIRE_FASHION_MNIST();
  std::vector<int64_t> all;
  for (int part = 0; part < 3; ++part) {
    IdxIterator shard({.image_path = FashionFile("t10k-images-idx3-ubyte.gz"),
                       .label_path = FashionFile("t10k-labels-idx1-ubyte.gz"),
                       .batch_size = 100,
                       .shuffle = true,
                       .seed = 5,
                       .part_index = part,
                       .num_parts = 3});
    EXPECT_EQ(shard.num_samples(), part == 2 ? 3334 : 3333);
    std::vector<int64_t> samples = SamplesOf(ReadEpoch(shard));
    EXPECT_EQ(static_cast<int64_t>(samples.size()), shard.num_samples());
    all.insert(all.end(), samples.begin(), samples.end());
  }
  std::sort(all.begin(), all.end());
  std::vector<int64_t> identity(10000);
  std::iota(identity.begin(), identity.end(), 0);
  EXPECT_EQ(all, identity);
}

TEST(IdxFashionMnist, PrefetchGivesTheSameBatchesAsNoPrefetch) {
  REQUIRE_FASHION_MNIST();
  IdxIteratorOptions options{.image_path = FashionFile("t10k-images-idx3-ubyte.gz"),
                             .label_path = FashionFile("t10k-labels-idx1-ubyte.gz"),
                             .batch_size = 256,
                             .shuffle = true,
                             .seed = 9,
                             .mean = 0.2860f,
                             .stddev = 0.3530f};
  options.prefetch_batches = 0;
  IdxIterator direct(options);
  options.prefetch_batches = 3;
  IdxIterator prefetched(options);
  for (int epoch = 0; epoch < 2; ++epoch) {
    Epoch a = ReadEpoch(direct);
    Epoch b = ReadEpoch(prefetched);
    EXPECT_EQ(a.indices, b.indices);
    EXPECT_EQ(a.data, b.data);
    EXPECT_EQ(a.labels, b.labels);
    direct.Reset();
    prefetched.Reset();
  }
}

TEST_F(IdxFiles, PlainAndGzipFilesGiveTheSameBatches) {
  MakeDataset(10, 3, 2);
  std::string images = WritePlain("images", image_file_);
  std::string labels = WritePlain("labels", label_file_);
  std::string images_gz = WriteGzip("images.gz", image_file_);
  std::string labels_gz = WriteGzip("labels.gz", label_file_);
  IdxIterator plain(Options(images, labels));
  IdxIterator gzip(Options(images_gz, labels_gz));
  Epoch a = ReadEpoch(plain);
  Epoch b = ReadEpoch(gzip);
  EXPECT_EQ(a.data, b.data);
  EXPECT_EQ(a.labels, b.labels);
  ASSERT_EQ(a.data.size(), 3u);
  EXPECT_EQ(plain.data_shape(), (Shape{4, 1, 3, 2}));
  // Sample 5 is the second of batch 1: its first pixel is 5, its label 5.
  EXPECT_EQ(a.data[1][6], 5.0f / 255.0f);
  EXPECT_EQ(a.data[1][7], images_[31] / 255.0f);
  EXPECT_EQ(a.labels[1][1], 5.0f);
}

TEST_F(IdxFiles, LastBatchHandling) {
  MakeDataset(10, 2, 2);
  std::string images = WritePlain("images", image_file_);
  std::string labels = WritePlain("labels", label_file_);
  IdxIteratorOptions options = Options(images, labels);

  options.last_batch_handle = LastBatchHandle::kPad;
  IdxIterator pad(options);
  EXPECT_EQ(pad.num_batches(), 3);
  Epoch padded = ReadEpoch(pad);
  EXPECT_EQ(padded.pads, (std::vector<int>{0, 0, 2}));
  EXPECT_EQ(padded.indices[2], (std::vector<int64_t>{8, 9, 0, 1}));
  EXPECT_EQ(padded.labels[2], (std::vector<float>{8, 9, 0, 1}));

  options.last_batch_handle = LastBatchHandle::kDiscard;
  IdxIterator discard(options);
  EXPECT_EQ(discard.num_batches(), 2);
  EXPECT_EQ(ReadEpoch(discard).indices.back(), (std::vector<int64_t>{4, 5, 6, 7}));

  options.last_batch_handle = LastBatchHandle::kRollOver;
  IdxIterator roll_over(options);
  EXPECT_EQ(roll_over.num_batches(), 2);
  ReadEpoch(roll_over);
  roll_over.Reset();
  EXPECT_EQ(roll_over.num_batches(), 3);  // 2 left over + 10
  Epoch second = ReadEpoch(roll_over);
  EXPECT_EQ(second.indices[0], (std::vector<int64_t>{8, 9, 0, 1}));
  EXPECT_EQ(second.pads[0], 0);
  roll_over.Reset();
  EXPECT_EQ(roll_over.num_batches(), 2);  // nothing was left over

  EXPECT_EQ(ParseLastBatchHandle("roll_over"), LastBatchHandle::kRollOver);
  EXPECT_STREQ(LastBatchHandleName(LastBatchHandle::kPad), "pad");
  EXPECT_NE(ErrorOf([] { ParseLastBatchHandle("keep"); }).find("pad, discard, roll_over"),
            std::string::npos);
  options.batch_size = 11;
  options.last_batch_handle = LastBatchHandle::kDiscard;
  EXPECT_NE(ErrorOf([&] { IdxIterator none(options); }).find("leaves no batch"), std::string::npos);
}

TEST_F(IdxFiles, NormalisesWithMeanAndStddev) {
  MakeDataset(4, 1, 1);
  IdxIteratorOptions options =
      Options(WritePlain("images", image_file_), WritePlain("labels", label_file_));
  options.mean = 0.5f;
  options.stddev = 0.25f;
  IdxIterator iterator(options);
  DataBatch batch;
  ASSERT_TRUE(iterator.Next(&batch));
  std::vector<float> data = batch.data.ToVector<float>();
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(data[i], (i / 255.0f - 0.5f) / 0.25f);
}

TEST_F(IdxFiles, PrefetchErrorSurfacesAtTheNextCallAndResetRecovers) {
  MakeDataset(40, 2, 2);
  IdxIteratorOptions options =
      Options(WritePlain("images", image_file_), WritePlain("labels", label_file_));
  options.prefetch_batches = 2;
  int calls = 0;
  options.batch_transform = [&calls](DataBatch& batch) {
    if (++calls == 3) MX_THROW() << "augmentation failed on batch with sample " << batch.index[0];
  };
  IdxIterator iterator(options);
  DataBatch batch;
  std::string message;
  int delivered = 0;
  try {
    while (iterator.Next(&batch)) ++delivered;
  } catch (const Error& error) {
    message = error.what();
  }
  EXPECT_LE(delivered, 2);
  EXPECT_NE(message.find("augmentation failed on batch with sample 8"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { iterator.Next(&batch); }).find("augmentation failed"), std::string::npos);
  iterator.Reset();
  EXPECT_EQ(ReadEpoch(iterator).indices.size(), 10u);
}

TEST_F(IdxFiles, ResetAndDestroyWhileTheProducerWaitsOnAFullQueue) {
  MakeDataset(64, 2, 2);
  IdxIteratorOptions options =
      Options(WritePlain("images", image_file_), WritePlain("labels", label_file_));
  options.prefetch_batches = 1;
  IdxIterator iterator(options);
  DataBatch batch;
  ASSERT_TRUE(iterator.Next(&batch));
  iterator.Reset();  // the producer may be blocked with a full queue: must not hang
  EXPECT_EQ(ReadEpoch(iterator).indices.size(), 16u);
  IdxIterator abandoned(options);  // destroyed with a full queue
}

TEST_F(IdxFiles, MissingFile) {
  MakeDataset(4, 2, 2);
  std::string labels = WritePlain("labels", label_file_);
  std::string message = ErrorOf([&] { IdxIterator it(Options(PathOf("nope-images"), labels)); });
  EXPECT_NE(message.find(PathOf("nope-images")), std::string::npos) << message;
  EXPECT_NE(message.find("cannot open"), std::string::npos) << message;
}

TEST_F(IdxFiles, BadMagic) {
  MakeDataset(4, 2, 2);
  std::string labels = WritePlain("labels", label_file_);
  std::vector<uint8_t> wrong = image_file_;
  wrong[3] = 1;  // a labels magic where images are expected
  std::string message =
      ErrorOf([&] { IdxIterator it(Options(WritePlain("images", wrong), labels)); });
  EXPECT_NE(message.find(PathOf("images")), std::string::npos) << message;
  EXPECT_NE(message.find("bad magic number 00 00 08 01, expected 00 00 08 03"), std::string::npos)
      << message;
  std::string text = ErrorOf([&] {
    ReadIdxFile(WritePlain("text", {'h', 'e', 'l', 'l', 'o'}), 1);
  });
  EXPECT_NE(text.find("bad magic"), std::string::npos) << text;
  std::string empty = ErrorOf([&] { ReadIdxFile(WritePlain("empty", {}), 1); });
  EXPECT_NE(empty.find("too short for an IDX header"), std::string::npos) << empty;
}

TEST_F(IdxFiles, TruncatedPlainAndGzipFiles) {
  MakeDataset(50, 8, 8);
  std::string labels = WritePlain("labels", label_file_);
  std::vector<uint8_t> cut(image_file_.begin(), image_file_.end() - 100);
  std::string plain = ErrorOf([&] { IdxIterator it(Options(WritePlain("images", cut), labels)); });
  EXPECT_NE(plain.find(PathOf("images")), std::string::npos) << plain;
  EXPECT_NE(plain.find("truncated"), std::string::npos) << plain;
  EXPECT_NE(plain.find("50 x 8 x 8"), std::string::npos) << plain;

  // A gzip file whose data (not its compressed stream) is short: the header lies.
  std::string short_data = ErrorOf([&] { ReadIdxFile(WriteGzip("short.gz", cut), 3); });
  EXPECT_NE(short_data.find("truncated"), std::string::npos) << short_data;
  EXPECT_NE(short_data.find("data ends after"), std::string::npos) << short_data;

  // A gzip file cut in the middle of its compressed stream.
  std::vector<uint8_t> gz = ReadBytes(WriteGzip("full.gz", image_file_));
  gz.resize(gz.size() / 2);
  std::string cut_stream = ErrorOf([&] { ReadIdxFile(WritePlain("cut.gz", gz), 3); });
  EXPECT_NE(cut_stream.find(PathOf("cut.gz")), std::string::npos) << cut_stream;
  EXPECT_NE(cut_stream.find("gzip stream ends early"), std::string::npos) << cut_stream;
}

TEST_F(IdxFiles, LyingHeaderIsRejectedBeforeAllocating) {
  // 4 billion images of 28x28 in a 20-byte file, plain and gzip-compressed.
  std::vector<uint8_t> lie = IdxBytes(3, {0xffffffffu, 28, 28}, {1, 2, 3, 4});
  for (const std::string& path : {WritePlain("lie", lie), WriteGzip("lie.gz", lie)}) {
    std::string message = ErrorOf([&] { ReadIdxFile(path, 3); });
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find("4294967295 x 28 x 28"), std::string::npos) << message;
    EXPECT_NE(message.find("can hold at most"), std::string::npos) << message;
  }
}

TEST_F(IdxFiles, LongerThanItsHeader) {
  MakeDataset(4, 2, 2);
  std::vector<uint8_t> longer = label_file_;
  longer.push_back(7);
  std::string message = ErrorOf([&] { ReadIdxFile(WritePlain("labels", longer), 1); });
  EXPECT_NE(message.find("longer than its header says"), std::string::npos) << message;
}

TEST_F(IdxFiles, CountMismatch) {
  MakeDataset(6, 2, 2);
  std::string images = WritePlain("images", image_file_);
  std::vector<uint8_t> five_labels = IdxBytes(1, {5}, {0, 1, 2, 3, 4});
  std::string labels = WritePlain("labels", five_labels);
  std::string message = ErrorOf([&] { IdxIterator it(Options(images, labels)); });
  EXPECT_NE(message.find(images + " holds 6 images but " + labels + " holds 5 labels"),
            std::string::npos)
      << message;
}

TEST_F(IdxFiles, CorruptGzipStream) {
  MakeDataset(50, 8, 8);
  std::vector<uint8_t> gz = ReadBytes(WriteGzip("images.gz", image_file_));
  std::vector<uint8_t> bad_crc = gz;
  bad_crc[bad_crc.size() - 8] ^= 0xff;  // the trailer's CRC32
  std::string crc = ErrorOf([&] { ReadIdxFile(WritePlain("bad_crc.gz", bad_crc), 3); });
  EXPECT_NE(crc.find(PathOf("bad_crc.gz")), std::string::npos) << crc;
  EXPECT_NE(crc.find("corrupt gzip stream"), std::string::npos) << crc;

  std::vector<uint8_t> garbage = gz;
  for (size_t i = 20; i < garbage.size() / 2; ++i) garbage[i] = static_cast<uint8_t>(i * 37);
  std::string scrambled = ErrorOf([&] { ReadIdxFile(WritePlain("garbage.gz", garbage), 3); });
  EXPECT_NE(scrambled.find(PathOf("garbage.gz")), std::string::npos) << scrambled;
}

TEST_F(IdxFiles, BadOptions) {
  MakeDataset(4, 2, 2);
  IdxIteratorOptions options =
      Options(WritePlain("images", image_file_), WritePlain("labels", label_file_));
  options.part_index = 2;
  options.num_parts = 2;
  EXPECT_NE(ErrorOf([&] { IdxIterator it(options); }).find("part_index 2 of num_parts 2"),
            std::string::npos);
  options.part_index = 0;
  options.num_parts = 5;
  EXPECT_NE(ErrorOf([&] { IdxIterator it(options); }).find("is empty"), std::string::npos);
  options.num_parts = 1;
  options.batch_size = 0;
  EXPECT_NE(ErrorOf([&] { IdxIterator it(options); }).find("batch_size 0"), std::string::npos);
}

}  // namespace
}  // namespace mxlite
