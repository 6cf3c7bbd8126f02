// The process-wide Storage facade on the real CPU, and the CUDA backend when a GPU is present.
#include "memory/storage.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "core/build_info.h"
#include "core/error.h"
#include "memory/simulated_device.h"

#if MXLITE_USE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace mxlite {
namespace {

TEST(StorageTest, CpuAllocationsAreAlignedWritableAndPooled) {
  Storage& storage = Storage::Global();
  StorageStats before = storage.Stats(Context::CPU());
  StorageHandle small = storage.Alloc(100, Context::CPU());
  StorageHandle large = storage.Alloc(5 << 20, Context::CPU());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small.ptr) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large.ptr) % (2 << 20), 0u);  // huge-page aligned
  std::memset(small.ptr, 1, small.size);
  std::memset(large.ptr, 2, large.size);
  void* large_ptr = large.ptr;
  storage.Free(small);
  storage.Free(large);
  StorageHandle again = storage.Alloc(5 << 20, Context::CPU());
  EXPECT_EQ(again.ptr, large_ptr);  // served from the pool
  storage.Free(again);
  StorageStats after = storage.Stats(Context::CPU());
  EXPECT_EQ(after.hits - before.hits, 1);
  EXPECT_EQ(after.bytes_in_use, before.bytes_in_use);
  storage.ReleaseAll(Context::CPU());
  EXPECT_EQ(storage.Stats(Context::CPU()).bytes_cached, 0u);
}

TEST(StorageTest, PinnedHostMemoryIsHostAccessible) {
  StorageHandle handle = Storage::Global().Alloc(4096, Context::CPUPinned());
  std::memset(handle.ptr, 7, handle.size);
  EXPECT_EQ(handle.ctx, Context::CPUPinned());
  Storage::Global().Free(handle);
}

TEST(StorageTest, InstalledManagerServesItsContext) {
  Storage& storage = Storage::Global();
  PoolConfig config;
  storage.InstallManager(std::make_unique<PooledStorageManager>(
      std::make_unique<SimulatedDevice>(8 << 20, Context::GPU(7)), config));
  StorageHandle handle = storage.Alloc(1 << 20, Context::GPU(7));
  EXPECT_EQ(handle.ctx, Context::GPU(7));
  EXPECT_EQ(storage.Stats(Context::GPU(7)).bytes_in_use, size_t{1} << 20);
  storage.Free(handle);
  EXPECT_THROW(storage.Alloc(16 << 20, Context::GPU(7)), OutOfMemoryError);
  EXPECT_THROW(storage.InstallManager(std::make_unique<PooledStorageManager>(
                   std::make_unique<SimulatedDevice>(1 << 20, Context::GPU(7)), config)),
               Error);
}

TEST(StorageTest, MissingGpuIsAClearError) {
  if (VisibleGpuCount() > 0) GTEST_SKIP() << "a GPU is visible; the no-GPU error cannot occur";
  try {
    Storage::Global().Alloc(1024, Context::GPU(0));
    FAIL() << "allocating on a missing GPU succeeded";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("gpu(0)"), std::string::npos) << error.what();
  }
  // The failure left no half-made manager behind: asking again gives the same error.
  EXPECT_THROW(Storage::Global().Alloc(1024, Context::GPU(0)), Error);
}

#if MXLITE_USE_CUDA
TEST(StorageCudaTest, AllocatesPoolsAndRecoversFromOutOfMemory) {
  if (VisibleGpuCount() == 0) GTEST_SKIP() << "no GPU visible: CUDA storage tests skipped";
  Storage& storage = Storage::Global();
  StorageHandle handle = storage.Alloc(3 << 20, Context::GPU(0));
  ASSERT_TRUE(handle);
  ASSERT_EQ(cudaMemset(handle.ptr, 0, handle.size), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  void* ptr = handle.ptr;
  storage.Free(handle);
  StorageHandle again = storage.Alloc(3 << 20, Context::GPU(0));
  EXPECT_EQ(again.ptr, ptr);
  storage.Free(again);
  EXPECT_THROW(storage.Alloc(size_t{1} << 50, Context::GPU(0)), OutOfMemoryError);
  StorageHandle after = storage.Alloc(1 << 20, Context::GPU(0));
  EXPECT_TRUE(after);
  storage.Free(after);
  storage.ReleaseAll(Context::GPU(0));
  EXPECT_EQ(storage.Stats(Context::GPU(0)).bytes_cached, 0u);
}
#endif

}  // namespace
}  // namespace mxlite
