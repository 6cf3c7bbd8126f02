// Winograd F(2x2,3x3) and F(4x4,3x3) (Lavin & Gray, "Fast Algorithms for Convolutional Neural
// Networks", 2015) for NCHW, 3x3 kernels, stride 1, dilation 1, any padding and groups.
//
// With m the output tile, alpha = m + 2 the input tile, P = batch * tiles (all images together,
// so the GEMMs are wide), K output and C input channels:
//   U[xi][k][c] = (G g[k][c] G^T)[xi]                    weight transform   alpha^2 x K x C/G
//   V[xi][c][p] = (B^T d[c][p] B)[xi]                    input transform    alpha^2 x C x P
//   M[xi] (K/G x P) = U[xi] (K/G x C/G) * V[xi] (C/G x P) per group: alpha^2 * G GEMMs (Gemm<T>)
//   Y[k][tile p] = A^T M[.][k][p] A                      output transform (m x m, clipped)
// Input tiles read zeros outside the image, so padding and output sizes that are not multiples of
// m need no special case. The data gradient is the forward of the flipped, channel-transposed
// kernel over the output gradient with padding 2 - pad (so pad <= 2); the AVX2 kernel reads the
// weights flipped in place, the portable path flips them into scratch first.
// float32 on a CPU with AVX2+FMA runs the fused, tile-blocked kernel of conv_winograd_avx2.h (same
// math, U packed for the GEMM micro-kernel, V and M per 16-tile block in cache; an inference
// executor keeps U across calls: PrepareWeight). The phases below
// are the portable path (float64, other CPUs): each runs over the intra-op pool; the GEMMs run one
// per task (single-threaded inside).
#include <algorithm>
#include <type_traits>

#include "ops/cpu/blas.h"
#include "ops/cpu/conv_algorithms.h"
#include "ops/cpu/conv_winograd_avx2.h"
#include "ops/cpu/parallel.h"
#include "ops/cpu/winograd_matrices.h"

namespace mxlite::cpu {
namespace {

// The sizes of one Winograd problem.
template <int M>
struct WinogradPlan {
  static constexpr int kAlpha = M + 2, kPositions = kAlpha * kAlpha;
  int64_t tiles_h, tiles_w, tiles;  // tiles = batch * tiles_h * tiles_w (the GEMMs' width)

