// depthwise_direct: groups == input channels, each input channel c feeding output channels
// [c * multiplier, (c + 1) * multiplier). Direct loops, any kernel, stride, padding and dilation.
//
// NCHW works on whole planes: for each output row and kernel tap the valid run of output columns
// is computed once, so the inner loop is a branch-free axpy over a row (vectorised at stride 1).
// NHWC works on pixels, the inner loop over the contiguous channels; its weight is first copied to
// (KH*KW, O) so that the loop reads it contiguously too (the only workspace).
// Every task owns what it writes (an output plane / row, a data-gradient plane / row, a weight
// row / tap), so results do not depend on the thread count.
// float32 NHWC forward with multiplier 1 runs a vector kernel instead where the CPU has one:
// conv_depthwise_avx512.h (AVX-512F: tiles of 8 pixels x 16 channels), else conv_depthwise_avx2.h
// (AVX2+FMA: 4 or 8 pixels x 8 channels); everything else runs the portable loops here.
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/error.h"
#include "ops/cpu/conv_algorithms.h"
#include "ops/cpu/conv_depthwise_avx2.h"
#include "ops/cpu/conv_depthwise_avx512.h"
#include "ops/cpu/depthwise_rows.h"
#include "ops/cpu/int_math.h"
#include "ops/cpu/parallel.h"

