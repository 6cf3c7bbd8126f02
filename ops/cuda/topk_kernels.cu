// topk on the GPU (topk_kernels.h).
#include "ops/cuda/grid.cuh"
#include "ops/cuda/topk_kernels.h"
#include "ops/topk_order.h"

namespace mxlite::cuda {
namespace {

// Line `line`'s elements and its k slots of `picked` (a stride of inner between slots).
template <typename T>
struct LineView {
  const T* x;
  int64_t* slot;
  int64_t inner;
  bool ascending;
  __device__ ComputeType<T> value(int64_t e) const {
    return static_cast<ComputeType<T>>(x[e * inner]);
  }
  __device__ int64_t& at(int64_t r) const { return slot[r * inner]; }
  // Whether the element in slot a ranks after the one in slot b (the heap keeps the latest on top).
  __device__ bool after(int64_t a, int64_t b) const {
    const int64_t i = at(a), j = at(b);
    return TopkRanksBefore(value(j), j, value(i), i, ascending);
  }
  __device__ void swap(int64_t a, int64_t b) const {
    const int64_t t = at(a);
    at(a) = at(b);
    at(b) = t;
  }
  __device__ void SiftDown(int64_t from, int64_t size) const {
    for (int64_t pos = from;;) {
      const int64_t left = 2 * pos + 1, right = left + 1;
      int64_t latest = pos;
      if (left < size && after(left, latest)) latest = left;
      if (right < size && after(right, latest)) latest = right;
      if (latest == pos) return;
      swap(pos, latest);
      pos = latest;
    }
  }
};

template <typename T>
__global__ void RankKernel(TopkLines g, const T* data, int64_t* picked) {
  MXLITE_GRID_LOOP(line, g.outer * g.inner) {
    const int64_t o = line / g.inner, i = line % g.inner;
    const LineView<T> v{data + o * g.extent * g.inner + i, picked + o * g.k * g.inner + i, g.inner,
                        g.ascending};
    int64_t size = 0;
    for (int64_t e = 0; e < g.extent; ++e) {
      if (size < g.k) {
        v.at(size) = e;
        for (int64_t pos = size++; pos > 0 && v.after(pos, (pos - 1) / 2); pos = (pos - 1) / 2) {
          v.swap(pos, (pos - 1) / 2);
        }
      } else if (TopkRanksBefore(v.value(e), e, v.value(v.at(0)), v.at(0), g.ascending)) {
        v.at(0) = e;
        v.SiftDown(0, size);
      }
    }
    for (int64_t end = size - 1; end > 0; --end) {  // heap sort: the latest to the back
      v.swap(0, end);
      v.SiftDown(0, end);
    }
  }
}

// The data offset of picked element e ((o, r, i) of the picked shape).
__device__ int64_t DataOffset(const TopkLines& g, const int64_t* picked, int64_t e) {
  const int64_t i = e % g.inner, o = e / (g.inner * g.k);
  return (o * g.extent + picked[e]) * g.inner + i;
}

template <typename T>
__global__ void GatherKernel(TopkLines g, const T* data, const int64_t* picked, T* values) {
  MXLITE_GRID_LOOP(e, g.outer * g.k * g.inner) { values[e] = data[DataOffset(g, picked, e)]; }
}

template <typename P>
__global__ void PositionsKernel(TopkLines g, const int64_t* picked, P* out) {
  MXLITE_GRID_LOOP(e, g.outer * g.k * g.inner) { out[e] = static_cast<P>(picked[e]); }
}

template <typename T>
__global__ void MarkKernel(TopkLines g, const int64_t* picked, T* mask) {
  MXLITE_GRID_LOOP(e, g.outer * g.k * g.inner) { mask[DataOffset(g, picked, e)] = T(1.0f); }
}

template <typename T>
__global__ void ScatterKernel(TopkLines g, const int64_t* picked, const T* dy, T* dx) {
  MXLITE_GRID_LOOP(e, g.outer * g.k * g.inner) { dx[DataOffset(g, picked, e)] = dy[e]; }
}

int64_t Picked(const TopkLines& g) { return g.outer * g.k * g.inner; }

}  // namespace

template <typename T>
cudaError_t TopkRank(const TopkLines& g, const T* data, int64_t* picked, cudaStream_t s) {
  const int64_t lines = g.outer * g.inner;
  if (lines > 0 && g.k > 0) RankKernel<T><<<Blocks(lines), kThreads, 0, s>>>(g, data, picked);
  return cudaGetLastError();
}

template <typename T>
cudaError_t TopkGatherValues(const TopkLines& g, const T* data, const int64_t* picked, T* values,
                             cudaStream_t s) {
  if (Picked(g) > 0)
    GatherKernel<T><<<Blocks(Picked(g)), kThreads, 0, s>>>(g, data, picked, values);
  return cudaGetLastError();
}

template <typename P>
cudaError_t TopkStorePositions(const TopkLines& g, const int64_t* picked, P* out, cudaStream_t s) {
  if (Picked(g) > 0) PositionsKernel<P><<<Blocks(Picked(g)), kThreads, 0, s>>>(g, picked, out);
  return cudaGetLastError();
}

template <typename T>
cudaError_t TopkMask(const TopkLines& g, const int64_t* picked, T* mask, cudaStream_t s) {
  cudaError_t status = cudaMemsetAsync(mask, 0, g.outer * g.extent * g.inner * sizeof(T), s);
  if (status != cudaSuccess) return status;
  if (Picked(g) > 0) MarkKernel<T><<<Blocks(Picked(g)), kThreads, 0, s>>>(g, picked, mask);
  return cudaGetLastError();
}

template <typename T>
cudaError_t TopkScatterGradient(const TopkLines& g, const int64_t* picked, const T* dy, T* dx,
                                cudaStream_t s) {
  cudaError_t status = cudaMemsetAsync(dx, 0, g.outer * g.extent * g.inner * sizeof(T), s);
  if (status != cudaSuccess) return status;
  if (Picked(g) > 0) ScatterKernel<T><<<Blocks(Picked(g)), kThreads, 0, s>>>(g, picked, dy, dx);
  return cudaGetLastError();
}

#define MXLITE_INSTANTIATE_TOPK(T)                                                         \
  template cudaError_t TopkRank(const TopkLines&, const T*, int64_t*, cudaStream_t);       \
  template cudaError_t TopkGatherValues(const TopkLines&, const T*, const int64_t*, T*,    \
                                        cudaStream_t);                                     \
  template cudaError_t TopkMask(const TopkLines&, const int64_t*, T*, cudaStream_t);       \
  template cudaError_t TopkScatterGradient(const TopkLines&, const int64_t*, const T*, T*, \
                                           cudaStream_t);
MXLITE_INSTANTIATE_TOPK(float)
MXLITE_INSTANTIATE_TOPK(double)
MXLITE_INSTANTIATE_TOPK(__half)
#undef MXLITE_INSTANTIATE_TOPK

template cudaError_t TopkStorePositions(const TopkLines&, const int64_t*, float*, cudaStream_t);
template cudaError_t TopkStorePositions(const TopkLines&, const int64_t*, double*, cudaStream_t);
template cudaError_t TopkStorePositions(const TopkLines&, const int64_t*, int32_t*, cudaStream_t);
template cudaError_t TopkStorePositions(const TopkLines&, const int64_t*, int64_t*, cudaStream_t);

}  // namespace mxlite::cuda
