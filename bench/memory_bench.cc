// Pooled Alloc/Free against the raw allocator on the tensor sizes of a ResNet-50 training step,
// and the memory overhead of the Naive and Round pools on that mix.
//
//   build/bin/memory_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// The step: forward allocates every activation (conv output, BatchNorm output, ReLU output) and a
// transient im2col workspace per convolution; backward walks the layers in reverse, allocating
// each gradient and workspace and freeing activations as they are consumed.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "memory/cpu_allocator.h"
#include "memory/pooled_storage_manager.h"

namespace mxlite {
namespace {

struct ConvLayer {
  int in_channels, out_channels, kernel, stride, in_size;
};

// ResNet-50's convolutions: the stem and the bottleneck blocks of the four stages.
std::vector<ConvLayer> ResNet50Convs() {
  std::vector<ConvLayer> layers = {{3, 64, 7, 2, 224}};
  const int widths[] = {64, 128, 256, 512};
  const int blocks[] = {3, 4, 6, 3};
  int in_channels = 64, size = 56;
  for (int stage = 0; stage < 4; ++stage) {
    const int width = widths[stage];
    for (int block = 0; block < blocks[stage]; ++block) {
      const int stride = (block == 0 && stage > 0) ? 2 : 1;
      layers.push_back({in_channels, width, 1, 1, size});
      layers.push_back({width, width, 3, stride, size});
      const int out_size = size / stride;
      layers.push_back({width, width * 4, 1, 1, out_size});
      if (block == 0) layers.push_back({in_channels, width * 4, 1, stride, size});  // projection
      in_channels = width * 4;
      size = out_size;
    }
  }
  return layers;
}

// One event of the step: allocate `bytes` into slot `slot`, or free that slot.
struct Event {
  bool alloc;
  int slot;
  size_t bytes;
};

std::vector<Event> TrainingStep(int batch) {
  std::vector<Event> events;
  int next_slot = 0;
  std::vector<std::vector<int>> activations;
  for (const ConvLayer& layer : ResNet50Convs()) {
    const size_t out_size = static_cast<size_t>(layer.in_size / layer.stride);
    const size_t output = size_t(batch) * layer.out_channels * out_size * out_size * 4;
    const size_t workspace = size_t(layer.in_channels) * layer.kernel * layer.kernel * out_size *
                             out_size * 4;  // im2col of one image
    const int workspace_slot = next_slot++;
    events.push_back({true, workspace_slot, workspace});
    std::vector<int> kept;
    for (int tensor = 0; tensor < 3; ++tensor) {  // conv, BatchNorm, ReLU outputs
      kept.push_back(next_slot);
      events.push_back({true, next_slot++, output});
    }
    events.push_back({false, workspace_slot, 0});
    activations.push_back(kept);
  }
  const std::vector<ConvLayer> layers = ResNet50Convs();
  for (int i = static_cast<int>(layers.size()) - 1; i >= 0; --i) {
    const ConvLayer& layer = layers[i];
    const size_t out_size = static_cast<size_t>(layer.in_size / layer.stride);
    const size_t grad = size_t(batch) * layer.in_channels * layer.in_size * layer.in_size * 4;
    const size_t workspace = size_t(layer.in_channels) * layer.kernel * layer.kernel * out_size *
                             out_size * 4;
    const int grad_slot = next_slot++, workspace_slot = next_slot++;
    events.push_back({true, grad_slot, grad});
    events.push_back({true, workspace_slot, workspace});
    events.push_back({false, workspace_slot, 0});
    for (int slot : activations[i]) events.push_back({false, slot, 0});
    events.push_back({false, grad_slot, 0});
  }
  return events;
}

// A device that hands out address ranges without memory behind them: for measuring what the
// pools would ask of a device, at any batch size, without touching RAM.
class AddressOnlyDevice : public DeviceAllocator {
 public:
  void* Allocate(size_t bytes) override {
    used_ += bytes;
    peak_ = std::max(peak_, used_);
    next_ += (bytes + 4095) / 4096 * 4096;
    return reinterpret_cast<void*>(next_);
  }
  void Deallocate(void*, size_t bytes) override { used_ -= bytes; }
  DeviceMemoryInfo MemoryInfo() const override { return {size_t{1} << 45, size_t{1} << 45}; }
  Context context() const override { return Context::GPU(0); }
  std::string name() const override { return "address-only device"; }
  size_t peak() const { return peak_; }

