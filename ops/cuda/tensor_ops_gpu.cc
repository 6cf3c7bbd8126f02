// GPU kernels of the data-movement and element-wise ops: Flatten, Reshape, identity (device
// copies), transpose, Concat (strided 2-D copies), broadcast_* / elemwise_* add/sub/mul/div,
// add_n, clip and Pad. Semantics are the CPU ops' (ops/<op>.cc); the .cu kernels are in
// ops/cuda/elementwise_kernels.cu and layout_kernels.cu.
#include <algorithm>
#include <limits>
#include <numeric>
#include <vector>

#include "ops/cuda/cuda_util.h"
#include "ops/cuda/kernels.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

using cuda::BinaryKind;

std::string Owner(const char* op, const OpContext& ctx) {
  return std::string(op) + " " + ctx.node_name;
}

// ---- Flatten, Reshape, identity ----------------------------------------------------------------

template <const char* kName>
void CopyForwardGpu(const OpContext& ctx, const Attributes&, const std::vector<TensorView>& inputs,
                    const std::vector<TensorView>& outputs, const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = Owner(kName, ctx);
  cuda::CopyDeviceAsync(inputs[0].data, outputs[0].data, outputs[0].bytes(),
                        cuda::PrepareStream(ctx, owner), owner);
}

template <const char* kName>
void CopyBackwardGpu(const OpContext& ctx, const Attributes&,
                     const std::vector<TensorView>& output_grads, const std::vector<TensorView>&,
                     const std::vector<TensorView>&, const std::vector<TensorView>& input_grads,
                     const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = Owner(kName, ctx);
  cuda::CopyDeviceAsync(output_grads[0].data, input_grads[0].data, input_grads[0].bytes(),
                        cuda::PrepareStream(ctx, owner), owner);
}

constexpr char kFlatten[] = "Flatten";
constexpr char kReshape[] = "Reshape";
constexpr char kIdentity[] = "identity";

// ---- transpose -----------------------------------------------------------------------------

std::vector<int> Permutation(const Attributes& attrs, int ndim, const std::string& owner) {
  const std::vector<int64_t>& given = attrs.GetInts("axes");
  std::vector<int> axes(ndim);
  if (given.empty()) {
    std::iota(axes.rbegin(), axes.rend(), 0);
    return axes;
  }
  MX_CHECK(static_cast<int>(given.size()) == ndim)
      << owner << ": axes=" << FormatIntTuple(given) << " has " << given.size()
      << " entries for an input of " << ndim << " dims";
  std::vector<bool> seen(ndim, false);
  for (int i = 0; i < ndim; ++i) {
    const int64_t axis = given[i] < 0 ? given[i] + ndim : given[i];
    MX_CHECK(axis >= 0 && axis < ndim && !seen[axis])
        << owner << ": axes=" << FormatIntTuple(given) << " is not a permutation of " << ndim
        << " axes";
    seen[axis] = true;
    axes[i] = static_cast<int>(axis);
  }
  return axes;
}

void Transpose(const TensorView& in, const std::vector<int>& axes, const TensorView& out,
               cudaStream_t stream, const std::string& owner) {
  const int ndim = in.shape.ndim();
  if (ndim == 0) {
    cuda::CopyDeviceAsync(in.data, out.data, out.bytes(), stream, owner);
    return;
  }
  std::vector<int64_t> strides(ndim, 1);
  for (int d = ndim - 2; d >= 0; --d) strides[d] = strides[d + 1] * in.shape[d + 1];
  cuda::TransposeGeometry g;
  g.ndim = ndim;
  for (int i = 0; i < ndim; ++i) {
    g.out_extents[i] = in.shape[axes[i]];
    g.in_strides_permuted[i] = strides[axes[i]];
  }
  MXLITE_CUDA_CALL(
      cuda::TransposeCopy(g, in.data, out.data, DTypeSize(in.dtype), in.size(), stream), owner);
}

void TransposeForwardGpu(const OpContext& ctx, const Attributes& attrs,
                         const std::vector<TensorView>& inputs,
                         const std::vector<TensorView>& outputs,
                         const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = Owner("transpose", ctx);
  Transpose(inputs[0], Permutation(attrs, inputs[0].shape.ndim(), owner), outputs[0],
            cuda::PrepareStream(ctx, owner), owner);
}

