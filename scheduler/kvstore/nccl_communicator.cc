// The NCCL communicator (declared in communicator.h): collectives between the GPUs of the ranks
// of an MPI job, one GPU per rank, for the dist_sync_device KVStore. The NCCL communicator is
// bootstrapped through MPI (rank 0's ncclUniqueId is broadcast over JobCommunicator()) and created
// non-blocking, so that its initialisation too is bounded by MXNET_KVSTORE_TIMEOUT. Collectives
// run on the communicator's own stream; PolledCommunicator polls their completion events (and
// NCCL's asynchronous error) against the timeout. Built only with CUDA, NCCL and MPI.
#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

#include "core/error.h"
#include "scheduler/kvstore/communicator.h"
#include "scheduler/kvstore/polled_communicator.h"

namespace mxlite {

namespace {

using kvstore_internal::PieceCount;
using kvstore_internal::PolledCommunicator;

void CheckCuda(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return;
  MX_THROW() << call << " failed: " << cudaGetErrorString(status);
}

// ncclInProgress is success for a non-blocking communicator: the call was queued.
void CheckNccl(ncclResult_t result, const char* call) {
  if (result == ncclSuccess || result == ncclInProgress) return;
  MX_THROW() << call << " failed: " << ncclGetErrorString(result);
}

ncclDataType_t ReduceType(DType dtype, const std::string& description) {
  switch (dtype) {
    case DType::kFloat32:
      return ncclFloat32;
    case DType::kFloat64:
      return ncclFloat64;
    case DType::kFloat16:
      return ncclFloat16;
    case DType::kInt32:
      return ncclInt32;
    case DType::kInt64:
      return ncclInt64;
    default:
      MX_THROW() << "NCCL allreduce of " << description << ": dtype " << dtype
                 << " is not supported (float32, float64, float16, int32, int64)";
  }
}

// NCCL's asynchronous state of a communicator: ncclSuccess or ncclInProgress; throws on an error.
ncclResult_t AsyncState(ncclComm_t comm) {
  ncclResult_t state = ncclSuccess;
  CheckNccl(ncclCommGetAsyncError(comm, &state), "ncclCommGetAsyncError");
  CheckNccl(state, "NCCL collective");
  return state;
}

// A collective started by ncclGroupEnd, done when its event on the stream is. A non-blocking
// communicator may return from ncclGroupEnd (ncclInProgress) before it has put the collective's
// kernels on the stream: the event is recorded only once NCCL's state says it has, else it would
// precede them and report the collective done before it ran. Until then, NCCL must not be given
// another call on this communicator either.
class NcclOperation final : public PolledCommunicator::Operation {
 public:
  NcclOperation(ncclComm_t comm, cudaStream_t stream, bool enqueued)
      : comm_(comm), stream_(stream) {
    CheckCuda(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), "cudaEventCreate");
    if (enqueued) RecordEvent();
  }
  ~NcclOperation() override { cudaEventDestroy(event_); }

  bool Done() override {
    if (!recorded_) {
      if (AsyncState(comm_) == ncclInProgress) return false;
      RecordEvent();
    }
    const cudaError_t status = cudaEventQuery(event_);
    if (status == cudaSuccess) return true;
    if (status != cudaErrorNotReady) CheckCuda(status, "cudaEventQuery");
    AsyncState(comm_);  // a failed peer surfaces here while the kernels wait for it
    return false;
  }

 private:
  void RecordEvent() {
    CheckCuda(cudaEventRecord(event_, stream_), "cudaEventRecord");
    recorded_ = true;
  }

  ncclComm_t comm_;
  cudaStream_t stream_;
  cudaEvent_t event_ = nullptr;
  bool recorded_ = false;
};

class NcclCommunicator final : public PolledCommunicator {
 public:
  NcclCommunicator(std::shared_ptr<Communicator> bootstrap, int device)
      : PolledCommunicator("NCCL"), bootstrap_(std::move(bootstrap)), device_(device) {
    StartThread();
  }
  ~NcclCommunicator() override { StopThread(); }

