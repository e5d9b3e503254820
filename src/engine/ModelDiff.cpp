#include "graphlint/engine/ModelDiff.h"

#include "DiffSides.h"

#include "graphlint/engine/Grouping.h"
#include "graphlint/ir/Display.h"
#include "graphlint/ir/MessageText.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <thread>

namespace graphlint {

std::optional<double> MetricDelta::deltaPercent() const {
  if (!base || !head || *base == 0)
    return std::nullopt;
  return 100.0 * (*head - *base) / std::fabs(*base);
}

bool MetricDelta::changed() const {
  if (base.has_value() != head.has_value())
    return true;
  double scale = std::max(std::fabs(*base), std::fabs(*head));
  return std::fabs(*head - *base) > 1e-9 * scale;
}

bool DiffPlace::operator<(const DiffPlace &o) const {
  // One place per source line: the module is what the line runs in, not part of where.
  return std::tie(file, line, baseSide, source) < std::tie(o.file, o.line, o.baseSide, o.source);
}

std::string_view nodeChangeKindName(NodeChange::Kind k) {
  switch (k) {
  case NodeChange::Kind::Added: return "added";
  case NodeChange::Kind::Removed: return "removed";
  case NodeChange::Kind::Changed: return "changed";
  }
  return "changed";
}

std::string_view fusionChangeKindName(FusionChange::Kind k) {
  switch (k) {
  case FusionChange::Kind::Split: return "split";
  case FusionChange::Kind::Merged: return "merged";
  case FusionChange::Kind::Added: return "added";
  case FusionChange::Kind::Removed: return "removed";
  case FusionChange::Kind::Kernels: return "kernels";
  }
  return "split";
}

bool ModelDiff::empty() const {
  return newFindings.empty() && fixedFindings.empty() && changes.empty() && propagatedChanges == 0 &&
         fusion.empty() && params.empty() && attribution.empty() &&
         std::none_of(metrics.begin(), metrics.end(), [](const MetricDelta &m) { return m.changed(); });
}

std::string formatMetricValue(const MetricDelta &m, double v) {
  if (m.bytes)
    return formatBytes(v);
  if (m.name == "mfu")
    return fmt::format("{:.1f}%", 100 * v);
  if (llvm::StringRef(m.name).endswith("_s"))
    return fmt::format("{:.4g} s", v);
  if (std::fabs(v) >= 1e15)
    return fmt::format("{:.3g}", v);
  return fmt::format("{:.0f}", v);
}

std::string signedMetricValue(const MetricDelta &m, double delta) {
  std::string v = formatMetricValue(m, delta);
  return delta > 0 ? "+" + v : v;
}

namespace {

using namespace diffing;

struct Side {
  std::unique_ptr<Model> model;
  FileReport report;
  SideFacts facts;
  std::string error;
};

void lintSide(const std::string &path, const LintOptions &opts, Side &s) {
  auto model = importModelFile(path, importOptionsFor(opts));
  if (!model) {
    s.error = oneLine(path) + ": error: " + oneLine(llvm::toString(model.takeError()));
    return;
  }
  s.model = std::move(*model);
  LintOptions o = opts;
  o.fusionSummary = o.costSummary = o.memorySummary = true;
  o.withAnalyses = [&](const Model &m, AnalysisContext &ctx) { collectFacts(m, ctx, s.facts); };
  s.report = lintModel(*s.model, o);
}

std::string typesOf(const Node &n) {
  std::string out;
  for (const Value *v : n.outputs)
    out += (v ? v->type.str() : std::string("-")) + ",";
  return out;
}

std::string attrsOf(const Node &n) {
  std::vector<std::string> parts;
  for (const Attribute &a : n.attributes)
    parts.push_back(a.name + "=" + a.str());
  std::sort(parts.begin(), parts.end());
  std::string out;
  for (const std::string &p : parts)
    out += p + ";";
  return out;
}

// The comparison of two nodes the alignment matched. `rewired`: an input
// comes from a node, parameter or input that is not its counterpart's.
struct NodeComparison {
  bool types = false, attrs = false, rewired = false;
  bool inputTypesChanged = false;  // a type came in changed
  std::string detail;
  bool changed() const { return types || attrs || rewired; }
};

NodeComparison compareNodes(const Node &b, const Node &h, const NodeAlignment &al) {
  NodeComparison c;
  if (b.inputs.size() != h.inputs.size()) {
    c.rewired = true;
    c.detail = fmt::format("{} -> {} inputs", b.inputs.size(), h.inputs.size());
  }
  for (size_t k = 0; k < std::min(b.inputs.size(), h.inputs.size()); ++k) {
    const Value *vb = b.inputs[k], *vh = h.inputs[k];
    if (!vb || !vh) {
      c.rewired |= (vb == nullptr) != (vh == nullptr);
      continue;
    }
    if (vb->type.str() != vh->type.str())
      c.inputTypesChanged = true;
    const Node *pb = mainNodeOf(vb->producer), *ph = mainNodeOf(vh->producer);
    // An input from a node the change added (or in place of one it removed)
    // is that change's, not a rewiring of this node.
    bool explained = (ph && ph->graph == h.graph && al.headToBase[ph->index] < 0) ||
                     (pb && pb->graph == b.graph && al.baseToHead[pb->index] < 0);
    bool same = explained || (pb || ph ? pb && ph && pb->graph == b.graph && ph->graph == h.graph &&
                                             al.baseToHead[pb->index] == static_cast<int>(ph->index)
                                       : vb->kind == vh->kind && vb->name == vh->name);
    if (!same && !c.rewired) {
      c.rewired = true;
      c.detail = fmt::format("input {} comes from elsewhere", k);
    }
  }
  std::string tb = typesOf(b), th = typesOf(h);
  if (tb != th) {
    c.types = true;
    if (c.detail.empty()) {
      std::string from = b.outputs.empty() || !b.outputs[0] ? "?" : b.outputs[0]->type.str();
      std::string to = h.outputs.empty() || !h.outputs[0] ? "?" : h.outputs[0]->type.str();
      c.detail = from + " -> " + to;
    }
  }
  if (attrsOf(b) != attrsOf(h)) {
    c.attrs = true;
    if (c.detail.empty()) {
      for (const Attribute &a : h.attributes) {
        const Attribute *o = b.attr(a.name);
        if (!o || o->str() != a.str()) {
          c.detail = fmt::format("{}: {} -> {}", a.name, o ? o->str() : "-", a.str());
          break;
        }
      }
      if (c.detail.empty())
        c.detail = "attributes";
    }
  }
  return c;
}

// Findings by fingerprint: the head's surplus is new, the base's fixed.
// Of several findings with one fingerprint, the ones at nodes the change
// added or changed are taken first.
void diffFindings(ModelDiff &d, const std::vector<char> &baseTouched, const std::vector<char> &headTouched) {
  auto byPrint = [](const std::vector<Diagnostic> &ds) {
    std::map<std::string, std::vector<size_t>> m;
    for (size_t i = 0; i < ds.size(); ++i)
      m[fingerprintOf(ds[i])].push_back(i);
    return m;
  };
  auto touched = [](const Diagnostic &x, const std::vector<char> &t) {
    const Location &l = x.location;
    bool main = l.graphPath.empty() || l.graphPath == "main";
    return main && l.nodeIndex && *l.nodeIndex < t.size() && t[*l.nodeIndex];
  };
  auto surplus = [&](const std::vector<Diagnostic> &from, const std::vector<size_t> &mine, size_t others,
                     const std::vector<char> &t, std::vector<Diagnostic> &out) {
    if (mine.size() <= others)
      return;
    std::vector<size_t> order(mine);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return touched(from[a], t) > touched(from[b], t); });
    order.resize(mine.size() - others);
    std::sort(order.begin(), order.end());
    for (size_t i : order)
      out.push_back(from[i]);
  };
  auto inBase = byPrint(d.base.diagnostics), inHead = byPrint(d.head.diagnostics);
  for (const auto &[print, hs] : inHead) {
    auto it = inBase.find(print);
    size_t bs = it == inBase.end() ? 0 : it->second.size();
    d.unchangedFindings += static_cast<unsigned>(std::min(bs, hs.size()));
    surplus(d.head.diagnostics, hs, bs, headTouched, d.newFindings);
  }
  for (const auto &[print, bs] : inBase) {
    auto it = inHead.find(print);
    surplus(d.base.diagnostics, bs, it == inHead.end() ? 0 : it->second.size(), baseTouched, d.fixedFindings);
  }
  for (auto *list : {&d.newFindings, &d.fixedFindings}) {
    std::stable_sort(list->begin(), list->end(), diagnosticLess);
    groupDiagnostics(*list);
  }
}

