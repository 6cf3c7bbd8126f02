// Internal to engine/: a recorded GPU segment replayed as a CUDA graph (MXNET_ENABLE_CUDA_GRAPHS).
//
// A recorded segment runs the same steps on the same buffers at every push, and at batch 1 each
// step's host work (descriptors, checks, one launch call per kernel) takes longer than its kernels
// run: a ResNet-18 pass on an H200 spent 40-60 us per convolution step for kernels of a few. So the
// work the steps queue on the worker's stream is captured once into a CUDA graph
// (cudaStreamBeginCapture, the steps, cudaStreamEndCapture), and later runs launch the graph: one
// call, no step code.
//
// When a capture holds. The pusher gives a key (Engine::NewSegment's ReplayKey), read at every run:
// a graph is replayed only under the key it was captured with. It must change whenever a step
// would queue other work (a grown workspace, a parameter a step derives something from on the
// host). Under a new key the steps run as usual once on a stream before a run on that stream
// captures: first calls tune, grow workspaces, prepare weights and create a worker's library
// handles, none of which a graph may hold. A graph captured on one worker's stream is launched on
// any worker's.
//
// When it cannot. A step that synchronises, allocates or copies from host memory while captured
// either fails (its CUDA call errors) or leaves a node a graph cannot replay faithfully (a copy
// from host memory, a host callback); the capture is then dropped, the steps run as usual in the
// same push, and the segment runs its steps from then on (the log says why, once). A failed
// capture costs time, never results.
//
// Thread safety: Run may be called from any worker; calls are serialised (pushes of one segment
// write the same vars, so the engine never overlaps them anyway).
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace mxlite::engine_internal {

// The CUDA graph calls, behind an interface so that the replay rules are tested without a GPU.
class GraphBackend {
 public:
  virtual ~GraphBackend() = default;
  // Starts capturing what the calling thread queues on `stream`.
  virtual void BeginCapture(void* stream) = 0;
  // Ends the capture and returns the graph made ready to launch; throws mxlite::Error saying why
  // when the capture failed or holds work a replay would not repeat faithfully.
  virtual void* EndCapture(void* stream) = 0;
  // Ends a capture abandoned because a step threw; leaves the stream usable.
  virtual void AbandonCapture(void* stream) noexcept = 0;
  virtual void Launch(void* graph, void* stream) = 0;
  virtual void Destroy(void* graph) noexcept = 0;
};

// The CUDA runtime's graphs (throws on use in a build without CUDA).
GraphBackend& CudaGraphBackend();

// Engine::NewSegment's SegmentReplayKey.
using ReplayKey = std::function<std::vector<uint64_t>()>;

// What SegmentGraph::Run did with one run of the segment.
enum class GraphRun {
  kRunSteps,       // nothing: the caller runs the steps (first run under a key, or refused)
  kCaptured,       // captured the steps and launched the graph
  kReplayed,       // launched the graph captured earlier
  kCaptureFailed,  // the capture was dropped; the caller runs the steps, now and from then on
};

class SegmentGraph {
 public:
  // `name` names the segment in the log line of a failed capture.
  SegmentGraph(ReplayKey key, GraphBackend& backend, std::string name);
  ~SegmentGraph();
  SegmentGraph(const SegmentGraph&) = delete;
  SegmentGraph& operator=(const SegmentGraph&) = delete;

  // Does the segment's work on `stream` through a graph, launched, or leaves it to the caller, who
  // then runs the steps as usual (kRunSteps, kCaptureFailed). `run_steps` runs every step in
  // order and throws what a step throws.
  GraphRun Run(void* stream, const std::function<void()>& run_steps);

  // Why the segment runs its steps for good ("" while it may still be captured).
  std::string refusal() const;

 private:
  void DropGraph();  // REQUIRES(mutex_)
  // Captures the steps and launches the graph; kCaptureFailed (and refused_ set) when it failed.
  GraphRun CaptureAndLaunch(void* stream, const std::function<void()>& run_steps);  // REQUIRES(mutex_)

  const ReplayKey key_;
  GraphBackend& backend_;
  const std::string name_;
  mutable std::mutex mutex_;
  std::vector<uint64_t> last_key_;  // GUARDED_BY(mutex_): the key of the last run
  // GUARDED_BY(mutex_): the streams that ran the steps under last_key_
  std::vector<void*> ran_on_streams_;
  void* graph_ = nullptr;           // GUARDED_BY(mutex_): captured under last_key_
  std::string refused_;             // GUARDED_BY(mutex_)
};

}  // namespace mxlite::engine_internal
