// Tuning a GPU convolution with cuDNN's Get (heuristic) and Find (timing) calls through
// ConvTuner: see cudnn_convolution.h.
#include <algorithm>
#include <map>
#include <memory>

#include "core/settings.h"
#include "memory/storage.h"
#include "ops/cuda/cudnn_convolution.h"

namespace mxlite::cuda {
namespace {

using conv::Candidate;
using conv::ConvDirection;

// How many times Find runs; each candidate's time is the median of its runs.
constexpr int kFindRepeats = 3;

// One row of cuDNN's results, whatever the direction.
struct CudnnPerf {
  CudnnAlgorithm algorithm;
  cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
  float time_ms = -1;
  size_t memory = 0;
  bool deterministic = true;
};

template <typename Perf>
std::vector<CudnnPerf> Rows(const std::vector<Perf>& perf, int returned) {
  std::vector<CudnnPerf> rows;
  for (int i = 0; i < returned; ++i) {
    const Perf& p = perf[static_cast<size_t>(i)];
    rows.push_back({{static_cast<int>(p.algo), p.mathType},
                    p.status,
                    p.time,
                    p.memory,
                    p.determinism == CUDNN_DETERMINISTIC});
  }
  return rows;
}

const std::vector<const char*>& AlgorithmNames(ConvDirection direction) {
  // Indexed by cuDNN's enum values (cudnnConvolution{Fwd,BwdData,BwdFilter}Algo_t).
  static const std::vector<const char*> forward = {
      "implicit_gemm", "implicit_precomp_gemm", "gemm",     "direct",
      "fft",           "fft_tiling",            "winograd", "winograd_nonfused"};
  static const std::vector<const char*> backward_data = {
      "algo_0", "algo_1", "fft", "fft_tiling", "winograd", "winograd_nonfused"};
  static const std::vector<const char*> backward_filter = {
      "algo_0", "algo_1", "fft", "algo_3", "winograd", "winograd_nonfused", "fft_tiling"};
  switch (direction) {
    case ConvDirection::kForward: return forward;
    case ConvDirection::kBackwardData: return backward_data;
    case ConvDirection::kBackwardFilter: return backward_filter;
  }
  return forward;
}

const char* MathSuffix(cudnnMathType_t math) {
  switch (math) {
    case CUDNN_DEFAULT_MATH: return "";
    case CUDNN_TENSOR_OP_MATH: return "+tensor_op";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: return "+tf32";
    case CUDNN_FMA_MATH: return "+fma";
  }
  return "+unknown_math";
}

// cuDNN's heuristic list (its preference order) for the direction.
std::vector<CudnnPerf> HeuristicRows(cudnnHandle_t handle, const CudnnConvolution& c,
                                     ConvDirection direction) {
  int count = 0, returned = 0;
  switch (direction) {
    case ConvDirection::kForward: {
      MXLITE_CUDNN_CALL(cudnnGetConvolutionForwardAlgorithmMaxCount(handle, &count), c.owner);
      std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(std::max(count, 1));
      MXLITE_CUDNN_CALL(cudnnGetConvolutionForwardAlgorithm_v7(handle, c.x.get(), c.w.get(),
                                                               c.conv.get(), c.y.get(), count,
                                                               &returned, perf.data()),
                        c.owner);
      return Rows(perf, returned);
    }
    case ConvDirection::kBackwardData: {
      MXLITE_CUDNN_CALL(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(handle, &count), c.owner);
      std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(std::max(count, 1));
      MXLITE_CUDNN_CALL(cudnnGetConvolutionBackwardDataAlgorithm_v7(
                            handle, c.w.get(), c.y.get(), c.conv.get(), c.x.get(), count,
                            &returned, perf.data()),
                        c.owner);
      return Rows(perf, returned);
    }
    case ConvDirection::kBackwardFilter: {
      MXLITE_CUDNN_CALL(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(handle, &count),
                        c.owner);
      std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(std::max(count, 1));
      MXLITE_CUDNN_CALL(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                            handle, c.x.get(), c.y.get(), c.conv.get(), c.w.get(), count,
                            &returned, perf.data()),
                        c.owner);
      return Rows(perf, returned);
    }
  }
  return {};
}

// Pooled device buffers for one Find: x, w, y (zeros) and the workspace. Freed on destruction.
class FindBuffers {
 public:
  FindBuffers(Context ctx, const std::string& owner) : ctx_(ctx), owner_(owner) {}
  ~FindBuffers() {
    for (const StorageHandle& block : blocks_) Storage::Global().Free(block);
  }
  FindBuffers(const FindBuffers&) = delete;
  FindBuffers& operator=(const FindBuffers&) = delete;

