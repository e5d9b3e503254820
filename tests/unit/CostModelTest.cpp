// The compute and communication model (docs/cost-model.md): the α-β collective
// formulas in closed form, DDP's bucket assignment against PyTorch's, per-rank
// volumes of DDP and ZeRO-1/2/3, the step timeline, GL301 exposed-communication,
// GL302 oversized-parameter, and FLOP counts against published figures.
#include "IrBuilder.h"
#include "TestSupport.h"

#include "graphlint/analyses/Collectives.h"
#include "graphlint/analyses/ComputeModel.h"
#include "graphlint/report/Reporters.h"
#include "graphlint/analyses/StepTimeline.h"

#include <fmt/format.h>

#include <llvm/Support/FileSystem.h>

#include <gtest/gtest.h>

#include <cmath>
#include <tuple>
#include <cstdlib>

using namespace graphlint;
using namespace graphlint::test;

namespace {

constexpr double MiB = 1024.0 * 1024.0;

bool contains(const std::string &s, const std::string &part) { return s.find(part) != std::string::npos; }
#define EXPECT_HAS(text, part) EXPECT_TRUE(contains(text, part)) << "missing '" << (part) << "' in: " << (text)

// A link with round numbers: 100 GB/s, no size dependence, 2 us per step.
Interconnect plainLink(double gbps = 100, double latencyUs = 2) {
  Interconnect l;
  l.name = "test";
  l.bandwidth = gbps * 1e9;
  l.efficiency = 1;
  l.latency = latencyUs * 1e-6;
  l.halfBandwidthBytes = 0;
  return l;
}

// `layers` square fp32 MatMul+Relu layers of `width`, batch `batch`: the
// parameters w0..w{n-1} in forward (initializer) order.
std::unique_ptr<Model> mlp(unsigned layers, int64_t width, int64_t batch) {
  IrBuilder b;
  Value *h = b.input("x", f32({batch, width}));
  for (unsigned i = 0; i < layers; ++i) {
    Value *w = b.param("w" + std::to_string(i), f32({width, width}));
    Node *mm = b.node("MatMul", {h, w}, {"mm" + std::to_string(i)}, {f32({batch, width})});
    Node *relu = b.node("Relu", {mm->outputs[0]}, {"h" + std::to_string(i)}, {f32({batch, width})});
    h = relu->outputs[0];
  }
  b.output(h);
  return b.take();
}

graphlint::Setup training(unsigned world, unsigned zero = 0) {
  graphlint::Setup s;
  s.train = true;
  s.worldSize = world;
  s.zero = zero;
  s.target = "H100-SXM";
  EXPECT_FALSE(s.resolveMesh());
  return s;
}

struct Linted {
  std::unique_ptr<Model> model;
  FileReport report;
};

Linted lintWith(std::unique_ptr<Model> m, const graphlint::Setup &s) {
  LintOptions o;
  o.setup = s;
  FileReport r = lintModel(*m, o);
  return {std::move(m), std::move(r)};
}

}  // namespace

// ---- collectives ----------------------------------------------------------

TEST(Collectives, RingTimesAreTheAlphaBetaFormula) {
  Interconnect l = plainLink();
  const double S = 64 * MiB;
  for (unsigned n : {2u, 4u, 8u}) {
    SCOPED_TRACE(n);
    double alpha = 2e-6, B = 100e9;
    EXPECT_NEAR(ringSeconds(CollectiveKind::AllReduce, S, n, l), 2 * (n - 1) * alpha + 2.0 * (n - 1) / n * S / B, 1e-15);
    EXPECT_NEAR(ringSeconds(CollectiveKind::ReduceScatter, S, n, l), (n - 1) * alpha + 1.0 * (n - 1) / n * S / B, 1e-15);
    EXPECT_NEAR(ringSeconds(CollectiveKind::AllGather, S, n, l), (n - 1) * alpha + 1.0 * (n - 1) / n * S / B, 1e-15);
    EXPECT_DOUBLE_EQ(bytesPerRank(CollectiveKind::AllReduce, S, n), 2.0 * (n - 1) / n * S);
    EXPECT_DOUBLE_EQ(bytesPerRank(CollectiveKind::ReduceScatter, S, n), 1.0 * (n - 1) / n * S);
  }
  EXPECT_EQ(ringSeconds(CollectiveKind::AllReduce, S, 1, l), 0);
}

