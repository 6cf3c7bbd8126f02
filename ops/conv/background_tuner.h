// The background tuner (docs/design.md, Convolution tuning; docs/tuning.md, "Background tuning"):
// one process-wide thread that tunes the convolution problems a bind met in background mode
// (MXNET_TUNING_DB_MODE=background) while the bind went on with the heuristic's picks, and stores
// each result in the tuning DB, where the next bind finds it.
//
//   BackgroundTuner::Global().Enqueue({label, problem, environment, policy, detached, db});
//   ...the bind returns at once; later...
//   BackgroundTuner::Global().WaitUntilIdle();   // tests: every queued job has ended
//
// ConvTuner::Tune queues the jobs (ops/conv/tuner.h); nothing else needs to.
//
// Jobs. A job is one problem (a layer's direction in one layout), its environment and policy,
// a detached candidate builder (ConvTuner::Request::detached_candidates: candidates that own
// everything they use) and the TuningDb the bind used, held by a shared_ptr. Jobs run one at a
// time, in the order queued; a job for a problem, environment and DB files that is already queued
// or running is not queued again. A job whose problem the DB answers by the time it starts (another
// process, or an earlier job, stored it) ends without timing. Otherwise its candidates are built
// and picked by SelectCandidate with the job's policy and the clock (the rules of a foreground
// tune: interleaved rounds, the median, the cap per candidate), holding TimingLock() while they
// are timed, so a job never times while a bind does; the record is stored in the DB (cache and
// user DB, one transaction). A job that fails is logged (a warning) and not queued again in this
// process.
//
// The thread. Started at the first Enqueue and never ended before the process exits; it runs at
// the lowest priority (nice 19 on Linux), but the intra-op pool threads that run its candidates'
// parallel work are the process's own and keep theirs, and the candidates' tensors come from the
// process's storage pool. Its timings share the cores with the process's passes, so they are
// noisier than a bind's.
//
// Process exit. At the first Enqueue an atexit handler is registered (it runs before the
// destructors of the statics made earlier, the storage pool's included): it stops the thread at a
// safe point. Every candidate run checks the stop flag first, so a job that is timing gives up at
// its next run and stores nothing; a Store already under way completes (one SQLite transaction),
// so the DB is never left half written. Queued jobs are dropped; the next run finds their
// problems missing and queues them again. The tuner is never destroyed.
//
// fork(): a child process starts with no thread and an empty queue (what the parent had queued is
// the parent's), and its first Enqueue starts its own thread.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ops/conv/tuner.h"
#include "ops/conv/tuning_db.h"

namespace mxlite::conv {

class BackgroundTuner {
 public:
  struct Job {
    std::string label;    // "conv3 forward", for the log
    ConvProblem problem;  // its policy key set, as stored
    TuningEnvironment environment;
    TuningPolicy policy;
    std::function<std::vector<Candidate>()> candidates;  // detached
    std::shared_ptr<TuningDb> db;
  };

  // What the tuner has done in this process, for tests and reports.
  struct Counts {
    int64_t queued = 0;     // jobs accepted by Enqueue
    int64_t stored = 0;     // tuned and stored
    int64_t answered = 0;   // found in the DB when they started: nothing timed
    int64_t failed = 0;     // threw (logged)
    int64_t abandoned = 0;  // stopped by the process's exit
  };

  static BackgroundTuner& Global();

  enum class Enqueued {
    kQueued,         // a new job
    kAlreadyQueued,  // the same problem is queued or running: nothing added
    kRefused,        // it failed before in this process, or the process is exiting, or the
                     // thread cannot start: nobody will tune it
  };
  // Queues `job` (see the header comment).
  Enqueued Enqueue(Job job);

  // Blocks until no job is queued or running. Not while paused with jobs queued.
  void WaitUntilIdle();

  // Tests: while paused the thread starts no new job (a running one completes), so what a bind
  // queued can be seen before it is tuned.
  void Pause();
  void Resume();

  Counts counts() const;
  // Jobs queued or running now.
  int pending() const;

  BackgroundTuner(const BackgroundTuner&) = delete;
  BackgroundTuner& operator=(const BackgroundTuner&) = delete;

 private:
  struct State;
  BackgroundTuner();
  ~BackgroundTuner() = default;  // never called: the tuner is leaked (see "Process exit")

  // Called with the state's lock held: the thread, and once per process the exit and fork hooks.
  void Start(State& state);
  void Work(State& state);
  static void StopAtExit();
  static void BeforeFork();
  static void AfterForkInParent();
  static void AfterForkInChild();

  State* state_;  // replaced in a forked child (its lock may have been held in the parent)
};

}  // namespace mxlite::conv
