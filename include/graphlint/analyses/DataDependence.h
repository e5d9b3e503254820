// Data dependence of values: which tensors' *contents* come from runtime data
// (graph inputs, as opposed to constants, weights and shape metadata), and
// which tensors' *dims* depend on runtime contents (NonZero, Unique, NMS and
// everything downstream of them, or a Reshape whose shape was computed from
// data). A compiler must sync with the host and specialise, recompile or
// graph-break where such values reach shape-sensitive ops; GL123 reports
// those sites, GL121 asks whether an If/Loop is decided by data. Computed once
// per model (an analysis) by one forward pass over every graph, bodies
// included (captures inherit the facts of the value they capture).
#pragma once

#include "graphlint/analyses/Analysis.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/SmallVector.h>

#include <string>
#include <string_view>
#include <map>
#include <vector>

namespace graphlint {

/// Control-flow constructs, ONNX (If/Loop/Scan) and PyTorch higher-order ops
/// (torch.cond, torch.while_loop, scan, map), which the FX frontend names
/// "higher_order::cond", "torch.ops.higher_order.cond", ...
enum class ControlFlowKind : uint8_t { None, If, Loop, Scan, Cond, WhileLoop, Other };
ControlFlowKind controlFlowKind(const Node &n);
std::string_view controlFlowKindName(ControlFlowKind k);  // "If", "Loop", "torch.cond", ...
/// The two bodies of an If (then_branch/else_branch) or a cond (true/false
/// graph); nulls when the node has no such pair.
struct BranchBodies {
  const Graph *thenBody = nullptr, *elseBody = nullptr;
  std::string thenName, elseName;
};
BranchBodies branchBodies(const Node &n);

/// How a tainted value came to be tainted.
struct Taint {
  /// The op where the dependence starts: the data-dependent-output op (shape
  /// taint), or the op that reduced data to a small value such as a scalar
  /// (content taint). Null when the value reads a runtime input directly.
  const Node *origin = nullptr;
  /// The runtime input (graph or body input) the contents come from, when no
  /// origin op narrows it down.
  const Value *source = nullptr;
  /// Ops between the origin (or source) and this value: 0 for the origin's
  /// own outputs.
  unsigned hops = 0;
};

/// A place where a data-dependent value reaches something that needs static
/// sizes; GL123 reports one per node.
struct DataDependentSite {
  enum class Kind : uint8_t {
    ShapeArgument,    // a shape/size operand (Reshape shape, TopK K, Slice ends, ...)
    DynamicConsumer,  // a kernel (not elementwise/view) whose output dims follow a data-dependent shape
    GraphOutput,      // a graph output whose dims depend on data
    UnbackedSize,     // an output sized by an unbacked symbol (u0) with no data-dependent input
  };
  Kind kind = Kind::ShapeArgument;
  const Node *node = nullptr;    // where to report
  unsigned operand = 0;          // ShapeArgument/DynamicConsumer: the operand
  const Value *value = nullptr;  // the tainted value at the site
  bool fromContents = false;     // the value's contents (not its dims) are data
  Taint taint;                   // of `value`, in the sense of fromContents
};

class DataDependence {
public:
  DataDependence(const Model &m, AnalysisContext &ctx);
  explicit DataDependence(const Model &m);

  /// Contents computed from runtime tensor contents; null when constant,
  /// weight-derived or computed from shapes only.
  const Taint *contentTaint(const Value *v) const;
  /// Dims depend on runtime tensor contents; null otherwise.
  const Taint *shapeTaint(const Value *v) const;
  /// Contents known at compile time: a Constant, or an initializer whose
  /// (small) payload was read. Fills `ints` when integral.
  static bool constantValue(const Value *v, std::vector<int64_t> *ints = nullptr);
  /// Small enough to be a size, a shape vector or a condition (a tensor of
  /// known rank with at most 64 elements): where data reduced to such a value
  /// a dependence starts, and a weight this small is a host value to the
  /// fusion planner.
  static bool isSmallValue(const Value *v);
  /// The operand positions of `n` that give sizes of its output (Reshape's
  /// shape, Expand's shape, TopK's K, Slice's starts/ends, ...).
  static llvm::SmallVector<unsigned, 3> shapeOperands(const Node &n);

  /// Every site, at most one per node, in graph-visit then node order.
  const std::vector<DataDependentSite> &sites() const { return sites_; }

private:
  void visitGraph(const Graph &g);
  void visitNode(const Node &n);
  void addSite(DataDependentSite s);
  void taintUnbackedDims(const Node &n);

  /// Unbound unbacked size symbols (torch's u0, u1: nonzero, .item()) and
  /// the op each comes from: the node its `source` names, else its first user.
  std::map<std::string, const Node *> unbacked_;
  /// Whether a fully static output shape proves the size fixed (false for a
  /// capture that records data-dependent sizes as their upper bound).
  bool trustStaticShapes_ = true;

  struct Facts {
    bool content = false, shape = false;
    Taint contentTaint, shapeTaint;
  };
  llvm::DenseMap<const Value *, Facts> facts_;
  llvm::DenseMap<const Node *, unsigned> siteOf_;
  std::vector<DataDependentSite> sites_;
};

}  // namespace graphlint