 private:
  uintptr_t next_ = 4096;
  size_t used_ = 0, peak_ = 0;
};

void Replay(const std::vector<Event>& events, PooledStorageManager& manager, bool touch) {
  std::vector<StorageHandle> slots(events.size());
  for (const Event& event : events) {
    if (event.alloc) {
      slots[event.slot] = manager.Alloc(event.bytes);
      if (touch) {
        auto* bytes = static_cast<volatile char*>(slots[event.slot].ptr);
        for (size_t offset = 0; offset < event.bytes; offset += 4096) bytes[offset] = 1;
      }
    } else {
      manager.Free(slots[event.slot]);
    }
  }
}

void ReplayRaw(const std::vector<Event>& events, bool touch) {
  CpuAllocator allocator;
  std::vector<std::pair<void*, size_t>> slots(events.size());
  for (const Event& event : events) {
    if (event.alloc) {
      void* ptr = allocator.Allocate(event.bytes);
      if (touch) {
        auto* bytes = static_cast<volatile char*>(ptr);
        for (size_t offset = 0; offset < event.bytes; offset += 4096) bytes[offset] = 1;
      }
      slots[event.slot] = {ptr, event.bytes};
    } else {
      allocator.Deallocate(slots[event.slot].first, slots[event.slot].second);
    }
  }
}

PoolConfig Config(PoolType type) {
  PoolConfig config;
  config.type = type;
  config.reserve_percent = 0;
  return config;
}

// args: pool type (0 Naive, 1 Round, 2 Unpooled = straight to the device), batch, touch pages.
void BM_PooledStep(benchmark::State& state) {
  const auto type = static_cast<PoolType>(state.range(0));
  const std::vector<Event> events = TrainingStep(static_cast<int>(state.range(1)));
  const bool touch = state.range(2) != 0;
  PooledStorageManager manager(std::make_unique<CpuAllocator>(), Config(type));
  Replay(events, manager, touch);  // warm the pool: steady state is what training sees
  for (auto _ : state) Replay(events, manager, touch);
  state.counters["allocs/step"] = static_cast<double>(events.size() / 2);
  state.SetLabel(std::string(PoolTypeName(type)) + (touch ? " +touch" : ""));
}

void BM_RawStep(benchmark::State& state) {
  const std::vector<Event> events = TrainingStep(static_cast<int>(state.range(0)));
  const bool touch = state.range(1) != 0;
  for (auto _ : state) ReplayRaw(events, touch);
  state.SetLabel(touch ? "aligned_alloc +touch" : "aligned_alloc");
}

// Peak device bytes each pool needs for one step, against the peak of the exact requests.
void BM_PoolOverhead(benchmark::State& state) {
  const auto type = static_cast<PoolType>(state.range(0));
  const std::vector<Event> events = TrainingStep(static_cast<int>(state.range(1)));
  size_t device_peak = 0, requested_peak = 0;
  for (auto _ : state) {
    auto device = std::make_unique<AddressOnlyDevice>();
    AddressOnlyDevice* raw = device.get();
    PooledStorageManager manager(std::move(device), Config(type));
    size_t requested = 0;
    std::vector<StorageHandle> slots(events.size());
    for (const Event& event : events) {
      if (event.alloc) {
        slots[event.slot] = manager.Alloc(event.bytes);
        requested += event.bytes;
        requested_peak = std::max(requested_peak, requested);
      } else {
        requested -= slots[event.slot].size;
        manager.Free(slots[event.slot]);
      }
    }
    device_peak = raw->peak();
  }
  state.counters["device_peak_MiB"] = static_cast<double>(device_peak) / (1 << 20);
  state.counters["requested_peak_MiB"] = static_cast<double>(requested_peak) / (1 << 20);
  state.counters["overhead_%"] =
      100.0 * (static_cast<double>(device_peak) / static_cast<double>(requested_peak) - 1.0);
  state.SetLabel(PoolTypeName(type));
}

BENCHMARK(BM_PooledStep)->Args({0, 8, 0})->Args({1, 8, 0})->Args({0, 1, 1})->Args({1, 1, 1})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_RawStep)->Args({8, 0})->Args({1, 1})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PoolOverhead)->Args({0, 32})->Args({1, 32})->Args({2, 32})->Iterations(1);

}  // namespace
}  // namespace mxlite

BENCHMARK_MAIN();
