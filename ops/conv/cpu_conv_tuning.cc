#include "ops/conv/cpu_conv_tuning.h"

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "core/error.h"
#include "memory/storage.h"
#include "ops/cpu/cache_state.h"
#include "ops/cpu/parallel.h"

namespace mxlite::conv {
namespace {

using cpu::ConvAlgorithm;
using cpu::ConvGeometry;

// Pooled tensors of one problem's shapes with random values, shared by its candidates.
class TuningTensors {
 public:
  TuningTensors(const ConvGeometry& g, ConvDirection direction, DType dtype)
      : dtype_(dtype), scratch_backing_(Context::CPU()) {
    const int64_t data = g.batch * g.in_channels * g.in_h * g.in_w;
    const int64_t weight = g.out_channels * g.in_channels_per_group() * g.kernel_spatial();
    const int64_t output = g.batch * g.out_channels * g.out_h * g.out_w;
    switch (direction) {
      case ConvDirection::kForward:
        data_ = Random(data);
        input_bytes_ = Bytes(data);
        weight_ = Cold(Random(weight), weight);
        bias_ = Cold(Random(g.out_channels), g.out_channels);
        output_ = Cold(Random(output), output);
        break;
      case ConvDirection::kBackwardData:
        output_grad_ = Random(output);
        input_bytes_ = Bytes(output);
        weight_ = Cold(Random(weight), weight);
        data_grad_ = Cold(Random(data), data);
        break;
      case ConvDirection::kBackwardFilter:
        data_ = Cold(Random(data), data);  // read in the forward, long before
        output_grad_ = Random(output);
        input_bytes_ = Bytes(output);
        weight_grad_ = Cold(Random(weight), weight);
        break;
    }
  }
  ~TuningTensors() {
    for (const StorageHandle& block : blocks_) Storage::Global().Free(block);
  }
  TuningTensors(const TuningTensors&) = delete;
  TuningTensors& operator=(const TuningTensors&) = delete;

  // The caches as a pass leaves them for this layer: its weight (as `algorithm` reads it, prepared
  // or not) and the tensors it writes last touched a pass ago, out of every level; the workspace
  // (the layer before used the same temporary space) and what the layer before just wrote (the
  // data going forward, the output gradient going back) in.
  void PrepareCaches(const ConvAlgorithm& algorithm, ConvDirection direction) {
    for (const auto& [data, bytes] : cold_) cpu::FlushFromCaches(data, bytes);
    auto prepared = prepared_.find(&algorithm);
    if (prepared != prepared_.end() && prepared->second != nullptr) {
      FlushPrepared(*prepared->second);
    }
    cpu::TouchForReading(scratch_backing_.data(), scratch_backing_.capacity());
    cpu::TouchForReading(direction == ConvDirection::kForward ? data_ : output_grad_,
                         input_bytes_);
  }

  // One run; with `prepared_weight` (forward, float32) the algorithm's prepared weight, made on
  // its first run and kept.
  void Run(const ConvAlgorithm& algorithm, ConvDirection direction, const ConvGeometry& g,
           bool prepared_weight) {
    ScratchSpace scratch(Context::CPU(), nullptr, &scratch_backing_);
    if (dtype_ == DType::kFloat64) {
      algorithm.Run(direction, g, Tensors<double>(), scratch);
      return;
    }
    cpu::ConvTensors<float> tensors = Tensors<float>();
    if (prepared_weight && direction == ConvDirection::kForward) {
      std::unique_ptr<cpu::PreparedConvWeight>& prepared = prepared_[&algorithm];
      if (prepared == nullptr) prepared = algorithm.PrepareWeight(g, tensors.weight);
      tensors.prepared_weight = prepared.get();
    }
    algorithm.Run(direction, g, tensors, scratch);
  }

 private:
  template <typename T>
  cpu::ConvTensors<T> Tensors() const {
    auto as = [](void* p) { return static_cast<T*>(p); };
    return {as(data_),   as(weight_),    as(bias_),       as(output_grad_),
            as(output_), as(data_grad_), as(weight_grad_)};
  }

  size_t Bytes(int64_t count) const {
    return static_cast<size_t>(std::max<int64_t>(count, 0)) * DTypeSize(dtype_);
  }

  static void FlushPrepared(const cpu::PreparedConvWeight& prepared) {
    for (const cpu::PackedGemmOperand& group : prepared.groups) {
      cpu::FlushFromCaches(group.panels(), group.bytes());
    }
    cpu::FlushFromCaches(prepared.by_tap.data(), prepared.by_tap.size() * sizeof(float));
    cpu::FlushFromCaches(prepared.reordered.data(), prepared.reordered.size() * sizeof(float));
  }

