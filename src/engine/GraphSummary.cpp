// Copies a model's graphs and the cached analyses' per-node figures into
// GraphSummary's plain data while the model is alive. Linear in the graph:
// one pass to number the graphs, one over each graph's values and nodes, one
// over the schedule and one over the storages live at the peak.
#include "graphlint/engine/GraphSummary.h"

#include "graphlint/analyses/ComputeModel.h"
#include "graphlint/analyses/FusionPlan.h"
#include "graphlint/analyses/MemoryPlan.h"
#include "graphlint/ir/Display.h"

#include <llvm/ADT/DenseMap.h>

#include <map>

namespace graphlint {

namespace {

// Where an IR node or value sits in the summary: graph, then node index.
struct Place {
  unsigned graph = 0, node = 0;
};

GraphSummary::Output outputOf(const Value *v) {
  GraphSummary::Output o;
  if (!v)
    return o;
  o.name = v->name;
  o.type = v->type.str();
  if (v->type.isTensor()) {
    o.dtype = std::string(dtypeShortName(v->type.dtype));
    o.shape = v->type.shape.str();
  }
  return o;
}

const char *pseudoOp(const Value &v) {
  switch (v.kind) {
  case Value::Kind::GraphInput: return "Input";
  case Value::Kind::Param: return v.param && v.param->buffer ? "Buffer" : "Param";
  case Value::Kind::OuterScope: return "Capture";
  case Value::Kind::Missing: return "Missing";
  case Value::Kind::NodeOutput: break;
  }
  return "Value";  // a node output of another graph: none in a verified IR
}

class SummaryBuilder {
public:
  SummaryBuilder(const Model &m, GraphSummary &s) : m_(m), s_(s) {}

  void build(const FusionPlan &plan) {
    // Number every graph first: a node names its bodies before they are built.
    std::vector<std::pair<const Graph *, std::string>> order;
    forEachGraph(*m_.graph, [&](const Graph &g) { order.emplace_back(&g, g.path()); });
    for (const auto &f : m_.functions) {
      if (!f->body)
        continue;
      std::string root = f->body->name.empty() ? "function:" + f->name : f->body->name;
      functionGraph_[{f->domain, f->name}] = static_cast<unsigned>(order.size());
      forEachGraph(*f->body, [&](const Graph &g) {
        std::string p = g.path();  // "main..." below an unnamed root, as FusionSummary renames it
        order.emplace_back(&g, llvm::StringRef(p).startswith("main") ? root + p.substr(4) : p);
      });
    }
    for (size_t i = 0; i < order.size(); ++i)
      graphIdx_[order[i].first] = static_cast<unsigned>(i);
    s_.graphs.resize(order.size());
    for (size_t i = 0; i < order.size(); ++i)
      addGraph(*order[i].first, std::move(order[i].second), static_cast<unsigned>(i), plan);
  }

  std::optional<Place> placeOf(const Node *n) const {
    auto it = nodePlace_.find(n);
    return it == nodePlace_.end() ? std::nullopt : std::optional<Place>(it->second);
  }
  /// The node standing for a value that is no op's output of graph `gi`:
  /// an input, a parameter, a capture.
  std::optional<Place> placeOf(const Value *v, unsigned gi) const {
    auto it = valuePlace_.find({v, gi});
    return it == valuePlace_.end() ? std::nullopt : std::optional<Place>(Place{gi, it->second});
  }
  GraphSummary::Node &at(Place p) { return s_.graphs[p.graph].nodes[p.node]; }

private:
  // A graph's inputs, parameters, and the captured or missing values its
  // nodes read, as nodes ahead of the ops.
  void addValueNode(const Value *v, unsigned gi) {
    if (!v || valuePlace_.count({v, gi}))
      return;
    if (v->kind == Value::Kind::NodeOutput && v->producer && v->producer->graph == v->graph)
      return;  // an op's output: the op is the node
    GraphSummary::Graph &sg = s_.graphs[gi];
    GraphSummary::Node sn;
    sn.kind = v->kind == Value::Kind::Param        ? GraphSummary::Node::Kind::Param
              : v->kind == Value::Kind::OuterScope ? GraphSummary::Node::Kind::Capture
                                                   : GraphSummary::Node::Kind::Input;
    sn.name = sn.label = v->name;
    sn.op = pseudoOp(*v);
    if (sn.kind == GraphSummary::Node::Kind::Param && !v->uses.empty())
      sn.module = v->uses.front().user->modulePath;
    sn.outputs.push_back(outputOf(v));
    valuePlace_[{v, gi}] = static_cast<unsigned>(sg.nodes.size());
    sg.nodes.push_back(std::move(sn));
  }

