// Tensor, pipeline, context and expert parallelism on the captured graph
// (issue 41 items 2-4), against their closed forms: Korthikanti et al. 2022's
// per-layer activations with tensor and sequence parallelism, the pipeline
// schedules' in-flight micro-batches and bubble (Narayanan et al. 2021), and
// the tp/cp/ep/pp communication volumes, exact to the byte.
#include "IrBuilder.h"
#include "TestSupport.h"

#include "graphlint/analyses/MemoryPlan.h"
#include "graphlint/analyses/MeshAdvice.h"
#include "graphlint/analyses/MeshSharding.h"
#include "graphlint/analyses/PipelineSchedule.h"
#include "graphlint/analyses/StepTimeline.h"
#include "graphlint/report/Reporters.h"

#include <fmt/format.h>

#include <gtest/gtest.h>

using namespace graphlint;
using namespace graphlint::test;

namespace {

std::unique_ptr<Model> importFixture(const std::string &rel) {
  auto m = importModelFile(sourcePath(rel), {});
  EXPECT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
  return m ? std::move(*m) : nullptr;
}

// The closed forms' policy: 16-bit activations, 1-byte dropout masks.
graphlint::Setup bf16(unsigned tp = 1, unsigned pp = 1, unsigned cp = 1) {
  graphlint::Setup s;
  s.train = true;
  s.precision = Precision::BF16Mixed;
  s.tp = tp;
  s.pp = pp;
  s.cp = cp;
  EXPECT_FALSE(s.resolveMesh());
  s.resolveHardware();
  return s;
}

const char *kOneLayer = "tests/fixtures/closed_forms/gpt_layers_1_0.1.fx.json";
const char *kTwoLayers = "tests/fixtures/closed_forms/gpt_layers_2_0.1.fx.json";

// models/fx/gpt_layers.py: s=128, b=4, h=256, a=4.
constexpr uint64_t s = 128, b = 4, h = 256, a = 4;
constexpr uint64_t sbh = s * b * h;
// Outside the formula (docs/validation.md): the boolean causal mask, s^2
// bytes (a buffer: replicated), and the two norms' mean and rstd, 4 x s x b
// values at 16 bits (with sequence parallelism they are sharded too).
constexpr uint64_t kMask = s * s, kNormStats = 2 * 2 * s * b * 2;

// The saved activations of one layer: the 2-layer stack minus the 1-layer.
uint64_t perLayer(const graphlint::Setup &setup) {
  auto one = importFixture(kOneLayer), two = importFixture(kTwoLayers);
  AnalysisContext c1(*one, setup), c2(*two, setup);
  return c2.get<MemoryPlan>().summary().activationsBytes - c1.get<MemoryPlan>().summary().activationsBytes;
}

TEST(TensorParallel, KorthikantiWithSequenceParallelism) {
  // Eq. 5: 34sbh/t + 5as^2b/t per layer.
  for (unsigned t : {2u, 4u}) {
    uint64_t expected = (34 * sbh + 5 * a * s * s * b) / t + kMask + kNormStats / t;
    EXPECT_EQ(perLayer(bf16(t)), expected) << "tp " << t;
  }
}

TEST(TensorParallel, KorthikantiWithoutSequenceParallelism) {
  // Eq. 4: 10sbh + 24sbh/t + 5as^2b/t per layer.
  graphlint::Setup off = bf16(4);
  off.sequenceParallel = false;
  uint64_t expected = 10 * sbh + (24 * sbh + 5 * a * s * s * b) / 4 + kMask + kNormStats;
  EXPECT_EQ(perLayer(off), expected);
}

TEST(TensorParallel, DefaultPlanShardsWeightsColwiseAndRowwise) {
  auto two = importFixture(kTwoLayers);
  graphlint::Setup setup = bf16(4);
  AnalysisContext ctx(*two, setup);
  const MeshSharding &sh = ctx.get<MeshSharding>();
  EXPECT_EQ(sh.planName(), "gpt (default)");
  for (const auto &p : two->graph->params()) {
    const std::string &n = p->value->name;
    unsigned expected = llvm::StringRef(n).endswith("qkv.weight") || llvm::StringRef(n).endswith("qkv.bias") ||
                                llvm::StringRef(n).endswith("fc.weight") || llvm::StringRef(n).endswith("fc.bias") ||
                                llvm::StringRef(n).endswith("proj.weight") ||
                                llvm::StringRef(n).endswith("out.weight")
                            ? 4
                            : 1;
    EXPECT_EQ(sh.elementDivisor(p->value), expected) << n;
  }
  EXPECT_EQ(sh.tpRegions().size(), 4u);  // proj and out of two layers
}

TEST(TensorParallel, UserPlanComesFirst) {
  auto two = importFixture(kTwoLayers);
  graphlint::Setup setup = bf16(2);
  setup.tpPlan = {{"*.fc", TpStyle::Replicate}};
  AnalysisContext ctx(*two, setup);
  const MeshSharding &sh = ctx.get<MeshSharding>();
  EXPECT_EQ(sh.planName(), "user + gpt (default)");
  for (const auto &p : two->graph->params()) {
    if (llvm::StringRef(p->value->name).endswith("fc.weight")) {
      EXPECT_EQ(sh.elementDivisor(p->value), 1u);
    }
  }
}

// The tp collectives per step: each of the 4 regions all-gathers and
// reduce-scatters the full sbh activation (2 bytes each) forward and
// backward with sequence parallelism; each rank sends (t-1)/t of it per
// call. Without, one all-reduce each way: 2(t-1)/t.
TEST(TensorParallel, CommunicationVolumes) {
  auto two = importFixture(kTwoLayers);
  const double S = 2.0 * sbh;
  for (bool sp : {true, false}) {
    graphlint::Setup setup = bf16(4);
    setup.sequenceParallel = sp;
    AnalysisContext ctx(*two, setup);
    const MeshTraffic &mt = ctx.get<StepTimeline>().meshTraffic();
    ASSERT_EQ(mt.collectives.size(), sp ? 4u : 2u);
    for (const MeshCollective &c : mt.collectives) {
      EXPECT_EQ(c.dim, "tp");
      EXPECT_EQ(c.calls, 4u);
      EXPECT_DOUBLE_EQ(c.bytesPerCall, S);
      EXPECT_DOUBLE_EQ(c.bytesPerRank, 4 * (sp ? 0.75 : 1.5) * S) << c.collective;
      EXPECT_EQ(c.hiddenSeconds, 0);
      EXPECT_FALSE(c.interNode);
    }
    EXPECT_EQ(mt.collectives[0].collective, sp ? "all_gather" : "all_reduce");
  }
  // --async-tp hides them behind the sharded matmuls: the step gets shorter.
  graphlint::Setup sync = bf16(4), async = bf16(4);
  async.asyncTp = true;
  AnalysisContext cs(*two, sync), ca(*two, async);
  EXPECT_GT(ca.get<StepTimeline>().meshTraffic().hiddenSeconds(), 0);
  EXPECT_LT(ca.get<StepTimeline>().stepSeconds(), cs.get<StepTimeline>().stepSeconds());
  // Micro-pipelined in tp chunks, one chunk of each pair stays exposed: at
  // most (1 - 1/tp) of every collective is hidden.
  for (const MeshCollective &c : ca.get<StepTimeline>().meshTraffic().collectives)
    EXPECT_LE(c.hiddenSeconds, c.seconds * (1 - 1.0 / 4) * (1 + 1e-12)) << c.collective << " " << c.phase;
  // Without sequence parallelism the all-reduce has no all-gather-matmul /
  // matmul-reduce-scatter pattern to pipeline: nothing is hidden.
  graphlint::Setup noSp = bf16(4);
  noSp.asyncTp = true;
  noSp.sequenceParallel = false;
  AnalysisContext cn(*two, noSp);
  EXPECT_EQ(cn.get<StepTimeline>().meshTraffic().hiddenSeconds(), 0);
}

// The recomputed forward runs its tp collectives again in the backward:
// both layers' under --recompute layer, the second's alone under
// selective-layer=2 (torchtitan checkpoints the 2nd, 4th, ... block).
TEST(TensorParallel, RecomputedLayersReplayTheirCollectives) {
  auto two = importFixture(kTwoLayers);
  auto backwardCalls = [&](Recompute r) {
    graphlint::Setup setup = bf16(4);
    setup.recompute = r;
    setup.recomputeEvery = 2;
    AnalysisContext ctx(*two, setup);
    std::vector<unsigned> calls;
    for (const MeshCollective &c : ctx.get<StepTimeline>().meshTraffic().collectives)
      if (c.phase == "backward")
        calls.push_back(c.calls);
    return calls;
  };
  // Two regions (attention, MLP) per layer; all-gather and reduce-scatter each.
  EXPECT_EQ(backwardCalls(Recompute::None), (std::vector<unsigned>{4, 4}));
  EXPECT_EQ(backwardCalls(Recompute::Layer), (std::vector<unsigned>{8, 8}));
  EXPECT_EQ(backwardCalls(Recompute::SelectiveLayer), (std::vector<unsigned>{6, 6}));
}

TEST(PipelineSchedule, InFlightMicrobatches) {
  // 1F1B: the first stage holds pp micro-batches, the last one.
  EXPECT_EQ(inFlightMicrobatches(PipelineSchedule::OneFOneB, 4, 8, 1, 0), 4);
  EXPECT_EQ(inFlightMicrobatches(PipelineSchedule::OneFOneB, 4, 8, 1, 3), 1);
  EXPECT_EQ(inFlightMicrobatches(PipelineSchedule::OneFOneB, 4, 2, 1, 0), 2);  // fewer micro-batches than stages
  EXPECT_EQ(inFlightMicrobatches(PipelineSchedule::GPipe, 4, 8, 1, 0), 8);
  // Interleaved: pp (1 + (pp - 1)/(pp V)) on the first rank (Korthikanti et al. 2022, 4.2.3).
  EXPECT_DOUBLE_EQ(inFlightMicrobatches(PipelineSchedule::Interleaved1F1B, 4, 8, 2, 0), 4 * (1 + 3.0 / 8));
  EXPECT_DOUBLE_EQ(inFlightMicrobatches(PipelineSchedule::Interleaved1F1B, 8, 64, 4, 0), 8 * (1 + 7.0 / 32));
  EXPECT_EQ(inFlightMicrobatches(PipelineSchedule::ZBV, 4, 8, 2, 3), 4);
}

TEST(PipelineSchedule, Bubble) {
  EXPECT_DOUBLE_EQ(bubbleFraction(PipelineSchedule::OneFOneB, 4, 8, 1), 3.0 / 8);
  EXPECT_DOUBLE_EQ(bubbleFraction(PipelineSchedule::GPipe, 8, 32, 1), 7.0 / 32);
  EXPECT_DOUBLE_EQ(bubbleFraction(PipelineSchedule::Interleaved1F1B, 4, 8, 2), 3.0 / 16);
  // ZB-V with the weight gradients filling the bubble (tB = tW = tF).
  EXPECT_DOUBLE_EQ(bubbleFraction(PipelineSchedule::ZBV, 4, 8, 2, 1.0, 2.0), 0);
  EXPECT_EQ(chunkRank(PipelineSchedule::Interleaved1F1B, 4, 5), 1u);
  EXPECT_EQ(chunkRank(PipelineSchedule::ZBV, 4, 7), 0u);
  EXPECT_EQ(chunkRank(PipelineSchedule::ZBV, 4, 4), 3u);
  EXPECT_EQ(balancedCuts({1, 1, 1, 1}, 2), (std::vector<unsigned>{2}));
  EXPECT_EQ(balancedCuts({3, 1, 1, 1}, 2), (std::vector<unsigned>{1}));
}

// pp 2 on the 2-layer stack, 1F1B, 4 micro-batches: one layer per stage.
// The last stage saves one layer's activations (the closed form's 34sbh +
// 5as^2b + mask + norm statistics) per micro-batch over 4, and holds 1
// micro-batch; the first holds pp = 2.
TEST(PipelineSchedule, StageMemoryAndSends) {
  auto two = importFixture(kTwoLayers);
  graphlint::Setup setup = bf16(1, 2);
  setup.microbatches = 4;
  AnalysisContext ctx(*two, setup);
  const MemorySummary &m = ctx.get<MemoryPlan>().summary();
  ASSERT_EQ(m.stages.size(), 2u);
  const uint64_t layer = 34 * sbh + 5 * a * s * s * b + kMask + kNormStats;
  EXPECT_EQ(m.stages[1].activationsPerMicrobatch, layer / 4);
  EXPECT_EQ(m.stages[1].inFlightMicrobatches, 1);
  EXPECT_EQ(m.stages[1].activationsBytes, layer / 4);
  EXPECT_EQ(m.stages[0].inFlightMicrobatches, 2);
  EXPECT_EQ(m.stages[0].firstModule, "layers.0");
  EXPECT_EQ(m.stages[1].firstModule, "layers.1");
  EXPECT_EQ(m.peakReservedBytes, m.stages[m.worstStage].peakReservedBytes);
  // One activation [b, s, h] (2 bytes) crosses the cut per micro-batch each way.
  const MeshTraffic &mt = ctx.get<StepTimeline>().meshTraffic();
  ASSERT_TRUE(mt.pipeline);
  EXPECT_DOUBLE_EQ(mt.bubbleFraction, 1.0 / 4);
  ASSERT_EQ(mt.collectives.size(), 2u);
  for (const MeshCollective &c : mt.collectives) {
    EXPECT_EQ(c.dim, "pp");
    EXPECT_EQ(c.calls, 4u);
    EXPECT_DOUBLE_EQ(c.bytesPerCall, 2.0 * sbh / 4);
  }
}

// FSDP2 under the schedule (torchtitan's default with pp > 1, and
// torch.distributed.pipelining's no-sync backwards): each stage keeps its
// parameters gathered in bf16 and its gradients unsharded in fp32 (the reduce
// dtype) across micro-batches: dp_shard x the bf16/fp32 share of its fp32
// parameter shard, dp_shard x its fp32 gradient shard. One micro-batch
// reduce-scatters as it goes: nothing is held.
TEST(PipelineSchedule, Fsdp2KeepsAStagesParametersGatheredAndGradientsUnsharded) {
  auto two = importFixture(kTwoLayers);
  auto stagesOf = [&](unsigned dpShard, unsigned microbatches) {
    graphlint::Setup setup;
    setup.train = true;
    setup.precision = Precision::BF16Mixed;
    setup.pp = 2;
    setup.dpShard = dpShard;
    setup.microbatches = microbatches;
    EXPECT_FALSE(setup.resolveMesh());
    setup.resolveHardware();
    EXPECT_EQ(setup.mesh.dataParallel, DataParallel::FSDP2);
    AnalysisContext ctx(*two, setup);
    return ctx.get<MemoryPlan>().summary().stages;
  };
  auto held = stagesOf(4, 4);
  ASSERT_EQ(held.size(), 2u);
  for (const MemorySummary::Stage &st : held) {
    EXPECT_GT(st.paramsBytes, 0u);
    EXPECT_NEAR(static_cast<double>(st.gatheredParamsBytes), 4.0 * st.paramsBytes / 2, 1.0);
    EXPECT_NEAR(static_cast<double>(st.unshardedGradsBytes), 4.0 * st.gradsBytes, 1.0);
    EXPECT_GE(st.peakAllocatedBytes, st.paramsBytes + st.gradsBytes + st.optimizerBytes + st.gatheredParamsBytes +
                                         st.unshardedGradsBytes + st.activationsBytes);
  }
  for (const MemorySummary::Stage &st : stagesOf(4, 1)) {
    EXPECT_EQ(st.gatheredParamsBytes, 0u);
    EXPECT_EQ(st.unshardedGradsBytes, 0u);
  }
}

// Ring attention: cp - 1 steps of one K,V block (each [b, a, s/cp, h/a], 2
// bytes) per attention layer forward; K, V and their gradients backward.
TEST(ContextParallel, KvRotationVolume) {
  auto two = importFixture(kTwoLayers);
  graphlint::Setup setup = bf16(1, 1, 2);
  AnalysisContext ctx(*two, setup);
  EXPECT_EQ(ctx.get<MeshSharding>().attentionLayers().size(), 2u);
  const MeshTraffic &mt = ctx.get<StepTimeline>().meshTraffic();
  ASSERT_EQ(mt.collectives.size(), 2u);
  const double block = 2 * (2.0 * sbh / 2);
  EXPECT_EQ(mt.collectives[0].calls, 2u);
  EXPECT_DOUBLE_EQ(mt.collectives[0].bytesPerCall, block);
  EXPECT_DOUBLE_EQ(mt.collectives[1].bytesPerCall, 2 * block);
  EXPECT_GT(mt.collectives[0].hiddenSeconds, 0);
  // Activations divided by cp (the mask buffer is not the batch's).
  graphlint::Setup one = bf16();
  AnalysisContext c1(*two, one);
  EXPECT_LT(ctx.get<MemoryPlan>().summary().activationsBytes, c1.get<MemoryPlan>().summary().activationsBytes / 2 + 4 * kMask);
}

// A two-expert MoE layer: x [T, h] routed (top-1) to experts whose weights
// are sharded over ep ranks; the dispatch and combine all-to-alls move
// capacity x T x k x h elements, each rank sending (ep - 1)/ep of it.
TEST(ExpertParallel, ExpertsShardedAndAllToAllVolume) {
  IrBuilder bld;
  const int64_t T = 64, H = 32, E = 4;
  Value *x = bld.input("x", f32({T, H}));
  Value *gate = bld.param("layers.0.moe.router.weight", f32({H, E}));
  Node *logits = bld.node("MatMul", {x, gate}, {"logits"}, {f32({T, E})});
  logits->modulePath = "layers.0.moe.router";
  Node *topk = bld.node("TopK", {logits->outputs[0]}, {"vals", "idx"}, {f32({T, 1}), tensorOf(DType::Int64, {T, 1})});
  topk->modulePath = "layers.0.moe";
  Value *acc = nullptr;
  for (int e = 0; e < E; ++e) {
    Value *w = bld.param("layers.0.moe.experts." + std::to_string(e) + ".w1.weight", f32({H, H}));
    Node *mm = bld.node("MatMul", {x, w}, {"e" + std::to_string(e)}, {f32({T, H})});
    mm->modulePath = "layers.0.moe.experts." + std::to_string(e) + ".w1";
    if (acc) {
      Node *add = bld.node("Add", {acc, mm->outputs[0]}, {"sum" + std::to_string(e)}, {f32({T, H})});
      add->modulePath = "layers.0.moe";
      acc = add->outputs[0];
    } else {
      acc = mm->outputs[0];
    }
  }
  Node *loss = bld.node("ReduceSum", {acc}, {"loss"}, {f32({})});
  bld.output(loss->outputs[0]);

  graphlint::Setup setup;
  setup.train = true;
  setup.dpShard = 4;
  setup.ep = 2;
  setup.capacityFactor = 1.25;
  ASSERT_FALSE(setup.resolveMesh());
  setup.resolveHardware();
  AnalysisContext ctx(bld.model(), setup);
  const MeshSharding &sh = ctx.get<MeshSharding>();
  ASSERT_EQ(sh.moeLayers().size(), 1u);
  const MoeLayer &l = sh.moeLayers()[0];
  EXPECT_EQ(l.experts, 4u);
  EXPECT_EQ(l.topK, 1u);
  EXPECT_TRUE(l.topKFromGraph);
  EXPECT_DOUBLE_EQ(l.tokens, T);
  for (const auto &p : bld.graph().params())
    EXPECT_EQ(sh.elementDivisor(p->value), llvm::StringRef(p->value->name).contains(".experts.") ? 2u : 1u);
  const MeshTraffic &mt = ctx.get<StepTimeline>().meshTraffic();
  ASSERT_EQ(mt.collectives.size(), 2u);
  const double S = 1.25 * T * 1 * H * 4;
  for (const MeshCollective &c : mt.collectives) {
    EXPECT_EQ(c.collective, "all_to_all");
    EXPECT_EQ(c.calls, 2u);
    EXPECT_DOUBLE_EQ(c.bytesPerCall, S);
    EXPECT_DOUBLE_EQ(c.bytesPerRank, 2 * 0.5 * S);
  }
  EXPECT_FALSE(sh.assumptions().empty());
  // ep is carved from dp-shard: each rank keeps its ep share of the experts,
  // and their states shard over the remaining dp_shard / ep ranks (torchtitan's
  // dp_shard_mod_ep mesh), so an expert's states per GPU are those without ep.
  graphlint::Setup noEp = setup;
  noEp.ep = 1;
  ASSERT_FALSE(noEp.resolveMesh());
  AnalysisContext plain(bld.model(), noEp);
  const MemorySummary &with = ctx.get<MemoryPlan>().summary(), &without = plain.get<MemoryPlan>().summary();
  EXPECT_EQ(with.paramsBytes, without.paramsBytes);
  EXPECT_EQ(with.gradsBytes, without.gradsBytes);
  EXPECT_EQ(with.optimizerBytes, without.optimizerBytes);
}

// GL201's advice: the memory plan again at a raised tp; a larger tp holds less.
TEST(MeshAdvice, RaisedTpShrinksThePeak) {
  auto two = importFixture(kTwoLayers);
  graphlint::Setup setup = bf16();
  AnalysisContext ctx(*two, setup);
  uint64_t now = ctx.get<MemoryPlan>().summary().peakReservedBytes;
  uint64_t last = now;
  unsigned tps = 0;
  for (const MeshCandidate &c : ctx.get<MeshAdvice>().candidates())
    if (c.knob == "tp") {
      EXPECT_LT(c.peakReservedBytes, last) << c.describe();
      last = c.peakReservedBytes;
      ++tps;
    }
  EXPECT_EQ(tps, 3u);  // tp 2, 4, 8
}

}  // namespace

