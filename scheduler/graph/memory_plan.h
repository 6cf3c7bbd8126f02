// Memory planning: gives every internal slot of an ExecutionPlan a block of memory so that slots
// whose lifetimes do not overlap share blocks (MXNet's graph memory planner; docs/design.md, Graph,
// executor, training).
//
// Steps are taken in order (forward, then backward). A slot is live from the step that writes it
// to the last step that reads it; graph outputs stay live to the end (the user reads them).
// For each step the planner first places the slots it writes, then frees the slots it read for
// the last time, so a kernel never writes over an input it is still reading — except in place:
// when the op allows input i to share with output j (OpDef::inplace, or OpDef::inplace_with for
// its attributes, which also needs the node to read input i at no other position), input i has no
// later reader, and both have the same size, output j takes input i's block
// (MXNET_EXEC_ENABLE_INPLACE).
// Otherwise a slot takes the best-fitting free block within a factor NNVM_EXEC_MATCH_RANGE of its
// size: the smallest one at least as large, else the largest smaller one, grown; a match range of
// 0 disables sharing. External slots (inputs, parameters, states, parameter gradients) are bound
// by the user and never planned; nor are constant slots (kept across passes by the executor).
#pragma once

#include <cstddef>
#include <vector>

#include "scheduler/graph/execution_plan.h"

namespace mxlite {

struct MemoryPlanOptions {
  bool inplace = true;
  int match_range = 16;

  // From MXNET_EXEC_ENABLE_INPLACE and NNVM_EXEC_MATCH_RANGE.
  static MemoryPlanOptions FromSettings();
};

struct MemoryPlan {
  std::vector<int> slot_block;      // per slot: its block, -1 for external slots
  std::vector<size_t> block_bytes;  // per block
  size_t planned_bytes = 0;         // sum of block sizes
  size_t unplanned_bytes = 0;       // sum of planned slots' sizes (one block each)
  int inplace_count = 0;            // outputs that took their input's block
};

// `graph` supplies each step's in-place pairs.
MemoryPlan PlanMemory(const Graph& graph, const ExecutionPlan& plan,
                      const MemoryPlanOptions& options);

}  // namespace mxlite