TEST(Collectives, BusBandwidthGrowsWithTheStepSize) {
  Interconnect l = plainLink();
  l.efficiency = 0.8;
  l.halfBandwidthBytes = 65536;
  EXPECT_DOUBLE_EQ(l.busBandwidth(65536), 0.5 * 0.8 * 100e9);
  EXPECT_NEAR(l.busBandwidth(1e12), 0.8 * 100e9, 1e-6 * 0.8 * 100e9);
  EXPECT_LT(l.busBandwidth(4096), l.busBandwidth(1 << 20));
}

TEST(Collectives, OneNodeRingsAndSeveralNodesPickTheFastestAlgorithm) {
  Topology t;
  t.ranks = 8;
  t.perNode = 8;
  t.intra = plainLink(400, 1);
  t.inter = plainLink(50, 5);
  CollectiveTime one = collectiveSeconds(CollectiveKind::AllReduce, 100 * MiB, t);
  EXPECT_EQ(one.algo, CollectiveAlgo::Ring);
  EXPECT_DOUBLE_EQ(one.seconds, ringSeconds(CollectiveKind::AllReduce, 100 * MiB, 8, t.intra));

  t.ranks = 64;  // 8 nodes
  // Large: the inter-node ring carries 1/8 of the buffer per GPU when reduced
  // inside the node first.
  CollectiveTime big = collectiveSeconds(CollectiveKind::AllReduce, 100 * MiB, t);
  EXPECT_EQ(big.algo, CollectiveAlgo::Hierarchical);
  double shard = 100 * MiB / 8;
  EXPECT_NEAR(big.seconds,
              2 * ringSeconds(CollectiveKind::ReduceScatter, 100 * MiB, 8, t.intra) +
                  ringSeconds(CollectiveKind::AllReduce, shard, 8, t.inter),
              1e-12);
  // Small: latency dominates and the tree's log2(nodes) depth wins.
  CollectiveTime small = collectiveSeconds(CollectiveKind::AllReduce, 4096, t);
  EXPECT_EQ(small.algo, CollectiveAlgo::Tree);
  EXPECT_NEAR(small.seconds, 2 * (3 * 5e-6 + 7 * 1e-6) + 2 * 4096 / 50e9, 1e-12);
  EXPECT_EQ(collectiveSeconds(CollectiveKind::AllReduce, 4096, Topology{}).seconds, 0);
}

// ---- DDP buckets ------------------------------------------------------------

// Expected lists from PyTorch 1.13 itself (the Debian build):
//   dist._compute_bucket_assignment_by_size(tensors, [1 MiB, 25 MiB],
//       [False] * 11, list(range(11)))
// with fp32 tensors of 0.3, 0.5, 0.4, (one fp16 tensor of 1000 elements),
// 10, 20, 5, 30, 1, 2, 26 MiB in gradient-ready order, which returned
// [[0, 1, 2], [4, 5], [6, 7], [8, 9, 10], [3]].
TEST(DdpBuckets, AssignmentMatchesPyTorch) {
  std::vector<double> mib = {0.3, 0.5, 0.4, 0, 10, 20, 5, 30, 1, 2, 26};
  std::vector<double> bytes;
  std::vector<int> keys;
  for (double m : mib) {
    bytes.push_back(m > 0 ? std::floor(m * MiB / 4) * 4 : 2000);
    keys.push_back(m > 0 ? 1 : 10);
  }
  auto b = assignBuckets(bytes, keys, {kFirstBucketBytes, kBucketBytes});
  std::vector<std::vector<unsigned>> expected = {{0, 1, 2}, {4, 5}, {6, 7}, {8, 9, 10}, {3}};
  EXPECT_EQ(b, expected);
}

