// GPU kernels of FullyConnected, Gemm and MatMul on cuBLAS (float32, float64, and float16 through
// cublasGemmEx with float accumulation and float alpha / beta, as MXNet's float16 GEMMs). Tensors are
// row-major; cuBLAS is column-major, so C = op(A) op(B) is computed as C^T = op(B)^T op(A)^T,
// which reads the row-major buffers as they are (GemmRowMajor). Bias / C terms and the gradients
// of broadcast operands use the reduction and broadcast kernels of elementwise_kernels.cu.
// Semantics are the CPU ops' (ops/fully_connected.cc, gemm_op.cc, matmul.cc).
#include <vector>

#include "ops/broadcast.h"
#include "ops/cuda/cuda_util.h"
#include "ops/cuda/kernels.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

// Row-major C (m x n, leading dimension ldc) = alpha * op(A) op(B) + beta * C, with A stored
// (m x k), or (k x m) when trans_a, with row length lda; B likewise (k x n) or (n x k).
template <typename T>
void GemmRowMajor(cublasHandle_t handle, bool trans_a, bool trans_b, int64_t m, int64_t n,
                  int64_t k, double alpha, const T* a, int64_t lda, const T* b, int64_t ldb,
                  double beta, T* c, int64_t ldc, const std::string& owner) {
  if (m == 0 || n == 0) return;
  using Scalar = cuda::CudnnScalar<T>;  // float for float16 and float32, double for double
  const Scalar alpha_t = static_cast<Scalar>(alpha), beta_t = static_cast<Scalar>(beta);
  const cublasOperation_t op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int im = cuda::CheckedInt(m, owner, "GEMM rows"),
            in = cuda::CheckedInt(n, owner, "GEMM columns"),
            ik = cuda::CheckedInt(k, owner, "GEMM depth");
  const int ilda = cuda::CheckedInt(std::max<int64_t>(lda, 1), owner, "leading dimension"),
            ildb = cuda::CheckedInt(std::max<int64_t>(ldb, 1), owner, "leading dimension"),
            ildc = cuda::CheckedInt(std::max<int64_t>(ldc, 1), owner, "leading dimension");
  if constexpr (std::is_same_v<T, float>) {
    MXLITE_CUBLAS_CALL(
        cublasSgemm(handle, op_b, op_a, in, im, ik, &alpha_t, b, ildb, a, ilda, &beta_t, c, ildc),
        owner);
  } else if constexpr (std::is_same_v<T, __half>) {
    MXLITE_CUBLAS_CALL(cublasGemmEx(handle, op_b, op_a, in, im, ik, &alpha_t, b, CUDA_R_16F, ildb,
                                    a, CUDA_R_16F, ilda, &beta_t, c, CUDA_R_16F, ildc,
                                    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                       owner);
  } else {
    MXLITE_CUBLAS_CALL(
        cublasDgemm(handle, op_b, op_a, in, im, ik, &alpha_t, b, ildb, a, ilda, &beta_t, c, ildc),
        owner);
  }
}

// The same for `count` products whose operands sit `stride_*` elements apart (0: shared).
template <typename T>
void GemmRowMajorBatched(cublasHandle_t handle, bool trans_a, bool trans_b, int64_t m, int64_t n,
                         int64_t k, const T* a, int64_t lda, int64_t stride_a, const T* b,
                         int64_t ldb, int64_t stride_b, T* c, int64_t ldc, int64_t stride_c,
                         int64_t count, const std::string& owner) {
  if (m == 0 || n == 0 || count == 0) return;
  const cuda::CudnnScalar<T> one = 1, zero = 0;
  const cublasOperation_t op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int im = cuda::CheckedInt(m, owner, "GEMM rows"),
            in = cuda::CheckedInt(n, owner, "GEMM columns"),
            ik = cuda::CheckedInt(k, owner, "GEMM depth");
  const int ilda = cuda::CheckedInt(std::max<int64_t>(lda, 1), owner, "leading dimension"),
            ildb = cuda::CheckedInt(std::max<int64_t>(ldb, 1), owner, "leading dimension"),
            ildc = cuda::CheckedInt(std::max<int64_t>(ldc, 1), owner, "leading dimension");
  const int batches = cuda::CheckedInt(count, owner, "batch count");
  if constexpr (std::is_same_v<T, float>) {
    MXLITE_CUBLAS_CALL(
        cublasSgemmStridedBatched(handle, op_b, op_a, in, im, ik, &one, b, ildb, stride_b, a, ilda,
                                  stride_a, &zero, c, ildc, stride_c, batches),
        owner);
  } else if constexpr (std::is_same_v<T, __half>) {
    MXLITE_CUBLAS_CALL(
        cublasGemmStridedBatchedEx(handle, op_b, op_a, in, im, ik, &one, b, CUDA_R_16F, ildb,
                                   stride_b, a, CUDA_R_16F, ilda, stride_a, &zero, c, CUDA_R_16F,
                                   ildc, stride_c, batches, CUBLAS_COMPUTE_32F,
                                   CUBLAS_GEMM_DEFAULT),
        owner);
  } else {
    MXLITE_CUBLAS_CALL(
        cublasDgemmStridedBatched(handle, op_b, op_a, in, im, ik, &one, b, ildb, stride_b, a, ilda,
                                  stride_a, &zero, c, ildc, stride_c, batches),
        owner);
  }
}

// ---- FullyConnected ------------------------------------------------------------------------

struct MatrixExtents {
  int64_t rows, inner;
};

MatrixExtents DataMatrix(const Attributes& attrs, const Shape& data) {
  if (attrs.GetBool("flatten")) return {data[0], data.size(1, data.ndim())};
  return {data.size(0, data.ndim() - 1), data.dim(-1)};
}

void FullyConnectedForwardGpu(const OpContext& ctx, const Attributes& attrs,
                              const std::vector<TensorView>& inputs,
                              const std::vector<TensorView>& outputs,
                              const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = "FullyConnected " + ctx.node_name;
  const MatrixExtents m = DataMatrix(attrs, inputs[0].shape);
  const int64_t hidden = attrs.GetInt("num_hidden");
  const bool has_bias = !attrs.GetBool("no_bias");
  cublasHandle_t handle = cuda::CublasHandle(ctx, inputs[0].dtype, owner);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    T* out = outputs[0].data_as<T>();
    if (has_bias) {  // every row starts as the bias, then the GEMM adds to it
      const Shape out_shape{m.rows, hidden};
      MXLITE_CUDA_CALL(cuda::BroadcastAssign(
                           cuda::MakeBroadcastGeometry(out_shape, Shape{hidden}, Shape{hidden}),
                           inputs[2].data_as<T>(), out, 1.0, out_shape.size(), stream),
                       owner);
    }
    GemmRowMajor<T>(handle, false, true, m.rows, hidden, m.inner, 1.0, inputs[0].data_as<T>(),
                    m.inner, inputs[1].data_as<T>(), m.inner, has_bias ? 1.0 : 0.0, out, hidden,
                    owner);
  });
}

