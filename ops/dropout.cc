// Dropout: in training (or always, with mode=always) each element is kept with probability 1 - p
// and scaled by 1 / (1 - p), otherwise zeroed: y = x * mask with mask in {0, 1 / (1 - p)}. The
// hidden output "mask" holds those factors and backward multiplies by it: dx = dy * mask.
// In inference (mode=training, not is_train) and for p = 0 the op is the identity and no mask is
// drawn; backward is then dx = dy. p = 1 drops everything.
//
// `axes` shares one draw along the given dims (e.g. axes=(2,3) on NCHW drops whole feature maps).
//
// Randomness: one 64-bit seed per call from OpContext::random; element i of the drawn mask is
// decided by SplitMix64(seed, i), so chunks are drawn in parallel and the mask does not depend
// on the thread count.
#include <algorithm>
#include <cstdint>

#include "ops/cpu/elementwise.h"
#include "ops/dropout.h"
#include "ops/operator.h"

namespace mxlite {

DropoutSettings DropoutSettingsOf(const Attributes& attrs, bool is_train) {
  DropoutSettings s;
  s.p = attrs.GetFloat("p");
  s.scale = s.p < 1 ? 1.0 / (1.0 - s.p) : 0.0;
  s.active = s.p > 0 && (is_train || attrs.GetString("mode") == "always");
  return s;
}

Shape DropoutDrawShape(const Attributes& attrs, const Shape& data, const std::string& owner) {
  std::vector<int64_t> dims = data.to_vector();
  for (int64_t axis : attrs.GetInts("axes")) {
    MX_CHECK(axis >= -data.ndim() && axis < data.ndim())
        << owner << ": axis " << axis << " of axes is out of range for data of shape " << data;
    dims[axis < 0 ? axis + data.ndim() : axis] = 1;
  }
  return Shape(dims);
}

namespace {

// The i-th output of a SplitMix64 stream started at `seed`: a well-mixed 64-bit value.
uint64_t SplitMix64(uint64_t seed, uint64_t i) {
  uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Keeps with probability 1 - p: a uniform double in [0, 1) at or above p.
bool Keep(uint64_t seed, int64_t i, double p) {
  const double uniform = static_cast<double>(SplitMix64(seed, static_cast<uint64_t>(i)) >> 11) *
                         (1.0 / 9007199254740992.0);  // 2^-53
  return uniform >= p;
}

void DropoutInferShape(const Attributes& attrs, ShapeInference& shapes) {
  const std::string owner = shapes.op + " " + shapes.node;
  const double p = attrs.GetFloat("p");
  MX_CHECK(p >= 0 && p <= 1) << owner << ": p=" << p << " must be in [0, 1]";
  const Shape& data = shapes.Input(0);
  DropoutDrawShape(attrs, data, owner);  // validates axes
  shapes.AssignOutput(0, data);
  shapes.AssignOutput(1, data);
}

// Without shared axes: one draw per element, fused with the multiply.
template <typename T>
void DropElements(const DropoutSettings& s, uint64_t seed, const T* x, T* y, T* mask, int64_t n) {
  const T scale = static_cast<T>(s.scale);
  cpu::ForEachChunk(n, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const T factor = Keep(seed, i, s.p) ? scale : T(0);
      y[i] = x[i] * factor;
      if (mask != nullptr) mask[i] = factor;
    }
  });
}

// With shared axes (so data has at least one dim): draw the reduced mask into scratch, then
// broadcast it row by row (a row is the last dim, whose draw stride is 0 when it is shared).
template <typename T>
void DropShared(const DropoutSettings& s, uint64_t seed, const Shape& data, const Shape& drawn,
                ScratchSpace& scratch, const T* x, T* y, T* mask) {
  const int64_t drawn_count = drawn.size();
  T* factors = scratch.GetArray<T>(drawn_count);
  for (int64_t i = 0; i < drawn_count; ++i) {
    factors[i] = Keep(seed, i, s.p) ? static_cast<T>(s.scale) : T(0);
  }
  const int ndim = data.ndim();
  const int64_t row_length = data[ndim - 1];
  const int64_t rows = row_length == 0 ? 0 : data.size() / row_length;
  const int64_t column_step = drawn[ndim - 1] == 1 ? 0 : 1;
  const int64_t rows_per_chunk = std::max<int64_t>(1, cpu::kElementwiseGrain / row_length);
  const int64_t chunks = (rows + rows_per_chunk - 1) / rows_per_chunk;
  auto run_chunk = [&](int64_t chunk) {
    const int64_t end = std::min(rows, (chunk + 1) * rows_per_chunk);
    for (int64_t row = chunk * rows_per_chunk; row < end; ++row) {
      // Offset of this row in the drawn mask: decode the row index dim by dim.
      int64_t remaining = row, drawn_offset = 0, drawn_stride = drawn[ndim - 1];
      for (int d = ndim - 2; d >= 0; --d) {
        const int64_t index = remaining % data[d];
        remaining /= data[d];
        if (drawn[d] != 1) drawn_offset += index * drawn_stride;
        drawn_stride *= drawn[d];
      }
      const int64_t offset = row * row_length;
      for (int64_t j = 0; j < row_length; ++j) {
        const T factor = factors[drawn_offset + j * column_step];
        y[offset + j] = x[offset + j] * factor;
        if (mask != nullptr) mask[offset + j] = factor;
      }
    }
  };
  if (chunks <= 1) {
    if (rows > 0) run_chunk(0);
  } else {
    cpu::ParallelFor(chunks, run_chunk);
  }
}

template <typename T>
void CopyIfDistinct(const T* from, T* to, int64_t n) {
  if (from == to) return;  // in place
  cpu::ForEachChunk(
      n, [&](int64_t begin, int64_t end) { std::copy(from + begin, from + end, to + begin); });
}

void DropoutForwardCpu(const OpContext& ctx, const Attributes& attrs,
                       const std::vector<TensorView>& inputs,
                       const std::vector<TensorView>& outputs, const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = "Dropout " + ctx.node_name;
  const DropoutSettings s = DropoutSettingsOf(attrs, ctx.is_train);
  const Shape& shape = inputs[0].shape;
  MXLITE_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, "Dropout", {
    const T* x = inputs[0].data_as<T>();
    T* y = outputs[0].data_as<T>();
    if (!s.active) {
      CopyIfDistinct(x, y, shape.size());
    } else {
      MX_CHECK(ctx.random != nullptr) << owner << ": no random generator in the op context";
      const uint64_t seed = (*ctx.random)();
      T* mask = WrittenOrNull<T>(outputs[1], req[1]);
      const Shape drawn = DropoutDrawShape(attrs, shape, owner);
      if (drawn == shape) {
        DropElements(s, seed, x, y, mask, shape.size());
      } else {
        DropShared(s, seed, shape, drawn, *ctx.scratch, x, y, mask);
      }
    }
  });
}

