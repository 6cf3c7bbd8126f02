// What a program (the CLI, the C API, an embedding application) may set or ask of mxlite's CPU
// runtime, without reaching into the kernels' headers: the intra-op thread count the CPU kernels
// split their work over (MXNET_OMP_MAX_THREADS; ops/cpu/parallel.h) and the GEMM in use.
#pragma once

#include <string>

namespace mxlite {

// Threads one CPU operator may use (>= 1), as ParallelFor sees it on the calling thread.
int CpuIntraOpThreads();
// Overrides MXNET_OMP_MAX_THREADS for the whole process (0 removes the override); an error when
// negative.
void SetCpuIntraOpThreads(int threads);
// The CPU GEMM in use and its blocking: "mxlite AVX2+FMA 6x16 micro-kernel, KC<=1024, ...".
std::string CpuGemmDescription();

}  // namespace mxlite