namespace mxlite::cpu {
namespace {

// The output columns [begin, end) whose input column ow * stride + offset lies in [0, width).
struct ColumnRun {
  int64_t begin, end;
};

ColumnRun ValidColumns(int64_t offset, int64_t stride, int64_t width, int64_t out_width) {
  const int64_t begin = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  const int64_t last = width - 1 - offset;  // the largest ow * stride allowed
  const int64_t end = last < 0 ? 0 : std::min(out_width, last / stride + 1);
  return {begin, std::max(begin, end)};
}

int64_t Multiplier(const ConvGeometry& g) { return g.out_channels / g.in_channels; }

// ---- NCHW --------------------------------------------------------------------------------------

template <typename T>
void ForwardNCHW(const ConvGeometry& g, const T* data, const T* weight, const T* bias,
                 const Epilogue<T>& clamp, T* output) {
  const int64_t mult = Multiplier(g), taps = g.kernel_spatial();
  ParallelFor(g.batch * g.out_channels, [&](int64_t plane) {
    const int64_t n = plane / g.out_channels, o = plane % g.out_channels, c = o / mult;
    const T* x = data + (n * g.in_channels + c) * g.in_spatial();
    const T* w = weight + o * taps;
    T* y = output + plane * g.out_spatial();
    std::fill(y, y + g.out_spatial(), bias != nullptr ? bias[o] : T(0));
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      T* y_row = y + oh * g.out_w;
      for (int64_t i = 0; i < g.kernel_h; ++i) {
        const int64_t ih = oh * g.stride_h - g.pad_h + i * g.dilate_h;
        if (ih < 0 || ih >= g.in_h) continue;
        const T* x_row = x + ih * g.in_w;
        for (int64_t j = 0; j < g.kernel_w; ++j) {
          const T wv = w[i * g.kernel_w + j];
          const int64_t offset = j * g.dilate_w - g.pad_w;
          const ColumnRun run = ValidColumns(offset, g.stride_w, g.in_w, g.out_w);
          if (g.stride_w == 1) {
            for (int64_t ow = run.begin; ow < run.end; ++ow) y_row[ow] += wv * x_row[ow + offset];
          } else {
            for (int64_t ow = run.begin; ow < run.end; ++ow) {
              y_row[ow] += wv * x_row[ow * g.stride_w + offset];
            }
          }
        }
      }
    }
    ApplyEpilogue(clamp, 1, g.out_spatial(), y, g.out_spatial());  // the plane is still in cache
  });
}

template <typename T>
void BackwardDataNCHW(const ConvGeometry& g, const T* output_grad, const T* weight, T* data_grad) {
  const int64_t mult = Multiplier(g), taps = g.kernel_spatial();
  ParallelFor(g.batch * g.in_channels, [&](int64_t plane) {
    const int64_t n = plane / g.in_channels, c = plane % g.in_channels;
    T* dx = data_grad + plane * g.in_spatial();
    std::fill(dx, dx + g.in_spatial(), T(0));
    for (int64_t m = 0; m < mult; ++m) {
      const int64_t o = c * mult + m;
      const T* dy = output_grad + (n * g.out_channels + o) * g.out_spatial();
      const T* w = weight + o * taps;
      for (int64_t oh = 0; oh < g.out_h; ++oh) {
        const T* dy_row = dy + oh * g.out_w;
        for (int64_t i = 0; i < g.kernel_h; ++i) {
          const int64_t ih = oh * g.stride_h - g.pad_h + i * g.dilate_h;
          if (ih < 0 || ih >= g.in_h) continue;
          T* dx_row = dx + ih * g.in_w;
          for (int64_t j = 0; j < g.kernel_w; ++j) {
            const T wv = w[i * g.kernel_w + j];
            const int64_t offset = j * g.dilate_w - g.pad_w;
            const ColumnRun run = ValidColumns(offset, g.stride_w, g.in_w, g.out_w);
            for (int64_t ow = run.begin; ow < run.end; ++ow) {
              dx_row[ow * g.stride_w + offset] += wv * dy_row[ow];
            }
          }
        }
      }
    }
  });
}

template <typename T>
void BackwardFilterNCHW(const ConvGeometry& g, const T* data, const T* output_grad,
                        T* weight_grad) {
  const int64_t mult = Multiplier(g), taps = g.kernel_spatial();
  ParallelFor(g.out_channels, [&](int64_t o) {
    const int64_t c = o / mult;
    for (int64_t i = 0; i < g.kernel_h; ++i) {
      for (int64_t j = 0; j < g.kernel_w; ++j) {
        const int64_t offset = j * g.dilate_w - g.pad_w;
        const ColumnRun run = ValidColumns(offset, g.stride_w, g.in_w, g.out_w);
        T sum = 0;
        for (int64_t n = 0; n < g.batch; ++n) {
          const T* x = data + (n * g.in_channels + c) * g.in_spatial();
          const T* dy = output_grad + (n * g.out_channels + o) * g.out_spatial();
          for (int64_t oh = 0; oh < g.out_h; ++oh) {
            const int64_t ih = oh * g.stride_h - g.pad_h + i * g.dilate_h;
            if (ih < 0 || ih >= g.in_h) continue;
            const T* x_row = x + ih * g.in_w;
            const T* dy_row = dy + oh * g.out_w;
            for (int64_t ow = run.begin; ow < run.end; ++ow) {
              sum += dy_row[ow] * x_row[ow * g.stride_w + offset];
            }
          }
        }
        weight_grad[o * taps + i * g.kernel_w + j] = sum;
      }
    }
  });
}

// ---- NHWC --------------------------------------------------------------------------------------

// out[c * mult + m] += w[c * mult + m] * in[c] over every input channel c.
template <typename T>
void MultiplyAddPixel(int64_t channels, int64_t mult, const T* w, const T* in, T* out) {
  if (mult == 1) {
    for (int64_t c = 0; c < channels; ++c) out[c] += w[c] * in[c];
    return;
  }
  for (int64_t c = 0; c < channels; ++c) {
    const T value = in[c];
    for (int64_t m = 0; m < mult; ++m) out[c * mult + m] += w[c * mult + m] * value;
  }
}

// The portable row: bias first, then every tap added over the row, then the clamp (the row is in
// cache). Input channels `channels` only (out channels [begin * M, end * M)).
template <typename T>
void PortableRowNhwc(const ConvGeometry& g, const T* const* input_rows, const T* by_tap,
                     const T* bias, const Epilogue<T>& clamp, ChannelRange channels, T* y_row) {
  const int64_t mult = Multiplier(g), c_in = g.in_channels, c_out = g.out_channels;
  const int64_t first_out = channels.begin * mult, slice_in = channels.end - channels.begin;
  const int64_t slice_out = slice_in * mult;
  for (int64_t ow = 0; ow < g.out_w; ++ow) {
    T* pixel = y_row + ow * c_out + first_out;
    if (bias != nullptr) {
      std::copy(bias + first_out, bias + first_out + slice_out, pixel);
    } else {
      std::fill(pixel, pixel + slice_out, T(0));
    }
  }
  for (int64_t i = 0; i < g.kernel_h; ++i) {
    const T* x_row = input_rows[i];
    if (x_row == nullptr) continue;
    for (int64_t j = 0; j < g.kernel_w; ++j) {
      const T* w = by_tap + (i * g.kernel_w + j) * c_out + first_out;
      const int64_t offset = j * g.dilate_w - g.pad_w;
      const ColumnRun run = ValidColumns(offset, g.stride_w, g.in_w, g.out_w);
      for (int64_t ow = run.begin; ow < run.end; ++ow) {
        MultiplyAddPixel(slice_in, mult, w,
                         x_row + (ow * g.stride_w + offset) * c_in + channels.begin,
                         y_row + ow * c_out + first_out);
      }
    }
  }
  ApplyEpilogue(clamp.Offset(0, first_out), g.out_w, slice_out, y_row + first_out, c_out);
}

// How ForwardNHWC deals the output to threads: row_parts runs of consecutive rows times
// channel_parts slices of the channels (each slice whole 64-byte lines of every pixel).
struct NhwcSplit {
  int64_t row_parts = 1, channel_parts = 1;
  int64_t channel_unit = 1;  // input channels per indivisible slice unit
};

// The split with the least work in its largest part; on a tie, row runs (a slice reads every
// other line of each pixel, and the adjacent-line prefetcher then fetches the other slice's lines
// too, which costs the big memory-bound layers). Slices pay off where the rows do not divide
// evenly (7 rows on 2 threads: 4 and 3). Slices need lines to themselves (no two threads writing
// one line), so only channel counts that keep each pixel a whole number of lines are sliced.
NhwcSplit ChooseNhwcSplit(const ConvGeometry& g, size_t element_bytes, int threads) {
  NhwcSplit best;
  const int64_t rows = g.batch * g.out_h;
  const int64_t line_channels = static_cast<int64_t>(64 / element_bytes);
  const bool sliceable = g.out_channels % line_channels == 0 && Multiplier(g) == 1;
  best.channel_unit = sliceable ? line_channels : g.in_channels;
  const int64_t units = CeilDiv(g.in_channels, best.channel_unit);
  int64_t best_work = INT64_MAX;
  for (int64_t channel_parts = 1; channel_parts <= std::min<int64_t>(threads, units);
       ++channel_parts) {
    const int64_t row_parts = std::min<int64_t>(rows, threads / channel_parts);
    const int64_t work = CeilDiv(rows, row_parts) * CeilDiv(units, channel_parts);
    if (work < best_work) {
      best_work = work;
      best.row_parts = row_parts;
      best.channel_parts = channel_parts;
    }
  }
  return best;
}

template <typename T>
void ForwardNHWC(const ConvGeometry& g, const T* data, const T* by_tap, const T* bias,
                 const Epilogue<T>& clamp, T* output) {
  // A row run stays on one thread: neighbouring output rows read mostly the same input rows,
  // which then stay in that thread's L2 (rows dealt out one by one made two threads fetch the
  // same input rows).
  const NhwcSplit split = ChooseNhwcSplit(g, sizeof(T), IntraOpThreads());
  const int64_t rows = g.batch * g.out_h;
  const int64_t units = CeilDiv(g.in_channels, split.channel_unit);
  ParallelFor(split.row_parts * split.channel_parts, [&](int64_t part) {
    const int64_t run = part / split.channel_parts, slice = part % split.channel_parts;
    const ChannelRange channels{
        std::min(g.in_channels, units * slice / split.channel_parts * split.channel_unit),
        std::min(g.in_channels, units * (slice + 1) / split.channel_parts * split.channel_unit)};
    std::vector<const T*> input_rows(static_cast<size_t>(g.kernel_h));
    const int64_t row_end = rows * (run + 1) / split.row_parts;
    for (int64_t row = rows * run / split.row_parts; row < row_end; ++row) {
      ChannelsLastInputRows(g, data, row / g.out_h, row % g.out_h, input_rows.data());
      DepthwiseRowNhwc(g, input_rows.data(), by_tap, bias, clamp, channels,
                       output + row * g.out_w * g.out_channels);
    }
  });
}

// Gathers into each data-gradient row from the output positions that read it, so rows are
// independent tasks.
template <typename T>
void BackwardDataNHWC(const ConvGeometry& g, const T* output_grad, const T* by_tap, T* data_grad) {
  const int64_t mult = Multiplier(g), c_in = g.in_channels, c_out = g.out_channels;
  ParallelFor(g.batch * g.in_h, [&](int64_t row) {
    const int64_t n = row / g.in_h, ih = row % g.in_h;
    T* dx_row = data_grad + row * g.in_w * c_in;
    std::fill(dx_row, dx_row + g.in_w * c_in, T(0));
    for (int64_t i = 0; i < g.kernel_h; ++i) {
      const int64_t h_shifted = ih + g.pad_h - i * g.dilate_h;  // oh * stride_h
      if (h_shifted < 0 || h_shifted % g.stride_h != 0) continue;
      const int64_t oh = h_shifted / g.stride_h;
      if (oh >= g.out_h) continue;
      const T* dy_row = output_grad + (n * g.out_h + oh) * g.out_w * c_out;
      for (int64_t j = 0; j < g.kernel_w; ++j) {
        const T* w = by_tap + (i * g.kernel_w + j) * c_out;
        for (int64_t iw = 0; iw < g.in_w; ++iw) {
          const int64_t w_shifted = iw + g.pad_w - j * g.dilate_w;  // ow * stride_w
          if (w_shifted < 0 || w_shifted % g.stride_w != 0) continue;
          const int64_t ow = w_shifted / g.stride_w;
          if (ow >= g.out_w) continue;
          const T* dy = dy_row + ow * c_out;
          T* dx = dx_row + iw * c_in;
          for (int64_t c = 0; c < c_in; ++c) {
            T sum = 0;
            for (int64_t m = 0; m < mult; ++m) sum += w[c * mult + m] * dy[c * mult + m];
            dx[c] += sum;
          }
        }
      }
    }
  });
}

// One task per kernel tap, each summing its (O) row of `by_tap` over every output position.
template <typename T>
void BackwardFilterNHWC(const ConvGeometry& g, const T* data, const T* output_grad, T* by_tap,
                        T* weight_grad) {
  const int64_t mult = Multiplier(g), c_in = g.in_channels, c_out = g.out_channels;
  const int64_t taps = g.kernel_spatial();
  ParallelFor(taps, [&](int64_t tap) {
    const int64_t i = tap / g.kernel_w, j = tap % g.kernel_w;
    T* sum = by_tap + tap * c_out;
    std::fill(sum, sum + c_out, T(0));
    const int64_t offset = j * g.dilate_w - g.pad_w;
    const ColumnRun run = ValidColumns(offset, g.stride_w, g.in_w, g.out_w);
    for (int64_t n = 0; n < g.batch; ++n) {
      for (int64_t oh = 0; oh < g.out_h; ++oh) {
        const int64_t ih = oh * g.stride_h - g.pad_h + i * g.dilate_h;
        if (ih < 0 || ih >= g.in_h) continue;
        const T* x_row = data + (n * g.in_h + ih) * g.in_w * c_in;
        const T* dy_row = output_grad + (n * g.out_h + oh) * g.out_w * c_out;
        for (int64_t ow = run.begin; ow < run.end; ++ow) {
          MultiplyAddPixel(c_in, mult, dy_row + ow * c_out,
                           x_row + (ow * g.stride_w + offset) * c_in, sum);
        }
      }
    }
  });
  for (int64_t o = 0; o < c_out; ++o) {
    for (int64_t tap = 0; tap < taps; ++tap) weight_grad[o * taps + tap] = by_tap[tap * c_out + o];
  }
}

// The prepared weight's by-tap copy, checked to be this geometry's.
const float* PreparedByTap(const ConvGeometry& g, const PreparedConvWeight& prepared) {
  MX_CHECK(prepared.by_tap.size() == static_cast<size_t>(g.kernel_spatial() * g.out_channels))
      << "depthwise_direct: the prepared weight holds " << prepared.by_tap.size()
      << " by-tap values; " << DescribeGeometry(g) << " needs "
      << g.kernel_spatial() * g.out_channels;
  return prepared.by_tap.data();
}

class DepthwiseDirectAlgorithm final : public ConvAlgorithmBase<DepthwiseDirectAlgorithm> {
 public:
  explicit DepthwiseDirectAlgorithm(ConvLayout layout) : layout_(layout) {}

