// A GEMM operand an op keeps packed across calls while the input it comes from stands: the
// constant B of an inference MatMul or FullyConnected, as a convolution keeps its weight.
//
//   KeptPackedOperand kept;  // in the node's OpState
//   if (auto b = kept.Get(PackedGemmOperand::Side::kB, Transpose::kYes, k, n, w, k, version)) {
//     Sgemm(Transpose::kNo, m, 1.0f, x, k, *b, 0.0f, y, n);   // the packed panels, read in place
//   } else {
//     Sgemm(Transpose::kNo, Transpose::kYes, m, n, k, 1.0f, x, k, w, k, 0.0f, y, n);
//   }
//
// Packing costs one pass over the operand, which pays only when the operand serves several
// calls: it is packed on the second call that sees the same input (address, extents and engine
// version, OpContext::input_versions) and kept until any of them changes. A value computed anew
// every pass (its version moves each time) is never packed; its Get returns null and the GEMM
// packs it block by block as usual. Results are bitwise those of the unpacked call
// (ops/cpu/gemm.h). Null also where the GEMM does not read packed panels (cpu::
// PackedOperandsReadInPlace: the Eigen fallback).
//
// Thread safety: Get and bytes may be called concurrently; a returned operand stays valid while
// the caller holds it.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>

#include "ops/cpu/gemm.h"

namespace mxlite::cpu {

class KeptPackedOperand {
 public:
  // op(x) as the `side` operand, rows x columns, x row-major with leading dimension ld (as
  // PackedGemmOperand::Pack), at engine version `version`.
  std::shared_ptr<const PackedGemmOperand> Get(PackedGemmOperand::Side side, Transpose trans,
                                               int64_t rows, int64_t columns, const float* x,
                                               int64_t ld, uint64_t version);
  // Memory of the operand kept now.
  size_t bytes() const;

 private:
  struct Key {
    PackedGemmOperand::Side side = PackedGemmOperand::Side::kA;
    Transpose trans = Transpose::kNo;
    int64_t rows = 0, columns = 0, ld = 0;
    const float* x = nullptr;
    uint64_t version = 0;
    bool operator==(const Key&) const = default;
  };
  mutable std::mutex mutex_;
  bool seen_ = false;  // `last_` holds the previous call's input
  Key last_;
  std::shared_ptr<const PackedGemmOperand> packed_;  // op(x) of `last_`, once seen twice
};

}  // namespace mxlite::cpu