void addChange(std::map<std::pair<int, DiffPlace>, NodeChange> &out, NodeChange::Kind kind, const DiffPlace &place,
               const Node &n, const std::string &detail) {
  NodeChange &c = out[{static_cast<int>(kind), place}];
  c.kind = kind;
  c.place = place;
  std::string op = n.qualifiedOp();
  if (std::find(c.ops.begin(), c.ops.end(), op) == c.ops.end())
    c.ops.push_back(op);
  if (c.detail.empty())
    c.detail = detail;
  ++c.count;
}

void diffParams(ModelDiff &d, const Model &base, const Model &head, const PlaceMap &places) {
  auto paramsOf = [](const Model &m) {
    std::map<std::string, const Value *> out;
    for (const auto &p : m.graph->params())
      out[p->value->name] = p->value;
    return out;
  };
  auto placeOfParam = [](const Value *v, auto &&placeOfNode) {
    int first = -1;
    for (const Use &u : v->uses) {
      const Node *n = mainNodeOf(u.user);
      if (n && n->graph && !n->graph->parentNode && (first < 0 || static_cast<int>(n->index) < first))
        first = static_cast<int>(n->index);
    }
    DiffPlace p;
    if (first >= 0)
      p = placeOfNode(static_cast<unsigned>(first));
    else
      p.source = v->name;
    return p;
  };
  auto headPlace = [&](unsigned j) { return places.head(j); };
  auto basePlace = [&](unsigned i) { return places.base(i); };
  // One entry per kind, parameter name with layer indices folded and
  // change: 80 layers' q_proj weights cast to bf16 are one line.
  std::map<std::tuple<int, std::string, std::string>, ParamChange> out;
  auto add = [&](ParamChange::Kind kind, const std::string &name, const std::string &detail, DiffPlace place) {
    auto [it, fresh] = out.try_emplace({static_cast<int>(kind), moduleTemplate(name), detail},
                                       ParamChange{kind, name, detail, std::move(place), 0});
    ++it->second.count;
  };
  auto pb = paramsOf(base), ph = paramsOf(head);
  for (const auto &[name, v] : ph) {
    auto it = pb.find(name);
    if (it == pb.end())
      add(ParamChange::Kind::Added, name, v->type.str(), placeOfParam(v, headPlace));
    else if (it->second->type.str() != v->type.str())
      add(ParamChange::Kind::Changed, name, it->second->type.str() + " -> " + v->type.str(),
          placeOfParam(v, headPlace));
  }
  for (const auto &[name, v] : pb)
    if (!ph.count(name))
      add(ParamChange::Kind::Removed, name, v->type.str(), placeOfParam(v, basePlace));
  for (auto &[key, p] : out) {
    if (p.count > 1)
      p.name = std::get<1>(key);
    d.params.push_back(std::move(p));
  }
}

