// Pooling: max, average or sum over sliding windows of the spatial dims of a 1-D, 2-D or 3-D
// input, channels first (NCW, NCHW, NCDHW) or last (NWC, NHWC, NDHWC), with MXNet's attributes;
// on the CPU also 2-D in blocks of 16 channels (NCHW16c: (N, C/16, H, W, 16), where the GPU
// refuses it), bitwise the results of NCHW.
//
// `dilate` (mxlite's, as Convolution's; ONNX's dilations) spaces a window's taps: tap k of a
// window starting at s reads s + k * dilate, so a window spans (kernel - 1) * dilate + 1 and the
// formulas below take that span for `kernel`.
//
// Output extent per spatial dim, as in MXNet:
//   valid: 1 + floor((in + 2 * pad - kernel) / stride)
//   full:  1 + ceil((in + 2 * pad - kernel) / stride), minus one if the last window would start
//          at or beyond in + pad (PyTorch's ceil-mode rule: no window starts in the right padding
//          alone, which MXNet's formula allows).
// global_pool pools each whole spatial extent to 1 (kernel, stride and pad are ignored).
//
// Padding is never a candidate for max. avg divides by the window clipped to the padded input
// (count_include_pad = true, MXNet's default) or by the real elements only (false). A window with
// no real element (possible when pad >= kernel) outputs 0 and receives no gradient; nothing is
// ever divided by zero. Max backward routes each output gradient to the first maximum of its
// window in scan order (depth, height, width), the element the forward picked.
//
// The CPU forward splits its work over (image, channel block, band of output rows), so one image
// with one channel block (batch 1, 64 channels last) still spreads over the intra-op threads;
// channels last and NCHW16c in float32 run whole 16-lane vectors with AVX-512 where the CPU has
// it, channels first 16 output columns of a row at a time (stride 1 or 2 along the width). Every
// split and kernel computes each output the same way: the bits do not depend on them. Windows are
// composed from each spatial dim's taps, computed once per output index along that dim.
#include <algorithm>
#include <array>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "ops/activation_layout.h"
#include "ops/cpu/avx512.h"
#include "ops/cpu/elementwise.h"
#include "ops/cpu/int_math.h"
#include "ops/cpu/parallel.h"
#include "ops/operator.h"
#include "ops/pooling.h"

