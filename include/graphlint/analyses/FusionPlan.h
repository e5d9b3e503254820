// The fusion planner: predicts, from the graph alone, how a fusing compiler
// groups ops into kernels, and records every boundary between groups with the
// reason fusion stops there. Computed once per model (an analysis) and read by
// the fusion-breaker rules and the reporters. The grouping is one greedy
// pass that knows no compiler; each backend profile (inductor, inductor-cpu,
// tensorrt, ort-cpu, ort-cuda, eager) answers its legality questions through
// one model (src/analyses/FusionBackendModel.h); docs/fusion.md states them.
#pragma once

#include "graphlint/analyses/Analysis.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/SmallVector.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace graphlint {

/// Why two groups are separate kernels. Names are BRIEF.md's public list.
enum class BreakReason : uint8_t {
  DtypeMismatch,
  CrossDevice,
  HostSync,
  ControlFlow,
  DataDependentShape,
  InplaceAlias,
  OpaqueOp,
  UnknownOp,
  MultiConsumer,
  GraphOutput,
  ReductionBoundary,
  LayoutChange,
};
std::string_view breakReasonName(BreakReason r);
/// Breaks are boundaries a fusing compiler would not have had without the
/// graph's construct (dtype, device, sync, control flow, ...); the rest are
/// structural (a contraction cannot absorb its producers, and so on).
bool isFusionBreaker(BreakReason r);

enum class GroupKind : uint8_t {
  Pointwise,     // pointwise/broadcast/injective ops fused into one loop nest
  Reduction,     // a reduction with its pointwise prologue and epilogue
  Contraction,   // MatMul/Gemm/Conv with its pointwise epilogue
  ShapeOnly,     // views, shape queries and constants: no kernel
  ControlFlow,   // If/Loop/Scan: its bodies are planned separately
  HostSync,      // data-dependent output (NonZero, NMS, ...): syncs with the host
  Opaque,        // a kernel of its own the backend does not fuse (TopK, RNN, copies, ...)
  Unknown,       // op without schema
  Collective,
};
std::string_view groupKindName(GroupKind k);

struct FusionGroup {
  unsigned id = 0;
  GroupKind kind = GroupKind::Pointwise;
  const Graph *graph = nullptr;
  std::vector<const Node *> nodes;  // in execution order
  unsigned kernels = 1;             // 0 for shape-only groups
  /// The kernel launch the group runs in: its own id, except on inductor-cpu,
  /// where the loop nests Inductor schedules between two library calls form
  /// one C++ function (the first group's id; the others count 0 kernels).
  unsigned launch = 0;
  /// inductor-cpu: channels-last copies of a convolution's operands
  /// (weights of k x k kernels, contiguous inputs) that Inductor adds.
  unsigned layoutCopies = 0;
};

struct FusionBoundary {
  unsigned fromGroup = 0;
  unsigned toGroup = 0;
  const Node *producer = nullptr;
  const Node *consumer = nullptr;   // the node where the next group starts
  const Value *value = nullptr;     // the tensor crossing the boundary
  BreakReason reason = BreakReason::ReductionBoundary;
  std::string detail;               // e.g. "f16 -> f32", "cpu -> cuda:0"
};

class FusionBackendModel;  // planner-internal: one backend's legality

class FusionPlan {
public:
  FusionPlan(const Model &m, AnalysisContext &ctx);
  /// The setup values the plan reads (Analysis.h, SharedFacts): the backend.
  static std::string sharedKey(const Setup &s);
  /// For tests: plan with an explicit backend.
  FusionPlan(const Model &m, FusionBackend backend);

  FusionBackend backend() const { return backend_; }
  const std::vector<FusionGroup> &groups() const { return groups_; }
  const std::vector<FusionBoundary> &boundaries() const { return boundaries_; }
  const FusionGroup &groupOf(const Node &n) const { return groups_[groupIndex_.lookup(&n)]; }
  unsigned kernelsPredicted() const;
  std::map<BreakReason, unsigned> boundariesByReason() const;
  /// Boundaries that start at `consumer` (the node the reason is about).
  std::vector<const FusionBoundary *> boundariesInto(const Node &consumer) const;

private:
  void plan(const Model &m);
  void planGraph(const Graph &g, FusionBackendModel &model);

  FusionBackend backend_;
  std::vector<FusionGroup> groups_;
  std::vector<FusionBoundary> boundaries_;
  llvm::DenseMap<const Node *, unsigned> groupIndex_;
  llvm::DenseMap<const Node *, llvm::SmallVector<unsigned, 2>> boundaryIndex_;
};

}  // namespace graphlint
