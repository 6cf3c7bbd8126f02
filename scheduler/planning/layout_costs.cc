#include "scheduler/planning/layout_costs.h"

#include <cstring>
#include <optional>
#include <random>
#include <sstream>

#include "core/error.h"
#include "memory/storage.h"
#include "ops/conv/tuner.h"
#include "ops/cpu/cache_state.h"
#include "ops/cpu/layout_transform.h"
#include "scheduler/graph/fusion.h"
#include "scheduler/graph/infer_shapes.h"
#include "scheduler/planning/cost_cache.h"
#include "scheduler/planning/graph_timer.h"
#include "scheduler/train/initializer.h"

namespace mxlite {
namespace {

// The time stored under `key` for `ctx`'s device, if any.
std::optional<double> StoredMs(const std::string& key, const Context& ctx) {
  return PlanningCostCache::Global().Lookup(key, PlanningEnvironment(ctx));
}

// Keeps `ms`, the measured time of `what` (an op name, "graph"), under `key` for `ctx`'s device.
void StoreMs(const std::string& key, const std::string& what, double ms, const Context& ctx) {
  PlanningCostCache::Global().Store(key, what, ms, PlanningEnvironment(ctx));
}

// The DB entry under `key` for `ctx`'s device, or the time `measure` returns (then stored).
template <typename Measure>
MeasuredMs CachedMs(const std::string& key, const std::string& what, const Context& ctx,
                    Measure&& measure) {
  if (const std::optional<double> stored = StoredMs(key, ctx)) return {*stored, 0};
  const double ms = measure();
  StoreMs(key, what, ms, ctx);
  return {ms, 1};
}

// Pooled, zero-filled host buffer for timing (first-touch cost paid before timing starts).
class TimingBuffer {
 public:
  explicit TimingBuffer(size_t bytes)
      : handle_(Storage::Global().Alloc(bytes == 0 ? 1 : bytes, Context::CPU())) {
    std::memset(handle_.ptr, 0, bytes);
  }
  ~TimingBuffer() { Storage::Global().Free(handle_); }
  TimingBuffer(const TimingBuffer&) = delete;
  TimingBuffer& operator=(const TimingBuffer&) = delete;
  void* data() const { return handle_.ptr; }

