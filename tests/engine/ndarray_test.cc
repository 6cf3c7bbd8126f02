// NDArray on every engine: creation, host round trips, slicing, copies, ordering through its var,
// errors, storage release, printing; GPU copies when a GPU is visible.
#include "engine/ndarray.h"

#include <gtest/gtest.h>

#include <numeric>

#include "core/build_info.h"
#include "memory/storage.h"

namespace mxlite {
namespace {

class NDArrayTest : public ::testing::TestWithParam<EngineType> {
 protected:
  void SetUp() override { engine_ = CreateEngine(GetParam()); }
  std::shared_ptr<Engine> engine_;
};

std::vector<float> Iota(int n) {
  std::vector<float> values(n);
  std::iota(values.begin(), values.end(), 0.0f);
  return values;
}

TEST_P(NDArrayTest, CreationAndHostRoundTrip) {
  NDArray a = NDArray::FromVector<float>(Iota(6), Shape{2, 3}, Context::CPU(), engine_);
  EXPECT_EQ(a.shape(), (Shape{2, 3}));
  EXPECT_EQ(a.dtype(), DType::kFloat32);
  EXPECT_EQ(a.ctx(), Context::CPU());
  EXPECT_EQ(a.size(), 6);
  EXPECT_EQ(a.bytes(), 24u);
  EXPECT_EQ(a.ToVector<float>(), Iota(6));
  EXPECT_THROW(a.ToVector<double>(), Error);
  EXPECT_THROW(NDArray::FromVector<float>(Iota(5), Shape{2, 3}, Context::CPU(), engine_), Error);
  NDArray zeros = NDArray::Zeros(Shape{4}, Context::CPU(), DType::kInt64, engine_);
  EXPECT_EQ(zeros.ToVector<int64_t>(), std::vector<int64_t>(4, 0));
  EXPECT_TRUE(NDArray().is_none());
}

TEST_P(NDArrayTest, OpsAreOrderedByTheArrayVar) {
  NDArray a = NDArray::Zeros(Shape{1000}, Context::CPU(), DType::kFloat32, engine_);
  for (int step = 1; step <= 20; ++step) {
    float* data = a.data<float>();
    engine_->PushSync(
        [data, step](RunContext) {
          for (int i = 0; i < 1000; ++i) data[i] = data[i] * 2 + static_cast<float>(step);
        },
        Context::CPU(), {}, {a.var()}, 0, "scale_add");
  }
  NDArray copy = a.CopyTo(Context::CPU());
  float expected = 0;
  for (int step = 1; step <= 20; ++step) expected = expected * 2 + static_cast<float>(step);
  std::vector<float> values = copy.ToVector<float>();
  for (float v : values) ASSERT_EQ(v, expected);
}

TEST_P(NDArrayTest, SlicesShareStorageAndVar) {
  NDArray a = NDArray::FromVector<float>(Iota(12), Shape{4, 3}, Context::CPU(), engine_);
  NDArray rows = a.Slice(1, 3);
  EXPECT_EQ(rows.shape(), (Shape{2, 3}));
  EXPECT_EQ(rows.var(), a.var());
  EXPECT_EQ(rows.ToVector<float>(), (std::vector<float>{3, 4, 5, 6, 7, 8}));
  NDArray row = rows.Slice(1, 2);
  EXPECT_EQ(row.ToVector<float>(), (std::vector<float>{6, 7, 8}));
  float* data = row.data<float>();
  engine_->PushSync([data](RunContext) { data[0] = -1; }, Context::CPU(), {}, {row.var()}, 0,
                    "write_row");
  EXPECT_EQ(a.ToVector<float>()[6], -1.0f);
  EXPECT_THROW(a.Slice(3, 5), Error);
  EXPECT_THROW(a.Slice(2, 1), Error);
  EXPECT_EQ(a.Slice(2, 2).size(), 0);
}

TEST_P(NDArrayTest, IdentityFollowsTheArrayNotItsAddress) {
  NDArray a = NDArray::FromVector<float>(Iota(12), Shape{4, 3}, Context::CPU(), engine_);
  const NDArray::Identity of_a = a.identity();
  NDArray handle_copy = a;
  EXPECT_TRUE(handle_copy.Is(of_a));
  EXPECT_TRUE(a.Slice(0, 4).Is(of_a));  // the same storage from the same first element
  EXPECT_FALSE(a.Slice(1, 3).Is(of_a));
  EXPECT_FALSE(a.Slice(1, 3).Is(a.Slice(2, 3).identity()));
  EXPECT_FALSE(a.CopyTo(Context::CPU()).Is(of_a));
  EXPECT_FALSE(NDArray().Is(of_a));
  EXPECT_FALSE(a.Is(NDArray().identity()));
  EXPECT_TRUE(NDArray().Is(NDArray().identity()));
  // Freed, then replaced by arrays of the same size (the storage pool hands the bytes out again):
  // none of them is the array the identity was taken from.
  a = NDArray();
  handle_copy = NDArray();
  engine_->WaitForAll();
  for (int i = 0; i < 50; ++i) {
    NDArray other = NDArray::FromVector<float>(Iota(12), Shape{4, 3}, Context::CPU(), engine_);
    ASSERT_FALSE(other.Is(of_a)) << "array " << i;
  }
}

TEST_P(NDArrayTest, CopiesAreIndependent) {
  NDArray a = NDArray::FromVector<int32_t>({1, 2, 3}, Shape{3}, Context::CPU(), engine_);
  NDArray b = a.CopyTo(Context::CPU());
  int32_t* data = a.data<int32_t>();
  engine_->PushSync([data](RunContext) { data[0] = 100; }, Context::CPU(), {}, {a.var()}, 0,
                    "write_a");
  EXPECT_EQ(b.ToVector<int32_t>(), (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(a.ToVector<int32_t>(), (std::vector<int32_t>{100, 2, 3}));
  NDArray wrong(Shape{4}, Context::CPU(), DType::kInt32, engine_);
  EXPECT_THROW(CopyFromTo(a, wrong), Error);
}

TEST_P(NDArrayTest, ErrorsReachTheReader) {
  NDArray a = NDArray::Zeros(Shape{2}, Context::CPU(), DType::kFloat32, engine_);
  engine_->PushSync([](RunContext) { throw Error("kernel failed"); }, Context::CPU(), {}, {a.var()},
                    0, "bad_kernel");
  NDArray b = a.CopyTo(Context::CPU());  // skipped: inherits the error
  try {
    b.ToVector<float>();
    ADD_FAILURE() << "reading a poisoned array did not throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'bad_kernel' failed: kernel failed"), std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(a.WaitToWrite());  // reported once
  EXPECT_EQ(a.ToVector<float>(), (std::vector<float>{0, 0}));
}

TEST_P(NDArrayTest, StorageIsFreedAfterPendingOps) {
  Storage::Global().ReleaseAll(Context::CPU());
  engine_->WaitForAll();
  const size_t before = Storage::Global().Stats(Context::CPU()).bytes_in_use;
  std::atomic<int> ran{0};
  {
    NDArray a(Shape{1 << 16}, Context::CPU(), DType::kFloat32, engine_);
    float* data = a.data<float>();
    for (int i = 0; i < 10; ++i) {
      engine_->PushSync(
          [data, &ran](RunContext) {
            data[0] = 1.0f;  // the storage must still be ours here
            ran.fetch_add(1);
          },
          Context::CPU(), {}, {a.var()}, 0, "late_write");
    }
  }  // the handle goes; the deletion is queued behind the writes
  engine_->WaitForAll();
  EXPECT_EQ(ran.load(), 10);
  EXPECT_EQ(Storage::Global().Stats(Context::CPU()).bytes_in_use, before);
}

TEST_P(NDArrayTest, Printing) {
  NDArray a = NDArray::FromVector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3}, Context::CPU(), engine_);
  EXPECT_EQ(a.ToString(), "NDArray (2,3) float32 @cpu(0)\n[[1, 2, 3],\n [4, 5, 6]]");
  NDArray long_axis = NDArray::FromVector<int64_t>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, Shape{10},
                                                   Context::CPU(), engine_);
  EXPECT_EQ(long_axis.ToString(), "NDArray (10) int64 @cpu(0)\n[0, 1, 2, ..., 7, 8, 9]");
  std::ostringstream out;
  out << a.Slice(1, 2);
  EXPECT_EQ(out.str(), "NDArray (1,3) float32 @cpu(0)\n[[4, 5, 6]]");
}

TEST_P(NDArrayTest, GpuRoundTripAndSlices) {
  if (VisibleGpuCount() == 0) GTEST_SKIP() << "no GPU visible: NDArray GPU copies not tested";
  NDArray host = NDArray::FromVector<float>(Iota(12), Shape{4, 3}, Context::CPU(), engine_);
  NDArray device = host.CopyTo(Context::GPU(0));
  EXPECT_EQ(device.ctx(), Context::GPU(0));
  EXPECT_EQ(device.ToVector<float>(), Iota(12));
  EXPECT_EQ(device.Slice(2, 4).ToVector<float>(), (std::vector<float>{6, 7, 8, 9, 10, 11}));
  NDArray zeros = NDArray::Zeros(Shape{5}, Context::GPU(0), DType::kFloat32, engine_);
  EXPECT_EQ(zeros.ToVector<float>(), std::vector<float>(5, 0.0f));
  NDArray back = device.CopyTo(Context::CPU());
  EXPECT_EQ(back.ToVector<float>(), Iota(12));
}

INSTANTIATE_TEST_SUITE_P(AllEngines, NDArrayTest,
                         ::testing::Values(EngineType::kNaive, EngineType::kThreaded,
                                           EngineType::kThreadedPerDevice),
                         [](const ::testing::TestParamInfo<EngineType>& info) {
                           return std::string(EngineTypeName(info.param));
                         });

}  // namespace
}  // namespace mxlite
