// What every AVX-512 kernel file includes: MXLITE_HAS_AVX512_KERNEL (x86-64 builds), the
// MXLITE_AVX512 attribute each AVX-512 function carries (the library is built for baseline
// x86-64, as for AVX2 in gemm_kernel_avx2.h: no shared inline function is ever emitted with
// AVX-512 for a CPU without it), and the run-time check that must pass before one is called.
#pragma once

#if defined(__x86_64__)
#define MXLITE_HAS_AVX512_KERNEL 1
#else
#define MXLITE_HAS_AVX512_KERNEL 0
#endif

#define MXLITE_AVX512 __attribute__((target("avx512f,avx2,fma")))

namespace mxlite::cpu {

// True when this CPU runs AVX-512F (with AVX2 and FMA).
inline bool CpuSupportsAvx512f() {
#if MXLITE_HAS_AVX512_KERNEL
  static const bool supported = __builtin_cpu_supports("avx512f") &&
                                __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return supported;
#else
  return false;
#endif
}

}  // namespace mxlite::cpu

#if defined(__x86_64__) || defined(__i386__)  // every build with the AVX-512 tile kernels
#include <immintrin.h>

namespace mxlite::cpu {

// max(a, b) and min(a, b) of 16 floats, b where either is NaN (as maxps / minps: put the value
// that must keep its NaN second). The zero-masked forms with every lane on: GCC 12's plain
// _mm512_max_ps / _mm512_min_ps pass _mm512_undefined_ps() through and warn of it as maybe
// uninitialised.
MXLITE_AVX512 inline __m512 Max16(__m512 a, __m512 b) {
  return _mm512_maskz_max_ps(static_cast<__mmask16>(0xFFFF), a, b);
}
MXLITE_AVX512 inline __m512 Min16(__m512 a, __m512 b) {
  return _mm512_maskz_min_ps(static_cast<__mmask16>(0xFFFF), a, b);
}

}  // namespace mxlite::cpu
#endif