  // Marks `count` elements at `data` as last touched a pass ago (PrepareCaches flushes them).
  void* Cold(void* data, int64_t count) {
    cold_.emplace_back(data, Bytes(count));
    return data;
  }

  void* Random(int64_t count) {
    if (count <= 0) return nullptr;
    const size_t bytes = static_cast<size_t>(count) * DTypeSize(dtype_);
    StorageHandle block = Storage::Global().Alloc(bytes, Context::CPU());
    blocks_.push_back(block);
    std::mt19937 random(static_cast<unsigned>(blocks_.size()));
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    if (dtype_ == DType::kFloat64) {
      double* values = static_cast<double*>(block.ptr);
      for (int64_t i = 0; i < count; ++i) values[i] = uniform(random);
    } else {
      float* values = static_cast<float*>(block.ptr);
      for (int64_t i = 0; i < count; ++i) values[i] = uniform(random);
    }
    return block.ptr;
  }

  DType dtype_;
  TempSpace scratch_backing_;  // the candidates' workspace, reused across runs
  std::vector<std::pair<const void*, size_t>> cold_;  // flushed before each run
  size_t input_bytes_ = 0;  // of the tensor PrepareCaches reads back in
  std::vector<StorageHandle> blocks_;
  void* data_ = nullptr;
  void* weight_ = nullptr;
  void* bias_ = nullptr;
  void* output_grad_ = nullptr;
  void* output_ = nullptr;
  void* data_grad_ = nullptr;
  void* weight_grad_ = nullptr;
  std::map<const ConvAlgorithm*, std::unique_ptr<cpu::PreparedConvWeight>> prepared_;
};

// Why `algorithm` does not run this problem, in a few words.
std::string UnsupportedReason(const ConvAlgorithm& algorithm, const ConvGeometry& g) {
  const std::string name(algorithm.name());
  if (name == "gemm_1x1") return "needs a 1x1 kernel, stride 1 and no padding";
  if (name.rfind("winograd", 0) == 0) return "needs a 3x3 kernel, stride 1 and dilation 1";
  if (name == "depthwise_direct") return "needs a depthwise layer (groups == input channels)";
  if (name == "direct_nchw16c") return "needs one group";
  return "not for " + cpu::DescribeGeometry(g);
}

std::vector<const ConvAlgorithm*> AlgorithmsFor(const ConvGeometry& g, ConvDirection direction) {
  std::vector<const ConvAlgorithm*> found;
  for (const ConvAlgorithm* algorithm : cpu::CpuConvAlgorithms()) {
    if (algorithm->layout() == g.layout && algorithm->HasDirection(direction)) {
      found.push_back(algorithm);
    }
  }
  return found;
}

bool IsDepthwise(const ConvGeometry& g) { return g.groups > 1 && g.groups == g.in_channels; }

// The heuristic's names in preference order for this problem (names absent from the candidate
// list are passed over).
std::vector<std::string> PreferredNames(const ConvGeometry& g, ConvDirection direction) {
  std::vector<std::string> names;
  if (IsDepthwise(g)) names.push_back("depthwise_direct");
  if (g.layout == cpu::ConvLayout::kNCHW16c) {  // the blocked layout's own kernels, nothing else
    names.push_back("direct_nchw16c");
    return names;
  }
  // A network's first layer (a few input channels under a wide kernel): im2col copies a matrix as
  // large as the GEMM's reduction is short; the direct kernel reads the image in place
  // (bench/RESULTS.md: the 7x7/2 stem over 3 channels runs 1.6x faster direct).
  if (!IsDepthwise(g) && g.in_channels_per_group() <= 4 && g.kernel_spatial() > 1) {
    names.push_back("direct_nchw");
  }
  names.push_back("gemm_1x1");
  const bool winograd_shape = g.kernel_h == 3 && g.kernel_w == 3 && g.stride_h == 1 &&
                              g.stride_w == 1 && direction != ConvDirection::kBackwardFilter;
  // Winograd pays its transforms back once there are enough channels to share them; F(4x4)
  // needs enough output pixels to fill its wider tiles, below that F(2x2) wastes less
  // (bench/RESULTS.md, "Convolution tuning": 3x3 layers of 14x14 at batch 1 favour F(2x2), 28x28
  // and up F(4x4)).
  const int64_t pixels = g.batch * g.out_h * g.out_w;
  if (winograd_shape && g.in_channels_per_group() >= 32 && g.out_channels_per_group() >= 32) {
    if (pixels >= 24 * 24) {
      names.insert(names.end(), {"winograd_4x4_3x3", "winograd_2x2_3x3"});
    } else {
      names.insert(names.end(), {"winograd_2x2_3x3", "winograd_4x4_3x3"});
    }
  }
  names.push_back(g.channels_last() ? "im2row_gemm" : "im2col_gemm");
  names.push_back(g.channels_last() ? "im2col_gemm" : "im2row_gemm");
  return names;
}

// Whether a forward of `dtype` can run with a prepared weight (float32 kernels prepare).
bool UsesPreparedWeight(bool prepared_weight, ConvDirection direction, DType dtype) {
  return prepared_weight && direction == ConvDirection::kForward && dtype == DType::kFloat32;
}

}  // namespace

ConvProblem CpuConvProblem(const ConvGeometry& g, ConvDirection direction, DType dtype,
                           bool prepared_weight) {
  ConvProblem problem;
  problem.direction = direction;
  const int64_t in_per_group = g.in_channels_per_group();
  problem.data = LayoutShape(Shape{g.batch, g.in_channels, g.in_h, g.in_w}, g.layout);
  problem.weight = g.channels_last() ? Shape{g.out_channels, g.kernel_h, g.kernel_w, in_per_group}
                                     : Shape{g.out_channels, in_per_group, g.kernel_h, g.kernel_w};
  problem.layout = ActivationLayoutName(g.layout);
  problem.stride = {g.stride_h, g.stride_w};
  problem.pad = {g.pad_h, g.pad_w};
  problem.dilation = {g.dilate_h, g.dilate_w};
  problem.groups = g.groups;
  problem.dtype = dtype;
  problem.prepared_weight = UsesPreparedWeight(prepared_weight, direction, dtype);
  return problem;
}

std::vector<Candidate> CpuConvCandidates(const ConvGeometry& g, ConvDirection direction,
                                         DType dtype, bool prepared_weight) {
  prepared_weight = UsesPreparedWeight(prepared_weight, direction, dtype);
  // Allocated on the first run only: a problem answered from the DB never fills tensors.
  auto tensors = std::make_shared<std::unique_ptr<TuningTensors>>();
  std::vector<Candidate> candidates;
  for (const ConvAlgorithm* algorithm : AlgorithmsFor(g, direction)) {
    Candidate candidate;
    candidate.algorithm = std::string(algorithm->name());
    candidate.layout = ActivationLayoutName(algorithm->layout());
    candidate.deterministic = algorithm->deterministic();
    if (!algorithm->Supports(g, direction)) {
      candidate.unsupported = UnsupportedReason(*algorithm, g);
    } else {
      candidate.workspace_bytes = algorithm->WorkspaceBytes(g, direction, dtype);
      auto ensure_tensors = [tensors, direction, g, dtype] {
        if (!*tensors) *tensors = std::make_unique<TuningTensors>(g, direction, dtype);
        return tensors->get();
      };
      candidate.before_run = [ensure_tensors, algorithm, direction] {
        ensure_tensors()->PrepareCaches(*algorithm, direction);
      };
      candidate.run = [ensure_tensors, algorithm, direction, g, prepared_weight] {
        ensure_tensors()->Run(*algorithm, direction, g, prepared_weight);
      };
    }
    candidates.push_back(std::move(candidate));
  }
  return candidates;
}

std::vector<size_t> RankCpuCandidates(const ConvGeometry& g, ConvDirection direction,
                                      const std::vector<Candidate>& candidates) {
  std::vector<size_t> ranking;
  for (const std::string& name : PreferredNames(g, direction)) {
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (candidates[i].algorithm == name && candidates[i].unsupported.empty()) {
        ranking.push_back(i);
      }
    }
  }
  return ranking;
}

