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

// fn(begin, end) over the rows [0, rows), in chunks of about kElementwiseGrain elements of work
// (`work_per_row` each) on the intra-op pool; small jobs run inline.
template <typename Fn>
void ForEachRowRange(int64_t rows, int64_t work_per_row, Fn&& fn) {
  const int64_t per_chunk =
      std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(1, work_per_row));
  const int64_t chunks = (rows + per_chunk - 1) / per_chunk;
  if (chunks <= 1) {
    if (rows > 0) fn(int64_t{0}, rows);
    return;
  }
  ParallelFor(chunks, [&](int64_t chunk) {
    fn(chunk * per_chunk, std::min(rows, (chunk + 1) * per_chunk));
  });
}

template <typename T>
using EigenArray =
    Eigen::Map<std::conditional_t<std::is_const_v<T>,
                                  const Eigen::Array<std::remove_const_t<T>, Eigen::Dynamic, 1>,
                                  Eigen::Array<T, Eigen::Dynamic, 1>>>;

}  // namespace mxlite::cpu
