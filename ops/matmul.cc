// MatMul (NumPy / ONNX semantics): the matrix product over the last two axes, broadcast over the
// leading (batch) axes. A 1-D A of (K) acts as (1, K) and a 1-D B of (K) as (K, 1); the added axis
// is dropped from the output, so (K) x (K) gives a scalar () and (K) x (b, K, N) gives (b, N).
// (2, 1, 3, 4) x (5, 4, 2) gives (2, 5, 3, 2). Every product is one Gemm<T> (ops/cpu/blas.h) on the
// operands in place, broadcast ones included (no copies); when B has no batch axes and A's batches
// are all distinct, the batches fold into one taller Gemm; at inference a B that stands from pass
// to pass (a weight) is then kept packed for the GEMM (ops/cpu/kept_operand.h,
// MXNET_CONV_PREPACK_WEIGHTS). Backward reads A and B; the gradient of a broadcast operand is
// summed over the batches that shared it.
//
// `bias` (true: a third input, `bias`, a vector along the output's last axis: shape (N) or (1, ...,
// 1, N) of at most the output's rank) adds it to every row of the product: the Linear layers
// that exporters write as MatMul then Add (scheduler/graph/fusion.h folds the Add in at bind). On
// the CPU the GEMM adds it as it stores each element (one pass over the output instead of two;
// the GPU's kernels add it after cuBLAS), with the bits of the separate addition (each sum
// complete, then the bias added). Its gradient is dY summed over every row.
#include <memory>
#include <type_traits>

#include "core/settings.h"
#include "ops/broadcast.h"
#include "ops/cpu/blas.h"
#include "ops/cpu/broadcast.h"
#include "ops/cpu/kept_operand.h"
#include "ops/cpu/parallel.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

using cpu::Transpose;

// The operands seen as batches of matrices: A (batch_a..., M, K), B (batch_b..., K, N).
struct MatMulLayout {
  Shape batch_a, batch_b, batch;  // batch = the broadcast of batch_a and batch_b
  int64_t m = 1, n = 1, k = 1;
  Shape output;
};

// Throws with `where` and both shapes when the operands do not multiply.
MatMulLayout LayoutOf(const Shape& a, const Shape& b, const std::string& where) {
  MX_CHECK(a.ndim() >= 1 && b.ndim() >= 1)
      << where << ": 'A' " << a << " and 'B' " << b << " must have at least 1 dim each";
  std::vector<int64_t> da = a.to_vector(), db = b.to_vector();
  const bool vector_a = da.size() == 1, vector_b = db.size() == 1;
  if (vector_a) da.insert(da.begin(), 1);
  if (vector_b) db.push_back(1);
  MatMulLayout layout;
  layout.m = da[da.size() - 2];
  layout.k = da.back();
  layout.n = db.back();
  MX_CHECK(db[db.size() - 2] == layout.k)
      << where << ": 'A' " << a << " and 'B' " << b << " do not share the inner dimension ("
      << layout.k << " vs " << db[db.size() - 2] << ")";
  layout.batch_a = Shape(std::vector<int64_t>(da.begin(), da.end() - 2));
  layout.batch_b = Shape(std::vector<int64_t>(db.begin(), db.end() - 2));
  std::optional<Shape> batch = BroadcastShapes(layout.batch_a, layout.batch_b);
  MX_CHECK(batch.has_value()) << where << ": the batch dimensions of 'A' " << a << " and 'B' " << b
                              << " do not broadcast";
  layout.batch = *batch;
  std::vector<int64_t> out = batch->to_vector();
  if (!vector_a) out.push_back(layout.m);
  if (!vector_b) out.push_back(layout.n);
  MX_CHECK(out.size() <= static_cast<size_t>(Shape::kMaxDims))
      << where << ": the product of 'A' " << a << " and 'B' " << b << " would have " << out.size()
      << " dims, at most " << Shape::kMaxDims << " are supported";
  layout.output = Shape(out);
  return layout;
}

