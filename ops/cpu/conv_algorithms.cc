// The algorithm interface, the registry, the two lowering candidates (which call conv_gemm.h) and
// gemm_1x1 (a 1x1 convolution is already a matrix product: no lowering, no workspace).
#include "ops/cpu/conv_algorithms.h"

#include <algorithm>
#include <limits>
#include <sstream>
#include <type_traits>

#include "core/error.h"
#include "ops/cpu/blas.h"
#include "ops/cpu/conv_gemm.h"
#include "ops/cpu/int_math.h"
#include "ops/cpu/parallel.h"

namespace mxlite::cpu {

std::string DescribeGeometry(const ConvGeometry& g) {
  std::ostringstream out;
  out << ActivationLayoutName(g.layout) << " batch " << g.batch << ", " << g.in_channels << "->"
      << g.out_channels << " channels, groups " << g.groups << ", input " << g.in_h << "x" << g.in_w
      << ", output " << g.out_h << "x" << g.out_w << ", kernel " << g.kernel_h << "x" << g.kernel_w
      << ", stride " << g.stride_h << "x" << g.stride_w << ", pad " << g.pad_h << "x" << g.pad_w
      << ", dilate " << g.dilate_h << "x" << g.dilate_w;
  return out.str();
}

bool IsValidConvGeometry(const ConvGeometry& g) {
  const bool positive = g.in_channels >= 1 && g.out_channels >= 1 && g.groups >= 1 && g.in_h >= 1 &&
                        g.in_w >= 1 && g.out_h >= 1 && g.out_w >= 1 && g.kernel_h >= 1 &&
                        g.kernel_w >= 1 && g.stride_h >= 1 && g.stride_w >= 1 && g.dilate_h >= 1 &&
                        g.dilate_w >= 1;
  return positive && g.batch >= 0 && g.pad_h >= 0 && g.pad_w >= 0 &&
         g.in_channels % g.groups == 0 && g.out_channels % g.groups == 0;
}

template <typename T>
void ConvAlgorithm::CheckCall(ConvDirection direction, const ConvGeometry& geometry,
                              const ConvTensors<T>& t) const {
  MX_CHECK(Supports(geometry, direction))
      << "convolution algorithm " << name() << " (" << ActivationLayoutName(layout())
      << ") does not support " << ConvDirectionName(direction) << " on "
      << DescribeGeometry(geometry);
  bool complete = true;
  switch (direction) {
    case ConvDirection::kForward:
      complete = t.data && t.weight && t.output;
      break;
    case ConvDirection::kBackwardData:
      complete = t.output_grad && t.weight && t.data_grad;
      break;
    case ConvDirection::kBackwardFilter:
      complete = t.data && t.output_grad && t.weight_grad;
      break;
  }
  MX_CHECK(complete)
      << "convolution algorithm " << name() << ": " << ConvDirectionName(direction)
      << " needs every one of its tensors (forward: data, weight, output; backward_data: "
         "output_grad, weight, data_grad; backward_filter: data, output_grad, weight_grad)";
  MX_CHECK(direction == ConvDirection::kForward || !t.OutputClamp().clamps())
      << "convolution algorithm " << name() << ": an output clamp applies to the forward only, not "
      << ConvDirectionName(direction);
  MX_CHECK(direction == ConvDirection::kForward || t.residual == nullptr)
      << "convolution algorithm " << name() << ": a residual applies to the forward only, not "
      << ConvDirectionName(direction);
  MX_CHECK(direction == ConvDirection::kForward || t.prepared_weight == nullptr)
      << "convolution algorithm " << name() << ": a prepared weight applies to the forward only, "
      << "not " << ConvDirectionName(direction);
  MX_CHECK(!(t.clamp_low > t.clamp_high))
      << "convolution algorithm " << name() << ": the output clamp's low bound " << t.clamp_low
      << " is above its high bound " << t.clamp_high;
}

std::unique_ptr<PreparedConvWeight> ConvAlgorithm::PrepareWeight(const ConvGeometry& geometry,
                                                                 const float* weight) const {
  MX_CHECK(Supports(geometry, ConvDirection::kForward))
      << "convolution algorithm " << name() << " (" << ActivationLayoutName(layout())
      << ") does not support forward on " << DescribeGeometry(geometry);
  MX_CHECK(weight != nullptr) << "convolution algorithm " << name()
                              << ": PrepareWeight needs the weight";
  return PrepareSupported(geometry, weight);
}

std::unique_ptr<PreparedConvWeight> ConvAlgorithm::PrepareSupported(const ConvGeometry&,
                                                                    const float*) const {
  return nullptr;
}

// The kernel stores sum + bias unclamped; the residual and then the clamp follow in one pass over
// the output, each thread on a contiguous slice.
template <typename T>
void ConvAlgorithm::RunWithResidual(const ConvGeometry& geometry, const ConvTensors<T>& tensors,
                                    ScratchSpace& scratch) const {
  ConvTensors<T> unclamped = tensors;
  unclamped.residual = nullptr;
  unclamped.clamp_low = -std::numeric_limits<T>::infinity();
  unclamped.clamp_high = std::numeric_limits<T>::infinity();
  RunChecked(ConvDirection::kForward, geometry, unclamped, scratch);
  const int64_t size = geometry.batch * geometry.out_channels * geometry.out_spatial();
  const T low = tensors.clamp_low, high = tensors.clamp_high;
  T* output = tensors.output;
  const T* residual = tensors.residual;
  constexpr int64_t kSlice = 16384;
  ParallelFor(CeilDiv(size, kSlice), [&](int64_t slice) {
    const int64_t end = std::min(size, (slice + 1) * kSlice);
    for (int64_t i = slice * kSlice; i < end; ++i) {
      output[i] = std::min(std::max(output[i] + residual[i], low), high);
    }
  });
}

template <typename T>
void ConvAlgorithm::RunAny(ConvDirection direction, const ConvGeometry& geometry,
                           const ConvTensors<T>& tensors, ScratchSpace& scratch) const {
  CheckCall(direction, geometry, tensors);
  if (tensors.residual != nullptr && !FusesResidual()) {
    RunWithResidual(geometry, tensors, scratch);
    return;
  }
  RunChecked(direction, geometry, tensors, scratch);
}

void ConvAlgorithm::Run(ConvDirection direction, const ConvGeometry& geometry,
                        const ConvTensors<float>& tensors, ScratchSpace& scratch) const {
  RunAny(direction, geometry, tensors, scratch);
}

void ConvAlgorithm::Run(ConvDirection direction, const ConvGeometry& geometry,
                        const ConvTensors<double>& tensors, ScratchSpace& scratch) const {
  RunAny(direction, geometry, tensors, scratch);
}

namespace {

bool LayoutMatches(const ConvGeometry& g, ConvLayout layout) { return g.layout == layout; }

// im2col_gemm (NCHW) and im2row_gemm (NHWC): the lowering + GEMM paths of conv_gemm.h, as is.
class LoweringAlgorithm final : public ConvAlgorithmBase<LoweringAlgorithm> {
 public:
  explicit LoweringAlgorithm(ConvLayout layout) : layout_(layout) {}

