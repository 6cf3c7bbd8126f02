#include "ops/cpu/vector_math.h"

#include <algorithm>
#include <cmath>
#include <limits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "ops/cpu/avx512.h"
#include "ops/cpu/elementwise.h"
#include "ops/cpu/gemm.h"
#include "ops/cpu/gemm_kernel_avx2.h"

namespace mxlite::cpu {

namespace {

enum class Function { kExp, kSigmoid, kSilu, kGelu };

// Cephes' expf: e^x = 2^n * e^r with n = round(x / ln 2) and r = x - n ln 2 (ln 2 in two parts,
// so r is exact), e^r by a degree-6 polynomial. The clamp keeps n within what the scaling
// handles: below -104 every result is 0 (under the smallest denormal), above 89 infinity.
constexpr float kExpLowest = -104.0f;
constexpr float kExpHighest = 89.0f;
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2High = 0.693359375f;
constexpr float kLn2Low = -2.12194440e-4f;
constexpr float kP0 = 1.9875691500e-4f;
constexpr float kP1 = 1.3981999507e-3f;
constexpr float kP2 = 8.3334519073e-3f;
constexpr float kP3 = 4.1665795894e-2f;
constexpr float kP4 = 1.6666665459e-1f;
constexpr float kP5 = 5.0000001201e-1f;

// GELU as x/2 * erfc(-x / sqrt 2), erfc by the Chebyshev fit in Numerical Recipes (2nd ed., 6.2,
// "erfcc"): erfc(a) = t e^(-a^2 + P(t)) with t = 1 / (1 + a/2) for a >= 0, relative error under
// 1.2e-7 everywhere, and erfc(-a) = 2 - erfc(a). Writing it with erfc keeps the relative error
// small where x is very negative and 1 + erf(x / sqrt 2) cancels.
constexpr float kMinusSqrtHalf = -0.70710678118654752f;
constexpr float kErfc[10] = {-1.26551223f, 1.00002368f, 0.37409196f,  0.09678418f, -0.18628806f,
                             0.27886807f,  -1.13520398f, 1.48851587f, -0.82215223f, 0.17087277f};

// ---- Eigen: 4 wide on the baseline build ------------------------------------------------------

void ApplyEigen(Function f, const float* x, float* y, int64_t n) {
  auto in = EigenArray<const float>(x, n);
  auto out = EigenArray<float>(y, n);
  switch (f) {
    case Function::kExp:
      out = in.exp();
      break;
    case Function::kSigmoid:
      out = 1.0f / (1.0f + (-in).exp());
      break;
    case Function::kSilu:
      out = in * (1.0f / (1.0f + (-in).exp()));
      break;
    case Function::kGelu: {
      const Eigen::ArrayXf z = in * kMinusSqrtHalf;
      const Eigen::ArrayXf a = z.abs();
      const Eigen::ArrayXf t = 1.0f / (1.0f + 0.5f * a);
      Eigen::ArrayXf p = Eigen::ArrayXf::Constant(n, kErfc[9]);
      for (int i = 8; i >= 0; --i) p = p * t + kErfc[i];
      const Eigen::ArrayXf tail = t * (p - a * a).exp();
      out = 0.5f * in * (z < 0.0f).select(2.0f - tail, tail);
      break;
    }
  }
}

// The vector functions below (AVX-512 and AVX2) are each a chain of some 40 dependent
// instructions (about 140 cycles of latency for the GELU) of which a core's scheduler holds two
// or three iterations: one vector at a time keeps the FMA units idle most of the time. They take
// U independent vectors and issue every step for all U before the next (GCC does not interleave
// the calls itself): four at a time run the GELU 1.7x faster on the Cascade Lake Xeon box (1.65 ->
// 0.98 ns per float in L1), with the bits of one at a time. MXLITE_EACH(u) is the loop over the U
// vectors of one step.
#define MXLITE_EACH(u) _Pragma("GCC unroll 8") for (int u = 0; u < U; ++u)

#if MXLITE_HAS_AVX512_KERNEL

// ---- AVX-512F: 16 floats, 2^n by scalef (exact down through the denormals) --------------------

// The zero-masked forms with every lane on: the plain min, max, roundscale and scalef pass
// _mm512_undefined_ps() through, which GCC 12 reports as maybe-uninitialized.
constexpr __mmask16 kAllLanes = 0xFFFF;

template <int U>
MXLITE_AVX512 inline void Exp16(__m512* v) {
  __m512 n[U], r[U], p[U];
  // min / max with x second: NaN passes through.
  MXLITE_EACH(u) v[u] = _mm512_maskz_min_ps(kAllLanes, _mm512_set1_ps(kExpHighest), v[u]);
  MXLITE_EACH(u) v[u] = _mm512_maskz_max_ps(kAllLanes, _mm512_set1_ps(kExpLowest), v[u]);
  MXLITE_EACH(u) {
    n[u] = _mm512_maskz_roundscale_ps(kAllLanes, _mm512_mul_ps(v[u], _mm512_set1_ps(kLog2e)),
                                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  MXLITE_EACH(u) r[u] = _mm512_fnmadd_ps(n[u], _mm512_set1_ps(kLn2High), v[u]);
  MXLITE_EACH(u) r[u] = _mm512_fnmadd_ps(n[u], _mm512_set1_ps(kLn2Low), r[u]);
  MXLITE_EACH(u) p[u] = _mm512_set1_ps(kP0);
  for (const float c : {kP1, kP2, kP3, kP4, kP5}) {
    MXLITE_EACH(u) p[u] = _mm512_fmadd_ps(p[u], r[u], _mm512_set1_ps(c));
  }
  MXLITE_EACH(u) {
    const __m512 e =
        _mm512_fmadd_ps(p[u], _mm512_mul_ps(r[u], r[u]), _mm512_add_ps(r[u], _mm512_set1_ps(1.0f)));
    v[u] = _mm512_maskz_scalef_ps(kAllLanes, e, n[u]);
  }
}

// x/2 * erfc(-x / sqrt 2) (see kErfc), in place.
template <int U>
MXLITE_AVX512 inline void Gelu16(__m512* v) {
  __m512 z[U], a[U], t[U], e[U];
  MXLITE_EACH(u) z[u] = _mm512_mul_ps(v[u], _mm512_set1_ps(kMinusSqrtHalf));
  MXLITE_EACH(u) a[u] = _mm512_abs_ps(z[u]);
  MXLITE_EACH(u) {
    t[u] = _mm512_div_ps(_mm512_set1_ps(1.0f),
                         _mm512_fmadd_ps(a[u], _mm512_set1_ps(0.5f), _mm512_set1_ps(1.0f)));
  }
  MXLITE_EACH(u) e[u] = _mm512_set1_ps(kErfc[9]);
  for (int i = 8; i >= 0; --i) {
    MXLITE_EACH(u) e[u] = _mm512_fmadd_ps(e[u], t[u], _mm512_set1_ps(kErfc[i]));
  }
  MXLITE_EACH(u) e[u] = _mm512_fnmadd_ps(a[u], a[u], e[u]);
  Exp16<U>(e);
  MXLITE_EACH(u) {
    const __m512 tail = _mm512_mul_ps(t[u], e[u]);  // erfc(|z|)
    const __mmask16 negative = _mm512_cmp_ps_mask(z[u], _mm512_setzero_ps(), _CMP_LT_OQ);
    const __m512 erfc = _mm512_mask_sub_ps(tail, negative, _mm512_set1_ps(2.0f), tail);
    v[u] = _mm512_mul_ps(_mm512_mul_ps(v[u], _mm512_set1_ps(0.5f)), erfc);
  }
}

// kF of U vectors in place.
template <Function kF, int U>
MXLITE_AVX512 inline void Apply16(__m512* v) {
  if constexpr (kF == Function::kExp) {
    Exp16<U>(v);
  } else if constexpr (kF == Function::kGelu) {
    Gelu16<U>(v);
  } else {
    const __m512 one = _mm512_set1_ps(1.0f);
    __m512 s[U];
    MXLITE_EACH(u) s[u] = _mm512_sub_ps(_mm512_setzero_ps(), v[u]);
    Exp16<U>(s);
    MXLITE_EACH(u) s[u] = _mm512_div_ps(one, _mm512_add_ps(one, s[u]));
    if constexpr (kF == Function::kSigmoid) {
      MXLITE_EACH(u) v[u] = s[u];
    } else {
      MXLITE_EACH(u) v[u] = _mm512_mul_ps(v[u], s[u]);  // the bits of x * sigmoid(x) computed apart
    }
  }
}

template <Function kF>
MXLITE_AVX512 void Apply512(const float* x, float* y, int64_t n) {
  constexpr int kLockstep = 4;
  int64_t i = 0;
  for (; i + 16 * kLockstep <= n; i += 16 * kLockstep) {
    __m512 v[kLockstep];
    for (int u = 0; u < kLockstep; ++u) v[u] = _mm512_loadu_ps(x + i + 16 * u);
    Apply16<kF, kLockstep>(v);
    for (int u = 0; u < kLockstep; ++u) _mm512_storeu_ps(y + i + 16 * u, v[u]);
  }
  for (; i + 16 <= n; i += 16) {
    __m512 v = _mm512_loadu_ps(x + i);
    Apply16<kF, 1>(&v);
    _mm512_storeu_ps(y + i, v);
  }
  if (i < n) {
    const __mmask16 mask = static_cast<__mmask16>((1u << (n - i)) - 1);
    __m512 v = _mm512_maskz_loadu_ps(mask, x + i);
    Apply16<kF, 1>(&v);
    _mm512_mask_storeu_ps(y + i, mask, v);
  }
}

// e^x, or 0 where that is under the smallest normal float. Lanes under the bound compute e^0
// instead, so no lane computes a denormal (each would cost a microcode assist; raising them to the
// bound still did, 2^-126 times a mantissa just under 1).
template <int U>
MXLITE_AVX512 inline void ExpNormal16(__m512* v) {
  __mmask16 below[U];
  MXLITE_EACH(u) {
    below[u] = _mm512_cmp_ps_mask(v[u], _mm512_set1_ps(kLnSmallestNormalFloat), _CMP_LT_OQ);
  }
  MXLITE_EACH(u) v[u] = _mm512_mask_mov_ps(v[u], below[u], _mm512_setzero_ps());
  Exp16<U>(v);
  // Kept: x not under the bound and e not under the smallest normal (NaN passes both).
  MXLITE_EACH(u) {
    const __mmask16 normal =
        _mm512_cmp_ps_mask(v[u], _mm512_set1_ps(std::numeric_limits<float>::min()), _CMP_NLT_UQ);
    v[u] = _mm512_maskz_mov_ps(static_cast<__mmask16>(normal & ~below[u]), v[u]);
  }
}

// e^(x - shift) into y (when not null) and the sum of those values: lanes summed apart (each in
// the order of x, four vectors' exps computed together), then in a fixed order, so the same input
// gives the same bits.
MXLITE_AVX512 float ExpShiftedSum512(const float* x, float shift, float* y, int64_t n) {
  constexpr int kLockstep = 4;
  const __m512 shift_v = _mm512_set1_ps(shift);
  __m512 sum = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 16 * kLockstep <= n; i += 16 * kLockstep) {
    __m512 e[kLockstep];
    for (int u = 0; u < kLockstep; ++u) {
      e[u] = _mm512_sub_ps(_mm512_loadu_ps(x + i + 16 * u), shift_v);
    }
    ExpNormal16<kLockstep>(e);
    for (int u = 0; u < kLockstep; ++u) {
      if (y != nullptr) _mm512_storeu_ps(y + i + 16 * u, e[u]);
      sum = _mm512_add_ps(sum, e[u]);
    }
  }
  for (; i + 16 <= n; i += 16) {
    __m512 e = _mm512_sub_ps(_mm512_loadu_ps(x + i), shift_v);
    ExpNormal16<1>(&e);
    if (y != nullptr) _mm512_storeu_ps(y + i, e);
    sum = _mm512_add_ps(sum, e);
  }
  if (i < n) {
    const __mmask16 mask = static_cast<__mmask16>((1u << (n - i)) - 1);
    __m512 e = _mm512_sub_ps(_mm512_maskz_loadu_ps(mask, x + i), shift_v);
    ExpNormal16<1>(&e);
    if (y != nullptr) _mm512_mask_storeu_ps(y + i, mask, e);
    sum = _mm512_add_ps(sum, _mm512_maskz_mov_ps(mask, e));
  }
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sum);
  float total = 0.0f;
  for (float lane : lanes) total += lane;
  return total;
}

// The row's maximum, its exps and their sum (ExpShiftedSum512), then each divided by the sum and
// flushed under the smallest normal float: three passes at 16 wide.
MXLITE_AVX512 void SoftmaxRow512(const float* x, float* y, int64_t n) {
  __m512 max = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) max = _mm512_maskz_max_ps(kAllLanes, max, _mm512_loadu_ps(x + i));
  if (i < n) {
    const __mmask16 mask = static_cast<__mmask16>((1u << (n - i)) - 1);
    max = _mm512_mask_max_ps(max, mask, max, _mm512_maskz_loadu_ps(mask, x + i));
  }
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, max);
  float row_max = lanes[0];
  for (float lane : lanes) row_max = std::max(row_max, lane);
  const __m512 sum = _mm512_set1_ps(ExpShiftedSum512(x, row_max, y, n));
  const __m512 smallest = _mm512_set1_ps(std::numeric_limits<float>::min());
  for (i = 0; i + 16 <= n; i += 16) {
    const __m512 p = _mm512_div_ps(_mm512_loadu_ps(y + i), sum);
    _mm512_storeu_ps(y + i, _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(p, smallest, _CMP_NLT_UQ), p));
  }
  if (i < n) {
    const __mmask16 mask = static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512 p = _mm512_div_ps(_mm512_maskz_loadu_ps(mask, y + i), sum);
    _mm512_mask_storeu_ps(y + i, mask,
                          _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(p, smallest, _CMP_NLT_UQ), p));
  }
}

