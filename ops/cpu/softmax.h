// Softmax and log-softmax along one axis, shared by the Softmax, LogSoftmax and SoftmaxOutput ops.
//
// The tensor is seen as (outer, length, inner) around the axis; element (o, l, i) is at
// (o * length + l) * inner + i. With z = x / temperature:
//   softmax:     y = exp(z - max(z)) / sum(exp(z - max(z)))
//   log-softmax: y = z - max(z) - log(sum(exp(z - max(z))))
// Subtracting the max keeps exp from overflowing. Backward is written in terms of the output y:
//   softmax:     dx = y * (dy - sum(dy * y)) / temperature
//   log-softmax: dx = (dy - exp(y) * sum(dy)) / temperature
// x and y may be the same buffer (in place), as may dy and dx. Work runs on the intra-op pool;
// the functions are reentrant.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "ops/cpu/elementwise.h"
#include "ops/cpu/parallel.h"
#include "ops/cpu/vector_math.h"

namespace mxlite::cpu {

struct SoftmaxLayout {
  int64_t outer = 1, length = 1, inner = 1;
};

namespace softmax_detail {

// Strided rows (inner > 1) are processed this many columns at a time.
inline constexpr int64_t kColumns = 64;

// fn(base, width) for every block of up to kColumns strided rows: element l of column j is at
// base + l * inner + j.
template <typename Fn>
void ForEachColumnBlock(const SoftmaxLayout& l, Fn&& fn) {
  const int64_t blocks_per_outer = (l.inner + kColumns - 1) / kColumns;
  ForEachRowRange(l.outer * blocks_per_outer, l.length * kColumns, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t o = item / blocks_per_outer;
      const int64_t i0 = (item % blocks_per_outer) * kColumns;
      fn(o * l.length * l.inner + i0, std::min(kColumns, l.inner - i0));
    }
  });
}

// float rows at the CPU's vector width (ops/cpu/vector_math.h): Eigen's exp runs 4 wide on the
// baseline build, and attention's softmax (ViT: 12 heads x 197 x 197 per layer) was 6% of a pass.
// Probabilities under the smallest normal float are written as 0: no denormals computed here or
// read by the GEMM after. A softmax row is one kernel at the vector width (SoftmaxRowFloats).
inline void ForwardContiguousFloat(const SoftmaxLayout& l, const float* x, float* y,
                                   float temperature, bool log) {
  ForEachRowRange(l.outer, l.length, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      const float* in = x + o * l.length;
      float* out = y + o * l.length;
      if (temperature != 1.0f) {
        EigenArray<float>(out, l.length) = EigenArray<const float>(in, l.length) / temperature;
        in = out;
      }
      if (log) {
        const float max = EigenArray<const float>(in, l.length).maxCoeff();
        const float log_sum = std::log(ExpShiftedSumFloats(in, max, nullptr, l.length));
        EigenArray<float>(out, l.length) = EigenArray<const float>(in, l.length) - (max + log_sum);
      } else {
        SoftmaxRowFloats(in, out, l.length);
      }
    }
  });
}

template <typename T>
void ForwardContiguous(const SoftmaxLayout& l, const T* x, T* y, T temperature, bool log) {
  if constexpr (std::is_same_v<T, float>) {
    return ForwardContiguousFloat(l, x, y, temperature, log);
  }
  ForEachRowRange(l.outer, l.length, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      auto in = EigenArray<const T>(x + o * l.length, l.length);
      auto out = EigenArray<T>(y + o * l.length, l.length);
      const T max = (in / temperature).maxCoeff();
      if (log) {
        const T log_sum = std::log(((in / temperature) - max).exp().sum());
        out = in / temperature - (max + log_sum);
      } else {
        out = ((in / temperature) - max).exp();
        out /= out.sum();
      }
    }
  });
}