TEST(DdpBuckets, ReverseParameterOrderAndReadyTimes) {
  // 10 layers of 1024x1024 fp32 (4 MiB each): gradients are ready from w9
  // down to w0; the first bucket closes at 1 MiB (w9 alone), the next at
  // 25 MiB (seven layers, 28 MiB), the rest is the last bucket.
  auto m = mlp(10, 1024, 64);
  graphlint::Setup s = training(8);
  AnalysisContext ctx(*m, s);
  const StepTimeline &st = ctx.get<StepTimeline>();
  const ComputeModel &cm = ctx.get<ComputeModel>();
  ASSERT_TRUE(st.active());
  EXPECT_EQ(st.strategy(), ParallelStrategy::DDP);
  auto names = [&](const ParamBucket &b) {
    std::string out;
    for (unsigned p : b.params)
      out += (out.empty() ? "" : ",") + cm.params()[p].value->name;
    return out;
  };
  ASSERT_EQ(st.buckets().size(), 3u);
  EXPECT_EQ(names(st.buckets()[0]), "w9");
  EXPECT_EQ(names(st.buckets()[1]), "w8,w7,w6,w5,w4,w3,w2");
  EXPECT_EQ(names(st.buckets()[2]), "w1,w0");
  EXPECT_DOUBLE_EQ(st.buckets()[1].bytes, 28 * MiB);
  for (size_t i = 1; i < st.buckets().size(); ++i) {
    EXPECT_GT(st.buckets()[i].readySeconds, st.buckets()[i - 1].readySeconds);
    EXPECT_GE(st.buckets()[i].startSeconds, st.buckets()[i - 1].endSeconds);  // FIFO on one stream
    EXPECT_GE(st.buckets()[i].startSeconds, st.buckets()[i].readySeconds);
  }
  // w0's gradient is the last one computed: the last bucket is ready when the
  // backward ends, so its whole all-reduce is exposed.
  EXPECT_NEAR(st.buckets()[2].readySeconds, st.forwardSeconds() + st.backwardSeconds(), 1e-12);
  double lastAllReduce = st.buckets()[2].endSeconds - st.buckets()[2].startSeconds;
  EXPECT_GE(st.exposedSeconds() + 1e-15, lastAllReduce);
  // DDP: the step is forward + backward + what is exposed + the optimizer.
  EXPECT_NEAR(st.stepSeconds(),
              st.forwardSeconds() + st.backwardSeconds() + st.exposedSeconds() + st.optimizerSeconds(), 1e-12);
}

// ---- per-rank volumes and the step timeline --------------------------------

TEST(StepTimeline, PerRankVolumesAreTheZeroPapersClosedForms) {
  auto m = mlp(12, 1024, 32);
  const double psi = 12 * 1024.0 * 1024.0 * 4;  // fp32 gradient / parameter bytes
  for (unsigned n : {2u, 8u, 64u})
    for (unsigned zero : {0u, 1u, 2u, 3u}) {
      SCOPED_TRACE(testing::Message() << "n=" << n << " zero=" << zero);
      graphlint::Setup s = training(n, zero);
      AnalysisContext ctx(*m, s);
      const StepTimeline &st = ctx.get<StepTimeline>();
      double factor = zero == 3 ? 3 : 2;
      EXPECT_NEAR(st.bytesPerRank(), factor * (n - 1) / n * psi, 1e-6 * psi);
      EXPECT_GT(st.stepSeconds(), st.forwardSeconds() + st.backwardSeconds());
      EXPECT_GE(st.overlapRatio(), 0);
      EXPECT_LE(st.overlapRatio(), 1);
    }
}