#endif  // MXLITE_HAS_AVX512_KERNEL

#if MXLITE_HAS_AVX2_KERNEL

// ---- AVX2 + FMA: 8 floats, 2^n as two powers built in the exponent bits ---------------------

MXLITE_AVX2 inline __m256 PowerOfTwo8(__m256i n) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n, _mm256_set1_epi32(127)), 23));
}

// U vectors in lockstep, as the AVX-512 functions (two: AVX2 has 16 registers).
template <int U>
MXLITE_AVX2 inline void Exp8(__m256* v) {
  __m256 n[U], r[U], p[U];
  MXLITE_EACH(u) v[u] = _mm256_min_ps(_mm256_set1_ps(kExpHighest), v[u]);
  MXLITE_EACH(u) v[u] = _mm256_max_ps(_mm256_set1_ps(kExpLowest), v[u]);
  MXLITE_EACH(u) {
    n[u] = _mm256_round_ps(_mm256_mul_ps(v[u], _mm256_set1_ps(kLog2e)),
                           _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  MXLITE_EACH(u) r[u] = _mm256_fnmadd_ps(n[u], _mm256_set1_ps(kLn2High), v[u]);
  MXLITE_EACH(u) r[u] = _mm256_fnmadd_ps(n[u], _mm256_set1_ps(kLn2Low), r[u]);
  MXLITE_EACH(u) p[u] = _mm256_set1_ps(kP0);
  for (const float c : {kP1, kP2, kP3, kP4, kP5}) {
    MXLITE_EACH(u) p[u] = _mm256_fmadd_ps(p[u], r[u], _mm256_set1_ps(c));
  }
  MXLITE_EACH(u) {
    const __m256 e =
        _mm256_fmadd_ps(p[u], _mm256_mul_ps(r[u], r[u]), _mm256_add_ps(r[u], _mm256_set1_ps(1.0f)));
    // n in [-150, 129]: 2^n as 2^half * 2^(n - half), each a normal float, so products into the
    // denormals round once per step and overflow reaches infinity.
    const __m256i whole = _mm256_cvtps_epi32(n[u]);
    const __m256i half = _mm256_srai_epi32(whole, 1);
    v[u] = _mm256_mul_ps(_mm256_mul_ps(e, PowerOfTwo8(half)),
                         PowerOfTwo8(_mm256_sub_epi32(whole, half)));
  }
}

template <int U>
MXLITE_AVX2 inline void Gelu8(__m256* v) {
  __m256 z[U], a[U], t[U], e[U];
  MXLITE_EACH(u) z[u] = _mm256_mul_ps(v[u], _mm256_set1_ps(kMinusSqrtHalf));
  MXLITE_EACH(u) a[u] = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), z[u]);
  MXLITE_EACH(u) {
    t[u] = _mm256_div_ps(_mm256_set1_ps(1.0f),
                         _mm256_fmadd_ps(a[u], _mm256_set1_ps(0.5f), _mm256_set1_ps(1.0f)));
  }
  MXLITE_EACH(u) e[u] = _mm256_set1_ps(kErfc[9]);
  for (int i = 8; i >= 0; --i) {
    MXLITE_EACH(u) e[u] = _mm256_fmadd_ps(e[u], t[u], _mm256_set1_ps(kErfc[i]));
  }
  MXLITE_EACH(u) e[u] = _mm256_fnmadd_ps(a[u], a[u], e[u]);
  Exp8<U>(e);
  MXLITE_EACH(u) {
    const __m256 tail = _mm256_mul_ps(t[u], e[u]);
    const __m256 negative = _mm256_cmp_ps(z[u], _mm256_setzero_ps(), _CMP_LT_OQ);
    const __m256 erfc = _mm256_blendv_ps(tail, _mm256_sub_ps(_mm256_set1_ps(2.0f), tail), negative);
    v[u] = _mm256_mul_ps(_mm256_mul_ps(v[u], _mm256_set1_ps(0.5f)), erfc);
  }
}