 private:
  Identity Initialise() override {
    CheckCuda(cudaSetDevice(device_), "cudaSetDevice");
    CheckCuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    ncclUniqueId id{};
    if (bootstrap_->rank() == 0) CheckNccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
    bootstrap_->Run({.kind = CollectiveKind::kBroadcast,
                     .description = "the NCCL unique id",
                     .pieces = {{&id, static_cast<int64_t>(sizeof(id))}},
                     .dtype = DType::kUInt8});
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    CheckNccl(ncclCommInitRankConfig(&comm_, bootstrap_->size(), id, bootstrap_->rank(), &config),
              "ncclCommInitRankConfig");
    WaitForInitialisation();
    int version = 0;
    ncclGetVersion(&version);
    return {.rank = bootstrap_->rank(),
            .size = bootstrap_->size(),
            .description =
                "NCCL " + std::to_string(version) + " on gpu(" + std::to_string(device_) + ")"};
  }

  // A non-blocking communicator is ready when its asynchronous state leaves ncclInProgress.
  void WaitForInitialisation() {
    const auto deadline = std::chrono::steady_clock::now() + timeout();
    for (;;) {
      ncclResult_t state = ncclInProgress;
      CheckNccl(ncclCommGetAsyncError(comm_, &state), "ncclCommGetAsyncError");
      if (state == ncclSuccess) return;
      if (state != ncclInProgress) {
        ncclCommAbort(comm_);
        MX_THROW() << "NCCL communicator initialisation on rank " << bootstrap_->rank()
                   << " failed: " << ncclGetErrorString(state);
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        ncclCommAbort(comm_);
        MX_THROW() << "NCCL communicator initialisation on rank " << bootstrap_->rank() << " of "
                   << bootstrap_->size()
                   << " did not complete within MXNET_KVSTORE_TIMEOUT=" << timeout().count()
                   << " s: another rank failed or hangs";
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  std::unique_ptr<Operation> Start(const Collective& c) override {
    const std::string& what = c.description;
    CheckNccl(ncclGroupStart(), "ncclGroupStart");
    for (const CollectivePiece& piece : c.pieces) {
      switch (c.kind) {
        case CollectiveKind::kAllreduceSum:
          CheckNccl(ncclAllReduce(piece.data, piece.data, PieceCount(piece.count, what),
                                  ReduceType(c.dtype, what), ncclSum, comm_, stream_),
                    "ncclAllReduce");
          break;
        case CollectiveKind::kBroadcast:
          CheckNccl(ncclBroadcast(piece.data, piece.data,
                                  PieceCount(piece.count * DTypeSize(c.dtype), what), ncclUint8,
                                  /*root=*/0, comm_, stream_),
                    "ncclBroadcast");
          break;
        default:
          ncclGroupEnd();
          MX_THROW() << "NCCL communicator: " << CollectiveKindName(c.kind) << " of " << what
                     << " is not done over NCCL (the KVStore uses MPI for it)";
      }
    }
    const ncclResult_t ended = ncclGroupEnd();
    CheckNccl(ended, "ncclGroupEnd");
    return std::make_unique<NcclOperation>(comm_, stream_, /*enqueued=*/ended == ncclSuccess);
  }

  // A non-blocking communicator finalises in the background: ncclCommDestroy must wait until its
  // state leaves ncclInProgress (bounded; a peer that never finalises leaves it to the abort).
  void Finalize() override {
    cudaStreamSynchronize(stream_);
    ncclResult_t state = ncclCommFinalize(comm_);
    const auto deadline = std::chrono::steady_clock::now() + timeout();
    while (state == ncclInProgress && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (ncclCommGetAsyncError(comm_, &state) != ncclSuccess) break;
    }
    if (state == ncclSuccess) {
      ncclCommDestroy(comm_);
    } else {
      ncclCommAbort(comm_);
    }
    cudaStreamDestroy(stream_);
  }

  [[noreturn]] void AbortJob() override {
    ncclCommAbort(comm_);
    // mpirun ends the whole job when a rank exits without MPI_Finalize.
    std::_Exit(1);
  }

  std::shared_ptr<Communicator> bootstrap_;
  const int device_;
  // Created and used on the communicator's thread only.
  cudaStream_t stream_ = nullptr;
  ncclComm_t comm_ = nullptr;
};

}  // namespace

bool HasNcclSupport() { return true; }

std::shared_ptr<Communicator> NcclJobCommunicator(int device) {
  static std::mutex mutex;
  static std::map<int, std::shared_ptr<Communicator>> communicators;
  std::lock_guard lock(mutex);
  std::shared_ptr<Communicator>& communicator = communicators[device];
  if (!communicator) communicator = std::make_shared<NcclCommunicator>(JobCommunicator(), device);
  return communicator;
}

}  // namespace mxlite