void DropoutBackwardCpu(const OpContext& ctx, const Attributes& attrs,
                        const std::vector<TensorView>& output_grads, const std::vector<TensorView>&,
                        const std::vector<TensorView>& outputs,
                        const std::vector<TensorView>& input_grads,
                        const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const DropoutSettings s = DropoutSettingsOf(attrs, ctx.is_train);
  const int64_t n = input_grads[0].size();
  MXLITE_FLOAT_TYPE_SWITCH(input_grads[0].dtype, T, "Dropout", {
    const T* dy = output_grads[0].data_as<T>();
    T* dx = input_grads[0].data_as<T>();
    if (!s.active) {
      CopyIfDistinct(dy, dx, n);
    } else {
      const T* mask = outputs[1].data_as<T>();
      cpu::ForEachChunk(n, [&](int64_t begin, int64_t end) {
        cpu::EigenArray<T>(dx + begin, end - begin) =
            cpu::EigenArray<const T>(dy + begin, end - begin) *
            cpu::EigenArray<const T>(mask + begin, end - begin);
      });
    }
  });
}

}  // namespace

MXLITE_REGISTER_OP(Dropout) {
  OpDef op;
  op.name = "Dropout";
  op.doc = "Zeroes elements with probability p in training and scales the rest by 1 / (1 - p).";
  op.attributes.Float("p", "the fraction of elements dropped, in [0, 1]", Default("0.5"))
      .Enum("mode", {"training", "always"},
            "training: only when is_train; always: at inference too", Default("training"))
      .IntTuple("axes", "dims along which one draw is shared", Default("()"))
      .Bool("cudnn_off", "do not use cuDNN (no effect on the CPU)", Default("false"));
  op.input_names = [](const Attributes&) { return std::vector<std::string>{"data"}; };
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output", "mask"}; };
  op.num_visible_outputs = [](const Attributes&) { return 1; };
  op.infer_shape = DropoutInferShape;
  op.backward_dependencies = [](const Attributes&) -> BackwardDependencies {
    return {{false}, {false, true}};
  };
  op.inplace = {{0, 0}};
  op.needs_random = true;
  // Element-wise: any layout; dims that share a draw move with it (not blocked: a shared draw
  // along the channels would span blocks).
  op.layout.role = LayoutRole::kAgnostic;
  op.layout.runs_channel_blocked = [](const Attributes& attrs, const std::vector<Shape>&) {
    return attrs.GetInts("axes").empty();
  };
  op.layout.retarget = [](const Attributes& attrs, ActivationLayout layout,
                          std::map<std::string, std::string>& text) {
    const std::vector<int64_t> axes = attrs.GetInts("axes");
    if (axes.empty()) return;
    std::string moved = "(";
    for (int64_t axis : axes) {  // appended: GCC 12 warns falsely on "," + std::string
      if (moved.size() > 1) moved += ',';
      moved += AxisTextIn(layout, axis);
    }
    text["axes"] = moved + ")";
  };
  op.forward[DeviceType::kCPU] = DropoutForwardCpu;
  op.backward[DeviceType::kCPU] = DropoutBackwardCpu;
  return op;
}

}  // namespace mxlite
