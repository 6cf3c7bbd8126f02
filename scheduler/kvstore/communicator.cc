// Communicator helpers shared by every implementation, and the stand-in without MPI.
#include "scheduler/kvstore/communicator.h"

#include <future>
#include <memory>

#include "core/error.h"

namespace mxlite {

const char* CollectiveKindName(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllreduceSum:
      return "allreduce";
    case CollectiveKind::kBroadcast:
      return "broadcast";
    case CollectiveKind::kAllgatherInt64:
      return "allgather";
    case CollectiveKind::kAllgatherBytes:
      return "allgatherv";
    case CollectiveKind::kBarrier:
      return "barrier";
  }
  return "collective";
}

void Communicator::Run(Collective collective) {
  // Shared with the callback: the communicator's thread may still be inside set_value when this
  // thread has already returned.
  auto finished = std::make_shared<std::promise<void>>();
  std::future<void> result = finished->get_future();
  collective.done = [finished](std::exception_ptr error) {
    if (error) {
      finished->set_exception(error);
    } else {
      finished->set_value();
    }
  };
  Submit(Reserve(), std::move(collective));
  result.get();
}

#if !MXLITE_HAS_MPI
bool HasMpiSupport() { return false; }

std::shared_ptr<Communicator> JobCommunicator() {
  MX_THROW() << "distributed KVStores (dist_sync) need MPI, and this mxlite was built without it "
                "(configure with -DMXLITE_USE_MPI=ON after installing libopenmpi-dev)";
}
#endif

#if !MXLITE_HAS_NCCL
bool HasNcclSupport() { return false; }

std::shared_ptr<Communicator> NcclJobCommunicator(int) {
  MX_THROW() << "dist_sync_device needs NCCL, and this mxlite was built without it (it needs "
                "CUDA, NCCL from the CUDA toolkit, and MPI)";
}
#endif

}  // namespace mxlite