TEST(StepTimeline, SingleGpuAndInferenceHaveNoCommunication) {
  auto m = mlp(4, 256, 8);
  graphlint::Setup one = training(1);
  AnalysisContext ctx(*m, one);
  const StepTimeline &st = ctx.get<StepTimeline>();
  ASSERT_TRUE(st.active());
  EXPECT_EQ(st.strategy(), ParallelStrategy::Single);
  EXPECT_TRUE(st.collectives().empty());
  EXPECT_EQ(st.exposedSeconds(), 0);
  EXPECT_NEAR(st.stepSeconds(), st.forwardSeconds() + st.backwardSeconds() + st.optimizerSeconds(), 1e-15);
  graphlint::Setup inference;
  AnalysisContext ictx(*m, inference);
  EXPECT_FALSE(ictx.get<StepTimeline>().active());
}

TEST(StepTimeline, BackwardIsAboutTwiceForwardAndTheFirstLayerSkipsDx) {
  auto m = mlp(4, 512, 64);
  graphlint::Setup s = training(1);
  AnalysisContext ctx(*m, s);
  const ComputeModel &cm = ctx.get<ComputeModel>();
  double mm = 2.0 * 64 * 512 * 512;
  EXPECT_DOUBLE_EQ(cm.forwardTotal().matmulFlops, 4 * mm);
  // dW for every layer, dX for all but the first (its input is data).
  EXPECT_DOUBLE_EQ(cm.backwardTotal().matmulFlops, 4 * mm + 3 * mm);
  EXPECT_EQ(cm.params().size(), 4u);
  EXPECT_DOUBLE_EQ(cm.paramElements(), 4 * 512.0 * 512);
}

TEST(StepTimeline, ZeroThreeGathersBeforeTheForwardNeedsTheParameters) {
  auto m = mlp(16, 2048, 16);  // 16 MiB per layer: one unit per two layers
  graphlint::Setup s = training(8, 3);
  AnalysisContext ctx(*m, s);
  const StepTimeline &st = ctx.get<StepTimeline>();
  ASSERT_EQ(st.strategy(), ParallelStrategy::ZeRO3);
  unsigned gathers = 0, scatters = 0;
  for (const CollectiveCall &c : st.collectives()) {
    gathers += c.kind == CollectiveKind::AllGather;
    scatters += c.kind == CollectiveKind::ReduceScatter;
    EXPECT_GE(c.startSeconds, c.releaseSeconds);
  }
  EXPECT_EQ(gathers, 2 * st.buckets().size());  // forward and backward
  EXPECT_EQ(scatters, st.buckets().size());
  // The first unit's gather cannot hide behind anything: the forward waits.
  const CollectiveCall &first = st.collectives().front();
  EXPECT_EQ(first.phase, "forward");
  EXPECT_GT(st.forwardSeconds(), first.endSeconds - 1e-15);
  EXPECT_GT(st.exposedSeconds(), 0);
}

// ---- GL301 exposed-communication ------------------------------------------

TEST(RulesExposedCommunication, SlowInterconnectExposesTheReduction) {
  graphlint::Setup s = training(16);
  s.gpusPerNode = 1;  // every rank its own node: the ring runs on the NIC
  s.inter = "hdr";
  auto l = lintWith(mlp(8, 2048, 8), s);
  auto d = withCode(l.report, "GL301");
  if (std::getenv("GRAPHLINT_PRINT_COST"))  // the example of docs/rules/GL301-exposed-communication.md
    renderText({l.report}, llvm::outs(), false);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0]->severity, Severity::Warning);
  EXPECT_HAS(d[0]->message, "exposed communication");
  EXPECT_HAS(d[0]->message, "on 16 ranks (ddp, nvlink4 inside a node, hdr between nodes)");
  ASSERT_GE(d[0]->notes.size(), 2u);
  EXPECT_HAS(d[0]->notes[0].message, "MB sent per rank");
  EXPECT_FALSE(d[0]->location.nodeIndex);  // about the whole step

  // A threshold above the exposed share silences it.
  s.ruleOptions["GL301"]["threshold"] = 1.0;
  EXPECT_TRUE(withCode(lintWith(mlp(8, 2048, 8), s).report, "GL301").empty());
}