void TransposeBackwardGpu(const OpContext& ctx, const Attributes& attrs,
                          const std::vector<TensorView>& output_grads,
                          const std::vector<TensorView>&, const std::vector<TensorView>&,
                          const std::vector<TensorView>& input_grads,
                          const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = Owner("transpose", ctx);
  const int ndim = output_grads[0].shape.ndim();
  const std::vector<int> axes = Permutation(attrs, ndim, owner);
  std::vector<int> inverse(ndim);
  for (int i = 0; i < ndim; ++i) inverse[axes[i]] = i;
  Transpose(output_grads[0], inverse, input_grads[0], cuda::PrepareStream(ctx, owner), owner);
}

// ---- Concat --------------------------------------------------------------------------------

// Copies between the output (outer rows of all parts) and each part (outer rows of its own).
void ConcatCopies(const OpContext& ctx, const Attributes& attrs, const TensorView& whole,
                  const std::vector<TensorView>& parts, const std::vector<WriteMode>* part_req,
                  bool to_output) {
  const std::string owner = Owner("Concat", ctx);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const int ndim = whole.shape.ndim();
  const int64_t dim = attrs.GetInt("dim");
  const int axis = static_cast<int>(dim < 0 ? dim + ndim : dim);
  const int64_t outer = whole.shape.size(0, axis);
  const size_t element = DTypeSize(whole.dtype);
  const size_t whole_row = static_cast<size_t>(whole.shape.size(axis, ndim)) * element;
  size_t start = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const size_t row = static_cast<size_t>(parts[i].shape.size(axis, ndim)) * element;
    const bool wanted = part_req == nullptr || (*part_req)[i] != WriteMode::kNull;
    if (wanted && row > 0 && outer > 0) {
      char* whole_bytes = static_cast<char*>(whole.data) + start;
      char* part_bytes = static_cast<char*>(parts[i].data);
      if (to_output) {
        MXLITE_CUDA_CALL(
            cudaMemcpy2DAsync(whole_bytes, whole_row, part_bytes, row, row,
                              static_cast<size_t>(outer), cudaMemcpyDeviceToDevice, stream),
            owner);
      } else {
        MXLITE_CUDA_CALL(
            cudaMemcpy2DAsync(part_bytes, row, whole_bytes, whole_row, row,
                              static_cast<size_t>(outer), cudaMemcpyDeviceToDevice, stream),
            owner);
      }
    }
    start += row;
  }
}

void ConcatForwardGpu(const OpContext& ctx, const Attributes& attrs,
                      const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                      const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  ConcatCopies(ctx, attrs, outputs[0], inputs, nullptr, /*to_output=*/true);
}

void ConcatBackwardGpu(const OpContext& ctx, const Attributes& attrs,
                       const std::vector<TensorView>& output_grads, const std::vector<TensorView>&,
                       const std::vector<TensorView>&, const std::vector<TensorView>& input_grads,
                       const std::vector<WriteMode>& req) {
  ConcatCopies(ctx, attrs, output_grads[0], input_grads, &req, /*to_output=*/false);
}

// ---- broadcast_* / elemwise_* --------------------------------------------------------------

template <typename T>
void Binary(BinaryKind kind, const T* x, const Shape& x_shape, const T* y, const Shape& y_shape,
            T* out, const Shape& out_shape, cudaStream_t stream, const std::string& owner) {
  if (x_shape == out_shape && y_shape == out_shape) {  // no broadcast: no index arithmetic
    MXLITE_CUDA_CALL(cuda::ElementwiseBinary(kind, x, y, out, out_shape.size(), stream), owner);
    return;
  }
  MXLITE_CUDA_CALL(
      cuda::BroadcastBinary(kind, cuda::MakeBroadcastGeometry(out_shape, x_shape, y_shape), x, y,
                            out, out_shape.size(), stream),
      owner);
}

