// MatMul's GPU kernels (ops/matmul.cc) on cuBLAS (ops/cuda/cublas_gemm.h), batched with
// broadcasting; the gradients of broadcast operands summed by the reduction kernels. A fused
// `bias` is added by the broadcast-add kernel after the product (the bits of the separate Add, one
// engine step instead of two) and its gradient is dY summed by the reduction kernel.
#include <limits>
#include <optional>
#include <vector>

#include "ops/broadcast.h"
#include "ops/cuda/cublas_gemm.h"
#include "ops/cuda/cuda_util.h"
#include "ops/cuda/elementwise_binary_kernels.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

using cuda::GemmRowMajor;
using cuda::GemmRowMajorBatched;

// ops/matmul.cc's layout: A (batch_a..., M, K), B (batch_b..., K, N), batch = their broadcast.
struct MatMulLayout {
  Shape batch_a, batch_b, batch;
  int64_t m = 1, n = 1, k = 1;
};

MatMulLayout LayoutOf(const Shape& a, const Shape& b, const std::string& owner) {
  std::vector<int64_t> da = a.to_vector(), db = b.to_vector();
  if (da.size() == 1) da.insert(da.begin(), 1);
  if (db.size() == 1) db.push_back(1);
  MatMulLayout layout;
  layout.m = da[da.size() - 2];
  layout.k = da.back();
  layout.n = db.back();
  layout.batch_a = Shape(std::vector<int64_t>(da.begin(), da.end() - 2));
  layout.batch_b = Shape(std::vector<int64_t>(db.begin(), db.end() - 2));
  std::optional<Shape> batch = BroadcastShapes(layout.batch_a, layout.batch_b);
  MX_CHECK(batch.has_value() && db[db.size() - 2] == layout.k)
      << owner << ": 'A' " << a << " and 'B' " << b << " do not multiply";
  layout.batch = *batch;
  return layout;
}

// Matrix index into an operand's batches for each output batch (right-aligned broadcast).
std::vector<int64_t> OperandBatches(const Shape& batch, const Shape& own) {
  const int64_t count = batch.size();
  std::vector<int64_t> result(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    int64_t rest = i, index = 0, stride = 1;
    for (int d = batch.ndim() - 1; d >= 0; --d) {
      const int64_t position = rest % batch[d];
      rest /= batch[d];
      const int from_end = batch.ndim() - d;
      const int64_t extent = from_end <= own.ndim() ? own[own.ndim() - from_end] : 1;
      if (extent != 1) index += position * stride;
      stride *= extent;
    }
    result[i] = index;
  }
  return result;
}

// Whether the batches are rows of one taller product (ops/matmul.cc's fold, as on the CPU): B has
// no batch axes and every output batch has its own A matrix, A's and the output's matrices stored
// back to back in the same order, so A is (count * M, K) and the output (count * M, N). One GEMM
// of count * M rows instead of count small ones: a Linear layer on a (N, H, W, C) or (N, T, C)
// activation, as ConvNeXt and the vision transformers export it.
bool FoldsIntoOneGemm(const MatMulLayout& l) {
  return l.batch_b.size() == 1 && l.batch_a.size() == l.batch.size() &&
         l.batch.size() * l.m <= std::numeric_limits<int>::max();
}

// Runs the batch of products C_i (m x n) = op(A_{pa[i]}) op(B_{pb[i]}) — one strided-batched call
// when each operand is either unbatched or fully batched, else one GEMM per output batch.
template <typename T>
void BatchedProducts(cublasHandle_t handle, const MatMulLayout& layout, bool trans_a, bool trans_b,
                     int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, int64_t a_size,
                     const Shape& batch_of_a, const T* b, int64_t ldb, int64_t b_size,
                     const Shape& batch_of_b, T* c, const std::string& owner) {
  const int64_t count = layout.batch.size();
  auto simple = [&](const Shape& own) { return own.size() == 1 || own.size() == count; };
  if (simple(batch_of_a) && simple(batch_of_b)) {
    const int64_t stride_a = batch_of_a.size() == 1 ? 0 : a_size;
    const int64_t stride_b = batch_of_b.size() == 1 ? 0 : b_size;
    // A fully batched operand's batches are in output order exactly when its batch shape is the
    // output's (no interleaved broadcast), which `simple` with equal counts implies.
    GemmRowMajorBatched<T>(handle, trans_a, trans_b, m, n, k, a, lda, stride_a, b, ldb, stride_b, c,
                           n, m * n, count, owner);
    return;
  }
  const std::vector<int64_t> pa = OperandBatches(layout.batch, batch_of_a);
  const std::vector<int64_t> pb = OperandBatches(layout.batch, batch_of_b);
  for (int64_t i = 0; i < count; ++i) {
    GemmRowMajor<T>(handle, trans_a, trans_b, m, n, k, 1.0, a + pa[i] * a_size, lda,
                    b + pb[i] * b_size, ldb, 0.0, c + i * m * n, n, owner);
  }
}

// output += bias along its last axis, in place.
template <typename T>
void AddBias(const TensorView& output, const TensorView& bias, cudaStream_t stream,
             const std::string& owner) {
  MXLITE_CUDA_CALL(
      cuda::BroadcastBinary(cuda::BinaryKind::kAdd,
                            cuda::MakeBroadcastGeometry(output.shape, output.shape, bias.shape),
                            output.data_as<T>(), bias.data_as<T>(), output.data_as<T>(),
                            output.shape.size(), stream),
      owner);
}

