#include "scheduler/graph/memory_plan.h"

#include <algorithm>
#include <map>

#include "core/settings.h"

namespace mxlite {

MemoryPlanOptions MemoryPlanOptions::FromSettings() {
  MemoryPlanOptions options;
  options.inplace = settings().GetBool("MXNET_EXEC_ENABLE_INPLACE");
  options.match_range = static_cast<int>(settings().GetInt("NNVM_EXEC_MATCH_RANGE"));
  return options;
}

namespace {

// Free blocks by size, and the best-fit rule.
class BlockAllocator {
 public:
  BlockAllocator(int match_range, std::vector<size_t>& block_bytes)
      : match_range_(match_range), block_bytes_(block_bytes) {}

  int Request(size_t bytes) {
    if (match_range_ > 0) {
      const size_t range = static_cast<size_t>(match_range_);
      // Smallest free block that is large enough (and not wastefully large).
      auto larger = free_.lower_bound(bytes);
      if (larger != free_.end() && larger->first <= bytes * range) return Take(larger);
      // Else the largest smaller block within range, grown to fit.
      auto smaller = free_.lower_bound(bytes);
      if (smaller != free_.begin()) {
        --smaller;
        if (smaller->first * range >= bytes) {
          const int block = Take(smaller);
          block_bytes_[block] = bytes;
          return block;
        }
      }
    }
    block_bytes_.push_back(bytes);
    return static_cast<int>(block_bytes_.size()) - 1;
  }

  void Release(int block) {
    if (match_range_ > 0) free_.emplace(block_bytes_[block], block);
  }

 private:
  int Take(std::multimap<size_t, int>::iterator it) {
    const int block = it->second;
    free_.erase(it);
    return block;
  }

  int match_range_;
  std::vector<size_t>& block_bytes_;
  std::multimap<size_t, int> free_;
};

// An (input, output) pair a node's forward may run in place; `sole_read`: only when the node
// reads that input at no other position (OpDef::inplace_with).
struct InplacePair {
  int input, output;
  bool sole_read;
};

std::vector<InplacePair> InplacePairs(const Node& node) {
  std::vector<InplacePair> pairs;
  for (const auto& [input, output] : node.op->inplace) pairs.push_back({input, output, false});
  if (node.op->inplace_with) {
    for (const auto& [input, output] : node.op->inplace_with(node.attrs)) {
      pairs.push_back({input, output, true});
    }
  }
  return pairs;
}

// Whether `step` reads `slot` at more than one of its input positions.
bool ReadTwice(const Step& step, int slot) {
  return std::count(step.reads.begin(), step.reads.end(), slot) > 1;
}

}  // namespace

MemoryPlan PlanMemory(const Graph& graph, const ExecutionPlan& plan,
                      const MemoryPlanOptions& options) {
  std::vector<const Step*> steps;
  for (const Step& step : plan.forward) steps.push_back(&step);
  for (const Step& step : plan.backward) steps.push_back(&step);

  const size_t num_slots = plan.slots.size();
  std::vector<int> last_read(num_slots, -1);
  for (size_t t = 0; t < steps.size(); ++t) {
    for (int slot : steps[t]->reads) {
      if (slot >= 0) last_read[slot] = static_cast<int>(t);
    }
  }
  std::vector<bool> keep_to_end(num_slots, false);
  for (int slot : plan.output_slots) keep_to_end[slot] = true;

  MemoryPlan memory;
  memory.slot_block.assign(num_slots, -1);
  BlockAllocator allocator(options.match_range, memory.block_bytes);
  // A slot is done once its block was released or handed to an in-place output.
  std::vector<bool> slot_done(num_slots, false);

  // Head gradients are written by the executor when backward starts: place them first.
  for (int slot : plan.head_gradient_slots) {
    if (slot >= 0 && plan.slot(slot).planned()) {
      memory.slot_block[slot] = allocator.Request(plan.slot(slot).bytes());
    }
  }

  for (size_t t = 0; t < steps.size(); ++t) {
    const Step& step = *steps[t];
    const bool runs_forward = step.kind == StepKind::kForward || step.kind == StepKind::kRecompute;
    for (size_t out = 0; out < step.writes.size(); ++out) {
      const int slot = step.writes[out];
      if (slot < 0 || !plan.slot(slot).planned() || memory.slot_block[slot] >= 0) continue;
      int block = -1;
      if (options.inplace && runs_forward) {
        for (const InplacePair& pair : InplacePairs(graph.node(step.node))) {
          if (pair.output != static_cast<int>(out)) continue;
          const int source = step.reads.at(static_cast<size_t>(pair.input));
          if (source < 0 || !plan.slot(source).planned() || keep_to_end[source] ||
              slot_done[source] || last_read[source] != static_cast<int>(t) ||
              plan.slot(source).bytes() != plan.slot(slot).bytes() ||
              (pair.sole_read && ReadTwice(step, source))) {
            continue;
          }
          block = memory.slot_block[source];
          slot_done[source] = true;
          ++memory.inplace_count;
          break;
        }
      }
      memory.slot_block[slot] = block >= 0 ? block : allocator.Request(plan.slot(slot).bytes());
    }
    // Free what this step read (or wrote) for the last time.
    auto release_if_done = [&](int slot) {
      if (slot < 0 || !plan.slot(slot).planned() || keep_to_end[slot] || slot_done[slot]) return;
      if (last_read[slot] > static_cast<int>(t)) return;
      allocator.Release(memory.slot_block[slot]);
      slot_done[slot] = true;
    };
    for (int slot : step.reads) {
      if (slot >= 0 && last_read[slot] == static_cast<int>(t)) release_if_done(slot);
    }
    for (int slot : step.writes) {
      if (slot >= 0 && last_read[slot] < 0) release_if_done(slot);  // written, never read
    }
  }

  for (size_t slot = 0; slot < num_slots; ++slot) {
    if (plan.slots[slot].planned()) memory.unplanned_bytes += plan.slots[slot].bytes();
  }
  for (size_t bytes : memory.block_bytes) memory.planned_bytes += bytes;
  return memory;
}

}  // namespace mxlite