template <Function kF, int U>
MXLITE_AVX2 inline void Apply8(__m256* v) {
  if constexpr (kF == Function::kExp) {
    Exp8<U>(v);
  } else if constexpr (kF == Function::kGelu) {
    Gelu8<U>(v);
  } else {
    const __m256 one = _mm256_set1_ps(1.0f);
    __m256 s[U];
    MXLITE_EACH(u) s[u] = _mm256_sub_ps(_mm256_setzero_ps(), v[u]);
    Exp8<U>(s);
    MXLITE_EACH(u) s[u] = _mm256_div_ps(one, _mm256_add_ps(one, s[u]));
    if constexpr (kF == Function::kSigmoid) {
      MXLITE_EACH(u) v[u] = s[u];
    } else {
      MXLITE_EACH(u) v[u] = _mm256_mul_ps(v[u], s[u]);
    }
  }
}

template <Function kF>
MXLITE_AVX2 void Apply256(const float* x, float* y, int64_t n) {
  constexpr int kLockstep = 2;
  int64_t i = 0;
  for (; i + 8 * kLockstep <= n; i += 8 * kLockstep) {
    __m256 v[kLockstep];
    for (int u = 0; u < kLockstep; ++u) v[u] = _mm256_loadu_ps(x + i + 8 * u);
    Apply8<kF, kLockstep>(v);
    for (int u = 0; u < kLockstep; ++u) _mm256_storeu_ps(y + i + 8 * u, v[u]);
  }
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_loadu_ps(x + i);
    Apply8<kF, 1>(&v);
    _mm256_storeu_ps(y + i, v);
  }
  if (i < n) {  // the last few through a full vector, so they get the same bits as the rest
    alignas(32) float in[8] = {}, out[8];
    for (int64_t k = i; k < n; ++k) in[k - i] = x[k];
    __m256 v = _mm256_load_ps(in);
    Apply8<kF, 1>(&v);
    _mm256_store_ps(out, v);
    for (int64_t k = i; k < n; ++k) y[k] = out[k - i];
  }
}

