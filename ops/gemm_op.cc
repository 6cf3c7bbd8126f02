// Gemm (ONNX semantics): Y = alpha * op(A) * op(B) + beta * C, with op(X) = X, or X^T when
// transA / transB is set; op(A) is (M, K), op(B) is (K, N), Y is (M, N).
// C is the third input unless no_bias=true (an ONNX node with two inputs imports as no_bias=true,
// the MXNet spelling of "no C"). C broadcasts to (M, N) in one direction: () and (1), (N) and
// (1, N) per column, (M, 1) per row, or (M, N). When its shape is not known it is inferred as (N),
// a bias per output column, like FullyConnected's. Runs on ops/cpu/blas.h's Gemm<T>.
// Backward: dA = alpha * dY op(B)^T (transposed back when transA), dB likewise from A, and
// dC = beta * dY summed over C's broadcast axes; it reads A and B, not C or Y.
#include "ops/gemm_op.h"
#include "ops/broadcast.h"
#include "ops/cpu/blas.h"
#include "ops/cpu/broadcast.h"
#include "ops/operator.h"

namespace mxlite {

GemmSizes GemmSizesOf(const Attributes& attrs, const Shape& a, const Shape& b) {
  const bool trans_a = attrs.GetBool("transA"), trans_b = attrs.GetBool("transB");
  return {trans_a ? a[1] : a[0], trans_b ? b[0] : b[1], trans_a ? a[0] : a[1]};
}

namespace {

using cpu::Transpose;

bool HasC(const Attributes& attrs) { return !attrs.GetBool("no_bias"); }

void GemmShape(const Attributes& attrs, ShapeInference& shapes) {
  const Shape& a = shapes.Input(0);
  const Shape& b = shapes.Input(1);
  const std::string where = shapes.op + " " + shapes.node;
  MX_CHECK(a.ndim() == 2 && b.ndim() == 2)
      << where << ": 'A' " << a << " and 'B' " << b << " must both be matrices (2 dims)";
  const GemmSizes sizes = GemmSizesOf(attrs, a, b);
  const int64_t k_of_b = attrs.GetBool("transB") ? b[1] : b[0];
  MX_CHECK(sizes.k == k_of_b) << where << ": 'A' " << a
                              << (attrs.GetBool("transA") ? " (transA)" : "") << " and 'B' " << b
                              << (attrs.GetBool("transB") ? " (transB)" : "")
                              << " do not share the inner dimension (" << sizes.k << " vs "
                              << k_of_b << ")";
  const Shape output{sizes.m, sizes.n};
  if (HasC(attrs)) {
    if (!shapes.inputs[2].has_value()) shapes.AssignInput(2, Shape{sizes.n});
    const Shape& c = shapes.Input(2);
    MX_CHECK(c.ndim() <= 2 && BroadcastsTo(c, output))
        << where << ": 'C' " << c << " does not broadcast to the output " << output << " of 'A' "
        << a << " and 'B' " << b;
  }
  shapes.AssignOutput(0, output);
}

template <typename T>
void GemmForward(const Attributes& attrs, const std::vector<TensorView>& inputs,
                 const TensorView& output) {
  const TensorView& a = inputs[0];
  const TensorView& b = inputs[1];
  const GemmSizes s = GemmSizesOf(attrs, a.shape, b.shape);
  const T alpha = static_cast<T>(attrs.GetFloat("alpha"));
  const T beta = static_cast<T>(attrs.GetFloat("beta"));
  T* y = output.data_as<T>();
  const bool add_c = HasC(attrs) && beta != T(0);
  if (add_c) cpu::BroadcastTo(inputs[2].data_as<T>(), inputs[2].shape, y, output.shape, beta);
  cpu::Gemm<T>(attrs.GetBool("transA") ? Transpose::kYes : Transpose::kNo,
               attrs.GetBool("transB") ? Transpose::kYes : Transpose::kNo, s.m, s.n, s.k, alpha,
               a.data_as<T>(), a.shape[1], b.data_as<T>(), b.shape[1], add_c ? T(1) : T(0), y, s.n);
}

template <typename T>
void GemmBackward(const OpContext& ctx, const Attributes& attrs, const TensorView& dy_view,
                  const std::vector<TensorView>& inputs, const std::vector<TensorView>& grads,
                  const std::vector<WriteMode>& req) {
  const TensorView& a = inputs[0];
  const TensorView& b = inputs[1];
  const bool trans_a = attrs.GetBool("transA"), trans_b = attrs.GetBool("transB");
  const GemmSizes s = GemmSizesOf(attrs, a.shape, b.shape);
  const T alpha = static_cast<T>(attrs.GetFloat("alpha"));
  const T beta = static_cast<T>(attrs.GetFloat("beta"));
  const T* dy = dy_view.data_as<T>();
  constexpr Transpose kNo = Transpose::kNo, kYes = Transpose::kYes;
  if (req[0] != WriteMode::kNull) {
    T* da = grads[0].data_as<T>();
    const T* pb = b.data_as<T>();
    const int64_t ldb = b.shape[1];
    if (!trans_a) {  // dA (M, K) = alpha * dY op(B)^T
      cpu::Gemm<T>(kNo, trans_b ? kNo : kYes, s.m, s.k, s.n, alpha, dy, s.n, pb, ldb, T(0), da,
                   s.k);
    } else {  // dA (K, M) = alpha * op(B) dY^T
      cpu::Gemm<T>(trans_b ? kYes : kNo, kYes, s.k, s.m, s.n, alpha, pb, ldb, dy, s.n, T(0), da,
                   s.m);
    }
  }
  if (req[1] != WriteMode::kNull) {
    T* db = grads[1].data_as<T>();
    const T* pa = a.data_as<T>();
    const int64_t lda = a.shape[1];
    if (!trans_b) {  // dB (K, N) = alpha * op(A)^T dY
      cpu::Gemm<T>(trans_a ? kNo : kYes, kNo, s.k, s.n, s.m, alpha, pa, lda, dy, s.n, T(0), db,
                   s.n);
    } else {  // dB (N, K) = alpha * dY^T op(A)
      cpu::Gemm<T>(kYes, trans_a ? kYes : kNo, s.n, s.k, s.m, alpha, dy, s.n, pa, lda, T(0), db,
                   s.k);
    }
  }
  if (HasC(attrs) && req[2] != WriteMode::kNull) {
    cpu::ReduceToShape<T>(dy, dy_view.shape, grads[2].data_as<T>(), grads[2].shape, beta,
                          ctx.scratch);
  }
}

void GemmForwardCpu(const OpContext&, const Attributes& attrs,
                    const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                    const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  MXLITE_FLOAT_TYPE_SWITCH(outputs[0].dtype, T, "Gemm",
                           { GemmForward<T>(attrs, inputs, outputs[0]); });
}

void GemmBackwardCpu(const OpContext& ctx, const Attributes& attrs,
                     const std::vector<TensorView>& output_grads,
                     const std::vector<TensorView>& inputs, const std::vector<TensorView>&,
                     const std::vector<TensorView>& input_grads,
                     const std::vector<WriteMode>& req) {
  MXLITE_FLOAT_TYPE_SWITCH(output_grads[0].dtype, T, "Gemm", {
    GemmBackward<T>(ctx, attrs, output_grads[0], inputs, input_grads, req);
  });
}

}  // namespace

MXLITE_REGISTER_OP(Gemm) {
  OpDef op;
  op.name = "Gemm";
  op.doc = "Y = alpha * op(A) op(B) + beta * C (ONNX Gemm); C is absent when no_bias=true.";
  op.attributes.Float("alpha", "scale of op(A) op(B)", Default("1"))
      .Float("beta", "scale of C", Default("1"))
      .Bool("transA", "use A^T", Default("false"))
      .Bool("transB", "use B^T", Default("false"))
      .Bool("no_bias", "there is no input C", Default("false"));
  op.input_names = [](const Attributes& attrs) {
    return HasC(attrs) ? std::vector<std::string>{"A", "B", "C"}
                       : std::vector<std::string>{"A", "B"};
  };
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output"}; };
  op.infer_shape = GemmShape;
  op.backward_dependencies = [](const Attributes& attrs) -> BackwardDependencies {
    std::vector<bool> inputs{true, true};
    if (HasC(attrs)) inputs.push_back(false);
    return {inputs, {false}};
  };
  op.forward[DeviceType::kCPU] = GemmForwardCpu;
  op.backward[DeviceType::kCPU] = GemmBackwardCpu;
  return op;
}

}  // namespace mxlite
