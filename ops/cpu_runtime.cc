#include "ops/cpu_runtime.h"

#include "ops/cpu/gemm.h"
#include "ops/cpu/parallel.h"

namespace mxlite {

int CpuIntraOpThreads() { return cpu::IntraOpThreads(); }

void SetCpuIntraOpThreads(int threads) { cpu::SetIntraOpThreads(threads); }

std::string CpuGemmDescription() { return cpu::ActiveGemm().ToString(); }

}  // namespace mxlite
