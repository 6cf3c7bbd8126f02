#include "ops/cpu/kept_operand.h"

namespace mxlite::cpu {

std::shared_ptr<const PackedGemmOperand> KeptPackedOperand::Get(PackedGemmOperand::Side side,
                                                                Transpose trans, int64_t rows,
                                                                int64_t columns, const float* x,
                                                                int64_t ld, uint64_t version) {
  if (!PackedOperandsReadInPlace()) return nullptr;
  const Key key{side, trans, rows, columns, ld, x, version};
  std::lock_guard<std::mutex> lock(mutex_);
  if (seen_ && key == last_) {
    if (packed_ == nullptr) {
      packed_ = std::make_shared<const PackedGemmOperand>(
          PackedGemmOperand::Pack(side, trans, rows, columns, x, ld));
    }
    return packed_;
  }
  seen_ = true;
  last_ = key;
  packed_.reset();
  return nullptr;
}

size_t KeptPackedOperand::bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return packed_ != nullptr ? packed_->bytes() : 0;
}

}  // namespace mxlite::cpu
