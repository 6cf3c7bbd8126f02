// The dist_sync KVStore under mpirun (registered with CTest in tests/scheduler/CMakeLists.txt):
//
//   mpirun -np 2 kvstore_dist_check train <folder> [bound]  # exit 0: weights bit-identical on
//   every
//                                                           # rank, equal to one process on the
//                                                           # combined batch; rank-0 checkpoint
//   mpirun -np 2 kvstore_dist_check train_device <folder>  # the same with dist_sync_device: NCCL
//                                                           # between the ranks' GPUs, each rank's
//                                                           # executor on its GPU (run by
//                                                           # bench/gpu_check.sh nccl)
//   mpirun -np 2 kvstore_dist_check mismatch   # exit 0: every rank got the init mismatch error
//   mpirun -np 2 kvstore_dist_check hang       # the last rank hangs; the others report the
//                                              # timeout (checked by run_mpi_failure.sh)
//   mpirun -np 2 kvstore_dist_check die        # the last rank exits mid-training; the job ends
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "core/error.h"
#include "core/settings.h"
#include "tests/scheduler/kvstore_training.h"

using namespace mxlite;
using namespace mxlite::kvstore_testing;

namespace {

constexpr int kRowsPerRank = 8;
constexpr int kSteps = 5;

std::string Serialise(const std::map<std::string, std::vector<float>>& weights) {
  std::string bytes;
  for (const auto& [name, values] : weights) {
    bytes += name;
    bytes.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  }
  return bytes;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  MX_CHECK(in) << "cannot read " << path;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// `store` is dist_sync (CPU executors, MPI) or dist_sync_device (GPU executors, NCCL). The
// reference trains on the CPU; cuBLAS and the CPU GEMM round differently, hence the looser bound
// on the GPU. The ranks must still agree bit for bit.
int CheckTraining(const std::string& folder, const std::string& store) {
  auto kv = KVStore::Create(store);
  const int rank = kv->rank(), size = kv->num_workers();
  const auto parallel = TrainDataParallel(*kv, kRowsPerRank, /*workers=*/1, /*first_worker=*/rank,
                                          /*total_workers=*/size, kSteps);
  const auto single = TrainSingle(kRowsPerRank * size, kSteps);
  const double difference = MaxRelativeDifference(parallel, single);
  std::printf(
      "rank %d of %d (%s on %s): max relative difference to one process on the combined "
      "batch %.3g\n",
      rank, size, store.c_str(), kv->context().ToString().c_str(), difference);
  const double bound = kv->context().is_gpu() ? 1e-4 : 1e-5;
  int failures = difference < bound ? 0 : 1;

  // Bit-identical replicas: every rank writes its weights, rank 0 compares them all.
  std::filesystem::create_directories(folder);
  const std::string mine = Serialise(parallel);
  std::ofstream(folder + "/rank" + std::to_string(rank) + ".bin", std::ios::binary) << mine;
  Checkpoint checkpoint;
  for (const std::string& key : kv->keys()) {
    checkpoint.arrays[key] = NDArray::FromVector(
        parallel.at(key), Shape{int64_t(parallel.at(key).size())}, Context::CPU());
  }
  kv->SaveCheckpoint(folder + "/model.mxckpt", checkpoint);  // rank 0 writes; then a barrier
  kv->Barrier();
  if (rank == 0) {
    for (int other = 1; other < size; ++other) {
      if (ReadFile(folder + "/rank" + std::to_string(other) + ".bin") != mine) {
        std::printf("rank %d's weights differ from rank 0's\n", other);
        ++failures;
      }
    }
    if (failures == 0) std::printf("all %d ranks hold bit-identical weights\n", size);
  }
  if (LoadCheckpoint(folder + "/model.mxckpt").arrays.size() != kv->keys().size()) ++failures;
  return failures == 0 ? 0 : 1;
}

int CheckMismatch() {
  auto kv = KVStore::Create("dist_sync");
  const bool last = kv->rank() == kv->num_workers() - 1;
  std::vector<NDArray> values = {NDArray::Zeros({16, 20}, Context::CPU()),
                                 NDArray::Zeros({16, last ? 21 : 20}, Context::CPU())};
  try {
    kv->Init({"fc1_weight", "fc2_weight"}, values);
  } catch (const Error& error) {
    const std::string text = error.what();
    std::printf("rank %d: %s\n", kv->rank(), text.c_str());
    return text.find("first difference at key #1: rank 0 has 'fc2_weight' (16,20) float32") !=
                   std::string::npos
               ? 0
               : 1;
  }
  std::printf("rank %d: no error for mismatched parameter sets\n", kv->rank());
  return 1;
}

// The last rank hangs (`die`: exits) after init; the others push and must not hang.
int CheckFailedRank(bool die) {
  settings().Set("MXNET_KVSTORE_TIMEOUT", "3");
  auto kv = KVStore::Create("dist_sync");
  kv->Init("w", NDArray::Zeros({1000}, Context::CPU()));
  if (kv->rank() == kv->num_workers() - 1) {
    std::printf("rank %d: %s\n", kv->rank(), die ? "exiting" : "hanging");
    std::fflush(stdout);
    if (die) std::_Exit(3);
    std::this_thread::sleep_for(std::chrono::seconds(120));
    return 1;
  }
  NDArray gradient = NDArray::Zeros({1000}, Context::CPU());
  try {
    kv->PushPull({"w"}, {gradient}, {gradient});
    gradient.WaitToRead();
  } catch (const Error& error) {
    std::printf("rank %d caught: %s\n", kv->rank(), error.what());
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::seconds(120));  // the communicator aborts the job
  }
  return 1;
}

}  // namespace

int main(int argc, char** argv) try {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "train" && argc > 2) {
    if (argc > 3) settings().Set("MXNET_KVSTORE_BIGARRAY_BOUND", argv[3]);
    return CheckTraining(argv[2], "dist_sync");
  }
  if (mode == "train_device" && argc > 2) return CheckTraining(argv[2], "dist_sync_device");
  if (mode == "mismatch") return CheckMismatch();
  if (mode == "hang" || mode == "die") return CheckFailedRank(mode == "die");
  std::fprintf(
      stderr,
      "usage: kvstore_dist_check train <folder> [bound] | train_device <folder> | mismatch | "
      "hang | die\n");
  return 2;
} catch (const std::exception& error) {
  std::fprintf(stderr, "kvstore_dist_check: %s\n", error.what());
  return 1;
}
