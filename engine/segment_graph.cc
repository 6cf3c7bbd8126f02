#include "engine/segment_graph.h"

#include <algorithm>
#include <exception>
#include <utility>

#include "core/error.h"
#include "core/logging.h"

#if MXLITE_USE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace mxlite::engine_internal {

SegmentGraph::SegmentGraph(ReplayKey key, GraphBackend& backend, std::string name)
    : key_(std::move(key)), backend_(backend), name_(std::move(name)) {}

SegmentGraph::~SegmentGraph() { DropGraph(); }

void SegmentGraph::DropGraph() {
  if (graph_ == nullptr) return;
  backend_.Destroy(graph_);
  graph_ = nullptr;
}

GraphRun SegmentGraph::Run(void* stream, const std::function<void()>& run_steps) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!refused_.empty()) return GraphRun::kRunSteps;
  std::vector<uint64_t> key = key_();
  if (key != last_key_) {
    DropGraph();
    last_key_ = std::move(key);
    ran_on_streams_.clear();
  }
  if (graph_ != nullptr) {
    backend_.Launch(graph_, stream);
    return GraphRun::kReplayed;
  }
  if (std::find(ran_on_streams_.begin(), ran_on_streams_.end(), stream) ==
      ran_on_streams_.end()) {
    ran_on_streams_.push_back(stream);
    return GraphRun::kRunSteps;
  }
  return CaptureAndLaunch(stream, run_steps);
}

GraphRun SegmentGraph::CaptureAndLaunch(void* stream, const std::function<void()>& run_steps) {
  backend_.BeginCapture(stream);
  try {
    run_steps();
  } catch (const std::exception& e) {
    backend_.AbandonCapture(stream);
    refused_ = std::string("a step failed while captured: ") + e.what();
  }
  if (refused_.empty()) {
    try {
      graph_ = backend_.EndCapture(stream);
    } catch (const std::exception& e) {
      refused_ = e.what();
    }
  }
  if (!refused_.empty()) {
    MX_LOG(INFO) << "segment '" << name_ << "' runs without a CUDA graph from now on: "
                 << refused_;
    return GraphRun::kCaptureFailed;
  }
  backend_.Launch(graph_, stream);
  return GraphRun::kCaptured;
}

std::string SegmentGraph::refusal() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return refused_;
}

// ------------------------------------------------------------------------------------------------
// The CUDA runtime's graphs
// ------------------------------------------------------------------------------------------------

#if MXLITE_USE_CUDA

namespace {

void CheckCuda(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error so the stream stays usable
  MX_THROW() << what << ": " << cudaGetErrorString(status);
}

bool IsDeviceMemory(const void* pointer) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, pointer) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
}

// A copy node replays faithfully only between device buffers: host memory it read or wrote at
// capture may hold something else, or be gone, by the time the graph runs again.
std::string CheckCopyNode(cudaGraphNode_t node) {
  cudaMemcpy3DParms copy{};
  CheckCuda(cudaGraphMemcpyNodeGetParams(node, &copy), "cudaGraphMemcpyNodeGetParams");
  if (copy.kind == cudaMemcpyDeviceToDevice) return "";
  if (copy.kind == cudaMemcpyDefault && IsDeviceMemory(copy.srcPtr.ptr) &&
      IsDeviceMemory(copy.dstPtr.ptr)) {
    return "";
  }
  return "a step copies between host and device memory";
}

