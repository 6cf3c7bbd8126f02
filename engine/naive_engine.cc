// NaiveEngine: runs each op inline on the thread that makes it ready (normally the pushing
// thread), and every push returns only after its op has completed: ops run one at a time, in push
// order, with a backtrace that leads to the caller. The debugging engine and the test oracle.
#include "engine/dependency_engine.h"
#include "engine/device_streams.h"

namespace mxlite::engine_internal {

namespace {

class NaiveEngine final : public DependencyEngine {
 public:
  ~NaiveEngine() override { WaitUntilIdle(); }
  EngineType type() const override { return EngineType::kNaive; }

 protected:
  void Dispatch(OpBlock* op) override { Execute(op, streams_); }
  bool PushWaitsForCompletion() const override { return true; }

 private:
  DeviceStreams streams_;  // shared by the pushing threads; thread-safe
};

}  // namespace

std::unique_ptr<Engine> NewNaiveEngine() { return std::make_unique<NaiveEngine>(); }

}  // namespace mxlite::engine_internal