  std::string_view name() const override {
    return layout_ == ConvLayout::kNHWC ? "im2row_gemm" : "im2col_gemm";
  }
  ConvLayout layout() const override { return layout_; }
  bool FusesResidual() const override { return true; }
  bool HasDirection(ConvDirection) const override { return true; }
  bool Supports(const ConvGeometry& g, ConvDirection) const override {
    return IsValidConvGeometry(g) && LayoutMatches(g, layout_);
  }
  std::unique_ptr<PreparedConvWeight> PrepareSupported(const ConvGeometry& g,
                                                       const float* weight) const override {
    return PrepareGemmWeight(g, weight);
  }
  // Mirrors conv_gemm.cc: one lowered matrix per image lane, and for the filter gradient one
  // partial weight sum per lane beyond the first.
  size_t WorkspaceBytes(const ConvGeometry& g, ConvDirection direction,
                        DType dtype) const override {
    WorkspaceTally tally(dtype);
    if (!Supports(g, direction)) return 0;
    const int64_t lanes = std::max<int64_t>(1, std::min<int64_t>(IntraOpThreads(), g.batch));
    if (direction == ConvDirection::kBackwardFilter) {
      if (g.batch == 0) return 0;
      tally.Add(lanes * g.lowered_size());
      tally.Add((lanes - 1) * g.out_channels * g.patch_size());
    } else {
      tally.Add(lanes * g.lowered_size());
    }
    return tally.bytes();
  }

