// PolledCommunicator (contract in polled_communicator.h).
#include "scheduler/kvstore/polled_communicator.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <sstream>

#include "core/error.h"
#include "core/settings.h"

namespace mxlite::kvstore_internal {

namespace {

using Clock = std::chrono::steady_clock;

// Polling interval while collectives are in flight: the libraries make progress only inside their
// calls, but a busy loop would take a core from the computation that communication overlaps.
constexpr auto kPollInterval = std::chrono::microseconds(50);
// After a failure, how long this rank waits before aborting the job so that the other ranks,
// which time out at about the same moment, can report too; capped by the timeout.
constexpr auto kAbortGrace = std::chrono::seconds(2);

void Finish(Collective& collective, std::exception_ptr error) {
  if (collective.done) collective.done(error);
  collective.done = nullptr;
}

}  // namespace

int PieceCount(int64_t count, const std::string& description) {
  MX_CHECK(count >= 0 && count <= INT_MAX)
      << description << ": " << count << " elements in one call (at most " << INT_MAX << ")";
  return static_cast<int>(count);
}

PolledCommunicator::PolledCommunicator(std::string library)
    : library_(std::move(library)),
      timeout_(std::chrono::seconds(settings().GetInt("MXNET_KVSTORE_TIMEOUT"))) {}

PolledCommunicator::~PolledCommunicator() { StopThread(); }

uint64_t PolledCommunicator::Reserve() {
  std::lock_guard lock(mutex_);
  return next_ticket_++;
}

void PolledCommunicator::Submit(uint64_t ticket, Collective collective) {
  {
    std::lock_guard lock(mutex_);
    MX_CHECK(ticket < next_ticket_ && ticket >= next_start_ && !submitted_.count(ticket))
        << library_ << " communicator: ticket " << ticket
        << " was not reserved or is submitted twice";
    submitted_.emplace(ticket, std::move(collective));
  }
  wake_.notify_all();
}

void PolledCommunicator::StartThread() {
  thread_ = std::thread([this] { ThreadMain(); });
  std::unique_lock lock(mutex_);
  wake_.wait(lock, [&] { return initialised_ || init_error_; });
  if (init_error_) {
    lock.unlock();
    thread_.join();
    std::rethrow_exception(init_error_);
  }
}

void PolledCommunicator::StopThread() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void PolledCommunicator::ThreadMain() {
  try {
    Identity identity = Initialise();
    std::lock_guard lock(mutex_);
    rank_ = identity.rank;
    size_ = identity.size;
    description_ = std::move(identity.description);
    initialised_ = true;
  } catch (...) {
    std::lock_guard lock(mutex_);
    init_error_ = std::current_exception();
  }
  wake_.notify_all();
  if (init_error_) return;
  RunLoop();
  if (!broken_) Finalize();
}

void PolledCommunicator::RunLoop() {
  for (;;) {
    std::vector<Collective> to_start;
    {
      std::unique_lock lock(mutex_);
      auto has_work = [&] { return stop_ || submitted_.count(next_start_) > 0; };
      if (in_flight_.empty() && !broken_) {
        wake_.wait(lock, has_work);
      } else {
        wake_.wait_for(lock, kPollInterval, has_work);
      }
      for (auto it = submitted_.find(next_start_); it != submitted_.end();
           it = submitted_.find(next_start_)) {
        to_start.push_back(std::move(it->second));
        submitted_.erase(it);
        ++next_start_;
      }
      if (stop_ && in_flight_.empty() && to_start.empty() && !broken_) return;
    }
    for (Collective& collective : to_start) StartCollective(std::move(collective));
    Poll();
    if (broken_ && Clock::now() >= abort_at_) {
      std::fflush(stderr);
      AbortJob();
    }
  }
}

void PolledCommunicator::StartCollective(Collective collective) {
  if (broken_) {
    Finish(collective, broken_);
    return;
  }
  InFlight flight{.collective = std::move(collective)};
  try {
    flight.operation = Start(flight.collective);
  } catch (...) {
    // A bad argument on this rank only: the other ranks wait for a collective that never comes,
    // so this breaks the communicator as a timeout does.
    Break(std::current_exception());
    Finish(flight.collective, broken_);
    return;
  }
  flight.deadline = Clock::now() + timeout_;
  in_flight_.push_back(std::move(flight));
}

void PolledCommunicator::Poll() {
  const Clock::time_point now = Clock::now();
  for (auto it = in_flight_.begin(); it != in_flight_.end() && !broken_;) {
    bool done = false;
    std::exception_ptr error;
    try {
      done = it->operation->Done();
    } catch (...) {
      error = std::current_exception();
    }
    if (!done && !error && now < it->deadline) {
      ++it;
      continue;
    }
    if (!done && !error) error = TimeoutError(it->collective);
    if (error) {
      Break(error);
      error = broken_;
    }
    Finish(it->collective, error);
    it = in_flight_.erase(it);
  }
  // Once broken, everything still in flight fails with the same error (its operation is left
  // unfinished: the job is being aborted).
  if (broken_) {
    for (InFlight& flight : in_flight_) {
      Finish(flight.collective, broken_);
      (void)flight.operation.release();
    }
    in_flight_.clear();
  }
}

std::exception_ptr PolledCommunicator::TimeoutError(const Collective& c) const {
  std::ostringstream message;
  message << "KVStore: " << library_ << " " << CollectiveKindName(c.kind) << " of " << c.description
          << " on rank " << rank_ << " of " << size_
          << " did not complete within MXNET_KVSTORE_TIMEOUT=" << timeout_.count()
          << " s: another rank failed, hangs, or issued different collectives (a different set "
             "or order of keys); aborting the job";
  return std::make_exception_ptr(Error(message.str()));
}

void PolledCommunicator::Break(std::exception_ptr error) {
  if (broken_) return;
  broken_ = error;
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "[mxlite rank %d] error: %s\n", rank_, e.what());
    std::fflush(stderr);
  }
  abort_at_ = Clock::now() + std::min<Clock::duration>(kAbortGrace, timeout_);
}

}  // namespace mxlite::kvstore_internal
