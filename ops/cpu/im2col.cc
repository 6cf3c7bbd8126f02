#include "ops/cpu/im2col.h"

#include <algorithm>
#include <cstring>

#include "ops/cpu/int_math.h"
#include "ops/cpu/parallel.h"

namespace mxlite::cpu {
namespace {

// Below this many elements a lowering runs on the calling thread alone.
constexpr int64_t kLoweringGrain = 1 << 15;

// Runs fn(index) for index in [0, count), each worth `work` elements, in contiguous blocks on the
// intra-op pool when the total is large enough.
template <typename Fn>
void ForEachIndex(int64_t count, int64_t work, Fn&& fn) {
  const int64_t total = count * std::max<int64_t>(work, 1);
  const int64_t blocks = std::min(count, CeilDiv(total, kLoweringGrain));
  if (blocks <= 1) {
    for (int64_t index = 0; index < count; ++index) fn(index);
    return;
  }
  ParallelFor(blocks, [&](int64_t block) {
    const int64_t end = (block + 1) * count / blocks;
    for (int64_t index = block * count / blocks; index < end; ++index) fn(index);
  });
}

// Output positions o in [begin, end) whose input position o * stride + offset lies in [0, size).
struct ValidRange {
  int64_t begin, end;
};
ValidRange ValidOutputs(int64_t offset, int64_t stride, int64_t size, int64_t out_size) {
  const int64_t begin = std::min(out_size, offset >= 0 ? 0 : (-offset + stride - 1) / stride);
  const int64_t last = size - 1 - offset;  // o * stride <= last
  const int64_t end = last < 0 ? 0 : std::min(out_size, last / stride + 1);
  return {begin, std::max(begin, end)};
}

// The output position that reads input position `in` through tap offset `offset`, or -1.
int64_t OutputReading(int64_t in, int64_t offset, int64_t stride, int64_t out_size) {
  const int64_t t = in - offset;
  if (t < 0 || t % stride != 0 || t / stride >= out_size) return -1;
  return t / stride;
}

}  // namespace

template <typename T>
void Im2Col(const ConvGeometry& g, int64_t channels, const T* image, T* col) {
  const int64_t out_spatial = g.out_spatial();
  ForEachIndex(channels * g.kernel_spatial(), out_spatial, [&](int64_t row) {
    const int64_t c = row / g.kernel_spatial();
    const int64_t i = row / g.kernel_w % g.kernel_h;
    const int64_t j = row % g.kernel_w;
    const T* plane = image + c * g.in_spatial();
    const int64_t offset_w = j * g.dilate_w - g.pad_w;
    const ValidRange valid = ValidOutputs(offset_w, g.stride_w, g.in_w, g.out_w);
    T* out = col + row * out_spatial;
    for (int64_t oh = 0; oh < g.out_h; ++oh, out += g.out_w) {
      const int64_t ih = oh * g.stride_h - g.pad_h + i * g.dilate_h;
      if (ih < 0 || ih >= g.in_h) {
        std::fill(out, out + g.out_w, T(0));
        continue;
      }
      // Indexes stay inside the plane: ow * stride_w + offset_w >= 0 for valid ow.
      const T* source = plane + ih * g.in_w;
      std::fill(out, out + valid.begin, T(0));
      if (g.stride_w == 1) {
        std::memcpy(out + valid.begin, source + valid.begin + offset_w,
                    sizeof(T) * static_cast<size_t>(valid.end - valid.begin));
      } else {
        for (int64_t ow = valid.begin; ow < valid.end; ++ow) {
          out[ow] = source[ow * g.stride_w + offset_w];
        }
      }
      std::fill(out + valid.end, out + g.out_w, T(0));
    }
  });
}

template <typename T>
void Col2Im(const ConvGeometry& g, int64_t channels, const T* col, T* image) {
  const int64_t out_spatial = g.out_spatial();
  // One task per channel: every tap (i, j) of a channel adds into that channel's plane only.
  ForEachIndex(channels, g.kernel_spatial() * out_spatial, [&](int64_t c) {
    T* plane = image + c * g.in_spatial();
    for (int64_t i = 0; i < g.kernel_h; ++i) {
      for (int64_t j = 0; j < g.kernel_w; ++j) {
        const T* in = col + ((c * g.kernel_h + i) * g.kernel_w + j) * out_spatial;
        const int64_t offset_w = j * g.dilate_w - g.pad_w;
        const ValidRange valid = ValidOutputs(offset_w, g.stride_w, g.in_w, g.out_w);
        for (int64_t oh = 0; oh < g.out_h; ++oh, in += g.out_w) {
          const int64_t ih = oh * g.stride_h - g.pad_h + i * g.dilate_h;
          if (ih < 0 || ih >= g.in_h) continue;
          T* target = plane + ih * g.in_w;
          for (int64_t ow = valid.begin; ow < valid.end; ++ow) {
            target[ow * g.stride_w + offset_w] += in[ow];
          }
        }
      }
    }
  });
}

template <typename T>
void Im2Row(const ConvGeometry& g, int64_t channel_stride, int64_t channel_offset, int64_t channels,
            const T* image, T* row) {
  const int64_t patch = g.kernel_spatial() * channels;
  ForEachIndex(g.out_h, g.out_w * patch, [&](int64_t oh) {
    for (int64_t ow = 0; ow < g.out_w; ++ow) {
      T* out = row + (oh * g.out_w + ow) * patch;
      for (int64_t i = 0; i < g.kernel_h; ++i) {
        const int64_t ih = oh * g.stride_h - g.pad_h + i * g.dilate_h;
        for (int64_t j = 0; j < g.kernel_w; ++j, out += channels) {
          const int64_t iw = ow * g.stride_w - g.pad_w + j * g.dilate_w;
          if (ih < 0 || ih >= g.in_h || iw < 0 || iw >= g.in_w) {
            std::fill(out, out + channels, T(0));
          } else {
            std::memcpy(out, image + (ih * g.in_w + iw) * channel_stride + channel_offset,
                        sizeof(T) * static_cast<size_t>(channels));
          }
        }
      }
    }
  });
}

template <typename T>
void Row2Im(const ConvGeometry& g, int64_t channel_stride, int64_t channel_offset, int64_t channels,
            const T* row, T* image) {
  const int64_t patch = g.kernel_spatial() * channels;
  // Gathers per input row ih (every tap that reads it), so tasks never add to the same pixel.
  ForEachIndex(g.in_h, g.in_w * patch, [&](int64_t ih) {
    for (int64_t iw = 0; iw < g.in_w; ++iw) {
      T* pixel = image + (ih * g.in_w + iw) * channel_stride + channel_offset;
      for (int64_t i = 0; i < g.kernel_h; ++i) {
        const int64_t oh = OutputReading(ih, i * g.dilate_h - g.pad_h, g.stride_h, g.out_h);
        if (oh < 0) continue;
        for (int64_t j = 0; j < g.kernel_w; ++j) {
          const int64_t ow = OutputReading(iw, j * g.dilate_w - g.pad_w, g.stride_w, g.out_w);
          if (ow < 0) continue;
          const T* in = row + (oh * g.out_w + ow) * patch + (i * g.kernel_w + j) * channels;
          for (int64_t c = 0; c < channels; ++c) pixel[c] += in[c];
        }
      }
    }
  });
}

#define MXLITE_INSTANTIATE_LOWERINGS(T)                                                  \
  template void Im2Col<T>(const ConvGeometry&, int64_t, const T*, T*);                   \
  template void Col2Im<T>(const ConvGeometry&, int64_t, const T*, T*);                   \
  template void Im2Row<T>(const ConvGeometry&, int64_t, int64_t, int64_t, const T*, T*); \
  template void Row2Im<T>(const ConvGeometry&, int64_t, int64_t, int64_t, const T*, T*);

MXLITE_INSTANTIATE_LOWERINGS(float)
MXLITE_INSTANTIATE_LOWERINGS(double)

}  // namespace mxlite::cpu
