// What mxlite's own CUDA kernels share: kMaxKernelDims, ComputeType and the broadcast geometry.
// Each op's kernels are declared in ops/cuda/<op>_kernels.h (defined, explicitly instantiated, in
// <op>_kernels.cu) and called by the GPU op files (ops/cuda/*_gpu.cc); helpers several ops use are
// in array_kernels.h (and ReduceSum in reduce_kernels.h). This header and every kernel header are
// included by nvcc (C++17) and g++ (C++20), so they use only C++17 and the CUDA runtime: plain
// structs passed to kernels by value, fixed-size arrays. Device-side helpers of the .cu files are
// in grid.cuh.
//
// Every launcher enqueues work on `stream` and returns cudaGetLastError() of the launch (the op
// checks it with MXLITE_CUDA_CALL). Sizes are element counts; pointers are device memory. Each
// kernel mirrors the CPU kernel of its op (named beside it) in formula and, where the CPU fixes
// one, in summation order, so results agree to rounding.
//
// Typed launchers are templates over the element type T, defined (explicitly instantiated in
// the .cu files) for float, double and __half. float16 data is computed in float: each kernel
// widens what it loads to ComputeType<T> and rounds once when it stores, as cuDNN's and cuBLAS's
// float16 paths with float accumulation do; float and double compute in their own type.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace mxlite::cuda {

constexpr int kMaxKernelDims = 6;  // Shape::kMaxDims

// The arithmetic type of element type T: float for __half, T itself otherwise.
template <typename T>
struct ComputeTypeOf {
  using type = T;
};
template <>
struct ComputeTypeOf<__half> {
  using type = float;
};
template <typename T>
using ComputeType = typename ComputeTypeOf<T>::type;

// A right-aligned broadcast of up to two operands over an output of `ndim` dims: operand k's
// element for output multi-index i is at sum_d i[d] * strides[k][d] (0 where it is broadcast).
// Built by cuda_util.h's MakeBroadcastGeometry; read by the binary element-wise kernels
// (elementwise_binary_kernels.h), BroadcastAssign (array_kernels.h) and where (where_kernels.h).
struct BroadcastGeometry {
  int ndim = 0;
  int64_t extents[kMaxKernelDims] = {};
  int64_t strides[2][kMaxKernelDims] = {};
};

}  // namespace mxlite::cuda
