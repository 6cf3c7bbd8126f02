// GraphTimer: the planner's way of running a small graph it wants to time (one node in a candidate
// layout, a block of convolutions fused or apart) without binding an executor inside planning.
//
//   GraphTimer timer(block, Context::CPU(), /*training=*/false);
//   FillArray(timer.Input("data"), Uniform{1.0}, random);   // and the parameters, as needed
//   timer.RunPass();                                         // one pass, waited for
//
// What a pass is, so that its time is what the node costs inside a network's pass:
// - each op node's state (a convolution's tuned algorithms, its packed weight) is made once, when
//   the timer is made, as an executor makes it at bind; the nodes' kernels see the versions of
//   their inputs, so what a state derives from a parameter is derived in the first pass only;
// - every op node runs as one engine operation, in graph order, reading and writing arrays of its
//   own (no memory is shared between values: the graphs are small); a bound inference pass may
//   run its operations as one recorded segment instead (MXNET_EXEC_BULK_EXEC_INFERENCE), which
//   the timer does not, so a graph of many small nodes is timed a little dearer than it runs;
// - the pass ends when the values no node reads (and in training the gradients) are written:
//   the timer waits for those only;
// - in training, after the forward, the backward of every op node in reverse order, from output
//   gradients of ones to the gradient of each op input that has one and is not a parameter (the
//   data input's gradient is what the pass ends with); parameters and auxiliary states get none.
//   Training passes time chains: a value read by two nodes (whose gradient would need a sum) is
//   refused with an error naming it.
// The graph is run as given: no fusion, no layout planning (callers apply the fusion passes they
// want timed, scheduler/graph/fusion.h). Its input variables must carry their shapes.
//
// Errors of shape inference, of an op's state or of a kernel propagate (RunPass rethrows the
// kernel's error). Thread safety: one thread uses a timer at a time.
#pragma once

#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/context.h"
#include "engine/ndarray.h"
#include "ops/operator.h"
#include "scheduler/graph/graph.h"

namespace mxlite {

class GraphTimer {
 public:
  GraphTimer(const Graph& graph, const Context& ctx, bool training);
  ~GraphTimer();  // waits for what it pushed
  GraphTimer(const GraphTimer&) = delete;
  GraphTimer& operator=(const GraphTimer&) = delete;

  // The array of variable `name` (an input, a parameter or an auxiliary state), to fill before
  // timing; an error naming it when the graph has no such variable.
  NDArray Variable(const std::string& name) const;
  // The arrays of the graph's input variables.
  std::vector<NDArray> Inputs() const;
  // The arrays of every variable (inputs, parameters, auxiliary states), in graph order.
  const std::vector<NDArray>& Variables() const { return variable_arrays_; }

  // One pass (see the header comment), returning when its last operation has completed; the
  // first error of a kernel is rethrown after every operation of the pass has ended.
  void RunPass();

  // What the last pass computed: the graph's output `index`, and in training the gradient of the
  // input variable `name`.
  NDArray Output(int index) const;
  NDArray InputGradient(const std::string& name) const;

 private:
  struct OpNode {
    int id = -1;
    const ForwardKernel* forward = nullptr;
    const BackwardKernel* backward = nullptr;  // training only
    std::shared_ptr<const Node> node;
    std::shared_ptr<OpState> state;
    std::shared_ptr<std::mt19937_64> random;
    std::shared_ptr<TempSpace> temp;
    std::vector<NDArray> inputs, outputs;
    std::vector<NDArray> output_grads;  // training: ones for visible outputs, empty for hidden
    std::vector<NDArray> input_grads;   // training: empty where no gradient is taken
  };

  void MakeArrays(const Graph& graph);
  void MakeGradients(const Graph& graph);
  void PushForward(const OpNode& op) const;
  void PushBackward(const OpNode& op) const;
  void WaitForAll();

  Context ctx_;
  bool training_ = false;
  std::vector<OpNode> ops_;               // in graph order
  std::vector<NDArray> variable_arrays_;  // in graph order
  std::vector<std::string> variable_names_;
  std::vector<bool> variable_is_input_;
  std::vector<NDArray> graph_outputs_;
  std::map<std::string, NDArray> input_gradients_;
  std::vector<NDArray> waited_;  // what RunPass waits for: the values that end a pass
};

}  // namespace mxlite
