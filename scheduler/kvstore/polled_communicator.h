// PolledCommunicator: what the MPI and NCCL communicators share (contract in communicator.h):
// one thread that makes every library call, collectives started in ticket order, non-blocking
// operations polled against MXNET_KVSTORE_TIMEOUT, and the failure path (report on stderr, fail
// every collective, abort the job after a short grace period).
//
// A subclass says how to initialise on that thread, start a collective (an Operation it can
// test), finalise, and abort the job. Its constructor calls StartThread() last and its destructor
// calls StopThread() first, so the thread only ever calls into a fully built subclass.
//
// Thread safety: Reserve and Submit from any thread; everything else runs on the internal thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "scheduler/kvstore/communicator.h"

namespace mxlite::kvstore_internal {

class PolledCommunicator : public Communicator {
 public:
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string description() const override { return description_; }
  uint64_t Reserve() override;
  void Submit(uint64_t ticket, Collective collective) override;

  // A started collective. Done() is polled on the thread; it throws on a library error.
  class Operation {
   public:
    virtual ~Operation() = default;
    virtual bool Done() = 0;
  };

 protected:
  struct Identity {
    int rank = 0;
    int size = 1;
    std::string description;
  };

  explicit PolledCommunicator(std::string library);
  ~PolledCommunicator() override;

  // Starts the thread, runs Initialise() on it and waits for it; rethrows its error.
  void StartThread();
  // Finishes started collectives, stops the thread and (unless broken) runs Finalize() on it.
  void StopThread();

  virtual Identity Initialise() = 0;
  // Called only after Initialise(), so rank() and size() are known.
  virtual std::unique_ptr<Operation> Start(const Collective& collective) = 0;
  virtual void Finalize() = 0;
  [[noreturn]] virtual void AbortJob() = 0;

  std::chrono::seconds timeout() const { return timeout_; }

 private:
  struct InFlight {
    Collective collective;
    std::unique_ptr<Operation> operation;
    std::chrono::steady_clock::time_point deadline;
  };

  void ThreadMain();
  void RunLoop();
  void StartCollective(Collective collective);
  void Poll();
  std::exception_ptr TimeoutError(const Collective& collective) const;
  void Break(std::exception_ptr error);

  const std::string library_;  // "MPI", "NCCL": for messages
  const std::chrono::seconds timeout_;
  std::thread thread_;

  // mutex_ guards what Reserve/Submit share with the thread; wake_ signals both ways
  // (initialised, new submissions, stop).
  std::mutex mutex_;
  std::condition_variable wake_;
  bool initialised_ = false;                  // GUARDED_BY(mutex_)
  std::exception_ptr init_error_;             // GUARDED_BY(mutex_)
  bool stop_ = false;                         // GUARDED_BY(mutex_)
  uint64_t next_ticket_ = 0;                  // GUARDED_BY(mutex_)
  uint64_t next_start_ = 0;                   // GUARDED_BY(mutex_)
  std::map<uint64_t, Collective> submitted_;  // GUARDED_BY(mutex_)

  // Written by Initialise() before StartThread() returns; read-only after.
  int rank_ = 0;
  int size_ = 1;
  std::string description_;

  // The thread's own state.
  std::list<InFlight> in_flight_;
  std::exception_ptr broken_;
  std::chrono::steady_clock::time_point abort_at_;
};

// An allreduce or broadcast piece count as the int the libraries take; throws when too large.
int PieceCount(int64_t count, const std::string& description);

}  // namespace mxlite::kvstore_internal