  void* Zeros(size_t bytes) {
    if (bytes == 0) return nullptr;
    StorageHandle block = Storage::Global().Alloc(bytes, ctx_);
    blocks_.push_back(block);
    MXLITE_CUDA_CALL(cudaMemset(block.ptr, 0, bytes), owner_);
    return block.ptr;
  }

 private:
  Context ctx_;
  std::string owner_;
  std::vector<StorageHandle> blocks_;
};

size_t Bytes(const Shape& shape, DType dtype) {
  return static_cast<size_t>(shape.size()) * DTypeSize(dtype);
}

struct FindTensors {
  void* x = nullptr;
  void* w = nullptr;
  void* y = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
};

// One run of cuDNN's Find for the direction over `t`.
std::vector<CudnnPerf> FindRows(cudnnHandle_t handle, const CudnnConvolution& c,
                                ConvDirection direction, const FindTensors& t) {
  int count = 0, returned = 0;
  switch (direction) {
    case ConvDirection::kForward: {
      MXLITE_CUDNN_CALL(cudnnGetConvolutionForwardAlgorithmMaxCount(handle, &count), c.owner);
      std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(std::max(count, 1));
      MXLITE_CUDNN_CALL(cudnnFindConvolutionForwardAlgorithmEx(
                            handle, c.x.get(), t.x, c.w.get(), t.w, c.conv.get(), c.y.get(), t.y,
                            count, &returned, perf.data(), t.workspace, t.workspace_bytes),
                        c.owner);
      return Rows(perf, returned);
    }
    case ConvDirection::kBackwardData: {
      MXLITE_CUDNN_CALL(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(handle, &count), c.owner);
      std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(std::max(count, 1));
      MXLITE_CUDNN_CALL(cudnnFindConvolutionBackwardDataAlgorithmEx(
                            handle, c.w.get(), t.w, c.y.get(), t.y, c.conv.get(), c.x.get(), t.x,
                            count, &returned, perf.data(), t.workspace, t.workspace_bytes),
                        c.owner);
      return Rows(perf, returned);
    }
    case ConvDirection::kBackwardFilter: {
      MXLITE_CUDNN_CALL(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(handle, &count),
                        c.owner);
      std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(std::max(count, 1));
      MXLITE_CUDNN_CALL(cudnnFindConvolutionBackwardFilterAlgorithmEx(
                            handle, c.x.get(), t.x, c.y.get(), t.y, c.conv.get(), c.w.get(), t.w,
                            count, &returned, perf.data(), t.workspace, t.workspace_bytes),
                        c.owner);
      return Rows(perf, returned);
    }
  }
  return {};
}

// The median Find time of each candidate name over kFindRepeats runs, timed on demand.
class FindTimes {
 public:
  FindTimes(const CudnnTuningRequest& request, CudnnConvolution& c, ConvDirection direction,
            size_t workspace_bytes)
      : request_(request), c_(c), direction_(direction), workspace_bytes_(workspace_bytes) {}

  // The median time of `name`, or an error when cuDNN did not time it.
  double Of(const std::string& name) {
    if (!measured_) Measure();
    auto found = samples_.find(name);
    MX_CHECK(found != samples_.end() && !found->second.empty())
        << c_.owner << ": cudnnFind did not time " << name << " within "
        << (workspace_bytes_ >> 20) << " MB of workspace";
    std::vector<double> samples = found->second;
    std::sort(samples.begin(), samples.end());
    return samples[samples.size() / 2];
  }

