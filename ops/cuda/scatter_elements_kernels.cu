// scatter_elements on the GPU (scatter_elements_kernels.h): the CPU kernels' passes
// (ops/scatter_elements.cc), one thread per line.
#include <cstdint>

#include "ops/cuda/grid.cuh"
#include "ops/cuda/scatter_elements_kernels.h"

namespace mxlite::cuda {
namespace {

__device__ int64_t ElementOf(const ScatterLineGeometry& g, int64_t line, int64_t k) {
  return (line / g.inner * g.steps + k) * g.inner + line % g.inner;
}

template <typename E>
__global__ void WriteKernel(ScatterLineGeometry g, const int64_t* offsets, const E* updates,
                            E* out) {
  MXLITE_GRID_LOOP(line, g.lines) {
    for (int64_t k = 0; k < g.steps; ++k) {
      const int64_t j = ElementOf(g, line, k);
      out[offsets[j]] = updates[j];
    }
  }
}

template <typename C>
__device__ C Combine(ScatterKind kind, C there, C update) {
  switch (kind) {
    case ScatterKind::kAdd:
      return there + update;
    case ScatterKind::kMul:
      return there * update;
    case ScatterKind::kMax:
      if (there != there || update != update) return there != there ? there : update;
      return there >= update ? there : update;
    case ScatterKind::kMin:
      if (there != there || update != update) return there != there ? there : update;
      return there <= update ? there : update;
    default:
      return update;
  }
}

template <typename T>
__global__ void CombineKernel(ScatterKind kind, ScatterLineGeometry g, const int64_t* offsets,
                              const T* updates, T* out) {
  using C = ComputeType<T>;
  MXLITE_GRID_LOOP(line, g.lines) {
    for (int64_t k = 0; k < g.steps; ++k) {
      const int64_t j = ElementOf(g, line, k), t = offsets[j];
      out[t] = static_cast<T>(Combine(kind, static_cast<C>(out[t]), static_cast<C>(updates[j])));
    }
  }
}

template <typename T>
__global__ void BackwardKernel(ScatterKind kind, ScatterLineGeometry g, const int64_t* offsets,
                               const T* data, const T* updates, const T* out, const T* dy,
                               T* d_data, T* d_update, ComputeType<T>* there) {
  using C = ComputeType<T>;
  MXLITE_GRID_LOOP(line, g.lines) {
    const auto at = [&](int64_t k) { return ElementOf(g, line, k); };
    if (kind == ScatterKind::kNone || kind == ScatterKind::kAdd) {
      for (int64_t k = 0; k < g.steps; ++k) {
        const int64_t j = at(k), t = offsets[j];
        if (d_update != nullptr) d_update[j] = dy[t];
        if (d_data != nullptr && kind == ScatterKind::kNone) d_data[t] = T(0);
      }
    } else if (kind == ScatterKind::kMul) {
      for (int64_t k = 0; k < g.steps; ++k) there[offsets[at(k)]] = C(1);
      for (int64_t k = 0; k < g.steps; ++k) {
        const int64_t j = at(k);
        there[offsets[j]] *= static_cast<C>(updates[j]);
      }
      for (int64_t k = 0; k < g.steps; ++k) {
        const int64_t j = at(k), t = offsets[j];
        if (d_data != nullptr) d_data[t] = static_cast<T>(static_cast<C>(dy[t]) * there[t]);
        if (d_update == nullptr) continue;
        C others = static_cast<C>(data[t]);
        for (int64_t m = 0; m < g.steps; ++m) {
          const int64_t other = at(m);
          if (m != k && offsets[other] == t) others *= static_cast<C>(updates[other]);
        }
        d_update[j] = static_cast<T>(static_cast<C>(dy[t]) * others);
      }
    } else {  // max, min
      for (int64_t k = 0; k < g.steps; ++k) {
        const int64_t t = offsets[at(k)];
        there[t] = static_cast<C>(data[t]) == static_cast<C>(out[t]) ? C(1) : C(0);
      }
      for (int64_t k = 0; k < g.steps; ++k) {
        const int64_t j = at(k), t = offsets[j];
        if (static_cast<C>(updates[j]) == static_cast<C>(out[t])) there[t] += C(1);
      }
      for (int64_t k = 0; k < g.steps; ++k) {
        const int64_t j = at(k), t = offsets[j];
        const C share = static_cast<C>(dy[t]) / there[t];
        const C result = static_cast<C>(out[t]);
        if (d_data != nullptr) {
          d_data[t] = static_cast<T>(static_cast<C>(data[t]) == result ? share : C(0));
        }
        if (d_update != nullptr) {
          d_update[j] = static_cast<T>(static_cast<C>(updates[j]) == result ? share : C(0));
        }
      }
    }
  }
}

}  // namespace

cudaError_t ScatterElementsWrite(const ScatterLineGeometry& g, const int64_t* offsets,
                                 const void* updates, size_t element_bytes, void* out,
                                 cudaStream_t s) {
  if (g.lines <= 0) return cudaGetLastError();
  const unsigned blocks = Blocks(g.lines);
  switch (element_bytes) {
    case 1:
      WriteKernel<<<blocks, kThreads, 0, s>>>(g, offsets, static_cast<const uint8_t*>(updates),
                                              static_cast<uint8_t*>(out));
      break;
    case 2:
      WriteKernel<<<blocks, kThreads, 0, s>>>(g, offsets, static_cast<const uint16_t*>(updates),
                                              static_cast<uint16_t*>(out));
      break;
    case 4:
      WriteKernel<<<blocks, kThreads, 0, s>>>(g, offsets, static_cast<const uint32_t*>(updates),
                                              static_cast<uint32_t*>(out));
      break;
    default:
      WriteKernel<<<blocks, kThreads, 0, s>>>(g, offsets, static_cast<const uint64_t*>(updates),
                                              static_cast<uint64_t*>(out));
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t ScatterElementsCombine(ScatterKind kind, const ScatterLineGeometry& g,
                                   const int64_t* offsets, const T* updates, T* out,
                                   cudaStream_t s) {
  if (g.lines > 0)
    CombineKernel<T><<<Blocks(g.lines), kThreads, 0, s>>>(kind, g, offsets, updates, out);
  return cudaGetLastError();
}

template <typename T>
cudaError_t ScatterElementsBackward(ScatterKind kind, const ScatterLineGeometry& g,
                                    const int64_t* offsets, const T* data, const T* updates,
                                    const T* out, const T* dy, T* d_data, T* d_update,
                                    ComputeType<T>* there, cudaStream_t s) {
  if (g.lines > 0) {
    BackwardKernel<T><<<Blocks(g.lines), kThreads, 0, s>>>(kind, g, offsets, data, updates, out, dy,
                                                           d_data, d_update, there);
  }
  return cudaGetLastError();
}

#define MXLITE_INSTANTIATE_SCATTER_COMBINE(T)                                          \
  template cudaError_t ScatterElementsCombine(ScatterKind, const ScatterLineGeometry&, \
                                              const int64_t*, const T*, T*, cudaStream_t);
MXLITE_INSTANTIATE_SCATTER_COMBINE(float)
MXLITE_INSTANTIATE_SCATTER_COMBINE(double)
MXLITE_INSTANTIATE_SCATTER_COMBINE(__half)
MXLITE_INSTANTIATE_SCATTER_COMBINE(int32_t)
MXLITE_INSTANTIATE_SCATTER_COMBINE(int64_t)
#undef MXLITE_INSTANTIATE_SCATTER_COMBINE

#define MXLITE_INSTANTIATE_SCATTER_BACKWARD(T)                                               \
  template cudaError_t ScatterElementsBackward(ScatterKind, const ScatterLineGeometry&,      \
                                               const int64_t*, const T*, const T*, const T*, \
                                               const T*, T*, T*, ComputeType<T>*, cudaStream_t);
MXLITE_INSTANTIATE_SCATTER_BACKWARD(float)
MXLITE_INSTANTIATE_SCATTER_BACKWARD(double)
MXLITE_INSTANTIATE_SCATTER_BACKWARD(__half)
#undef MXLITE_INSTANTIATE_SCATTER_BACKWARD

}  // namespace mxlite::cuda
