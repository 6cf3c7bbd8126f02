// Cast: output = data converted to `dtype` (MXNet's Cast), the way float32 data enters a float16
// network and its float16 results leave it. Gradient: the output gradient cast back to the data's
// dtype.
//
// Conversions (the same on the CPU and the GPU, ops/cuda/cast_kernels.cu):
//   - to float16: the value as float, rounded to nearest even (float64 goes through float32);
//   - floating to integer: truncated toward zero, saturated to the integer type's range, NaN to 0
//     (C++'s static_cast leaves out-of-range values undefined);
//   - everything else: C++'s static_cast.
// dtypes: float32, float64, float16, int32, int64, uint8 (bfloat16 is not one of them).
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/half.h"
#include "ops/cpu/elementwise.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

struct Half {  // float16 as stored on the host
  uint16_t bits;
};

bool CastSupports(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kFloat64 || dtype == DType::kFloat16 ||
         dtype == DType::kInt32 || dtype == DType::kInt64 || dtype == DType::kUInt8;
}

void CheckCastable(DType dtype, const std::string& node, const char* what) {
  MX_CHECK(CastSupports(dtype)) << "Cast " << node << ": " << what << " dtype " << dtype
                                << " is not supported (float32, float64, float16, int32, int64 "
                                << "and uint8 are)";
}

template <typename To, typename From>
To ConvertValue(From value) {
  if constexpr (std::is_same_v<From, Half>) {
    return ConvertValue<To>(HalfToFloat(value.bits));
  } else if constexpr (std::is_same_v<To, Half>) {
    return Half{FloatToHalf(static_cast<float>(value))};
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if (std::isnan(value)) return To(0);
    const From truncated = std::trunc(value);
    if (truncated <= static_cast<From>(std::numeric_limits<To>::min())) {
      return std::numeric_limits<To>::min();
    }
    // The largest integer exactly representable below the range's end (int64's max is not).
    if (truncated >= std::ldexp(From(1), std::numeric_limits<To>::digits)) {
      return std::numeric_limits<To>::max();
    }
    return static_cast<To>(truncated);
  } else {
    return static_cast<To>(value);
  }
}

// Calls fn with a value of the C++ element type of dtype.
template <typename Fn>
void WithElementType(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kFloat32: fn(float{}); break;
    case DType::kFloat64: fn(double{}); break;
    case DType::kFloat16: fn(Half{}); break;
    case DType::kInt32: fn(int32_t{}); break;
    case DType::kInt64: fn(int64_t{}); break;
    case DType::kUInt8: fn(uint8_t{}); break;
    default: MX_THROW() << "Cast: dtype " << dtype << " is not supported";
  }
}

void ConvertCpu(const TensorView& from, const TensorView& to) {
  if (from.dtype == to.dtype) {
    if (from.data != to.data) std::memcpy(to.data, from.data, to.bytes());
    return;
  }
  WithElementType(from.dtype, [&](auto from_tag) {
    using From = decltype(from_tag);
    WithElementType(to.dtype, [&](auto to_tag) {
      using To = decltype(to_tag);
      const From* in = static_cast<const From*>(from.data);
      To* out = static_cast<To*>(to.data);
      cpu::ForEachChunk(to.size(), [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) out[i] = ConvertValue<To>(in[i]);
      });
    });
  });
}

void CastForwardCpu(const OpContext& ctx, const Attributes&, const std::vector<TensorView>& inputs,
                    const std::vector<TensorView>& outputs, const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  CheckCastable(inputs[0].dtype, ctx.node_name, "data");
  CheckCastable(outputs[0].dtype, ctx.node_name, "output");
  ConvertCpu(inputs[0], outputs[0]);
}

void CastBackwardCpu(const OpContext& ctx, const Attributes&,
                     const std::vector<TensorView>& output_grads, const std::vector<TensorView>&,
                     const std::vector<TensorView>&, const std::vector<TensorView>& input_grads,
                     const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  CheckCastable(output_grads[0].dtype, ctx.node_name, "output gradient");
  CheckCastable(input_grads[0].dtype, ctx.node_name, "data gradient");
  ConvertCpu(output_grads[0], input_grads[0]);
}

void CastInferDType(const Attributes& attrs, DTypeInference& dtypes) {
  const DType target = ParseDType(attrs.GetString("dtype"));
  CheckCastable(target, dtypes.node, "target");
  // Data of unknown dtype (an undeclared variable) is float32, as everywhere else.
  if (!dtypes.inputs[0]) dtypes.inputs[0] = DType::kFloat32;
  CheckCastable(*dtypes.inputs[0], dtypes.node, "data");
  MX_CHECK(!dtypes.outputs[0] || *dtypes.outputs[0] == target)
      << "Cast " << dtypes.node << ": output declared " << *dtypes.outputs[0] << " but dtype is "
      << target;
  dtypes.outputs[0] = target;
}

}  // namespace

MXLITE_REGISTER_OP(Cast) {
  OpDef op;
  op.name = "Cast";
  op.cheap_to_recompute = true;
  op.doc = "Converts the data to another dtype (float16 rounds to nearest even; floating to "
           "integer truncates and saturates).";
  op.attributes.Enum("dtype", {"float32", "float64", "float16", "int32", "int64", "uint8"},
                     "the output dtype");
  op.input_names = [](const Attributes&) { return std::vector<std::string>{"data"}; };
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output"}; };
  op.infer_shape = [](const Attributes&, ShapeInference& shapes) {
    shapes.AssignOutput(0, shapes.Input(0));
  };
  op.infer_dtype = CastInferDType;
  op.backward_dependencies = [](const Attributes&) -> BackwardDependencies {
    return {{false}, {false}};
  };
  op.forward[DeviceType::kCPU] = CastForwardCpu;
  op.backward[DeviceType::kCPU] = CastBackwardCpu;
  return op;
}

}  // namespace mxlite