TEST(RulesExposedCommunication, SingleGpuAndInferenceAreNotReported) {
  EXPECT_TRUE(withCode(lintWith(mlp(8, 2048, 8), training(1)).report, "GL301").empty());
  EXPECT_TRUE(withCode(lintWith(mlp(8, 2048, 8), graphlint::Setup{}).report, "GL301").empty());
}

// ---- GL302 oversized-parameter ---------------------------------------------

TEST(RulesOversizedParameter, ParameterLargerThanABucketIsNamedWithItsSize) {
  IrBuilder b;
  Value *x = b.input("x", f32({8, 4096}));
  Value *big = b.param("lm_head.weight", f32({4096, 2048}));  // 32 MiB of fp32 gradient
  Value *small = b.param("proj.weight", f32({2048, 256}));
  Node *a = b.node("MatMul", {x, big}, {"h"}, {f32({8, 2048})}, "/lm_head/MatMul");
  Node *c = b.node("MatMul", {a->outputs[0], small}, {"y"}, {f32({8, 256})});
  b.output(c->outputs[0]);
  auto l = lintWith(b.take(), training(8));
  auto d = withCode(l.report, "GL302");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_HAS(d[0]->message, "parameter 'lm_head.weight' (32.00 MiB of gradient)");
  EXPECT_HAS(d[0]->message, "larger than the 25.00 MiB gradient bucket");
  EXPECT_EQ(d[0]->location.nodeName, "/lm_head/MatMul");
  EXPECT_HAS(d[0]->notes.back().message, "DDP's bucket_cap_mb");
  // Not training data-parallel: nothing to say.
  IrBuilder b2;
  Value *x2 = b2.input("x", f32({8, 4096}));
  Value *big2 = b2.param("w", f32({4096, 2048}));
  b2.output(b2.node("MatMul", {x2, big2}, {"h"}, {f32({8, 2048})})->outputs[0]);
  EXPECT_TRUE(withCode(lintWith(b2.take(), training(1)).report, "GL302").empty());
}

TEST(RulesOversizedParameter, OneFindingPerModelWithTheListAndTheStrategysKnob) {
  auto stack = [] {
    IrBuilder b;
    Value *h = b.input("x", f32({8, 4096}));
    for (int i = 0; i < 4; ++i) {
      Value *w = b.param("blocks." + std::to_string(i) + ".fc.weight", f32({4096, 4096}));  // 64 MiB each
      h = b.node("MatMul", {h, w}, {"h" + std::to_string(i)}, {f32({8, 4096})})->outputs[0];
    }
    b.output(h);
    return b.take();
  };
  auto ddpLint = lintWith(stack(), training(8));
  auto ddp = withCode(ddpLint.report, "GL302");
  ASSERT_EQ(ddp.size(), 1u);
  EXPECT_HAS(ddp[0]->message, "4 parameters (256.00 MiB of gradient) are each larger than the 25.00 MiB");
  EXPECT_HAS(ddp[0]->notes[1].message, "blocks.{N}.fc.weight (4 x up to 64.00 MiB)");
  EXPECT_HAS(ddp[0]->notes.back().message, "DDP's bucket_cap_mb");
  // Under ZeRO-2 the buckets are DeepSpeed's: no DDP bucket to raise.
  auto zLint = lintWith(stack(), training(8, 2));
  auto z = withCode(zLint.report, "GL302");
  ASSERT_EQ(z.size(), 1u);
  EXPECT_EQ(z[0]->notes.back().message.find("bucket_cap_mb"), std::string::npos) << z[0]->notes.back().message;
  EXPECT_HAS(z[0]->notes.back().message, "reduce_bucket_size");
  // ZeRO-3 and FSDP reduce per unit: no bucket for a parameter to outgrow.
  EXPECT_TRUE(withCode(lintWith(stack(), training(8, 3)).report, "GL302").empty());
}

// ---- FLOPs against published figures ---------------------------------------

