// What a kernel does to each output element once its sum is complete: add a bias along the rows
// and/or the columns, add a residual, then clamp. This is how a convolution's bias, a fused
// residual addition (Convolution's `residual` input, scheduler/graph/fusion.h) and a fused relu /
// ReLU6 / clip (act_min / act_max) reach the GEMM micro-kernel and the convolution kernels without
// another pass over the output:
//
//   out[i][j] = min(max(((sum[i][j] + row_bias[i]) + column_bias[j]) + residual[i][j], low), high)
//
// in that order, so a fused residual gives the same bits as adding it to the stored output after
// (residual[i][j] is residual[i * residual_stride + j]). Either bias and the residual may be null;
// low = -inf and high = +inf (the defaults) clamp nothing. A NaN sum stays
// NaN (std::max / std::min keep their first argument when a comparison fails; the vector kernels
// order their operands to match). Kernels apply an epilogue exactly once per element, after the
// last partial sum: a GEMM blocked along k applies it with its last k block only.
// Plain value; the bias arrays belong to the caller.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

namespace mxlite::cpu {

template <typename T>
struct Epilogue {
  const T* row_bias = nullptr;     // rows entries, or null
  const T* column_bias = nullptr;  // columns entries, or null
  const T* residual = nullptr;     // rows x columns entries, residual_stride apart, or null
  int64_t residual_stride = 0;
  T low = -std::numeric_limits<T>::infinity();
  T high = std::numeric_limits<T>::infinity();

  bool clamps() const {
    return low != -std::numeric_limits<T>::infinity() || high != std::numeric_limits<T>::infinity();
  }
  bool empty() const {
    return row_bias == nullptr && column_bias == nullptr && residual == nullptr && !clamps();
  }

  // A clamp to [low, high] and no bias.
  static Epilogue Clamp(T low, T high) {
    Epilogue clamp;
    clamp.low = low;
    clamp.high = high;
    return clamp;
  }

  // The epilogue of the block whose first element is (row, column).
  Epilogue Offset(int64_t row, int64_t column) const {
    Epilogue block = *this;
    if (row_bias != nullptr) block.row_bias += row;
    if (column_bias != nullptr) block.column_bias += column;
    if (residual != nullptr) block.residual += row * residual_stride + column;
    return block;
  }

  // The final value of element (i, j) of the block whose sum is `sum`.
  T Apply(T sum, int64_t i, int64_t j) const {
    if (row_bias != nullptr) sum += row_bias[i];
    if (column_bias != nullptr) sum += column_bias[j];
    if (residual != nullptr) sum += residual[i * residual_stride + j];
    return std::min(std::max(sum, low), high);
  }
};

// Applies `epilogue` in place to C[0:rows, 0:columns] (row stride ldc), which holds the sums.
template <typename T>
void ApplyEpilogue(const Epilogue<T>& epilogue, int64_t rows, int64_t columns, T* c, int64_t ldc) {
  if (epilogue.empty()) return;
  for (int64_t i = 0; i < rows; ++i) {
    T* row = c + i * ldc;
    for (int64_t j = 0; j < columns; ++j) row[j] = epilogue.Apply(row[j], i, j);
  }
}

}  // namespace mxlite::cpu
