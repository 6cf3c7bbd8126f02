// Cast's CUDA kernel (cast_kernels.h): one grid-stride loop per (from, to) pair of the dtypes
// Cast supports, with ops/cast.cc's conversion rules.
#include <type_traits>

#include "ops/cuda/cast_kernels.h"
#include "ops/cuda/grid.cuh"

namespace mxlite::cuda {
namespace {

// The range of an integer type as doubles: values at or below `low` give `low`, values at or past
// `past_high` (a power of two, exact in float and double) give the type's maximum.
template <typename T>
struct IntegerRange;
template <>
struct IntegerRange<int32_t> {
  static constexpr double low = -2147483648.0, past_high = 2147483648.0;
  static constexpr int32_t max = 2147483647;
};
template <>
struct IntegerRange<int64_t> {
  static constexpr double low = -9223372036854775808.0, past_high = 9223372036854775808.0;
  static constexpr int64_t max = 9223372036854775807LL;
};
template <>
struct IntegerRange<uint8_t> {
  static constexpr double low = 0.0, past_high = 256.0;
  static constexpr uint8_t max = 255;
};

template <typename T>
constexpr bool kIsInteger =
    std::is_same<T, int32_t>::value || std::is_same<T, int64_t>::value ||
    std::is_same<T, uint8_t>::value;

template <typename To, typename From>
__device__ To ConvertValue(From value) {
  if constexpr (std::is_same<From, __half>::value) {
    return ConvertValue<To>(__half2float(value));
  } else if constexpr (std::is_same<To, __half>::value) {
    return __float2half_rn(static_cast<float>(value));
  } else if constexpr (!kIsInteger<From> && kIsInteger<To>) {
    if (isnan(value)) return To(0);
    const double truncated = trunc(static_cast<double>(value));
    if (truncated <= IntegerRange<To>::low) return static_cast<To>(IntegerRange<To>::low);
    if (truncated >= IntegerRange<To>::past_high) return IntegerRange<To>::max;
    return static_cast<To>(truncated);
  } else {
    return static_cast<To>(value);
  }
}

template <typename To, typename From>
__global__ void CastKernel(const From* in, To* out, int64_t n) {
  MXLITE_GRID_LOOP(i, n) {
    out[i] = ConvertValue<To>(in[i]);
  }
}

// Calls fn with a value of the device element type of dtype; false for a dtype Cast lacks.
template <typename Fn>
bool WithElementType(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kFloat32: fn(float{}); return true;
    case DType::kFloat64: fn(double{}); return true;
    case DType::kFloat16: fn(__half{}); return true;
    case DType::kInt32: fn(int32_t{}); return true;
    case DType::kInt64: fn(int64_t{}); return true;
    case DType::kUInt8: fn(uint8_t{}); return true;
    default: return false;
  }
}

}  // namespace

cudaError_t CastArray(DType from, const void* in, DType to, void* out, int64_t n,
                      cudaStream_t s) {
  bool supported = false;
  WithElementType(from, [&](auto from_tag) {
    using From = decltype(from_tag);
    supported = WithElementType(to, [&](auto to_tag) {
      using To = decltype(to_tag);
      if (n > 0) {
        CastKernel<To, From>
            <<<Blocks(n), kThreads, 0, s>>>(static_cast<const From*>(in), static_cast<To*>(out), n);
      }
    });
  });
  return supported ? cudaGetLastError() : cudaErrorInvalidValue;
}

}  // namespace mxlite::cuda