namespace mxlite {
namespace {

// Channels-last kernels process this many channels together (contiguous in memory).
constexpr int64_t kChannelsPerTask = 64;
static_assert(kChannelBlock <= kChannelsPerTask, "an NCHW16c block is one task");

PoolingType ParsePoolType(const std::string& text) {
  if (text == "max") return PoolingType::kMax;
  if (text == "avg") return PoolingType::kAvg;
  return PoolingType::kSum;
}

std::string DefaultLayout(int ndim) { return ndim == 3 ? "NCW" : ndim == 4 ? "NCHW" : "NCDHW"; }

// A kernel/stride/pad tuple with one value per spatial dim, or `fallback` everywhere when empty.
std::vector<int64_t> PerSpatialDim(const Attributes& attrs, const std::string& name, int dims,
                                   int64_t fallback, int64_t minimum, const std::string& owner,
                                   const Shape& data) {
  std::vector<int64_t> values = attrs.GetInts(name);
  if (values.empty()) values.assign(dims, fallback);
  MX_CHECK(static_cast<int>(values.size()) == dims)
      << owner << ": " << name << "=" << FormatIntTuple(attrs.GetInts(name)) << " has "
      << values.size() << " dims but data " << data << " has " << dims << " spatial dims";
  for (int64_t value : values) {
    MX_CHECK(value >= minimum) << owner << ": " << name << "=" << FormatIntTuple(values)
                               << " must be >= " << minimum << " in every dim";
  }
  return values;
}

int64_t OutputExtent(int64_t in, int64_t kernel, int64_t stride, int64_t pad, bool full) {
  const int64_t span = in + 2 * pad - kernel;  // >= 0, checked by the caller
  if (!full) return 1 + span / stride;
  int64_t out = 1 + (span + stride - 1) / stride;
  if ((out - 1) * stride >= in + pad) --out;
  return out;
}

}  // namespace

PoolingGeometry PoolingGeometryOf(const Attributes& attrs, const Shape& data,
                                  const std::string& owner) {
  const int ndim = data.ndim();
  MX_CHECK(ndim >= 3 && ndim <= 5) << owner << ": data must be 3-D (N,C,W), 4-D (N,C,H,W) or 5-D "
                                   << "(N,C,D,H,W); got shape " << data;
  const std::string layout = attrs.Has("layout") ? attrs.GetString("layout") : DefaultLayout(ndim);
  PoolingGeometry g;
  g.blocked = layout == "NCHW16c";
  MX_CHECK(g.blocked ? ndim == 5 && data[4] == kChannelBlock
                     : static_cast<int>(layout.size()) == ndim)
      << owner << ": layout " << layout << " does not fit data of shape " << data
      << (g.blocked ? " (NCHW16c data is (N, C/16, H, W, 16))" : "");
  g.spatial_dims = g.blocked ? 2 : ndim - 2;
  g.channels_last = layout.back() == 'C';
  g.batch = data[0];
  g.channels = g.channels_last ? data[ndim - 1] : g.blocked ? data[1] * kChannelBlock : data[1];
  g.type = ParsePoolType(attrs.GetString("pool_type"));
  g.count_include_pad = !attrs.Has("count_include_pad") || attrs.GetBool("count_include_pad");
  const int first_spatial = g.channels_last ? 1 : 2;
  const int offset = kMaxPoolingSpatialDims - g.spatial_dims;
  for (int i = 0; i < g.spatial_dims; ++i) g.in[offset + i] = data[first_spatial + i];

  if (attrs.GetBool("global_pool")) {
    for (int i = 0; i < g.spatial_dims; ++i) g.kernel[offset + i] = g.in[offset + i];
    return g;  // out, stride and pad keep 1, 1, 0
  }
  MX_CHECK(!attrs.GetInts("kernel").empty())
      << owner << ": kernel is required unless global_pool is true (data " << data << ")";
  const auto kernel = PerSpatialDim(attrs, "kernel", g.spatial_dims, 1, 1, owner, data);
  const auto stride = PerSpatialDim(attrs, "stride", g.spatial_dims, 1, 1, owner, data);
  const auto pad = PerSpatialDim(attrs, "pad", g.spatial_dims, 0, 0, owner, data);
  const auto dilate = PerSpatialDim(attrs, "dilate", g.spatial_dims, 1, 1, owner, data);
  const bool full = attrs.GetString("pooling_convention") == "full";
  for (int i = 0; i < g.spatial_dims; ++i) {
    const int d = offset + i;
    g.kernel[d] = kernel[i];
    g.stride[d] = stride[i];
    g.pad[d] = pad[i];
    g.dilate[d] = dilate[i];
    const int64_t span = (g.kernel[d] - 1) * g.dilate[d] + 1;
    MX_CHECK(span <= g.in[d] + 2 * g.pad[d])
        << owner << ": kernel " << FormatIntTuple(kernel)
        << (g.dilated() ? " dilated by " + FormatIntTuple(dilate) : std::string())
        << " exceeds data " << data << " padded by " << FormatIntTuple(pad);
    g.out[d] = OutputExtent(g.in[d], span, g.stride[d], g.pad[d], full);
  }
  return g;
}

namespace {

Shape OutputShape(const PoolingGeometry& g, const Shape& data) {
  std::vector<int64_t> dims = data.to_vector();
  const int first_spatial = g.channels_last ? 1 : 2;
  const int offset = kMaxPoolingSpatialDims - g.spatial_dims;
  for (int i = 0; i < g.spatial_dims; ++i) dims[first_spatial + i] = g.out[offset + i];
  return Shape(dims);
}

void PoolingInferShape(const Attributes& attrs, ShapeInference& shapes) {
  const Shape& data = shapes.Input(0);
  PoolingGeometry g = PoolingGeometryOf(attrs, data, shapes.op + " " + shapes.node);
  shapes.AssignOutput(0, OutputShape(g, data));
}

// One window's taps in the real input: begin, begin + dilate, ... up to (not including) end per
// dim, and what avg divides by.
struct Window {
  PoolingExtents begin, end;
  int64_t divisor = 0;  // 0 when nothing is to be divided by (see the file comment)
};

// A window's taps along one spatial dim: [begin, end) in the input, and how many taps fall inside
// the padded input (`padded`) and the real one (`real`).
struct AxisTaps {
  int64_t begin = 0, end = 0, padded = 0, real = 0;
};

AxisTaps AxisTapsAt(const PoolingGeometry& g, int d, int64_t position) {
  const int64_t start = position * g.stride[d] - g.pad[d], step = g.dilate[d];
  // Taps k in [0, kernel): the first at or after 0, the last before in (or in + pad).
  const int64_t first = start >= 0 ? 0 : (-start + step - 1) / step;
  const int64_t last = std::min(g.kernel[d] - 1, cpu::FloorDiv(g.in[d] - 1 - start, step));
  const int64_t padded_last =
      std::min(g.kernel[d] - 1, cpu::FloorDiv(g.in[d] + g.pad[d] - 1 - start, step));
  AxisTaps taps;
  taps.begin = start + first * step;
  taps.end = last >= first ? start + last * step + 1 : taps.begin;
  taps.padded = padded_last + 1;
  taps.real = std::max<int64_t>(last - first + 1, 0);
  return taps;
}

// Every output position's taps along each spatial dim: out[0] + out[1] + out[2] computations (with
// divisions) instead of one per output position.
using AxisWindows = std::array<std::vector<AxisTaps>, kMaxPoolingSpatialDims>;
AxisWindows AxisWindowsOf(const PoolingGeometry& g) {
  AxisWindows axes;
  for (int d = 0; d < kMaxPoolingSpatialDims; ++d) {
    axes[d].reserve(static_cast<size_t>(g.out[d]));
    for (int64_t i = 0; i < g.out[d]; ++i) axes[d].push_back(AxisTapsAt(g, d, i));
  }
  return axes;
}

// The window of the output position whose taps along the three dims are `a`, `b`, `c`.
Window WindowOf(const PoolingGeometry& g, const AxisTaps& a, const AxisTaps& b, const AxisTaps& c) {
  Window w;
  w.begin = {a.begin, b.begin, c.begin};
  w.end = {a.end, b.end, c.end};
  if (g.type == PoolingType::kSum) {
    w.divisor = 1;
  } else if (a.real * b.real * c.real > 0) {
    w.divisor = g.count_include_pad ? a.padded * b.padded * c.padded : a.real * b.real * c.real;
  }
  return w;
}

// Calls fn(input_position) for every real element of the window, in (d, h, w) scan order.
template <typename Fn>
void ForEachWindowElement(const PoolingGeometry& g, const Window& w, Fn&& fn) {
  for (int64_t d = w.begin[0]; d < w.end[0]; d += g.dilate[0]) {
    for (int64_t h = w.begin[1]; h < w.end[1]; h += g.dilate[1]) {
      for (int64_t x = w.begin[2]; x < w.end[2]; x += g.dilate[2]) {
        fn((d * g.in[1] + h) * g.in[2] + x);
      }
    }
  }
}

// Output rows (every (depth, height) pair) a forward task of `rows` takes: as many bands as give
// the intra-op threads 4 tasks each, none under kElementwiseGrain of work. One band (the whole
// plane) when (image, channel block) tasks are already that many: with few images and channel
// blocks (batch 1, 64 channels last: one block) the rows are what spreads the work.
int64_t RowsPerBand(const PoolingGeometry& g, int64_t blocks, int64_t block) {
  const int64_t rows = g.out[0] * g.out[1];
  const int64_t wanted = 4 * static_cast<int64_t>(cpu::IntraOpThreads());
  if (g.batch * blocks >= wanted || rows <= 1) return rows;
  const int64_t work = block * (g.in_positions() + g.out_positions());
  const int64_t bands_by_grain = std::max<int64_t>(1, work / cpu::kElementwiseGrain);
  const int64_t bands = std::min({rows, bands_by_grain, cpu::CeilDiv(wanted, g.batch * blocks)});
  return cpu::CeilDiv(rows, bands);
}

// Runs fn(n, first_channel, channel_count, first_row, end_row) for every (image, channel block,
// band of output rows) on the intra-op pool; blocks are one channel (channels first), up to
// kChannelsPerTask contiguous channels (channels last) or one block of NCHW16c. With
// `whole_planes` every band is the whole plane: then tasks touch disjoint memory, so backward may
// scatter into the input gradient without races (bands' windows overlap).
template <typename Fn>
void ForEachPoolingTask(const PoolingGeometry& g, bool whole_planes, Fn&& fn) {
  const int64_t block = g.channels_last ? std::min(g.channels, kChannelsPerTask)
                        : g.blocked     ? kChannelBlock
                                        : 1;
  if (block == 0 || g.batch == 0) return;
  const int64_t blocks_per_image = (g.channels + block - 1) / block;
  const int64_t rows = g.out[0] * g.out[1];
  const int64_t rows_per_band = whole_planes ? rows : RowsPerBand(g, blocks_per_image, block);
  const int64_t bands = std::max<int64_t>(1, cpu::CeilDiv(rows, rows_per_band));
  const int64_t tasks = g.batch * blocks_per_image * bands;
  const int64_t work_per_task =
      std::max<int64_t>(1, block * (g.in_positions() + g.out_positions()) / bands);
  const int64_t tasks_per_chunk = std::max<int64_t>(1, cpu::kElementwiseGrain / work_per_task);
  const int64_t chunks = (tasks + tasks_per_chunk - 1) / tasks_per_chunk;
  auto run_chunk = [&](int64_t chunk) {
    const int64_t end = std::min(tasks, (chunk + 1) * tasks_per_chunk);
    for (int64_t task = chunk * tasks_per_chunk; task < end; ++task) {
      const int64_t band = task % bands, image_block = task / bands;
      const int64_t n = image_block / blocks_per_image;
      const int64_t c0 = (image_block % blocks_per_image) * block;
      const int64_t first_row = band * rows_per_band;
      fn(n, c0, std::min(block, g.channels - c0), first_row,
         std::min(rows, first_row + rows_per_band));
    }
  };
  if (chunks == 1) {
    run_chunk(0);
  } else {
    cpu::ParallelFor(chunks, run_chunk);
  }
}

// Calls fn(out_position_index, window) for every output position, composed from `axes`.
template <typename Fn>
void ForEachOutputPosition(const PoolingGeometry& g, const AxisWindows& axes, Fn&& fn) {
  int64_t index = 0;
  for (const AxisTaps& d : axes[0]) {
    for (const AxisTaps& h : axes[1]) {
      for (const AxisTaps& w : axes[2]) fn(index++, WindowOf(g, d, h, w));
    }
  }
}

// For each channel of the block, the first position holding the window's maximum (-1 if the
// window has no real element). `x` points at the block's first channel of one image.
template <typename T>
void FindWindowMaxima(const PoolingGeometry& g, const Window& w, const T* x, int64_t position_step,
                      int64_t channel_stride, int64_t count, T* best, int64_t* best_position) {
  for (int64_t c = 0; c < count; ++c) {
    best[c] = std::numeric_limits<T>::lowest();
    best_position[c] = -1;
  }
  ForEachWindowElement(g, w, [&](int64_t position) {
    const T* values = x + position * position_step;
    for (int64_t c = 0; c < count; ++c) {
      const T value = values[c * channel_stride];
      if (best_position[c] < 0 || value > best[c]) {
        best[c] = value;
        best_position[c] = position;
      }
    }
  });
}

// Every output position's window, in output order (shared by all channels and images).
std::vector<Window> AllWindows(const PoolingGeometry& g, const AxisWindows& axes) {
  std::vector<Window> windows;
  windows.reserve(static_cast<size_t>(g.out_positions()));
  ForEachOutputPosition(g, axes, [&](int64_t, const Window& w) { windows.push_back(w); });
  return windows;
}

// Channels-first forward of one (image, channel) plane with the windows precomputed: the common
// CNN case (NCHW max pooling after the first convolution) without a callback per element. Same
// scan order and comparisons as the generic path, so results are bitwise equal to it.
// Windows [first, end) only (a band of output rows); y is the plane's first output. kDilated
// false compiles the taps' steps as 1 (the common case keeps its unit-stride loops).
template <bool kDilated, typename T>
void PoolPlane(const PoolingGeometry& g, const std::vector<Window>& windows, int64_t first,
               int64_t end, const T* x, T* y) {
  const int64_t row = g.in[2], plane_rows = g.in[1];
  const int64_t step_d = kDilated ? g.dilate[0] : 1, step_h = kDilated ? g.dilate[1] : 1,
                step_w = kDilated ? g.dilate[2] : 1;
  for (int64_t i = first; i < end; ++i) {
    const Window& w = windows[i];
    if (g.type == PoolingType::kMax) {
      const bool empty = w.begin[0] >= w.end[0] || w.begin[1] >= w.end[1] || w.begin[2] >= w.end[2];
      if (empty) {
        y[i] = T(0);
        continue;
      }
      // Starts from the window's first element; `v > best ? v : best` keeps the generic path's
      // NaN behaviour and compiles to a branch-free max (the comparisons are unpredictable).
      T best = x[(w.begin[0] * plane_rows + w.begin[1]) * row + w.begin[2]];
      for (int64_t d = w.begin[0]; d < w.end[0]; d += step_d) {
        for (int64_t h = w.begin[1]; h < w.end[1]; h += step_h) {
          const T* values = x + (d * plane_rows + h) * row;
          for (int64_t c = w.begin[2]; c < w.end[2]; c += step_w)
            best = values[c] > best ? values[c] : best;
        }
      }
      y[i] = best;
      continue;
    }
    T sum = T(0);
    for (int64_t d = w.begin[0]; d < w.end[0]; d += step_d) {
      for (int64_t h = w.begin[1]; h < w.end[1]; h += step_h) {
        const T* values = x + (d * plane_rows + h) * row;
        for (int64_t c = w.begin[2]; c < w.end[2]; c += step_w) sum += values[c];
      }
    }
    y[i] = sum * (w.divisor == 0 ? T(0) : T(1) / static_cast<T>(w.divisor));
  }
}

// PoolPlane over windows [first, end), its dilated form where the geometry needs it.
template <typename T>
void PoolPlaneWindows(const PoolingGeometry& g, const std::vector<Window>& windows, int64_t first,
                      int64_t end, const T* x, T* y) {
  if (g.dilated()) {
    PoolPlane<true>(g, windows, first, end, x, y);
  } else {
    PoolPlane<false>(g, windows, first, end, x, y);
  }
}

// PoolPlane for `lanes` channels that sit side by side at every position (channels last: one
// task's channels, `step` = the channel count; NCHW16c: one block, `step` = 16), windows shared by
// every lane. The same scan order and comparisons per lane as PoolPlane, so the results are
// bitwise those of NCHW, and no branch on the data (the inner loops vectorise). kDilated as
// PoolPlane's.
template <bool kDilated, typename T>
void PoolLanes(const PoolingGeometry& g, const std::vector<Window>& windows, int64_t first,
               int64_t end, const T* x, T* y, int64_t step, int64_t lanes) {
  const int64_t row = g.in[2], plane_rows = g.in[1];
  const int64_t step_d = kDilated ? g.dilate[0] : 1, step_h = kDilated ? g.dilate[1] : 1,
                step_w = kDilated ? g.dilate[2] : 1;
  const bool max = g.type == PoolingType::kMax;
  T acc[kChannelsPerTask];
  for (int64_t i = first; i < end; ++i) {
    const Window& w = windows[i];
    T* out = y + i * step;
    const bool empty = w.begin[0] >= w.end[0] || w.begin[1] >= w.end[1] || w.begin[2] >= w.end[2];
    if (empty) {
      std::fill(out, out + lanes, T(0));
      continue;
    }
    const T* first = x + ((w.begin[0] * plane_rows + w.begin[1]) * row + w.begin[2]) * step;
    for (int64_t c = 0; c < lanes; ++c) acc[c] = max ? first[c] : T(0);
    const int64_t across = step_w * step;  // from one tap of a row to the next
    for (int64_t d = w.begin[0]; d < w.end[0]; d += step_d) {
      for (int64_t h = w.begin[1]; h < w.end[1]; h += step_h) {
        const T* values = x + ((d * plane_rows + h) * row + w.begin[2]) * step;
        for (int64_t p = w.begin[2]; p < w.end[2]; p += step_w, values += across) {
          if (max) {
            for (int64_t c = 0; c < lanes; ++c) acc[c] = values[c] > acc[c] ? values[c] : acc[c];
          } else {
            for (int64_t c = 0; c < lanes; ++c) acc[c] += values[c];
          }
        }
      }
    }
    if (max) {
      std::copy(acc, acc + lanes, out);
      continue;
    }
    const T scale = w.divisor == 0 ? T(0) : T(1) / static_cast<T>(w.divisor);
    for (int64_t c = 0; c < lanes; ++c) out[c] = acc[c] * scale;
  }
}

// Whether window b is window a moved `shift` input positions along the width: the same depth and
// height rows, the same extents, not empty. Consecutive output positions of one row away from
// the padded edges are (shift = the stride).
bool IsShiftedAlongWidth(const Window& a, const Window& b, int64_t shift) {
  return b.begin[0] == a.begin[0] && b.end[0] == a.end[0] && b.begin[1] == a.begin[1] &&
         b.end[1] == a.end[1] && b.begin[2] == a.begin[2] + shift && b.end[2] == a.end[2] + shift &&
         a.end[0] > a.begin[0] && a.end[1] > a.begin[1] && a.end[2] > a.begin[2];
}

// Channels-last and NCHW16c windows grouped once per call for PoolShiftedAvx512: runs of up to
// four consecutive positions of one output row whose windows are the run's first window shifted
// along the width (a run of one where none is), in output order, and each position's 1 / divisor.
// Worked out per group and per position as the kernels went, this took a fifth of an NCHW16c 3x3
// pool's time (perf). Eight positions a run ran channels-last stride-2 pools 1.2x slower.
constexpr int kMaxShiftedPositions = 4;
struct ShiftedRuns {
  std::vector<int64_t> first;  // each run's first position, ascending, then the last run's end
  std::vector<float> inverse;  // per position: 1 / divisor, 0 where the divisor is 0
};

ShiftedRuns ShiftedRunsOf(const PoolingGeometry& g, const std::vector<Window>& windows) {
  ShiftedRuns runs;
  const int64_t positions = static_cast<int64_t>(windows.size()), shift = g.stride[2];
  runs.inverse.resize(windows.size());
  for (int64_t i = 0; i < positions; ++i) {
    const int64_t divisor = windows[i].divisor;
    runs.inverse[i] = divisor == 0 ? 0.0f : 1.0f / static_cast<float>(divisor);
  }
  for (int64_t i = 0; i < positions;) {
    runs.first.push_back(i);
    int together = 1;
    while (together < kMaxShiftedPositions && i + together < positions &&
           IsShiftedAlongWidth(windows[i], windows[i + together], together * shift)) {
      ++together;
    }
    i += together;
  }
  runs.first.push_back(positions);
  return runs;
}

#if MXLITE_HAS_AVX512_KERNEL
// kPositions output positions whose windows are `w` moved 0, shift, 2 shift... input positions
// along the width, one vector of 16 lanes each, in lockstep, for every vector of the `lanes`
// lanes (`out` is the first position's output, `inverse` its 1 / divisor). A window's reduction
// is a chain of dependent max or add instructions (nine for 3x3) that one position at a time waits
// out in latency; side by side the chains keep the unit busy. Each chain keeps its own scan order,
// and a sum is scaled by its own position's 1 / divisor as it is stored, so the bits are those of
// one position at a time.
template <int kPositions>
MXLITE_AVX512 void PoolShiftedAvx512(const PoolingGeometry& g, const Window& w,
                                     const float* inverse, const float* x, float* out, int64_t step,
                                     int64_t lanes) {
  const int64_t row = g.in[2], plane_rows = g.in[1];
  const bool max = g.type == PoolingType::kMax;
  const int64_t next = g.stride[2] * step;  // floats from one position's window to the next's
  const int64_t width = w.end[2] - w.begin[2];
  const float* first = x + ((w.begin[0] * plane_rows + w.begin[1]) * row + w.begin[2]) * step;
  for (int64_t c = 0; c < lanes; c += 16) {
    __m512 acc[kPositions];
    for (int k = 0; k < kPositions; ++k) {
      acc[k] = max ? _mm512_loadu_ps(first + k * next + c) : _mm512_setzero_ps();
    }
    for (int64_t d = w.begin[0]; d < w.end[0]; ++d) {
      for (int64_t h = w.begin[1]; h < w.end[1]; ++h) {
        const float* values = x + ((d * plane_rows + h) * row + w.begin[2]) * step + c;
        for (int64_t p = 0; p < width; ++p, values += step) {
          for (int k = 0; k < kPositions; ++k) {
            const __m512 v = _mm512_loadu_ps(values + k * next);
            // The maskz form with every lane set is maxps itself (GCC 12 warns falsely on it).
            acc[k] = max ? _mm512_maskz_max_ps(0xFFFF, v, acc[k]) : _mm512_add_ps(acc[k], v);
          }
        }
      }
    }
    for (int k = 0; k < kPositions; ++k) {
      _mm512_storeu_ps(out + k * step + c,
                       max ? acc[k] : _mm512_mul_ps(acc[k], _mm512_set1_ps(inverse[k])));
    }
  }
}

using ShiftedPoolTile = void (*)(const PoolingGeometry&, const Window&, const float*, const float*,
                                 float*, int64_t, int64_t);

template <int... P>
constexpr std::array<ShiftedPoolTile, sizeof...(P)> ShiftedPoolTilesOf(
    std::integer_sequence<int, P...>) {
  return {PoolShiftedAvx512<P + 1>...};
}
// [positions - 1]
const std::array<ShiftedPoolTile, kMaxShiftedPositions> kShiftedPoolTiles =
    ShiftedPoolTilesOf(std::make_integer_sequence<int, kMaxShiftedPositions>{});

// PoolLanes for float32 lanes in whole vectors of 16, each vector's accumulator in a register
// through the window: the same scan order, comparison (maxps(v, acc) is `v > acc ? v : acc`) and
// final scaling per lane, so the same bits. Positions go run by run (ShiftedRuns: a row's
// interior in runs of four and one of the rest, the edge windows one at a time); [first, end) are
// whole output rows, so whole runs. Before, the rest of a row's interior went one position at a
// time and the sums were scaled in a second pass over the output (NCHW16c 3x3 pools 0.72-0.98 of
// that time, pooling_bench).
MXLITE_AVX512 void PoolLanesAvx512(const PoolingGeometry& g, const std::vector<Window>& windows,
                                   const ShiftedRuns& runs, int64_t first, int64_t end,
                                   const float* x, float* y, int64_t step, int64_t lanes) {
  auto run = std::lower_bound(runs.first.begin(), runs.first.end(), first);
  for (; *run < end; ++run) {
    const int64_t i = *run;
    const int together = static_cast<int>(run[1] - i);
    const Window& w = windows[i];
    float* out = y + i * step;
    const bool empty = w.begin[0] >= w.end[0] || w.begin[1] >= w.end[1] || w.begin[2] >= w.end[2];
    if (empty) {  // a run of one (IsShiftedAlongWidth never joins an empty window)
      for (int64_t c = 0; c < lanes; c += 16) _mm512_storeu_ps(out + c, _mm512_setzero_ps());
    } else {
      kShiftedPoolTiles[together - 1](g, w, &runs.inverse[i], x, out, step, lanes);
    }
  }
}
#endif

#if MXLITE_HAS_AVX512_KERNEL
// The first `count` (0 to 16 or more) of 16 lanes.
inline __mmask16 FirstLanes(int64_t count) {
  return static_cast<__mmask16>(count >= 16 ? 0xFFFF : (1u << count) - 1);
}

// Inputs `stride` (1 or 2) apart from `at` into the first `lanes` (1 to 16) lanes, the rest 0: at
// stride 2 two loads, the even elements picked. Masked to the elements the lanes need, so nothing
// past the last of them is read.
MXLITE_AVX512 inline __m512 LoadStrided(const float* at, int64_t stride, int64_t lanes) {
  if (stride == 1) return _mm512_maskz_loadu_ps(FirstLanes(lanes), at);
  const __m512i evens =
      _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const int64_t elements = 2 * lanes - 1;  // the last lane's element is 2 * (lanes - 1)
  const __m512 low = _mm512_maskz_loadu_ps(FirstLanes(elements), at);
  const __m512 high =
      _mm512_maskz_loadu_ps(FirstLanes(std::max<int64_t>(0, elements - 16)), at + 16);
  return _mm512_permutex2var_ps(low, evens, high);
}

// Channels-first rows on AVX-512: the output columns of a row whose windows lie wholly inside the
// input's width (the interior: every kernel column read) 16 at a time (the last group masked), one
// lane per output column, at stride 1 (each tap a load of consecutive inputs) or 2 (the even
// elements of two loads).
// Each lane reduces its window in PoolPlane's scan order with its comparison (maxps(v, best) is
// `v > best ? v : best`) or sum and scaling, so the bits are PoolPlane's; the other columns (edges,
// the first and last columns) run through PoolPlane one window at a time. The scalar loop
// took 8-9 times as long as the channels-last kernels on a 3x3 stride-2 pool.
MXLITE_AVX512 void PoolPlaneRowsAvx512(const PoolingGeometry& g, const AxisWindows& axes,
                                       const std::vector<Window>& windows, int64_t first_row,
                                       int64_t end_row, const float* x, float* y) {
  const int64_t out_w = g.out[2], in_w = g.in[2], stride = g.stride[2], dilate = g.dilate[2];
  const int64_t kernel_w = g.kernel[2], plane_rows = g.in[1];
  const bool max = g.type == PoolingType::kMax;
  // Interior columns: the first window starting at or after 0 to the last ending inside.
  const int64_t span = (kernel_w - 1) * dilate + 1;
  const int64_t interior_begin = std::min(out_w, cpu::CeilDiv(g.pad[2], stride));
  const int64_t last_start = in_w - span + g.pad[2];
  const int64_t interior_end =
      last_start < 0 ? interior_begin
                     : std::max(interior_begin, std::min(out_w, last_start / stride + 1));
  for (int64_t r = first_row; r < end_row; ++r) {
    const AxisTaps& depth = axes[0][r / g.out[1]];
    const AxisTaps& height = axes[1][r % g.out[1]];
    const int64_t row_first = r * out_w;
    int64_t ox = 0;
    const auto scalar_until = [&](int64_t end) {
      if (ox < end) PoolPlaneWindows(g, windows, row_first + ox, row_first + end, x, y);
      ox = std::max(ox, end);
    };
    scalar_until(interior_begin);
    const bool empty = depth.begin >= depth.end || height.begin >= height.end;
    if (!empty) {
      const AxisTaps& any_column = axes[2][ox < out_w ? ox : 0];
      const int64_t divisor = WindowOf(g, depth, height, any_column).divisor;
      const __m512 scale = _mm512_set1_ps(divisor == 0 ? 0.0f : 1.0f / static_cast<float>(divisor));
      for (int64_t column = ox; column < interior_end; column += 16) {
        const int64_t lanes = std::min<int64_t>(16, interior_end - column);
        const int64_t start = column * stride - g.pad[2];
        __m512 acc = max ? LoadStrided(x + (depth.begin * plane_rows + height.begin) * in_w + start,
                                       stride, lanes)
                         : _mm512_setzero_ps();
        for (int64_t d = depth.begin; d < depth.end; d += g.dilate[0]) {
          for (int64_t h = height.begin; h < height.end; h += g.dilate[1]) {
            const float* row = x + (d * plane_rows + h) * in_w + start;
            for (int64_t k = 0; k < kernel_w; ++k) {
              const __m512 v = LoadStrided(row + k * dilate, stride, lanes);
              acc = max ? _mm512_maskz_max_ps(0xFFFF, v, acc) : _mm512_add_ps(acc, v);
            }
          }
        }
        _mm512_mask_storeu_ps(y + row_first + column, FirstLanes(lanes),
                              max ? acc : _mm512_mul_ps(acc, scale));
      }
      ox = std::max(ox, interior_end);
    }
    scalar_until(out_w);
  }
}
#endif

// The lanes' kernel: AVX-512 for float32 in whole vectors where the CPU has it.
// `runs` given when VectorisesLanes.
template <typename T>
void PoolLanesOf(const PoolingGeometry& g, const std::vector<Window>& windows,
                 const ShiftedRuns* runs, int64_t first, int64_t end, const T* x, T* y,
                 int64_t step, int64_t lanes) {
#if MXLITE_HAS_AVX512_KERNEL
  if constexpr (std::is_same_v<T, float>) {
    if (runs != nullptr) {
      PoolLanesAvx512(g, windows, *runs, first, end, x, y, step, lanes);
      return;
    }
  }
#endif
  if (g.dilated()) {
    PoolLanes<true>(g, windows, first, end, x, y, step, lanes);
  } else {
    PoolLanes<false>(g, windows, first, end, x, y, step, lanes);
  }
}

// Whether channels-last and NCHW16c lanes run PoolLanesAvx512 (float32, undilated, a CPU with
// AVX-512, channels in whole vectors: then every task's lanes are, as tasks split the channels
// in multiples of 16).
template <typename T>
bool VectorisesLanes(const PoolingGeometry& g) {
#if MXLITE_HAS_AVX512_KERNEL
  if constexpr (std::is_same_v<T, float>) {
    return (g.channels_last || g.blocked) && g.channels % 16 == 0 && !g.dilated() &&
           cpu::CpuSupportsAvx512f();
  }
#endif
  return false;
}

// Whether channels-first rows run PoolPlaneRowsAvx512 (float32, stride 1 or 2 along the width, a
// CPU with AVX-512).
template <typename T>
bool VectorisesPlaneRows(const PoolingGeometry& g) {
#if MXLITE_HAS_AVX512_KERNEL
  if constexpr (std::is_same_v<T, float>) {
    return !g.channels_last && !g.blocked && (g.stride[2] == 1 || g.stride[2] == 2) &&
           cpu::CpuSupportsAvx512f();
  }
#endif
  return false;
}

// Channels-first output rows [first_row, end_row) of one plane; `axes` given when
// VectorisesPlaneRows.
template <typename T>
void PoolPlaneRows(const PoolingGeometry& g, const AxisWindows* axes,
                   const std::vector<Window>& windows, int64_t first_row, int64_t end_row,
                   const T* x, T* y) {
#if MXLITE_HAS_AVX512_KERNEL
  if constexpr (std::is_same_v<T, float>) {
    if (axes != nullptr) {
      PoolPlaneRowsAvx512(g, *axes, windows, first_row, end_row, x, y);
      return;
    }
  }
#endif
  PoolPlaneWindows(g, windows, first_row * g.out[2], end_row * g.out[2], x, y);
}

template <typename T>
void PoolingForward(const PoolingGeometry& g, const T* x, T* y) {
  const int64_t in_plane = g.in_positions(), out_plane = g.out_positions();
  const AxisWindows axes = AxisWindowsOf(g);
  const std::vector<Window> windows = AllWindows(g, axes);
  const int64_t row_windows = g.out[2];
  const AxisWindows* plane_axes = VectorisesPlaneRows<T>(g) ? &axes : nullptr;
  const bool vector_lanes = VectorisesLanes<T>(g);
  const ShiftedRuns runs = vector_lanes ? ShiftedRunsOf(g, windows) : ShiftedRuns{};
  const ShiftedRuns* lane_runs = vector_lanes ? &runs : nullptr;
  ForEachPoolingTask(g, /*whole_planes=*/false,
                     [&](int64_t n, int64_t c0, int64_t count, int64_t first_row, int64_t end_row) {
                       const T* x_block = x + n * g.channels * in_plane +
                                          g.channel_offset(c0, in_plane);
                       T* y_block = y + n * g.channels * out_plane + g.channel_offset(c0, out_plane);
                       const int64_t first = first_row * row_windows, end = end_row * row_windows;
                       if (g.channels_last || g.blocked) {
                         PoolLanesOf(g, windows, lane_runs, first, end, x_block, y_block,
                                     g.position_step(), count);
                       } else {
                         PoolPlaneRows(g, plane_axes, windows, first_row, end_row, x_block,
                                       y_block);
                       }
                     });
}

// dx = 0, then every output gradient is added to the input element(s) it came from.
template <typename T>
void PoolingBackward(const PoolingGeometry& g, const T* x, const T* dy, T* dx) {
  const int64_t in_plane = g.in_positions(), out_plane = g.out_positions();
  const int64_t in_position_step = g.position_step();
  const int64_t out_position_step = in_position_step;
  const int64_t in_channel_stride = g.lane_stride(in_plane);
  const int64_t out_channel_stride = g.lane_stride(out_plane);
  const int64_t total = g.batch * g.channels * in_plane;
  const AxisWindows axes = AxisWindowsOf(g);
  cpu::ForEachChunk(total,
                    [&](int64_t begin, int64_t end) { std::fill(dx + begin, dx + end, T(0)); });
  ForEachPoolingTask(g, /*whole_planes=*/true, [&](int64_t n, int64_t c0, int64_t count, int64_t,
                                                    int64_t) {
    const int64_t in_offset = n * g.channels * in_plane + g.channel_offset(c0, in_plane);
    const T* dy_block = dy + n * g.channels * out_plane + g.channel_offset(c0, out_plane);
    T* dx_block = dx + in_offset;
    T best[kChannelsPerTask];
    int64_t best_position[kChannelsPerTask];
    ForEachOutputPosition(g, axes, [&](int64_t out_index, const Window& w) {
      const T* grad = dy_block + out_index * out_position_step;
      if (g.type == PoolingType::kMax) {
        FindWindowMaxima(g, w, x + in_offset, in_position_step, in_channel_stride, count, best,
                         best_position);
        for (int64_t c = 0; c < count; ++c) {
          if (best_position[c] < 0) continue;
          dx_block[best_position[c] * in_position_step + c * in_channel_stride] +=
              grad[c * out_channel_stride];
        }
        return;
      }
      if (w.divisor == 0) return;
      const T scale = T(1) / static_cast<T>(w.divisor);
      ForEachWindowElement(g, w, [&](int64_t position) {
        T* target = dx_block + position * in_position_step;
        for (int64_t c = 0; c < count; ++c) {
          target[c * in_channel_stride] += grad[c * out_channel_stride] * scale;
        }
      });
    });
  });
}

std::string Owner(const OpContext& ctx) { return "Pooling " + ctx.node_name; }

void PoolingForwardCpu(const OpContext& ctx, const Attributes& attrs,
                       const std::vector<TensorView>& inputs,
                       const std::vector<TensorView>& outputs, const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const PoolingGeometry g = PoolingGeometryOf(attrs, inputs[0].shape, Owner(ctx));
  MXLITE_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, "Pooling", {
    PoolingForward<T>(g, inputs[0].data_as<T>(), outputs[0].data_as<T>());
  });
}

// Backward reads the input only for max (to find the maxima again); avg and sum need nothing but
// the shapes, which the gradients carry.
void PoolingBackwardCpu(const OpContext& ctx, const Attributes& attrs,
                        const std::vector<TensorView>& output_grads,
                        const std::vector<TensorView>& inputs, const std::vector<TensorView>&,
                        const std::vector<TensorView>& input_grads,
                        const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const PoolingGeometry g = PoolingGeometryOf(attrs, input_grads[0].shape, Owner(ctx));
  MXLITE_FLOAT_TYPE_SWITCH(input_grads[0].dtype, T, "Pooling", {
    const T* x = g.type == PoolingType::kMax ? inputs[0].data_as<T>() : nullptr;
    PoolingBackward<T>(g, x, output_grads[0].data_as<T>(), input_grads[0].data_as<T>());
  });
}

}  // namespace

