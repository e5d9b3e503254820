#include "graphlint/ir/Verifier.h"
#include "graphlint/ir/Display.h"

#include <fmt/format.h>

#include <llvm/ADT/StringMap.h>

#include <algorithm>

namespace graphlint {

std::string describeNode(const Node &n) {
  return n.name.empty() ? fmt::format("{} ({})", nodeNumber(n.index), n.opType) : fmt::format("'{}' ({})", n.name, n.opType);
}

// Strongly connected components of the node graph that contain a cycle, each
// sorted by node index, in the order of their first node. Iterative Tarjan, so
// a million-node graph does not exhaust the stack.
static std::vector<std::vector<const Node *>> cyclesOf(const Graph &g) {
  const auto nodes = g.nodes();
  const unsigned n = static_cast<unsigned>(nodes.size());
  std::vector<std::vector<unsigned>> succ(n);
  bool anyLate = false;
  for (unsigned i = 0; i < n; ++i)
    for (const Value *v : nodes[i]->inputs) {
      if (!v || v->kind != Value::Kind::NodeOutput || !v->producer || v->producer->graph != &g)
        continue;
      unsigned p = v->producer->index;
      if (p >= n || nodes[p].get() != v->producer)
        continue;  // stale index: not a node of this graph's order
      succ[p].push_back(i);
      anyLate |= p >= i;
    }
  std::vector<std::vector<const Node *>> out;
  if (!anyLate)
    return out;  // every edge goes forward: no cycle
  constexpr unsigned kUnvisited = ~0u;
  std::vector<unsigned> index(n, kUnvisited), low(n, 0), stack;
  std::vector<bool> onStack(n, false);
  std::vector<std::pair<unsigned, unsigned>> work;  // (node, next successor)
  unsigned counter = 0;
  for (unsigned root = 0; root < n; ++root) {
    if (index[root] != kUnvisited)
      continue;
    work.push_back({root, 0});
    while (!work.empty()) {
      auto &[v, next] = work.back();
      if (next == 0 && index[v] == kUnvisited) {
        index[v] = low[v] = counter++;
        stack.push_back(v);
        onStack[v] = true;
      }
      if (next < succ[v].size()) {
        unsigned w = succ[v][next++];
        if (index[w] == kUnvisited)
          work.push_back({w, 0});
        else if (onStack[w])
          low[v] = std::min(low[v], index[w]);
        continue;
      }
      unsigned done = v;
      work.pop_back();
      if (!work.empty())
        low[work.back().first] = std::min(low[work.back().first], low[done]);
      if (low[done] != index[done])
        continue;
      std::vector<unsigned> members;
      unsigned w;
      do {
        w = stack.back();
        stack.pop_back();
        onStack[w] = false;
        members.push_back(w);
      } while (w != done);
      bool selfLoop = std::find(succ[done].begin(), succ[done].end(), done) != succ[done].end();
      if (members.size() < 2 && !selfLoop)
        continue;
      std::sort(members.begin(), members.end());
      std::vector<const Node *> scc;
      for (unsigned m : members)
        scc.push_back(nodes[m].get());
      out.push_back(std::move(scc));
    }
  }
  std::sort(out.begin(), out.end(), [](const auto &a, const auto &b) { return a.front()->index < b.front()->index; });
  return out;
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

  for (const auto &n : g.nodes())
    for (unsigned i = 0; i < n->inputs.size(); ++i) {
      const Value *v = n->inputs[i];
      if (v && v->kind == Value::Kind::Missing)
        issue(n.get(), fmt::format("input {} '{}' of node {} is not produced by any node, graph input or "
                                   "initializer in scope (dangling input)",
                                   i, v->name, describeNode(*n)));
    }
  // One issue per cycle (strongly connected component), naming its members:
  // the nodes a user has to look at, not just where the order broke.
  for (const auto &scc : cyclesOf(g)) {
    std::string names;
    for (size_t k = 0; k < scc.size() && k < 5; ++k)
      names += (k ? ", " : "") + describeNode(*scc[k]);
    issue(scc.front(), fmt::format("the graph has a cycle through {} node(s): {}{}", scc.size(), names,
                                   scc.size() > 5 ? ", ..." : ""));
  }
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
