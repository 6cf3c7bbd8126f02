// KVStore (contract in kvstore.h).
#include "scheduler/kvstore/kvstore.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>
#include <thread>

#include "core/build_info.h"
#include "core/error.h"
#include "core/settings.h"
#include "scheduler/kvstore/communicator.h"

namespace mxlite {

namespace {

// The GPU of this rank for dist_sync_device: its rank among the ranks on this machine (Open MPI's
// OMPI_COMM_WORLD_LOCAL_RANK, else the global rank) modulo the visible GPUs.
int RankDevice(int rank) {
  const int gpus = VisibleGpuCount();
  MX_CHECK(gpus > 0) << "KVStore dist_sync_device needs a GPU on every rank; none is visible";
  const char* local_rank = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  return (local_rank ? std::atoi(local_rank) : rank) % gpus;
}

template <typename T>
void SumRange(const std::vector<const void*>& inputs, void* output, int64_t begin, int64_t end) {
  T* out = static_cast<T*>(output);
  const T* first = static_cast<const T*>(inputs[0]);
  for (int64_t i = begin; i < end; ++i) out[i] = first[i];
  for (size_t k = 1; k < inputs.size(); ++k) {
    const T* in = static_cast<const T*>(inputs[k]);
    for (int64_t i = begin; i < end; ++i) out[i] += in[i];
  }
}

void CheckReducible(const std::string& key, DType dtype) {
  MX_CHECK(dtype == DType::kFloat32 || dtype == DType::kFloat64)
      << "KVStore: key '" << key << "' holds " << dtype
      << "; pushing sums float32 or float64 arrays only";
}

std::string SignatureLine(const std::string& key, const NDArray& value) {
  std::ostringstream line;
  line << "'" << key << "' " << value.shape() << " " << value.dtype();
  return line.str();
}

std::vector<std::string> SplitLines(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// `data` split into pieces of at most `bound` elements (MPI counts are ints, and smaller pieces
// let the reduction of one overlap the transfer of the next).
std::vector<CollectivePiece> SplitPieces(void* data, int64_t count, size_t element_bytes,
                                         int64_t bound) {
  std::vector<CollectivePiece> pieces;
  char* bytes = static_cast<char*>(data);
  for (int64_t offset = 0; offset < count; offset += bound) {
    pieces.push_back({bytes + offset * element_bytes, std::min(bound, count - offset)});
  }
  return pieces;
}

std::string DescribeKeys(const std::vector<std::string>& keys) {
  std::ostringstream text;
  if (keys.size() == 1) {
    text << "key '" << keys[0] << "'";
    return text.str();
  }
  text << "bucket of " << keys.size() << " keys (";
  for (size_t i = 0; i < keys.size(); ++i) text << (i ? ", '" : "'") << keys[i] << "'";
  text << ")";
  return text.str();
}

}  // namespace

void SumArrays(const std::vector<const void*>& inputs, void* output, int64_t count, DType dtype,
               int threads, int64_t bound) {
  MX_CHECK(!inputs.empty()) << "SumArrays: no inputs";
  MX_CHECK(dtype == DType::kFloat32 || dtype == DType::kFloat64)
      << "SumArrays: " << dtype << " (expected float32 or float64)";
  auto sum = [&](int64_t begin, int64_t end) {
    if (dtype == DType::kFloat64) {
      SumRange<double>(inputs, output, begin, end);
    } else {
      SumRange<float>(inputs, output, begin, end);
    }
  };
  const int64_t parts =
      count >= bound ? std::max<int64_t>(1, std::min<int64_t>(threads, count)) : 1;
  std::vector<std::thread> helpers;
  for (int64_t part = 1; part < parts; ++part) {
    helpers.emplace_back(sum, count * part / parts, count * (part + 1) / parts);
  }
  sum(0, count / parts);
  for (std::thread& helper : helpers) helper.join();
}

std::string DescribeSignatureMismatch(const std::vector<std::vector<std::string>>& ranks) {
  if (ranks.empty()) return "";
  const std::vector<std::string>& reference = ranks[0];
  size_t first_index = SIZE_MAX;
  size_t first_rank = 0;
  for (size_t r = 1; r < ranks.size(); ++r) {
    const std::vector<std::string>& other = ranks[r];
    const size_t common = std::min(reference.size(), other.size());
    size_t i = 0;
    while (i < common && reference[i] == other[i]) ++i;
    if ((i < common || reference.size() != other.size()) && i < first_index) {
      first_index = i;
      first_rank = r;
    }
  }
  if (first_index == SIZE_MAX) return "";
  auto describe = [&](size_t rank) {
    const std::vector<std::string>& lines = ranks[rank];
    if (first_index < lines.size()) return lines[first_index];
    return "nothing (it initialises " + std::to_string(lines.size()) + " keys)";
  };
  std::ostringstream message;
  message << "the ranks initialise different parameter sets; first difference at key #"
          << first_index << ": rank 0 has " << describe(0) << ", rank " << first_rank << " has "
          << describe(first_rank);
  return message.str();
}

std::unique_ptr<KVStore> KVStore::Create(std::string_view type) {
  if (type == "local" || type == "device") {
    return std::unique_ptr<KVStore>(new KVStore("local", nullptr, nullptr, Context::CPU()));
  }
  if (type == "dist_sync") {
    return std::unique_ptr<KVStore>(
        new KVStore("dist_sync", JobCommunicator(), nullptr, Context::CPU()));
  }
  if (type == "dist_sync_device") {
    MX_CHECK(HasNcclSupport()) << "KVStore dist_sync_device needs NCCL, and this mxlite was "
                                  "built without it (CUDA, NCCL and MPI are needed)";
    std::shared_ptr<Communicator> world = JobCommunicator();
    const int device = RankDevice(world->rank());
    return std::unique_ptr<KVStore>(
        new KVStore("dist_sync_device", world, NcclJobCommunicator(device), Context::GPU(device)));
  }
  MX_THROW() << "KVStore type '" << type << "' is not known; expected local (or device), "
             << "dist_sync or dist_sync_device";
}

KVStore::KVStore(std::string type, std::shared_ptr<Communicator> communicator,
                 std::shared_ptr<Communicator> device_communicator, Context context)
    : type_(std::move(type)),
      communicator_(std::move(communicator)),
      device_communicator_(std::move(device_communicator)),
      context_(context),
      bigarray_bound_(settings().GetInt("MXNET_KVSTORE_BIGARRAY_BOUND")),
      reduction_threads_(static_cast<int>(settings().GetInt("MXNET_KVSTORE_REDUCTION_NTHREADS"))) {
  if (communicator_) {
    rank_ = communicator_->rank();
    num_workers_ = communicator_->size();
  }
}

KVStore::~KVStore() = default;

Communicator& KVStore::ArrayCommunicator() const {
  return device_communicator_ ? *device_communicator_ : *communicator_;
}

KVStore::Entry& KVStore::Find(const std::string& key, const char* verb) {
  auto it = entries_.find(key);
  MX_CHECK(it != entries_.end()) << "KVStore " << verb << ": key '" << key
                                 << "' was not initialised (Init it first)";
  return it->second;
}

const KVStore::Entry& KVStore::Find(const std::string& key, const char* verb) const {
  return const_cast<KVStore*>(this)->Find(key, verb);
}

void KVStore::Init(const std::vector<std::string>& keys, const std::vector<NDArray>& values) {
  MX_CHECK_EQ(keys.size(), values.size()) << "KVStore init: keys and values";
  std::set<std::string> seen;
  for (size_t i = 0; i < keys.size(); ++i) {
    MX_CHECK(!values[i].is_none()) << "KVStore init: key '" << keys[i] << "' has no array";
    MX_CHECK(!entries_.count(keys[i]) && seen.insert(keys[i]).second)
        << "KVStore init: key '" << keys[i] << "' is initialised twice";
  }
  if (communicator_) CheckSignatures(keys, values);
  for (size_t i = 0; i < keys.size(); ++i) {
    Entry& entry = entries_[keys[i]];
    entry.stored = NDArray(values[i].shape(), context_, values[i].dtype());
    entry.merged = NDArray(values[i].shape(), context_, values[i].dtype());
    CopyFromTo(values[i], entry.stored);
    key_order_.push_back(keys[i]);
  }
  if (communicator_) BroadcastFromRank0(keys);
}

void KVStore::CheckSignatures(const std::vector<std::string>& keys,
                              const std::vector<NDArray>& values) {
  std::string text;
  for (size_t i = 0; i < keys.size(); ++i) text += SignatureLine(keys[i], values[i]) + "\n";
  std::vector<int64_t> lengths(num_workers_);
  lengths[rank_] = static_cast<int64_t>(text.size());
  communicator_->Run({.kind = CollectiveKind::kAllgatherInt64,
                      .description = "the parameter signature lengths at init",
                      .pieces = {{lengths.data(), num_workers_}},
                      .dtype = DType::kInt64});
  int64_t total = 0;
  for (int64_t length : lengths) total += length;
  std::string all(static_cast<size_t>(total), '\0');
  communicator_->Run({.kind = CollectiveKind::kAllgatherBytes,
                      .description = "the parameter signatures at init",
                      .send = text.data(),
                      .receive = all.data(),
                      .counts = lengths});
  std::vector<std::vector<std::string>> per_rank;
  int64_t offset = 0;
  for (int64_t length : lengths) {
    per_rank.push_back(SplitLines(std::string_view(all).substr(offset, length)));
    offset += length;
  }
  const std::string mismatch = DescribeSignatureMismatch(per_rank);
  if (!mismatch.empty()) {
    MX_THROW() << "KVStore " << type_ << " init on rank " << rank_ << " of " << num_workers_ << ": "
               << mismatch;
  }
}

void KVStore::BroadcastFromRank0(const std::vector<std::string>& keys) {
  // One collective for all the keys (a broadcast per piece, all in flight together).
  Collective broadcast{.kind = CollectiveKind::kBroadcast,
                       .description = DescribeKeys(keys) + " at init",
                       .dtype = DType::kUInt8};
  for (const std::string& key : keys) {
    NDArray& stored = entries_.at(key).stored;
    stored.WaitToWrite();
    const int64_t bytes = static_cast<int64_t>(stored.bytes());
    for (const CollectivePiece& piece :
         SplitPieces(stored.data(), bytes, 1, bigarray_bound_ * DTypeSize(stored.dtype()))) {
      broadcast.pieces.push_back(piece);
    }
  }
  ArrayCommunicator().Run(std::move(broadcast));
}

void KVStore::Push(const std::vector<std::string>& keys,
                   const std::vector<std::vector<NDArray>>& values, int priority) {
  MX_CHECK_EQ(keys.size(), values.size()) << "KVStore push: keys and value lists";
  for (size_t i = 0; i < keys.size(); ++i) {
    const Entry& entry = Find(keys[i], "push");
    CheckReducible(keys[i], entry.stored.dtype());
    MX_CHECK(!values[i].empty()) << "KVStore push: no values for key '" << keys[i] << "'";
    for (const NDArray& value : values[i]) {
      MX_CHECK(!value.is_none() && value.shape() == entry.stored.shape() &&
               value.dtype() == entry.stored.dtype())
          << "KVStore push: key '" << keys[i] << "' holds " << entry.stored.shape() << " "
          << entry.stored.dtype() << " but was pushed "
          << (value.is_none() ? std::string("an empty array")
                              : SignatureLine(keys[i], value).substr(keys[i].size() + 3));
    }
  }
  for (size_t i = 0; i < keys.size(); ++i) PushLocalSum(keys[i], values[i], priority);
  if (communicator_) PushAllreduce(keys, priority);
  for (const std::string& key : keys) PushStore(key, priority);
}

void KVStore::Push(const std::vector<std::string>& keys, const std::vector<NDArray>& values,
                   int priority) {
  MX_CHECK_EQ(keys.size(), values.size()) << "KVStore push: keys and values";
  std::vector<std::vector<NDArray>> lists;
  for (const NDArray& value : values) lists.push_back({value});
  Push(keys, lists, priority);
}

void KVStore::PushLocalSum(const std::string& key, const std::vector<NDArray>& values,
                           int priority) {
  Entry& entry = Find(key, "push");
  if (context_.is_gpu()) {
    // One GPU per rank: the "sum" of one gradient is a copy onto the store's GPU.
    MX_CHECK_EQ(values.size(), 1u) << "KVStore " << type_ << ": key '" << key
                                   << "' pushed from several devices; use one GPU per rank";
    CopyFromTo(values[0], entry.merged, priority);
    return;
  }
  std::vector<NDArray> inputs;
  for (const NDArray& value : values) {
    // Copies from GPUs are summed on the CPU, as MXNet's local store does.
    inputs.push_back(value.ctx().is_host() ? value : value.CopyTo(Context::CPU()));
  }
  std::vector<VarHandle> reads;
  for (const NDArray& input : inputs) reads.push_back(input.var());
  const NDArray merged = entry.merged;
  const int threads = reduction_threads_;
  const int64_t bound = bigarray_bound_;
  merged.engine().PushSync(
      [inputs, merged, threads, bound](RunContext) {
        std::vector<const void*> data;
        for (const NDArray& input : inputs) data.push_back(input.data());
        SumArrays(data, merged.data(), merged.size(), merged.dtype(), threads, bound);
      },
      Context::CPU(), reads, {merged.var()}, priority, "kvstore_sum");
}

void KVStore::PushAllreduce(const std::vector<std::string>& keys, int priority) {
  std::vector<std::string> bucket;
  int64_t bucket_elements = 0;
  DType bucket_dtype = DType::kFloat32;
  auto flush = [&] {
    if (!bucket.empty()) PushAllreduceBucket(bucket, priority);
    bucket.clear();
    bucket_elements = 0;
  };
  for (const std::string& key : keys) {
    const NDArray& merged = entries_.at(key).merged;
    if (merged.size() >= bigarray_bound_ || context_.is_gpu()) {
      flush();
      PushAllreduceBucket({key}, priority);
      continue;
    }
    if (bucket_elements + merged.size() > bigarray_bound_ ||
        (!bucket.empty() && merged.dtype() != bucket_dtype)) {
      flush();
    }
    bucket.push_back(key);
    bucket_elements += merged.size();
    bucket_dtype = merged.dtype();
  }
  flush();
}

void KVStore::PushAllreduceBucket(const std::vector<std::string>& keys, int priority) {
  // The ticket is taken here, on the driving thread, so that every rank starts its allreduces in
  // push order whatever order the engine finishes the local sums in.
  std::shared_ptr<Communicator> communicator =
      device_communicator_ ? device_communicator_ : communicator_;
  const uint64_t ticket = communicator->Reserve();
  std::vector<NDArray> arrays;
  std::vector<VarHandle> writes;
  for (const std::string& key : keys) {
    arrays.push_back(entries_.at(key).merged);
    writes.push_back(arrays.back().var());
  }
  const std::string description = DescribeKeys(keys);
  const int64_t bound = bigarray_bound_;
  arrays[0].engine().PushAsync(
      [arrays, description, bound, ticket, communicator](RunContext, CallbackOnComplete done) {
        const DType dtype = arrays[0].dtype();
        const size_t element = DTypeSize(dtype);
        Collective collective{
            .kind = CollectiveKind::kAllreduceSum, .description = description, .dtype = dtype};
        std::shared_ptr<std::vector<char>> fused;
        if (arrays.size() == 1) {
          collective.pieces = SplitPieces(arrays[0].data(), arrays[0].size(), element, bound);
        } else {
          // Small keys travel together in one fusion buffer: one collective's latency instead of
          // one per key.
          int64_t total = 0;
          for (const NDArray& array : arrays) total += array.size();
          fused = std::make_shared<std::vector<char>>(total * element);
          size_t offset = 0;
          for (const NDArray& array : arrays) {
            std::memcpy(fused->data() + offset, array.data(), array.bytes());
            offset += array.bytes();
          }
          collective.pieces = {{fused->data(), total}};
        }
        collective.done = [arrays, fused, done](std::exception_ptr error) {
          if (error) {
            done.Fail(error);
            return;
          }
          if (fused) {
            size_t offset = 0;
            for (const NDArray& array : arrays) {
              std::memcpy(array.data(), fused->data() + offset, array.bytes());
              offset += array.bytes();
            }
          }
          done();
        };
        communicator->Submit(ticket, std::move(collective));
      },
      Context::CPU(), {}, writes, priority, "kvstore_allreduce");
}

void KVStore::PushStore(const std::string& key, int priority) {
  Entry& entry = Find(key, "push");
  ++entry.pushes;
  if (optimizer_) {
    // MXNet counts updates per key; the optimiser's step (Adam's bias correction, the learning
    // rate schedule) is this key's update number.
    optimizer_->set_num_update(entry.pushes - 1);
    optimizer_->Update(key, entry.stored, entry.merged);
    optimizer_->set_num_update(entry.pushes);
  } else {
    CopyFromTo(entry.merged, entry.stored, priority);
  }
}

void KVStore::Pull(const std::vector<std::string>& keys,
                   const std::vector<std::vector<NDArray>>& outs, int priority) const {
  MX_CHECK_EQ(keys.size(), outs.size()) << "KVStore pull: keys and output lists";
  for (size_t i = 0; i < keys.size(); ++i) {
    const Entry& entry = Find(keys[i], "pull");
    for (const NDArray& out : outs[i]) {
      MX_CHECK(!out.is_none() && out.shape() == entry.stored.shape() &&
               out.dtype() == entry.stored.dtype())
          << "KVStore pull: key '" << keys[i] << "' holds " << entry.stored.shape() << " "
          << entry.stored.dtype() << "; the output array does not match";
    }
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    const Entry& entry = Find(keys[i], "pull");
    for (const NDArray& out : outs[i]) CopyFromTo(entry.stored, out, priority);
  }
}

void KVStore::Pull(const std::vector<std::string>& keys, const std::vector<NDArray>& outs,
                   int priority) const {
  MX_CHECK_EQ(keys.size(), outs.size()) << "KVStore pull: keys and outputs";
  std::vector<std::vector<NDArray>> lists;
  for (const NDArray& out : outs) lists.push_back({out});
  Pull(keys, lists, priority);
}

void KVStore::PushPull(const std::vector<std::string>& keys, const std::vector<NDArray>& values,
                       const std::vector<NDArray>& outs, int priority) {
  Push(keys, values, priority);
  Pull(keys, outs, priority);
}

void KVStore::SetOptimizer(std::unique_ptr<Optimizer> optimizer) {
  MX_CHECK(optimizer != nullptr) << "KVStore: SetOptimizer needs an optimizer";
  optimizer_ = std::move(optimizer);
}

void KVStore::Barrier() {
  for (const auto& [key, entry] : entries_) {
    entry.stored.WaitToRead();
    entry.merged.WaitToRead();
  }
  if (communicator_) {
    communicator_->Run({.kind = CollectiveKind::kBarrier, .description = "KVStore::Barrier"});
  }
}

void KVStore::SaveCheckpoint(const std::string& path, const Checkpoint& checkpoint) {
  std::string failure;
  if (rank_ == 0) {
    try {
      ::mxlite::SaveCheckpoint(path, checkpoint);
    } catch (const std::exception& error) {
      failure = error.what();
      if (failure.empty()) failure = "unknown error";
    }
  }
  if (communicator_) {
    // Every rank learns rank 0's outcome, so that a failed save stops the whole job alike.
    int64_t length = static_cast<int64_t>(failure.size());
    communicator_->Run({.kind = CollectiveKind::kBroadcast,
                        .description = "the checkpoint status",
                        .pieces = {{&length, 1}},
                        .dtype = DType::kInt64});
    failure.resize(static_cast<size_t>(length));
    if (length > 0) {
      communicator_->Run({.kind = CollectiveKind::kBroadcast,
                          .description = "the checkpoint error",
                          .pieces = {{failure.data(), length}},
                          .dtype = DType::kUInt8});
    }
  }
  if (!failure.empty()) {
    MX_THROW() << "KVStore: saving checkpoint " << path << " on rank 0 failed: " << failure;
  }
}

}  // namespace mxlite