void MatMulShape(const Attributes& attrs, ShapeInference& shapes) {
  const std::string where = shapes.op + " " + shapes.node;
  const MatMulLayout layout = LayoutOf(shapes.Input(0), shapes.Input(1), where);
  shapes.AssignOutput(0, layout.output);
  if (!attrs.GetBool("bias")) return;
  MX_CHECK(shapes.Input(1).ndim() >= 2)
      << where << ": a bias is added along the output's last axis, the columns of 'B', but 'B' "
      << shapes.Input(1) << " is a vector (its product has no such axis)";
  if (!shapes.inputs[2].has_value()) {
    shapes.AssignInput(2, Shape{layout.n});
    return;
  }
  MX_CHECK(IsLastAxisVector(*shapes.inputs[2], layout.output))
      << where << ": 'bias' " << *shapes.inputs[2] << " must be a vector along the output's last "
      << "axis, (" << layout.n << ") or (1, ..., 1, " << layout.n << ") of at most "
      << layout.output.ndim() << " dims, for the output " << layout.output;
}

// Matrix offsets (in matrices, not elements) of A and B for every output batch, in `scratch`.
struct BatchPairs {
  int64_t count = 0;
  int64_t* a = nullptr;
  int64_t* b = nullptr;
};

BatchPairs PairBatches(const MatMulLayout& layout, ScratchSpace* scratch) {
  BatchPairs pairs;
  pairs.count = layout.batch.size();
  pairs.a = scratch->GetArray<int64_t>(pairs.count);
  pairs.b = scratch->GetArray<int64_t>(pairs.count);
  if (pairs.count == 0) return pairs;
  const cpu::BroadcastLayout batches =
      cpu::MakeBroadcastLayout(layout.batch, {layout.batch_a, layout.batch_b});
  cpu::ForEachRow(batches, 0, pairs.count,
                  [&](int64_t position, const cpu::BroadcastLayout::Offsets& at, int64_t length) {
                    for (int64_t j = 0; j < length; ++j) {
                      pairs.a[position + j] = at[0] + j * batches.inner_stride(0);
                      pairs.b[position + j] = at[1] + j * batches.inner_stride(1);
                    }
                  });
  return pairs;
}

// Runs product(i) for every output batch i: on the pool when the products are small (each then
// runs single-threaded), one after another otherwise (each Gemm uses the pool itself).
template <typename Fn>
void ForEachBatch(int64_t count, int64_t flops_each, Fn&& product) {
  constexpr int64_t kSmallProduct = int64_t{1} << 21;
  if (count > 1 && flops_each < kSmallProduct) {
    cpu::ParallelFor(count, product);
  } else {
    for (int64_t i = 0; i < count; ++i) product(i);
  }
}

// B has no batch axes and A is not broadcast: the batches of A stack into one (batch*M, K) matrix.
bool FoldsIntoOneGemm(const MatMulLayout& layout) {
  return layout.batch_b.size() == 1 && layout.batch_a.size() == layout.batch.size();
}

// An inference node's B, kept packed while it stands (MXNET_CONV_PREPACK_WEIGHTS).
class MatMulState : public OpState {
 public:
  cpu::KeptPackedOperand b;
  size_t kept_bytes() const override { return b.bytes(); }
};

std::unique_ptr<OpState> CreateState(const StateRequest& request) {
  if (request.training || !settings().GetBool("MXNET_CONV_PREPACK_WEIGHTS")) return nullptr;
  return std::make_unique<MatMulState>();
}

// B (k x n) packed, when this is an inference call of a node whose B stood since its last call.
template <typename T>
std::shared_ptr<const cpu::PackedGemmOperand> KeptB(const OpContext& ctx, int64_t k, int64_t n,
                                                    const T* b) {
  if constexpr (std::is_same_v<T, float>) {
    auto* state = dynamic_cast<MatMulState*>(ctx.state);
    if (!ctx.is_train && state != nullptr && ctx.input_versions.size() >= 2) {
      return state->b.Get(cpu::PackedGemmOperand::Side::kB, Transpose::kNo, k, n, b, n,
                          ctx.input_versions[1]);
    }
  }
  return nullptr;
}