  explicit WinogradPlan(const ConvGeometry& g)
      : tiles_h((g.out_h + M - 1) / M),
        tiles_w((g.out_w + M - 1) / M),
        tiles(g.batch * tiles_h * tiles_w) {}
  int64_t u_size(const ConvGeometry& g) const {
    return kPositions * g.out_channels * g.in_channels_per_group();
  }
  int64_t v_size(const ConvGeometry& g) const { return kPositions * g.in_channels * tiles; }
  int64_t m_size(const ConvGeometry& g) const { return kPositions * g.out_channels * tiles; }
};

// U = G g G^T for every (k, c) of the weight (K, C/G, 3, 3); U[xi][k][c].
template <typename T, int M>
void TransformWeights(const ConvGeometry& g, const T* weight, T* u) {
  using W = WinogradMatrices<M>;
  constexpr int A = M + 2;
  const int64_t cg = g.in_channels_per_group(), kc = g.out_channels * cg;
  ParallelFor(g.out_channels, [&](int64_t k) {
    for (int64_t c = 0; c < cg; ++c) {
      const T* f = weight + (k * cg + c) * 9;
      T gf[A][3];  // G * f
      for (int i = 0; i < A; ++i) {
        for (int j = 0; j < 3; ++j) {
          gf[i][j] = T(W::kG[i][0]) * f[j] + T(W::kG[i][1]) * f[3 + j] + T(W::kG[i][2]) * f[6 + j];
        }
      }
      for (int i = 0; i < A; ++i) {
        for (int j = 0; j < A; ++j) {
          const T value =
              gf[i][0] * T(W::kG[j][0]) + gf[i][1] * T(W::kG[j][1]) + gf[i][2] * T(W::kG[j][2]);
          u[(i * A + j) * kc + k * cg + c] = value;
        }
      }
    }
  });
}

// V[xi][c][p] = B^T d B for every input tile d (alpha x alpha, zeros outside the image).
template <typename T, int M>
void TransformInput(const ConvGeometry& g, const WinogradPlan<M>& plan, const T* data, T* v) {
  using W = WinogradMatrices<M>;
  constexpr int A = M + 2;
  const int64_t channels = g.in_channels, cp = channels * plan.tiles;
  ParallelFor(g.batch * channels, [&](int64_t plane) {
    const int64_t n = plane / channels, c = plane % channels;
    const T* image = data + plane * g.in_spatial();
    for (int64_t ty = 0; ty < plan.tiles_h; ++ty) {
      for (int64_t tx = 0; tx < plan.tiles_w; ++tx) {
        const int64_t y0 = ty * M - g.pad_h, x0 = tx * M - g.pad_w;
        T d[A][A];
        for (int i = 0; i < A; ++i) {
          const int64_t y = y0 + i;
          for (int j = 0; j < A; ++j) {
            const int64_t x = x0 + j;
            const bool inside = y >= 0 && y < g.in_h && x >= 0 && x < g.in_w;
            d[i][j] = inside ? image[y * g.in_w + x] : T(0);
          }
        }
        T bd[A][A];  // B^T d
        for (int i = 0; i < A; ++i) {
          for (int j = 0; j < A; ++j) {
            T sum = 0;
            for (int k = 0; k < A; ++k) sum += T(W::kBT[i][k]) * d[k][j];
            bd[i][j] = sum;
          }
        }
        const int64_t p = (n * plan.tiles_h + ty) * plan.tiles_w + tx;
        T* out = v + c * plan.tiles + p;
        for (int i = 0; i < A; ++i) {
          for (int j = 0; j < A; ++j) {
            T sum = 0;
            for (int k = 0; k < A; ++k) sum += bd[i][k] * T(W::kBT[j][k]);
            out[(i * A + j) * cp] = sum;
          }
        }
      }
    }
  });
}

// Y = clamp(A^T m A + bias) for every tile, clipped to the output.
template <typename T, int M>
void TransformOutput(const ConvGeometry& g, const WinogradPlan<M>& plan, const T* m_buffer,
                     const T* bias, const Epilogue<T>& clamp, T* output) {
  using W = WinogradMatrices<M>;
  constexpr int A = M + 2;
  const int64_t channels = g.out_channels, kp = channels * plan.tiles;
  ParallelFor(g.batch * channels, [&](int64_t plane) {
    const int64_t n = plane / channels, k = plane % channels;
    const T offset = bias != nullptr ? bias[k] : T(0);
    T* image = output + plane * g.out_spatial();
    for (int64_t ty = 0; ty < plan.tiles_h; ++ty) {
      for (int64_t tx = 0; tx < plan.tiles_w; ++tx) {
        const int64_t p = (n * plan.tiles_h + ty) * plan.tiles_w + tx;
        const T* in = m_buffer + k * plan.tiles + p;
        T mt[A][A];
        for (int i = 0; i < A; ++i) {
          for (int j = 0; j < A; ++j) mt[i][j] = in[(i * A + j) * kp];
        }
        T am[M][A];  // A^T m
        for (int i = 0; i < M; ++i) {
          for (int j = 0; j < A; ++j) {
            T sum = 0;
            for (int q = 0; q < A; ++q) sum += T(W::kAT[i][q]) * mt[q][j];
            am[i][j] = sum;
          }
        }
        const int64_t rows = std::min<int64_t>(M, g.out_h - ty * M);
        const int64_t cols = std::min<int64_t>(M, g.out_w - tx * M);
        for (int64_t i = 0; i < rows; ++i) {
          T* row = image + (ty * M + i) * g.out_w + tx * M;
          for (int64_t j = 0; j < cols; ++j) {
            T sum = offset;
            for (int q = 0; q < A; ++q) sum += am[i][q] * T(W::kAT[j][q]);
            row[j] = clamp.Apply(sum, 0, 0);
          }
        }
      }
    }
  });
}

template <typename T, int M>
void WinogradForward(const ConvGeometry& g, const T* data, const T* weight, const T* bias,
                     T* output, ScratchSpace& scratch, const Epilogue<T>& clamp = {}) {
  const WinogradPlan<M> plan(g);
  constexpr int64_t kPositions = WinogradPlan<M>::kPositions;
  T* u = scratch.GetArray<T>(plan.u_size(g));
  T* v = scratch.GetArray<T>(plan.v_size(g));
  T* m_buffer = scratch.GetArray<T>(plan.m_size(g));
  if (plan.tiles == 0) return;
  TransformWeights<T, M>(g, weight, u);
  TransformInput<T, M>(g, plan, data, v);
  const int64_t cg = g.in_channels_per_group(), kg = g.out_channels_per_group();
  const int64_t kc = g.out_channels * cg, p = plan.tiles;
  ParallelFor(kPositions * g.groups, [&](int64_t task) {
    const int64_t xi = task / g.groups, group = task % g.groups;
    Gemm<T>(Transpose::kNo, Transpose::kNo, kg, p, cg, T(1), u + xi * kc + group * kg * cg, cg,
            v + (xi * g.in_channels + group * cg) * p, p, T(0),
            m_buffer + (xi * g.out_channels + group * kg) * p, p);
  });
  TransformOutput<T, M>(g, plan, m_buffer, bias, clamp, output);
}

// The forward problem whose output is the data gradient of `g`.
ConvGeometry BackwardDataGeometry(const ConvGeometry& g) {
  ConvGeometry t = g;
  t.in_channels = g.out_channels;
  t.out_channels = g.in_channels;
  t.in_h = g.out_h;
  t.in_w = g.out_w;
  t.out_h = g.in_h;
  t.out_w = g.in_w;
  t.pad_h = 2 - g.pad_h;
  t.pad_w = 2 - g.pad_w;
  return t;
}

// weight (K, C/G, 3, 3) -> flipped (C, K/G, 3, 3): flipped[c][k'] = weight[k][c'] rotated 180.
template <typename T>
void FlipTransposeWeights(const ConvGeometry& g, const T* weight, T* flipped) {
  const int64_t cg = g.in_channels_per_group(), kg = g.out_channels_per_group();
  for (int64_t group = 0; group < g.groups; ++group) {
    for (int64_t c = 0; c < cg; ++c) {
      for (int64_t k = 0; k < kg; ++k) {
        const T* from = weight + ((group * kg + k) * cg + c) * 9;
        T* to = flipped + ((group * cg + c) * kg + k) * 9;
        for (int tap = 0; tap < 9; ++tap) to[tap] = from[8 - tap];
      }
    }
  }
}

template <int M>
class WinogradAlgorithm final : public ConvAlgorithmBase<WinogradAlgorithm<M>> {
 public:
  std::string_view name() const override {
    return M == 2 ? "winograd_2x2_3x3" : "winograd_4x4_3x3";
  }
  ConvLayout layout() const override { return ConvLayout::kNCHW; }
  bool HasDirection(ConvDirection direction) const override {
    return direction != ConvDirection::kBackwardFilter;
  }
  bool Supports(const ConvGeometry& g, ConvDirection direction) const override {
    const bool shape = IsValidConvGeometry(g) && g.layout == ConvLayout::kNCHW && g.kernel_h == 3 &&
                       g.kernel_w == 3 && g.stride_h == 1 && g.stride_w == 1 && g.dilate_h == 1 &&
                       g.dilate_w == 1;
    if (!shape) return false;
    if (direction == ConvDirection::kForward) return true;
    return direction == ConvDirection::kBackwardData && g.pad_h <= 2 && g.pad_w <= 2;
  }
  size_t WorkspaceBytes(const ConvGeometry& g, ConvDirection direction,
                        DType dtype) const override {
    if (!Supports(g, direction)) return 0;
    const bool backward = direction == ConvDirection::kBackwardData;
    const ConvGeometry forward = backward ? BackwardDataGeometry(g) : g;
    // The AVX2 kernel reads flipped weights in place; the portable path flips them into scratch.
    if (UsesAvx2Kernel(dtype)) return detail::WinogradAvx2WorkspaceBytes<M>(forward);
    WorkspaceTally tally(dtype);
    if (backward) tally.Add(g.in_channels * g.out_channels_per_group() * 9);
    const WinogradPlan<M> plan(forward);
    tally.Add(plan.u_size(forward));
    tally.Add(plan.v_size(forward));
    tally.Add(plan.m_size(forward));
    return tally.bytes();
  }

