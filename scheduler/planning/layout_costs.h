// Measured costs for the convolution planner (scheduler/planning/conv_planning.h): the time of a
// layout transform of one activation, and the time of one node (pooling, and the agnostic nodes:
// element-wise ops, BatchNorm, Concat) in a given layout, on the device that will run them. Like
// convolution timings they are measured once per device and library versions and kept across
// processes, in the planner's cost cache (scheduler/planning/cost_cache.h), so a second run
// measures nothing.
//
//   double ms = LayoutTransformMs(Shape{16, 64, 56, 56}, ActivationLayout::kNCHW,
//                                 ActivationLayout::kNHWC, DType::kFloat32, /*training=*/false,
//                                 Context::CPU()).ms;
//
// A transform is the planner's edge cost: the kernel the rewritten graph runs. On the CPU that is
// cpu::TransformLayout (ops/cpu/layout_transform.h, the kernel of the transpose and
// layout_transform ops) timed with conv::TimeCandidate on pooled buffers, 16 MiB written
// elsewhere before each run (untimed) so that the caches are as a pass leaves them: the
// destination cold and a large source partly evicted (timed hot, transforms read 1.5-2.5x under
// what the pass pays, and the planner undercharged layout changes); on a GPU (NCHW and NHWC only:
// NCHW16c is an error there) the transpose op run as a one-node graph (graph_timer.h), each run
// waited for (so a launch and a stream synchronisation are part of the cost, as they are of every
// GPU op the engine runs). In training the gradient flows back through the same edge, so the cost
// is the forward transform plus its inverse on a tensor of the same size. Equal layouts cost 0 and
// time nothing.
//
// MXNET_TUNING_DB_MODE applies as it does to convolutions (off: measured once per process; refresh:
// re-measured and overwritten). Thread safety: call from one thread at a time (timing two things
// at once would measure the contention); the DB itself is thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "ops/activation_layout.h"
#include "scheduler/graph/graph.h"

namespace mxlite {

// The transpose op's `axes` attribute of LayoutPermutation (ops/activation_layout.h), e.g.
// "(0,2,3,1)".
std::string LayoutPermutationText(ActivationLayout from, ActivationLayout to);

// A cost and how many timings it took (0: all from the tuning DB or this process's cache).
struct MeasuredMs {
  double ms = 0.0;
  int timings_run = 0;
};

// Milliseconds to transform a tensor of shape `shape` (given in layout `from`) to `to` on `ctx`
// (a CPU with the current intra-op threads, or that GPU); in training, plus the inverse transform.
MeasuredMs LayoutTransformMs(const Shape& shape, ActivationLayout from, ActivationLayout to,
                             DType dtype, bool training, const Context& ctx);

// Milliseconds of one inference pass of `graph` (its inputs given shapes) on `ctx`, as written
// ("apart") and with the inference fusions taking in every instance they can ("fused": clamps and
// residual additions into convolutions, every depthwise block whatever its size), each run by a
// GraphTimer (scheduler/planning/graph_timer.h), its inputs and parameters uniform in [-1, 1);
// the two ways' passes are timed in turn (conv::TimeInterleaved), so that a slow spell of
// the machine cannot decide between them, and on the CPU each with the caches as a network's pass
// meets it (16 MiB written elsewhere, then the inputs read back in: the weights and the tensors
// between the nodes cold, as they are in a pass). Kept in the planner's cost cache under "graph "
// + `key` (+ " caches=evicted" on the CPU, then " fused=every" / " apart"), where `key` must name
// everything that decides the time (ops, attributes, shapes, dtypes);
// both are measured again when either is missing. The planner weighs depthwise blocks with it.
struct FusedAndApartMs {
  MeasuredMs fused, apart;
};
FusedAndApartMs MeasureFusedAndApartMs(const std::string& key, const Graph& graph,
                                       const Context& ctx);

// Milliseconds of one op node on `ctx` with data inputs of `data_shapes` (in the op's order; its
// parameters and auxiliary states of the shapes the op infers from them), run as a one-node graph
// (scheduler/planning/graph_timer.h: forward; in training forward and backward with the data
// inputs' gradients). The attributes are as the node would have them (layout included). Kept in
// the planner's cost cache under "node " + op, attributes, shapes, dtype and training. Errors of
// the op propagate.
MeasuredMs MeasureNodeMs(const std::string& op_name,
                         const std::map<std::string, std::string>& attrs,
                         const std::vector<Shape>& data_shapes, DType dtype, bool training,
                         const Context& ctx);

}  // namespace mxlite
