#include "scheduler/train/checkpoint.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <vector>

#include "core/error.h"

namespace mxlite {
namespace {

static_assert(std::endian::native == std::endian::little,
              "checkpoint array data is written in host order, which the format fixes as little");

constexpr char kMagic[8] = {'M', 'X', 'L', 'C', 'K', 'P', 'T', '\0'};
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderBytes = 8 + 4 + 4 + 8;  // magic, version, crc32, body bytes
constexpr size_t kBufferBytes = size_t{1} << 20;

uint32_t Crc32(uint32_t crc, const uint8_t* data, size_t n) {
  while (n > 0) {  // zlib takes a uInt length
    uInt step = static_cast<uInt>(std::min<size_t>(n, uInt{1} << 30));
    crc = static_cast<uint32_t>(crc32(crc, data, step));
    data += step;
    n -= step;
  }
  return crc;
}

void PutLittleEndian(uint8_t* out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out[i] = static_cast<uint8_t>(value >> (8 * i));
}

uint64_t GetLittleEndian(const uint8_t* in, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= uint64_t{in[i]} << (8 * i);
  return value;
}

std::string Errno() { return std::strerror(errno); }

// A file written under a temporary name in the target's folder and renamed over the target by
// Commit(). Destroyed uncommitted (an error on the way), it removes the temporary file.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::string path) : path_(std::move(path)) {
    static std::atomic<uint64_t> counter{0};
    temp_path_ = path_ + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
    fd_ = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    MX_CHECK(fd_ >= 0) << path_ << ": cannot create the temporary file " << temp_path_ << ": "
                       << Errno();
    buffer_.reserve(kBufferBytes);
  }
  ~AtomicFileWriter() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(temp_path_.c_str());
  }
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  void Write(const uint8_t* data, size_t n) {
    if (buffer_.size() + n > kBufferBytes) Flush();
    if (n >= kBufferBytes) {
      WriteFully(data, n);
    } else {
      buffer_.insert(buffer_.end(), data, data + n);
    }
  }

  // Overwrites bytes already written (the header, once the body is known).
  void Patch(uint64_t offset, const uint8_t* data, size_t n) {
    Flush();
    MX_CHECK(::pwrite(fd_, data, n, static_cast<off_t>(offset)) == static_cast<ssize_t>(n))
        << path_ << ": cannot write " << temp_path_ << ": " << Errno();
  }

  void Commit() {
    Flush();
    MX_CHECK(::fsync(fd_) == 0) << path_ << ": cannot fsync " << temp_path_ << ": " << Errno();
    int fd = fd_;
    fd_ = -1;
    MX_CHECK(::close(fd) == 0) << path_ << ": cannot close " << temp_path_ << ": " << Errno();
    MX_CHECK(::rename(temp_path_.c_str(), path_.c_str()) == 0)
        << path_ << ": cannot rename " << temp_path_ << " over it: " << Errno();
    committed_ = true;
    SyncFolder();
  }

 private:
  void Flush() {
    WriteFully(buffer_.data(), buffer_.size());
    buffer_.clear();
  }

  void WriteFully(const uint8_t* data, size_t n) {
    while (n > 0) {
      ssize_t written = ::write(fd_, data, n);
      if (written < 0 && errno == EINTR) continue;
      MX_CHECK(written > 0) << path_ << ": cannot write " << temp_path_ << ": " << Errno();
      data += written;
      n -= static_cast<size_t>(written);
    }
  }

  // Makes the rename itself durable.
  void SyncFolder() const {
    std::filesystem::path folder = std::filesystem::path(path_).parent_path();
    int fd = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;  // the file is in place; only durability across a power cut is weaker
    ::fsync(fd);
    ::close(fd);
  }

  std::string path_;
  std::string temp_path_;
  int fd_ = -1;
  bool committed_ = false;
  std::vector<uint8_t> buffer_;
};

// Writes the body through an AtomicFileWriter, keeping its CRC and length.
class BodyWriter {
 public:
  explicit BodyWriter(AtomicFileWriter* file) : file_(file) {}

