// The memory plan (docs/memory.md): replays the alloc/free trace of
// MemoryTrace.cpp for the live-byte timeline, the peak and what is live
// there, and through AllocatorSim for the reserved bytes.
#include "graphlint/analyses/MemoryPlan.h"

#include "MemoryTrace.h"
#include "PipelineMemory.h"

#include "graphlint/analyses/CachingAllocator.h"
#include "graphlint/analyses/FusionPlan.h"
#include "graphlint/analyses/MemorySnapshot.h"
#include "graphlint/analyses/MeshSharding.h"
#include "graphlint/base/HardwareProfile.h"
#include "graphlint/base/SetupKeys.h"

#include <fmt/format.h>

#include <algorithm>

namespace graphlint {

std::string_view memoryKindName(MemoryKind k) {
  switch (k) {
  case MemoryKind::Param: return "param";
  case MemoryKind::Grad: return "grad";
  case MemoryKind::OptimizerState: return "optimizer_state";
  case MemoryKind::Input: return "input";
  case MemoryKind::Activation: return "activation";
  case MemoryKind::Saved: return "saved";
  case MemoryKind::Gradient: return "activation_grad";
  case MemoryKind::Temporary: return "temporary";
  }
  return "?";
}

double MemorySummary::fragmentation() const {
  if (allocatorFreeAtPeakBytes == 0)
    return 0;
  uint64_t largest = std::min(allocatorLargestFreeAtPeakBytes, allocatorFreeAtPeakBytes);
  return 1 - static_cast<double>(largest) / static_cast<double>(allocatorFreeAtPeakBytes);
}

uint64_t MemorySummary::reservedOverheadBytes() const {
  return peakReservedBytes - std::min(allocatorPeakAllocatedBytes, peakReservedBytes);
}

double MemorySummary::reservedOverhead() const {
  return peakReservedBytes == 0 ? 0 : static_cast<double>(reservedOverheadBytes()) / static_cast<double>(peakReservedBytes);
}

memory::Trace memory::planTrace(AnalysisContext &ctx, MemorySummary &sum) {
  const Setup &s = ctx.setup();
  const MeshSharding *sharding = s.mesh.tp * s.mesh.cp * s.mesh.ep > 1 ? &ctx.get<MeshSharding>() : nullptr;
  if (sharding) {
    sum.tpPlan = sharding->planName();
    sum.sequenceParallel = sharding->sequenceParallel();
    for (const std::string &a : sharding->assumptions())
      sum.caveats.push_back(a);
  }
  // Memory follows the execution the user stated (Setup::compiledExecution).
  sum.executionStated = s.backendStated;
  const FusionPlan *compiled = s.compiledExecution() ? &ctx.get<FusionPlan>() : nullptr;
  sum.execution = compiled ? "compiled" : "eager";
  return memory::buildTrace(ctx, sum, sharding, compiled);
}

namespace {

using memory::Trace;
using memory::nodeLabel;

std::string_view phaseName(MemoryPhase p) {
  switch (p) {
  case MemoryPhase::Forward: return "forward";
  case MemoryPhase::Backward: return "backward";
  case MemoryPhase::Optimizer: return "optimizer";
  }
  return "?";
}

// One step's point of the timeline before it has a label.
struct StepPoint {
  uint32_t step;
  MemoryPhase phase;
  uint64_t liveBytes;
  std::array<uint64_t, MemorySummary::kCategories> categoryBytes;
};

// Merges runs of consecutive points of one phase so that at most about
// `limit` remain (a phase boundary always starts a new point), keeping the
// point with the most live bytes of each run: the peak survives, and the
// JSON and the SVG stay small on million-node graphs.
void downsampleTimeline(std::vector<StepPoint> &points, size_t limit) {
  if (points.size() <= limit)
    return;
  size_t stride = (points.size() + limit - 1) / limit;
  std::vector<StepPoint> out;
  out.reserve(limit + 4);
  size_t inRun = 0;
  for (const StepPoint &p : points) {
    if (!out.empty() && inRun < stride && out.back().phase == p.phase) {
      ++inRun;
      if (p.liveBytes > out.back().liveBytes)
        out.back() = p;
      continue;
    }
    out.push_back(p);
    inRun = 1;
  }
  points = std::move(out);
}

// Pipeline parallelism: per-rank figures (PipelineMemory.h); the worst
// rank's become the summary's, as the peak a launch must fit.
void applyPipelineStages(const memory::ForwardEndHeld &forwardEnd, AnalysisContext &ctx, MemorySummary &sum) {
  const PipelinePlan &plan = ctx.get<PipelinePlan>();
  sum.ppSchedule = std::string(pipelineScheduleName(plan.schedule()));
  sum.microbatches = plan.microbatches();
  sum.virtualStages = plan.virtualStages();
  for (const std::string &n : plan.notes())
    sum.caveats.push_back(n);
  memory::HeldAcrossMicrobatches held;
  const Setup &s = ctx.setup();
  if (s.mesh.dataParallel == DataParallel::FSDP2 && plan.microbatches() > 1) {
    const PrecisionPolicy pp = precisionPolicy(s.precision, s.mesh.dataParallel);
    const double shards = s.mesh.shardGroup();
    held.paramsPerShardedByte = shards * pp.computeWeightBytes / pp.weightBytes;
    // FSDP2 accumulates the unsharded gradient in the reduce dtype, which
    // is the dtype of its sharded gradient.
    held.gradsPerShardedByte = shards;
  }
  sum.stages = memory::pipelineStages(forwardEnd, sum, plan, held);
  if (sum.stages.empty())
    return;
  for (unsigned i = 0; i < sum.stages.size(); ++i)
    if (sum.stages[i].peakReservedBytes > sum.stages[sum.worstStage].peakReservedBytes)
      sum.worstStage = i;
  const MemorySummary::Stage &w = sum.stages[sum.worstStage];
  double scale = sum.peakAllocatedBytes ? static_cast<double>(w.peakAllocatedBytes) / sum.peakAllocatedBytes : 1;
  sum.allocatorPeakAllocatedBytes = static_cast<uint64_t>(sum.allocatorPeakAllocatedBytes * scale);
  sum.paramsBytes = w.paramsBytes;
  sum.buffersBytes = w.buffersBytes;
  sum.gradsBytes = w.gradsBytes;
  sum.optimizerBytes = w.optimizerBytes;
  sum.activationsBytes = w.activationsBytes;
  sum.peakAllocatedBytes = w.peakAllocatedBytes;
  sum.peakReservedBytes = w.peakReservedBytes;
  sum.caveats.push_back(fmt::format("pipeline: figures are stage {}'s ({} to {}), the worst of {}; the timeline is "
                                    "the whole graph's",
                                    w.rank, w.firstModule, w.lastModule, sum.stages.size()));
}

// The plan of one setup before its pipeline stages: the summary, the node at
// the peak and what is live there (MemoryPlan's members, built before they
// are the plan's), and what the forward's end holds, which the stages split.
struct PlanParts {
  MemorySummary summary;
  const Node *peakNode = nullptr;
  std::vector<MemoryPlan::Contributor> atPeak;
  memory::ForwardEndHeld forwardEnd;  // training under a pipeline only
};

// Every setup value but the target and the pipeline's schedule, micro-batches
// and virtual stages, as `config --dump` spells them (and whether the backend
// was stated, which the dump does not say): the trace reads no hardware and
// no schedule (the stages, cut by predicted time, are split from it after),
// so setups that differ only in those have one trace and one replay.
std::string everythingButTargetAndSchedule(const Setup &s) {
  std::string key = fmt::format("backend stated {}", s.backendStated);
  for (const SetupKey &k : setupKeys()) {
    llvm::StringRef name(k.key);
    if (name != "target" && name != "pp-schedule" && name != "microbatches" && name != "virtual-stages")
      key += fmt::format("\n{}:{}", k.key, k.dump(s));
  }
  return key;
}

void buildPlan(const Model &m, AnalysisContext &ctx, PlanParts &parts) {
  const Setup &s = ctx.setup();
  MemorySummary &sum = parts.summary;
  const Node *&peakNode_ = parts.peakNode;
  std::vector<MemoryPlan::Contributor> &atPeak_ = parts.atPeak;
  using Contributor = MemoryPlan::Contributor;
  sum.present = true;
  sum.mode = s.train ? "training" : "inference";
  sum.optimizer = std::string(optimizerName(s.optimizer));
  sum.precision = std::string(precisionName(s.precision));
  sum.recompute = s.recomputeLabel();
  sum.float8 = std::string(float8Name(s.float8));
  sum.float8AllGather = s.float8GathersFp8();
  sum.float8PrecomputeScale = sum.float8AllGather && s.float8PrecomputeScale;
  sum.zero = s.mesh.zeroStage();
  sum.worldSize = s.mesh.worldSize();
  sum.mesh = s.mesh;
  sum.target = s.target;
  if (const HardwareProfile *hw = s.targetProfile()) {
    sum.target = hw->name;  // the profile's spelling, as compute.target has it
    sum.capacityBytes = hw->memoryBytes;
  }
  if (!m.graph)
    return;
  Trace t = memory::planTrace(ctx, sum);
  if (!s.train) {
    sum.gradsBytes = 0;
    sum.optimizerBytes = 0;
  }

  // Replay: live bytes, each step's own peak, the global peak's event.
  AllocatorSim alloc;
  std::vector<StepPoint> points;
  points.reserve(t.steps.size());
  uint64_t live = 0, stepPeak = 0, peak = 0;
  std::array<uint64_t, MemorySummary::kCategories> liveCategory{}, stepCategory{};
  size_t peakEvent = 0;
  int peakStep = -1;
  bool peakPending = false;
  for (size_t e = 0; e < t.events.size(); ++e) {
    const Trace::Event &ev = t.events[e];
    const Trace::Storage *st = ev.op == Trace::Op::Mark ? nullptr : &t.storages[ev.id];
    switch (ev.op) {
    case Trace::Op::Alloc:
      live += st->bytes;
      liveCategory[memoryCategoryOf(st->kind)] += st->bytes;
      alloc.allocate(ev.id, st->bytes);
      if (live >= stepPeak) {
        stepPeak = live;
        stepCategory = liveCategory;
      }
      if (live > peak) {
        peak = live;
        peakEvent = e;
        peakPending = true;
      }
      break;
    case Trace::Op::Free:
      live -= st->bytes;
      liveCategory[memoryCategoryOf(st->kind)] -= st->bytes;
      alloc.release(ev.id);
      break;
    case Trace::Op::Mark: {
      points.push_back({ev.id, t.steps[ev.id].phase, stepPeak, stepCategory});
      if (peakPending) {
        peakStep = static_cast<int>(ev.id);
        peakPending = false;
      }
      stepPeak = live;
      stepCategory = liveCategory;
      break;
    }
    }
  }
  sum.timelineSteps = points.size();
  downsampleTimeline(points, MemorySummary::kMaxTimelinePoints);
  sum.timeline.reserve(points.size());
  for (const StepPoint &p : points)
    sum.timeline.push_back({t.steps[p.step].label(), std::string(phaseName(p.phase)), p.liveBytes, p.categoryBytes});
  sum.peakAllocatedBytes = peak;
  sum.peakReservedBytes = alloc.peakReserved();
  sum.allocatorPeakAllocatedBytes = alloc.peakAllocated();
  sum.segments = alloc.segments();
  sum.allocatorFreeAtPeakBytes = alloc.freeAtPeak();
  sum.allocatorLargestFreeAtPeakBytes = alloc.largestFreeAtPeak();
  sum.fragmentedGrowthBytes = alloc.fragmentedGrowth();
  if (peakStep >= 0) {
    const Trace::Step &step = t.steps[peakStep];
    peakNode_ = step.node;
    sum.peakNode = step.label();
    sum.peakPhase = std::string(phaseName(step.phase));
  }

  // What is live at the peak.
  std::vector<bool> liveAt(t.storages.size(), false);
  for (size_t e = 0; e <= peakEvent && e < t.events.size(); ++e) {
    const Trace::Event &ev = t.events[e];
    if (ev.op != Trace::Op::Mark)
      liveAt[ev.id] = ev.op == Trace::Op::Alloc;
  }
  uint64_t resident = 0;
  for (size_t i = 0; i < t.storages.size(); ++i) {
    if (!liveAt[i] || t.storages[i].bytes == 0)
      continue;
    const Trace::Storage &st = t.storages[i];
    if (st.kind == MemoryKind::Param || st.kind == MemoryKind::Input)
      resident += st.bytes;
    atPeak_.push_back({st.value, st.value ? st.value->producer : st.owner, st.kind, st.bytes});
  }
  std::stable_sort(atPeak_.begin(), atPeak_.end(),
                   [](const Contributor &a, const Contributor &b) { return a.bytes > b.bytes; });
  if (!s.train)
    sum.activationsBytes = peak > resident ? peak - resident : 0;
  if (s.train && s.mesh.pp > 1)
    parts.forwardEnd = memory::forwardEndHeld(t);
  for (size_t i = 0; i < atPeak_.size() && i < 10; ++i) {
    const Contributor &c = atPeak_[i];
    sum.topAtPeak.push_back({c.value ? c.value->name : std::string(), c.producer ? nodeLabel(*c.producer) : "",
                             std::string(memoryKindName(c.kind)), memoryCategoryOf(c.kind), c.bytes});
  }
}

}  // namespace

MemoryPlan::MemoryPlan(const Model &m, AnalysisContext &ctx) {
  const Setup &s = ctx.setup();
  auto build = [&] {
    PlanParts parts;
    buildPlan(m, ctx, parts);
    return parts;
  };
  // Once per context, or once for every target and pipeline schedule of a
  // SharedFacts (Analysis.h).
  const PlanParts &parts = ctx.fact<PlanParts>(everythingButTargetAndSchedule(s), build);
  summary_ = parts.summary;
  peakNode_ = parts.peakNode;
  atPeak_ = parts.atPeak;
  summary_.target = s.target;
  summary_.capacityBytes = 0;
  if (const HardwareProfile *hw = s.targetProfile()) {
    summary_.target = hw->name;  // the profile's spelling, as compute.target has it
    summary_.capacityBytes = hw->memoryBytes;
  }
  // The stages are cut by predicted time (PipelinePlan): the target counts.
  if (s.train && s.mesh.pp > 1 && m.graph)
    applyPipelineStages(parts.forwardEnd, ctx, summary_);
}


}  // namespace graphlint