  // float32 on an AVX2+FMA CPU runs the fused kernel of conv_winograd_avx2.h; float64 (and
  // float32 elsewhere) the portable phases above.
  static bool UsesAvx2Kernel(DType dtype) {
    return dtype == DType::kFloat32 && detail::WinogradAvx2Available();
  }

  // The fused kernel's U, transformed once: when every call computes it, the transform takes 15%
  // of ResNet-18's pass at batch 1 (perf), reading the 3x3 weight and writing four times as
  // many floats (F(4x4, 3x3)) for the products to read back.
  std::unique_ptr<PreparedConvWeight> PrepareSupported(const ConvGeometry& g,
                                                       const float* weight) const override {
    if (!UsesAvx2Kernel(DType::kFloat32)) return nullptr;
    auto prepared = std::make_unique<PreparedConvWeight>();
    prepared->reordered.resize(static_cast<size_t>(detail::WinogradAvx2TransformedWeightSize<M>(g)));
    detail::WinogradAvx2TransformWeight<M>(g, weight, detail::WinogradWeights::kAsGiven,
                                           prepared->reordered.data());
    return prepared;
  }

  // The prepared U of the forward call `t` on g, or null when it has none.
  const float* TransformedWeight(const ConvGeometry& g, const ConvTensors<float>& t) const {
    if (t.prepared_weight == nullptr) return nullptr;
    const int64_t size = detail::WinogradAvx2TransformedWeightSize<M>(g);
    MX_CHECK(static_cast<int64_t>(t.prepared_weight->reordered.size()) == size)
        << "convolution algorithm " << name() << ": a prepared weight of "
        << t.prepared_weight->reordered.size() << " floats does not fit " << DescribeGeometry(g)
        << " (its transformed weight has " << size << ")";
    return t.prepared_weight->reordered.data();
  }

