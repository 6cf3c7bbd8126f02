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