  void Bytes(const void* data, size_t n) {
    const uint8_t* bytes = static_cast<const uint8_t*>(data);
    crc_ = Crc32(crc_, bytes, n);
    length_ += n;
    file_->Write(bytes, n);
  }
  void Uint(uint64_t value, int bytes) {
    uint8_t out[8];
    PutLittleEndian(out, value, bytes);
    Bytes(out, static_cast<size_t>(bytes));
  }
  void String(const std::string& text) {
    Uint(text.size(), 4);
    Bytes(text.data(), text.size());
  }

  uint32_t crc() const { return crc_; }
  uint64_t length() const { return length_; }

 private:
  AtomicFileWriter* file_;
  uint32_t crc_ = static_cast<uint32_t>(crc32(0, nullptr, 0));
  uint64_t length_ = 0;
};

void WriteArrays(BodyWriter& body, const std::map<std::string, NDArray>& arrays,
                 const std::string& path) {
  body.Uint(arrays.size(), 4);
  std::vector<uint8_t> host;
  for (const auto& [name, array] : arrays) {
    MX_CHECK(!array.is_none()) << path << ": array '" << name << "' is empty (no NDArray)";
    const Shape& shape = array.shape();
    body.String(name);
    body.String(DTypeName(array.dtype()));
    body.Uint(static_cast<uint64_t>(shape.ndim()), 1);
    for (int axis = 0; axis < shape.ndim(); ++axis)
      body.Uint(static_cast<uint64_t>(shape[axis]), 8);
    host.resize(array.bytes());
    array.SyncCopyToCPU(host.data(), host.size());  // waits; rethrows an error of its last writer
    body.Bytes(host.data(), host.size());
  }
}

// Bounds-checked reading of a loaded body.
class BodyReader {
 public:
  BodyReader(const uint8_t* data, size_t size, const std::string& path)
      : data_(data), left_(size), path_(path) {}

  const uint8_t* Bytes(uint64_t n, const char* what) {
    MX_CHECK(n <= left_) << path_ << ": corrupt: " << what << " needs " << n << " bytes but only "
                         << left_ << " remain in the body";
    const uint8_t* out = data_;
    data_ += n;
    left_ -= n;
    return out;
  }
  uint64_t Uint(int bytes, const char* what) { return GetLittleEndian(Bytes(bytes, what), bytes); }
  std::string String(const char* what) {
    uint64_t length = Uint(4, what);
    const uint8_t* text = Bytes(length, what);
    return std::string(reinterpret_cast<const char*>(text), length);
  }
  size_t left() const { return left_; }

 private:
  const uint8_t* data_;
  size_t left_;
  const std::string& path_;
};

DType DTypeFromName(const std::string& name, const std::string& array, const std::string& path) {
  for (DType dtype : kAllDTypes) {
    if (name == DTypeName(dtype)) return dtype;
  }
  MX_THROW() << path << ": corrupt: array '" << array << "' has unknown dtype '" << name << "'";
}

Shape ReadShape(BodyReader& body, const std::string& array, const std::string& path) {
  const uint64_t ndim = body.Uint(1, "an array's ndim");
  MX_CHECK(ndim <= static_cast<uint64_t>(Shape::kMaxDims))
      << path << ": corrupt: array '" << array << "' has " << ndim << " dimensions (at most "
      << Shape::kMaxDims << ")";
  std::vector<int64_t> dims;
  for (uint64_t axis = 0; axis < ndim; ++axis) {
    const uint64_t dim = body.Uint(8, "an array's shape");
    // No real extent comes near 2^40; anything above is corruption (and keeps products in range).
    MX_CHECK(dim < (uint64_t{1} << 40))
        << path << ": corrupt: array '" << array << "' has an absurd extent " << dim;
    dims.push_back(static_cast<int64_t>(dim));
  }
  return Shape(dims);
}