  template <typename T>
  void Compute(ConvDirection direction, const ConvGeometry& g, const ConvTensors<T>& t,
               ScratchSpace& scratch) const {
    const bool backward = direction == ConvDirection::kBackwardData;
    if constexpr (std::is_same_v<T, float>) {
      if (UsesAvx2Kernel(DType::kFloat32)) {
        if (backward) {
          detail::WinogradForwardAvx2<M>(BackwardDataGeometry(g), t.output_grad, t.weight, nullptr,
                                         t.data_grad, scratch,
                                         detail::WinogradWeights::kFlippedTransposed);
        } else {
          detail::WinogradForwardAvx2<M>(g, t.data, t.weight, t.bias, t.output, scratch,
                                         detail::WinogradWeights::kAsGiven, t.OutputClamp(),
                                         TransformedWeight(g, t));
        }
        return;
      }
    }
    if (!backward) {
      WinogradForward<T, M>(g, t.data, t.weight, t.bias, t.output, scratch, t.OutputClamp());
      return;
    }
    T* flipped = scratch.GetArray<T>(g.in_channels * g.out_channels_per_group() * 9);
    FlipTransposeWeights(g, t.weight, flipped);
    WinogradForward<T, M>(BackwardDataGeometry(g), t.output_grad, flipped, nullptr, t.data_grad,
                          scratch);
  }
};

}  // namespace

const ConvAlgorithm& Winograd2x2Algorithm() {
  static const WinogradAlgorithm<2> algorithm;
  return algorithm;
}

const ConvAlgorithm& Winograd4x4Algorithm() {
  static const WinogradAlgorithm<4> algorithm;
  return algorithm;
}

}  // namespace mxlite::cpu
