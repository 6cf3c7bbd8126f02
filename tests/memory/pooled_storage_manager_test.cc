// The pool on a simulated device of fixed capacity: reuse, the reserve rule, release-and-retry,
// out-of-memory and recovery, stats, misuse, and concurrent use.
#include "memory/pooled_storage_manager.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <thread>

#include "core/error.h"
#include "memory/simulated_device.h"

namespace mxlite {
namespace {

constexpr size_t kMiB = 1024 * 1024;

struct Pool {
  SimulatedDevice* device;  // owned by manager
  std::unique_ptr<PooledStorageManager> manager;
};

Pool MakePool(size_t capacity, PoolType type = PoolType::kNaive, int reserve_percent = 0) {
  auto device = std::make_unique<SimulatedDevice>(capacity);
  SimulatedDevice* raw = device.get();
  PoolConfig config;
  config.type = type;
  config.reserve_percent = reserve_percent;
  return {raw, std::make_unique<PooledStorageManager>(std::move(device), config)};
}

TEST(PooledStorageManagerTest, ZeroBytesIsANullHandle) {
  Pool pool = MakePool(16 * kMiB);
  StorageHandle handle = pool.manager->Alloc(0);
  EXPECT_FALSE(handle);
  EXPECT_EQ(handle.ctx, Context::GPU(0));
  pool.manager->Free(handle);
  pool.manager->DirectFree(handle);
  EXPECT_EQ(pool.device->allocation_count(), 0);
}

TEST(PooledStorageManagerTest, SameBlockSizeIsReused) {
  Pool pool = MakePool(16 * kMiB);
  StorageHandle first = pool.manager->Alloc(1000);
  EXPECT_EQ(first.size, 1000u);
  void* ptr = first.ptr;
  pool.manager->Free(first);
  StorageHandle second = pool.manager->Alloc(4000);  // same 4 KiB block
  EXPECT_EQ(second.ptr, ptr);
  StorageHandle third = pool.manager->Alloc(5000);  // 8 KiB: a new block
  EXPECT_NE(third.ptr, ptr);
  StorageStats stats = pool.manager->stats();
  EXPECT_EQ(stats.hits, 1);
  EXPECT_EQ(stats.misses, 2);
  EXPECT_EQ(stats.device_allocations, 2);
  EXPECT_EQ(stats.bytes_in_use, 4096u + 8192u);
  EXPECT_EQ(stats.bytes_requested, 4000u + 5000u);
  EXPECT_EQ(stats.bytes_cached, 0u);
  pool.manager->Free(second);
  pool.manager->Free(third);
  stats = pool.manager->stats();
  EXPECT_EQ(stats.bytes_in_use, 0u);
  EXPECT_EQ(stats.bytes_cached, 4096u + 8192u);
  EXPECT_EQ(stats.peak_bytes_in_use, 4096u + 8192u);
}

TEST(PooledStorageManagerTest, ReserveReleasesTheCacheBeforeAMiss) {
  // 100 MiB device, 10% reserve. 50 MiB cached leaves 50 MiB free; a new 45 MiB block would
  // leave 5 MiB < 10 MiB, so the cache goes back first.
  Pool pool = MakePool(100 * kMiB, PoolType::kNaive, 10);
  pool.manager->Free(pool.manager->Alloc(50 * kMiB));
  EXPECT_EQ(pool.device->used_bytes(), 50 * kMiB);
  StorageHandle big = pool.manager->Alloc(44 * kMiB + 1);  // rounds to 46 MiB
  EXPECT_EQ(pool.manager->stats().cache_releases, 1);
  EXPECT_EQ(pool.manager->stats().bytes_cached, 0u);
  EXPECT_EQ(pool.device->used_bytes(), 46 * kMiB);
  // With enough headroom the cache stays.
  pool.manager->Free(pool.manager->Alloc(4 * kMiB));
  StorageHandle small = pool.manager->Alloc(8 * kMiB);
  EXPECT_EQ(pool.manager->stats().cache_releases, 1);
  EXPECT_EQ(pool.manager->stats().bytes_cached, 4 * kMiB);
  pool.manager->Free(big);
  pool.manager->Free(small);
}

TEST(PooledStorageManagerTest, ReleasesCacheAndRetriesWhenTheDeviceIsFull) {
  Pool pool = MakePool(64 * kMiB);  // no reserve: only the retry path can free the cache
  pool.manager->Free(pool.manager->Alloc(40 * kMiB));
  StorageHandle handle = pool.manager->Alloc(30 * kMiB);  // 24 MiB free: fails, releases, retries
  ASSERT_TRUE(handle);
  StorageStats stats = pool.manager->stats();
  EXPECT_EQ(stats.cache_releases, 1);
  EXPECT_EQ(stats.bytes_cached, 0u);
  EXPECT_EQ(stats.device_frees, 1);
  pool.manager->Free(handle);
  // A transient failure is also retried once.
  pool.device->FailNextAllocations(1);
  StorageHandle retried = pool.manager->Alloc(1 * kMiB);
  EXPECT_TRUE(retried);
  pool.manager->Free(retried);
}

TEST(PooledStorageManagerTest, OutOfMemorySaysWhatAndStaysUsable) {
  Pool pool = MakePool(64 * kMiB);
  StorageHandle held = pool.manager->Alloc(20 * kMiB);
  pool.manager->Free(pool.manager->Alloc(10 * kMiB));
  try {
    pool.manager->Alloc(50 * kMiB);
    FAIL() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& error) {
    std::string message = error.what();
    EXPECT_NE(message.find("out of memory on gpu(0)"), std::string::npos) << message;
    EXPECT_NE(message.find("asked for 50.00 MiB"), std::string::npos) << message;
    EXPECT_NE(message.find("20.00 MiB in use"), std::string::npos) << message;
    EXPECT_NE(message.find("0 B cached (released 10.00 MiB"), std::string::npos) << message;
    EXPECT_NE(message.find("44.00 MiB free of 64.00 MiB"), std::string::npos) << message;
  }
  // Still usable: smaller requests succeed and the books balance.
  StorageHandle after = pool.manager->Alloc(30 * kMiB);
  EXPECT_TRUE(after);
  pool.manager->Free(after);
  pool.manager->Free(held);
  EXPECT_EQ(pool.manager->stats().bytes_in_use, 0u);
  // Two failures in a row exhaust the single retry.
  pool.device->FailNextAllocations(2);
  EXPECT_THROW(pool.manager->Alloc(1 * kMiB), OutOfMemoryError);
  EXPECT_TRUE(pool.manager->Alloc(1 * kMiB));
}

TEST(PooledStorageManagerTest, ReleaseCachedAndDirectFreeGoToTheDevice) {
  Pool pool = MakePool(64 * kMiB);
  StorageHandle a = pool.manager->Alloc(1 * kMiB);
  StorageHandle b = pool.manager->Alloc(3 * kMiB);
  pool.manager->Free(a);
  pool.manager->DirectFree(b);
  EXPECT_EQ(pool.device->used_bytes(), 1 * kMiB);
  pool.manager->ReleaseCached();
  EXPECT_EQ(pool.device->used_bytes(), 0u);
  StorageStats stats = pool.manager->stats();
  EXPECT_EQ(stats.device_frees, 2);
  EXPECT_EQ(stats.bytes_cached, 0u);
  EXPECT_EQ(stats.cache_releases, 1);
}

TEST(PooledStorageManagerTest, UnpooledNeverCaches) {
  Pool pool = MakePool(64 * kMiB, PoolType::kUnpooled);
  StorageHandle a = pool.manager->Alloc(1000);
  EXPECT_EQ(pool.device->used_bytes(), 1000u);
  pool.manager->Free(a);
  EXPECT_EQ(pool.device->used_bytes(), 0u);
  pool.manager->Free(pool.manager->Alloc(1000));
  EXPECT_EQ(pool.manager->stats().hits, 0);
  EXPECT_EQ(pool.manager->stats().device_allocations, 2);
}

TEST(PooledStorageManagerTest, MisuseIsAClearError) {
  Pool pool = MakePool(16 * kMiB);
  StorageHandle handle = pool.manager->Alloc(100);
  pool.manager->Free(handle);
  try {
    pool.manager->Free(handle);
    FAIL() << "double free accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("already freed"), std::string::npos);
  }
  int local = 0;
  EXPECT_THROW(pool.manager->Free({&local, 4, Context::GPU(0)}), Error);
  StorageHandle other = pool.manager->Alloc(100);
  other.ctx = Context::GPU(1);
  EXPECT_THROW(pool.manager->Free(other), Error);
}

TEST(PooledStorageManagerTest, PoisonedBlocksAreFilledOnAllocAndRelease) {
  Pool pool = MakePool(16 * kMiB, PoolType::kUnpooled);
  pool.device->SetPoisonByte(0xAB);
  StorageHandle handle = pool.manager->Alloc(64);
  EXPECT_EQ(static_cast<unsigned char*>(handle.ptr)[63], 0xAB);
  pool.manager->Free(handle);
}

TEST(PooledStorageManagerTest, ConcurrentAllocAndFreeKeepBlocksDisjoint) {
  for (PoolType type : {PoolType::kNaive, PoolType::kRound, PoolType::kUnpooled}) {
    Pool pool = MakePool(256 * kMiB, type);
    constexpr int kThreads = 4;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        std::mt19937 random(t);
        std::vector<StorageHandle> held;
        for (int i = 0; i < 3000; ++i) {
          if (held.size() < 8 && random() % 3 != 0) {
            StorageHandle handle = pool.manager->Alloc(1 + random() % (256 * 1024));
            std::memset(handle.ptr, t + 1, handle.size);
            held.push_back(handle);
          } else if (!held.empty()) {
            StorageHandle handle = held.back();
            held.pop_back();
            // Every byte still carries this thread's mark: no other thread wrote into the block.
            const auto* bytes = static_cast<const unsigned char*>(handle.ptr);
            ASSERT_EQ(bytes[0], t + 1);
            ASSERT_EQ(bytes[handle.size - 1], t + 1);
            pool.manager->Free(handle);
          }
        }
        for (const StorageHandle& handle : held) pool.manager->Free(handle);
      });
    }
    for (std::thread& thread : threads) thread.join();
    StorageStats stats = pool.manager->stats();
    EXPECT_EQ(stats.bytes_in_use, 0u) << PoolTypeName(type);
    EXPECT_EQ(stats.bytes_requested, 0u) << PoolTypeName(type);
    EXPECT_EQ(stats.hits + stats.misses, stats.device_allocations + stats.hits);
    pool.manager->ReleaseCached();
    EXPECT_EQ(pool.device->used_bytes(), 0u) << PoolTypeName(type);
  }
}

}  // namespace
}  // namespace mxlite