MXLITE_REGISTER_OP(Pooling) {
  OpDef op;
  op.name = "Pooling";
  op.name_prefix = FixedNamePrefix("pool");
  op.cheap_to_recompute = true;
  op.doc = "Max, average or sum pooling over 1-D, 2-D or 3-D windows (MXNet's Pooling).";
  op.attributes
      .IntTuple("kernel", "window size, e.g. (2,2); ignored with global_pool", Default("()"))
      .Enum("pool_type", {"max", "avg", "sum"}, "the reduction over a window", Default("max"))
      .Bool("global_pool", "pool each whole spatial extent to 1", Default("false"))
      .Bool("cudnn_off", "do not use cuDNN (no effect on the CPU)", Default("false"))
      .Enum("pooling_convention", {"valid", "full"},
            "output size rounding: valid = floor, full = ceil", Default("valid"))
      .IntTuple("stride", "window step per spatial dim; () = 1", Default("()"))
      .IntTuple("pad", "zero padding per spatial dim on both sides; () = 0", Default("()"))
      .IntTuple("dilate", "the step between a window's taps per spatial dim; () = 1", Default("()"))
      .Bool("count_include_pad",
            "avg: divide by the window including padding (true, the default) or by the real "
            "elements only",
            Optional())
      .Enum("layout", {"NCW", "NCHW", "NCDHW", "NWC", "NHWC", "NDHWC", "NCHW16c"},
            "data layout; default channels first for the data's rank. NCHW16c: channels in "
            "blocks of 16, data (N, C/16, H, W, 16) (CPU)",
            Optional());
  op.input_names = [](const Attributes&) { return std::vector<std::string>{"data"}; };
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output"}; };
  op.infer_shape = PoolingInferShape;
  op.backward_dependencies = [](const Attributes& attrs) -> BackwardDependencies {
    return {{attrs.GetString("pool_type") == "max"}, {false}};
  };
  op.layout.role = LayoutRole::kFlexible;
  op.layout.retarget = [](const Attributes&, ActivationLayout layout,
                          std::map<std::string, std::string>& text) {
    text["layout"] = ActivationLayoutName(layout);
  };
  op.forward[DeviceType::kCPU] = PoolingForwardCpu;
  op.backward[DeviceType::kCPU] = PoolingBackwardCpu;
  return op;
}

}  // namespace mxlite