// --memory-plot under a mesh: below the chart, each pipeline rank's peak and
// each mesh dimension's collectives with their link, bytes and hidden time.
TEST(MeshPlot, SvgListsStagesAndMeshCollectives) {
  auto two = importFixture(kTwoLayers);
  graphlint::Setup setup = bf16(2, 2);
  setup.microbatches = 4;
  LintOptions o;
  o.setup = setup;
  FileReport r = lintModel(*two, o);
  ASSERT_EQ(r.memory.stages.size(), 2u);
  ASSERT_TRUE(r.cost.communication.present);
  std::string svg;
  llvm::raw_string_ostream os(svg);
  renderMemorySvg(r.memory, &r.cost.communication, "m.fx.json", os);
  os.flush();
  EXPECT_NE(svg.find("pipeline: 2 ranks, 1f1b, 4 micro-batches"), std::string::npos) << svg;
  for (const MemorySummary::Stage &st : r.memory.stages)
    EXPECT_NE(svg.find(fmt::format("rank {}: {} reserved at its peak", st.rank,
                                   formatBytes(static_cast<double>(st.peakReservedBytes)))),
              std::string::npos)
        << svg;
  size_t listed = 0;
  for (const MeshCollective &c : r.cost.communication.mesh.collectives) {
    EXPECT_NE(svg.find(fmt::format("{} {} x{} on {}", c.phase, c.collective, c.calls, c.link)), std::string::npos)
        << c.dim << " " << c.collective << "\n" << svg;
    ++listed;
  }
  EXPECT_GE(listed, 4u);  // tp's all-gather and reduce-scatter both ways, pp's sends
  // Without a communication summary the chart stands alone, as before.
  std::string plain;
  llvm::raw_string_ostream ps(plain);
  renderMemorySvg(r.memory, "m.fx.json", ps);
  ps.flush();
  EXPECT_EQ(plain.find("communication per step"), std::string::npos);
  EXPECT_NE(plain.find("pipeline: 2 ranks"), std::string::npos);
}

