// KVStore: data-parallel training as MXNet users know it. Parameters are stored under keys;
// workers push gradients, the store sums them (over the devices of this process and, for dist_*,
// over the ranks of the job) and either applies an optimiser to its stored weight or keeps the sum;
// workers pull the result.
//
//   auto kv = KVStore::Create("dist_sync");                 // under mpirun; "local" in one process
//   kv->Init(names, weights);                                // rank 0's values win everywhere
//   kv->SetOptimizer(Optimizer::Sgd({.learning_rate = 0.1,
//                                    .rescale_grad = 1.0 / (batch * kv->num_workers())}));
//   for (...) {
//     exec->Forward(true); exec->Backward();                 // pushed, not waited for
//     kv->Push(names_last_layer_first, grads);               // communication as engine ops
//     kv->Pull(names, weights);
//   }
//
// Types.
//   local      one process, any number of devices: the copies of a key are summed on the CPU,
//              with MXNET_KVSTORE_REDUCTION_NTHREADS threads for arrays of at least
//              MXNET_KVSTORE_BIGARRAY_BOUND elements ("device" is accepted as an alias).
//   dist_sync  several processes (mpirun): the local sum, then an allreduce over MPI
//              (scheduler/kvstore/communicator.h). Every rank keeps a replica of every weight and
//              applies the same optimiser to the same summed gradient, so the replicas stay
//              bit-identical. Keys smaller than the bound pushed in one call are fused into
//              buckets of up to MXNET_KVSTORE_BIGARRAY_BOUND elements, one allreduce per bucket;
//              larger keys are split into allreduces of at most that many elements.
//   dist_sync_device  as dist_sync, with the weights and sums on this rank's GPU (one GPU per
//              rank: local rank modulo the visible GPUs) and the allreduce over NCCL, bootstrapped
//              through MPI (no fusion buckets: NCCL handles small keys itself).
//
// Overlap. Push only pushes engine ops: each key's local sum waits for its gradients, and each
// bucket's allreduce starts as soon as its keys are summed, while backward still computes earlier
// layers. Push keys in the order their gradients become ready (last layer first), and with a
// priority > 0 so that the engine runs these small ops on its priority threads
// (MXNET_CPU_PRIORITY_NTHREADS) instead of queueing them behind the rest of backward, for the most
// overlap. The allreduces start in push order on every rank (communicator tickets), so every rank
// must push the same keys in the same order.
//
// Checks. Init exchanges a signature of the keys (names, shapes, dtypes, in order) between ranks;
// when they differ, Init throws on every rank, naming the first differing key and both ranks'
// versions. A collective that does not complete within MXNET_KVSTORE_TIMEOUT seconds reports the
// key, the collective, the rank and the timeout on every rank that waits, and the job is aborted.
//
// Ownership: the store owns its stored and merge arrays (on context()); Push and Pull take the
// caller's arrays by handle and read or write them through the engine. Thread safety: one thread
// drives a KVStore (as for an Executor).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/ndarray.h"
#include "scheduler/train/checkpoint.h"
#include "scheduler/train/optimizer.h"

namespace mxlite {

class Communicator;

class KVStore {
 public:
  // "local" (alias "device"), "dist_sync" (needs MPI; rank and size come from mpirun) or
  // "dist_sync_device" (needs MPI, CUDA and NCCL, and a GPU).
  static std::unique_ptr<KVStore> Create(std::string_view type);
  ~KVStore();
  KVStore(const KVStore&) = delete;
  KVStore& operator=(const KVStore&) = delete;

  const std::string& type() const { return type_; }
  int rank() const { return rank_; }
  int num_workers() const { return num_workers_; }
  // Where the store keeps its arrays: the CPU, or this rank's GPU for dist_sync_device (bind the
  // executor there).
  Context context() const { return context_; }

  // Creates each key with its initial value (on dist_*: rank 0's value on every rank). A key may be
  // initialised once. On dist_*, every rank must initialise the same keys (see Checks above).
  void Init(const std::vector<std::string>& keys, const std::vector<NDArray>& values);
  void Init(const std::string& key, const NDArray& value) {
    Init(std::vector<std::string>{key}, std::vector<NDArray>{value});
  }

