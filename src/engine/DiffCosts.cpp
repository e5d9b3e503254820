#include "DiffSides.h"

#include "graphlint/analyses/ComputeModel.h"
#include "graphlint/analyses/FusionPlan.h"
#include "graphlint/analyses/MemoryPlan.h"
#include "graphlint/analyses/OpFlops.h"

#include <llvm/ADT/DenseMap.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

namespace graphlint::diffing {

void collectFacts(const Model &m, AnalysisContext &ctx, SideFacts &f) {
  const Graph &g = *m.graph;
  size_t n = g.nodes().size();
  f.peakBytes.assign(n, 0);
  f.flops.assign(n, 0);
  f.kernels.assign(n, 0);
  f.seconds.assign(n, 0);
  f.group.assign(n, -1);
  auto mainIndex = [&](const Node *x) -> int {
    x = mainNodeOf(x);
    return x && x->graph == &g ? static_cast<int>(x->index) : -1;
  };
  // Storages live at the peak, by the node that made them, else (parameters,
  // their gradients and optimizer state, inputs) the first node reading them.
  for (const MemoryPlan::Contributor &c : ctx.get<MemoryPlan>().atPeak()) {
    int owner = mainIndex(c.producer);
    if (owner < 0 && c.value)
      for (const Use &u : c.value->uses) {
        int reader = mainIndex(u.user);
        if (reader >= 0 && (owner < 0 || reader < owner))
          owner = reader;
      }
    (owner < 0 ? f.otherPeakBytes : f.peakBytes[owner]) += static_cast<double>(c.bytes);
  }
  const FusionPlan &plan = ctx.get<FusionPlan>();
  const ComputeModel &cm = ctx.get<ComputeModel>();
  llvm::DenseMap<unsigned, int> indexOfId;
  f.groups.resize(plan.groups().size());
  for (size_t gi = 0; gi < plan.groups().size(); ++gi) {
    const FusionGroup &fg = plan.groups()[gi];
    indexOfId[fg.id] = static_cast<int>(gi);
    if (fg.graph != &g)
      continue;
    f.groups[gi].kernels = fg.kernels;
    for (const Node *x : fg.nodes) {
      f.group[x->index] = static_cast<int>(gi);
      f.groups[gi].nodes.push_back(x->index);
    }
    if (gi >= cm.groups().size() || fg.nodes.empty())
      continue;
    // A group's cost goes to its contraction (the line users recognise), else
    // to its first node with a source line.
    const Node *anchor = nullptr;
    for (const Node *x : fg.nodes)
      if (contractionFlops(*x).value_or(0) > 0) {
        anchor = x;
        break;
      }
    for (const Node *x : fg.nodes)
      if (!anchor && x->loc.valid())
        anchor = x;
    if (!anchor)
      anchor = fg.nodes.front();
    const GroupCost &gc = cm.groups()[gi];
    f.flops[anchor->index] += gc.forward.flops + gc.backward.flops;
    f.kernels[anchor->index] += gc.forward.kernels + gc.backward.kernels;
    f.seconds[anchor->index] += gc.forward.seconds + gc.backward.seconds;
  }
  for (const FusionBoundary &b : plan.boundaries()) {
    if (!b.consumer || b.consumer->graph != &g)
      continue;
    auto from = indexOfId.find(b.fromGroup), to = indexOfId.find(b.toGroup);
    f.boundaries.push_back({from == indexOfId.end() ? -1 : from->second, to == indexOfId.end() ? -1 : to->second,
                            b.consumer->index, std::string(breakReasonName(b.reason)), b.detail,
                            isFusionBreaker(b.reason)});
  }
}

void diffFusion(ModelDiff &d, const Model &bm, const Model &hm, const SideFacts &fb, const SideFacts &fh,
                const NodeAlignment &al, const PlaceMap &places) {
  const Graph &bg = *bm.graph, &hg = *hm.graph;
  std::map<std::tuple<int, DiffPlace, std::string>, FusionChange> out;
  auto add = [&](FusionChange c) {
    auto [it, fresh] = out.try_emplace({static_cast<int>(c.kind), c.place, c.reason}, c);
    if (!fresh) {
      it->second.kernelsBase += c.kernelsBase;
      it->second.kernelsHead += c.kernelsHead;
    }
    ++it->second.count;
  };
  // The groups of the other side that a group's matched nodes are in.
  auto counterparts = [](const SideFacts::Group &g, const std::vector<int> &map, const SideFacts &other) {
    std::set<int> s;
    for (unsigned n : g.nodes)
      if (int m = map[n]; m >= 0 && other.group[m] >= 0 && other.groups[other.group[m]].kernels > 0)
        s.insert(other.group[m]);
    return s;
  };
  auto boundaryWithin = [](const SideFacts &f, const std::set<int> &groups) -> const SideFacts::Boundary * {
    const SideFacts::Boundary *found = nullptr;
    for (const SideFacts::Boundary &b : f.boundaries)
      if (groups.count(b.from) && groups.count(b.to) && (!found || (b.breaker && !found->breaker)))
        found = &b;
    return found;
  };
  auto anchorOf = [](const Graph &g, const SideFacts::Group &grp) -> unsigned {
    for (unsigned n : grp.nodes)
      if (g.nodes()[n]->loc.valid())
        return n;
    return grp.nodes.front();
  };
  auto kernelsOf = [](const SideFacts &f, const std::set<int> &s) {
    unsigned k = 0;
    for (int g : s)
      k += f.groups[g].kernels;
    return k;
  };
  // One side's groups against the other's: a group whose nodes are all gone
  // is `gone` (removed; added, seen from the head), one whose nodes now run
  // in several groups is `many` (split; merged), placed at the boundary
  // between those groups on the other side.
  struct View {
    const Graph &graph;
    const SideFacts &facts;
    const std::vector<int> &toOther;
    bool base;
  };
  View baseView{bg, fb, al.baseToHead, true}, headView{hg, fh, al.headToBase, false};
  auto placeAt = [&](FusionChange &c, const View &v, unsigned node) {
    c.place = v.base ? places.base(node) : places.head(node);
    c.op = v.graph.nodes()[node]->qualifiedOp();
  };
  auto compare = [&](const View &from, const View &to, FusionChange::Kind gone, FusionChange::Kind many) {
    for (const SideFacts::Group &g : from.facts.groups) {
      if (g.kernels == 0 || g.nodes.empty())
        continue;
      std::set<int> in = counterparts(g, from.toOther, to.facts);
      FusionChange c;
      (from.base ? c.kernelsBase : c.kernelsHead) = g.kernels;
      (from.base ? c.kernelsHead : c.kernelsBase) = kernelsOf(to.facts, in);
      if (in.empty()) {
        c.kind = gone;
        placeAt(c, from, anchorOf(from.graph, g));
      } else if (in.size() > 1) {
        c.kind = many;
        const SideFacts::Boundary *b = boundaryWithin(to.facts, in);
        placeAt(c, to, b ? b->consumer : anchorOf(to.graph, to.facts.groups[*in.begin()]));
        if (b) {
          c.reason = b->reason;
          c.detail = b->detail;
        }
      } else if (from.base && c.kernelsHead != c.kernelsBase &&
                 counterparts(to.facts.groups[*in.begin()], to.toOther, from.facts).size() == 1) {
        c.kind = FusionChange::Kind::Kernels;  // one group each way, other kernels
        placeAt(c, to, anchorOf(to.graph, to.facts.groups[*in.begin()]));
      } else {
        continue;
      }
      add(c);
    }
  };
  compare(baseView, headView, FusionChange::Kind::Removed, FusionChange::Kind::Split);
  compare(headView, baseView, FusionChange::Kind::Added, FusionChange::Kind::Merged);
  // A split and a merge at one place, for one reason, that leave the
  // kernels as they were are one group formed the other way round (a
  // schedule that ran two independent branches in the other order): no change.
  for (auto it = out.begin(); it != out.end();) {
    const auto &[kind, place, reason] = it->first;
    if (kind != static_cast<int>(FusionChange::Kind::Split)) {
      ++it;
      continue;
    }
    auto merged = out.find({static_cast<int>(FusionChange::Kind::Merged), place, reason});
    if (merged != out.end() && it->second.kernelsHead + merged->second.kernelsHead ==
                                   it->second.kernelsBase + merged->second.kernelsBase) {
      out.erase(merged);
      it = out.erase(it);
    } else {
      ++it;
    }
  }
  for (auto &[key, c] : out)
    d.fusion.push_back(std::move(c));
}

void attributeToLines(ModelDiff &d, const SideFacts &fb, const SideFacts &fh, const PlaceMap &places) {
  struct Metric {
    const char *name;
    const std::vector<double> SideFacts::*values;
    const char *total;  // the headline metric whose change this explains
  };
  static const Metric kMetrics[] = {{"peak_allocated_bytes", &SideFacts::peakBytes, "peak_allocated_bytes"},
                                    {"flops", &SideFacts::flops, "flops"},
                                    {"kernels", &SideFacts::kernels, "kernels"},
                                    {"kernel_time_s", &SideFacts::seconds, "step_time_s"}};
  constexpr size_t kPerMetric = 25;
  for (const Metric &m : kMetrics) {
    // Nothing to account for when the total did not move: a schedule that
    // only changes which tensors are live at an equal peak is no change.
    auto total = std::find_if(d.metrics.begin(), d.metrics.end(),
                              [&](const MetricDelta &x) { return x.name == m.total; });
    if (total == d.metrics.end() || !total->changed())
      continue;
    std::map<DiffPlace, std::pair<double, double>> sums;
    const std::vector<double> &bv = fb.*m.values, &hv = fh.*m.values;
    double scale = 0;
    for (size_t i = 0; i < bv.size(); ++i)
      if (bv[i] != 0) {
        sums[places.base(static_cast<unsigned>(i))].first += bv[i];
        scale = std::max(scale, std::fabs(bv[i]));
      }
    for (size_t j = 0; j < hv.size(); ++j)
      if (hv[j] != 0) {
        sums[places.head(static_cast<unsigned>(j))].second += hv[j];
        scale = std::max(scale, std::fabs(hv[j]));
      }
    if (m.values == &SideFacts::peakBytes && (fb.otherPeakBytes || fh.otherPeakBytes)) {
      DiffPlace other;
      other.source = "(no node)";
      sums[other] = {fb.otherPeakBytes, fh.otherPeakBytes};
    }
    std::vector<Attribution> found;
    for (const auto &[place, v] : sums)
      if (std::fabs(v.second - v.first) > 1e-9 * scale)
        found.push_back({place, m.name, v.first, v.second});
    std::stable_sort(found.begin(), found.end(), [](const Attribution &a, const Attribution &b) {
      return std::fabs(a.delta()) > std::fabs(b.delta());
    });
    if (found.size() > kPerMetric)
      found.resize(kPerMetric);
    d.attribution.insert(d.attribution.end(), found.begin(), found.end());
  }
}

}  // namespace graphlint::diffing
