#include "graphlint/ir/Verifier.h"

#include <fmt/format.h>

#include <llvm/ADT/StringMap.h>

namespace graphlint {

std::string describeNode(const Node &n) {
  return n.name.empty() ? fmt::format("#{} ({})", n.index, n.opType) : fmt::format("'{}' ({})", n.name, n.opType);
}

static void verifyOne(const Graph &g, std::vector<VerifierIssue> &out) {
  auto issue = [&](const Node *n, std::string msg) { out.push_back({&g, n, std::move(msg)}); };

  llvm::StringMap<const Value *> defs;
  for (const auto &v : g.values()) {
    if (v->kind == Value::Kind::Missing || v->kind == Value::Kind::OuterScope || v->name.empty())
      continue;
    auto [it, inserted] = defs.try_emplace(v->name, v.get());
    if (inserted)
      continue;
    const Value *first = it->second;
    auto what = [](const Value *x) {
      if (x->producer)
        return "node " + describeNode(*x->producer);
      return std::string(x->kind == Value::Kind::Param ? "an initializer" : "a graph input");
    };
    issue(v->producer, fmt::format("'{}' is defined twice, by {} and by {} (graphs must be in SSA form)", v->name,
                                   what(first), what(v.get())));
  }

  unsigned cycleNodes = 0;
  const Node *firstCycle = nullptr;
  std::string cycleNames;
  for (const auto &n : g.nodes()) {
    bool late = false;
    for (unsigned i = 0; i < n->inputs.size(); ++i) {
      const Value *v = n->inputs[i];
      if (!v)
        continue;
      if (v->kind == Value::Kind::Missing)
        issue(n.get(), fmt::format("input {} '{}' of node {} is not produced by any node, graph input or "
                                   "initializer in scope (dangling input)",
                                   i, v->name, describeNode(*n)));
      else if (v->kind == Value::Kind::NodeOutput && v->producer && v->producer->graph == &g &&
               v->producer->index >= n->index)
        late = true;
    }
    if (late) {
      if (!firstCycle)
        firstCycle = n.get();
      if (cycleNodes < 5)
        cycleNames += (cycleNodes ? ", " : "") + describeNode(*n);
      ++cycleNodes;
    }
  }
  if (cycleNodes)
    issue(firstCycle, fmt::format("the graph has a cycle through {} node(s): {}{}", cycleNodes, cycleNames,
                                  cycleNodes > 5 ? ", ..." : ""));
  for (const Value *v : g.outputs)
    if (v->kind == Value::Kind::Missing)
      issue(nullptr, fmt::format("graph output '{}' is not produced by any node, input or initializer", v->name));
}

std::vector<VerifierIssue> verifyGraph(const Graph &g) {
  std::vector<VerifierIssue> out;
  forEachGraph(g, [&](const Graph &sg) { verifyOne(sg, out); });
  return out;
}

}  // namespace graphlint
