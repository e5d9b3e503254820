// Pipeline parallelism (PipelineSchedule.h): the schedules' closed forms and
// the cut of one model into chunks.
#include "graphlint/analyses/PipelineSchedule.h"

#include "graphlint/analyses/ComputeModel.h"
#include "graphlint/analyses/MemoryPlan.h"
#include "graphlint/analyses/MeshSharding.h"
#include "graphlint/analyses/TrainableParams.h"

#include <fmt/format.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringRef.h>

#include <algorithm>
#include <limits>

namespace graphlint {

double inFlightMicrobatches(PipelineSchedule s, unsigned pp, unsigned microbatches, unsigned virtualStages,
                           unsigned rank) {
  double n = std::max(1u, microbatches), p = std::max(1u, pp), r = std::min(rank, pp ? pp - 1 : 0);
  double v = std::max(1u, virtualStages);
  switch (s) {
  case PipelineSchedule::GPipe: return n;
  case PipelineSchedule::OneFOneB: return std::min(n, p - r);
  case PipelineSchedule::Interleaved1F1B: return std::min(n * v, (p - r - 1) * 2 + (v - 1) * p + 1) / v;
  case PipelineSchedule::ZBV: return std::min(n, p);
  }
  return n;
}

double bubbleFraction(PipelineSchedule s, unsigned pp, unsigned microbatches, unsigned virtualStages,
                      double forwardSeconds, double backwardSeconds) {
  double n = std::max(1u, microbatches), p = std::max(1u, pp), v = std::max(1u, virtualStages);
  switch (s) {
  case PipelineSchedule::GPipe:
  case PipelineSchedule::OneFOneB: return (p - 1) / n;
  case PipelineSchedule::Interleaved1F1B: return (p - 1) / (v * n);
  case PipelineSchedule::ZBV: {
    double f = forwardSeconds, b = backwardSeconds / 2, w = backwardSeconds / 2;
    return f + b + w > 0 ? (p - 1) * std::max(0.0, f + b - 2 * w) / (n * (f + b + w)) : 0;
  }
  }
  return (p - 1) / n;
}

unsigned chunkRank(PipelineSchedule s, unsigned pp, unsigned chunk) {
  if (pp <= 1)
    return 0;
  if (s == PipelineSchedule::ZBV)
    return chunk < pp ? chunk : std::min(pp - 1, 2 * pp - 1 - std::min(chunk, 2 * pp - 1));
  return chunk % pp;
}

std::vector<unsigned> balancedCuts(const std::vector<double> &costs, unsigned parts) {
  const size_t n = costs.size();
  if (parts <= 1 || n == 0)
    return {};
  parts = static_cast<unsigned>(std::min<size_t>(parts, n));
  std::vector<double> prefix(n + 1, 0);
  for (size_t i = 0; i < n; ++i)
    prefix[i + 1] = prefix[i] + costs[i];
  const double inf = std::numeric_limits<double>::infinity();
  // best[k][i]: the smallest largest run cutting the first i costs into k runs.
  std::vector<std::vector<double>> best(parts + 1, std::vector<double>(n + 1, inf));
  std::vector<std::vector<size_t>> from(parts + 1, std::vector<size_t>(n + 1, 0));
  best[0][0] = 0;
  for (unsigned k = 1; k <= parts; ++k)
    for (size_t i = k; i <= n; ++i)
      for (size_t j = k - 1; j < i; ++j) {
        double v = std::max(best[k - 1][j], prefix[i] - prefix[j]);
        if (v < best[k][i]) {
          best[k][i] = v;
          from[k][i] = j;
        }
      }
  std::vector<unsigned> cuts;
  for (size_t i = n, k = parts; k > 1; --k) {
    i = from[k][i];
    cuts.push_back(static_cast<unsigned>(i));
  }
  std::reverse(cuts.begin(), cuts.end());
  return cuts;
}

namespace {

PipelinePlan::Cut cutIntoChunks(const Model &m, AnalysisContext &ctx, unsigned pp, unsigned virtualStages) {
  PipelinePlan::Cut out;
  const Setup &s = ctx.setup();
  const Graph &g = *m.graph;
  const unsigned parts = pp * virtualStages;
  // Units: the repeated layers in execution order; nodes outside any join
  // the layer before them (the head, the loss), or the first (the embedding).
  const std::vector<llvm::StringRef> &layer = checkpointLayersOf(ctx, g);
  std::vector<int> nodeUnit(g.nodes().size(), -1);
  std::vector<std::string> unitName;
  int current = -1;
  for (const auto &np : g.nodes()) {
    const Node &n = *np;
    if (n.backwardPhase)
      continue;
    llvm::StringRef l = n.index < layer.size() ? layer[n.index] : llvm::StringRef();
    if (!l.empty() && (current < 0 || unitName[current] != l)) {
      unitName.push_back(l.str());
      current = static_cast<int>(unitName.size() - 1);
    }
    nodeUnit[n.index] = current;
  }
  if (unitName.size() < parts) {
    out.notes.push_back(fmt::format("pp {} x {} virtual stages needs {} layers to cut; the graph has {}: the "
                                    "pipeline is not modelled",
                                    pp, virtualStages, parts, unitName.size()));
    return out;
  }
  for (int &u : nodeUnit)
    if (u < 0 && !unitName.empty())
      u = 0;

  // Predicted time per unit: its forward groups, the backward in proportion.
  const ComputeModel &cm = ctx.get<ComputeModel>();
  std::vector<double> cost(unitName.size(), 0);
  const bool seconds = cm.hardware() != nullptr;
  KernelTime fwd = cm.forwardTotal(), bwd = cm.backwardTotal();
  out.forwardSeconds = fwd.seconds;
  out.backwardSeconds = bwd.seconds;
  double scale = seconds ? (fwd.seconds > 0 ? 1 + bwd.seconds / fwd.seconds : 3)
                         : (fwd.flops > 0 ? 1 + bwd.flops / fwd.flops : 3);
  for (const GroupCost &gc : cm.groups()) {
    if (!gc.group || gc.group->nodes.empty() || gc.group->graph != &g)
      continue;
    const Node *first = gc.group->nodes.front();
    if (first->backwardPhase || nodeUnit[first->index] < 0)
      continue;
    cost[nodeUnit[first->index]] += (seconds ? gc.forward.seconds : gc.forward.flops) * scale;
  }

  std::vector<unsigned> cuts;
  if (!s.ppSplitPoints.empty()) {
    for (const std::string &name : s.ppSplitPoints) {
      auto at = std::find_if(unitName.begin(), unitName.end(), [&](const std::string &u) {
        return u == name || llvm::StringRef(u).endswith("." + name) || llvm::StringRef(u).startswith(name + ".");
      });
      if (at == unitName.end()) {
        out.notes.push_back(fmt::format("--pp-split-points: '{}' is no layer of the graph; stages balanced by time",
                                     name));
        cuts.clear();
        break;
      }
      cuts.push_back(static_cast<unsigned>(at - unitName.begin()));
    }
    if (!std::is_sorted(cuts.begin(), cuts.end()) || std::adjacent_find(cuts.begin(), cuts.end()) != cuts.end()) {
      out.notes.push_back("--pp-split-points are not in execution order; stages balanced by time");
      cuts.clear();
    }
  }
  if (cuts.empty())
    cuts = balancedCuts(cost, parts);
  std::vector<unsigned> unitChunk(unitName.size(), 0);
  for (unsigned u = 0, c = 0; u < unitName.size(); ++u) {
    while (c < cuts.size() && u >= cuts[c])
      ++c;
    unitChunk[u] = c;
  }
  out.chunks.assign(parts, {});
  for (unsigned u = 0; u < unitName.size(); ++u) {
    PipelineChunk &c = out.chunks[unitChunk[u]];
    if (c.firstModule.empty())
      c.firstModule = unitName[u];
    c.lastModule = unitName[u];
    c.seconds += cost[u];
    out.totalSeconds += cost[u];
  }

  // Chunks of nodes: forward by unit; a backward node by what it differentiates.
  out.nodeChunk.assign(g.nodes().size(), 0);
  for (const auto &np : g.nodes()) {
    const Node &n = *np;
    if (!n.backwardPhase) {
      out.nodeChunk[n.index] = nodeUnit[n.index] < 0 ? 0 : unitChunk[nodeUnit[n.index]];
      continue;
    }
    unsigned c = 0;
    for (const Value *of : n.outputGradientOf)
      if (of && of->producer)
        c = std::max(c, out.nodeChunk[of->producer->index]);
    out.nodeChunk[n.index] = c;
  }
  for (const Value *p : trainableParams(g)) {
    unsigned first = std::numeric_limits<unsigned>::max();
    for (const Use &u : p->uses)
      if (!u.user->backwardPhase)
        first = std::min(first, u.user->index);
    double e = MeshSharding::elements(p);
    out.chunks[first < out.nodeChunk.size() ? out.nodeChunk[first] : 0].paramElements += e;
    out.totalParams += e;
  }

  // The activations crossing each cut, one rank's share (tp, cp).
  const MeshSharding &sh = ctx.get<MeshSharding>();
  for (const auto &np : g.nodes()) {
    const Node &n = *np;
    if (n.backwardPhase)
      continue;
    unsigned c = out.nodeChunk[n.index];
    for (const Value *o : n.outputs) {
      if (!o)
        continue;
      bool crosses = std::any_of(o->uses.begin(), o->uses.end(), [&](const Use &u) {
        return !u.user->backwardPhase && out.nodeChunk[u.user->index] > c;
      });
      if (crosses)
        out.chunks[c].sendBytes += MeshSharding::elements(o) / sh.elementDivisor(o) * sh.activationElementBytes(o);
    }
  }

  out.active = true;
  return out;
}

}  // namespace

PipelinePlan::PipelinePlan(const Model &m, AnalysisContext &ctx) {
  const Setup &s = ctx.setup();
  pp_ = std::max(1u, s.mesh.pp);
  schedule_ = s.ppSchedule;
  microbatches_ = std::max(1u, s.microbatchCount());
  virtual_ = s.virtualStageCount();
  if (pp_ <= 1 || !m.graph)
    return;
  // The cut reads no schedule and no micro-batch count: the candidates of
  // one mesh share it (their chunk count aside).
  std::string key = fmt::format("pp {} x {} split {} | {} | {}", pp_, virtual_, llvm::join(s.ppSplitPoints, ","),
                                ComputeModel::sharedKey(s), MeshSharding::sharedKey(s));
  const Cut &cut = ctx.fact<Cut>(key, [&] { return cutIntoChunks(m, ctx, pp_, virtual_); });
  notes_ = cut.notes;
  if (!cut.active)
    return;
  chunks_ = cut.chunks;
  nodeChunk_ = cut.nodeChunk;
  totalSeconds_ = cut.totalSeconds;
  totalParams_ = cut.totalParams;

  double worst = -1;
  for (unsigned r = 0; r < pp_; ++r)
    if (rankShare(r) > worst) {
      worst = rankShare(r);
      slowest_ = r;
    }
  bubble_ = bubbleFraction(schedule_, pp_, microbatches_, virtual_, cut.forwardSeconds, cut.backwardSeconds);
  active_ = true;
}

double PipelinePlan::rankSum(unsigned rank, double PipelineChunk::*field) const {
  double sum = 0;
  for (unsigned c = 0; c < chunks_.size(); ++c)
    if (rankOfChunk(c) == rank)
      sum += chunks_[c].*field;
  return sum;
}

double PipelinePlan::rankShare(unsigned rank) const {
  return totalSeconds_ > 0 ? rankSum(rank, &PipelineChunk::seconds) / totalSeconds_ : 1.0 / pp_;
}

double PipelinePlan::paramShare(unsigned rank) const {
  return totalParams_ > 0 ? rankSum(rank, &PipelineChunk::paramElements) / totalParams_ : 1.0 / pp_;
}

double PipelinePlan::sendBytesPerMicrobatch(unsigned rank) const {
  double b = 0;
  for (unsigned c = 0; c + 1 < chunks_.size(); ++c)
    if (rankOfChunk(c) == rank)
      b += chunks_[c].sendBytes;
  return b / microbatches_;
}

}  // namespace graphlint
