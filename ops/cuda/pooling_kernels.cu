// Pooling on the GPU (pooling_kernels.h), following the CPU kernel: windows, ties and empty windows
// as ops/pooling.cc. A window of few elements is one thread's loop; a large one (global pooling:
// a whole plane) is split among a block's threads, or a thread per output would leave the GPU
// nearly idle while each walks thousands of elements.
#include "ops/cuda/grid.cuh"
#include "ops/cuda/pooling_kernels.h"

namespace mxlite::cuda {
namespace {

// A window's taps in the real input: begin, begin + dilate, ... before end per dim.
struct Window {
  int64_t begin[3], end[3];
  int64_t divisor;  // 0: nothing to divide by (no real element)
};

__device__ int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

__device__ Window WindowAt(const PoolingGeometry& g, const int64_t* position) {
  Window w;
  int64_t padded_count = 1, real_count = 1;
  for (int d = 0; d < 3; ++d) {
    const int64_t start = position[d] * g.stride[d] - g.pad[d], step = g.dilate[d];
    const int64_t first = start >= 0 ? 0 : (-start + step - 1) / step;
    int64_t last = FloorDiv(g.in[d] - 1 - start, step);
    if (last > g.kernel[d] - 1) last = g.kernel[d] - 1;
    int64_t padded_last = FloorDiv(g.in[d] + g.pad[d] - 1 - start, step);
    if (padded_last > g.kernel[d] - 1) padded_last = g.kernel[d] - 1;
    w.begin[d] = start + first * step;
    w.end[d] = last >= first ? start + last * step + 1 : w.begin[d];
    padded_count *= padded_last + 1;
    real_count *= last >= first ? last - first + 1 : 0;
  }
  if (g.type == 2) {
    w.divisor = 1;
  } else {
    w.divisor = real_count > 0 ? (g.count_include_pad ? padded_count : real_count) : 0;
  }
  return w;
}

// Offset of spatial position `position` of (n, c).
__device__ int64_t PoolOffset(const PoolingGeometry& g, int64_t n, int64_t c, int64_t position,
                              int64_t plane) {
  return g.channels_last ? (n * plane + position) * g.channels + c
                         : (n * g.channels + c) * plane + position;
}

// The first position (scan order) holding the window's maximum, -1 when the window is empty.
template <typename T>
__device__ int64_t WindowArgMax(const PoolingGeometry& g, const Window& w, const T* x, int64_t n,
                                int64_t c, int64_t plane, ComputeType<T>* best_value) {
  int64_t best_position = -1;
  ComputeType<T> best = 0;
  for (int64_t d = w.begin[0]; d < w.end[0]; d += g.dilate[0]) {
    for (int64_t h = w.begin[1]; h < w.end[1]; h += g.dilate[1]) {
      for (int64_t x_ = w.begin[2]; x_ < w.end[2]; x_ += g.dilate[2]) {
        const int64_t position = (d * g.in[1] + h) * g.in[2] + x_;
        const ComputeType<T> value =
            static_cast<ComputeType<T>>(x[PoolOffset(g, n, c, position, plane)]);
        if (best_position < 0 || value > best) {
          best = value;
          best_position = position;
        }
      }
    }
  }
  *best_value = best;
  return best_position;
}

template <typename T>
__global__ void PoolingForwardKernel(PoolingGeometry g, const T* x, T* y, int64_t total) {
  using C = ComputeType<T>;
  const int64_t in_plane = g.in[0] * g.in[1] * g.in[2];
  const int64_t out_plane = g.out[0] * g.out[1] * g.out[2];
  MXLITE_GRID_LOOP(i, total) {
    int64_t n, c, position;
    if (g.channels_last) {
      c = i % g.channels;
      position = (i / g.channels) % out_plane;
      n = i / (g.channels * out_plane);
    } else {
      position = i % out_plane;
      c = (i / out_plane) % g.channels;
      n = i / (out_plane * g.channels);
    }
    const int64_t at[3] = {position / (g.out[1] * g.out[2]), (position / g.out[2]) % g.out[1],
                           position % g.out[2]};
    const Window w = WindowAt(g, at);
    if (g.type == 0) {
      C best;
      const int64_t best_position = WindowArgMax(g, w, x, n, c, in_plane, &best);
      y[i] = static_cast<T>(best_position < 0 ? C(0) : best);
      continue;
    }
    C sum = C(0);
    for (int64_t d = w.begin[0]; d < w.end[0]; d += g.dilate[0]) {
      for (int64_t h = w.begin[1]; h < w.end[1]; h += g.dilate[1]) {
        for (int64_t x_ = w.begin[2]; x_ < w.end[2]; x_ += g.dilate[2]) {
          sum += static_cast<C>(x[PoolOffset(g, n, c, (d * g.in[1] + h) * g.in[2] + x_, in_plane)]);
        }
      }
    }
    const C scale = w.divisor == 0 ? C(0) : C(1) / static_cast<C>(w.divisor);
    y[i] = static_cast<T>(sum * scale);
  }
}

// ---- Large windows (global pooling, big kernels): the window split among a block's threads ----

// Windows of at least this many elements are split among threads; smaller ones are one thread's.
constexpr int64_t kLargeWindow = 64;

// The elements of a window, walked by flat index r (within one int: a window is one plane or
// volume of the input).
struct WindowWalk {
  int begin[3], extent[3], step[3];  // extent: taps per dim
  int volume;
  __device__ WindowWalk(const PoolingGeometry& g, const Window& w) {
    volume = 1;
    for (int d = 0; d < 3; ++d) {
      begin[d] = static_cast<int>(w.begin[d]);
      step[d] = static_cast<int>(g.dilate[d]);
      extent[d] = w.end[d] > w.begin[d]
                      ? static_cast<int>((w.end[d] - w.begin[d] - 1) / g.dilate[d] + 1)
                      : 0;
      volume *= extent[d];
    }
  }
  // The input position (within its plane) of element r.
  __device__ int64_t Position(const PoolingGeometry& g, int r) const {
    const int x = r % extent[2], rest = r / extent[2];
    const int h = rest % extent[1], d = rest / extent[1];
    return ((begin[0] + d * step[0]) * g.in[1] + begin[1] + h * step[1]) * g.in[2] + begin[2] +
           x * step[2];
  }
};

template <typename C>
__device__ C CombinePooled(int type, C acc, C value) {
  return type == 0 ? (value > acc ? value : acc) : acc + value;
}

// The output from a window's combined elements: max (0 for an empty window) or the scaled sum.
// `first`: the window's first element, for max: NaN there is the result, as in the CPU's scan
// (which starts from it, and which a NaN later in the window does not replace).
template <typename C>
__device__ C PooledValue(int type, C combined, const Window& w, int volume, C first) {
  if (type == 0) return volume == 0 ? C(0) : first != first ? first : combined;
  return w.divisor == 0 ? C(0) : combined * (C(1) / static_cast<C>(w.divisor));
}

// NCHW: a block per output; consecutive threads read consecutive elements of the window's rows.
template <typename T>
__global__ void PoolingWindowBlockKernel(PoolingGeometry g, const T* x, T* y, int64_t total) {
  using C = ComputeType<T>;
  __shared__ C shared[kThreads];
  const int64_t in_plane = g.in[0] * g.in[1] * g.in[2];
  const int64_t out_plane = g.out[0] * g.out[1] * g.out[2];
  for (int64_t i = blockIdx.x; i < total; i += gridDim.x) {
    const int64_t position = i % out_plane, c = (i / out_plane) % g.channels,
                  n = i / (out_plane * g.channels);
    const int64_t at[3] = {position / (g.out[1] * g.out[2]), (position / g.out[2]) % g.out[1],
                           position % g.out[2]};
    const Window w = WindowAt(g, at);
    const WindowWalk walk(g, w);
    C acc = g.type == 0 ? C(-INFINITY) : C(0);
    for (int r = threadIdx.x; r < walk.volume; r += blockDim.x) {
      acc = CombinePooled(g.type, acc,
                          static_cast<C>(x[PoolOffset(g, n, c, walk.Position(g, r), in_plane)]));
    }
    const C combined = g.type == 0 ? BlockMax(acc, shared) : BlockSum(acc, shared);
    if (threadIdx.x == 0) {
      const C first = walk.volume > 0
                          ? static_cast<C>(x[PoolOffset(g, n, c, walk.Position(g, 0), in_plane)])
                          : C(0);
      y[i] = static_cast<T>(PooledValue(g.type, combined, w, walk.volume, first));
    }
  }
}

// NHWC: a block per (output position, 32 channels): threadIdx.x the channel (32 consecutive
// channels read together), threadIdx.y one of kRows slices of the window, combined in shared
// memory.
constexpr int kChannelLanes = 32, kRows = kThreads / kChannelLanes;

template <typename T>
__global__ void PoolingWindowChannelsLastKernel(PoolingGeometry g, const T* x, T* y,
                                                int64_t total_tiles) {
  using C = ComputeType<T>;
  __shared__ C shared[kRows][kChannelLanes];
  const int lane = threadIdx.x, row = threadIdx.y;
  const int64_t in_plane = g.in[0] * g.in[1] * g.in[2];
  const int64_t out_plane = g.out[0] * g.out[1] * g.out[2];
  const int64_t tiles = (g.channels + kChannelLanes - 1) / kChannelLanes;
  for (int64_t t = blockIdx.x; t < total_tiles; t += gridDim.x) {
    const int64_t c = (t % tiles) * kChannelLanes + lane, position = (t / tiles) % out_plane,
                  n = t / (tiles * out_plane);
    const int64_t at[3] = {position / (g.out[1] * g.out[2]), (position / g.out[2]) % g.out[1],
                           position % g.out[2]};
    const Window w = WindowAt(g, at);
    const WindowWalk walk(g, w);
    C acc = g.type == 0 ? C(-INFINITY) : C(0);
    if (c < g.channels) {
      for (int r = row; r < walk.volume; r += kRows) {
        acc = CombinePooled(g.type, acc,
                            static_cast<C>(x[PoolOffset(g, n, c, walk.Position(g, r), in_plane)]));
      }
    }
    shared[row][lane] = acc;
    __syncthreads();
    for (int width = kRows / 2; width > 0; width /= 2) {
      if (row < width)
        shared[row][lane] = CombinePooled(g.type, shared[row][lane], shared[row + width][lane]);
      __syncthreads();
    }
    if (row == 0 && c < g.channels) {
      const C first = walk.volume > 0
                          ? static_cast<C>(x[PoolOffset(g, n, c, walk.Position(g, 0), in_plane)])
                          : C(0);
      y[(n * out_plane + position) * g.channels + c] =
          static_cast<T>(PooledValue(g.type, shared[0][lane], w, walk.volume, first));
    }
    __syncthreads();
  }
}

// First and last output index along one dim whose window's span covers input index i (with
// dilation, TapsAt says which of them have a tap on it).
__device__ void CoveringOutputs(const PoolingGeometry& g, int d, int64_t i, int64_t* first,
                                int64_t* last) {
  const int64_t low = i + g.pad[d] - (g.kernel[d] - 1) * g.dilate[d];  // start >= low
  int64_t f = low <= 0 ? 0 : (low + g.stride[d] - 1) / g.stride[d];
  int64_t l = (i + g.pad[d]) / g.stride[d];
  if (l > g.out[d] - 1) l = g.out[d] - 1;
  *first = f;
  *last = l;
}

// Whether output position `out_at`'s window has a tap on input position `at` in every dim.
__device__ bool TapsAt(const PoolingGeometry& g, const int64_t* out_at, const int64_t* at) {
  for (int d = 0; d < 3; ++d) {
    if ((at[d] + g.pad[d] - out_at[d] * g.stride[d]) % g.dilate[d] != 0) return false;
  }
  return true;
}

// Gather form of the CPU scatter: input element i adds, in output scan order, the gradient of
// every window that routes to it.
template <typename T>
__global__ void PoolingBackwardKernel(PoolingGeometry g, const T* x, const T* dy, T* dx,
                                      int64_t total) {
  using C = ComputeType<T>;
  const int64_t in_plane = g.in[0] * g.in[1] * g.in[2];
  const int64_t out_plane = g.out[0] * g.out[1] * g.out[2];
  MXLITE_GRID_LOOP(i, total) {
    int64_t n, c, position;
    if (g.channels_last) {
      c = i % g.channels;
      position = (i / g.channels) % in_plane;
      n = i / (g.channels * in_plane);
    } else {
      position = i % in_plane;
      c = (i / in_plane) % g.channels;
      n = i / (in_plane * g.channels);
    }
    const int64_t at[3] = {position / (g.in[1] * g.in[2]), (position / g.in[2]) % g.in[1],
                           position % g.in[2]};
    int64_t first[3], last[3];
    for (int d = 0; d < 3; ++d) CoveringOutputs(g, d, at[d], &first[d], &last[d]);
    C sum = C(0);
    for (int64_t od = first[0]; od <= last[0]; ++od) {
      for (int64_t oh = first[1]; oh <= last[1]; ++oh) {
        for (int64_t ow = first[2]; ow <= last[2]; ++ow) {
          const int64_t out_at[3] = {od, oh, ow};
          if (!TapsAt(g, out_at, at)) continue;
          const Window w = WindowAt(g, out_at);
          const C grad = static_cast<C>(
              dy[PoolOffset(g, n, c, (od * g.out[1] + oh) * g.out[2] + ow, out_plane)]);
          if (g.type == 0) {
            C best;
            if (WindowArgMax(g, w, x, n, c, in_plane, &best) == position) sum += grad;
          } else if (w.divisor != 0) {
            sum += grad * (C(1) / static_cast<C>(w.divisor));
          }
        }
      }
    }
    dx[i] = static_cast<T>(sum);
  }
}

}  // namespace

template <typename T>
cudaError_t PoolingForward(const PoolingGeometry& g, const T* x, T* y, cudaStream_t s) {
  const int64_t outputs = g.batch * g.out[0] * g.out[1] * g.out[2];
  const int64_t total = outputs * g.channels;
  if (total <= 0) return cudaGetLastError();
  const int64_t window = g.kernel[0] * g.kernel[1] * g.kernel[2];
  const unsigned max_blocks = 65535 * 16;
  if (window >= kLargeWindow && g.channels_last) {
    const int64_t tiles = outputs * ((g.channels + kChannelLanes - 1) / kChannelLanes);
    const unsigned blocks = tiles < max_blocks ? static_cast<unsigned>(tiles) : max_blocks;
    PoolingWindowChannelsLastKernel<T>
        <<<blocks, dim3(kChannelLanes, kRows), 0, s>>>(g, x, y, tiles);
  } else if (window >= kLargeWindow) {
    const unsigned blocks = total < max_blocks ? static_cast<unsigned>(total) : max_blocks;
    PoolingWindowBlockKernel<T><<<blocks, kThreads, 0, s>>>(g, x, y, total);
  } else {
    PoolingForwardKernel<T><<<Blocks(total), kThreads, 0, s>>>(g, x, y, total);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t PoolingBackward(const PoolingGeometry& g, const T* x, const T* dy, T* dx,
                            cudaStream_t s) {
  const int64_t total = g.batch * g.channels * g.in[0] * g.in[1] * g.in[2];
  if (total > 0) PoolingBackwardKernel<T><<<Blocks(total), kThreads, 0, s>>>(g, x, dy, dx, total);
  return cudaGetLastError();
}

#define MXLITE_INSTANTIATE_FOR(T)                                                          \
  template cudaError_t PoolingForward(const PoolingGeometry&, const T*, T*, cudaStream_t); \
  template cudaError_t PoolingBackward(const PoolingGeometry&, const T*, const T*, T*,     \
                                       cudaStream_t);

MXLITE_INSTANTIATE_FOR(float)
MXLITE_INSTANTIATE_FOR(double)
MXLITE_INSTANTIATE_FOR(__half)

}  // namespace mxlite::cuda