// Exp8, or 0 where e^x is under the smallest normal float (as ExpNormal16).
MXLITE_AVX2 inline __m256 ExpNormal8(__m256 x) {
  const __m256 below = _mm256_cmp_ps(x, _mm256_set1_ps(kLnSmallestNormalFloat), _CMP_LT_OQ);
  __m256 e = _mm256_blendv_ps(x, _mm256_setzero_ps(), below);
  Exp8<1>(&e);
  const __m256 normal =
      _mm256_cmp_ps(e, _mm256_set1_ps(std::numeric_limits<float>::min()), _CMP_NLT_UQ);
  return _mm256_and_ps(_mm256_andnot_ps(below, normal), e);
}

MXLITE_AVX2 float ExpShiftedSum256(const float* x, float shift, float* y, int64_t n) {
  const __m256 shift_v = _mm256_set1_ps(shift);
  __m256 sum = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 e = ExpNormal8(_mm256_sub_ps(_mm256_loadu_ps(x + i), shift_v));
    if (y != nullptr) _mm256_storeu_ps(y + i, e);
    sum = _mm256_add_ps(sum, e);
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sum);
  float total = 0.0f;
  for (float lane : lanes) total += lane;
  for (; i < n; ++i) {  // the last few through a full vector, for the same bits as the rest
    alignas(32) float one[8] = {x[i] - shift};
    _mm256_store_ps(one, ExpNormal8(_mm256_load_ps(one)));
    if (y != nullptr) y[i] = one[0];
    total += one[0];
  }
  return total;
}