const ConvAlgorithm& HeuristicCpuAlgorithm(const ConvGeometry& g, ConvDirection direction) {
  for (const std::string& name : PreferredNames(g, direction)) {
    const ConvAlgorithm* algorithm = cpu::FindCpuConvAlgorithm(name, g.layout);
    if (algorithm && algorithm->Supports(g, direction)) return *algorithm;
  }
  MX_THROW() << "no CPU convolution algorithm supports " << ConvDirectionName(direction) << " on "
             << cpu::DescribeGeometry(g);
}

const ConvAlgorithm* CpuConvPlan::For(ConvDirection direction) const {
  switch (direction) {
    case ConvDirection::kForward:
      return forward;
    case ConvDirection::kBackwardData:
      return backward_data;
    case ConvDirection::kBackwardFilter:
      return backward_filter;
  }
  return nullptr;
}

namespace {

const ConvAlgorithm*& PlanSlot(CpuConvPlan& plan, ConvDirection direction) {
  switch (direction) {
    case ConvDirection::kForward:
      return plan.forward;
    case ConvDirection::kBackwardData:
      return plan.backward_data;
    case ConvDirection::kBackwardFilter:
      return plan.backward_filter;
  }
  return plan.forward;
}

}  // namespace

namespace {

// The CPU's side of the front (ConvTuningBackend): mxlite's algorithms for one geometry.
class CpuConvBackend final : public ConvTuningBackend {
 public:
  explicit CpuConvBackend(const CpuConvTuningRequest& request) : request_(request) {}

