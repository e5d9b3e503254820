// The fusion planner's seam between the greedy grouping (FusionPlan.cpp),
// which knows nothing about any compiler, and one legality model per backend
// family (InductorFusion.cpp, InductorCpuFusion.cpp, TensorRtFusion.cpp,
// OrtFusion.cpp, EagerFusion.cpp). The planner asks the model what kind of
// group a node starts, whether a node may join a producer's group (after the
// checks every backend shares: devices, syncs, control flow, in-place writes),
// how many epilogue ops a contraction takes, and lets it rewrite the groups
// once a graph (and once the whole plan) is planned. docs/fusion.md states
// each backend's answers and how to add one. Planner-internal, not a public
// header.
#pragma once

#include "graphlint/analyses/FusionPlan.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/SmallVector.h>

#include <memory>
#include <optional>
#include <vector>

namespace graphlint {

// Per-group planning state, indexed like the plan's groups.
struct FusionGroupState {
  llvm::SmallVector<unsigned, 4> deps;  // kernel groups this group reads
  const Node *lastReduction = nullptr;
  const Node *anchor = nullptr;         // the contraction a group grew from
  unsigned epilogue = 0;                // ops a contraction group absorbed
  bool closed = false;
  bool read = false;                    // another group depends on this one
  bool injective = false;               // started by a gather/slice/pad/transpose
  bool normalization = false;           // holds a ReduceMean or LayerNormalization
  // Backend-owned: set and read only by one model's hooks (ORT's epilogue
  // stage and its lone-precision-Cast head).
  unsigned stage = 0;
  bool castHead = false;
};
using GroupState = FusionGroupState;

/// The planner's working state of one graph, handed to a model's post-pass.
struct FusionDraft {
  const Graph &graph;
  std::vector<FusionGroup> &groups;
  llvm::DenseMap<const Node *, unsigned> &groupIndex;
  std::vector<GroupState> &state;

  /// Moves every node of group `from` into `into`; `from` ends empty and closed.
  void merge(unsigned into, unsigned from);
};

/// A join the planner considers: node `n` (of kind `k`) joining `group`
/// through the value `v` it reads from it.
struct FusionJoin {
  const FusionGroup &group;
  const GroupState &state;
  const Node &n;
  GroupKind k;
  const Value *v;
};

/// One backend's fusion legality. The planner calls these in a fixed order
/// (docs/fusion.md#how-groups-form); defaults are the answers most backends
/// share.
class FusionBackendModel {
public:
  virtual ~FusionBackendModel() = default;

  /// The group a node starts: the registry's kind (with the opaque list every
  /// backend shares) unless the backend lowers the op differently.
  virtual GroupKind kindOf(const Node &n) const;
  /// Kernels a node runs beyond its group's one (a function the runtime expands).
  virtual unsigned extraKernels(const Node &) const { return 0; }

  /// Inductor evaluates nothing on the host at compile time: values computed
  /// from indices alone are recomputed in every kernel reading them, aten
  /// fallbacks are never host values, and a value a library call reads is
  /// written by a kernel first. Other backends fold any op over host-known
  /// inputs when they build the engine.
  virtual bool recomputesHostValues() const { return false; }

  /// Called before the graph `g` is planned (per-graph pattern matching).
  virtual void beginGraph(const Graph &) {}
  /// The backend's own reasons to refuse a join, checked after the shared
  /// ones (device, sync, control flow, in-place, contraction prologue,
  /// shape-only producer) and before the multi-consumer check.
  virtual std::optional<BreakReason> refusal(const FusionJoin &j) const = 0;
  /// A group may export an intermediate read by another group (multi-output
  /// kernels), and siblings reading one tensor fuse horizontally.
  virtual bool multiOutputGroups() const { return false; }
  /// Pointwise ops a contraction takes as its epilogue.
  virtual unsigned maxEpilogue() const = 0;
  /// Why a consumer cannot extend a contraction group's epilogue. The
  /// default: up to maxEpilogue() pointwise ops, no index math, and a layout
  /// change ends the group.
  virtual std::optional<BreakReason> epilogueRefusal(const FusionJoin &j) const;
  /// Among a node's producers, a contraction's epilogue wins over a pointwise
  /// group (the fused kernel takes the other operand as an input).
  virtual bool epilogueFirst() const { return false; }
  /// A node that starts a group and takes no followers (data movement the
  /// backend runs as a kernel of its own).
  virtual bool runsAlone(const Node &) const { return false; }
  /// A node started a group of its own / joined the contraction group
  /// (through `via`, the value it reads from it): backend-owned state.
  virtual void started(GroupState &, const Node &) const {}
  virtual void joinedEpilogue(GroupState &, const Node &, const Value * /*via*/) const {}

  /// After a graph is planned, before ids are renumbered: pattern rewrites.
  virtual void afterGraph(FusionDraft &) const {}
  /// After the whole plan is renumbered, once per graph: launch grouping.
  virtual void afterPlan(const Graph &, std::vector<FusionGroup> &,
                         const llvm::DenseMap<const Node *, unsigned> &) const {}
};

/// The model of one `--backend` profile.
std::unique_ptr<FusionBackendModel> makeFusionBackendModel(FusionBackend b);
// One per backend family, in the family's file.
std::unique_ptr<FusionBackendModel> makeInductorModel();
std::unique_ptr<FusionBackendModel> makeInductorCpuModel();
std::unique_ptr<FusionBackendModel> makeTensorRtModel();
std::unique_ptr<FusionBackendModel> makeOrtModel(bool cudaEp);
std::unique_ptr<FusionBackendModel> makeEagerModel();

namespace fusion_detail {

// Op facts more than one backend's model reads.
GroupKind registryGroupKind(const Node &n);  // the registry's kind, the shared opaque list first
bool isFloatCast(const Node &n);             // a Cast/CastLike between two floating dtypes
bool isNoopCast(const Node &n);              // a Cast to the dtype it reads (or an inference Dropout)
bool isLayoutChange(const Node &n);          // Transpose, DepthToSpace, SpaceToDepth
bool isDataMovement(const Node &n);          // an injective op or a layout change
bool isWindowPool(const Node &n);            // max/average pooling over windows
bool onlyFirstOutputUsed(const Node &n);     // outputs past the first are unread
/// Another input of `n` has a floating dtype other than `v`'s.
bool mixesFloatDtypes(const Node &n, const Value *v);

}  // namespace fusion_detail
}  // namespace graphlint
