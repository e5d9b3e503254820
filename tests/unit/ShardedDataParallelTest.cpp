// Sharded data parallelism as it runs (issue 41, user-trial item 1 and 5):
// ZeRO-2/3 and FSDP2 reduce-scatter each gradient bucket or unit during the
// backward and keep only the shard, stage 3 gathers each unit around its
// forward and backward with the next one prefetched, FSDP2's mixed precision
// gathers bf16 and reduces fp32, HSDP all-reduces the shards across the
// replicas. Closed forms: model states per rank and bytes per rank.
#include "IrBuilder.h"
#include "TestSupport.h"

#include "graphlint/analyses/MemoryPlan.h"
#include "graphlint/analyses/ShardingUnits.h"
#include "graphlint/analyses/StepTimeline.h"
#include "graphlint/engine/CostSummary.h"
#include "graphlint/engine/Driver.h"
#include "graphlint/report/Reporters.h"

#include <gtest/gtest.h>

using namespace graphlint;
using namespace graphlint::test;

namespace {

constexpr double MiB = 1024.0 * 1024.0;

// `blocks` blocks of MatMul -> Relu -> MatMul under blocks.i (two
// width x width fp32 weights each), after a stem Relu: the repeated blocks
// FSDP wraps, no root parameters.
std::unique_ptr<Model> blocks(unsigned n, int64_t width, int64_t batch) {
  IrBuilder b;
  Value *x = b.input("x", f32({batch, width}));
  Node *stem = b.node("Relu", {x}, {"stem"}, {f32({batch, width})});
  stem->modulePath = "stem";
  Value *cur = stem->outputs[0];
  for (unsigned i = 0; i < n; ++i) {
    std::string p = "blocks." + std::to_string(i);
    Value *w1 = b.param(p + ".fc1.weight", f32({width, width}));
    Value *w2 = b.param(p + ".fc2.weight", f32({width, width}));
    Node *fc1 = b.node("MatMul", {cur, w1}, {p + ".h"}, {f32({batch, width})});
    Node *act = b.node("Relu", {fc1->outputs[0]}, {p + ".r"}, {f32({batch, width})});
    Node *fc2 = b.node("MatMul", {act->outputs[0], w2}, {p + ".y"}, {f32({batch, width})});
    fc1->modulePath = p + ".fc1";
    act->modulePath = p + ".act";
    fc2->modulePath = p + ".fc2";
    cur = fc2->outputs[0];
  }
  b.output(cur);
  return b.take();
}

graphlint::Setup setup(Optimizer o, Precision p, std::initializer_list<std::pair<const char *, unsigned>> mesh) {
  graphlint::Setup s;
  s.train = true;
  s.optimizer = o;
  s.precision = p;
  s.target = "H100-SXM";
  for (auto [key, n] : mesh) {
    llvm::StringRef k(key);
    (k == "world" ? s.worldSize : k == "zero" ? s.zero : k == "dp_shard" ? s.dpShard : s.dpReplicate) = n;
  }
  EXPECT_FALSE(s.resolveMesh());
  return s;
}

MemorySummary planOf(const Model &m, const graphlint::Setup &s) {
  AnalysisContext ctx(m, s);
  return ctx.get<MemoryPlan>().summary();
}

uint64_t liveAt(const MemorySummary &s, const std::string &node) {
  for (const MemorySummary::Point &p : s.timeline)
    if (p.node == node)
      return p.liveBytes;
  ADD_FAILURE() << "no timeline point " << node;
  return 0;
}

}  // namespace

// User-trial item 1: a 64-rank ZeRO-2 MLP held every whole gradient at
// optimizer.step (64 MiB, as ZeRO-0). Each bucket's whole gradients go when
// it is reduce-scattered; the step holds the states and the 1/64 shards.
TEST(ShardedDataParallel, ZeroTwoKeepsOnlyTheShardsToTheOptimizerStep) {
  auto m = blocks(4, 1024, 64);  // 8 weights of 4 MiB: 32 MiB of fp32 gradients
  const uint64_t psiBytes = 8 * 1024 * 1024 * 4;
  MemorySummary z2 = planOf(*m, setup(Optimizer::SGD, Precision::FP32, {{"world", 64}, {"zero", 2}}));
  MemorySummary z0 = planOf(*m, setup(Optimizer::SGD, Precision::FP32, {{"world", 64}, {"zero", 0}}));
  EXPECT_EQ(z2.gradsBytes, psiBytes / 64);
  // The same step but for the gradients held: whole (ZeRO-0) against shards.
  EXPECT_GE(liveAt(z0, "optimizer.step") - liveAt(z2, "optimizer.step"), psiBytes - psiBytes / 64);
  EXPECT_GE(liveAt(z2, "optimizer.step"), z2.paramsBytes + z2.gradsBytes + z2.inputsBytes);
  EXPECT_LT(liveAt(z2, "optimizer.step"), z2.paramsBytes + z2.gradsBytes + z2.inputsBytes + 2 * MiB);
  // Each bucket's reduce-scatter is a point: the first (1 MiB limit) holds
  // blocks.3.fc2 alone, the second the other seven (DDP's bucket assignment).
  EXPECT_GT(liveAt(z2, "reduce_scatter bucket 1"), liveAt(z2, "optimizer.step"));
  EXPECT_LT(z2.peakAllocatedBytes, z0.peakAllocatedBytes);
}