template <typename T>
void BinaryBackward(BinaryKind kind, const OpContext& ctx, const TensorView& out_grad,
                    const TensorView& lhs, const TensorView& rhs,
                    const std::vector<TensorView>& grads, const std::vector<WriteMode>& req,
                    const std::string& owner) {
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const Shape& out_shape = out_grad.shape;
  const T* dy = out_grad.data_as<T>();
  // A gradient: the reduction of `term` (output-shaped) times scale to the operand's shape.
  auto reduce = [&](const T* term, const TensorView& grad, double scale) {
    cuda::ReduceToShape<T>(term, out_shape, grad.data_as<T>(), grad.shape, scale, stream, owner);
  };
  auto scratch_term = [&]() { return ctx.scratch->GetArray<T>(out_shape.size()); };
  const bool want_lhs = req[0] != WriteMode::kNull, want_rhs = req[1] != WriteMode::kNull;
  switch (kind) {
    case BinaryKind::kAdd:
    case BinaryKind::kSub:
      if (want_lhs) reduce(dy, grads[0], 1.0);
      if (want_rhs) reduce(dy, grads[1], kind == BinaryKind::kAdd ? 1.0 : -1.0);
      break;
    case BinaryKind::kMul:
    case BinaryKind::kDiv:
      if (want_lhs) {
        T* term = scratch_term();
        Binary<T>(kind, dy, out_shape, rhs.data_as<T>(), rhs.shape, term, out_shape, stream, owner);
        reduce(term, grads[0], 1.0);
      }
      if (want_rhs) {
        T* term = scratch_term();
        Binary<T>(BinaryKind::kMul, dy, out_shape, lhs.data_as<T>(), lhs.shape, term, out_shape,
                  stream, owner);
        if (kind == BinaryKind::kDiv) {  // d(x/y)/dy = -x / y^2
          Binary<T>(BinaryKind::kDiv, term, out_shape, rhs.data_as<T>(), rhs.shape, term, out_shape,
                    stream, owner);
          Binary<T>(BinaryKind::kDiv, term, out_shape, rhs.data_as<T>(), rhs.shape, term, out_shape,
                    stream, owner);
        }
        reduce(term, grads[1], kind == BinaryKind::kDiv ? -1.0 : 1.0);
      }
      break;
  }
}

void RegisterBinary(const char* name, BinaryKind kind) {
  const std::string op = name;
  ForwardKernel forward =
      [kind, op](const OpContext& ctx, const Attributes&, const std::vector<TensorView>& inputs,
                 const std::vector<TensorView>& outputs, const std::vector<WriteMode>& req) {
        if (req[0] == WriteMode::kNull) return;
        const std::string owner = op + " " + ctx.node_name;
        cudaStream_t stream = cuda::PrepareStream(ctx, owner);
        MXLITE_GPU_FLOAT_TYPE_SWITCH(outputs[0].dtype, T, owner, {
          Binary<T>(kind, inputs[0].data_as<T>(), inputs[0].shape, inputs[1].data_as<T>(),
                    inputs[1].shape, outputs[0].data_as<T>(), outputs[0].shape, stream, owner);
        });
      };
  BackwardKernel backward = [kind, op](const OpContext& ctx, const Attributes&,
                                       const std::vector<TensorView>& output_grads,
                                       const std::vector<TensorView>& inputs,
                                       const std::vector<TensorView>&,
                                       const std::vector<TensorView>& input_grads,
                                       const std::vector<WriteMode>& req) {
    const std::string owner = op + " " + ctx.node_name;
    MXLITE_GPU_FLOAT_TYPE_SWITCH(output_grads[0].dtype, T, owner, {
      BinaryBackward<T>(kind, ctx, output_grads[0], inputs[0], inputs[1], input_grads, req, owner);
    });
  };
  OpRegistry::Global().RegisterKernels(op, DeviceType::kGPU, forward, backward);
}

struct BinaryRegistrar {
  BinaryRegistrar() {
    const std::pair<const char*, BinaryKind> kinds[] = {{"add", BinaryKind::kAdd},
                                                        {"sub", BinaryKind::kSub},
                                                        {"mul", BinaryKind::kMul},
                                                        {"div", BinaryKind::kDiv}};
    for (const auto& [suffix, kind] : kinds) {
      RegisterBinary((std::string("broadcast_") + suffix).c_str(), kind);
      RegisterBinary((std::string("elemwise_") + suffix).c_str(), kind);
    }
  }
};
const BinaryRegistrar binary_registrar;

// ---- add_n ---------------------------------------------------------------------------------

