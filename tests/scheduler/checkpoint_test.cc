// Checkpoints: round trips of every kind of array, the atomic write, and each kind of bad file.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "scheduler/train/checkpoint.h"

namespace mxlite {
namespace {

namespace fs = std::filesystem;

std::string ErrorOf(const std::function<void()>& body) {
  try {
    body();
  } catch (const Error& error) {
    return error.what();
  }
  ADD_FAILURE() << "no mxlite::Error thrown";
  return "";
}

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    folder_ = fs::temp_directory_path() /
              ("mxlite_ckpt_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(folder_);
    fs::create_directories(folder_);
  }
  void TearDown() override {
    fs::permissions(folder_, fs::perms::owner_all, fs::perm_options::add);
    fs::remove_all(folder_);
  }

  std::string PathOf(const std::string& name) const { return (folder_ / name).string(); }

  // Names of the files in the folder (to see that no temporary file is left).
  std::vector<std::string> FolderContents() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(folder_)) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  std::vector<uint8_t> ReadBytes(const std::string& path) const {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  void WriteBytes(const std::string& path, const std::vector<uint8_t>& bytes) const {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
  }

  // A checkpoint with parameters of several dtypes and ranks, optimizer states and metadata.
  static Checkpoint Sample() {
    Checkpoint checkpoint;
    checkpoint.arrays["fc0_weight"] =
        NDArray::FromVector<float>({1.5f, -2, 3, 4, 5, 6}, Shape{2, 3}, Context::CPU());
    checkpoint.arrays["fc0_bias"] =
        NDArray::FromVector<double>({0.25, -1e300}, Shape{2}, Context::CPU());
    checkpoint.arrays["step"] =
        NDArray::FromVector<int64_t>({1234567890123}, Shape{}, Context::CPU());
    checkpoint.arrays["bn_count"] =
        NDArray::FromVector<int32_t>({1, 2, 3, 4, 5, 6, 7, 8}, Shape{2, 1, 2, 2}, Context::CPU());
    checkpoint.arrays["empty"] = NDArray::FromVector<float>({}, Shape{0, 3}, Context::CPU());
    checkpoint.arrays["mask"] = NDArray::FromVector<uint8_t>({0, 255, 7}, Shape{3}, Context::CPU());
    checkpoint.optimizer_states["fc0_weight_momentum"] = NDArray::FromVector<float>(
        {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f}, Shape{2, 3}, Context::CPU());
    checkpoint.metadata = {{"epoch", "3"}, {"lr", "0.01"}, {"note", std::string("a\0b", 3)}};
    return checkpoint;
  }

  fs::path folder_;
};

template <typename T>
void ExpectSameArray(const NDArray& a, const NDArray& b) {
  EXPECT_EQ(a.shape(), b.shape());
  ASSERT_EQ(a.dtype(), b.dtype());
  EXPECT_EQ(a.ToVector<T>(), b.ToVector<T>());
}

void ExpectSameCheckpoint(const Checkpoint& a, const Checkpoint& b) {
  EXPECT_EQ(a.metadata, b.metadata);
  ASSERT_EQ(a.arrays.size(), b.arrays.size());
  ExpectSameArray<float>(a.arrays.at("fc0_weight"), b.arrays.at("fc0_weight"));
  ExpectSameArray<double>(a.arrays.at("fc0_bias"), b.arrays.at("fc0_bias"));
  ExpectSameArray<int64_t>(a.arrays.at("step"), b.arrays.at("step"));
  ExpectSameArray<int32_t>(a.arrays.at("bn_count"), b.arrays.at("bn_count"));
  ExpectSameArray<float>(a.arrays.at("empty"), b.arrays.at("empty"));
  ExpectSameArray<uint8_t>(a.arrays.at("mask"), b.arrays.at("mask"));
  ASSERT_EQ(a.optimizer_states.size(), b.optimizer_states.size());
  ExpectSameArray<float>(a.optimizer_states.at("fc0_weight_momentum"),
                         b.optimizer_states.at("fc0_weight_momentum"));
}

TEST_F(CheckpointTest, RoundTripOfEveryDtypeAndRank) {
  Checkpoint saved = Sample();
  SaveCheckpoint(PathOf("model.mxckpt"), saved);
  Checkpoint loaded = LoadCheckpoint(PathOf("model.mxckpt"));
  ExpectSameCheckpoint(saved, loaded);
  EXPECT_EQ(loaded.arrays.at("step").shape().ndim(), 0);
  EXPECT_EQ(loaded.arrays.at("fc0_weight").ctx(), Context::CPU());
  EXPECT_EQ(FolderContents(), std::vector<std::string>{"model.mxckpt"});

  // Saving again over it replaces it; the same content gives the same bytes.
  std::vector<uint8_t> first = ReadBytes(PathOf("model.mxckpt"));
  SaveCheckpoint(PathOf("model.mxckpt"), loaded);
  EXPECT_EQ(ReadBytes(PathOf("model.mxckpt")), first);
  EXPECT_EQ(FolderContents(), std::vector<std::string>{"model.mxckpt"});
}

TEST_F(CheckpointTest, EmptyCheckpointRoundTrips) {
  SaveCheckpoint(PathOf("empty.mxckpt"), Checkpoint{});
  Checkpoint loaded = LoadCheckpoint(PathOf("empty.mxckpt"));
  EXPECT_TRUE(loaded.arrays.empty());
  EXPECT_TRUE(loaded.optimizer_states.empty());
  EXPECT_TRUE(loaded.metadata.empty());
}

TEST_F(CheckpointTest, LoadIntoExistingArraysUpdatesThemInPlace) {
  SaveCheckpoint(PathOf("model.mxckpt"), Sample());
  Checkpoint target;
  NDArray weight = NDArray::Zeros(Shape{2, 3}, Context::CPU());
  NDArray momentum = NDArray::Zeros(Shape{2, 3}, Context::CPU());
  target.arrays["fc0_weight"] = weight;  // shares storage with `weight`
  target.optimizer_states["fc0_weight_momentum"] = momentum;
  LoadCheckpointInto(PathOf("model.mxckpt"), &target, {.allow_extra = true});
  EXPECT_EQ(weight.ToVector<float>(), (std::vector<float>{1.5f, -2, 3, 4, 5, 6}));
  EXPECT_EQ(momentum.ToVector<float>(), (std::vector<float>{0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f}));
  EXPECT_EQ(target.metadata.at("epoch"), "3");

  // Without optimizer states in the target, the file's are ignored (inference).
  Checkpoint inference;
  inference.arrays = Sample().arrays;
  LoadCheckpointInto(PathOf("model.mxckpt"), &inference);
  EXPECT_EQ(inference.arrays.at("mask").ToVector<uint8_t>(), (std::vector<uint8_t>{0, 255, 7}));
}

TEST_F(CheckpointTest, LoadIntoReportsEveryMismatchAndWritesNothing) {
  SaveCheckpoint(PathOf("model.mxckpt"), Sample());
  Checkpoint target = Sample();
  NDArray weight = NDArray::Zeros(Shape{3, 2}, Context::CPU());  // transposed shape
  target.arrays["fc0_weight"] = weight;
  target.arrays["fc0_bias"] = NDArray::Zeros(Shape{2}, Context::CPU());    // float32, not float64
  target.arrays["fc1_weight"] = NDArray::Zeros(Shape{4}, Context::CPU());  // not in the file
  target.arrays.erase("mask");                                             // extra in the file
  NDArray momentum = NDArray::Zeros(Shape{2, 3}, Context::CPU());
  target.optimizer_states["fc0_weight_momentum"] = momentum;
  std::string message = ErrorOf([&] { LoadCheckpointInto(PathOf("model.mxckpt"), &target); });
  EXPECT_NE(message.find(PathOf("model.mxckpt") +
                         ": does not match the arrays to load into (4 problems)"),
            std::string::npos)
      << message;
  EXPECT_NE(
      message.find("array 'fc0_weight': the file has (2,3) float32, the target (3,2) float32"),
      std::string::npos)
      << message;
  EXPECT_NE(message.find("array 'fc0_bias': the file has (2) float64, the target (2) float32"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("array 'fc1_weight' is missing from the file"), std::string::npos)
      << message;
  EXPECT_NE(message.find("array 'mask' (3) uint8 is in the file but not in the target"),
            std::string::npos)
      << message;
  EXPECT_EQ(momentum.ToVector<float>(), std::vector<float>(6, 0.0f));  // nothing written

  // allow_missing / allow_extra relax exactly those two.
  target.arrays["fc0_weight"] = NDArray::Zeros(Shape{2, 3}, Context::CPU());
  target.arrays["fc0_bias"] = NDArray::Zeros(Shape{2}, Context::CPU(), DType::kFloat64);
  LoadCheckpointInto(PathOf("model.mxckpt"), &target, {.allow_missing = true, .allow_extra = true});
  EXPECT_EQ(momentum.ToVector<float>()[5], 0.6f);
  EXPECT_EQ(target.arrays.at("fc1_weight").ToVector<float>(), std::vector<float>(4, 0.0f));
}

TEST_F(CheckpointTest, FailedSerialisationKeepsTheOldCheckpointAndLeavesNoTemporaryFile) {
  SaveCheckpoint(PathOf("model.mxckpt"), Sample());
  std::vector<uint8_t> before = ReadBytes(PathOf("model.mxckpt"));
  Checkpoint broken = Sample();
  broken.arrays["zz_last"] = NDArray();  // written after the others: the save fails midway
  std::string message = ErrorOf([&] { SaveCheckpoint(PathOf("model.mxckpt"), broken); });
  EXPECT_NE(message.find("array 'zz_last' is empty"), std::string::npos) << message;
  EXPECT_EQ(ReadBytes(PathOf("model.mxckpt")), before);
  EXPECT_EQ(FolderContents(), std::vector<std::string>{"model.mxckpt"});
}

TEST_F(CheckpointTest, FailedRenameLeavesNoTemporaryFile) {
  fs::create_directory(folder_ / "taken");  // a folder where the checkpoint should go
  std::string message = ErrorOf([&] { SaveCheckpoint(PathOf("taken"), Sample()); });
  EXPECT_NE(message.find("cannot rename"), std::string::npos) << message;
  EXPECT_EQ(FolderContents(), std::vector<std::string>{"taken"});
  std::string missing_folder =
      ErrorOf([&] { SaveCheckpoint(PathOf("no/such/folder.ckpt"), Sample()); });
  EXPECT_NE(missing_folder.find("cannot create the temporary file"), std::string::npos)
      << missing_folder;
}

TEST_F(CheckpointTest, ReadOnlyFolderKeepsTheOldCheckpoint) {
  SaveCheckpoint(PathOf("model.mxckpt"), Sample());
  std::vector<uint8_t> before = ReadBytes(PathOf("model.mxckpt"));
  fs::permissions(folder_, fs::perms::owner_read | fs::perms::owner_exec);
  if (::access(folder_.c_str(), W_OK) == 0) {
    GTEST_SKIP() << "running as a user who may write to read-only folders (root)";
  }
  std::string message = ErrorOf([&] { SaveCheckpoint(PathOf("model.mxckpt"), Checkpoint{}); });
  EXPECT_NE(message.find("cannot create the temporary file"), std::string::npos) << message;
  EXPECT_EQ(ReadBytes(PathOf("model.mxckpt")), before);
}

TEST_F(CheckpointTest, TruncatedFileAtEveryLength) {
  SaveCheckpoint(PathOf("model.mxckpt"), Sample());
  std::vector<uint8_t> bytes = ReadBytes(PathOf("model.mxckpt"));
  for (size_t length :
       {size_t{0}, size_t{5}, size_t{8}, size_t{20}, size_t{24}, size_t{100}, bytes.size() - 1}) {
    WriteBytes(PathOf("cut.mxckpt"), std::vector<uint8_t>(bytes.begin(), bytes.begin() + length));
    std::string message = ErrorOf([&] { LoadCheckpoint(PathOf("cut.mxckpt")); });
    EXPECT_NE(message.find(PathOf("cut.mxckpt")), std::string::npos) << message;
    EXPECT_NE(message.find("truncated"), std::string::npos) << length << ": " << message;
  }
}

TEST_F(CheckpointTest, ForeignFileHasBadMagic) {
  WriteBytes(PathOf("weights.onnx"), std::vector<uint8_t>(100, 0x08));
  std::string message = ErrorOf([&] { LoadCheckpoint(PathOf("weights.onnx")); });
  EXPECT_NE(message.find(PathOf("weights.onnx") + ": not an mxlite checkpoint (bad magic"),
            std::string::npos)
      << message;
  std::string missing = ErrorOf([&] { LoadCheckpoint(PathOf("absent.mxckpt")); });
  EXPECT_NE(missing.find("cannot open"), std::string::npos) << missing;
}

TEST_F(CheckpointTest, UnknownVersion) {
  SaveCheckpoint(PathOf("model.mxckpt"), Sample());
  std::vector<uint8_t> bytes = ReadBytes(PathOf("model.mxckpt"));
  bytes[8] = 2;
  WriteBytes(PathOf("model.mxckpt"), bytes);
  std::string message = ErrorOf([&] { LoadCheckpoint(PathOf("model.mxckpt")); });
  EXPECT_NE(message.find("format version 2, but this build reads version 1"), std::string::npos)
      << message;
}

TEST_F(CheckpointTest, FlippedBitIsACrcMismatch) {
  SaveCheckpoint(PathOf("model.mxckpt"), Sample());
  std::vector<uint8_t> bytes = ReadBytes(PathOf("model.mxckpt"));
  bytes[bytes.size() - 3] ^= 0x10;
  WriteBytes(PathOf("model.mxckpt"), bytes);
  std::string message = ErrorOf([&] { LoadCheckpoint(PathOf("model.mxckpt")); });
  EXPECT_NE(message.find("CRC32 mismatch"), std::string::npos) << message;
}

TEST_F(CheckpointTest, AbsurdShapesWithAValidCrc) {
  // Hand-made body: no metadata, one array "w" float32 of the given dims, with 4 bytes of data.
  auto file_with_dims = [&](const std::vector<uint64_t>& dims) {
    std::vector<uint8_t> body;
    auto put = [&body](uint64_t value, int bytes) {
      for (int i = 0; i < bytes; ++i) body.push_back(static_cast<uint8_t>(value >> (8 * i)));
    };
    auto put_string = [&](const std::string& text) {
      put(text.size(), 4);
      body.insert(body.end(), text.begin(), text.end());
    };
    put(0, 4);
    put(1, 4);
    put_string("w");
    put_string("float32");
    put(dims.size(), 1);
    for (uint64_t dim : dims) put(dim, 8);
    put(0x3f800000, 4);
    put(0, 4);  // no optimizer states
    std::vector<uint8_t> file = {'M', 'X', 'L', 'C', 'K', 'P', 'T', '\0', 1, 0, 0, 0};
    uint32_t crc = static_cast<uint32_t>(crc32(0, body.data(), static_cast<uInt>(body.size())));
    for (int i = 0; i < 4; ++i) file.push_back(static_cast<uint8_t>(crc >> (8 * i)));
    for (int i = 0; i < 8; ++i)
      file.push_back(static_cast<uint8_t>(uint64_t{body.size()} >> (8 * i)));
    file.insert(file.end(), body.begin(), body.end());
    WriteBytes(PathOf("crafted.mxckpt"), file);
    return PathOf("crafted.mxckpt");
  };
  EXPECT_EQ(LoadCheckpoint(file_with_dims({1})).arrays.at("w").ToVector<float>(),
            std::vector<float>{1.0f});
  std::string huge = ErrorOf([&] { LoadCheckpoint(file_with_dims({1u << 20, 1u << 20})); });
  EXPECT_NE(huge.find("array 'w' of shape (1048576,1048576) float32 needs more bytes"),
            std::string::npos)
      << huge;
  std::string overflow = ErrorOf([&] { LoadCheckpoint(file_with_dims({~uint64_t{0}})); });
  EXPECT_NE(overflow.find("absurd extent"), std::string::npos) << overflow;
  std::string ndim = ErrorOf([&] { LoadCheckpoint(file_with_dims({1, 1, 1, 1, 1, 1, 1})); });
  EXPECT_NE(ndim.find("has 7 dimensions (at most 6)"), std::string::npos) << ndim;
}

}  // namespace
}  // namespace mxlite
