// The predicted step trace (StepTrace.h): StepTimeline's compute segments and
// collectives, ComputeModel's groups for names and sizes, and the memory
// plan's trace replayed for the counters.
#include "graphlint/analyses/StepTrace.h"

#include "MemoryTrace.h"

#include "graphlint/analyses/CachingAllocator.h"
#include "graphlint/analyses/FusionPlan.h"
#include "graphlint/analyses/StepTimeline.h"

#include "graphlint/base/HardwareProfile.h"

#include <algorithm>
#include <map>

namespace graphlint {

namespace {

std::string opName(const Node &n) { return n.domain.empty() ? n.opType : n.domain + "::" + n.opType; }

StepTrace::Kernel kernelOf(const GroupCost &c, const std::string &phase, double start, double seconds) {
  StepTrace::Kernel k;
  k.phase = phase;
  k.startSeconds = start;
  k.seconds = seconds;
  const KernelTime &t = phase == "forward" ? c.forward : c.backward;
  k.flops = t.flops;
  k.bytes = t.bytes;
  if (!c.group)
    return k;
  k.groupId = c.group->id;
  k.groupKind = std::string(groupKindName(c.group->kind));
  std::vector<std::string> ops;
  for (const Node *n : c.group->nodes) {
    std::string op = opName(*n);
    if (std::find(ops.begin(), ops.end(), op) == ops.end())
      ops.push_back(op);
  }
  for (size_t i = 0; i < ops.size(); ++i)
    k.ops += (i ? "," : "") + ops[i];
  if (!c.group->nodes.empty()) {
    const Node &first = *c.group->nodes.front();
    k.name = opName(first) + " " + nodeLabel(first);
    if (first.loc.valid())
      k.source = first.loc.file + ":" + std::to_string(first.loc.line);
    k.module = first.modulePath;
  }
  if (phase == "backward")
    k.name += " (backward)";
  return k;
}

// Each memory step's time: the start of the kernel running its node in that
// pass; the optimizer's at the optimizer step. A step whose node runs in no
// kernel (a view) takes the time before it.
void addMemoryCounters(AnalysisContext &ctx, const std::vector<std::pair<const FusionGroup *, bool>> &segGroups,
                       const std::vector<double> &segStart, double optimizerStart, StepTrace &out) {
  std::map<std::pair<const Node *, bool>, double> startOf;
  for (size_t j = 0; j < segGroups.size(); ++j)
    if (const FusionGroup *g = segGroups[j].first)
      for (const Node *n : g->nodes)
        startOf.try_emplace({n, segGroups[j].second}, segStart[j]);
  MemorySummary scratch;
  memory::Trace t = memory::planTrace(ctx, scratch);
  AllocatorSim alloc;
  uint64_t live = 0, stepPeak = 0, stepReserved = 0;
  double last = 0;
  for (const memory::Trace::Event &ev : t.events) {
    switch (ev.op) {
    case memory::Trace::Op::Alloc:
      live += t.storages[ev.id].bytes;
      alloc.allocate(ev.id, t.storages[ev.id].bytes);
      stepPeak = std::max(stepPeak, live);
      stepReserved = alloc.reserved();
      break;
    case memory::Trace::Op::Free:
      live -= t.storages[ev.id].bytes;
      alloc.release(ev.id);
      break;
    case memory::Trace::Op::Mark: {
      const memory::Trace::Step &s = t.steps[ev.id];
      double at = last;
      if (s.phase == MemoryPhase::Optimizer)
        at = optimizerStart;
      else if (s.node) {
        bool backward = s.phase == MemoryPhase::Backward;
        auto it = startOf.find({s.node, backward});
        if (it == startOf.end())
          it = startOf.find({s.node, !backward});
        if (it != startOf.end())
          at = it->second;
      }
      at = std::max(at, last);
      if (!out.memory.empty() && out.memory.back().seconds == at) {
        out.memory.back().allocated = std::max(out.memory.back().allocated, stepPeak);
        out.memory.back().reserved = std::max(out.memory.back().reserved, stepReserved);
      } else {
        out.memory.push_back({at, stepPeak, std::max(stepReserved, alloc.reserved())});
      }
      last = at;
      stepPeak = live;
      stepReserved = alloc.reserved();
      break;
    }
    }
  }
}

}  // namespace

StepTrace stepTraceOf(AnalysisContext &ctx) {
  StepTrace out;
  const Model &m = ctx.model();
  const Setup &s = ctx.setup();
  const ComputeModel &cm = ctx.get<ComputeModel>();
  if (!m.graph || !cm.hardware())
    return out;
  out.present = true;
  out.target = cm.hardware()->name;
  out.worldSize = s.mesh.worldSize();
  std::vector<std::pair<const FusionGroup *, bool>> segGroups;
  std::vector<double> segStart;
  const StepTimeline &tl = ctx.get<StepTimeline>();
  if (tl.active()) {
    out.train = true;
    for (const ComputeSegment &c : tl.computeSegments()) {
      const GroupCost *g = c.group >= 0 ? &cm.groups()[static_cast<size_t>(c.group)] : nullptr;
      segGroups.push_back({g ? g->group : nullptr, c.backward});
      segStart.push_back(c.startSeconds);
      if (c.endSeconds <= c.startSeconds)
        continue;
      if (!g) {
        StepTrace::Kernel k;
        k.name = "recompute";
        k.phase = "backward";
        k.startSeconds = c.startSeconds;
        k.seconds = c.endSeconds - c.startSeconds;
        out.kernels.push_back(std::move(k));
        continue;
      }
      // A joint graph's backward groups are timed by their backward cost.
      out.kernels.push_back(kernelOf(*g, c.backward ? "backward" : "forward", c.startSeconds,
                                     c.endSeconds - c.startSeconds));
    }
    for (const CollectiveCall &c : tl.collectives()) {
      if (c.endSeconds <= c.startSeconds)
        continue;
      StepTrace::Collective k;
      k.kind = std::string(collectiveKindName(c.kind));
      k.algorithm = std::string(collectiveAlgoName(c.algo));
      k.phase = c.phase;
      k.bytes = c.bytes;
      k.ranks = c.ranks;
      k.group = c.ranks == tl.topology().ranks ? "dp" : "dp_replicate";
      k.startSeconds = c.startSeconds;
      k.endSeconds = c.endSeconds;
      out.collectives.push_back(std::move(k));
    }
    std::stable_sort(out.collectives.begin(), out.collectives.end(),
                     [](const StepTrace::Collective &a, const StepTrace::Collective &b) {
                       return a.startSeconds < b.startSeconds;
                     });
    out.forwardSeconds = tl.forwardSeconds();
    out.backwardSeconds = tl.backwardSeconds();
    out.optimizerStartSeconds = tl.optimizerStartSeconds();
    out.optimizerSeconds = tl.optimizerSeconds();
    out.stepSeconds = tl.stepSeconds();
    out.commSeconds = tl.commSeconds();
    out.exposedSeconds = tl.exposedSeconds();
    out.overlapRatio = tl.overlapRatio();
    if (tl.meshTraffic().seconds() > 0 || tl.bubbleSeconds() > 0)
      out.caveats.push_back("tp/cp/ep/pp communication and the pipeline bubble are in the step time but not drawn: "
                            "the trace shows the data-parallel stream only");
  } else {
    // Inference: the forward kernels back to back.
    double t = 0;
    for (unsigned g : cm.schedule()) {
      const GroupCost &c = cm.groups()[g];
      double d = c.known ? c.forward.seconds : 0;
      segGroups.push_back({c.group, false});
      segStart.push_back(t);
      if (d > 0)
        out.kernels.push_back(kernelOf(c, "forward", t, d));
      t += d;
    }
    out.forwardSeconds = out.stepSeconds = out.optimizerStartSeconds = t;
  }
  addMemoryCounters(ctx, segGroups, segStart, out.optimizerStartSeconds, out);
  return out;
}

}  // namespace graphlint