  // Pushes values[i] (one gradient per device, all of key i's shape) for each keys[i]: they are
  // summed, across ranks on dist_*, and then either given to the optimiser (SetOptimizer) to
  // update the stored weight, or stored as they are.
  void Push(const std::vector<std::string>& keys, const std::vector<std::vector<NDArray>>& values,
            int priority = 0);
  // One gradient per key (a single device), as in `kv.push(names, grads)`.
  void Push(const std::vector<std::string>& keys, const std::vector<NDArray>& values,
            int priority = 0);
  // Copies each key's stored value into every array of outs[i] (e.g. each device's weight).
  void Pull(const std::vector<std::string>& keys, const std::vector<std::vector<NDArray>>& outs,
            int priority = 0) const;
  void Pull(const std::vector<std::string>& keys, const std::vector<NDArray>& outs,
            int priority = 0) const;
  // Push then Pull of the same keys.
  void PushPull(const std::vector<std::string>& keys, const std::vector<NDArray>& values,
                const std::vector<NDArray>& outs, int priority = 0);

  // Updates on the store: from now on a push applies `optimizer` to the stored weight.
  void SetOptimizer(std::unique_ptr<Optimizer> optimizer);
  Optimizer* optimizer() const { return optimizer_.get(); }

  // Waits until every rank has reached this call (and this rank's pushed work is done).
  void Barrier();
  // Writes `checkpoint` from rank 0 only (atomic, as SaveCheckpoint), then every rank learns
  // whether that worked: a failure on rank 0 throws on every rank.
  void SaveCheckpoint(const std::string& path, const Checkpoint& checkpoint);

  // Keys in initialisation order.
  const std::vector<std::string>& keys() const { return key_order_; }

 private:
  struct Entry {
    NDArray stored;  // the weight (or the last sum, without an optimiser)
    NDArray merged;  // this step's sum
    int64_t pushes = 0;
  };

  KVStore(std::string type, std::shared_ptr<Communicator> communicator,
          std::shared_ptr<Communicator> device_communicator, Context context);
  // The communicator for the store's arrays (NCCL for GPU arrays, else MPI).
  Communicator& ArrayCommunicator() const;
  Entry& Find(const std::string& key, const char* verb);
  const Entry& Find(const std::string& key, const char* verb) const;
  void CheckSignatures(const std::vector<std::string>& keys, const std::vector<NDArray>& values);
  void BroadcastFromRank0(const std::vector<std::string>& keys);
  void PushLocalSum(const std::string& key, const std::vector<NDArray>& values, int priority);
  void PushAllreduce(const std::vector<std::string>& keys, int priority);
  void PushAllreduceBucket(const std::vector<std::string>& keys, int priority);
  void PushStore(const std::string& key, int priority);

  const std::string type_;
  std::shared_ptr<Communicator> communicator_;         // null for local
  std::shared_ptr<Communicator> device_communicator_;  // NCCL, for dist_sync_device only
  const Context context_;
  int rank_ = 0;
  int num_workers_ = 1;
  int64_t bigarray_bound_;
  int reduction_threads_;
  std::map<std::string, Entry> entries_;
  std::vector<std::string> key_order_;
  std::unique_ptr<Optimizer> optimizer_;
};

// For Init's signature check: each rank's signature lines ("name shape dtype", one per key, in
// order). Returns "" when all ranks agree, else a message naming the first differing key and how
// two ranks see it. Every rank computes the same message from the same lines.
std::string DescribeSignatureMismatch(const std::vector<std::vector<std::string>>& ranks);

// Sums `inputs` (all of `count` float32 or float64 elements of `dtype`) into `output`, in input
// order for every element (deterministic), on up to `threads` threads when count >= `bound`.
void SumArrays(const std::vector<const void*>& inputs, void* output, int64_t count, DType dtype,
               int threads, int64_t bound);

}  // namespace mxlite
