// Communicator: collectives across the ranks (processes) of a distributed job, for the dist_*
// KVStores. The implementation is MPI (mpi_communicator.cc, launched with mpirun); it exists only
// when mxlite is built with MPI (MXLITE_USE_MPI), otherwise JobCommunicator() throws saying so.
// Between GPUs, NcclJobCommunicator() (nccl_communicator.cc) does the same over NCCL.
//
//   std::shared_ptr<Communicator> world = JobCommunicator();   // MPI_Init on first use
//   uint64_t ticket = world->Reserve();                         // on the driving thread, in order
//   ...                                                         // later, from any thread:
//   world->Submit(ticket, {.kind = CollectiveKind::kAllreduceSum, .description = "key 'w'",
//                          .pieces = {{data, count}}, .dtype = DType::kFloat32,
//                          .done = [](std::exception_ptr error) { ... }});
//
// Ordering. MPI requires every rank to start the same collectives in the same order. Tickets fix
// that order: the driving thread reserves them (its program order is the same on every rank), and
// a collective starts only when it and every earlier ticket have been submitted, whatever order the
// data became ready in (engine ops submit when their inputs are computed). Several started
// collectives may be in flight at once; they complete in any order.
//
// Timeouts. MPI has none. Every collective is non-blocking and polled; one that has not completed
// MXNET_KVSTORE_TIMEOUT seconds after it started fails with an error naming the collective, its
// description (the keys), this rank and the timeout. The communicator is then broken: its error is
// printed to stderr at once, every later collective fails with it, and after a short grace period
// (so that the other ranks, which time out at about the same moment, can report too) the job is
// aborted with MPI_Abort, so no rank hangs.
//
// Threads. One internal thread makes every MPI call (MPI_Init_thread with MPI_THREAD_FUNNELED on
// it, polling, MPI_Finalize at exit). `done` callbacks run on that thread and must be short and
// must not wait for other collectives. Reserve, Submit and Run may be called from any thread.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace mxlite {

enum class CollectiveKind {
  kAllreduceSum,    // every piece summed in place across ranks (float32 or float64)
  kBroadcast,       // every piece overwritten with rank 0's bytes (dtype ignored)
  kAllgatherInt64,  // pieces[0]: one int64 per rank, this rank's at [rank]; filled from all ranks
  kAllgatherBytes,  // send -> receive, rank r's `counts[r]` bytes at offset sum(counts[0..r))
  kBarrier,
};

const char* CollectiveKindName(CollectiveKind kind);

// A contiguous buffer (data, element count). Allreduce and broadcast treat each piece as one MPI
// collective; large arrays are split into several pieces so that none exceeds the bound.
struct CollectivePiece {
  void* data = nullptr;
  int64_t count = 0;
};

struct Collective {
  CollectiveKind kind = CollectiveKind::kBarrier;
  // What is being exchanged, for error messages ("key 'fc1_weight'", "bucket of keys 'a', 'b'").
  std::string description;
  std::vector<CollectivePiece> pieces;
  DType dtype = DType::kFloat32;
  // kAllgatherBytes only.
  const void* send = nullptr;
  void* receive = nullptr;
  std::vector<int64_t> counts;
  // Called once, on the communicator's thread, with null or the error.
  std::function<void(std::exception_ptr)> done;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // "MPI (Open MPI v4.1.4)"
  virtual std::string description() const = 0;

  // The next place in the collective order (see the contract above).
  virtual uint64_t Reserve() = 0;
  // Hands over the collective of `ticket`; it starts once every earlier ticket has started.
  virtual void Submit(uint64_t ticket, Collective collective) = 0;

  // Reserve + Submit, then waits for completion; rethrows its error. Not from `done` callbacks.
  void Run(Collective collective);
};

// The process's communicator over all ranks of the job (MPI_COMM_WORLD), created on first use and
// kept until exit. Throws mxlite::Error when mxlite was built without MPI.
std::shared_ptr<Communicator> JobCommunicator();

// True when mxlite was built with MPI.
bool HasMpiSupport();

// The NCCL communicator between the ranks of the job, this rank's GPU `device` (one GPU per
// rank), bootstrapped through JobCommunicator() (nccl_communicator.cc). Collectives take device
// pointers and do allreduce and broadcast only. Throws mxlite::Error when mxlite was built without
// CUDA, NCCL or MPI.
std::shared_ptr<Communicator> NcclJobCommunicator(int device);
bool HasNcclSupport();

}  // namespace mxlite