void FullyConnectedBackwardGpu(const OpContext& ctx, const Attributes& attrs,
                               const std::vector<TensorView>& output_grads,
                               const std::vector<TensorView>& inputs,
                               const std::vector<TensorView>&,
                               const std::vector<TensorView>& input_grads,
                               const std::vector<WriteMode>& req) {
  const std::string owner = "FullyConnected " + ctx.node_name;
  const MatrixExtents m = DataMatrix(attrs, inputs[0].shape);
  const int64_t hidden = attrs.GetInt("num_hidden");
  cublasHandle_t handle = cuda::CublasHandle(ctx, inputs[0].dtype, owner);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    const T* grad = output_grads[0].data_as<T>();
    if (req[0] != WriteMode::kNull) {  // (rows x K) = grad (rows x hidden) * weight (hidden x K)
      GemmRowMajor<T>(handle, false, false, m.rows, m.inner, hidden, 1.0, grad, hidden,
                      inputs[1].data_as<T>(), m.inner, 0.0, input_grads[0].data_as<T>(), m.inner,
                      owner);
    }
    if (req[1] != WriteMode::kNull) {  // (hidden x K) = grad^T (hidden x rows) * data (rows x K)
      GemmRowMajor<T>(handle, true, false, hidden, m.inner, m.rows, 1.0, grad, hidden,
                      inputs[0].data_as<T>(), m.inner, 0.0, input_grads[1].data_as<T>(), m.inner,
                      owner);
    }
    if (!attrs.GetBool("no_bias") && req[2] != WriteMode::kNull) {
      cuda::ReduceToShape<T>(grad, Shape{m.rows, hidden}, input_grads[2].data_as<T>(),
                             Shape{hidden}, 1.0, stream, owner);
    }
  });
}

// ---- Gemm ----------------------------------------------------------------------------------