void diffMetrics(ModelDiff &d) {
  std::vector<MetricValue> b = reportMetrics(d.base), h = reportMetrics(d.head);
  for (const MetricValue &v : b)
    d.metrics.push_back({v.name, v.value, std::nullopt, v.sense, v.bytes});
  for (const MetricValue &v : h) {
    auto it = std::find_if(d.metrics.begin(), d.metrics.end(), [&](const MetricDelta &m) { return m.name == v.name; });
    if (it != d.metrics.end())
      it->head = v.value;
    else
      d.metrics.push_back({v.name, std::nullopt, v.value, v.sense, v.bytes});
  }
}

}  // namespace

std::string_view paramChangeKindName(ParamChange::Kind k) {
  switch (k) {
  case ParamChange::Kind::Added: return "added";
  case ParamChange::Kind::Removed: return "removed";
  case ParamChange::Kind::Changed: return "changed";
  }
  return "changed";
}

llvm::Expected<ModelDiff> diffModelFiles(const std::string &basePath, const std::string &headPath,
                                         const LintOptions &baseOpts, const LintOptions &headOpts) {
  Side base, head;
  {
    std::thread other([&] { lintSide(basePath, baseOpts, base); });
    lintSide(headPath, headOpts, head);
    other.join();
  }
  for (Side *s : {&base, &head})
    if (!s->error.empty())
      return llvm::createStringError(llvm::inconvertibleErrorCode(), s->error);
  ModelDiff d;
  const Graph &bg = *base.model->graph, &hg = *head.model->graph;
  NodeAlignment al = alignGraphs(bg, hg);
  PlaceMap places(bg, hg, al);
  d.baseNodes = static_cast<unsigned>(bg.nodes().size());
  d.headNodes = static_cast<unsigned>(hg.nodes().size());
  d.matched = al.bySequence + al.byStructure;
  d.byStructure = al.byStructure;

  // Nodes: added, removed, and matched ones that differ. A difference in
  // type only, where a type came in changed, is the upstream change's.
  std::map<std::pair<int, DiffPlace>, NodeChange> changes;
  std::vector<char> baseTouched(bg.nodes().size(), 0), headTouched(hg.nodes().size(), 0);
  for (size_t j = 0; j < hg.nodes().size(); ++j) {
    const Node &h = *hg.nodes()[j];
    int i = al.headToBase[j];
    if (i < 0) {
      headTouched[j] = 1;
      addChange(changes, NodeChange::Kind::Added, places.head(j), h, "");
      continue;
    }
    NodeComparison c = compareNodes(*bg.nodes()[i], h, al);
    if (!c.changed())
      continue;
    headTouched[j] = baseTouched[i] = 1;
    if (!c.rewired && !c.attrs && c.inputTypesChanged)
      ++d.propagatedChanges;
    else
      addChange(changes, NodeChange::Kind::Changed, places.head(j), h, c.detail);
  }
  for (size_t i = 0; i < bg.nodes().size(); ++i)
    if (al.baseToHead[i] < 0) {
      baseTouched[i] = 1;
      addChange(changes, NodeChange::Kind::Removed, places.base(i), *bg.nodes()[i], "");
    }
  for (auto &[key, c] : changes)
    d.changes.push_back(std::move(c));
  diffParams(d, *base.model, *head.model, places);
  diffFusion(d, *base.model, *head.model, base.facts, head.facts, al, places);
  d.base = std::move(base.report);
  d.head = std::move(head.report);
  diffFindings(d, baseTouched, headTouched);
  diffMetrics(d);
  attributeToLines(d, base.facts, head.facts, places);
  disposeModel(std::move(base.model), baseOpts);
  disposeModel(std::move(head.model), headOpts);
  return d;
}

}  // namespace graphlint