// `bias`: the N-vector added to every row as the sums are stored, or null.
template <typename T>
void MatMulForward(const OpContext& ctx, const TensorView& a_view, const TensorView& b_view,
                   const T* bias, const TensorView& out_view) {
  const MatMulLayout layout = LayoutOf(a_view.shape, b_view.shape, "MatMul " + ctx.node_name);
  const T* a = a_view.data_as<T>();
  const T* b = b_view.data_as<T>();
  T* out = out_view.data_as<T>();
  const int64_t m = layout.m, n = layout.n, k = layout.k;
  cpu::Epilogue<T> epilogue;
  epilogue.column_bias = bias;
  if (FoldsIntoOneGemm(layout)) {
    const int64_t rows = layout.batch.size() * m;
    if (rows > 1) {  // a single row reads B in place anyway
      if (const auto packed = KeptB(ctx, k, n, b)) {
        if constexpr (std::is_same_v<T, float>) {
          cpu::Sgemm(Transpose::kNo, rows, 1.0f, a, k, *packed, 0.0f, out, n, epilogue);
          return;
        }
      }
    }
    cpu::Gemm<T>(Transpose::kNo, Transpose::kNo, rows, n, k, T(1), a, k, b, n, T(0), out, n,
                 epilogue);
    return;
  }
  const BatchPairs pairs = PairBatches(layout, ctx.scratch);
  ForEachBatch(pairs.count, m * n * k, [&](int64_t i) {
    cpu::Gemm<T>(Transpose::kNo, Transpose::kNo, m, n, k, T(1), a + pairs.a[i] * m * k, k,
                 b + pairs.b[i] * k * n, n, T(0), out + i * m * n, n, epilogue);
  });
}

template <typename T>
void MatMulBackward(const OpContext& ctx, const TensorView& dy_view, const TensorView& a_view,
                    const TensorView& b_view, const std::vector<TensorView>& grads,
                    const std::vector<WriteMode>& req) {
  const MatMulLayout layout = LayoutOf(a_view.shape, b_view.shape, "MatMul " + ctx.node_name);
  const T* a = a_view.data_as<T>();
  const T* b = b_view.data_as<T>();
  const T* dy = dy_view.data_as<T>();
  const int64_t m = layout.m, n = layout.n, k = layout.k;
  const bool want_a = req[0] != WriteMode::kNull, want_b = req[1] != WriteMode::kNull;
  if (grads.size() > 2 && req[2] != WriteMode::kNull) {  // d bias = dY summed over every row
    cpu::ReduceToShape<T>(dy, dy_view.shape, grads[2].data_as<T>(), grads[2].shape, T(1),
                          ctx.scratch);
  }
  if (FoldsIntoOneGemm(layout)) {
    const int64_t rows = layout.batch.size() * m;
    // dA (rows, K) = dY (rows, N) B^T; dB (K, N) = A^T (K, rows) dY, summing over the batches.
    if (want_a) {
      cpu::Gemm<T>(Transpose::kNo, Transpose::kYes, rows, k, n, T(1), dy, n, b, n, T(0),
                   grads[0].data_as<T>(), k);
    }
    if (want_b) {
      cpu::Gemm<T>(Transpose::kYes, Transpose::kNo, k, n, rows, T(1), a, k, dy, n, T(0),
                   grads[1].data_as<T>(), n);
    }
    return;
  }
  const BatchPairs pairs = PairBatches(layout, ctx.scratch);
  const Shape batch_matrices_a = [&] {  // (batch..., M, K): per-output-batch gradients of A
    std::vector<int64_t> dims = layout.batch.to_vector();
    dims.push_back(m);
    dims.push_back(k);
    return Shape(dims);
  }();
  if (want_a) {
    // A broadcast over some batch axes: one gradient per output batch, then summed.
    const bool broadcast = layout.batch_a.size() != layout.batch.size();
    T* target = broadcast ? ctx.scratch->GetArray<T>(pairs.count * m * k) : grads[0].data_as<T>();
    ForEachBatch(pairs.count, m * n * k, [&](int64_t i) {
      cpu::Gemm<T>(Transpose::kNo, Transpose::kYes, m, k, n, T(1), dy + i * m * n, n,
                   b + pairs.b[i] * k * n, n, T(0), target + i * m * k, k);
    });
    if (broadcast) {
      std::vector<int64_t> dims = layout.batch_a.to_vector();
      dims.push_back(m);
      dims.push_back(k);
      cpu::ReduceToShape<T>(target, batch_matrices_a, grads[0].data_as<T>(), Shape(dims), T(1),
                            ctx.scratch);
    }
  }
  if (want_b) {
    const bool broadcast = layout.batch_b.size() != layout.batch.size();
    T* target = broadcast ? ctx.scratch->GetArray<T>(pairs.count * k * n) : grads[1].data_as<T>();
    ForEachBatch(pairs.count, m * n * k, [&](int64_t i) {
      cpu::Gemm<T>(Transpose::kYes, Transpose::kNo, k, n, m, T(1), a + pairs.a[i] * m * k, k,
                   dy + i * m * n, n, T(0), target + i * k * n, n);
    });
    if (broadcast) {
      std::vector<int64_t> batch = layout.batch.to_vector(), own = layout.batch_b.to_vector();
      for (std::vector<int64_t>* dims : {&batch, &own}) {
        dims->push_back(k);
        dims->push_back(n);
      }
      cpu::ReduceToShape<T>(target, Shape(batch), grads[1].data_as<T>(), Shape(own), T(1),
                            ctx.scratch);
    }
  }
}

