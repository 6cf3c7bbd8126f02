// Helpers for element-wise CPU kernels: split a range into chunks run on the intra-op pool, and
// view raw buffers as Eigen arrays (vectorised by Eigen).
//
//   ForEachChunk(n, [&](int64_t begin, int64_t end) {
//     EigenArray<T>(out + begin, end - begin) = EigenArray<const T>(in + begin, end - begin).max(T(0));
//   });
//
// Ranges below kElementwiseGrain run inline on the caller (threads cost more than they save).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cstdint>

#include "ops/cpu/parallel.h"

namespace mxlite::cpu {

inline constexpr int64_t kElementwiseGrain = 1 << 15;

template <typename Fn>
void ForEachChunk(int64_t count, Fn&& fn) {
  if (count <= kElementwiseGrain) {
    if (count > 0) fn(int64_t{0}, count);
    return;
  }
  const int64_t chunks = (count + kElementwiseGrain - 1) / kElementwiseGrain;
  ParallelFor(chunks, [&](int64_t chunk) {
    const int64_t begin = chunk * kElementwiseGrain;
    fn(begin, std::min(count, begin + kElementwiseGrain));
  });
}

// fn(first, last) over blocks of whole rows of `row_elements` elements each, about
// kElementwiseGrain elements a block, on the intra-op pool (inline when one block does).
template <typename Fn>
void ForEachRowBlock(int64_t rows, int64_t row_elements, Fn&& fn) {
  const int64_t per_block =
      std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(row_elements, 1));
  const int64_t blocks = (rows + per_block - 1) / per_block;
  if (blocks <= 1) {
    if (rows > 0) fn(int64_t{0}, rows);
    return;
  }
  ParallelFor(blocks, [&](int64_t block) {
    fn(block * per_block, std::min(rows, (block + 1) * per_block));
  });
}

template <typename T>
using EigenArray =
    Eigen::Map<std::conditional_t<std::is_const_v<T>,
                                  const Eigen::Array<std::remove_const_t<T>, Eigen::Dynamic, 1>,
                                  Eigen::Array<T, Eigen::Dynamic, 1>>>;

}  // namespace mxlite::cpu
