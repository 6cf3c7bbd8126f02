#include "scheduler/planning/graph_timer.h"

#include <exception>

#include "core/error.h"
#include "engine/engine.h"
#include "ops/tensor_fill.h"
#include "scheduler/graph/infer_shapes.h"

namespace mxlite {
namespace {

TensorView ViewOf(const NDArray& array) {
  if (array.is_none()) return TensorView{};
  return {array.data(), array.shape(), array.dtype(), array.ctx()};
}

std::vector<TensorView> ViewsOf(const std::vector<NDArray>& arrays) {
  std::vector<TensorView> views;
  views.reserve(arrays.size());
  for (const NDArray& array : arrays) views.push_back(ViewOf(array));
  return views;
}

std::vector<VarHandle> VarsOf(const std::vector<NDArray>& arrays) {
  std::vector<VarHandle> vars;
  for (const NDArray& array : arrays) {
    if (!array.is_none()) vars.push_back(array.var());
  }
  return vars;
}

// How many op inputs read each value.
std::map<NodeEntry, int> ReadersOf(const Graph& graph) {
  std::map<NodeEntry, int> readers;
  for (const Node& node : graph.nodes()) {
    for (const NodeEntry& input : node.inputs) ++readers[input];
  }
  return readers;
}

}  // namespace

GraphTimer::GraphTimer(const Graph& graph, const Context& ctx, bool training)
    : ctx_(ctx), training_(training) {
  MakeArrays(graph);
  if (training_) MakeGradients(graph);
}

void GraphTimer::MakeArrays(const Graph& graph) {
  const GraphShapes shapes = InferGraphShapes(graph);
  std::map<NodeEntry, NDArray> values;
  for (int id = 0; id < graph.num_nodes(); ++id) {
    const Node& node = graph.node(id);
    if (node.is_variable()) {
      const NDArray array(shapes.of({id, 0}), ctx_, shapes.dtype_of({id, 0}));
      values[{id, 0}] = array;
      variable_arrays_.push_back(array);
      variable_names_.push_back(node.name);
      variable_is_input_.push_back(node.role == VariableRole::kInput);
      continue;
    }
    OpNode op;
    op.id = id;
    op.node = std::make_shared<const Node>(node);
    StateRequest request{node.attrs, {},        {},       shapes.shapes[static_cast<size_t>(id)],
                         ctx_,       node.name, training_};
    for (const NodeEntry& input : node.inputs) {
      request.input_shapes.push_back(shapes.of(input));
      request.input_dtypes.push_back(shapes.dtype_of(input));
      op.inputs.push_back(values.at(input));
    }
    // Looked up now: a missing kernel is an error before anything runs.
    op.forward = &ForwardKernelFor(*node.op, ctx_.device_type);
    if (training_) op.backward = &BackwardKernelFor(*node.op, ctx_.device_type);
    op.state = CreateOpState(*node.op, request);
    if (node.op->needs_random) op.random = std::make_shared<std::mt19937_64>(42 + id);
    op.temp = std::make_shared<TempSpace>(ctx_);
    for (int index = 0; index < node.num_outputs(); ++index) {
      const NDArray output(shapes.of({id, index}), ctx_, shapes.dtype_of({id, index}));
      values[{id, index}] = output;
      op.outputs.push_back(output);
    }
    ops_.push_back(std::move(op));
  }
  for (const NodeEntry& output : graph.outputs()) graph_outputs_.push_back(values.at(output));
  // A pass has ended when the values no node reads have been written: every operation leads to
  // one of them (and an operation that failed passes its error on to them).
  const std::map<NodeEntry, int> readers = ReadersOf(graph);
  for (const OpNode& op : ops_) {
    for (int index = 0; index < static_cast<int>(op.outputs.size()); ++index) {
      if (!readers.count({op.id, index})) waited_.push_back(op.outputs[static_cast<size_t>(index)]);
    }
  }
}

void GraphTimer::MakeGradients(const Graph& graph) {
  const std::map<NodeEntry, int> readers = ReadersOf(graph);
  // The gradient of each value that takes one: op outputs and input variables.
  std::map<NodeEntry, NDArray> gradients;
  auto gradient_of = [&](NodeEntry entry, const NDArray& value) {
    auto [slot, made] = gradients.try_emplace(entry);
    if (made) slot->second = NDArray(value.shape(), ctx_, value.dtype());
    return slot->second;
  };
  for (OpNode& op : ops_) {
    const Node& node = *op.node;
    const std::vector<bool> has_gradient = InputHasGradient(*node.op, node.attrs);
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const NodeEntry input = node.inputs[i];
      const Node& source = graph.node(input.node);
      const bool takes_gradient =
          has_gradient[i] && (!source.is_variable() || source.role == VariableRole::kInput);
      op.input_grads.push_back(takes_gradient ? gradient_of(input, op.inputs[i]) : NDArray());
      if (!takes_gradient) continue;
      const int read_by = readers.at(input);
      MX_CHECK(read_by == 1) << "timing a training pass: " << graph.EntryName(input)
                             << " is read by " << read_by
                             << " nodes (a timed training graph is a chain)";
      // Every gradient is waited for: one whose reader's backward has nothing to write (a node
      // fed by parameters only) ends a chain too.
      waited_.push_back(op.input_grads.back());
      if (source.is_variable()) input_gradients_[source.name] = op.input_grads.back();
    }
  }
  for (OpNode& op : ops_) {
    const int visible = NumVisibleOutputs(*op.node->op, op.node->attrs);
    for (int index = 0; index < static_cast<int>(op.outputs.size()); ++index) {
      if (index >= visible) {
        op.output_grads.emplace_back();
        continue;
      }
      const NodeEntry entry{op.id, index};
      const bool written_by_a_reader = gradients.count(entry) > 0;
      op.output_grads.push_back(gradient_of(entry, op.outputs[static_cast<size_t>(index)]));
      // A head gradient (of a graph output, or a value no reader gives one) is ones, set once.
      if (!written_by_a_reader) {
        const TensorView view = ViewOf(op.output_grads.back());
        Engine::Get().PushSync([view](RunContext run) { FillTensor(view, 1.0, run.stream); }, ctx_,
                               {}, {op.output_grads.back().var()});
      }
    }
  }
}