  std::string_view name() const override { return "depthwise_direct"; }
  ConvLayout layout() const override { return layout_; }
  bool HasDirection(ConvDirection) const override { return true; }
  bool Supports(const ConvGeometry& g, ConvDirection) const override {
    return IsValidConvGeometry(g) && g.layout == layout_ && g.groups == g.in_channels;
  }
  size_t WorkspaceBytes(const ConvGeometry& g, ConvDirection direction,
                        DType dtype) const override {
    WorkspaceTally tally(dtype);
    if (Supports(g, direction) && layout_ == ConvLayout::kNHWC) {
      tally.Add(g.kernel_spatial() * g.out_channels);
    }
    return tally.bytes();
  }

  // NHWC: the by-tap weight, so that forward calls skip the transpose (a serial pass over the
  // weight before the parallel rows: ~5 us of a 14x14x384 layer's 50).
  std::unique_ptr<PreparedConvWeight> PrepareSupported(const ConvGeometry& g,
                                                       const float* weight) const override {
    if (layout_ != ConvLayout::kNHWC) return nullptr;
    auto prepared = std::make_unique<PreparedConvWeight>();
    prepared->by_tap.resize(static_cast<size_t>(g.kernel_spatial() * g.out_channels));
    DepthwiseWeightsByTap(g, weight, prepared->by_tap.data());
    return prepared;
  }

