#include "graphlint/engine/CostSummary.h"
#include "graphlint/ir/Display.h"

#include "graphlint/analyses/Float8Linears.h"
#include "graphlint/analyses/StepTimeline.h"

#include <fmt/format.h>

namespace graphlint {

CostSummary summariseCost(const Model &, AnalysisContext &ctx) {
  CostSummary s;
  const ComputeModel &cm = ctx.get<ComputeModel>();
  const Setup &setup = ctx.setup();
  s.present = true;
  s.target = cm.hardware() ? cm.hardware()->name : "";
  s.precision = std::string(precisionName(setup.precision));
  s.matmulMath = std::string(mathPrecisionName(cm.matmulPrecision()));
  s.train = setup.train;
  s.params = cm.paramElements();
  KernelTime f = cm.forwardTotal(), b = cm.backwardTotal();
  s.flopsForward = f.flops, s.flopsBackward = b.flops;
  s.matmulFlopsForward = f.matmulFlops, s.matmulFlopsBackward = b.matmulFlops;
  s.bytesForward = f.bytes, s.bytesBackward = b.bytes;
  s.secondsForward = f.seconds, s.secondsBackward = b.seconds;
  s.kernelsForward = f.kernels, s.kernelsBackward = b.kernels;
  s.unknownGroups = cm.unknownGroups();
  s.scheduledGroups = static_cast<unsigned>(cm.schedule().size());
  for (unsigned gi : cm.schedule()) {
    const GroupCost &c = cm.groups()[gi];
    const Node &first = *c.group->nodes.front();
    s.groups.push_back({c.group->id, std::string(groupKindName(c.group->kind)),
                        nodeLabel(first), c.group->kernels,
                        c.known, c.forward.flops, c.backward.flops, c.forward.bytes, c.backward.bytes,
                        c.forward.seconds, c.backward.seconds});
  }

  if (setup.float8 != Float8::None) {
    const Float8Linears &f8 = ctx.get<Float8Linears>();
    CostSummary::Float8 &f = s.float8;
    f.present = true;
    f.recipe = std::string(float8Name(setup.float8));
    f.converted = static_cast<unsigned>(f8.linears().size());
    for (const Float8Skipped &k : f8.skipped())
      f.skipped.push_back({k.name, k.reason});
    f.fp8FlopsForward = cm.fp8MatmulFlopsForward();
    f.fp8FlopsBackward = cm.fp8MatmulFlopsBackward();
    KernelTime cf = cm.float8CastsForward(), cb = cm.float8CastsBackward();
    f.castBytesForward = cf.bytes, f.castBytesBackward = cb.bytes;
    f.castKernelsForward = cf.kernels, f.castKernelsBackward = cb.kernels;
    f.castSecondsForward = cf.seconds, f.castSecondsBackward = cb.seconds;
    f.allGather = setup.float8GathersFp8();
    f.weightElements = f8.convertedElements();
  }

  const StepTimeline &st = ctx.get<StepTimeline>();
  if (!st.active())
    return s;
  CostSummary::Communication &c = s.communication;
  c.present = true;
  c.strategy = std::string(strategyName(st.strategy()));
  c.worldSize = setup.mesh.worldSize();
  c.gpusPerNode = st.topology().perNode;
  c.intra = st.topology().intra.name;
  c.inter = st.topology().inter.name;
  c.elementBytes = st.commElementBytes();
  c.bytesPerRank = st.bytesPerRank();
  for (const CollectiveCall &call : st.collectives()) {
    std::string kind(collectiveKindName(call.kind));
    auto it = std::find_if(c.collectives.begin(), c.collectives.end(), [&](const CostSummary::Collective &x) {
      return x.kind == kind && x.phase == call.phase;
    });
    if (it == c.collectives.end())
      it = c.collectives.insert(c.collectives.end(), {kind, "", call.phase, 0, 0, 0});
    if (call.bytes >= it->bytes / std::max(1u, it->count))  // the largest call's algorithm
      it->algorithm = std::string(collectiveAlgoName(call.algo));
    it->bytes += call.bytes;
    it->count += 1;
    it->seconds += call.endSeconds - call.startSeconds;
  }
  for (const ParamBucket &bk : st.buckets()) {
    CostSummary::Bucket b{bk.index, static_cast<unsigned>(bk.params.size()), bk.bytes, bk.readySeconds,
                          bk.startSeconds, bk.endSeconds};
    if (gathersUnits(st.strategy()))
      c.units.push_back({b, bk.name});
    else
      c.buckets.push_back(b);
  }
  c.commSeconds = st.commSeconds();
  c.exposedSeconds = st.exposedSeconds();
  c.overlapRatio = st.overlapRatio();
  c.forwardSeconds = st.forwardSeconds();
  c.backwardSeconds = st.backwardSeconds();
  c.optimizerSeconds = st.optimizerSeconds();
  c.stepSeconds = st.stepSeconds();
  c.modelFlops = st.modelFlops();
  c.mfu = st.mfu();
  c.tokensPerSecondPerGpu = st.tokensPerSecondPerGpu();
  c.mesh = st.meshTraffic();
  c.bubbleSeconds = st.bubbleSeconds();
  c.notes = st.notes();
  for (const std::string &n : c.mesh.notes)
    c.notes.push_back(n);
  return s;
}

}  // namespace graphlint