// SoftmaxRow512 at 8 wide: the tail's maxima and divisions one by one (the same bits).
MXLITE_AVX2 void SoftmaxRow256(const float* x, float* y, int64_t n) {
  __m256 max = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) max = _mm256_max_ps(max, _mm256_loadu_ps(x + i));
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, max);
  float row_max = lanes[0];
  for (float lane : lanes) row_max = std::max(row_max, lane);
  for (; i < n; ++i) row_max = std::max(row_max, x[i]);
  const float sum = ExpShiftedSum256(x, row_max, y, n);
  const __m256 sum_v = _mm256_set1_ps(sum);
  const __m256 smallest = _mm256_set1_ps(std::numeric_limits<float>::min());
  for (i = 0; i + 8 <= n; i += 8) {
    const __m256 p = _mm256_div_ps(_mm256_loadu_ps(y + i), sum_v);
    _mm256_storeu_ps(y + i, _mm256_and_ps(_mm256_cmp_ps(p, smallest, _CMP_NLT_UQ), p));
  }
  for (; i < n; ++i) {
    const float p = y[i] / sum;
    y[i] = p < std::numeric_limits<float>::min() ? 0.0f : p;
  }
}

#endif  // MXLITE_HAS_AVX2_KERNEL

#undef MXLITE_EACH