void AddNForwardGpu(const OpContext& ctx, const Attributes&, const std::vector<TensorView>& inputs,
                    const std::vector<TensorView>& outputs, const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = Owner("add_n", ctx);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  if (inputs.size() == 1) {
    cuda::CopyDeviceAsync(inputs[0].data, outputs[0].data, outputs[0].bytes(), stream, owner);
    return;
  }
  MXLITE_GPU_FLOAT_TYPE_SWITCH(outputs[0].dtype, T, owner, {
    T* out = outputs[0].data_as<T>();
    const int64_t n = outputs[0].size();
    // out = arg0 + arg1, then out += arg_i: the CPU kernel's order (out may be arg0).
    MXLITE_CUDA_CALL(
        cuda::AddArrays(inputs[0].data_as<T>(), inputs[1].data_as<T>(), out, n, stream), owner);
    for (size_t i = 2; i < inputs.size(); ++i) {
      MXLITE_CUDA_CALL(cuda::AddArrays(out, inputs[i].data_as<T>(), out, n, stream), owner);
    }
  });
}

void AddNBackwardGpu(const OpContext& ctx, const Attributes&,
                     const std::vector<TensorView>& output_grads, const std::vector<TensorView>&,
                     const std::vector<TensorView>&, const std::vector<TensorView>& input_grads,
                     const std::vector<WriteMode>& req) {
  const std::string owner = Owner("add_n", ctx);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  for (size_t i = 0; i < input_grads.size(); ++i) {
    if (req[i] == WriteMode::kNull) continue;
    cuda::CopyDeviceAsync(output_grads[0].data, input_grads[i].data, input_grads[i].bytes(), stream,
                          owner);
  }
}

// ---- clip ----------------------------------------------------------------------------------

double LowerBound(const Attributes& attrs) {
  return attrs.Has("a_min") ? attrs.GetFloat("a_min") : -std::numeric_limits<double>::infinity();
}
double UpperBound(const Attributes& attrs) {
  return attrs.Has("a_max") ? attrs.GetFloat("a_max") : std::numeric_limits<double>::infinity();
}

void ClipForwardGpu(const OpContext& ctx, const Attributes& attrs,
                    const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                    const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = Owner("clip", ctx);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(outputs[0].dtype, T, owner, {
    MXLITE_CUDA_CALL(
        cuda::ClipForward(inputs[0].data_as<T>(), outputs[0].data_as<T>(), outputs[0].size(),
                          LowerBound(attrs), UpperBound(attrs), stream),
        owner);
  });
}

void ClipBackwardGpu(const OpContext& ctx, const Attributes& attrs,
                     const std::vector<TensorView>& output_grads,
                     const std::vector<TensorView>& inputs, const std::vector<TensorView>&,
                     const std::vector<TensorView>& input_grads,
                     const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = Owner("clip", ctx);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(input_grads[0].dtype, T, owner, {
    MXLITE_CUDA_CALL(cuda::ClipBackward(inputs[0].data_as<T>(), output_grads[0].data_as<T>(),
                                        input_grads[0].data_as<T>(), input_grads[0].size(),
                                        LowerBound(attrs), UpperBound(attrs), stream),
                     owner);
  });
}

// ---- Pad -----------------------------------------------------------------------------------