 private:
  void Measure() {
    measured_ = true;
    const Context ctx = request_.ctx;
    FindBuffers buffers(ctx, c_.owner);  // the pool lock is held only inside these allocations
    FindTensors tensors;
    tensors.x = buffers.Zeros(Bytes(request_.x_shape, c_.dtype));
    tensors.w = buffers.Zeros(Bytes(request_.w_shape, c_.dtype));
    tensors.y = buffers.Zeros(Bytes(request_.y_shape, c_.dtype));
    tensors.workspace = buffers.Zeros(workspace_bytes_);
    tensors.workspace_bytes = workspace_bytes_;
    OpContext op_ctx{ctx, false, nullptr, nullptr, nullptr, nullptr, request_.tuning.layer};
    cudnnHandle_t handle = CudnnHandle(op_ctx, c_.owner);
    for (int repeat = 0; repeat < kFindRepeats; ++repeat) {
      for (const CudnnPerf& row : FindRows(handle, c_, direction_, tensors)) {
        if (row.status != CUDNN_STATUS_SUCCESS || row.time_ms < 0) continue;
        samples_[CudnnAlgorithmName(direction_, row.algorithm)].push_back(row.time_ms);
      }
    }
    MXLITE_CUDA_CALL(cudaDeviceSynchronize(), c_.owner);
  }

  const CudnnTuningRequest& request_;
  CudnnConvolution& c_;
  ConvDirection direction_;
  size_t workspace_bytes_;
  bool measured_ = false;
  std::map<std::string, std::vector<double>> samples_;
};

// The candidate of one heuristic row.
Candidate ToCandidate(const CudnnPerf& row, ConvDirection direction, DType dtype,
                      const std::string& layout) {
  Candidate candidate;
  candidate.algorithm = CudnnAlgorithmName(direction, row.algorithm);
  candidate.layout = layout;
  candidate.workspace_bytes = row.memory;
  candidate.deterministic = row.deterministic;
  candidate.tensor_cores = row.algorithm.math == CUDNN_TENSOR_OP_MATH ||
                           row.algorithm.math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
  if (row.status != CUDNN_STATUS_SUCCESS) {
    candidate.unsupported = std::string("cuDNN: ") + cudnnGetErrorString(row.status);
  } else if (candidate.tensor_cores && !ConvolutionMathTypeAllowed(row.algorithm.math, dtype)) {
    candidate.unsupported =
        "math type forbidden by MXNET_CUDA_ALLOW_TENSOR_CORE / "
        "MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION";
  }
  return candidate;
}

conv::ConvProblem Problem(const CudnnTuningRequest& request, ConvDirection direction, DType dtype) {
  conv::ConvProblem problem;
  problem.direction = direction;
  problem.data = request.x_shape;
  problem.weight = request.w_shape;
  problem.stride = request.window.stride;
  problem.pad = request.pad;
  problem.dilation = request.window.dilate;
  problem.groups = request.window.num_group;
  problem.dtype = dtype;
  problem.layout = request.window.layout;
  return problem;
}

}  // namespace

std::string CudnnAlgorithmName(ConvDirection direction, const CudnnAlgorithm& algorithm) {
  const auto& names = AlgorithmNames(direction);
  const std::string base = algorithm.algo >= 0 && algorithm.algo < static_cast<int>(names.size())
                               ? names[static_cast<size_t>(algorithm.algo)]
                               : "algo_" + std::to_string(algorithm.algo);
  return base + MathSuffix(algorithm.math);
}

CudnnAlgorithm ParseCudnnAlgorithm(ConvDirection direction, const std::string& name) {
  const auto& names = AlgorithmNames(direction);
  for (cudnnMathType_t math : {CUDNN_DEFAULT_MATH, CUDNN_TENSOR_OP_MATH,
                               CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION, CUDNN_FMA_MATH}) {
    for (size_t algo = 0; algo < names.size(); ++algo) {
      const CudnnAlgorithm candidate{static_cast<int>(algo), math};
      if (CudnnAlgorithmName(direction, candidate) == name) return candidate;
    }
  }
  return {};
}

const CudnnAlgorithm& CudnnConvPlan::For(ConvDirection direction) const {
  switch (direction) {
    case ConvDirection::kForward: return forward;
    case ConvDirection::kBackwardData: return backward_data;
    case ConvDirection::kBackwardFilter: return backward_filter;
  }
  return forward;
}

