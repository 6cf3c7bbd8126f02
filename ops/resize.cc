// Resize (ops/resize.h): the OpDef, the taps, and the CPU kernels. Each resized axis is one pass
// over the data seen as (outer, axis, inner): an output row is a weighted sum of one, two, four
// (or, antialiased, more) input rows of `inner` elements (Eigen, vectorised), rows split over the
// intra-op threads; passes between the first and the last write to scratch. Backward runs the
// passes in reverse, each input row gathering the output rows that read it (no two threads write
// one element).
#include "ops/resize.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "ops/cpu/elementwise.h"
#include "ops/operator.h"

namespace mxlite {

namespace {

// "(2,2.5)", "[2, 2.5]", "2" or "()" as numbers; an error naming `owner` when malformed.
std::vector<double> ScalesOf(const std::string& text, const std::string& owner) {
  std::string inner = text;
  inner.erase(std::remove_if(inner.begin(), inner.end(),
                             [](char c) { return c == '(' || c == ')' || c == '[' || c == ']' ||
                                                 c == ' '; }),
              inner.end());
  std::vector<double> values;
  size_t start = 0;
  while (start < inner.size()) {
    const size_t comma = std::min(inner.find(',', start), inner.size());
    const std::string item = inner.substr(start, comma - start);
    size_t used = 0;
    double value = 0;
    try {
      value = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    MX_CHECK(!item.empty() && used == item.size())
        << owner << ": scale '" << text << "' is not a tuple of numbers, e.g. (2,2)";
    values.push_back(value);
    start = comma + 1;
  }
  return values;
}

}  // namespace

ResizePlan ResizePlanOf(const Attributes& attrs, const Shape& data, const std::string& owner) {
  const std::vector<int64_t> size = attrs.GetInts("size");
  const std::vector<double> scale = ScalesOf(attrs.GetString("scale"), owner);
  MX_CHECK(static_cast<int>(size.size()) <= data.ndim())
      << owner << ": size " << FormatIntTuple(size) << " names " << size.size()
      << " axes but the data " << data << " has " << data.ndim();
  MX_CHECK(scale.empty() || scale.size() == size.size())
      << owner << ": scale has " << scale.size() << " values for the " << size.size()
      << " resized axes";
  const std::vector<double> roi = ScalesOf(attrs.GetString("roi"), owner);
  MX_CHECK(roi.empty() || roi.size() == 2 * size.size())
      << owner << ": roi has " << roi.size() << " values; the " << size.size()
      << " resized axes need " << 2 * size.size() << " (their starts, then their ends)";
  ResizePlan plan;
  plan.output = data;
  const int first = data.ndim() - static_cast<int>(size.size());
  for (size_t i = 0; i < size.size(); ++i) {
    const int axis = first + static_cast<int>(i);
    const int64_t in = data[axis], out = size[i];
    MX_CHECK(out >= 0) << owner << ": size " << FormatIntTuple(size) << " holds a negative extent";
    MX_CHECK(in > 0 || out == 0) << owner << ": axis " << axis << " of the data " << data
                                 << " is empty and cannot be resized to " << out;
    const double s = scale.empty() ? (in > 0 ? static_cast<double>(out) / in : 1.0) : scale[i];
    MX_CHECK(s > 0) << owner << ": the scale of axis " << axis << " is " << s
                    << "; it must be positive";
    plan.output[axis] = out;
    const double start = roi.empty() ? 0.0 : roi[i], end = roi.empty() ? 1.0 : roi[size.size() + i];
    if (in != out || s != 1.0 || start != 0.0 || end != 1.0) {
      plan.axes.push_back({axis, in, out, s, start, end});
    }
  }
  // The pass that grows the data least goes first, so the passes after it read and write the
  // least (upsampling HxW by 8 each: 8x, then 64x, either way; shrinking one axis and growing
  // another: the shrink first). Ties: the last axis first, while the data is smallest, as its
  // pass is the one that cannot run whole rows.
  std::stable_sort(plan.axes.begin(), plan.axes.end(), [](const ResizeAxis& a, const ResizeAxis& b) {
    const double ga = static_cast<double>(a.out) / static_cast<double>(a.in);
    const double gb = static_cast<double>(b.out) / static_cast<double>(b.in);
    return ga != gb ? ga < gb : a.axis > b.axis;
  });
  return plan;
}

namespace {

// The input coordinate output index x maps to. The resized length is in * scale, unrounded
// (ONNX's rule: it is `out` unless a scale was given).
double SourceCoordinate(const std::string& transform, const ResizeAxis& a, int64_t x) {
  const double position = static_cast<double>(x);
  const double resized = static_cast<double>(a.in) * a.scale;
  if (transform == "align_corners") {
    return resized == 1.0 ? 0.0 : position * static_cast<double>(a.in - 1) / (resized - 1.0);
  }
  if (transform == "asymmetric") return position / a.scale;
  if (transform == "tf_crop_and_resize") {
    const double span = (a.roi_end - a.roi_start) * static_cast<double>(a.in - 1);
    return a.roi_start * static_cast<double>(a.in - 1) +
           (resized == 1.0 ? span / 2 : position * span / (resized - 1.0));
  }
  if (transform == "tf_half_pixel_for_nn") return (position + 0.5) / a.scale;
  if (transform == "pytorch_half_pixel" && resized <= 1.0) return 0.0;
  if (transform == "half_pixel_symmetric") {
    // The output's centre on the input's: differs from half_pixel where out != in * scale.
    const double offset =
        static_cast<double>(a.in) / 2 * (1 - static_cast<double>(a.out) / resized);
    return offset + (position + 0.5) / a.scale - 0.5;
  }
  return (position + 0.5) / a.scale - 0.5;  // half_pixel, pytorch_half_pixel
}

int64_t NearestIndex(const std::string& rounding, double coordinate) {
  if (rounding == "floor") return static_cast<int64_t>(std::floor(coordinate));
  if (rounding == "ceil") return static_cast<int64_t>(std::ceil(coordinate));
  const double below = std::floor(coordinate);
  const double excess = coordinate - below;
  if (excess == 0.5) {
    return static_cast<int64_t>(rounding == "round_prefer_ceil" ? below + 1 : below);
  }
  return static_cast<int64_t>(std::round(coordinate));
}

// ONNX's cubic weights of the four taps floor(c) - 1 .. floor(c) + 2 for t = c - floor(c) (its
// reference's expressions, so that the float64 weights round alike).
void CubicWeights(double t, double a, double* w) {
  const double u = 1 - t;
  w[0] = ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a;
  w[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
  w[2] = ((a + 2) * u - (a + 3)) * u * u + 1;
  w[3] = ((a * (u + 1) - 5 * a) * (u + 1) + 8 * a) * (u + 1) - 4 * a;
}

// Keys' cubic kernel W(d) (ops/resize.h), 0 from |d| = 2 on (ONNX's reference's expressions).
double CubicKernel(double d, double a) {
  d = std::abs(d);
  const double d2 = d * d, d3 = d * d2;
  if (d <= 1) return (a + 2) * d3 - (a + 3) * d2 + 1;
  if (d < 2) return a * d3 - 5 * a * d2 + 8 * a * d - 4 * a;
  return 0.0;
}

// The taps of an antialiased linear or cubic filter on an axis that shrinks (scale < 1): the
// filter stretched by 1 / scale, so each output averages every input under it rather than
// sampling two or four (ONNX's antialias; with half_pixel and exclude_outside, PyTorch's
// antialias=True and PIL's resampling). Around coordinate c with base = floor(c) and t = c - base
// (ONNX takes t in (0, 1]: an integral c as base c - 1, t 1), tap k reads base + start + k with
// weight filter((start + k - t) * scale), start = floor(-support / scale) + 1 (support 1 for
// linear, 2 for cubic), 2 - 2 * start taps in all; the weights are normalised to sum 1.
ResizeTaps AntialiasedTaps(const std::string& mode, const std::string& transform, double cubic_a,
                           bool exclude_outside, const ResizeAxis& a) {
  const double support = mode == "cubic" ? 2.0 : 1.0;
  const int64_t start = static_cast<int64_t>(std::floor(-support / a.scale)) + 1;
  ResizeTaps taps;
  taps.count = static_cast<int>(2 - 2 * start);
  const size_t count = static_cast<size_t>(taps.count);
  taps.index.resize(static_cast<size_t>(a.out) * count);
  taps.weight.resize(taps.index.size());
  for (int64_t x = 0; x < a.out; ++x) {
    const double c = SourceCoordinate(transform, a, x);
    double base = std::floor(c), t = c - base;
    if (t == 0.0) base -= 1, t = 1.0;
    int64_t* index = &taps.index[static_cast<size_t>(x) * count];
    double* weight = &taps.weight[static_cast<size_t>(x) * count];
    double sum = 0;
    for (size_t k = 0; k < count; ++k) {
      const double offset = static_cast<double>(start + static_cast<int64_t>(k));
      const double d = (offset - t) * a.scale;
      const int64_t i = static_cast<int64_t>(base) + start + static_cast<int64_t>(k);
      const bool outside = i < 0 || i >= a.in;
      weight[k] = exclude_outside && outside ? 0.0
                  : mode == "cubic"          ? CubicKernel(d, cubic_a)
                                             : std::max(0.0, 1.0 - std::abs(d));
      index[k] = std::clamp<int64_t>(i, 0, a.in - 1);
      sum += weight[k];
    }
    for (size_t k = 0; k < count; ++k) weight[k] = sum != 0.0 ? weight[k] / sum : 0.0;
  }
  return taps;
}

}  // namespace

// The taps before tf_crop_and_resize's outside outputs are cleared (defined below).
static ResizeTaps PlainTapsOf(const Attributes& attrs, const ResizeAxis& a);

// tf_crop_and_resize: the outputs whose coordinate falls outside the input read nothing (every
// weight 0); the importer adds the extrapolation value there. The kernels copy one tap and blend
// two without reading their weights, so such an axis's taps go to three, the kernels' weighted
// sum (the added taps weigh 0).
ResizeTaps TapsOf(const Attributes& attrs, const ResizeAxis& a) {
  ResizeTaps taps = PlainTapsOf(attrs, a);
  const std::string transform = attrs.GetString("coordinate_transformation_mode");
  if (transform != "tf_crop_and_resize") return taps;
  std::vector<int64_t> outside;
  for (int64_t x = 0; x < a.out; ++x) {
    const double c = SourceCoordinate(transform, a, x);
    if (c < 0.0 || c > static_cast<double>(a.in - 1)) outside.push_back(x);
  }
  if (outside.empty()) return taps;
  if (taps.count < 3) {  // nearest's (1) and linear's (1 - t, t), then taps of weight 0
    const size_t from = static_cast<size_t>(taps.count);
    ResizeTaps widened;
    widened.count = 3;
    for (int64_t x = 0; x < a.out; ++x) {
      const size_t first = static_cast<size_t>(x) * from;
      for (size_t k = 0; k < 3; ++k) {
        widened.index.push_back(taps.index[first + (k < from ? k : 0)]);
        widened.weight.push_back(k < from ? taps.weight[first + k] : 0.0);
      }
    }
    taps = std::move(widened);
  }
  const size_t count = static_cast<size_t>(taps.count);
  for (int64_t x : outside) {
    for (size_t k = 0; k < count; ++k) taps.weight[static_cast<size_t>(x) * count + k] = 0.0;
  }
  return taps;
}

static ResizeTaps PlainTapsOf(const Attributes& attrs, const ResizeAxis& a) {
  const std::string mode = attrs.GetString("mode");
  const std::string transform = attrs.GetString("coordinate_transformation_mode");
  const std::string rounding = attrs.GetString("nearest_mode");
  if (mode != "nearest" && attrs.GetBool("antialias") && a.scale < 1.0) {
    return AntialiasedTaps(mode, transform, attrs.GetFloat("cubic_coeff_a"),
                           attrs.GetBool("exclude_outside"), a);
  }
  ResizeTaps taps;
  taps.count = mode == "cubic" ? 4 : mode == "linear" ? 2 : 1;
  const size_t count = static_cast<size_t>(taps.count);
  taps.index.resize(static_cast<size_t>(a.out) * count);
  taps.weight.assign(taps.index.size(), 0.0);
  const auto clamp = [&](int64_t i) { return std::clamp<int64_t>(i, 0, a.in - 1); };
  const double cubic_a = mode == "cubic" ? attrs.GetFloat("cubic_coeff_a") : 0.0;
  const bool exclude_outside = mode == "cubic" && attrs.GetBool("exclude_outside");
  for (int64_t x = 0; x < a.out; ++x) {
    const double c = SourceCoordinate(transform, a, x);
    int64_t* index = &taps.index[static_cast<size_t>(x) * count];
    double* weight = &taps.weight[static_cast<size_t>(x) * count];
    if (mode == "nearest") {
      index[0] = clamp(NearestIndex(rounding, c));
      weight[0] = 1.0;
    } else if (mode == "linear") {
      const double inside = std::clamp(c, 0.0, static_cast<double>(a.in - 1));
      const int64_t below = static_cast<int64_t>(std::floor(inside));
      const double t = inside - static_cast<double>(below);
      index[0] = below;
      index[1] = clamp(below + 1);
      weight[0] = 1.0 - t;
      weight[1] = t;
    } else {
      // ONNX takes t in (0, 1] (an integral c as floor(c) - 1 + 1); t in [0, 1) gives the same
      // sum: weights (0, 1, 0, 0) on the tap at c instead of (0, 0, 1, 0).
      const double below = std::floor(c);
      CubicWeights(c - below, cubic_a, weight);
      const int64_t first = static_cast<int64_t>(below) - 1;
      double sum = 0;
      for (size_t k = 0; k < count; ++k) {
        const int64_t i = first + static_cast<int64_t>(k);
        if (exclude_outside && (i < 0 || i >= a.in)) weight[k] = 0.0;
        sum += weight[k];
        index[k] = clamp(i);
      }
      // Renormalised as ONNX's reference does (always, not only where a tap was dropped); a
      // coordinate so far out that every tap is (only from a `scale` at odds with `size`) reads
      // nothing.
      if (exclude_outside) {
        for (size_t k = 0; k < count; ++k) weight[k] = sum != 0.0 ? weight[k] / sum : 0.0;
      }
    }
  }
  return taps;
}

std::vector<Shape> ResizePassShapes(const Shape& data, const ResizePlan& plan) {
  std::vector<Shape> shapes = {data};
  for (const ResizeAxis& a : plan.axes) {
    Shape next = shapes.back();
    next[a.axis] = a.out;
    shapes.push_back(next);
  }
  return shapes;
}

ResizeReaders ReadersOf(const ResizeTaps& taps, int64_t in) {
  ResizeReaders readers;
  readers.begin.assign(static_cast<size_t>(in + 1), 0);
  const size_t count = static_cast<size_t>(taps.count);
  const int64_t out = static_cast<int64_t>(taps.index.size() / count);
  const auto each_read = [&](auto&& visit) {
    for (int64_t o = 0; o < out; ++o) {
      for (size_t k = 0; k < count; ++k) {
        const size_t tap = static_cast<size_t>(o) * count + k;
        if (taps.weight[tap] != 0.0) visit(taps.index[tap], o, taps.weight[tap]);
      }
    }
  };
  each_read([&](int64_t i, int64_t, double) { ++readers.begin[i + 1]; });
  for (int64_t i = 0; i < in; ++i) readers.begin[i + 1] += readers.begin[i];
  readers.reader.resize(static_cast<size_t>(readers.begin[in]));
  readers.weight.resize(readers.reader.size());
  std::vector<int64_t> cursor(readers.begin.begin(), readers.begin.end() - 1);
  each_read([&](int64_t i, int64_t o, double w) {
    readers.reader[cursor[i]] = o;
    readers.weight[cursor[i]++] = w;
  });
  return readers;
}

namespace {

using cpu::EigenArray;

// The data before one pass, as (outer, extent, inner).
struct PassShape {
  int64_t outer, in, out, inner;
};

PassShape PassShapeOf(const Shape& before, const ResizeAxis& a) {
  return {before.size(0, a.axis), a.in, a.out, before.size(a.axis + 1, before.ndim())};
}

// The work of a row of `elements` outputs, for the intra-op chunks: cubic reads twice what linear
// does, an antialiased filter as many more as its taps.
int64_t WorkPerRow(int64_t elements, const ResizeTaps& taps) {
  return elements * std::max(1, taps.count / 2);
}

// The last axis (inner 1): each output element a weighted sum of one input row's elements.
template <typename T>
void ForwardLastAxis(const PassShape& p, const ResizeTaps& taps, const T* src, T* dst) {
  const std::vector<T> weight(taps.weight.begin(), taps.weight.end());
  const int64_t* index = taps.index.data();
  cpu::ForEachRowRange(p.outer, WorkPerRow(p.out, taps), [&](int64_t first, int64_t last) {
    for (int64_t o = first; o < last; ++o) {
      const T* in = src + o * p.in;
      T* out = dst + o * p.out;
      if (taps.count == 1) {
        for (int64_t x = 0; x < p.out; ++x) out[x] = in[index[x]];
      } else if (taps.count == 2) {
        for (int64_t x = 0; x < p.out; ++x) {
          const T w = weight[2 * x + 1];
          const T a = in[index[2 * x]];
          out[x] = w == T(0) ? a : a * (T(1) - w) + in[index[2 * x + 1]] * w;
        }
      } else if (taps.count == 4) {
        for (int64_t x = 0; x < p.out; ++x) {
          const int64_t* i = index + 4 * x;
          const T* w = weight.data() + 4 * x;
          out[x] = in[i[0]] * w[0] + in[i[1]] * w[1] + in[i[2]] * w[2] + in[i[3]] * w[3];
        }
      } else {
        const int64_t count = taps.count;
        for (int64_t x = 0; x < p.out; ++x) {
          const int64_t* i = index + count * x;
          const T* w = weight.data() + count * x;
          T sum = in[i[0]] * w[0];
          for (int64_t k = 1; k < count; ++k) sum += in[i[k]] * w[k];
          out[x] = sum;
        }
      }
    }
  });
}

template <typename T>
void ForwardPass(const PassShape& p, const ResizeTaps& taps, const T* src, T* dst) {
  if (p.inner == 1) {
    ForwardLastAxis(p, taps, src, dst);
    return;
  }
  const int64_t work = WorkPerRow(p.inner, taps);
  cpu::ForEachRowRange(p.outer * p.out, work, [&](int64_t first, int64_t last) {
    for (int64_t row = first; row < last; ++row) {
      const int64_t o = row / p.out, x = row % p.out;
      const int64_t* index = &taps.index[static_cast<size_t>(x * taps.count)];
      const double* weight = &taps.weight[static_cast<size_t>(x * taps.count)];
      const auto in = [&](int k) {
        return EigenArray<const T>(src + (o * p.in + index[k]) * p.inner, p.inner);
      };
      auto y = EigenArray<T>(dst + row * p.inner, p.inner);
      if (taps.count == 4) {
        y = in(0) * static_cast<T>(weight[0]) + in(1) * static_cast<T>(weight[1]) +
            in(2) * static_cast<T>(weight[2]) + in(3) * static_cast<T>(weight[3]);
        continue;
      }
      if (taps.count > 2) {  // antialiased filters: any number of taps
        y = in(0) * static_cast<T>(weight[0]);
        for (int k = 1; k < taps.count; ++k) y += in(k) * static_cast<T>(weight[k]);
        continue;
      }
      const T w = taps.count == 2 ? static_cast<T>(weight[1]) : T(0);
      if (w == T(0)) {
        y = in(0);
      } else {
        y = in(0) * (T(1) - w) + in(1) * w;
      }
    }
  });
}

// The last axis: each input element gathers the output elements that read it.
template <typename T>
void BackwardLastAxis(const PassShape& p, const ResizeReaders& readers, const T* dy, T* dx) {
  cpu::ForEachRowRange(p.outer, p.in, [&](int64_t first, int64_t last) {
    for (int64_t o = first; o < last; ++o) {
      const T* grad = dy + o * p.out;
      T* out = dx + o * p.in;
      for (int64_t i = 0; i < p.in; ++i) {
        T sum = T(0);
        for (int64_t k = readers.begin[i]; k < readers.begin[i + 1]; ++k) {
          sum += grad[readers.reader[k]] * static_cast<T>(readers.weight[k]);
        }
        out[i] = sum;
      }
    }
  });
}

// dx rows gather the dy rows that read them.
template <typename T>
void BackwardPass(const PassShape& p, const ResizeReaders& readers, const T* dy, T* dx) {
  if (p.inner == 1) {
    BackwardLastAxis(p, readers, dy, dx);
    return;
  }
  cpu::ForEachRowRange(p.outer * p.in, p.inner, [&](int64_t first, int64_t last) {
    for (int64_t row = first; row < last; ++row) {
      const int64_t o = row / p.in, i = row % p.in;
      auto g = EigenArray<T>(dx + row * p.inner, p.inner);
      g.setZero();
      for (int64_t k = readers.begin[i]; k < readers.begin[i + 1]; ++k) {
        g += EigenArray<const T>(dy + (o * p.out + readers.reader[k]) * p.inner, p.inner) *
             static_cast<T>(readers.weight[k]);
      }
    }
  });
}

std::string Owner(const OpContext& ctx) { return "Resize " + ctx.node_name; }


template <typename T>
void ResizeForward(const OpContext& ctx, const Attributes& attrs, const TensorView& x,
                   const TensorView& y) {
  const ResizePlan plan = ResizePlanOf(attrs, x.shape, Owner(ctx));
  if (plan.output.size() == 0) return;
  if (plan.axes.empty()) {
    std::copy(x.data_as<T>(), x.data_as<T>() + x.size(), y.data_as<T>());
    return;
  }
  const std::vector<Shape> shapes = ResizePassShapes(x.shape, plan);
  const T* src = x.data_as<T>();
  for (size_t k = 0; k < plan.axes.size(); ++k) {
    const bool last = k + 1 == plan.axes.size();
    T* dst = last ? y.data_as<T>() : ctx.scratch->GetArray<T>(shapes[k + 1].size());
    ForwardPass(PassShapeOf(shapes[k], plan.axes[k]), TapsOf(attrs, plan.axes[k]), src, dst);
    src = dst;
  }
}

template <typename T>
void ResizeBackward(const OpContext& ctx, const Attributes& attrs, const TensorView& dy,
                    const TensorView& dx) {
  const ResizePlan plan = ResizePlanOf(attrs, dx.shape, Owner(ctx));
  if (dx.size() == 0) return;
  if (plan.output.size() == 0) {
    std::fill(dx.data_as<T>(), dx.data_as<T>() + dx.size(), T(0));
    return;
  }
  if (plan.axes.empty()) {
    std::copy(dy.data_as<T>(), dy.data_as<T>() + dy.size(), dx.data_as<T>());
    return;
  }
  const std::vector<Shape> shapes = ResizePassShapes(dx.shape, plan);
  const T* grad = dy.data_as<T>();
  for (size_t k = plan.axes.size(); k-- > 0;) {
    const ResizeAxis& a = plan.axes[k];
    T* dst = k == 0 ? dx.data_as<T>() : ctx.scratch->GetArray<T>(shapes[k].size());
    BackwardPass(PassShapeOf(shapes[k], a), ReadersOf(TapsOf(attrs, a), a.in), grad, dst);
    grad = dst;
  }
}

void ResizeForwardCpu(const OpContext& ctx, const Attributes& attrs,
                      const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                      const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  MXLITE_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, "Resize",
                           { ResizeForward<T>(ctx, attrs, inputs[0], outputs[0]); });
}

void ResizeBackwardCpu(const OpContext& ctx, const Attributes& attrs,
                       const std::vector<TensorView>& output_grads,
                       const std::vector<TensorView>&, const std::vector<TensorView>&,
                       const std::vector<TensorView>& input_grads,
                       const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  MXLITE_FLOAT_TYPE_SWITCH(input_grads[0].dtype, T, "Resize",
                           { ResizeBackward<T>(ctx, attrs, output_grads[0], input_grads[0]); });
}

}  // namespace

MXLITE_REGISTER_OP(Resize) {
  OpDef op;
  op.name = "Resize";
  op.name_prefix = FixedNamePrefix("resize");
  op.doc =
      "The trailing axes resampled to `size` (nearest, linear or cubic, optionally antialiased; "
      "ONNX's "
      "coordinate modes).";
  op.attributes.IntTuple("size", "output extents of the trailing axes", Required())
      .Enum("mode", {"nearest", "linear", "cubic"}, "the interpolation", Default("nearest"))
      .Enum("coordinate_transformation_mode",
            {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
             "half_pixel_symmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"},
            "how an output index maps to an input coordinate", Default("half_pixel"))
      .Enum("nearest_mode", {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"},
            "how nearest rounds the coordinate", Default("round_prefer_floor"))
      .Float("cubic_coeff_a", "cubic's a: -0.75 is PyTorch's bicubic, -0.5 Keys' own",
             Default("-0.75"))
      .Bool("exclude_outside",
            "cubic and antialiased filters: taps outside the axis weigh 0, the rest renormalised",
            Default("false"))
      .Bool("antialias", "linear and cubic: a shrinking axis' filter stretched by 1 / scale",
            Default("false"))
      .String("scale", "per resized axis, the transform's scale, e.g. (2,2); () uses out / in",
              Default("()"))
      .String("roi", "tf_crop_and_resize: the window's starts, then its ends, per resized axis",
              Default("()"));
  op.input_names = [](const Attributes&) { return std::vector<std::string>{"data"}; };
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output"}; };
  op.infer_shape = [](const Attributes& attrs, ShapeInference& shapes) {
    shapes.AssignOutput(
        0, ResizePlanOf(attrs, shapes.Input(0), shapes.op + " " + shapes.node).output);
  };
  op.backward_dependencies = [](const Attributes&) -> BackwardDependencies {
    return {{false}, {false}};
  };
  op.forward[DeviceType::kCPU] = ResizeForwardCpu;
  op.backward[DeviceType::kCPU] = ResizeBackwardCpu;
  return op;
}

}  // namespace mxlite