// Why the captured graph cannot stand in for its steps, or "".
std::string CheckNodes(cudaGraph_t graph) {
  size_t count = 0;
  CheckCuda(cudaGraphGetNodes(graph, nullptr, &count), "cudaGraphGetNodes");
  std::vector<cudaGraphNode_t> nodes(count);
  if (count > 0) CheckCuda(cudaGraphGetNodes(graph, nodes.data(), &count), "cudaGraphGetNodes");
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type{};
    CheckCuda(cudaGraphNodeGetType(node, &type), "cudaGraphNodeGetType");
    switch (type) {
      case cudaGraphNodeTypeKernel:
      case cudaGraphNodeTypeMemset:
      case cudaGraphNodeTypeEmpty:
      case cudaGraphNodeTypeWaitEvent:
      case cudaGraphNodeTypeEventRecord:
      case cudaGraphNodeTypeMemAlloc:
      case cudaGraphNodeTypeMemFree:
        break;
      case cudaGraphNodeTypeMemcpy: {
        std::string problem = CheckCopyNode(node);
        if (!problem.empty()) return problem;
        break;
      }
      case cudaGraphNodeTypeGraph: {
        cudaGraph_t child = nullptr;
        CheckCuda(cudaGraphChildGraphNodeGetGraph(node, &child), "cudaGraphChildGraphNodeGetGraph");
        std::string problem = CheckNodes(child);
        if (!problem.empty()) return problem;
        break;
      }
      case cudaGraphNodeTypeHost:
        return "a step queues a host function";
      default:
        return "the graph holds a node of type " + std::to_string(static_cast<int>(type)) +
               " that mxlite does not replay";
    }
  }
  return "";
}

class CudaBackend final : public GraphBackend {
 public:
  void BeginCapture(void* stream) override {
    // Thread-local: the other workers' streams, copies and allocations go on undisturbed, while
    // this thread's own allocations and synchronisations fail the capture instead of slipping in.
    CheckCuda(cudaStreamBeginCapture(static_cast<cudaStream_t>(stream),
                                     cudaStreamCaptureModeThreadLocal),
              "cudaStreamBeginCapture");
  }

  void* EndCapture(void* stream) override {
    cudaGraph_t graph = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(static_cast<cudaStream_t>(stream), &graph);
    if (ended != cudaSuccess) {
      if (graph != nullptr) cudaGraphDestroy(graph);
      CheckCuda(ended, "cudaStreamEndCapture (a step did what a capture cannot hold)");
    }
    std::string problem;
    try {
      problem = CheckNodes(graph);
    } catch (...) {
      cudaGraphDestroy(graph);
      throw;
    }
    if (!problem.empty()) {
      cudaGraphDestroy(graph);
      MX_THROW() << problem;
    }
    cudaGraphExec_t ready = nullptr;
    const cudaError_t instantiated = cudaGraphInstantiate(&ready, graph, 0);
    cudaGraphDestroy(graph);
    CheckCuda(instantiated, "cudaGraphInstantiate");
    return ready;
  }

  void AbandonCapture(void* stream) noexcept override {
    cudaGraph_t graph = nullptr;
    cudaStreamEndCapture(static_cast<cudaStream_t>(stream), &graph);
    if (graph != nullptr) cudaGraphDestroy(graph);
    cudaGetLastError();
  }

  void Launch(void* graph, void* stream) override {
    CheckCuda(cudaGraphLaunch(static_cast<cudaGraphExec_t>(graph),
                              static_cast<cudaStream_t>(stream)),
              "cudaGraphLaunch");
  }

  void Destroy(void* graph) noexcept override {
    cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(graph));
  }
};

}  // namespace

GraphBackend& CudaGraphBackend() {
  static CudaBackend backend;
  return backend;
}

#else

namespace {

class NoCudaBackend final : public GraphBackend {
 public:
  void BeginCapture(void*) override { Fail(); }
  void* EndCapture(void*) override { Fail(); }
  void AbandonCapture(void*) noexcept override {}
  void Launch(void*, void*) override { Fail(); }
  void Destroy(void*) noexcept override {}

 private:
  [[noreturn]] static void Fail() { MX_THROW() << "CUDA graphs: mxlite was built without CUDA"; }
};

}  // namespace

GraphBackend& CudaGraphBackend() {
  static NoCudaBackend backend;
  return backend;
}

#endif

}  // namespace mxlite::engine_internal