namespace {

ComputeModel *computeOf(const Model &m, const graphlint::Setup &s, std::unique_ptr<AnalysisContext> &keep) {
  keep = std::make_unique<AnalysisContext>(m, s);
  return const_cast<ComputeModel *>(&keep->get<ComputeModel>());
}

std::unique_ptr<Model> importPath(const std::string &path, std::map<std::string, int64_t> dims) {
  ImportOptions io;
  io.dims = std::move(dims);
  auto m = importModelFile(path, io);
  if (!m) {
    ADD_FAILURE() << llvm::toString(m.takeError());
    return nullptr;
  }
  return std::move(*m);
}

// A training step's contraction FLOPs over 6 x non-embedding parameters x
// tokens (Kaplan et al. 2020).
double ratioToSixNT(const ComputeModel &cm, double tokens) {
  double embeddings = 0;
  for (const TrainableParam &p : cm.params())
    if (contains(p.value->name, "emb"))
      embeddings += p.elements;
  double step = cm.forwardTotal().matmulFlops + cm.backwardTotal().matmulFlops;
  return step / (6 * (cm.paramElements() - embeddings) * tokens);
}

}  // namespace

// torchvision's table: resnet18 1.81 GFLOPS (fvcore counts a multiply-add as
// one); the usual figure is 1.82 GMACs at 224x224.
TEST(FlopCounts, BundledResnet18Is1Point82GMacs) {
  auto m = importPath(sourcePath("models/resnet18.onnx"), {{"batch", 1}});
  ASSERT_TRUE(m);
  graphlint::Setup s;
  std::unique_ptr<AnalysisContext> keep;
  const ComputeModel *cm = computeOf(*m, s, keep);
  double gmacs = cm->forwardTotal().matmulFlops / 2 / 1e9;
  EXPECT_NEAR(gmacs, 1.82, 0.02 * 1.82) << gmacs;
  EXPECT_EQ(cm->unknownGroups(), 0u);
  EXPECT_NEAR(cm->paramElements(), 11.69e6, 0.01e6);
}

// A GPT-style decoder's training step is ~6 x parameters x tokens (Kaplan et
// al. 2020: parameters without the embeddings; the matmul FLOPs, attention
// scores add 6 x n_layer x seq x d per token).
TEST(FlopCounts, BundledGptTinyTrainingStepIsSixTimesParamsTimesTokens) {
  const int64_t batch = 16, seq = 16;
  auto m = importPath(sourcePath("models/gpt_tiny.onnx"), {{"batch", batch}, {"seq", seq}});
  ASSERT_TRUE(m);
  graphlint::Setup s = training(1);
  std::unique_ptr<AnalysisContext> keep;
  const ComputeModel *cm = computeOf(*m, s, keep);
  EXPECT_NEAR(ratioToSixNT(*cm, batch * seq), 1.0, 0.02);
  EXPECT_NEAR(cm->backwardTotal().matmulFlops / cm->forwardTotal().matmulFlops, 2.0, 1e-9);
}

// The real-model checks: exported by models/export_cost_validation.py into
// build/tmp/cost-validation (torch needed); skipped when absent.
TEST(FlopCounts, ExportedModelsMatchPublishedFigures) {
  std::string dir = binaryPath("tmp/cost-validation");
  struct Case {
    const char *file;
    double published;  // GMACs (torchvision's "GFLOPS" column counts MACs)
    std::map<std::string, int64_t> dims;
  };
  const Case cases[] = {{"resnet50.onnx", 4.09, {{"batch", 1}}}, {"vit_b_16.onnx", 17.56, {{"batch", 1}}}};
  unsigned ran = 0;
  for (const Case &c : cases) {
    std::string path = dir + "/" + c.file;
    if (!llvm::sys::fs::exists(path))
      continue;
    ++ran;
    auto m = importPath(path, c.dims);
    ASSERT_TRUE(m);
    graphlint::Setup s;
    std::unique_ptr<AnalysisContext> keep;
    const ComputeModel *cm = computeOf(*m, s, keep);
    double gmacs = cm->forwardTotal().matmulFlops / 2 / 1e9;
    EXPECT_NEAR(gmacs, c.published, 0.02 * c.published) << c.file << ": " << gmacs;
  }
  std::string gpt = dir + "/gpt2_small.onnx";
  if (llvm::sys::fs::exists(gpt)) {
    ++ran;
    auto m = importPath(gpt, {{"batch", 8}, {"seq", 128}});
    ASSERT_TRUE(m);
    graphlint::Setup s = training(1);
    std::unique_ptr<AnalysisContext> keep;
    EXPECT_NEAR(ratioToSixNT(*computeOf(*m, s, keep), 8 * 128), 1.0, 0.02);
  }
  if (!ran)
    GTEST_SKIP() << "no exported models in " << dir << " (run /usr/bin/python3 models/export_cost_validation.py)";
}

