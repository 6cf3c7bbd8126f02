// Intra-op parallelism for CPU kernels (GEMM, convolution): a small persistent thread pool and
// ParallelFor. No OpenMP.
//
//   ParallelFor(num_blocks, [&](int64_t block) { ... });
//
// ParallelFor(n, fn) runs fn(i) once for every i in [0, n) on up to IntraOpThreads() threads, the
// calling thread included, and returns when every call has finished. fn must be safe to call
// concurrently for different i. Each thread is dealt a contiguous share of the i, in order (the
// caller the first share, pool worker k the share k + 1), and runs it front to back; a thread
// done with its share takes i from the back of the others' shares. So when consecutive ops split
// their output the same way (a convolution's rows, then the next one's), each thread mostly reads
// what it wrote itself, from its own core's caches: dealt one by one to whichever thread asked
// first, MobileNet-V2 at batch 1 on 2 threads ran 1-4% slower. Taking from the back keeps the
// threads busy when one of them was held up (a late wake-up, a preempted core).
//
// Thread count: MXNET_OMP_MAX_THREADS (0 = std::thread::hardware_concurrency()), read once on first
// use. SetIntraOpThreads() overrides it for the whole process; a ScopedIntraOpThreads overrides it
// for the calling thread while it lives (benchmarks compare 1 and 2 threads this way).
//
// Thread safety: every function may be called from any thread. The pool runs one ParallelFor at a
// time. A call made while the pool is busy (an op on another engine worker) or from inside fn (a
// nested call) runs all its work inline on the calling thread: concurrent ops never oversubscribe
// the cores and nested calls cannot deadlock.
//
// Errors: if fn throws, the remaining indices are skipped, every running call finishes, and the
// first exception is rethrown to the caller of ParallelFor. The pool stays usable.
//
// Worker threads are created on first need, never exit, and are shared by all callers.
#pragma once

#include <cstdint>
#include <functional>

namespace mxlite::cpu {

// Threads a ParallelFor issued by the calling thread may use (>= 1).
int IntraOpThreads();

// Process-wide override of MXNET_OMP_MAX_THREADS; 0 removes it. Throws mxlite::Error if negative.
void SetIntraOpThreads(int threads);

// Overrides the thread count for the calling thread while the object lives; nests.
class ScopedIntraOpThreads {
 public:
  explicit ScopedIntraOpThreads(int threads);
  ~ScopedIntraOpThreads();
  ScopedIntraOpThreads(const ScopedIntraOpThreads&) = delete;
  ScopedIntraOpThreads& operator=(const ScopedIntraOpThreads&) = delete;

 private:
  int previous_;
};

// Runs fn(i) for i in [0, num_tasks) on min(num_tasks, IntraOpThreads()) threads.
void ParallelFor(int64_t num_tasks, const std::function<void(int64_t)>& fn);

}  // namespace mxlite::cpu
