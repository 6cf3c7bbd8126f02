#include "ops/conv/background_tuner.h"

#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "core/logging.h"

namespace mxlite::conv {
namespace {

// The process's timing lock, replaced in a forked child when the background thread held it at
// the fork (the child has no such thread to release it).
std::atomic<std::recursive_mutex*>& TimingLockSlot() {
  static std::atomic<std::recursive_mutex*> slot{new std::recursive_mutex()};  // never destroyed
  return slot;
}

// How long the thread waits before it asks again for the timing lock a bind holds.
constexpr auto kTimingLockPoll = std::chrono::milliseconds(20);

// What a candidate run throws once the process is exiting: its job gives up.
struct Abandoned : std::exception {
  const char* what() const noexcept override { return "the process is exiting"; }
};

// The problem in its environment, stored where: two DBs over the same files are one destination
// (a pointer would not do: a DB freed and another made at its address would share its key).
std::string JobKey(const BackgroundTuner::Job& job) {
  std::ostringstream key;
  key << job.problem.ToString() << '\n'
      << job.environment.device << '\n'
      << job.environment.versions << '\n'
      << job.db->options().user_path << '\n'
      << job.db->options().system_path;
  return key.str();
}

void LowerThisThreadsPriority() {
#ifdef __linux__
  // A Linux thread has a nice value of its own: PRIO_PROCESS with its thread id sets it alone.
  setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19);
#endif
}

enum class Outcome { kStored, kAnswered, kFailed, kAbandoned };

}  // namespace

std::recursive_mutex& TimingLock() { return *TimingLockSlot().load(); }

struct BackgroundTuner::State {
  mutable std::mutex mutex;
  std::condition_variable wake;  // the thread: a job was queued, a resume, the stop
  std::condition_variable idle;  // a job ended
  std::deque<Job> queue;
  std::set<std::string> pending;  // the keys of the queued jobs and of the running one
  std::set<std::string> failed;
  bool started = false;
  bool running = false;            // a job is being run (outside the lock)
  bool holds_timing_lock = false;  // the thread holds TimingLock() (set and cleared under mutex)
  bool paused = false;
  std::atomic<bool> stopping{false};  // read by the candidate runs without the lock
  Counts counts;

  // Takes TimingLock() for the thread without ever blocking on it, so that a process exiting with
  // the lock held (by the exiting thread) cannot wait for this thread forever. False: stopping.
  bool AcquireTimingLock() {
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (stopping) return false;
        if (TimingLock().try_lock()) {
          holds_timing_lock = true;
          return true;
        }
      }
      std::this_thread::sleep_for(kTimingLockPoll);
    }
  }
  void ReleaseTimingLock() {
    std::lock_guard<std::mutex> lock(mutex);
    TimingLock().unlock();
    holds_timing_lock = false;
  }

  // Tunes `job` and stores the pick (see the header); never throws.
  Outcome Run(const Job& job) {
    if (stopping) return Outcome::kAbandoned;
    try {
      if (job.db->Lookup(job.problem, job.environment)) return Outcome::kAnswered;
      std::vector<Candidate> candidates = job.candidates();
      for (Candidate& candidate : candidates) {
        for (std::function<void()>* step : {&candidate.run, &candidate.before_run}) {
          if (!*step) continue;
          *step = [this, original = std::move(*step)] {
            if (stopping) throw Abandoned();
            original();
          };
        }
      }
      if (!AcquireTimingLock()) return Outcome::kAbandoned;
      std::optional<Selection> selection;
      try {
        selection = SelectCandidate(job.label, candidates, job.policy, {}, {});
      } catch (...) {
        ReleaseTimingLock();
        throw;
      }
      ReleaseTimingLock();
      if (stopping) return Outcome::kAbandoned;  // some runs gave up: nothing to store
      job.db->Store(job.problem, job.environment, selection->record);
      char seconds[32];
      std::snprintf(seconds, sizeof(seconds), "%.1f s", selection->seconds);
      MX_LOG(INFO) << "tuned " << job.label << " in the background: " << selection->record.algorithm
                   << " " << selection->record.layout << " (" << selection->candidates_timed
                   << (selection->candidates_timed == 1 ? " candidate" : " candidates")
                   << " timed in " << seconds << "); the next bind runs it";
      return Outcome::kStored;
    } catch (const std::exception& error) {
      if (stopping) return Outcome::kAbandoned;
      MX_LOG(WARNING) << "tuning " << job.label << " in the background failed (" << error.what()
                      << "); it keeps the heuristic's pick";
    } catch (...) {
      if (stopping) return Outcome::kAbandoned;
      MX_LOG(WARNING) << "tuning " << job.label
                      << " in the background failed; it keeps the heuristic's pick";
    }
    return Outcome::kFailed;
  }
};