  template <typename T>
  void Compute(ConvDirection direction, const ConvGeometry& g, const ConvTensors<T>& t,
               ScratchSpace& scratch) const {
    switch (direction) {
      case ConvDirection::kForward: {
        Epilogue<T> clamp_and_residual = t.OutputClamp();
        clamp_and_residual.residual = t.residual;
        ConvolutionForwardGemm<T>(g, t.data, t.weight, t.bias, t.output, scratch,
                                  clamp_and_residual, t.prepared_weight);
        break;
      }
      case ConvDirection::kBackwardData:
        ConvolutionBackwardDataGemm<T>(g, t.output_grad, t.weight, t.data_grad, scratch);
        break;
      case ConvDirection::kBackwardFilter:
        ConvolutionBackwardWeightGemm<T>(g, t.data, t.output_grad, t.weight_grad, scratch);
        break;
    }
  }

 private:
  ConvLayout layout_;
};

// gemm_1x1: with a 1x1 kernel, stride 1 and no padding the lowered matrix is the image itself.
//   NCHW, per image and group:  Y (O/G x HW) = W (O/G x C/G) * X (C/G x HW)
//   NHWC, whole batch per group: Y (NHW x O/G) = X (NHW x C/G) * W^T (C/G x O/G)
// (group blocks addressed through the GEMM's leading dimensions). The GEMMs use the intra-op pool.
class Gemm1x1Algorithm final : public ConvAlgorithmBase<Gemm1x1Algorithm> {
 public:
  explicit Gemm1x1Algorithm(ConvLayout layout) : layout_(layout) {}

  std::string_view name() const override { return "gemm_1x1"; }
  ConvLayout layout() const override { return layout_; }
  bool FusesResidual() const override { return true; }
  bool HasDirection(ConvDirection) const override { return true; }
  bool Supports(const ConvGeometry& g, ConvDirection) const override {
    return IsValidConvGeometry(g) && LayoutMatches(g, layout_) && g.kernel_h == 1 &&
           g.kernel_w == 1 && g.stride_h == 1 && g.stride_w == 1 && g.pad_h == 0 && g.pad_w == 0 &&
           g.out_h == g.in_h && g.out_w == g.in_w;
  }
  size_t WorkspaceBytes(const ConvGeometry&, ConvDirection, DType) const override { return 0; }
  // The weight matrices are those of the lowering paths (the patch is C/G).
  std::unique_ptr<PreparedConvWeight> PrepareSupported(const ConvGeometry& g,
                                                       const float* weight) const override {
    return PrepareGemmWeight(g, weight);
  }

  template <typename T>
  void Compute(ConvDirection direction, const ConvGeometry& g, const ConvTensors<T>& t,
               ScratchSpace&) const {
    if (direction == ConvDirection::kBackwardFilter && g.batch == 0) {
      std::fill(t.weight_grad, t.weight_grad + g.out_channels * g.in_channels_per_group(), T(0));
      return;
    }
    if (layout_ == ConvLayout::kNHWC) {
      ComputeNHWC(direction, g, t);
    } else {
      ComputeNCHW(direction, g, t);
    }
  }

 private:
  template <typename T>
  static void ComputeNCHW(ConvDirection direction, const ConvGeometry& g, const ConvTensors<T>& t) {
    const int64_t hw = g.in_spatial(), cg = g.in_channels_per_group();
    const int64_t og = g.out_channels_per_group();
    for (int64_t n = 0; n < g.batch; ++n) {
      for (int64_t group = 0; group < g.groups; ++group) {
        const int64_t x_offset = (n * g.in_channels + group * cg) * hw;
        const int64_t y_offset = (n * g.out_channels + group * og) * hw;
        const int64_t w_offset = group * og * cg;
        switch (direction) {
          case ConvDirection::kForward: {
            Epilogue<T> epilogue = t.OutputClamp();
            if (t.bias != nullptr) epilogue.row_bias = t.bias + group * og;
            if (t.residual != nullptr) {
              epilogue.residual = t.residual + y_offset;
              epilogue.residual_stride = hw;
            }
            if constexpr (std::is_same_v<T, float>) {
              if (t.prepared_weight != nullptr) {
                Sgemm(PreparedGemmGroup(*t.prepared_weight, g, group), Transpose::kNo, hw, 1.0f,
                      t.data + x_offset, hw, 0.0f, t.output + y_offset, hw, epilogue);
                break;
              }
            }
            Gemm<T>(Transpose::kNo, Transpose::kNo, og, hw, cg, T(1), t.weight + w_offset, cg,
                    t.data + x_offset, hw, T(0), t.output + y_offset, hw, epilogue);
            break;
          }
          case ConvDirection::kBackwardData:
            Gemm<T>(Transpose::kYes, Transpose::kNo, cg, hw, og, T(1), t.weight + w_offset, cg,
                    t.output_grad + y_offset, hw, T(0), t.data_grad + x_offset, hw);
            break;
          case ConvDirection::kBackwardFilter:  // summed over images in order: deterministic
            Gemm<T>(Transpose::kNo, Transpose::kYes, og, cg, hw, T(1), t.output_grad + y_offset, hw,
                    t.data + x_offset, hw, n == 0 ? T(0) : T(1), t.weight_grad + w_offset, cg);
            break;
        }
      }
    }
  }