void GemmForwardGpu(const OpContext& ctx, const Attributes& attrs,
                    const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                    const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = "Gemm " + ctx.node_name;
  const TensorView& a = inputs[0];
  const TensorView& b = inputs[1];
  const bool trans_a = attrs.GetBool("transA"), trans_b = attrs.GetBool("transB");
  const int64_t m = trans_a ? a.shape[1] : a.shape[0], n = trans_b ? b.shape[0] : b.shape[1],
                k = trans_a ? a.shape[0] : a.shape[1];
  const double alpha = attrs.GetFloat("alpha"), beta = attrs.GetFloat("beta");
  const bool add_c = !attrs.GetBool("no_bias") && beta != 0;
  cublasHandle_t handle = cuda::CublasHandle(ctx, outputs[0].dtype, owner);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(outputs[0].dtype, T, owner, {
    T* y = outputs[0].data_as<T>();
    if (add_c) {
      MXLITE_CUDA_CALL(
          cuda::BroadcastAssign(
              cuda::MakeBroadcastGeometry(outputs[0].shape, inputs[2].shape, inputs[2].shape),
              inputs[2].data_as<T>(), y, beta, outputs[0].size(), stream),
          owner);
    }
    GemmRowMajor<T>(handle, trans_a, trans_b, m, n, k, alpha, a.data_as<T>(), a.shape[1],
                    b.data_as<T>(), b.shape[1], add_c ? 1.0 : 0.0, y, n, owner);
  });
}

void GemmBackwardGpu(const OpContext& ctx, const Attributes& attrs,
                     const std::vector<TensorView>& output_grads,
                     const std::vector<TensorView>& inputs, const std::vector<TensorView>&,
                     const std::vector<TensorView>& grads, const std::vector<WriteMode>& req) {
  const std::string owner = "Gemm " + ctx.node_name;
  const TensorView& a = inputs[0];
  const TensorView& b = inputs[1];
  const bool trans_a = attrs.GetBool("transA"), trans_b = attrs.GetBool("transB");
  const int64_t m = trans_a ? a.shape[1] : a.shape[0], n = trans_b ? b.shape[0] : b.shape[1],
                k = trans_a ? a.shape[0] : a.shape[1];
  const double alpha = attrs.GetFloat("alpha"), beta = attrs.GetFloat("beta");
  cublasHandle_t handle = cuda::CublasHandle(ctx, output_grads[0].dtype, owner);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(output_grads[0].dtype, T, owner, {
    const T* dy = output_grads[0].data_as<T>();
    if (req[0] != WriteMode::kNull) {
      if (!trans_a) {  // dA (M, K) = alpha * dY op(B)^T
        GemmRowMajor<T>(handle, false, !trans_b, m, k, n, alpha, dy, n, b.data_as<T>(), b.shape[1],
                        0.0, grads[0].data_as<T>(), k, owner);
      } else {  // dA (K, M) = alpha * op(B) dY^T
        GemmRowMajor<T>(handle, trans_b, true, k, m, n, alpha, b.data_as<T>(), b.shape[1], dy, n,
                        0.0, grads[0].data_as<T>(), m, owner);
      }
    }
    if (req[1] != WriteMode::kNull) {
      if (!trans_b) {  // dB (K, N) = alpha * op(A)^T dY
        GemmRowMajor<T>(handle, !trans_a, false, k, n, m, alpha, a.data_as<T>(), a.shape[1], dy, n,
                        0.0, grads[1].data_as<T>(), n, owner);
      } else {  // dB (N, K) = alpha * dY^T op(A)
        GemmRowMajor<T>(handle, true, trans_a, n, k, m, alpha, dy, n, a.data_as<T>(), a.shape[1],
                        0.0, grads[1].data_as<T>(), k, owner);
      }
    }
    if (!attrs.GetBool("no_bias") && req[2] != WriteMode::kNull) {
      cuda::ReduceToShape<T>(dy, output_grads[0].shape, grads[2].data_as<T>(), grads[2].shape, beta,
                             stream, owner);
    }
  });
}

// ---- MatMul --------------------------------------------------------------------------------

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

void MatMulForwardGpu(const OpContext& ctx, const Attributes&,
                      const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                      const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = "MatMul " + ctx.node_name;
  const MatMulLayout l = LayoutOf(inputs[0].shape, inputs[1].shape, owner);
  cublasHandle_t handle = cuda::CublasHandle(ctx, outputs[0].dtype, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(outputs[0].dtype, T, owner, {
    BatchedProducts<T>(handle, l, false, false, l.m, l.n, l.k, inputs[0].data_as<T>(), l.k,
                       l.m * l.k, l.batch_a, inputs[1].data_as<T>(), l.n, l.k * l.n, l.batch_b,
                       outputs[0].data_as<T>(), owner);
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

MXLITE_REGISTER_KERNELS(FullyConnected, kGPU, FullyConnectedForwardGpu, FullyConnectedBackwardGpu);
MXLITE_REGISTER_KERNELS(Gemm, kGPU, GemmForwardGpu, GemmBackwardGpu);
MXLITE_REGISTER_KERNELS(MatMul, kGPU, MatMulForwardGpu, MatMulBackwardGpu);

}  // namespace mxlite
