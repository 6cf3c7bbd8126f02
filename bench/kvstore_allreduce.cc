// Allreduce bandwidth of the dist_sync KVStore, run under mpirun (not a Google Benchmark binary:
// every rank must run the same number of collectives, so the repetition counts are fixed).
//
//   mpirun -np 2 build/bin/kvstore_allreduce [max_elements]
//
// For each size, the median over the repetitions of (a) one communicator allreduce of a float32
// buffer (MPI underneath) and (b) a KVStore PushPull of one key without an optimiser (local sum,
// allreduce, store, pull copies), timed from the push to the pulled array being readable. Rank 0
// prints a table with the algorithm bandwidth (bytes / time) and the bus bandwidth
// (algorithm bandwidth * 2 (n-1) / n, what each link carries in a ring allreduce, as nccl-tests
// reports it).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "core/error.h"
#include "scheduler/kvstore/communicator.h"
#include "scheduler/kvstore/kvstore.h"

using namespace mxlite;

namespace {

using Clock = std::chrono::steady_clock;

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Repetitions for a size: about 256 MiB moved in all, between 5 and 200.
int Repetitions(int64_t elements) {
  const int64_t reps = (int64_t{256} << 20) / (elements * 4);
  return static_cast<int>(std::clamp<int64_t>(reps, 5, 200));
}

double TimeCommunicator(Communicator& world, std::vector<float>& buffer, int reps) {
  std::vector<double> seconds;
  for (int r = -2; r < reps; ++r) {  // two warm-up rounds
    world.Run({.kind = CollectiveKind::kBarrier, .description = "bench barrier"});
    const auto start = Clock::now();
    world.Run({.kind = CollectiveKind::kAllreduceSum,
               .description = "bench buffer",
               .pieces = {{buffer.data(), static_cast<int64_t>(buffer.size())}}});
    if (r >= 0) seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  return Median(seconds);
}

double TimeKVStore(KVStore& kv, Communicator& world, const std::string& key, int64_t elements,
                   int reps) {
  NDArray gradient = NDArray::Zeros({elements}, Context::CPU());
  NDArray weight = NDArray::Zeros({elements}, Context::CPU());
  kv.Init(key, weight);
  std::vector<double> seconds;
  for (int r = -2; r < reps; ++r) {
    world.Run({.kind = CollectiveKind::kBarrier, .description = "bench barrier"});
    const auto start = Clock::now();
    kv.PushPull({key}, {gradient}, {weight});
    weight.WaitToRead();
    if (r >= 0) seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  return Median(seconds);
}

}  // namespace

int main(int argc, char** argv) try {
  const int64_t max_elements = argc > 1 ? std::stoll(argv[1]) : (int64_t{16} << 20);
  auto kv = KVStore::Create("dist_sync");
  std::shared_ptr<Communicator> world = JobCommunicator();
  const int ranks = kv->num_workers();
  const double bus_factor = 2.0 * (ranks - 1) / ranks;
  if (kv->rank() == 0) {
    std::printf("%s, %d ranks; MXNET_KVSTORE_BIGARRAY_BOUND splits large keys\n\n",
                world->description().c_str(), ranks);
    std::printf(
        "| Elements (float32) | Bytes | Reps | MPI allreduce | algbw | busbw | "
        "KVStore PushPull | algbw | busbw |\n");
    std::printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
  }
  for (int64_t elements = 1024; elements <= max_elements; elements *= 4) {
    const int reps = Repetitions(elements);
    std::vector<float> buffer(elements, 1.0f);
    const double mpi = TimeCommunicator(*world, buffer, reps);
    const double store = TimeKVStore(*kv, *world, "key" + std::to_string(elements), elements, reps);
    const double bytes = 4.0 * elements;
    if (kv->rank() == 0) {
      std::printf(
          "| %lld | %.1f MiB | %d | %.1f µs | %.2f GB/s | %.2f GB/s | %.1f µs | "
          "%.2f GB/s | %.2f GB/s |\n",
          static_cast<long long>(elements), bytes / (1 << 20), reps, mpi * 1e6, bytes / mpi / 1e9,
          bus_factor * bytes / mpi / 1e9, store * 1e6, bytes / store / 1e9,
          bus_factor * bytes / store / 1e9);
      std::fflush(stdout);
    }
  }
  return 0;
} catch (const std::exception& error) {
  std::fprintf(stderr, "kvstore_allreduce: %s\n", error.what());
  return 1;
}