void MatMulForwardGpu(const OpContext& ctx, const Attributes& attrs,
                      const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                      const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = "MatMul " + ctx.node_name;
  const MatMulLayout l = LayoutOf(inputs[0].shape, inputs[1].shape, owner);
  cublasHandle_t handle = cuda::CublasHandle(ctx, outputs[0].dtype, owner);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const bool bias = attrs.GetBool("bias");
  MXLITE_GPU_FLOAT_TYPE_SWITCH(outputs[0].dtype, T, owner, {
    if (FoldsIntoOneGemm(l)) {
      GemmRowMajor<T>(handle, false, false, l.batch.size() * l.m, l.n, l.k, 1.0,
                      inputs[0].data_as<T>(), l.k, inputs[1].data_as<T>(), l.n, 0.0,
                      outputs[0].data_as<T>(), l.n, owner);
    } else {
      BatchedProducts<T>(handle, l, false, false, l.m, l.n, l.k, inputs[0].data_as<T>(), l.k,
                         l.m * l.k, l.batch_a, inputs[1].data_as<T>(), l.n, l.k * l.n, l.batch_b,
                         outputs[0].data_as<T>(), owner);
    }
    if (bias) AddBias<T>(outputs[0], inputs[2], stream, owner);
  });
}

Shape WithMatrix(const Shape& batch, int64_t rows, int64_t columns) {
  std::vector<int64_t> dims = batch.to_vector();
  dims.push_back(rows);
  dims.push_back(columns);
  return Shape(dims);
}

void MatMulBackwardGpu(const OpContext& ctx, const Attributes&,
                       const std::vector<TensorView>& output_grads,
                       const std::vector<TensorView>& inputs, const std::vector<TensorView>&,
                       const std::vector<TensorView>& grads, const std::vector<WriteMode>& req) {
  const std::string owner = "MatMul " + ctx.node_name;
  const MatMulLayout l = LayoutOf(inputs[0].shape, inputs[1].shape, owner);
  cublasHandle_t handle = cuda::CublasHandle(ctx, output_grads[0].dtype, owner);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const int64_t count = l.batch.size();
  MXLITE_GPU_FLOAT_TYPE_SWITCH(output_grads[0].dtype, T, owner, {
    const T* a = inputs[0].data_as<T>();
    const T* b = inputs[1].data_as<T>();
    const T* dy = output_grads[0].data_as<T>();
    if (grads.size() > 2 && req[2] != WriteMode::kNull) {  // d bias = dY summed over every row
      cuda::ReduceToShape<T>(dy, output_grads[0].shape, grads[2].data_as<T>(), grads[2].shape, 1.0,
                             stream, owner);
    }
    if (FoldsIntoOneGemm(l)) {  // the batches as rows: dB sums over them inside its GEMM
      const int64_t rows = count * l.m;
      if (req[0] != WriteMode::kNull) {  // dA (rows, K) = dY (rows, N) B^T
        GemmRowMajor<T>(handle, false, true, rows, l.k, l.n, 1.0, dy, l.n, b, l.n, 0.0,
                        grads[0].data_as<T>(), l.k, owner);
      }
      if (req[1] != WriteMode::kNull) {  // dB (K, N) = A^T (K, rows) dY (rows, N)
        GemmRowMajor<T>(handle, true, false, l.k, l.n, rows, 1.0, a, l.k, dy, l.n, 0.0,
                        grads[1].data_as<T>(), l.n, owner);
      }
      return;
    }
    if (req[0] != WriteMode::kNull) {  // dA_i (M, K) = dY_i (M, N) B_i^T
      const bool broadcast = l.batch_a.size() != count;
      T* target = broadcast ? ctx.scratch->GetArray<T>(count * l.m * l.k) : grads[0].data_as<T>();
      BatchedProducts<T>(handle, l, false, true, l.m, l.k, l.n, dy, l.n, l.m * l.n, l.batch, b, l.n,
                         l.k * l.n, l.batch_b, target, owner);
      if (broadcast) {
        cuda::ReduceToShape<T>(target, WithMatrix(l.batch, l.m, l.k), grads[0].data_as<T>(),
                               WithMatrix(l.batch_a, l.m, l.k), 1.0, stream, owner);
      }
    }
    if (req[1] != WriteMode::kNull) {  // dB_i (K, N) = A_i^T (K, M) dY_i (M, N)
      const bool broadcast = l.batch_b.size() != count;
      T* target = broadcast ? ctx.scratch->GetArray<T>(count * l.k * l.n) : grads[1].data_as<T>();
      BatchedProducts<T>(handle, l, true, false, l.k, l.n, l.m, a, l.k, l.m * l.k, l.batch_a, dy,
                         l.n, l.m * l.n, l.batch, target, owner);
      if (broadcast) {
        cuda::ReduceToShape<T>(target, WithMatrix(l.batch, l.k, l.n), grads[1].data_as<T>(),
                               WithMatrix(l.batch_b, l.k, l.n), 1.0, stream, owner);
      }
    }
  });
}

}  // namespace

MXLITE_REGISTER_KERNELS(MatMul, kGPU, MatMulForwardGpu, MatMulBackwardGpu);

}  // namespace mxlite
