#include <gtest/gtest.h>

#include "tests/ops/kernel_calls.h"
#include "tests/ops/op_harness.h"
#include "tests/ops/reference.h"

namespace mxlite::testing {
namespace {

// numpy.matmul one output element at a time: promote 1-D operands, broadcast the batch axes.
ReferenceFn MatMulReference(const Shape& out) {
  return [out](const auto& inputs, const auto& shapes) {
    std::vector<int64_t> a = shapes[0].to_vector(), b = shapes[1].to_vector();
    const bool vector_a = a.size() == 1, vector_b = b.size() == 1;
    if (vector_a) a.insert(a.begin(), 1);
    if (vector_b) b.push_back(1);
    const Shape sa(a), sb(b);
    const int64_t k = a.back();
    std::vector<int64_t> full = out.to_vector();  // the output with the dropped axes restored
    if (vector_a) full.insert(full.end() - (vector_b ? 0 : 1), 1);
    if (vector_b) full.push_back(1);
    const Shape full_out(full);
    std::vector<double> result(out.size());
    for (int64_t i = 0; i < full_out.size(); ++i) {
      std::vector<int64_t> coords = Unravel(i, full_out);
      const int64_t row = coords[coords.size() - 2], column = coords.back();
      // A[..., row, 0] and B[..., 0, column], with only the batch axes broadcast; p steps by 1
      // along A's row and by N down B's column.
      std::vector<int64_t> ca = coords, cb = coords;
      ca[ca.size() - 2] = row;
      ca.back() = 0;
      cb[cb.size() - 2] = 0;
      cb.back() = column;
      const int64_t a0 = BroadcastIndex(ca, sa), b0 = BroadcastIndex(cb, sb), n = b.back();
      double sum = 0;
      for (int64_t p = 0; p < k; ++p) sum += inputs[0][a0 + p] * inputs[1][b0 + p * n];
      result[i] = sum;
    }
    return std::vector<std::vector<double>>{result};
  };
}

struct MatMulCase {
  Shape a, b, out;
};

class MatMulTest : public ::testing::TestWithParam<MatMulCase> {};

TEST_P(MatMulTest, GradientAndReference) {
  const MatMulCase& c = GetParam();
  OpCase test_case{"MatMul", {}, {c.a, c.b}};
  ASSERT_EQ(InferOutputShapes(test_case)[0], c.out);
  CheckGradients(test_case);
  CheckForwardAgainstReference(test_case, MatMulReference(c.out));
}

INSTANTIATE_TEST_SUITE_P(
    NumPySemantics, MatMulTest,
    ::testing::Values(MatMulCase{{3}, {3}, {}},                           // 1-D x 1-D
                      MatMulCase{{4}, {2, 4, 3}, {2, 3}},                 // 1-D x 3-D
                      MatMulCase{{2, 3, 4}, {4}, {2, 3}},                 // 3-D x 1-D
                      MatMulCase{{3, 4}, {4}, {3}},                       // matrix x vector
                      MatMulCase{{3, 4}, {4, 5}, {3, 5}},                 // plain
                      MatMulCase{{2, 1, 3, 4}, {5, 4, 2}, {2, 5, 3, 2}},  // batched broadcast
                      MatMulCase{{2, 3, 4}, {4, 5}, {2, 3, 5}},           // folds into one Gemm
                      MatMulCase{{3, 4}, {2, 4, 5}, {2, 3, 5}},           // A broadcast
                      MatMulCase{{2, 3, 4}, {2, 4, 5}, {2, 3, 5}},        // same batches
                      MatMulCase{{1, 3, 4}, {2, 4, 1}, {2, 3, 1}},        // size-1 batch and N
                      MatMulCase{{2, 1, 3, 4}, {1, 1, 4, 2}, {2, 1, 3, 2}}));

TEST(MatMulTest, ManySmallAndFewLargeBatchesInFloat32) {
  for (const MatMulCase& c : {MatMulCase{{16, 8, 12}, {16, 12, 6}, {16, 8, 6}},
                              MatMulCase{{3, 1, 70, 130}, {2, 130, 90}, {3, 2, 70, 90}},
                              MatMulCase{{4, 50, 200}, {200, 60}, {4, 50, 60}}}) {
    OpCase test_case{"MatMul", {}, {c.a, c.b}};
    CheckForwardAgainstReference(test_case, MatMulReference(c.out), 1e-4);
  }
}

// MatMul's fused bias: the reference product plus the vector along the last axis.
ReferenceFn MatMulWithBiasReference(const Shape& out) {
  return [out](const auto& inputs, const auto& shapes) {
    std::vector<std::vector<double>> result = MatMulReference(out)(inputs, shapes);
    const int64_t n = shapes[2][shapes[2].ndim() - 1];
    for (int64_t i = 0; i < out.size(); ++i) result[0][i] += inputs[2][i % n];
    return result;
  };
}

TEST(MatMulTest, BiasAlongTheLastAxisWithItsGradient) {
  for (const MatMulCase& c : {MatMulCase{{2, 3, 4}, {4, 5}, {2, 3, 5}},           // one GEMM
                              MatMulCase{{2, 1, 3, 4}, {5, 4, 2}, {2, 5, 3, 2}},  // batched
                              MatMulCase{{4}, {2, 4, 3}, {2, 3}},                 // 1-D A
                              MatMulCase{{1, 4}, {4, 6}, {1, 6}}}) {              // one row
    for (const Shape& bias : {Shape{c.out[c.out.ndim() - 1]}, Shape{1, c.out[c.out.ndim() - 1]}}) {
      SCOPED_TRACE(::testing::Message() << c.a << " x " << c.b << " + " << bias);
      OpCase test_case{"MatMul", {{"bias", "true"}}, {c.a, c.b, bias}};
      ASSERT_EQ(InferOutputShapes(test_case)[0], c.out);
      CheckGradients(test_case);
      CheckForwardAgainstReference(test_case, MatMulWithBiasReference(c.out));
    }
  }
  // float32 through the packed GEMM's store, a product large enough for several blocks.
  OpCase large{"MatMul", {{"bias", "true"}}, {{3, 70, 130}, {130, 90}, {90}}};
  CheckForwardAgainstReference(large, MatMulWithBiasReference({3, 70, 90}), 1e-4);
}

TEST(MatMulTest, ABiasMustLieAlongTheLastAxis) {
  ExpectShapeError({"MatMul", {{"bias", "true"}}, {{2, 3, 4}, {4, 5}, {5, 1}}},
                   {"'bias' (5,1)", "(5) or (1, ..., 1, 5)", "(2,3,5)"});
  ExpectShapeError({"MatMul", {{"bias", "true"}}, {{2, 3, 4}, {4, 5}, {3, 5}}},
                   {"'bias' (3,5)", "last axis"});
  ExpectShapeError({"MatMul", {{"bias", "true"}}, {{3, 4}, {4}, {1}}}, {"'B' (4) is a vector"});
}

TEST(MatMulTest, ShapeErrorsNameBothShapes) {
  ExpectShapeError({"MatMul", {}, {{3, 4}, {5, 2}}}, {"(3,4)", "(5,2)", "inner dimension"});
  ExpectShapeError({"MatMul", {}, {{3}, {4}}}, {"(3)", "(4)"});
  ExpectShapeError({"MatMul", {}, {{2, 3, 4}, {3, 4, 5}}}, {"(2,3,4)", "(3,4,5)", "batch"});
  ExpectShapeError({"MatMul", {}, {Shape{}, {3}}}, {"()", "at least 1 dim"});
}

TEST(MatMulTest, GradientOfOneOperandOnly) {
  OpCase test_case{"MatMul", {}, {{3, 4}, {2, 4, 5}}};
  std::vector<HostTensor> inputs = MakeInputs(test_case, DType::kFloat64);
  HostTensor out_grad(Shape{2, 3, 5}, DType::kFloat64);
  for (int64_t i = 0; i < out_grad.size(); ++i) out_grad.Set(i, 0.1 * static_cast<double>(i % 7));
  std::vector<HostTensor> only_a = RunBackwardRequested(test_case, inputs, out_grad, {true, false});
  std::vector<HostTensor> both = RunBackward(test_case, RunForward(test_case, inputs), {out_grad});
  EXPECT_EQ(only_a[0].Values(), both[0].Values());
  for (double value : only_a[1].Values()) EXPECT_EQ(value, kUntouched);
}

MXLITE_GPU_CASES(MatMul) {
  std::vector<OpCase> cases;
  auto add = [&](OpCase c) { cases.push_back(std::move(c)); };
  add({"MatMul", {}, {{3, 4}, {4, 5}}});
  add({"MatMul", {}, {{2, 3, 4}, {4, 5}}});
  // B without batches: the batches fold into one taller GEMM (forward, dA, and dB summed inside).
  add({"MatMul", {}, {{2, 3, 3, 4}, {4, 5}}});
  add({"MatMul", {}, {{2, 3, 4}, {1, 4, 5}}});
  add({"MatMul", {}, {{2, 3, 4}, {2, 4, 5}}});
  add({"MatMul", {}, {{2, 1, 3, 4}, {5, 4, 2}}});
  add({"MatMul", {}, {{4}, {2, 4, 3}}});
  add({"MatMul", {}, {{4}, {4}}});
  // A fused bias: added after the product, its gradient summed over the rows.
  add({"MatMul", {{"bias", "true"}}, {{2, 3, 4}, {4, 5}, {5}}});
  add({"MatMul", {{"bias", "true"}}, {{2, 1, 3, 4}, {5, 4, 2}, {1, 1, 2}}});
  return cases;
}

}  // namespace
}  // namespace mxlite::testing