std::map<std::string, NDArray> ReadArrays(BodyReader& body, const std::string& path,
                                          const char* group) {
  std::map<std::string, NDArray> arrays;
  const uint64_t count = body.Uint(4, group);
  for (uint64_t i = 0; i < count; ++i) {
    std::string name = body.String("an array name");
    const DType dtype = DTypeFromName(body.String("a dtype name"), name, path);
    const Shape shape = ReadShape(body, name, path);
    uint64_t bytes = DTypeSize(dtype);
    for (int axis = 0; axis < shape.ndim(); ++axis) {
      MX_CHECK(!__builtin_mul_overflow(bytes, static_cast<uint64_t>(shape[axis]), &bytes) &&
               bytes <= body.left())
          << path << ": corrupt: array '" << name << "' of shape " << shape << " " << dtype
          << " needs more bytes than the " << body.left() << " left in the body";
    }
    const uint8_t* data = body.Bytes(bytes, "array data");
    NDArray array(shape, Context::CPU(), dtype);
    array.SyncCopyFromCPU(data, bytes);
    MX_CHECK(arrays.emplace(name, std::move(array)).second)
        << path << ": corrupt: " << group << " hold '" << name << "' twice";
  }
  return arrays;
}

std::vector<uint8_t> ReadWholeFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  MX_CHECK(fd >= 0) << path << ": cannot open the checkpoint: " << Errno();
  struct stat info {};
  std::vector<uint8_t> bytes;
  if (::fstat(fd, &info) == 0) bytes.resize(static_cast<size_t>(info.st_size));
  size_t got = 0;
  while (got < bytes.size()) {
    ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  int read_errno = errno;
  ::close(fd);
  MX_CHECK(got == bytes.size()) << path
                                << ": cannot read the checkpoint: " << std::strerror(read_errno);
  return bytes;
}

// Checks the header and CRC; returns the body's bounds within `file`.
BodyReader CheckedBody(const std::vector<uint8_t>& file, const std::string& path) {
  const size_t magic_bytes = std::min(file.size(), sizeof(kMagic));
  MX_CHECK(std::equal(file.begin(), file.begin() + magic_bytes, kMagic))
      << path
      << ": not an mxlite checkpoint (bad magic; expected a file starting with \"MXLCKPT\")";
  MX_CHECK(file.size() >= kHeaderBytes)
      << path << ": truncated: " << file.size() << " bytes, less than the " << kHeaderBytes
      << "-byte header";
  const uint64_t version = GetLittleEndian(file.data() + 8, 4);
  MX_CHECK(version == kVersion) << path << ": checkpoint format version " << version
                                << ", but this build reads version " << kVersion;
  const uint32_t crc = static_cast<uint32_t>(GetLittleEndian(file.data() + 12, 4));
  const uint64_t body_bytes = GetLittleEndian(file.data() + 16, 8);
  const uint64_t actual = file.size() - kHeaderBytes;
  MX_CHECK(actual >= body_bytes) << path << ": truncated: the header says " << body_bytes
                                 << " bytes of body but the file holds " << actual;
  MX_CHECK(actual == body_bytes) << path << ": corrupt: " << actual - body_bytes
                                 << " bytes after the end of the checkpoint";
  const uint8_t* body = file.data() + kHeaderBytes;
  const uint32_t computed = Crc32(static_cast<uint32_t>(crc32(0, nullptr, 0)), body, body_bytes);
  MX_CHECK(computed == crc) << path << ": corrupt: CRC32 mismatch (stored " << std::hex << crc
                            << ", computed " << computed << ")";
  return BodyReader(body, body_bytes, path);
}

