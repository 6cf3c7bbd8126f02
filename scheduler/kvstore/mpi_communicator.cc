// The MPI communicator (contract in communicator.h): MPI_COMM_WORLD, non-blocking collectives
// polled by PolledCommunicator's thread, which also initialises (MPI_THREAD_FUNNELED) and
// finalises MPI. Built only with MXLITE_USE_MPI.
//
// Only the C API: Open MPI's deprecated C++ bindings do not compile warning-free.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#include "core/error.h"
#include "scheduler/kvstore/communicator.h"
#include "scheduler/kvstore/polled_communicator.h"

namespace mxlite {

namespace {

using kvstore_internal::PieceCount;
using kvstore_internal::PolledCommunicator;

void CheckMpi(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  MX_THROW() << call << " failed: " << std::string(text, length);
}

MPI_Datatype ReduceType(DType dtype, const std::string& description) {
  switch (dtype) {
    case DType::kFloat32:
      return MPI_FLOAT;
    case DType::kFloat64:
      return MPI_DOUBLE;
    case DType::kInt32:
      return MPI_INT32_T;
    case DType::kInt64:
      return MPI_INT64_T;
    default:
      MX_THROW() << "allreduce of " << description << ": dtype " << dtype
                 << " is not supported (float32, float64, int32, int64)";
  }
}

// The requests of one started collective (and the int arrays MPI reads while it runs).
class MpiOperation final : public PolledCommunicator::Operation {
 public:
  bool Done() override {
    int complete = 0;
    CheckMpi(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &complete,
                         MPI_STATUSES_IGNORE),
             "MPI_Testall");
    return complete != 0;
  }
  MPI_Request* NewRequest() {
    requests.emplace_back();
    return &requests.back();
  }

  std::vector<MPI_Request> requests;
  std::vector<int> counts, displacements;
};

class MpiCommunicator final : public PolledCommunicator {
 public:
  MpiCommunicator() : PolledCommunicator("MPI") { StartThread(); }
  ~MpiCommunicator() override { StopThread(); }

 private:
  Identity Initialise() override {
    int initialised = 0;
    MPI_Initialized(&initialised);
    MX_CHECK(!initialised) << "MPI was initialised outside mxlite; mxlite's communicator makes "
                              "all MPI calls on its own thread and must initialise MPI itself";
    int provided = 0;
    CheckMpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    // Errors come back as codes (turned into mxlite::Error) instead of aborting inside MPI.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    Identity identity;
    MPI_Comm_rank(MPI_COMM_WORLD, &identity.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &identity.size);
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(version, &length);
    const std::string text(version, length);
    identity.description = "MPI (" + text.substr(0, text.find_first_of(",\n")) + ")";
    return identity;
  }

  std::unique_ptr<Operation> Start(const Collective& c) override {
    auto operation = std::make_unique<MpiOperation>();
    const std::string& what = c.description;
    switch (c.kind) {
      case CollectiveKind::kAllreduceSum: {
        const MPI_Datatype type = ReduceType(c.dtype, what);
        for (const CollectivePiece& piece : c.pieces) {
          CheckMpi(MPI_Iallreduce(MPI_IN_PLACE, piece.data, PieceCount(piece.count, what), type,
                                  MPI_SUM, MPI_COMM_WORLD, operation->NewRequest()),
                   "MPI_Iallreduce");
        }
        break;
      }
      case CollectiveKind::kBroadcast:
        for (const CollectivePiece& piece : c.pieces) {
          CheckMpi(MPI_Ibcast(piece.data, PieceCount(piece.count * DTypeSize(c.dtype), what),
                              MPI_BYTE, 0, MPI_COMM_WORLD, operation->NewRequest()),
                   "MPI_Ibcast");
        }
        break;
      case CollectiveKind::kAllgatherInt64:
        MX_CHECK(c.pieces.size() == 1 && c.pieces[0].count == size())
            << "allgather of " << what << ": needs one piece of " << size() << " int64";
        CheckMpi(MPI_Iallgather(MPI_IN_PLACE, 1, MPI_INT64_T, c.pieces[0].data, 1, MPI_INT64_T,
                                MPI_COMM_WORLD, operation->NewRequest()),
                 "MPI_Iallgather");
        break;
      case CollectiveKind::kAllgatherBytes: {
        MX_CHECK(static_cast<int>(c.counts.size()) == size())
            << "allgather of " << what << ": needs " << size() << " counts";
        int64_t offset = 0;
        for (int64_t count : c.counts) {
          operation->counts.push_back(PieceCount(count, what));
          operation->displacements.push_back(PieceCount(offset, what));
          offset += count;
        }
        CheckMpi(MPI_Iallgatherv(c.send, operation->counts[rank()], MPI_BYTE, c.receive,
                                 operation->counts.data(), operation->displacements.data(),
                                 MPI_BYTE, MPI_COMM_WORLD, operation->NewRequest()),
                 "MPI_Iallgatherv");
        break;
      }
      case CollectiveKind::kBarrier:
        CheckMpi(MPI_Ibarrier(MPI_COMM_WORLD, operation->NewRequest()), "MPI_Ibarrier");
        break;
    }
    return operation;
  }

  void Finalize() override { MPI_Finalize(); }

  [[noreturn]] void AbortJob() override {
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::_Exit(1);  // MPI_Abort does not return; this keeps [[noreturn]] honest
  }
};

}  // namespace

bool HasMpiSupport() { return true; }

std::shared_ptr<Communicator> JobCommunicator() {
  // Created once: MPI cannot be initialised again after MPI_Finalize.
  static std::mutex mutex;
  static std::shared_ptr<Communicator> world;
  std::lock_guard lock(mutex);
  if (!world) world = std::make_shared<MpiCommunicator>();
  return world;
}

}  // namespace mxlite