template <Function kF>
void ApplyWith(VectorIsa isa, const float* x, float* y, int64_t n) {
#if MXLITE_HAS_AVX512_KERNEL
  if (isa == VectorIsa::kAvx512) return Apply512<kF>(x, y, n);
#endif
#if MXLITE_HAS_AVX2_KERNEL
  if (isa == VectorIsa::kAvx2) return Apply256<kF>(x, y, n);
#endif
  ApplyEigen(kF, x, y, n);
}

template <Function kF>
void ApplySplit(const float* x, float* y, int64_t n) {
  const VectorIsa isa = BestVectorIsa();
  ForEachChunk(n, [&](int64_t begin, int64_t end) {
    ApplyWith<kF>(isa, x + begin, y + begin, end - begin);
  });
}

}  // namespace

VectorIsa BestVectorIsa() {
  static const VectorIsa best = CpuSupportsAvx512f()   ? VectorIsa::kAvx512
                                : CpuSupportsAvx2Fma() ? VectorIsa::kAvx2
                                                       : VectorIsa::kEigen;
  return best;
}

void ExpFloats(const float* x, float* y, int64_t n) { ApplySplit<Function::kExp>(x, y, n); }
void SigmoidFloats(const float* x, float* y, int64_t n) {
  ApplySplit<Function::kSigmoid>(x, y, n);
}
void SiluFloats(const float* x, float* y, int64_t n) { ApplySplit<Function::kSilu>(x, y, n); }
void GeluFloats(const float* x, float* y, int64_t n) { ApplySplit<Function::kGelu>(x, y, n); }

