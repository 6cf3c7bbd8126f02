// The replay rules of a recorded segment's CUDA graph (engine/segment_graph.h), with a backend
// that records the calls instead of making them: the steps run once under each new key, the next
// run captures and launches, later runs launch; a new key drops the graph; a step that throws
// while captured or a capture the backend refuses leaves the steps to the caller for good.
#include "engine/segment_graph.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"

namespace mxlite::engine_internal {
namespace {

class RecordingBackend : public GraphBackend {
 public:
  void BeginCapture(void* stream) override {
    EXPECT_FALSE(capturing_);
    capturing_ = true;
    calls.push_back("begin " + Name(stream));
  }
  void* EndCapture(void* stream) override {
    EXPECT_TRUE(capturing_);
    capturing_ = false;
    calls.push_back("end " + Name(stream));
    if (!refuse_with.empty()) throw Error(refuse_with);
    ++live_graphs;
    return reinterpret_cast<void*>(static_cast<uintptr_t>(++made));
  }
  void AbandonCapture(void* stream) noexcept override {
    capturing_ = false;
    calls.push_back("abandon " + Name(stream));
  }
  void Launch(void* graph, void*) override {
    calls.push_back("launch " + std::to_string(reinterpret_cast<uintptr_t>(graph)));
  }
  void Destroy(void* graph) noexcept override {
    --live_graphs;
    calls.push_back("destroy " + std::to_string(reinterpret_cast<uintptr_t>(graph)));
  }

  std::vector<std::string> calls;
  std::string refuse_with;  // EndCapture throws this when set
  int live_graphs = 0;
  int made = 0;

 private:
  static std::string Name(void* stream) { return stream == nullptr ? "null" : "stream"; }
  bool capturing_ = false;
};

class SegmentGraphTest : public ::testing::Test {
 protected:
  GraphRun Run(SegmentGraph& graph) {
    return graph.Run(&stream_, [&] {
      ++steps_run_;
      if (!step_error_.empty()) throw Error(step_error_);
    });
  }
  ReplayKey Key() {
    return [this] { return key_; };
  }

  RecordingBackend backend_;
  int stream_ = 0;
  int steps_run_ = 0;
  std::string step_error_;
  std::vector<uint64_t> key_ = {1, 2};
};

TEST_F(SegmentGraphTest, RunsTheStepsOnceThenCapturesThenReplays) {
  SegmentGraph graph(Key(), backend_, "conv0 .. fc");
  EXPECT_EQ(Run(graph), GraphRun::kRunSteps);
  EXPECT_EQ(steps_run_, 0);  // the caller runs them
  EXPECT_TRUE(backend_.calls.empty());

  EXPECT_EQ(Run(graph), GraphRun::kCaptured);
  EXPECT_EQ(steps_run_, 1);  // inside the capture
  EXPECT_EQ(backend_.calls, (std::vector<std::string>{"begin stream", "end stream", "launch 1"}));

  backend_.calls.clear();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(Run(graph), GraphRun::kReplayed);
  EXPECT_EQ(steps_run_, 1);
  EXPECT_EQ(backend_.calls, std::vector<std::string>(3, "launch 1"));
  EXPECT_EQ(graph.refusal(), "");
}

TEST_F(SegmentGraphTest, ANewKeyDropsTheGraphAndRunsTheStepsBeforeCapturingAgain) {
  SegmentGraph graph(Key(), backend_, "segment");
  Run(graph);
  Run(graph);
  EXPECT_EQ(Run(graph), GraphRun::kReplayed);
  key_ = {1, 3};  // e.g. a weight written since
  EXPECT_EQ(Run(graph), GraphRun::kRunSteps);
  EXPECT_EQ(backend_.live_graphs, 0);
  EXPECT_EQ(Run(graph), GraphRun::kCaptured);
  EXPECT_EQ(Run(graph), GraphRun::kReplayed);
  EXPECT_EQ(backend_.calls.back(), "launch 2");
  // Back to the old key: nothing kept from it, so the steps run first again.
  key_ = {1, 2};
  EXPECT_EQ(Run(graph), GraphRun::kRunSteps);
}

// A worker whose stream has not run the steps under the key runs them before it may capture
// (its first calls create its library handles); a graph captured on one stream replays on any.
TEST_F(SegmentGraphTest, EachStreamRunsTheStepsBeforeItCaptures) {
  SegmentGraph graph(Key(), backend_, "segment");
  int other_stream = 0;
  EXPECT_EQ(Run(graph), GraphRun::kRunSteps);
  EXPECT_EQ(graph.Run(&other_stream, [] {}), GraphRun::kRunSteps);
  EXPECT_EQ(graph.Run(&other_stream, [] {}), GraphRun::kCaptured);
  EXPECT_EQ(Run(graph), GraphRun::kReplayed);
}

TEST_F(SegmentGraphTest, AStepThatFailsWhileCapturedLeavesTheStepsToTheCallerForGood) {
  SegmentGraph graph(Key(), backend_, "conv0 .. pad1");
  Run(graph);
  step_error_ = "cudaStreamSynchronize: operation not permitted when stream is capturing";
  EXPECT_EQ(Run(graph), GraphRun::kCaptureFailed);
  EXPECT_EQ(backend_.calls, (std::vector<std::string>{"begin stream", "abandon stream"}));
  EXPECT_NE(graph.refusal().find("a step failed while captured"), std::string::npos);
  EXPECT_NE(graph.refusal().find("not permitted when stream is capturing"), std::string::npos);
  step_error_.clear();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(Run(graph), GraphRun::kRunSteps);
  key_ = {9};  // not even a new key retries
  EXPECT_EQ(Run(graph), GraphRun::kRunSteps);
  EXPECT_EQ(backend_.live_graphs, 0);
}

TEST_F(SegmentGraphTest, ACaptureTheBackendRefusesIsNotLaunched) {
  SegmentGraph graph(Key(), backend_, "segment");
  Run(graph);
  backend_.refuse_with = "a step copies between host and device memory";
  EXPECT_EQ(Run(graph), GraphRun::kCaptureFailed);
  EXPECT_EQ(backend_.calls, (std::vector<std::string>{"begin stream", "end stream"}));
  EXPECT_EQ(graph.refusal(), "a step copies between host and device memory");
  EXPECT_EQ(Run(graph), GraphRun::kRunSteps);
}

TEST_F(SegmentGraphTest, DestroyingTheSegmentDestroysItsGraph) {
  {
    SegmentGraph graph(Key(), backend_, "segment");
    Run(graph);
    Run(graph);
    EXPECT_EQ(backend_.live_graphs, 1);
  }
  EXPECT_EQ(backend_.live_graphs, 0);
}

#if !MXLITE_USE_CUDA
TEST(CudaGraphBackend, WithoutCudaItSaysSo) {
  int stream = 0;
  try {
    CudaGraphBackend().BeginCapture(&stream);
    FAIL() << "a capture began without CUDA";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("built without CUDA"), std::string::npos);
  }
}
#endif

}  // namespace
}  // namespace mxlite::engine_internal