  template <typename T>
  static void ComputeNHWC(ConvDirection direction, const ConvGeometry& g, const ConvTensors<T>& t) {
    const int64_t rows = g.batch * g.in_spatial(), cg = g.in_channels_per_group();
    const int64_t og = g.out_channels_per_group(), c = g.in_channels, o = g.out_channels;
    for (int64_t group = 0; group < g.groups; ++group) {
      const T* w = t.weight + group * og * cg;
      switch (direction) {
        case ConvDirection::kForward: {
          Epilogue<T> epilogue = t.OutputClamp();
          if (t.bias != nullptr) epilogue.column_bias = t.bias + group * og;
          if (t.residual != nullptr) {
            epilogue.residual = t.residual + group * og;
            epilogue.residual_stride = o;
          }
          if constexpr (std::is_same_v<T, float>) {
            if (t.prepared_weight != nullptr) {
              Sgemm(Transpose::kNo, rows, 1.0f, t.data + group * cg, c,
                    PreparedGemmGroup(*t.prepared_weight, g, group), 0.0f, t.output + group * og, o,
                    epilogue);
              break;
            }
          }
          Gemm<T>(Transpose::kNo, Transpose::kYes, rows, og, cg, T(1), t.data + group * cg, c, w,
                  cg, T(0), t.output + group * og, o, epilogue);
          break;
        }
        case ConvDirection::kBackwardData:
          Gemm<T>(Transpose::kNo, Transpose::kNo, rows, cg, og, T(1), t.output_grad + group * og, o,
                  w, cg, T(0), t.data_grad + group * cg, c);
          break;
        case ConvDirection::kBackwardFilter:
          Gemm<T>(Transpose::kYes, Transpose::kNo, og, cg, rows, T(1), t.output_grad + group * og,
                  o, t.data + group * cg, c, T(0), t.weight_grad + group * og * cg, cg);
          break;
      }
    }
  }

  ConvLayout layout_;
};

}  // namespace

const float* PreparedReorderedWeight(const ConvGeometry& g, const ConvTensors<float>& t,
                                     int64_t size, std::string_view algorithm) {
  if (t.prepared_weight == nullptr) return nullptr;
  MX_CHECK(static_cast<int64_t>(t.prepared_weight->reordered.size()) == size)
      << "a prepared " << algorithm << " weight of " << t.prepared_weight->reordered.size()
      << " elements does not fit " << DescribeGeometry(g);
  return t.prepared_weight->reordered.data();
}

const std::vector<const ConvAlgorithm*>& CpuConvAlgorithms() {
  static const LoweringAlgorithm im2col(ConvLayout::kNCHW), im2row(ConvLayout::kNHWC);
  static const Gemm1x1Algorithm gemm_1x1_nchw(ConvLayout::kNCHW), gemm_1x1_nhwc(ConvLayout::kNHWC);
  static const std::vector<const ConvAlgorithm*> all = {
      &im2col,
      &im2row,
      &gemm_1x1_nchw,
      &gemm_1x1_nhwc,
      &Winograd2x2Algorithm(),
      &Winograd4x4Algorithm(),
      &DepthwiseAlgorithm(ConvLayout::kNCHW),
      &DepthwiseAlgorithm(ConvLayout::kNHWC),
      &DirectNchwAlgorithm(),
      &DirectNhwcAlgorithm(),
      &DirectNchw16cAlgorithm(),
      &DepthwiseNchw16cAlgorithm(),
      &GroupedNchw16cAlgorithm(),
      &GroupedNhwcAlgorithm(),
  };
  return all;
}

const ConvAlgorithm* FindCpuConvAlgorithm(std::string_view name, ConvLayout layout) {
  for (const ConvAlgorithm* algorithm : CpuConvAlgorithms()) {
    if (algorithm->name() == name && algorithm->layout() == layout) return algorithm;
  }
  return nullptr;
}

}  // namespace mxlite::cpu