template <typename T>
void ForwardStrided(const SoftmaxLayout& l, const T* x, T* y, T temperature, bool log) {
  ForEachColumnBlock(l, [&](int64_t base, int64_t width) {
    T max[kColumns], sum[kColumns];
    std::fill(max, max + width, -std::numeric_limits<T>::infinity());
    std::fill(sum, sum + width, T(0));
    for (int64_t k = 0; k < l.length; ++k) {
      const T* row = x + base + k * l.inner;
      for (int64_t j = 0; j < width; ++j) max[j] = std::max(max[j], row[j] / temperature);
    }
    for (int64_t k = 0; k < l.length; ++k) {
      const T* row = x + base + k * l.inner;
      T* out = y + base + k * l.inner;
      for (int64_t j = 0; j < width; ++j) {
        const T shifted = row[j] / temperature - max[j];
        // float: e^x under the smallest normal float is 0, never a computed denormal (as
        // ExpShiftedSumFloats does on contiguous rows).
        T e;
        if constexpr (std::is_same_v<T, float>) {
          e = shifted < kLnSmallestNormalFloat ? 0.0f : std::exp(shifted);
          if (e < std::numeric_limits<float>::min()) e = 0.0f;
        } else {
          e = std::exp(shifted);
        }
        sum[j] += e;
        if (!log) out[j] = e;  // log-softmax still needs x in the last pass (x may be y)
      }
    }
    for (int64_t k = 0; k < l.length; ++k) {
      const T* row = x + base + k * l.inner;
      T* out = y + base + k * l.inner;
      for (int64_t j = 0; j < width; ++j) {
        out[j] = log ? row[j] / temperature - (max[j] + std::log(sum[j])) : out[j] / sum[j];
        if constexpr (std::is_same_v<T, float>) {  // probabilities as on contiguous rows
          if (!log && out[j] < std::numeric_limits<float>::min()) out[j] = 0.0f;
        }
      }
    }
  });
}

template <typename T>
void BackwardContiguous(const SoftmaxLayout& l, const T* y, const T* dy, T* dx, T temperature,
                        bool log) {
  ForEachRowRange(l.outer, l.length, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      auto out = EigenArray<const T>(y + o * l.length, l.length);
      auto grad = EigenArray<const T>(dy + o * l.length, l.length);
      auto result = EigenArray<T>(dx + o * l.length, l.length);
      if (log) {
        const T sum = grad.sum();
        result = (grad - out.exp() * sum) / temperature;
      } else {
        const T sum = (grad * out).sum();
        result = out * (grad - sum) / temperature;
      }
    }
  });
}

template <typename T>
void BackwardStrided(const SoftmaxLayout& l, const T* y, const T* dy, T* dx, T temperature,
                     bool log) {
  ForEachColumnBlock(l, [&](int64_t base, int64_t width) {
    T sum[kColumns];
    std::fill(sum, sum + width, T(0));
    for (int64_t k = 0; k < l.length; ++k) {
      const int64_t row = base + k * l.inner;
      for (int64_t j = 0; j < width; ++j) sum[j] += log ? dy[row + j] : dy[row + j] * y[row + j];
    }
    for (int64_t k = 0; k < l.length; ++k) {
      const int64_t row = base + k * l.inner;
      for (int64_t j = 0; j < width; ++j) {
        const T out = y[row + j];
        dx[row + j] = (log ? dy[row + j] - std::exp(out) * sum[j] : out * (dy[row + j] - sum[j])) /
                      temperature;
      }
    }
  });
}

}  // namespace softmax_detail

template <typename T>
void SoftmaxForward(const SoftmaxLayout& layout, const T* x, T* y, double temperature, bool log) {
  if (layout.outer * layout.length * layout.inner == 0) return;
  if (layout.inner == 1) {
    softmax_detail::ForwardContiguous(layout, x, y, static_cast<T>(temperature), log);
  } else {
    softmax_detail::ForwardStrided(layout, x, y, static_cast<T>(temperature), log);
  }
}

template <typename T>
void SoftmaxBackward(const SoftmaxLayout& layout, const T* y, const T* dy, T* dx,
                     double temperature, bool log) {
  if (layout.outer * layout.length * layout.inner == 0) return;
  if (layout.inner == 1) {
    softmax_detail::BackwardContiguous(layout, y, dy, dx, static_cast<T>(temperature), log);
  } else {
    softmax_detail::BackwardStrided(layout, y, dy, dx, static_cast<T>(temperature), log);
  }
}

}  // namespace mxlite::cpu