// The per-axis maps of ops/pad.cc (source index per output index; CSR list of output indices per
// input index), built on the host and copied into scratch device memory.
cuda::PadGeometry PadMaps(const OpContext& ctx, const Attributes& attrs, const Shape& in,
                          const Shape& out, cudaStream_t stream, const std::string& owner) {
  const std::vector<int64_t>& pads = attrs.GetInts("pad_width");
  const std::string& mode = attrs.GetString("mode");
  const int ndim = in.ndim();
  std::vector<int64_t> host;
  std::vector<size_t> source_at(ndim), first_at(ndim), outputs_at(ndim);
  for (int axis = 0; axis < ndim; ++axis) {
    const int64_t extent = in[axis], before = pads[2 * axis], out_extent = out[axis];
    source_at[axis] = host.size();
    for (int64_t j = 0; j < out_extent; ++j) {
      const int64_t i = j - before;
      int64_t source;
      if (i >= 0 && i < extent) {
        source = i;
      } else if (mode == "constant") {
        source = -1;
      } else if (mode == "edge") {
        source = std::clamp<int64_t>(i, 0, extent - 1);
      } else {
        source = i < 0 ? -i : 2 * (extent - 1) - i;
      }
      host.push_back(source);
    }
    first_at[axis] = host.size();
    std::vector<int64_t> first(extent + 1, 0), outputs(std::max<int64_t>(out_extent, 0));
    for (int64_t j = 0; j < out_extent; ++j) {
      const int64_t s = host[source_at[axis] + j];
      if (s >= 0) ++first[s + 1];
    }
    for (int64_t i = 0; i < extent; ++i) first[i + 1] += first[i];
    std::vector<int64_t> cursor(first.begin(), first.end() - 1);
    int64_t listed = 0;
    for (int64_t j = 0; j < out_extent; ++j) {
      const int64_t s = host[source_at[axis] + j];
      if (s >= 0) {
        outputs[cursor[s]++] = j;
        ++listed;
      }
    }
    host.insert(host.end(), first.begin(), first.end());
    outputs_at[axis] = host.size();
    host.insert(host.end(), outputs.begin(), outputs.begin() + listed);
  }
  int64_t* device =
      ctx.scratch->GetArray<int64_t>(static_cast<int64_t>(std::max<size_t>(host.size(), 1)));
  // Pageable source: the call returns once the data is staged, so `host` may go.
  MXLITE_CUDA_CALL(cudaMemcpyAsync(device, host.data(), host.size() * sizeof(int64_t),
                                   cudaMemcpyHostToDevice, stream),
                   owner);
  cuda::PadGeometry g;
  g.ndim = ndim;
  for (int axis = 0; axis < ndim; ++axis) {
    g.in_extents[axis] = in[axis];
    g.out_extents[axis] = out[axis];
    g.source[axis] = device + source_at[axis];
    g.first[axis] = device + first_at[axis];
    g.outputs[axis] = device + outputs_at[axis];
  }
  return g;
}

void PadForwardGpu(const OpContext& ctx, const Attributes& attrs,
                   const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                   const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull || outputs[0].size() == 0) return;
  const std::string owner = Owner("Pad", ctx);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const cuda::PadGeometry g = PadMaps(ctx, attrs, inputs[0].shape, outputs[0].shape, stream, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(outputs[0].dtype, T, owner, {
    MXLITE_CUDA_CALL(cuda::PadForward(g, inputs[0].data_as<T>(), outputs[0].data_as<T>(),
                                      attrs.GetFloat("constant_value"), outputs[0].size(), stream),
                     owner);
  });
}

void PadBackwardGpu(const OpContext& ctx, const Attributes& attrs,
                    const std::vector<TensorView>& output_grads, const std::vector<TensorView>&,
                    const std::vector<TensorView>&, const std::vector<TensorView>& input_grads,
                    const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull || input_grads[0].size() == 0) return;
  const std::string owner = Owner("Pad", ctx);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const cuda::PadGeometry g =
      PadMaps(ctx, attrs, input_grads[0].shape, output_grads[0].shape, stream, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(input_grads[0].dtype, T, owner, {
    MXLITE_CUDA_CALL(cuda::PadBackward(g, output_grads[0].data_as<T>(), input_grads[0].data_as<T>(),
                                       input_grads[0].size(), stream),
                     owner);
  });
}

}  // namespace

MXLITE_REGISTER_KERNELS(Flatten, kGPU, CopyForwardGpu<kFlatten>, CopyBackwardGpu<kFlatten>);
MXLITE_REGISTER_KERNELS(Reshape, kGPU, CopyForwardGpu<kReshape>, CopyBackwardGpu<kReshape>);
MXLITE_REGISTER_KERNELS(identity, kGPU, CopyForwardGpu<kIdentity>, CopyBackwardGpu<kIdentity>);
MXLITE_REGISTER_KERNELS(transpose, kGPU, TransposeForwardGpu, TransposeBackwardGpu);
MXLITE_REGISTER_KERNELS(Concat, kGPU, ConcatForwardGpu, ConcatBackwardGpu);
MXLITE_REGISTER_KERNELS(add_n, kGPU, AddNForwardGpu, AddNBackwardGpu);
MXLITE_REGISTER_KERNELS(clip, kGPU, ClipForwardGpu, ClipBackwardGpu);
MXLITE_REGISTER_KERNELS(Pad, kGPU, PadForwardGpu, PadBackwardGpu);

}  // namespace mxlite