namespace {

// cuDNN's side of the front (conv::ConvTuningBackend): the algorithms cuDNN lists for each
// direction of the described convolution, in its heuristic order, timed by its Find.
//
// It gives no detached candidates (DetachedCandidates stays empty): Find runs on the layer's own
// descriptors (CudnnConvolution, owned by its op state), the calling thread's cuDNN handle and
// device buffers from the GPU pool, and times every candidate in one call rather than through the
// clock. A background job would need descriptors, a handle and a stream of its own on a thread
// that has set the device, alive until the process's exit stops it. Until then a miss in
// background mode is tuned at bind on the GPU, as in update.
class CudnnBackend final : public conv::ConvTuningBackend {
 public:
  CudnnBackend(const CudnnTuningRequest& request, CudnnConvolution& c) : request_(request), c_(c) {}

  conv::TuningEnvironment Environment() const override {
    return conv::TuningEnvironment::ForGpu(request_.ctx.device_id);
  }
  conv::ConvProblem Problem(ConvDirection direction) const override {
    return cuda::Problem(request_, direction, c_.dtype);
  }
  std::vector<Candidate> Candidates(ConvDirection direction) override {
    std::vector<Candidate> candidates;
    for (const CudnnPerf& row : Rows(direction)) {
      candidates.push_back(ToCandidate(row, direction, c_.dtype, request_.window.layout));
    }
    return candidates;
  }
  std::vector<size_t> Rank(ConvDirection, const std::vector<Candidate>& candidates) const override {
    std::vector<size_t> order(candidates.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;  // cuDNN's own order
    return order;
  }
  bool Usable(ConvDirection direction, const conv::TuningRecord& record) const override {
    return ParseCudnnAlgorithm(direction, record.algorithm).chosen();
  }
  // Find times every candidate at once, within the workspace the policy allows: the largest any
  // candidate asks (fastest), else up to the layer's limit.
  conv::CandidateTimer Timer(ConvDirection direction) override {
    size_t largest = 0;
    for (const CudnnPerf& row : Rows(direction)) {
      if (row.status == CUDNN_STATUS_SUCCESS) largest = std::max(largest, row.memory);
    }
    const conv::TuningPolicy& policy = request_.tuning.policy;
    const size_t workspace = policy.mode == conv::TuneMode::kFastest
                                 ? largest
                                 : std::min<size_t>(largest, policy.workspace_limit_bytes);
    auto times = std::make_shared<FindTimes>(request_, c_, direction, workspace);
    return [times](const Candidate& candidate) {
      return conv::Timing{times->Of(candidate.algorithm), kFindRepeats, false};
    };
  }

 private:
  // cuDNN's heuristic rows for the direction, asked once.
  const std::vector<CudnnPerf>& Rows(ConvDirection direction) {
    auto found = rows_.find(direction);
    if (found != rows_.end()) return found->second;
    OpContext op_ctx{request_.ctx,         false, nullptr, nullptr, nullptr, nullptr,
                     request_.tuning.layer};
    return rows_[direction] = HeuristicRows(CudnnHandle(op_ctx, c_.owner), c_, direction);
  }

  const CudnnTuningRequest& request_;
  CudnnConvolution& c_;
  std::map<ConvDirection, std::vector<CudnnPerf>> rows_;
};

}  // namespace

CudnnConvPlan TuneCudnnConvolution(const CudnnTuningRequest& request, CudnnConvolution& c) {
  CudnnConvPlan plan;
  plan.dtype = c.dtype;
  CudnnBackend backend(request, c);
  plan.decisions = conv::TuneLayer(request.tuning, request.directions, backend);
  for (const conv::LayerTuning& decision : plan.decisions) {
    const ConvDirection direction = decision.problem.direction;
    const CudnnAlgorithm algorithm = ParseCudnnAlgorithm(direction, decision.record.algorithm);
    switch (direction) {
      case ConvDirection::kForward: plan.forward = algorithm; break;
      case ConvDirection::kBackwardData: plan.backward_data = algorithm; break;
      case ConvDirection::kBackwardFilter: plan.backward_filter = algorithm; break;
    }
  }
  return plan;
}

}  // namespace mxlite::cuda
