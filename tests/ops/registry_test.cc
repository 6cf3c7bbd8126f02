#include <gtest/gtest.h>

#include "core/error.h"
#include "memory/storage.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

TEST(OpRegistryTest, UnknownOpListsTheKnownOnes) {
  try {
    OpRegistry::Global().Get("Convolutoin");
    FAIL();
  } catch (const Error& error) {
    std::string message = error.what();
    EXPECT_NE(message.find("unknown op 'Convolutoin'"), std::string::npos) << message;
    EXPECT_NE(message.find("Activation"), std::string::npos) << message;
  }
}

TEST(OpRegistryTest, EveryOpIsComplete) {
  for (const std::string& name : OpRegistry::Global().Names()) {
    SCOPED_TRACE(name);
    const OpDef& op = OpRegistry::Global().Get(name);
    EXPECT_FALSE(op.doc.empty());
    EXPECT_NE(OpRegistry::Global().FindForward(name, DeviceType::kCPU), nullptr);
    for (const auto& [input, output] : op.inplace) {
      EXPECT_GE(input, 0);
      EXPECT_GE(output, 0);
    }
  }
}

TEST(OpRegistryTest, MissingKernelNamesOpAndDevice) {
  const OpDef& op = OpRegistry::Global().Get("Activation");
  if (OpRegistry::Global().FindForward("Activation", DeviceType::kGPU) != nullptr) {
    GTEST_SKIP() << "Activation has a GPU kernel in this build";
  }
  try {
    ForwardKernelFor(op, DeviceType::kGPU);
    FAIL();
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("Activation has no forward kernel for gpu"),
              std::string::npos);
  }
}

TEST(ShapeInferenceTest, MismatchNamesOpNodeInputAndBothShapes) {
  ShapeInference shapes;
  shapes.op = "Convolution";
  shapes.node = "conv3";
  shapes.input_names = {"data", "weight"};
  shapes.output_names = {"output"};
  shapes.inputs = {Shape{1, 3, 8, 8}, Shape{4, 2, 3, 3}};
  shapes.outputs.resize(1);
  try {
    shapes.AssignInput(1, Shape{4, 3, 3, 3});
    FAIL();
  } catch (const Error& error) {
    std::string message = error.what();
    EXPECT_NE(message.find("Convolution conv3: input 'weight' has shape (4,2,3,3) but (4,3,3,3) "
                           "is expected"),
              std::string::npos)
        << message;
  }
}

}  // namespace
}  // namespace mxlite

namespace mxlite {
namespace {

TEST(ScratchSpaceTest, TempSpaceGrowsToTheHighWaterMarkAndIsReused) {
  TempSpace temp(Context::CPU());
  EXPECT_EQ(temp.capacity(), 0u);
  {
    ScratchSpace scratch(Context::CPU(), nullptr, &temp);
    void* a = scratch.Get(1000);  // from the pool: the temp space is still empty
    void* b = scratch.Get(100);
    EXPECT_NE(a, b);
  }
  EXPECT_EQ(temp.capacity(), 1024u + 128u);  // both requests, 64-byte aligned
  const StorageStats before = Storage::Global().Stats(Context::CPU());
  {
    ScratchSpace scratch(Context::CPU(), nullptr, &temp);
    char* a = static_cast<char*>(scratch.Get(1000));
    char* b = static_cast<char*>(scratch.Get(100));
    EXPECT_EQ(b - a, 1024);  // carved from the temp space
  }
  const StorageStats after = Storage::Global().Stats(Context::CPU());
  EXPECT_EQ(after.hits + after.misses, before.hits + before.misses);  // no pool traffic
}

}  // namespace
}  // namespace mxlite