// torchtitan applies fully_shard over dp_shard x cp (its dp_shard_cp mesh;
// ParallelDims.fsdp_enabled is dp_shard > 1 or cp > 1): cp ranks without a
// dp-shard degree still split the model states between them.
TEST(ContextParallel, StatesShardOverDpShardTimesCp) {
  auto two = importFixture(kTwoLayers);
  auto fsdp = [](unsigned dpShard, unsigned cp) {
    graphlint::Setup s = bf16(1, 1, cp);
    s.dpShard = dpShard;
    EXPECT_FALSE(s.resolveMesh());
    return s;
  };
  graphlint::Setup cp2 = fsdp(1, 2), dp2 = fsdp(2, 1), cp2dp2 = fsdp(2, 2), dp4 = fsdp(4, 1);
  EXPECT_EQ(cp2.mesh.dataParallel, DataParallel::FSDP2);
  EXPECT_EQ(cp2.mesh.shardGroup(), 2u);
  EXPECT_EQ(cp2dp2.mesh.shardGroup(), 4u);
  auto states = [&](const graphlint::Setup &s) {
    AnalysisContext c(*two, s);
    const MemorySummary &m = c.get<MemoryPlan>().summary();
    EXPECT_EQ(c.get<StepTimeline>().strategy(), ParallelStrategy::FSDP2);
    return std::tuple{m.paramsBytes, m.gradsBytes, m.optimizerBytes};
  };
  EXPECT_EQ(states(cp2), states(dp2));
  EXPECT_EQ(states(cp2dp2), states(dp4));
  EXPECT_LT(std::get<2>(states(dp4)), std::get<2>(states(dp2)));
}