BackgroundTuner& BackgroundTuner::Global() {
  static BackgroundTuner* tuner = new BackgroundTuner();  // never destroyed
  return *tuner;
}

BackgroundTuner::BackgroundTuner() : state_(new State()) {}

BackgroundTuner::Enqueued BackgroundTuner::Enqueue(Job job) {
  const std::string key = JobKey(job);
  State& state = *state_;
  std::lock_guard<std::mutex> lock(state.mutex);
  if (state.pending.count(key) > 0) return Enqueued::kAlreadyQueued;
  if (state.stopping || state.failed.count(key) > 0) return Enqueued::kRefused;
  if (!state.started) {
    try {
      Start(state);
    } catch (const std::exception& error) {
      MX_LOG(WARNING) << "the background tuner cannot start (" << error.what() << "); " << job.label
                      << " keeps the heuristic's pick";
      return Enqueued::kRefused;
    }
  }
  state.pending.insert(key);
  state.queue.push_back(std::move(job));
  ++state.counts.queued;
  state.wake.notify_one();
  return Enqueued::kQueued;
}

void BackgroundTuner::Start(State& state) {
  static bool hooked = false;  // once per process: a forked child inherits the hooks
  if (!hooked) {
    // Registered before the thread exists, and after every static this thread may use was made
    // (the storage pool, the tuning DB's): it runs before their destructors.
    std::atexit(StopAtExit);
    pthread_atfork(BeforeFork, AfterForkInParent, AfterForkInChild);
    hooked = true;
  }
  std::thread([this, &state] { Work(state); }).detach();
  state.started = true;
}

void BackgroundTuner::Work(State& state) {
  LowerThisThreadsPriority();
  for (;;) {
    std::optional<Job> job;
    {
      std::unique_lock<std::mutex> lock(state.mutex);
      state.wake.wait(lock,
                      [&] { return state.stopping || (!state.paused && !state.queue.empty()); });
      // The process is exiting: park here rather than end the thread while the exit runs the
      // destructors of statics (nothing of the thread's own is torn down then).
      if (state.stopping) state.wake.wait(lock, [] { return false; });
      job = std::move(state.queue.front());
      state.queue.pop_front();
      state.running = true;
    }
    const std::string key = JobKey(*job);
    const Outcome outcome = state.Run(*job);
    job.reset();  // its tensors and its DB reference go before the exit handler may go on
    std::lock_guard<std::mutex> lock(state.mutex);
    state.running = false;
    state.pending.erase(key);
    switch (outcome) {
      case Outcome::kStored:
        ++state.counts.stored;
        break;
      case Outcome::kAnswered:
        ++state.counts.answered;
        break;
      case Outcome::kFailed:
        ++state.counts.failed;
        state.failed.insert(key);
        break;
      case Outcome::kAbandoned:
        ++state.counts.abandoned;
        break;
    }
    state.idle.notify_all();
  }
}

void BackgroundTuner::StopAtExit() {
  State& state = *Global().state_;
  std::unique_lock<std::mutex> lock(state.mutex);
  if (!state.started) return;  // no thread here (or a forked child that started none)
  const size_t left = state.queue.size() + (state.running ? 1 : 0);
  if (left > 0) {
    MX_LOG(INFO) << "exiting before " << left << " convolution "
                 << (left == 1 ? "problem was" : "problems were")
                 << " tuned in the background; a later run tunes them";
  }
  state.stopping = true;
  state.wake.notify_all();
  // The running job gives up at its next candidate run, or ends its Store; then nothing of this
  // thread touches the process's state again.
  state.idle.wait(lock, [&] { return !state.running; });
}

void BackgroundTuner::BeforeFork() { Global().state_->mutex.lock(); }

void BackgroundTuner::AfterForkInParent() { Global().state_->mutex.unlock(); }

void BackgroundTuner::AfterForkInChild() {
  BackgroundTuner& tuner = Global();
  // The child has no background thread: a fresh state (the parent's, locked, and its jobs, which
  // hold the parent's DB connections, are left behind), and a fresh timing lock if that thread
  // held it. While it did, no other thread (the forking one included) could hold it.
  if (tuner.state_->holds_timing_lock) TimingLockSlot().store(new std::recursive_mutex());
  tuner.state_ = new State();
}

void BackgroundTuner::WaitUntilIdle() {
  State& state = *state_;
  std::unique_lock<std::mutex> lock(state.mutex);
  state.idle.wait(lock, [&] { return state.queue.empty() && !state.running; });
}

void BackgroundTuner::Pause() {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->paused = true;
}

void BackgroundTuner::Resume() {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->paused = false;
  state_->wake.notify_all();
}

BackgroundTuner::Counts BackgroundTuner::counts() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->counts;
}

int BackgroundTuner::pending() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return static_cast<int>(state_->queue.size()) + (state_->running ? 1 : 0);
}

}  // namespace mxlite::conv