 private:
  StorageHandle handle_;
};

// What a transform in a pass meets: its destination was last written layers ago and its source,
// when large, is partly out of the caches too. Writing this much before each timed run puts the
// caches in that state; timed hot instead, transforms read 1.5-2.5x under their in-pass times
// (GoogLeNet's 76 transforms, profiled on the CPU: 478 us hot against 850 in the pass), and the
// planner undercharged every layout change.
constexpr size_t kEvictionBytes = size_t{16} << 20;

double TimeTransformOnCpuMs(const Shape& shape, ActivationLayout from, ActivationLayout to,
                            DType dtype) {
  const size_t bytes = static_cast<size_t>(shape.size()) * DTypeSize(dtype);
  TimingBuffer in(bytes), out(bytes);
  cpu::CacheEvictor evictor(kEvictionBytes);
  const Shape nchw = NchwShape(shape, from);
  return conv::TimeCandidate(
             [&] { cpu::TransformLayout(in.data(), nchw, from, to, out.data(), dtype); }, {},
             [&] { evictor.Evict(); })
      .median_ms;
}

// Median milliseconds of passes of `timer`.
double TimePassesMs(GraphTimer& timer) {
  return conv::TimeCandidate([&] { timer.RunPass(); }).median_ms;
}

// Fills every variable of `timer` uniform in [-1, 1) (no denormals, no NaN): real values, not the
// zeros of fresh memory, since a kernel that branches on the data (max pooling's backward) runs
// several times faster on zeros than in a pass.
void FillVariables(GraphTimer& timer) {
  std::mt19937_64 random(42);
  for (NDArray array : timer.Variables()) FillArray(array, Uniform{1.0}, random);
}

// Median milliseconds of a one-node graph `op_name`(data...) on `ctx`: its data inputs of
// `data_shapes` in order, its parameters and auxiliary states of the shapes and dtypes the op
// infers.
double TimeOneNodeMs(const std::string& op_name, const std::map<std::string, std::string>& attrs,
                     const std::vector<Shape>& data_shapes, DType dtype, bool training,
                     const Context& ctx) {
  const OpDef& op = OpRegistry::Global().Get(op_name);
  const Attributes parsed = ParseOpAttributes(op, attrs, "measured");
  const std::vector<InputRole> roles = InputRoles(op, parsed);
  const std::vector<std::string> names = InputNames(op, parsed);
  Graph graph;
  std::vector<NodeEntry> inputs;
  size_t data = 0;
  for (size_t i = 0; i < roles.size(); ++i) {
    if (roles[i] == InputRole::kData) {
      MX_CHECK(data < data_shapes.size())
          << op_name << " takes more data inputs than the " << data_shapes.size() << " given";
      inputs.push_back(
          {graph.AddVariable(names[i], VariableRole::kInput, data_shapes[data++], dtype), 0});
    } else {
      const VariableRole role =
          roles[i] == InputRole::kParameter ? VariableRole::kParameter : VariableRole::kAuxiliary;
      // Shape and dtype as the op infers them (float16 BatchNorm keeps float32 parameters).
      inputs.push_back({graph.AddVariable(names[i], role, std::nullopt, std::nullopt), 0});
    }
  }
  MX_CHECK(data == data_shapes.size())
      << op_name << " takes " << data << " data inputs, not the " << data_shapes.size() << " given";
  const int node = graph.AddOpNode(op_name, "measured", attrs, inputs);
  graph.AddOutput({node, 0});
  GraphTimer timer(graph, ctx, training);
  FillVariables(timer);
  return TimePassesMs(timer);
}

// `graph` with the inference fusions an executor applies after planning, each taking in every
// instance it can (scheduler/graph/fusion.h): clamps into the ops before them (Convolution,
// BatchNorm), every depthwise block whatever its size, residual additions (and the clamps after
// them).
Graph FusedForInference(const Graph& graph) {
  Graph fused = FuseClampActivations(graph).graph;
  fused = FuseDepthwiseBlocks(fused, InferGraphShapes(fused), {.min_intermediate_bytes = 0}).graph;
  fused = FuseResidualAdditions(fused, InferGraphShapes(fused)).graph;
  return FuseClampActivations(fused).graph;
}

// Before each timed pass of a graph on the CPU: the caches as a network's pass leaves them for
// its nodes: other work written through them since this graph's last pass (its weights and the
// tensors between its nodes cold), then its inputs read back in (the layer before just wrote
// them). Timed hot instead, MobileNet-V2's block at 112x112 on 2 threads measured 0.42 ms apart
// and 0.41 fused, while in the pass its three convolutions took 0.66 ms and the fused block 0.41:
// the tensor the separate convolutions pass between them (4.8 MB) stayed in L3 from run to run.
std::function<void()> PassCaches(const GraphTimer& timer, cpu::CacheEvictor& evictor) {
  return [inputs = timer.Inputs(), &evictor] {
    evictor.Evict();
    for (const NDArray& input : inputs) {
      input.WaitToRead();
      cpu::TouchForReading(input.data(), input.bytes());
    }
  };
}

// Median milliseconds of an inference pass of `graph` on `ctx` fused and apart, their passes
// timed in turn (conv::TimeInterleaved: the two are close, and must meet the same machine), on
// the CPU each with the caches as a pass meets it (PassCaches).
FusedAndApartMs TimeFusedAndApartMs(const Graph& graph, const Context& ctx) {
  GraphTimer fused(FusedForInference(graph), ctx, /*training=*/false);
  GraphTimer apart(graph, ctx, /*training=*/false);
  FillVariables(fused);
  FillVariables(apart);
  std::optional<cpu::CacheEvictor> evictor;
  std::function<void()> before_fused, before_apart;
  if (ctx.device_type == DeviceType::kCPU) {
    evictor.emplace(kEvictionBytes);
    before_fused = PassCaches(fused, *evictor);
    before_apart = PassCaches(apart, *evictor);
  }
  const std::vector<conv::InterleavedTiming> timings = conv::TimeInterleaved(
      {{[&] { fused.RunPass(); }, before_fused}, {[&] { apart.RunPass(); }, before_apart}});
  for (const conv::InterleavedTiming& timing : timings) {
    if (timing.error) std::rethrow_exception(timing.error);
  }
  return {{timings[0].timing.median_ms, 1}, {timings[1].timing.median_ms, 1}};
}

double TimeTransformMs(const Shape& shape, ActivationLayout from, ActivationLayout to, DType dtype,
                       const Context& ctx) {
  if (ctx.device_type == DeviceType::kCPU) return TimeTransformOnCpuMs(shape, from, to, dtype);
  return TimeOneNodeMs("transpose", {{"axes", LayoutPermutationText(from, to)}}, {shape}, dtype,
                       /*training=*/false, ctx);
}

std::string AttributeText(const std::map<std::string, std::string>& attrs) {
  std::ostringstream text;
  for (const auto& [name, value] : attrs) text << ' ' << name << '=' << value;
  return text.str();
}

}  // namespace

std::string LayoutPermutationText(ActivationLayout from, ActivationLayout to) {
  std::ostringstream axes;
  axes << '(';
  const std::vector<int> permutation = LayoutPermutation(from, to);
  for (size_t i = 0; i < permutation.size(); ++i) axes << (i ? "," : "") << permutation[i];
  axes << ')';
  return axes.str();
}

MeasuredMs LayoutTransformMs(const Shape& shape, ActivationLayout from, ActivationLayout to,
                             DType dtype, bool training, const Context& ctx) {
  if (from == to) return {};
  auto one_way = [&](const Shape& in_shape, ActivationLayout a, ActivationLayout b) {
    std::ostringstream key;
    // "caches=evicted": entries timed hot, under keys without it, are not reused.
    key << "transform " << ActivationLayoutName(a) << "->" << ActivationLayoutName(b)
        << " data=" << in_shape << " dtype=" << DTypeName(dtype)
        << (ctx.device_type == DeviceType::kCPU ? " caches=evicted" : "");
    return CachedMs(key.str(), "transpose", ctx,
                    [&] { return TimeTransformMs(in_shape, a, b, dtype, ctx); });
  };
  MeasuredMs cost = one_way(shape, from, to);
  if (training) {
    const MeasuredMs back = one_way(PermuteShape(shape, from, to), to, from);
    cost.ms += back.ms;
    cost.timings_run += back.timings_run;
  }
  return cost;
}

FusedAndApartMs MeasureFusedAndApartMs(const std::string& key, const Graph& graph,
                                       const Context& ctx) {
  // "caches=evicted": entries timed hot are not reused; "fused=every": entries whose "fused"
  // pass left blocks under the executor's size rule unfused are not reused either.
  const std::string caches = ctx.device_type == DeviceType::kCPU ? " caches=evicted" : "";
  const std::string fused_key = "graph " + key + caches + " fused=every";
  const std::string apart_key = "graph " + key + caches + " apart";
  const std::optional<double> fused = StoredMs(fused_key, ctx), apart = StoredMs(apart_key, ctx);
  if (fused && apart) return {{*fused, 0}, {*apart, 0}};
  const FusedAndApartMs measured = TimeFusedAndApartMs(graph, ctx);
  StoreMs(fused_key, "graph", measured.fused.ms, ctx);
  StoreMs(apart_key, "graph", measured.apart.ms, ctx);
  return measured;
}

MeasuredMs MeasureNodeMs(const std::string& op_name,
                         const std::map<std::string, std::string>& attrs,
                         const std::vector<Shape>& data_shapes, DType dtype, bool training,
                         const Context& ctx) {
  std::ostringstream key;
  key << "node " << op_name << AttributeText(attrs) << " data=";
  for (size_t i = 0; i < data_shapes.size(); ++i) key << (i ? "," : "") << data_shapes[i];
  key << " dtype=" << DTypeName(dtype) << " training=" << (training ? 1 : 0);
  return CachedMs(key.str(), op_name, ctx,
                  [&] { return TimeOneNodeMs(op_name, attrs, data_shapes, dtype, training, ctx); });
}

}  // namespace mxlite