  TuningEnvironment Environment() const override { return TuningEnvironment::ForCpu(); }
  ConvProblem Problem(ConvDirection direction) const override {
    return CpuConvProblem(request_.geometry, direction, request_.dtype, Prepared(direction));
  }
  std::vector<Candidate> Candidates(ConvDirection direction) override {
    return CpuConvCandidates(request_.geometry, direction, request_.dtype, Prepared(direction));
  }
  std::vector<size_t> Rank(ConvDirection direction,
                           const std::vector<Candidate>& candidates) const override {
    return RankCpuCandidates(request_.geometry, direction, candidates);
  }
  bool RanksFromMeasurements() const override { return true; }
  bool Usable(ConvDirection direction, const TuningRecord& record) const override {
    const ConvAlgorithm* algorithm =
        cpu::FindCpuConvAlgorithm(record.algorithm, request_.geometry.layout);
    return algorithm != nullptr && algorithm->Supports(request_.geometry, direction);
  }
  // The same candidates over copies of the problem (they allocate their own tensors), run with
  // this thread's intra-op thread count, the one the environment's key names: the background
  // tuner's thread has its own.
  std::function<std::vector<Candidate>()> DetachedCandidates(ConvDirection direction) override {
    return [geometry = request_.geometry, direction, dtype = request_.dtype,
            prepared = Prepared(direction), threads = cpu::IntraOpThreads()] {
      std::vector<Candidate> candidates = CpuConvCandidates(geometry, direction, dtype, prepared);
      for (Candidate& candidate : candidates) {
        for (std::function<void()>* step : {&candidate.run, &candidate.before_run}) {
          if (!*step) continue;
          *step = [threads, original = std::move(*step)] {
            cpu::ScopedIntraOpThreads scoped(threads);
            original();
          };
        }
      }
      return candidates;
    };
  }

 private:
  bool Prepared(ConvDirection direction) const {
    return request_.prepared_weight && direction == ConvDirection::kForward;
  }
  const CpuConvTuningRequest& request_;
};

}  // namespace

CpuConvPlan TuneCpuConvolution(const CpuConvTuningRequest& request) {
  const std::string& layer = request.tuning.layer;
  // The candidates compute in float32 or float64 only; timing them on other element types would
  // read buffers of the wrong size.
  MX_CHECK(request.dtype == DType::kFloat32 || request.dtype == DType::kFloat64)
      << layer << ": dtype " << request.dtype
      << " is not supported by the CPU convolutions (float32 and float64 are; float16 runs on the "
      << "GPU)";
  const ConvGeometry& g = request.geometry;
  CpuConvPlan plan;
  plan.geometry = g;
  if (g.batch == 0) {  // nothing to compute, nothing to time
    for (ConvDirection direction : request.directions) {
      PlanSlot(plan, direction) = &HeuristicCpuAlgorithm(g, direction);
    }
    return plan;
  }
  CpuConvBackend backend(request);
  plan.decisions = TuneLayer(request.tuning, request.directions, backend);
  for (const LayerTuning& decision : plan.decisions) {
    const ConvAlgorithm* algorithm = cpu::FindCpuConvAlgorithm(decision.record.algorithm, g.layout);
    MX_CHECK(algorithm != nullptr) << layer << ": the tuner picked '" << decision.record.algorithm
                                   << "', which is not a CPU algorithm";
    PlanSlot(plan, decision.problem.direction) = algorithm;
  }
  return plan;
}

}  // namespace mxlite::conv