  // A joint graph's backward node has no module of its own: the module of
  // the forward value it is the gradient of, else that of its first input
  // from a backward node that has one, else that of its first input that
  // has one (a forward activation or a parameter it reads; graph order:
  // the inputs are done).
  std::string backwardModule(const Node &n, unsigned gi) const {
    for (const Value *v : n.outputGradientOf)
      if (v && v->producer && !v->producer->modulePath.empty())
        return v->producer->modulePath;
    auto moduleOf = [&](const Value *v) -> std::string {
      std::optional<Place> p = v && v->producer ? placeOf(v->producer) : placeOf(v, gi);
      return p ? s_.graphs[p->graph].nodes[p->node].module : "";
    };
    for (bool fromBackward : {true, false})
      for (const Value *v : n.inputs)
        if (v && (!fromBackward || (v->producer && v->producer->backwardPhase)))
          if (std::string m = moduleOf(v); !m.empty())
            return m;
    return "";
  }

  void addGraph(const Graph &g, std::string path, unsigned gi, const FusionPlan &plan) {
    GraphSummary::Graph &sg = s_.graphs[gi];
    sg.path = std::move(path);
    for (const Value *v : g.inputs)
      addValueNode(v, gi);
    for (const auto &p : g.params())
      addValueNode(p->value, gi);
    for (const auto &n : g.nodes())
      for (const Value *v : n->inputs)
        addValueNode(v, gi);
    for (const auto &np : g.nodes()) {
      const Node &n = *np;
      GraphSummary::Node sn;
      static_cast<NodeNaming &>(sn) = namingOf(n);
      sn.backward = n.backwardPhase;
      sn.module = n.modulePath.empty() && n.backwardPhase ? backwardModule(n, gi) : n.modulePath;
      if (n.loc.valid())
        sn.source = n.loc.file + ":" + std::to_string(n.loc.line);
      for (const Attribute &a : n.attributes)
        sn.attrs.emplace_back(a.name, a.str());
      for (const Value *v : n.inputs) {
        std::optional<GraphSummary::Edge> e;
        if (v && v->kind == Value::Kind::NodeOutput && v->producer && v->producer->graph == &g) {
          if (std::optional<Place> p = placeOf(v->producer))
            e = GraphSummary::Edge{p->node, v->resultIndex};
        } else if (std::optional<Place> p = placeOf(v, gi)) {
          e = GraphSummary::Edge{p->node, 0};
        }
        sn.inputs.push_back(e);
      }
      for (const Value *v : n.outputs)
        sn.outputs.push_back(outputOf(v));
      for (const auto &sub : n.subgraphs())
        sn.subgraphs.push_back(graphIdx_.lookup(sub.get()));
      auto fn = functionGraph_.find({n.domain, n.opType});
      if (fn != functionGraph_.end())
        sn.subgraphs.push_back(fn->second);
      sn.group = plan.groupOf(n).id;
      nodePlace_[&n] = {gi, static_cast<unsigned>(sg.nodes.size())};
      sg.nodes.push_back(std::move(sn));
    }
  }

  const Model &m_;
  GraphSummary &s_;
  llvm::DenseMap<const Graph *, unsigned> graphIdx_;
  llvm::DenseMap<const Node *, Place> nodePlace_;
  llvm::DenseMap<std::pair<const Value *, unsigned>, unsigned> valuePlace_;  // (value, graph) -> node
  std::map<std::pair<std::string, std::string>, unsigned> functionGraph_;
};

}  // namespace

GraphSummary summariseGraph(const Model &m, AnalysisContext &ctx) {
  GraphSummary s;
  if (!m.graph)
    return s;
  s.present = true;
  s.train = ctx.setup().train;
  SummaryBuilder b(m, s);
  const FusionPlan &plan = ctx.get<FusionPlan>();
  s.backend = std::string(fusionBackendName(plan.backend()));
  b.build(plan);

  // Each scheduled group's time over its nodes; a joint graph's backward
  // groups carry their own time, a forward graph's groups their synthesised
  // backward as well.
  const ComputeModel &cm = ctx.get<ComputeModel>();
  if (cm.hardware()) {
    s.target = cm.hardware()->name;
    for (size_t i = 0; i < cm.schedule().size(); ++i) {
      const GroupCost &g = cm.groups()[cm.schedule()[i]];
      if (!g.group || !g.known)
        continue;
      bool backwardGroup = cm.joint() && i >= cm.backwardStart();
      double seconds = backwardGroup ? g.backward.seconds : g.forward.seconds + g.backward.seconds;
      std::vector<double> shares = kernelShares(*g.group);
      for (size_t k = 0; k < g.group->nodes.size(); ++k)
        if (std::optional<Place> p = b.placeOf(g.group->nodes[k])) {
          std::optional<double> &t = b.at(*p).seconds;
          t = t.value_or(0) + seconds * shares[k];
        }
    }
  }

  // The storages live at the peak, by the node that made them (parameters,
  // their gradients and optimizer state, and inputs by their value).
  const MemoryPlan &mp = ctx.get<MemoryPlan>();
  s.peakAllocatedBytes = mp.summary().peakAllocatedBytes;
  s.peakNode = mp.summary().peakNode;
  for (const MemoryPlan::Contributor &c : mp.atPeak()) {
    std::optional<Place> p = c.producer ? b.placeOf(c.producer) : b.placeOf(c.value, 0);
    if (p)
      b.at(*p).peakBytes += c.bytes;
  }
  return s;
}

}  // namespace graphlint