// docs/cost-model.md's worked example: the GPT-2-small-sized decoder on 8
// GPUs of one node, DDP and ZeRO-3, A100 and H100 over NVLink. The volumes
// are the closed forms; GRAPHLINT_PRINT_COST=1 prints the tables the page shows.
TEST(WorkedExample, Gpt2SmallOnEightGpus) {
  std::string path = binaryPath("tmp/cost-validation/gpt2_small.onnx");
  if (!llvm::sys::fs::exists(path))
    GTEST_SKIP() << "run /usr/bin/python3 models/export_cost_validation.py --only gpt2_small";
  auto m = importPath(path, {{"batch", 8}, {"seq", 1024}});
  ASSERT_TRUE(m);
  for (const char *target : {"A100-80GB", "H100-SXM"})
    for (unsigned zero : {0u, 3u}) {
      SCOPED_TRACE(testing::Message() << target << " zero " << zero);
      graphlint::Setup s = training(8, zero);
      s.target = target;
      s.precision = Precision::BF16Mixed;
      AnalysisContext ctx(*m, s);
      CostSummary c = summariseCost(*m, ctx);
      const StepTimeline &st = ctx.get<StepTimeline>();
      double psi = ctx.get<ComputeModel>().paramElements();
      // One precision policy (precisionPolicy): bf16-mixed keeps and moves
      // 2-byte gradients, under DDP as under ZeRO-3 (which also gathers
      // bf16 parameters): 2Ψ vs 3Ψ elements of 2 bytes, times (n-1)/n.
      double expected = zero == 3 ? 3.0 * 7 / 8 * psi * 2 : 2.0 * 7 / 8 * psi * 2;
      EXPECT_NEAR(st.bytesPerRank(), expected, 1e-9 * expected);
      EXPECT_GT(st.mfu(), 0.2);
      EXPECT_LT(st.mfu(), 0.7);
      if (std::getenv("GRAPHLINT_PRINT_COST")) {
        std::string title = fmt::format("gpt2_small.onnx ({}, zero {})", target, zero);
        renderCostText(c, title, llvm::outs());
        llvm::outs().flush();
      }
    }
}

// ---- interconnect profiles ---------------------------------------------------

TEST(Interconnects, ShippedYamlMatchesBuiltinTable) {
  std::string text = readFile(sourcePath("data/hardware.yaml"));
  auto links = parseInterconnectYaml(text, "hardware.yaml");
  ASSERT_TRUE(bool(links)) << llvm::toString(links.takeError());
  HardwareCatalog builtin = HardwareCatalog::builtin();
  // Both sides compute each field the same way (GB/s x 1e9, us x 1e-6), so
  // the doubles compare exactly.
  auto fields = [](const Interconnect &l) {
    return std::make_tuple(l.name, l.aliases, l.description, l.bandwidth, l.efficiency, l.latency,
                           l.halfBandwidthBytes, l.source);
  };
  ASSERT_EQ(links->size(), builtin.interconnects().size());
  for (size_t i = 0; i < links->size(); ++i)
    EXPECT_EQ(fields((*links)[i]), fields(builtin.interconnects()[i]));
  // Every profile's default links exist.
  for (const HardwareProfile &p : builtin.profiles()) {
    EXPECT_TRUE(builtin.findInterconnect(p.intraNode)) << p.name << ": " << p.intraNode;
    EXPECT_TRUE(builtin.findInterconnect(p.interNode)) << p.name << ": " << p.interNode;
  }
  const HardwareProfile &h100 = *builtin.find("h100");
  EXPECT_EQ(h100.intraNode, "nvlink4");
  EXPECT_EQ(h100.interNode, "ndr");
  EXPECT_DOUBLE_EQ(builtin.findInterconnect("NVLink-4")->bandwidth, 450e9);  // 900 GB/s both directions
  EXPECT_DOUBLE_EQ(builtin.findInterconnect("ib_ndr")->bandwidth, 50e9);     // 400 Gb/s
}

