// Storage aliasing for graphs with in-place ops (the FX frontend's mutation
// and alias facts): which values share storage through views, which nodes
// mutate which storage, and the execution order across nested bodies that
// decides whether a read comes after a mutation. Shared by GL131 and GL132.
// ONNX graphs carry no such facts: every value is then its own root and there
// are no mutations.
#pragma once

#include "graphlint/analyses/Analysis.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/SmallVector.h>

#include <vector>

namespace graphlint {

class StorageAliases {
public:
  StorageAliases(const Model &m, AnalysisContext &ctx);
  explicit StorageAliases(const Model &m);

  struct Mutation {
    const Node *node = nullptr;
    unsigned operand = 0;          // index into node->inputs
    const Value *value = nullptr;  // the mutated operand
    const Value *root = nullptr;   // its storage root
  };

  /// The value owning `v`'s storage: `v` itself unless `v` is a view (an
  /// output that aliases an input, transitively) or a capture of another value.
  const Value *root(const Value *v) const;
  /// Every value whose root is `root` (the root included), in creation order.
  llvm::ArrayRef<const Value *> members(const Value *root) const;
  /// Every (node, operand) that writes in place, in graph-visit then node
  /// order; backward-phase nodes of a --train graph (autograd's) excluded.
  const std::vector<Mutation> &mutations() const { return mutations_; }

  /// `a` runs after `b` finished: later in the same graph, or in a body of a
  /// later node, or after the control-flow node whose body holds `b`. A node
  /// nested inside the other is neither before nor after it.
  static bool executesAfter(const Node &a, const Node &b);
  /// `v` exists (holds its current name) before `n` runs: an input, param or
  /// capture, or produced by a node that runs before `n`.
  static bool definedBefore(const Value &v, const Node &n);
  /// `v` was produced by a node whose outputSavedForBackward flag is set.
  static bool savedForBackward(const Value &v);
  /// The node after which autograd saved `v` (Node::outputSavedAfter), or
  /// null when the exporter did not record it.
  static const Node *savedAfter(const Value &v);

private:
  llvm::DenseMap<const Value *, const Value *> root_;
  llvm::DenseMap<const Value *, llvm::SmallVector<const Value *, 2>> members_;
  std::vector<Mutation> mutations_;
};

}  // namespace graphlint