// FSDP2 with Adam in bf16-mixed: at the optimizer step only the fp32 shards
// are left (4Ψ/N params + 4Ψ/N grads + 8Ψ/N moments); during the step each
// block's bf16 parameters are gathered (4 MiB per block here), at most the
// running block and the prefetched one at a time.
TEST(ShardedDataParallel, Fsdp2HoldsShardsAtTheStepAndTwoGatheredUnitsAtMost) {
  auto m = blocks(4, 1024, 64);
  const double psi = 8 * MiB;  // elements
  const unsigned n = 8;
  MemorySummary s = planOf(*m, setup(Optimizer::Adam, Precision::BF16Mixed, {{"dp_shard", n}}));
  EXPECT_EQ(s.paramsBytes, 4 * psi / n);
  EXPECT_EQ(s.gradsBytes, 4 * psi / n);
  EXPECT_EQ(s.optimizerBytes, 8 * psi / n);
  // Adam's two moment-sized temporaries per parameter (1/8 of 1 MiB x 4 B
  // each) come and go inside the step.
  const uint64_t states = s.paramsBytes + s.gradsBytes + s.optimizerBytes + s.inputsBytes;
  EXPECT_GE(liveAt(s, "optimizer.step"), states);
  EXPECT_LE(liveAt(s, "optimizer.step"), states + 2 * MiB);
  // Gathered parameters at the peak: "param" storages beyond the resident shards.
  uint64_t gathered = 0;
  for (const MemorySummary::Contributor &c : s.topAtPeak)
    if (c.kind == "param" && c.tensor.empty())
      gathered += c.bytes;
  const uint64_t unitBytes = 2 * 1024 * 1024 * 2;  // two weights in bf16
  EXPECT_GE(gathered, unitBytes);
  EXPECT_LE(gathered, 2 * unitBytes);
}

TEST(ShardedDataParallel, UnitsAreTheRepeatedBlocksPlusTheRoot) {
  auto m = blocks(3, 64, 4);
  std::vector<const Value *> params;
  for (const auto &p : m->graph->params())
    params.push_back(p->value);
  ShardingUnits u = shardingUnits(*m->graph, params, [](const Value *) { return 1.0; }, 1e9);
  ASSERT_TRUE(u.perBlock);
  EXPECT_EQ(u.names, (std::vector<std::string>{"blocks.0", "blocks.1", "blocks.2"}));
  EXPECT_EQ(u.root, -1);
  EXPECT_EQ(u.params[1].size(), 2u);
}

// Bytes one rank sends per step, exact: ZeRO-3 3(n-1)/n·Ψ·2 (bf16 gathers
// and reduce-scatters); FSDP2 (n-1)/n·Ψ·(2 + 2 + 4) (bf16 gathers, fp32
// reduce-scatters, torchtitan's reduce_dtype); HSDP adds each shard's
// all-reduce across r replicas, 2(r-1)/r·Ψ·4/n.
TEST(ShardedDataParallel, CommunicationVolumesAreTheClosedForms) {
  auto m = blocks(4, 1024, 256);
  const double psi = 8 * MiB;
  const double n = 8;
  auto volume = [&](const graphlint::Setup &s, ParallelStrategy want, size_t units) {
    AnalysisContext ctx(*m, s);
    const StepTimeline &st = ctx.get<StepTimeline>();
    EXPECT_EQ(st.strategy(), want);
    EXPECT_EQ(st.buckets().size(), units);
    EXPECT_EQ(st.buckets().front().name, "blocks.0");
    // Prefetch hides gathers behind the previous unit's compute.
    EXPECT_GT(st.overlapRatio(), 0.0);
    return st.bytesPerRank();
  };
  double zero3 = volume(setup(Optimizer::Adam, Precision::BF16Mixed, {{"world", 8}, {"zero", 3}}),
                        ParallelStrategy::ZeRO3, 4);
  EXPECT_NEAR(zero3, 3 * (n - 1) / n * psi * 2, 1e-6);
  double fsdp = volume(setup(Optimizer::Adam, Precision::BF16Mixed, {{"dp_shard", 8}}), ParallelStrategy::FSDP2, 4);
  EXPECT_NEAR(fsdp, (n - 1) / n * psi * (2 + 2 + 4), 1e-6);
  double hsdp = volume(setup(Optimizer::Adam, Precision::BF16Mixed, {{"dp_shard", 8}, {"dp_replicate", 2}}),
                       ParallelStrategy::FSDP2, 4);
  EXPECT_NEAR(hsdp - fsdp, 2.0 * (2 - 1) / 2 * psi * 4 / n, 1e-6);
}

// The --cost text under ZeRO-3/FSDP lists units, not DDP's gradient
// buckets, and GL302 (a parameter larger than DDP's 25 MiB bucket) has no
// bucket to advise about.
TEST(ShardedDataParallel, CostTextListsUnitsAndGl302IsSilentUnderFsdp) {
  auto m = blocks(2, 4096, 8);  // 64 MiB fp32 weights: over DDP's bucket
  for (bool fsdp : {false, true}) {
    LintOptions o;
    o.setup = fsdp ? setup(Optimizer::Adam, Precision::BF16Mixed, {{"dp_shard", 8}})
                   : setup(Optimizer::Adam, Precision::BF16Mixed, {{"world", 8}});
    o.costSummary = true;
    FileReport r = lintModel(*m, o);
    std::string text;
    llvm::raw_string_ostream os(text);
    renderCostText(r.cost, "m", os);
    os.flush();
    bool gl302 = false;
    for (const Diagnostic &d : r.diagnostics)
      gl302 |= d.code == "GL302";
    EXPECT_EQ(gl302, !fsdp) << text;
    EXPECT_EQ(text.find("  bucket "), fsdp ? std::string::npos : text.find("  bucket ")) << text;
    if (fsdp) {
      EXPECT_NE(text.find("  unit     0:"), std::string::npos) << text;
      EXPECT_NE(text.find("blocks.1"), std::string::npos) << text;
    } else {
      EXPECT_NE(text.find("  bucket "), std::string::npos) << text;
    }
  }
}