  template <typename T>
  void Compute(ConvDirection direction, const ConvGeometry& g, const ConvTensors<T>& t,
               ScratchSpace& scratch) const {
    if (layout_ == ConvLayout::kNCHW) {
      switch (direction) {
        case ConvDirection::kForward:
          return ForwardNCHW(g, t.data, t.weight, t.bias, t.OutputClamp(), t.output);
        case ConvDirection::kBackwardData:
          return BackwardDataNCHW(g, t.output_grad, t.weight, t.data_grad);
        case ConvDirection::kBackwardFilter:
          return BackwardFilterNCHW(g, t.data, t.output_grad, t.weight_grad);
      }
      return;
    }
    if constexpr (std::is_same_v<T, float>) {
      if (direction == ConvDirection::kForward && t.prepared_weight != nullptr) {
        return ForwardNHWC(g, t.data, PreparedByTap(g, *t.prepared_weight), t.bias, t.OutputClamp(),
                           t.output);
      }
    }
    T* by_tap = scratch.GetArray<T>(g.kernel_spatial() * g.out_channels);
    switch (direction) {
      case ConvDirection::kForward:
        DepthwiseWeightsByTap(g, t.weight, by_tap);
        return ForwardNHWC(g, t.data, by_tap, t.bias, t.OutputClamp(), t.output);
      case ConvDirection::kBackwardData:
        DepthwiseWeightsByTap(g, t.weight, by_tap);
        return BackwardDataNHWC(g, t.output_grad, by_tap, t.data_grad);
      case ConvDirection::kBackwardFilter:
        return BackwardFilterNHWC(g, t.data, t.output_grad, by_tap, t.weight_grad);
    }
  }