NDArray GraphTimer::Variable(const std::string& name) const {
  for (size_t i = 0; i < variable_names_.size(); ++i) {
    if (variable_names_[i] == name) return variable_arrays_[i];
  }
  MX_THROW() << "the timed graph has no variable '" << name << "'";
}

std::vector<NDArray> GraphTimer::Inputs() const {
  std::vector<NDArray> inputs;
  for (size_t i = 0; i < variable_arrays_.size(); ++i) {
    if (variable_is_input_[i]) inputs.push_back(variable_arrays_[i]);
  }
  return inputs;
}

void GraphTimer::PushForward(const OpNode& op) const {
  const Node& node = *op.node;
  std::vector<VarHandle> writes = VarsOf(op.outputs);
  // Auxiliary states (BatchNorm's moving statistics) are updated by the forward in training.
  if (training_) {
    const std::vector<InputRole> roles = InputRoles(*node.op, node.attrs);
    for (size_t i = 0; i < roles.size() && i < op.inputs.size(); ++i) {
      if (roles[i] == InputRole::kAuxiliary) writes.push_back(op.inputs[i].var());
    }
  }
  std::vector<VarHandle> versioned;  // an op with state may keep what it derived from an input
  if (op.state != nullptr) versioned = VarsOf(op.inputs);
  // The operation holds what it uses (never the timer's OpNode): it may outlive a failed pass.
  Engine::Get().PushSync(
      [kernel = op.forward, node = op.node, state = op.state, random = op.random, temp = op.temp,
       versioned, training = training_, inputs = ViewsOf(op.inputs),
       outputs = ViewsOf(op.outputs)](RunContext run) {
        ScratchSpace scratch(run.ctx, run.stream, temp.get());
        OpContext op_ctx{run.ctx,      training,    run.stream, &scratch,
                         random.get(), state.get(), node->name};
        for (VarHandle var : versioned) {
          op_ctx.input_versions.push_back(Engine::Get().VarVersion(var));
        }
        (*kernel)(op_ctx, node->attrs, inputs, outputs,
                  std::vector<WriteMode>(outputs.size(), WriteMode::kWrite));
      },
      ctx_, VarsOf(op.inputs), writes, 0, node.name);
}

void GraphTimer::PushBackward(const OpNode& op) const {
  const Node& node = *op.node;
  std::vector<VarHandle> reads = VarsOf(op.output_grads);
  for (VarHandle var : VarsOf(op.inputs)) reads.push_back(var);
  for (VarHandle var : VarsOf(op.outputs)) reads.push_back(var);
  std::vector<WriteMode> req;
  for (const NDArray& grad : op.input_grads) {
    req.push_back(grad.is_none() ? WriteMode::kNull : WriteMode::kWrite);
  }
  const std::vector<VarHandle> writes = VarsOf(op.input_grads);
  if (writes.empty()) return;  // no gradient wanted through this node
  Engine::Get().PushSync(
      [kernel = op.backward, node = op.node, state = op.state, random = op.random, temp = op.temp,
       req, output_grads = ViewsOf(op.output_grads), inputs = ViewsOf(op.inputs),
       outputs = ViewsOf(op.outputs), input_grads = ViewsOf(op.input_grads)](RunContext run) {
        ScratchSpace scratch(run.ctx, run.stream, temp.get());
        OpContext op_ctx{run.ctx,      true,        run.stream, &scratch,
                         random.get(), state.get(), node->name};
        (*kernel)(op_ctx, node->attrs, output_grads, inputs, outputs, input_grads, req);
      },
      ctx_, reads, writes, 0, "backward " + node.name);
}

void GraphTimer::RunPass() {
  for (const OpNode& op : ops_) PushForward(op);
  if (training_) {
    for (auto op = ops_.rbegin(); op != ops_.rend(); ++op) PushBackward(*op);
  }
  WaitForAll();
}

// Waits for the values that end a pass (so no operation of it is left running), then rethrows
// the first error.
void GraphTimer::WaitForAll() {
  std::exception_ptr first;
  for (const NDArray& array : waited_) {
    try {
      array.WaitToRead();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

GraphTimer::~GraphTimer() {
  try {
    WaitForAll();
  } catch (...) {  // reported by the RunPass that pushed it
  }
}

NDArray GraphTimer::Output(int index) const {
  MX_CHECK(index >= 0 && index < static_cast<int>(graph_outputs_.size()))
      << "the timed graph has " << graph_outputs_.size() << " outputs, not " << index + 1;
  return graph_outputs_[static_cast<size_t>(index)];
}

NDArray GraphTimer::InputGradient(const std::string& name) const {
  const auto it = input_gradients_.find(name);
  MX_CHECK(it != input_gradients_.end()) << "the timed graph takes no gradient of '" << name
                                         << "' (gradients are of input variables, in training)";
  return it->second;
}

}  // namespace mxlite
