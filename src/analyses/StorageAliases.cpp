// Roots are resolved in one pass in execution order: a view's input is
// always visited before the view, and captures point at values of enclosing
// graphs, which forEachGraph visits first.
#include "graphlint/analyses/StorageAliases.h"

#include <algorithm>

namespace graphlint {

namespace {

// The node's position from the main graph down: indices of the enclosing
// control-flow nodes, then its own.
llvm::SmallVector<unsigned, 4> positionOf(const Node &n) {
  llvm::SmallVector<unsigned, 4> key;
  for (const Node *p = &n; p; p = p->graph ? p->graph->parentNode : nullptr)
    key.push_back(p->index);
  std::reverse(key.begin(), key.end());
  return key;
}

}  // namespace

StorageAliases::StorageAliases(const Model &m, AnalysisContext &) : StorageAliases(m) {}

StorageAliases::StorageAliases(const Model &m) {
  if (!m.graph)
    return;
  auto resolve = [&](const Value *v) { return root(v); };
  forEachGraph(*m.graph, [&](const Graph &g) {
    for (const auto &v : g.values())
      if (v->kind == Value::Kind::OuterScope && v->outer)
        root_[v.get()] = resolve(v->outer);
    for (const auto &np : g.nodes()) {
      const Node &n = *np;
      for (unsigned i = 0; i < n.outputs.size(); ++i) {
        const Value *out = n.outputs[i];
        if (!out)
          continue;
        int src = i < n.outputAliasesInput.size() ? n.outputAliasesInput[i] : -1;
        // In-place ops return their (mutated) operand: `relu_(h)` is `h`.
        if (src < 0 && n.outputAliasesInput.empty() && n.outputs.size() == 1 && n.mutatedInputs.size() == 1)
          src = static_cast<int>(n.mutatedInputs[0]);
        if (src >= 0 && static_cast<unsigned>(src) < n.inputs.size() && n.inputs[src])
          root_[out] = resolve(n.inputs[src]);
      }
      // Autograd's own writes in the backward of a --train graph (gradient
      // buffers, as_strided/copy_ of view backward) are not the user's.
      for (unsigned idx : n.mutatedInputs)
        if (!n.backwardPhase && idx < n.inputs.size() && n.inputs[idx])
          mutations_.push_back({&n, idx, n.inputs[idx], resolve(n.inputs[idx])});
    }
  });
  forEachGraph(*m.graph, [&](const Graph &g) {
    for (const auto &v : g.values())
      members_[root(v.get())].push_back(v.get());
  });
}

const Value *StorageAliases::root(const Value *v) const {
  auto it = root_.find(v);
  return it == root_.end() ? v : it->second;
}

llvm::ArrayRef<const Value *> StorageAliases::members(const Value *r) const {
  auto it = members_.find(r);
  if (it == members_.end())
    return {};
  return it->second;
}

bool StorageAliases::executesAfter(const Node &a, const Node &b) {
  auto ka = positionOf(a), kb = positionOf(b);
  for (size_t i = 0; i < ka.size() && i < kb.size(); ++i)
    if (ka[i] != kb[i])
      return ka[i] > kb[i];
  return false;  // the same node, or one nested in the other
}

bool StorageAliases::definedBefore(const Value &v, const Node &n) {
  const Value *d = v.kind == Value::Kind::OuterScope && v.outer ? v.outer : &v;
  if (d->kind != Value::Kind::NodeOutput || !d->producer)
    return true;
  return executesAfter(n, *d->producer);
}

bool StorageAliases::savedForBackward(const Value &v) {
  const Node *p = v.kind == Value::Kind::NodeOutput ? v.producer : nullptr;
  return p && v.resultIndex < p->outputSavedForBackward.size() && p->outputSavedForBackward[v.resultIndex];
}

const Node *StorageAliases::savedAfter(const Value &v) {
  const Node *p = v.kind == Value::Kind::NodeOutput ? v.producer : nullptr;
  return p && v.resultIndex < p->outputSavedAfter.size() ? p->outputSavedAfter[v.resultIndex] : nullptr;
}

}  // namespace graphlint
