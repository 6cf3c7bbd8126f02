// Reductions over any set of axes (reduce_kernels.h; ReduceSum, which the broadcast ops' gradients
// use, is the sum). A group of few elements is one thread's loop; a large one is a block's,
// combined as a tree in shared memory. Accumulation in double.
#include <cmath>

#include "ops/cuda/grid.cuh"
#include "ops/cuda/reduce_kernels.h"

namespace mxlite::cuda {
namespace {

// The offset in src of group j's first element.
__device__ int64_t KeptBase(const ReduceGeometry& g, int64_t j) {
  int64_t base = 0;
  for (int d = g.kept_ndim - 1; d >= 0; --d) {
    base += (j % g.kept_extents[d]) * g.kept_strides[d];
    j /= g.kept_extents[d];
  }
  return base;
}

// The offset, from its group's base, of a group's element r.
__device__ int64_t ReducedOffset(const ReduceGeometry& g, int64_t r) {
  int64_t offset = 0;
  for (int d = g.reduced_ndim - 1; d >= 0; --d) {
    offset += (r % g.reduced_extents[d]) * g.reduced_strides[d];
    r /= g.reduced_extents[d];
  }
  return offset;
}

// The group of src element i (row-major over the kept axes).
__device__ int64_t GroupOf(const ReduceGeometry& g, int64_t i) {
  int64_t j = 0;
  for (int d = 0; d < g.kept_ndim; ++d) {
    j = j * g.kept_extents[d] + (i / g.kept_strides[d]) % g.kept_extents[d];
  }
  return j;
}

__device__ double Identity(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kSum:
      return 0.0;
    case ReduceKind::kProd:
      return 1.0;
    case ReduceKind::kMax:
      return -INFINITY;
    case ReduceKind::kMin:
      return INFINITY;
  }
  return 0.0;
}

__device__ double Combine(ReduceKind kind, double a, double b) {
  switch (kind) {
    case ReduceKind::kSum:
      return a + b;
    case ReduceKind::kProd:
      return a * b;
    case ReduceKind::kMax:
      return fmax(a, b);
    case ReduceKind::kMin:
      return fmin(a, b);
  }
  return a;
}

template <typename T>
__device__ double Load(const T* p) {
  return static_cast<double>(static_cast<ComputeType<T>>(*p));
}

template <typename T>
__device__ void Store(ReduceKind kind, double value, double scale, T* p) {
  if (kind == ReduceKind::kSum) value *= scale;
  *p = static_cast<T>(static_cast<ComputeType<T>>(value));
}

// Few elements per group: one thread per group.
template <typename T>
__global__ void ReduceThreadKernel(ReduceKind kind, ReduceGeometry g, const T* src, T* dst,
                                   double scale) {
  MXLITE_GRID_LOOP(j, g.kept_count) {
    const int64_t base = KeptBase(g, j);
    double acc = Identity(kind);
    for (int64_t r = 0; r < g.reduced_count; ++r) {
      acc = Combine(kind, acc, Load(src + base + ReducedOffset(g, r)));
    }
    Store(kind, acc, scale, dst + j);
  }
}

// Many elements per group: one block per group, a tree in shared memory.
template <typename T>
__global__ void ReduceBlockKernel(ReduceKind kind, ReduceGeometry g, const T* src, T* dst,
                                  double scale) {
  __shared__ double partial[kThreads];
  for (int64_t j = blockIdx.x; j < g.kept_count; j += gridDim.x) {
    const int64_t base = KeptBase(g, j);
    double acc = Identity(kind);
    for (int64_t r = threadIdx.x; r < g.reduced_count; r += blockDim.x) {
      acc = Combine(kind, acc, Load(src + base + ReducedOffset(g, r)));
    }
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (int width = kThreads / 2; width > 0; width /= 2) {
      if (static_cast<int>(threadIdx.x) < width) {
        partial[threadIdx.x] = Combine(kind, partial[threadIdx.x], partial[threadIdx.x + width]);
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) Store(kind, partial[0], scale, dst + j);
    __syncthreads();
  }
}

template <typename T>
__global__ void ReduceBackwardKernel(ReduceKind kind, ReduceGeometry g, const T* x, const T* y,
                                     const T* dy, T* dx, double scale, int64_t n) {
  MXLITE_GRID_LOOP(i, n) {
    const int64_t j = GroupOf(g, i);
    double grad = Load(dy + j);
    if (kind == ReduceKind::kSum) {
      grad *= scale;
    } else if (Load(x + i) != Load(y + j)) {
      grad = 0.0;
    }
    dx[i] = static_cast<T>(static_cast<ComputeType<T>>(grad));
  }
}

template <typename T>
__global__ void SplitZerosKernel(const T* x, T* nonzero, T* is_zero, int64_t n) {
  MXLITE_GRID_LOOP(i, n) {
    const bool zero = Load(x + i) == 0.0;
    nonzero[i] = zero ? static_cast<T>(1.0f) : x[i];
    is_zero[i] = static_cast<T>(zero ? 1.0f : 0.0f);
  }
}

template <typename T>
__global__ void ProdBackwardKernel(ReduceGeometry g, const T* x, const T* dy,
                                   const T* nonzero_product, const T* zeros, T* dx, int64_t n) {
  MXLITE_GRID_LOOP(i, n) {
    const int64_t j = GroupOf(g, i);
    const double value = Load(x + i), count = Load(zeros + j), product = Load(nonzero_product + j);
    double grad = 0.0;
    if (value != 0.0) {
      if (count == 0.0) grad = Load(dy + j) * (product / value);
    } else if (count == 1.0) {
      grad = Load(dy + j) * product;
    }
    dx[i] = static_cast<T>(static_cast<ComputeType<T>>(grad));
  }
}

}  // namespace

template <typename T>
cudaError_t Reduce(ReduceKind kind, const ReduceGeometry& g, const T* src, T* dst, double scale,
                   cudaStream_t s) {
  if (g.kept_count <= 0) return cudaGetLastError();
  if (g.reduced_count >= kThreads) {
    ReduceBlockKernel<T>
        <<<Blocks(g.kept_count * kThreads), kThreads, 0, s>>>(kind, g, src, dst, scale);
  } else {
    ReduceThreadKernel<T><<<Blocks(g.kept_count), kThreads, 0, s>>>(kind, g, src, dst, scale);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t ReduceSum(const ReduceGeometry& g, const T* src, T* dst, double scale, cudaStream_t s) {
  return Reduce(ReduceKind::kSum, g, src, dst, scale, s);
}

template <typename T>
cudaError_t ReduceBackward(ReduceKind kind, const ReduceGeometry& g, const T* x, const T* y,
                           const T* dy, T* dx, double scale, int64_t n, cudaStream_t s) {
  if (n > 0) {
    ReduceBackwardKernel<T><<<Blocks(n), kThreads, 0, s>>>(kind, g, x, y, dy, dx, scale, n);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t SplitZeros(const T* x, T* nonzero, T* is_zero, int64_t n, cudaStream_t s) {
  if (n > 0) SplitZerosKernel<T><<<Blocks(n), kThreads, 0, s>>>(x, nonzero, is_zero, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t ProdBackward(const ReduceGeometry& g, const T* x, const T* dy, const T* nonzero_product,
                         const T* zeros, T* dx, int64_t n, cudaStream_t s) {
  if (n > 0) {
    ProdBackwardKernel<T><<<Blocks(n), kThreads, 0, s>>>(g, x, dy, nonzero_product, zeros, dx, n);
  }
  return cudaGetLastError();
}

#define MXLITE_INSTANTIATE_REDUCE(T)                                                               \
  template cudaError_t Reduce(ReduceKind, const ReduceGeometry&, const T*, T*, double,             \
                              cudaStream_t);                                                       \
  template cudaError_t ReduceSum(const ReduceGeometry&, const T*, T*, double, cudaStream_t);       \
  template cudaError_t ReduceBackward(ReduceKind, const ReduceGeometry&, const T*, const T*,       \
                                      const T*, T*, double, int64_t, cudaStream_t);                \
  template cudaError_t SplitZeros(const T*, T*, T*, int64_t, cudaStream_t);                        \
  template cudaError_t ProdBackward(const ReduceGeometry&, const T*, const T*, const T*, const T*, \
                                    T*, int64_t, cudaStream_t);
MXLITE_INSTANTIATE_REDUCE(float)
MXLITE_INSTANTIATE_REDUCE(double)
MXLITE_INSTANTIATE_REDUCE(__half)
#undef MXLITE_INSTANTIATE_REDUCE

}  // namespace mxlite::cuda