void MatMulForwardCpu(const OpContext& ctx, const Attributes& attrs,
                      const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                      const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  MXLITE_FLOAT_TYPE_SWITCH(outputs[0].dtype, T, "MatMul", {
    const T* bias = attrs.GetBool("bias") ? inputs[2].data_as<T>() : nullptr;
    MatMulForward<T>(ctx, inputs[0], inputs[1], bias, outputs[0]);
  });
}

void MatMulBackwardCpu(const OpContext& ctx, const Attributes&,
                       const std::vector<TensorView>& output_grads,
                       const std::vector<TensorView>& inputs, const std::vector<TensorView>&,
                       const std::vector<TensorView>& input_grads,
                       const std::vector<WriteMode>& req) {
  MXLITE_FLOAT_TYPE_SWITCH(output_grads[0].dtype, T, "MatMul", {
    MatMulBackward<T>(ctx, output_grads[0], inputs[0], inputs[1], input_grads, req);
  });
}

}  // namespace

MXLITE_REGISTER_OP(MatMul) {
  OpDef op;
  op.name = "MatMul";
  op.doc = "Matrix product with NumPy semantics: 1-D operands promoted, batch axes broadcast.";
  op.attributes.Bool("bias",
                     "one more input, bias: a vector along the output's last axis ((N) or (1, "
                     "..., 1, N)) added to every row as the product is stored",
                     Default("false"));
  op.input_names = [](const Attributes& attrs) {
    std::vector<std::string> names{"A", "B"};
    if (attrs.GetBool("bias")) names.push_back("bias");
    return names;
  };
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output"}; };
  op.infer_shape = MatMulShape;
  op.backward_dependencies = [](const Attributes& attrs) -> BackwardDependencies {
    std::vector<bool> inputs{true, true};
    if (attrs.GetBool("bias")) inputs.push_back(false);  // its gradient needs dY alone
    return {inputs, {false}};
  };
  // Not twice, and not when B is a vector (the product has no axis of B's columns then).
  op.fusion.takes_bias = [](const Attributes& attrs, const std::vector<Shape>& inputs) {
    return !attrs.GetBool("bias") && inputs.size() >= 2 && inputs[1].ndim() >= 2;
  };
  op.forward[DeviceType::kCPU] = MatMulForwardCpu;
  op.backward[DeviceType::kCPU] = MatMulBackwardCpu;
  op.create_state[DeviceType::kCPU] = CreateState;
  return op;
}

}  // namespace mxlite