 private:
  ConvLayout layout_;
};

}  // namespace

template <typename T>
void DepthwiseWeightsByTap(const ConvGeometry& g, const T* weight, T* by_tap) {
  const int64_t taps = g.kernel_spatial();
  for (int64_t o = 0; o < g.out_channels; ++o) {
    for (int64_t tap = 0; tap < taps; ++tap) {
      by_tap[tap * g.out_channels + o] = weight[o * taps + tap];
    }
  }
}

template <typename T>
void DepthwiseRowNhwc(const ConvGeometry& g, const T* const* input_rows, const T* by_tap,
                      const T* bias, const Epilogue<T>& clamp, ChannelRange channels, T* y_row) {
  if constexpr (std::is_same_v<T, float>) {
    if (Multiplier(g) == 1 && detail::DepthwiseAvx512Available()) {
      detail::DepthwiseForwardRowNhwcAvx512(g, input_rows, by_tap, bias, clamp, channels.begin,
                                            channels.end, y_row);
      return;
    }
    if (Multiplier(g) == 1 && detail::DepthwiseAvx2Available()) {
      detail::DepthwiseForwardRowNhwcAvx2(g, input_rows, by_tap, bias, clamp, channels.begin,
                                          channels.end, y_row);
      return;
    }
  }
  PortableRowNhwc(g, input_rows, by_tap, bias, clamp, channels, y_row);
}

#define MXLITE_INSTANTIATE_DEPTHWISE_ROWS(T)                                                  \
  template void DepthwiseWeightsByTap<T>(const ConvGeometry&, const T*, T*);                  \
  template void DepthwiseRowNhwc<T>(const ConvGeometry&, const T* const*, const T*, const T*, \
                                    const Epilogue<T>&, ChannelRange, T*);
MXLITE_INSTANTIATE_DEPTHWISE_ROWS(float)
MXLITE_INSTANTIATE_DEPTHWISE_ROWS(double)
#undef MXLITE_INSTANTIATE_DEPTHWISE_ROWS

const ConvAlgorithm& DepthwiseAlgorithm(ConvLayout layout) {
  static const DepthwiseDirectAlgorithm nchw(ConvLayout::kNCHW), nhwc(ConvLayout::kNHWC);
  if (layout == ConvLayout::kNCHW16c) return DepthwiseNchw16cAlgorithm();
  return layout == ConvLayout::kNHWC ? nhwc : nchw;
}

}  // namespace mxlite::cpu
