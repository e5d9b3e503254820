// The memory plan's alloc/free trace (docs/memory.md) and the builder that
// writes it for one model under one Setup: resident model states, forward
// liveness, training's saved tensors, backward gradients and the optimizer
// step. Private to src/analyses: MemoryPlan.cpp replays it.
#pragma once

#include "graphlint/ir/Display.h"
#include "graphlint/analyses/MemoryPlan.h"

namespace graphlint {
class FusionPlan;
class MeshSharding;
}

#include <fmt/format.h>

#include <string>
#include <vector>

namespace graphlint::memory {

using graphlint::nodeLabel;

/// The alloc/free trace: storages, events, and step marks.
class Trace {
public:
  struct Storage {
    uint64_t bytes = 0;
    MemoryKind kind = MemoryKind::Activation;
    const Value *value = nullptr;
    bool live = false;
    /// The node a value-less storage belongs to (state an op saves for
    /// backward beyond its tensors, e.g. BatchNorm's batch statistics).
    const Node *owner = nullptr;
  };
  struct Step {
    const Node *node = nullptr;  // null: the optimizer step
    MemoryPhase phase;
    bool recompute = false;      // the node's forward run again in the backward
    std::string text;            // a step of no node ("reduce_scatter bucket 3")
    /// "mm_3", "mm_3 (recompute)", "optimizer.step": made only for the
    /// points a summary keeps (a 70B graph has 40,000 steps).
    std::string label() const {
      if (!text.empty())
        return text;
      if (!node)
        return "optimizer.step";
      return recompute ? nodeLabel(*node) + " (recompute)" : nodeLabel(*node);
    }
  };
  enum class Op : uint8_t { Alloc, Free, Mark };
  struct Event {
    Op op;
    uint32_t id;  // storage, or step for Mark
  };

  uint32_t alloc(uint64_t bytes, MemoryKind kind, const Value *v, const Node *owner = nullptr) {
    auto id = static_cast<uint32_t>(storages.size());
    storages.push_back({bytes, kind, v, true, owner});
    events.push_back({Op::Alloc, id});
    return id;
  }
  void release(uint32_t id) {
    if (id < storages.size() && storages[id].live) {
      storages[id].live = false;
      events.push_back({Op::Free, id});
    }
  }
  void mark(const Node *n, MemoryPhase phase, bool recompute = false) {
    events.push_back({Op::Mark, static_cast<uint32_t>(steps.size())});
    steps.push_back({n, phase, recompute, {}});
  }
  /// A step of no node, with its label.
  void mark(std::string label, MemoryPhase phase) {
    events.push_back({Op::Mark, static_cast<uint32_t>(steps.size())});
    steps.push_back({nullptr, phase, false, std::move(label)});
  }
  uint64_t liveBytes(std::initializer_list<MemoryKind> kinds) const {
    uint64_t b = 0;
    for (const Storage &s : storages)
      if (s.live && std::find(kinds.begin(), kinds.end(), s.kind) != kinds.end())
        b += s.bytes;
    return b;
  }

  std::vector<Storage> storages;
  std::vector<Event> events;
  std::vector<Step> steps;
};

/// Writes the trace of one inference pass or training step of the context's
/// model under its setup, filling the model-state fields of `sum`;
/// `sharding`: one rank's share of each value under tp/cp/ep (null: the
/// whole graph). `compiled`: the Inductor fusion plan when the setup states
/// torch.compile's execution (Setup::compiledExecution; CompiledExecution.h),
/// else null. The context supplies the facts the trace shares with other
/// analyses (the repeated layers, the recompute segments, float8's linears).
Trace buildTrace(AnalysisContext &ctx, MemorySummary &sum, const MeshSharding *sharding = nullptr,
                 const FusionPlan *compiled = nullptr);

/// The trace of the context's model under its setup, as the memory plan
/// replays it: one rank's share under tp/cp/ep, Inductor's execution when the
/// setup states it (also fills those fields of `sum`). The predicted memory
/// snapshot (MemorySnapshot.cpp) replays the same trace, so its numbers are
/// the plan's.
Trace planTrace(AnalysisContext &ctx, MemorySummary &sum);

}  // namespace graphlint::memory