TEST(Interconnects, UserFileAddsLinksAndTheTimelineUsesThem) {
  const char *yaml = R"(
profiles:
  - name: MI300X
    sm_count: 304
    memory_gib: 192
    memory_bandwidth_gb_per_s: 5300
    peak_tflops: { fp32: 163.4, bf16: 1307.4 }
    compute_efficiency: 0.6
    intra_node: xgmi
interconnects:
  - name: xgmi
    aliases: [infinity-fabric]
    bandwidth_gb_per_s: 64
    latency_us: 2
)";
  auto links = parseInterconnectYaml(yaml, "user.yaml");
  ASSERT_TRUE(bool(links)) << llvm::toString(links.takeError());
  ASSERT_EQ(links->size(), 1u);
  EXPECT_DOUBLE_EQ((*links)[0].efficiency, 0.8);  // default
  EXPECT_DOUBLE_EQ((*links)[0].latency, 2e-6);
  EXPECT_DOUBLE_EQ((*links)[0].halfBandwidthBytes, 65536);
  auto profiles = parseHardwareYaml(yaml, "user.yaml");
  ASSERT_TRUE(bool(profiles));
  EXPECT_EQ((*profiles)[0].intraNode, "xgmi");
  EXPECT_EQ((*profiles)[0].interNode, "hdr");  // default
  EXPECT_DOUBLE_EQ((*profiles)[0].computeEfficiency, 0.6);
  HardwareCatalog c = HardwareCatalog::builtin();
  c.mergeInterconnects(std::move(*links));
  EXPECT_EQ(c.findInterconnect("infinity fabric")->name, "xgmi");
  EXPECT_TRUE(c.findInterconnect("nvlink3"));

  auto bad = parseInterconnectYaml("profiles: []\ninterconnects:\n  - name: x\n    bandwidth_gb_per_s: 10\n"
                                   "    efficiency: 1.5\n",
                                   "bad.yaml");
  ASSERT_FALSE(bool(bad));
  std::string msg = llvm::toString(bad.takeError());
  EXPECT_HAS(msg, "bad.yaml");
  EXPECT_HAS(msg, "interconnect 'x'");
  auto missing = parseInterconnectYaml("profiles: []\ninterconnects:\n  - name: x\n", "m.yaml");
  ASSERT_FALSE(bool(missing));
  EXPECT_HAS(llvm::toString(missing.takeError()), "bandwidth_gb_per_s");
}

TEST(Interconnects, UnknownNamesFallBackToTheTargetsDefaultWithANote) {
  auto m = mlp(2, 256, 8);
  graphlint::Setup s = training(8);
  s.intra = "nvlink9";
  AnalysisContext ctx(*m, s);
  const StepTimeline &st = ctx.get<StepTimeline>();
  EXPECT_EQ(st.topology().intra.name, "nvlink4");
  ASSERT_EQ(st.notes().size(), 1u);
  EXPECT_HAS(st.notes()[0], "unknown intra-node interconnect 'nvlink9'");
  s.intra = "pcie5";
  AnalysisContext ctx2(*m, s);
  EXPECT_EQ(ctx2.get<StepTimeline>().topology().intra.name, "pcie5");
  EXPECT_TRUE(ctx2.get<StepTimeline>().notes().empty());
}