// Names of mismatches between what the file holds and what the target asks for.
void CompareGroup(const std::map<std::string, NDArray>& file,
                  const std::map<std::string, NDArray>& target, const char* group,
                  const CheckpointLoadOptions& options, std::vector<std::string>* problems) {
  auto describe = [](const NDArray& array) {
    std::ostringstream out;
    out << array.shape() << " " << array.dtype();
    return out.str();
  };
  for (const auto& [name, array] : target) {
    auto found = file.find(name);
    if (found == file.end()) {
      if (!options.allow_missing)
        problems->push_back(std::string(group) + " '" + name + "' is missing from the file");
    } else if (found->second.shape() != array.shape() || found->second.dtype() != array.dtype()) {
      problems->push_back(std::string(group) + " '" + name + "': the file has " +
                          describe(found->second) + ", the target " + describe(array));
    }
  }
  if (options.allow_extra) return;
  for (const auto& [name, array] : file) {
    if (target.count(name) == 0) {
      problems->push_back(std::string(group) + " '" + name + "' " + describe(array) +
                          " is in the file but not in the target");
    }
  }
}

void CopyGroup(const std::map<std::string, NDArray>& file,
               const std::map<std::string, NDArray>& target) {
  for (const auto& [name, array] : target) {
    auto found = file.find(name);
    if (found == file.end()) continue;
    NDArray destination = array;
    destination.SyncCopyFromCPU(found->second.data(), found->second.bytes());
  }
}

}  // namespace

void SaveCheckpoint(const std::string& path, const Checkpoint& checkpoint) {
  AtomicFileWriter file(path);
  uint8_t header[kHeaderBytes] = {};
  file.Write(header, sizeof(header));  // patched below, once the body's CRC and length are known
  BodyWriter body(&file);
  body.Uint(checkpoint.metadata.size(), 4);
  for (const auto& [key, value] : checkpoint.metadata) {
    body.String(key);
    body.String(value);
  }
  WriteArrays(body, checkpoint.arrays, path);
  WriteArrays(body, checkpoint.optimizer_states, path);
  std::memcpy(header, kMagic, sizeof(kMagic));
  PutLittleEndian(header + 8, kVersion, 4);
  PutLittleEndian(header + 12, body.crc(), 4);
  PutLittleEndian(header + 16, body.length(), 8);
  file.Patch(0, header, sizeof(header));
  file.Commit();
}

Checkpoint LoadCheckpoint(const std::string& path) {
  const std::vector<uint8_t> file = ReadWholeFile(path);
  BodyReader body = CheckedBody(file, path);
  Checkpoint checkpoint;
  const uint64_t entries = body.Uint(4, "the metadata count");
  for (uint64_t i = 0; i < entries; ++i) {
    std::string key = body.String("a metadata key");
    std::string value = body.String("a metadata value");
    MX_CHECK(checkpoint.metadata.emplace(std::move(key), std::move(value)).second)
        << path << ": corrupt: a metadata key appears twice";
  }
  checkpoint.arrays = ReadArrays(body, path, "arrays");
  checkpoint.optimizer_states = ReadArrays(body, path, "optimizer states");
  MX_CHECK(body.left() == 0) << path << ": corrupt: " << body.left()
                             << " unread bytes at the end of the body";
  return checkpoint;
}

void LoadCheckpointInto(const std::string& path, Checkpoint* target,
                        const CheckpointLoadOptions& options) {
  MX_CHECK(target != nullptr) << path << ": no checkpoint to load into";
  Checkpoint loaded = LoadCheckpoint(path);
  const bool with_states = !target->optimizer_states.empty();
  std::vector<std::string> problems;
  CompareGroup(loaded.arrays, target->arrays, "array", options, &problems);
  if (with_states) {
    CompareGroup(loaded.optimizer_states, target->optimizer_states, "optimizer state", options,
                 &problems);
  }
  if (!problems.empty()) {
    std::ostringstream message;
    message << path << ": does not match the arrays to load into (" << problems.size()
            << (problems.size() == 1 ? " problem" : " problems") << "):";
    for (const std::string& problem : problems) message << "\n  " << problem;
    MX_THROW() << message.str();
  }
  CopyGroup(loaded.arrays, target->arrays);
  if (with_states) CopyGroup(loaded.optimizer_states, target->optimizer_states);
  target->metadata = std::move(loaded.metadata);
}

}  // namespace mxlite