void SoftmaxRowFloats(const float* x, float* y, int64_t n) {
  detail::SoftmaxRowFloatsWith(BestVectorIsa(), x, y, n);
}

float ExpShiftedSumFloats(const float* x, float shift, float* y, int64_t n) {
  return detail::ExpShiftedSumFloatsWith(BestVectorIsa(), x, shift, y, n);
}

namespace detail {
void ExpFloatsWith(VectorIsa isa, const float* x, float* y, int64_t n) {
  ApplyWith<Function::kExp>(isa, x, y, n);
}
void SigmoidFloatsWith(VectorIsa isa, const float* x, float* y, int64_t n) {
  ApplyWith<Function::kSigmoid>(isa, x, y, n);
}
void SiluFloatsWith(VectorIsa isa, const float* x, float* y, int64_t n) {
  ApplyWith<Function::kSilu>(isa, x, y, n);
}
void GeluFloatsWith(VectorIsa isa, const float* x, float* y, int64_t n) {
  ApplyWith<Function::kGelu>(isa, x, y, n);
}
float ExpShiftedSumFloatsWith(VectorIsa isa, const float* x, float shift, float* y, int64_t n) {
#if MXLITE_HAS_AVX512_KERNEL
  if (isa == VectorIsa::kAvx512) return ExpShiftedSum512(x, shift, y, n);
#endif
#if MXLITE_HAS_AVX2_KERNEL
  if (isa == VectorIsa::kAvx2) return ExpShiftedSum256(x, shift, y, n);
#endif
  const Eigen::ArrayXf exps = (EigenArray<const float>(x, n) - shift).exp();
  const Eigen::ArrayXf e = (exps < std::numeric_limits<float>::min()).select(0.0f, exps);
  if (y != nullptr) EigenArray<float>(y, n) = e;
  return e.sum();
}
void SoftmaxRowFloatsWith(VectorIsa isa, const float* x, float* y, int64_t n) {
  if (n <= 0) return;
#if MXLITE_HAS_AVX512_KERNEL
  if (isa == VectorIsa::kAvx512) return SoftmaxRow512(x, y, n);
#endif
#if MXLITE_HAS_AVX2_KERNEL
  if (isa == VectorIsa::kAvx2) return SoftmaxRow256(x, y, n);
#endif
  const float max = EigenArray<const float>(x, n).maxCoeff();
  const float sum = ExpShiftedSumFloatsWith(isa, x, max, y, n);
  auto probabilities = EigenArray<float>(y, n);
  probabilities /= sum;
  probabilities = (probabilities < std::numeric_limits<float>::min()).select(0.0f, probabilities);
}
}  // namespace detail

}  // namespace mxlite::cpu
