// Copies a FusionPlan into FusionSummary's plain data while the model is
// alive. Linear in the graph: one pass over the nodes (and, for DOT, their
// inputs).
#include "graphlint/ir/ValueFacts.h"
#include "graphlint/ir/Display.h"
#include "graphlint/engine/FusionSummary.h"

#include "graphlint/analyses/FusionPlan.h"

#include <llvm/ADT/DenseMap.h>

#include <algorithm>
#include <map>

namespace graphlint {

FusionSummary summariseFusion(const Model &m, const FusionPlan &plan, bool withEdges) {
  FusionSummary s;
  s.present = true;
  s.backend = std::string(fusionBackendName(plan.backend()));
  llvm::DenseMap<const Graph *, unsigned> graphIdx;
  llvm::DenseMap<const Node *, unsigned> nodeIdx;
  // Model-local function bodies are planned too; their graphs are named
  // "function:NAME" (Graph::path() says "main" for every root).
  std::string root = "main";
  auto visit = [&](const Graph &g) {
    FusionSummary::Graph sg;
    sg.path = g.path();
    if (root != "main" && llvm::StringRef(sg.path).startswith("main"))
      sg.path = root + sg.path.substr(4);
    if (g.parentGraph) {
      auto it = graphIdx.find(g.parentGraph);
      sg.parent = it == graphIdx.end() ? -1 : static_cast<int>(it->second);
    }
    if (g.parentNode) {
      auto it = nodeIdx.find(g.parentNode);
      sg.parentNode = it == nodeIdx.end() ? -1 : static_cast<int>(it->second);
      size_t colon = sg.path.rfind(':');
      sg.attribute = colon == std::string::npos ? g.name : sg.path.substr(colon + 1);
    }
    unsigned gi = static_cast<unsigned>(s.graphs.size());
    graphIdx[&g] = gi;
    s.graphs.push_back(std::move(sg));
    for (const auto &np : g.nodes()) {
      const Node &n = *np;
      nodeIdx[&n] = static_cast<unsigned>(s.nodes.size());
      s.nodes.push_back({namingOf(n), gi, plan.groupOf(n).id});
    }
  };
  forEachGraph(*m.graph, visit);
  for (const auto &f : m.functions) {
    if (!f->body)
      continue;
    root = f->body->name.empty() ? "function:" + f->name : f->body->name;
    forEachGraph(*f->body, visit);
  }

  for (const FusionGroup &grp : plan.groups()) {
    FusionSummary::Group sg;
    sg.id = grp.id;
    sg.kind = std::string(groupKindName(grp.kind));
    sg.graph = grp.graph ? graphIdx.lookup(grp.graph) : 0;
    sg.kernels = grp.kernels;
    sg.launch = grp.launch;
    sg.layoutCopies = grp.layoutCopies;
    for (const Node *n : grp.nodes)
      sg.nodes.push_back(nodeIdx.lookup(n));
    s.groups.push_back(std::move(sg));
  }
  s.kernelsPredicted = plan.kernelsPredicted();

  // (producer, consumer, value) -> boundary, to mark DOT edges.
  std::map<std::tuple<unsigned, unsigned, std::string>, unsigned> boundaryOf;
  for (const FusionBoundary &b : plan.boundaries()) {
    FusionSummary::Boundary sb;
    sb.fromGroup = b.fromGroup;
    sb.toGroup = b.toGroup;
    sb.producer = nodeIdx.lookup(b.producer);
    sb.consumer = nodeIdx.lookup(b.consumer);
    sb.value = b.value ? b.value->name : "";
    sb.reason = std::string(breakReasonName(b.reason));
    sb.breaker = isFusionBreaker(b.reason);
    sb.detail = b.detail;
    if (withEdges)
      boundaryOf.emplace(std::make_tuple(sb.producer, sb.consumer, sb.value), static_cast<unsigned>(s.boundaries.size()));
    s.boundaries.push_back(std::move(sb));
  }

  if (withEdges) {
    auto edgesOf = [&](const Graph &g) {
      for (const auto &np : g.nodes()) {
        const Node &n = *np;
        unsigned to = nodeIdx.lookup(&n);
        std::vector<const Value *> seen;
        for (const Value *v : n.inputs) {
          // Values captured from an enclosing graph lead to their producer there.
          v = captureOrigin(v);
          if (!v || v->kind != Value::Kind::NodeOutput || !v->producer ||
              std::find(seen.begin(), seen.end(), v) != seen.end())
            continue;
          seen.push_back(v);
          auto it = nodeIdx.find(v->producer);
          if (it == nodeIdx.end())
            continue;
          FusionSummary::Edge e;
          e.from = it->second;
          e.to = to;
          e.value = v->name;
          auto b = boundaryOf.find(std::make_tuple(e.from, e.to, e.value));
          if (b != boundaryOf.end())
            e.boundary = static_cast<int>(b->second);
          s.edges.push_back(std::move(e));
        }
      }
    };
    forEachGraph(*m.graph, edgesOf);
    for (const auto &f : m.functions)
      if (f->body)
        forEachGraph(*f->body, edgesOf);
  }
  return s;
}

std::vector<std::pair<std::string, unsigned>> FusionSummary::reasonCounts() const {
  std::map<std::string, std::pair<bool, unsigned>> counts;
  for (const Boundary &b : boundaries) {
    auto &c = counts[b.reason];
    c.first = b.breaker;
    ++c.second;
  }
  std::vector<std::tuple<bool, unsigned, std::string>> order;
  for (const auto &[reason, c] : counts)
    order.emplace_back(c.first, c.second, reason);
  std::sort(order.begin(), order.end(), [](const auto &a, const auto &b) {
    if (std::get<0>(a) != std::get<0>(b))
      return std::get<0>(a);  // breakers first
    if (std::get<1>(a) != std::get<1>(b))
      return std::get<1>(a) > std::get<1>(b);
    return std::get<2>(a) < std::get<2>(b);
  });
  std::vector<std::pair<std::string, unsigned>> out;
  for (const auto &[breaker, n, reason] : order)
    out.emplace_back(reason, n);
  return out;
}

}  // namespace graphlint
