// The memory plan against closed forms (ZeRO model states, a transformer
// layer's saved activations), the caching-allocator replay against PyTorch's
// rules, GL201-GL203, and predicted peaks against PyTorch's measured ones for
// the committed small models (tests/fixtures/memory, written by
// validation/validate_memory.py --small).
#include "IrBuilder.h"
#include "TestSupport.h"

#include "graphlint/analyses/CachingAllocator.h"
#include "graphlint/analyses/MemoryPlan.h"
#include "graphlint/report/Reporters.h"

#include <llvm/Support/JSON.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>

using namespace graphlint;
using namespace graphlint::test;

namespace {

constexpr uint64_t kMiB = 1 << 20;

/// y = x @ W with Ψ = 1024 * 1024 trainable parameters.
struct OneMatMul {
  IrBuilder b;
  OneMatMul() {
    Value *x = b.input("x", f32({8, 1024}));
    Value *w = b.param("W", f32({1024, 1024}));
    Node *mm = b.node("MatMul", {x, w}, {"y"}, {f32({8, 1024})});
    b.output(mm->outputs[0]);
  }
};

MemorySummary planOf(const Model &m, const Setup &s) {
  AnalysisContext ctx(m, s);
  return ctx.get<MemoryPlan>().summary();
}

Setup training(Precision p, unsigned zero, unsigned world) {
  Setup s;
  s.train = true;
  s.optimizer = Optimizer::Adam;
  s.precision = p;
  s.zero = zero;
  s.worldSize = world;
  EXPECT_FALSE(s.resolveMesh());
  return s;
}

TEST(MemoryPlan, ZeroStagesMatchThePaperPerRank) {
  // Rajbhandari et al. (ZeRO), mixed-precision Adam with K = 12:
  // baseline (2 + 2 + K)Ψ; P_os 2Ψ + 2Ψ + KΨ/N; P_os+g 2Ψ + (2 + K)Ψ/N; P_os+g+p (2 + 2 + K)Ψ/N.
  OneMatMul m;
  const uint64_t psi = 1024 * 1024, n = 8;
  struct Row { unsigned zero; uint64_t params, grads, optimizer; };
  for (Row r : {Row{0, 2 * psi, 2 * psi, 12 * psi}, Row{1, 2 * psi, 2 * psi, 12 * psi / n},
                Row{2, 2 * psi, 2 * psi / n, 12 * psi / n}, Row{3, 2 * psi / n, 2 * psi / n, 12 * psi / n}}) {
    MemorySummary s = planOf(m.b.model(), training(Precision::FP16Mixed, r.zero, n));
    EXPECT_EQ(s.paramsBytes, r.params) << "ZeRO-" << r.zero;
    EXPECT_EQ(s.gradsBytes, r.grads) << "ZeRO-" << r.zero;
    EXPECT_EQ(s.optimizerBytes, r.optimizer) << "ZeRO-" << r.zero;
    // The peak holds all model states at once (the gradient exists through the optimizer step).
    EXPECT_GE(s.peakAllocatedBytes, r.params + r.grads + r.optimizer);
  }
  // fp32 Adam: 4Ψ weights, 4Ψ grads, 8Ψ moments; SGD keeps no state.
  MemorySummary fp32 = planOf(m.b.model(), training(Precision::FP32, 0, 1));
  EXPECT_EQ(fp32.paramsBytes + fp32.gradsBytes + fp32.optimizerBytes, 16 * psi);
  graphlint::Setup sgd = training(Precision::FP32, 0, 1);
  sgd.optimizer = Optimizer::SGD;
  EXPECT_EQ(planOf(m.b.model(), sgd).optimizerBytes, 0u);
}

// FSDP2 (--dp-shard N) under torchtitan's MixedPrecisionPolicy (param_dtype
// bf16, reduce_dtype fp32): the fp32 shard is the master copy, gradients are
// reduce-scattered into fp32 shards, so 4Ψ/N + 4Ψ/N + 8Ψ/N = 16Ψ/N, the
// ZeRO-3 total split otherwise. Only the dp-shard ranks shard: tp 8 beside
// dp-shard 8 (64 ranks) still divides by 8.
TEST(MemoryPlan, Fsdp2KeepsFp32ShardsAndShardsOverDpShardOnly) {
  OneMatMul m;
  const uint64_t psi = 1024 * 1024;
  for (unsigned tp : {1u, 8u}) {
    graphlint::Setup s;
    s.train = true;
    s.precision = Precision::BF16Mixed;
    s.dpShard = 8;
    s.tp = tp;
    ASSERT_FALSE(s.resolveMesh());
    ASSERT_EQ(s.mesh.dataParallel, DataParallel::FSDP2);
    MemorySummary fsdp = planOf(m.b.model(), s);
    EXPECT_EQ(fsdp.paramsBytes, 4 * psi / 8) << "tp " << tp;
    EXPECT_EQ(fsdp.gradsBytes, 4 * psi / 8) << "tp " << tp;
    EXPECT_EQ(fsdp.optimizerBytes, 8 * psi / 8) << "tp " << tp;
    EXPECT_EQ(fsdp.worldSize, 8 * tp);
    EXPECT_EQ(fsdp.zero, 3u);
  }
  // The same ranks under DeepSpeed's spelling: the ZeRO paper's 2/2/12 split.
  MemorySummary zero3 = planOf(m.b.model(), training(Precision::BF16Mixed, 3, 8));
  EXPECT_EQ(zero3.paramsBytes + zero3.gradsBytes + zero3.optimizerBytes, 16 * psi / 8);
  EXPECT_EQ(zero3.paramsBytes, 2 * psi / 8);
}

TEST(MemoryPlan, InferenceFreesEachTensorAfterItsLastUse) {
  // x -> Exp -> a -> Exp -> b -> Exp -> c: at most two activations at once.
  auto chain = [](const char *op) {
    auto b = std::make_unique<IrBuilder>();
    Value *v = b->input("x", f32({1024, 256}));  // 1 MiB
    for (const char *name : {"a", "b", "c"})
      v = b->node(op, {v}, {name}, {f32({1024, 256})})->outputs[0];
    b->output(v);
    return b;
  };
  auto exp = chain("Exp");
  MemorySummary s = planOf(exp->model(), graphlint::Setup{});
  EXPECT_EQ(s.mode, "inference");
  EXPECT_EQ(s.inputsBytes, kMiB);
  EXPECT_EQ(s.peakAllocatedBytes, 3 * kMiB);  // input + producer's input + output
  ASSERT_EQ(s.timeline.size(), 3u);
  EXPECT_EQ(s.timeline[0].liveBytes, 2 * kMiB);
  EXPECT_EQ(s.timeline[2].liveBytes, 3 * kMiB);
  // ReLU runs in place on an input that dies at it (torchvision's inplace=True).
  auto relu = chain("Relu");
  EXPECT_EQ(planOf(relu->model(), graphlint::Setup{}).peakAllocatedBytes, 2 * kMiB);
}

TEST(MemoryPlan, MaxPoolAllocatesTheIndicesTheGraphLeavesOut) {
  // F.max_pool2d runs max_pool2d_with_indices in eager, even under no_grad:
  // an ONNX MaxPool or a .pt2 max_pool2d has no indices output, yet their
  // int64 bytes are live while the op runs (squeezenet1_1's peak).
  for (const char *op : {"MaxPool", "aten::max_pool2d"}) {
    IrBuilder b;
    Value *x = b.input("x", f32({2, 4, 32, 64}));  // 64 KiB
    Node *pool = b.node(op, {x}, {"p"}, {f32({2, 4, 16, 32})});  // 16 KiB, indices 32 KiB
    b.output(pool->outputs[0]);
    MemorySummary s = planOf(b.model(), graphlint::Setup{});
    EXPECT_EQ(s.peakAllocatedBytes, (64 + 16 + 32) * 1024u) << op;
    ASSERT_EQ(s.timeline.size(), 1u) << op;
  }
  // max_pool1d has an index-free kernel: nothing beyond input and output.
  IrBuilder b;
  Value *x = b.input("x", f32({2, 4, 2048}));
  Node *pool = b.node("MaxPool", {x}, {"p"}, {f32({2, 4, 1024})});
  b.output(pool->outputs[0]);
  EXPECT_EQ(planOf(b.model(), graphlint::Setup{}).peakAllocatedBytes, (64 + 32) * 1024u);
}

TEST(MemoryPlan, ViewsShareTheirBaseStorage) {
  IrBuilder b;
  Value *x = b.input("x", f32({1024, 256}));
  Value *shape = b.param("shape", tensorOf(DType::Int64, {1}));
  Value *a = b.node("Exp", {x}, {"a"}, {f32({1024, 256})})->outputs[0];
  Value *r = b.node("Reshape", {a, shape}, {"r"}, {f32({262144})})->outputs[0];
  b.output(b.node("Exp", {r}, {"out"}, {f32({262144})})->outputs[0]);
  MemorySummary s = planOf(b.model(), graphlint::Setup{});
  EXPECT_EQ(s.peakAllocatedBytes, 3 * kMiB + 8);  // x, a (= r), out, the shape
}

TEST(MemoryPlan, TrainingKeepsWhatAutogradSaves) {
  // x @ W1 -> Relu -> @ W2: the matmuls save their activation inputs, Relu its output.
  IrBuilder b;
  Value *x = b.input("x", f32({256, 1024}));            // 1 MiB
  Value *w1 = b.param("W1", f32({1024, 1024}));         // 4 MiB
  Value *w2 = b.param("W2", f32({1024, 1024}));
  Value *h = b.node("MatMul", {x, w1}, {"h"}, {f32({256, 1024})})->outputs[0];
  Value *r = b.node("Relu", {h}, {"r"}, {f32({256, 1024})})->outputs[0];
  b.output(b.node("MatMul", {r, w2}, {"y"}, {f32({256, 1024})})->outputs[0]);
  graphlint::Setup s = training(Precision::FP32, 0, 1);
  s.optimizer = Optimizer::SGD;
  MemorySummary m = planOf(b.model(), s);
  EXPECT_EQ(m.mode, "training");
  // At the start of backward: r (saved by Relu and the second MatMul) and the
  // output y; h was freed after Relu (Relu keeps its result, not its input).
  EXPECT_EQ(m.activationsBytes, 2 * kMiB);
  EXPECT_EQ(m.gradsBytes, 8 * kMiB);
  bool sawBackward = false, sawOptimizer = false;
  for (const auto &p : m.timeline) {
    sawBackward |= p.phase == "backward";
    sawOptimizer |= p.phase == "optimizer";
  }
  EXPECT_TRUE(sawBackward);
  EXPECT_TRUE(sawOptimizer);
  // Checkpointing sqrt(n) segments keeps less.
  s.recompute = Recompute::Sqrt;
  EXPECT_LE(planOf(b.model(), s).activationsBytes, m.activationsBytes);
}

// An FX export says which parameters require grad: BatchNorm's running
// statistics are buffers, with no gradient and no optimizer state.
TEST(MemoryPlan, FxBuffersGetNoGradientOrOptimizerState) {
  ImportOptions io;
  auto m = importModelFile(sourcePath("tests/fixtures/fx/saved.fx.json"), io);
  ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
  uint64_t trainedBytes = 0, bufferBytes = 0;
  for (const auto &p : (*m)->graph->params())
    (p->buffer ? bufferBytes : trainedBytes) += p->tensor.byteSize;
  ASSERT_GT(bufferBytes, 0u);
  LintOptions opts;
  opts.setup.train = true;
  opts.setup.optimizer = Optimizer::Adam;
  FileReport r = lintModel(**m, opts);
  ASSERT_TRUE(r.memory.present);
  EXPECT_EQ(r.memory.gradsBytes, trainedBytes);
  EXPECT_EQ(r.memory.optimizerBytes, 2 * trainedBytes);  // Adam: m and v
  for (const MemorySummary::Contributor &c : r.memory.topAtPeak)
    EXPECT_FALSE(c.kind == "optimizer_state" && c.tensor.find("running") != std::string::npos) << c.tensor;
}

// Million-node graphs must not produce million-point timelines: the JSON and
// the SVG get at most kMaxTimelinePoints, and the peak survives the merge.
TEST(MemoryPlan, LongTimelinesAreMergedKeepingThePeak) {
  // A trained weight first, so every step has a backward.
  std::string w;
  for (int i = 0; i < 64; ++i)
    w += (i ? ", " : "") + std::to_string(i) + ".0";
  std::string text = "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[64, 64] x) => (float[64, 64] y) <float[64] W = {" +
                     w + "}> {\n  h = Mul(x, W)\n";
  const int n = 5001;
  std::string prev = "h";
  for (int i = 0; i < n; ++i) {
    std::string out = i + 1 == n ? "y" : "t" + std::to_string(i);
    text += "  " + out + " = Sigmoid(" + prev + ")\n";
    prev = out;
  }
  text += "}\n";
  auto m = importText(text);
  LintOptions opts;
  opts.setup.train = true;
  FileReport r = lintModel(*m, opts);
  ASSERT_TRUE(r.memory.present);
  EXPECT_GT(r.memory.timelineSteps, 2u * n);  // forward, backward, optimizer
  EXPECT_LE(r.memory.timeline.size(), MemorySummary::kMaxTimelinePoints + 3);
  EXPECT_GT(r.memory.timeline.size(), MemorySummary::kMaxTimelinePoints / 2);
  uint64_t maxLive = 0;
  for (const MemorySummary::Point &p : r.memory.timeline)
    maxLive = std::max(maxLive, p.liveBytes);
  EXPECT_EQ(maxLive, r.memory.peakAllocatedBytes);
  // Phases stay in order and contiguous: forward, backward, optimizer.
  std::vector<std::string> phases;
  for (const MemorySummary::Point &p : r.memory.timeline)
    if (phases.empty() || phases.back() != p.phase)
      phases.push_back(p.phase);
  EXPECT_EQ(phases, (std::vector<std::string>{"forward", "backward", "optimizer"}));
}

TEST(CachingAllocator, RoundsAndPicksSegmentsLikePyTorch) {
  EXPECT_EQ(AllocatorSim::roundSize(1), 512u);
  EXPECT_EQ(AllocatorSim::roundSize(513), 1024u);
  EXPECT_EQ(AllocatorSim::segmentSize(kMiB), 2 * kMiB);
  EXPECT_EQ(AllocatorSim::segmentSize(kMiB + 512), 20 * kMiB);
  EXPECT_EQ(AllocatorSim::segmentSize(10 * kMiB + 1), 12 * kMiB);

  AllocatorSim a;
  a.allocate(1, 100);            // small pool: one 2 MiB segment
  a.allocate(2, 600 * 1024);     // same segment (split)
  EXPECT_EQ(a.reserved(), 2 * kMiB);
  a.allocate(3, 3 * kMiB);       // large pool: a 20 MiB segment, split
  a.allocate(4, 5 * kMiB);       // fits in the rest of it
  EXPECT_EQ(a.reserved(), 22 * kMiB);
  a.release(3);
  a.allocate(5, 16 * kMiB);      // the freed 3 MiB hole is too small: a new segment
  EXPECT_EQ(a.reserved(), 38 * kMiB);
  EXPECT_EQ(a.peakAllocated(), 512 + 600 * 1024 + 5 * kMiB + 16 * kMiB);
  a.release(4);
  a.allocate(6, 12 * kMiB);      // 3 + 5 + 12 MiB merged back: fits the first large segment
  EXPECT_EQ(a.reserved(), 38 * kMiB);
}

// Fragmentation is 1 - largest free block / free bytes as the allocator grows
// to its peak; reserved overhead from segment rounding is not fragmentation.
TEST(CachingAllocator, FragmentationIsTheFreeBytesScatteredAtThePeak) {
  AllocatorSim tiny;
  tiny.allocate(1, 15 * 1024);  // a 15 KiB model: one 2 MiB segment
  EXPECT_EQ(tiny.reserved(), 2 * kMiB);
  EXPECT_EQ(tiny.freeAtPeak(), 0u);  // nothing was cached when it grew
  EXPECT_EQ(tiny.fragmentedGrowth(), 0u);

  AllocatorSim a;
  for (uint64_t id = 1; id <= 5; ++id)
    a.allocate(id, 4 * kMiB);   // one 20 MiB segment in five 4 MiB blocks
  EXPECT_EQ(a.reserved(), 20 * kMiB);
  a.release(1);
  a.release(3);                 // 8 MiB free, in two blocks of 4 MiB
  a.allocate(6, 6 * kMiB);      // fits the free bytes, not any block: a new segment
  EXPECT_EQ(a.reserved(), 40 * kMiB);
  EXPECT_EQ(a.freeAtPeak(), 8 * kMiB);
  EXPECT_EQ(a.largestFreeAtPeak(), 4 * kMiB);
  EXPECT_EQ(a.fragmentedGrowth(), 20 * kMiB);
  a.allocate(7, 30 * kMiB);     // more than is free: growth, not fragmentation
  EXPECT_EQ(a.fragmentedGrowth(), 20 * kMiB);
  EXPECT_EQ(a.freeAtPeak(), 8 * kMiB + 14 * kMiB);  // the two holes and the new segment's tail
  EXPECT_EQ(a.largestFreeAtPeak(), 14 * kMiB);

  MemorySummary s;
  s.peakReservedBytes = 2 * kMiB;
  s.allocatorPeakAllocatedBytes = 15 * 1024;
  EXPECT_EQ(s.fragmentation(), 0);
  EXPECT_NEAR(s.reservedOverhead(), 1 - 15.0 / 2048, 1e-12);
  s.allocatorFreeAtPeakBytes = 8 * kMiB;
  s.allocatorLargestFreeAtPeakBytes = 4 * kMiB;
  EXPECT_DOUBLE_EQ(s.fragmentation(), 0.5);
}

TEST(MemoryRules, ExceedsDeviceMemoryOnTheTarget) {
  OneMatMul m;
  LintOptions o;
  o.setup = training(Precision::FP32, 0, 1);
  o.setup.target = "L4";  // 24 GiB
  FileReport ok = lintModel(m.b.model(), o);
  EXPECT_TRUE(withCode(ok, "GL201").empty());
  EXPECT_TRUE(ok.memory.present);
  EXPECT_NEAR(ok.memory.capacityBytes, 24.0 * 1024 * kMiB, 1);

  IrBuilder big;  // 16 layers of 1 Gi parameters: 256 GiB of fp32 Adam states alone
  Value *h = big.input("x", f32({8, 16384}));
  for (int i = 0; i < 16; ++i) {
    Value *w = big.param("W" + std::to_string(i), f32({16384, 32768}));
    Value *wide = big.node("MatMul", {h, w}, {"wide" + std::to_string(i)}, {f32({8, 32768})})->outputs[0];
    Value *w2 = big.param("V" + std::to_string(i), f32({32768, 16384}));
    h = big.node("MatMul", {wide, w2}, {"h" + std::to_string(i)}, {f32({8, 16384})})->outputs[0];
  }
  big.output(h);
  FileReport r = lintModel(big.model(), o);
  auto d = withCode(r, "GL201");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0]->severity, Severity::Error);
  EXPECT_NE(d[0]->message.find("of L4"), std::string::npos) << d[0]->message;
  EXPECT_NE(d[0]->notes.back().message.find("bf16-mixed"), std::string::npos) << d[0]->notes.back().message;
  // Advice reads the setup: a run already in bf16-mixed with ZeRO-3 and
  // checkpointing is not told to do any of that.
  o.setup = training(Precision::BF16Mixed, 3, 2);
  o.setup.recompute = Recompute::Layer;
  o.setup.target = "L4";
  FileReport setupRun = lintModel(big.model(), o);
  auto advised = withCode(setupRun, "GL201");
  ASSERT_EQ(advised.size(), 1u);
  const std::string &fix = advised[0]->notes.back().message;
  EXPECT_EQ(fix.find("bf16"), std::string::npos) << fix;
  EXPECT_EQ(fix.find("--zero"), std::string::npos) << fix;
  EXPECT_EQ(fix.find("--recompute"), std::string::npos) << fix;
  EXPECT_NE(fix.find("reduce the batch"), std::string::npos) << fix;
  // ZeRO-3 over 64 ranks in bf16-mixed: 16 x 16 GiB of states / 64 = 4 GiB per rank, plus one
  // gathered layer and its full gradient (2 GiB each): fits.
  o.setup = training(Precision::BF16Mixed, 3, 64);
  o.setup.target = "L4";
  FileReport sharded = lintModel(big.model(), o);
  for (const Diagnostic *x : withCode(sharded, "GL201"))
    ADD_FAILURE() << x->message << "\n" << x->notes[0].message;
}

TEST(MemoryRules, ActivationHotspotNamesTheDominantNode) {
  // A 1 GiB softmax over attention scores next to small weights.
  IrBuilder b;
  Value *q = b.input("q", f32({8, 16, 1024, 64}));
  Value *k = b.input("kT", f32({8, 16, 64, 1024}));
  Value *s = b.node("MatMul", {q, k}, {"scores"}, {f32({8, 16, 1024, 1024})})->outputs[0];
  Value *p = b.node("Softmax", {s}, {"probs"}, {f32({8, 16, 1024, 1024})})->outputs[0];
  b.output(b.node("MatMul", {p, q}, {"out"}, {f32({8, 16, 1024, 64})})->outputs[0]);
  FileReport r = lintModel(b.model(), LintOptions{});
  auto d = withCode(r, "GL202");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0]->location.nodeName, "scores");
  EXPECT_NE(d[0]->message.find("% of the predicted inference peak"), std::string::npos) << d[0]->message;
  // Below the option's share nothing is reported.
  LintOptions high;
  high.setup.ruleOptions["GL202"]["share"] = 0.9;
  EXPECT_TRUE(withCode(lintModel(b.model(), high), "GL202").empty());
}

TEST(MemoryRules, FragmentationNeedsRealWaste) {
  OneMatMul m;
  FileReport r = lintModel(m.b.model(), LintOptions{});
  EXPECT_TRUE(withCode(r, "GL203").empty());  // 2 MiB segments for tiny tensors: not worth a warning
  EXPECT_GT(r.memory.peakReservedBytes, 0u);
}

TEST(MemoryOutput, JsonTextAndSvg) {
  OneMatMul m;
  LintOptions o;
  o.setup = training(Precision::FP32, 0, 1);
  FileReport r = lintModel(m.b.model(), o);
  llvm::json::Value v = memoryToJson(r.memory);
  const llvm::json::Object *obj = v.getAsObject();
  ASSERT_TRUE(obj);
  for (const char *key : {"mode", "params_bytes", "grads_bytes", "optimizer_bytes", "inputs_bytes",
                          "activations_bytes", "peak_allocated_bytes", "peak_reserved_bytes", "peak_node",
                          "device_capacity_bytes", "timeline"})
    EXPECT_TRUE(obj->get(key)) << key;
  EXPECT_EQ(obj->getString("mode").getValueOr(""), "training");
  std::string text, svg;
  llvm::raw_string_ostream ts(text), ss(svg);
  renderMemoryText(r.memory, "m.onnx", ts);
  renderMemorySvg(r.memory, "m.onnx", ss);
  ts.flush();
  ss.flush();
  EXPECT_NE(text.find("peak reserved"), std::string::npos) << text;
  EXPECT_NE(text.find("headroom"), std::string::npos) << text;
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("backward"), std::string::npos);
  EXPECT_NE(svg.find("capacity"), std::string::npos);
}

// ---------------------------------------------------------------------------
// Against PyTorch's measured truth.

struct Measured {
  std::string name, onnx;
  uint64_t inference = 0, training = 0;
  uint64_t forwardBackward = 0;  // training peak before the optimizer step (0: not measured)
};

std::vector<Measured> loadMeasured(const std::string &dir) {
  std::vector<Measured> out;
  std::ifstream f(dir + "/measured.json");
  if (!f)
    return out;
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto v = llvm::json::parse(text);
  if (!v) {
    llvm::consumeError(v.takeError());
    return out;
  }
  const llvm::json::Array *models = v->getAsObject()->getArray("models");
  for (const llvm::json::Value &e : *models) {
    const llvm::json::Object &o = *e.getAsObject();
    Measured m;
    m.name = std::string(o.getString("name").getValueOr(""));
    m.onnx = dir + "/" + std::string(o.getString("onnx").getValueOr(""));
    m.inference = static_cast<uint64_t>(o.getObject("inference")->getInteger("peak_allocated_bytes").getValueOr(0));
    m.training = static_cast<uint64_t>(o.getObject("training")->getInteger("peak_allocated_bytes").getValueOr(0));
    m.forwardBackward =
        static_cast<uint64_t>(o.getObject("training")->getInteger("forward_backward_peak_bytes").getValueOr(0));
    out.push_back(m);
  }
  return out;
}

/// Lints each measured model for inference and for an Adam fp32 training
/// step, prints predicted vs measured, and returns the worst |error|.
double compareWithMeasured(const std::string &dir, double tolerance) {
  std::vector<Measured> ms = loadMeasured(dir);
  double worst = 0;
  std::printf("%-28s %-9s %14s %14s %8s  %s\n", "model", "mode", "measured", "predicted", "error",
              "predicted peak at");
  for (const Measured &m : ms) {
    for (bool train : {false, true}) {
      LintOptions o;
      o.setup.train = train;
      o.setup.optimizer = Optimizer::Adam;
      FileReport r = lintFile(m.onnx, o);
      EXPECT_FALSE(r.fatal) << m.onnx << ": " << r.fatalMessage;
      uint64_t beforeStep = test::forwardBackwardPeak(r.memory);
      struct Row { const char *mode; uint64_t truth, predicted; };
      std::vector<Row> rows;
      if (!train)
        rows.push_back({"inference", m.inference, r.memory.peakAllocatedBytes});
      else {
        rows.push_back({"training", m.training, r.memory.peakAllocatedBytes});
        if (m.forwardBackward)
          rows.push_back({"fwd+bwd", m.forwardBackward, beforeStep});
      }
      for (const Row &row : rows) {
        double err = (static_cast<double>(row.predicted) - static_cast<double>(row.truth)) /
                     static_cast<double>(row.truth);
        std::printf("%-28s %-9s %14llu %14llu %+7.2f%%  %s %s\n", m.name.c_str(), row.mode,
                    static_cast<unsigned long long>(row.truth), static_cast<unsigned long long>(row.predicted),
                    100 * err, r.memory.peakPhase.c_str(), r.memory.peakNode.c_str());
        EXPECT_LE(std::abs(err), tolerance) << m.name << " " << row.mode;
        worst = std::max(worst, std::abs(err));
      }
    }
  }
  return worst;
}

TEST(MemoryValidation, SmallModelsWithinFivePercentOfPyTorch) {
  std::string dir = sourcePath("tests/fixtures/memory");
  ASSERT_FALSE(loadMeasured(dir).empty()) << "regenerate with validation/validate_memory.py --small --out " << dir;
  compareWithMeasured(dir, 0.05);
}

TEST(MemoryValidation, TransformerLayerSavedActivations) {
  // Korthikanti et al.: 34sbh + 5as^2b bytes per layer in 16 bits with
  // dropout. Without dropout (the GPT here has none) the masks (sbh + sbh +
  // as^2b) and the dropout output (2as^2b) go: 32sbh + 2as^2b.
  std::string dir = sourcePath("tests/fixtures/memory");
  LintOptions o;
  o.setup = training(Precision::BF16Mixed, 0, 1);
  auto saved = [&](const char *file) {
    FileReport r = lintFile(dir + "/" + file, o);
    EXPECT_FALSE(r.fatal) << r.fatalMessage;
    return static_cast<double>(r.memory.activationsBytes);
  };
  double perLayer = saved("gpt_layer2_b2.onnx") - saved("gpt_layer1_b2.onnx");
  const double s = 64, b = 2, h = 256, a = 4;
  double expected = 32 * s * b * h + 2 * a * s * s * b;
  std::printf("one layer saves %.0f bytes; 32sbh + 2as^2b = %.0f (34sbh + 5as^2b with dropout = %.0f)\n", perLayer,
              expected, 34 * s * b * h + 5 * a * s * s * b);
  EXPECT_NEAR(perLayer, expected, 0.05 * expected);
}

}  // namespace

// ONNX records no strides: a Slice of a contiguous tensor keeps its base's,
// and a Reshape PyTorch cannot view through them is a copy. torch 1.13's
// multi-head attention slices the packed [s, b, 3d] q/k/v projection on its
// last dim and calls `.contiguous().view(s, b * heads, d / heads)`: three
// copies, after which the projection can go (vit_small's ONNX training step
// kept it, +6.6%). A slice on the outer dim regroups as a view.
TEST(MemoryPlan, ReshapeOfAnOnnxSliceCopiesWhenItsStridesCannotView) {
  auto peakBeyondInputs = [](int64_t axis) {
    IrBuilder b;
    Value *x = b.input("x", f32({17, 8, 384}));
    Node *proj = b.node("Add", {x, x}, {"proj"}, {f32({17, 8, 384})});  // 208,896 bytes
    Type slice = axis == 2 ? f32({17, 8, 128}) : f32({5, 8, 384});
    Type view = axis == 2 ? f32({17, 32, 32}) : f32({5, 3072});
    Node *q = b.node("Slice", {proj->outputs[0]}, {"q"}, {slice});
    Node *r = b.node("Reshape", {q->outputs[0]}, {"r"}, {view});
    b.output(r->outputs[0]);
    graphlint::Setup s;
    MemorySummary sum = planOf(b.model(), s);
    return sum.peakAllocatedBytes - sum.inputsBytes;
  };
  EXPECT_EQ(peakBeyondInputs(2), 208896u + 69632u) << "the last-dim slice's reshape copies";
  EXPECT_EQ(peakBeyondInputs(0), 208896u) << "an outer-dim slice regroups as a view";
}

// A batched MatMul whose operand's strides cannot view [batch, rows, cols]:
// eager's matmul reshapes it into a copy for bmm, and autograd saves that
// copy, not the operand's storage. ONNX records no strides; the plan derives
// them through the views. GPT-NeoX's value is a head slice of the packed
// q/k/v projection ([b, s, 3hd] -> [b, s, h, 3d] -> [b, h, s, 3d] -> last-dim
// split), so the projection used to be held to the backward for it (dynamo
// ONNX training +4.6%). A split along an outer dim views, and keeps it.
TEST(MemoryPlan, OnnxMatMulSavesTheCopyEagerMakesOfAnOperandItCannotView) {
  auto saved = [](bool packed) {
    IrBuilder b;
    Value *x = b.input("x", f32({2, 16, 32}));
    Value *w = b.param("W", f32({32, 96}));
    Value *probs = b.param("P", f32({2, 4, 16, 16}));
    Node *proj = b.node("MatMul", {x, w}, {"proj"}, {f32({2, 16, 96})});  // 12,288 bytes
    Value *heads = nullptr;
    if (packed) {
      Node *view = b.node("Reshape", {proj->outputs[0]}, {"view"}, {f32({2, 16, 4, 24})});
      Node *t = b.node("Transpose", {view->outputs[0]}, {"t"}, {f32({2, 4, 16, 24})});
      Attribute perm;
      perm.name = "perm";
      perm.kind = AttrKind::Ints;
      perm.ints = {0, 2, 1, 3};
      t->attributes.push_back(perm);
      heads = t->outputs[0];
    } else {
      heads = b.node("Reshape", {proj->outputs[0]}, {"view"}, {f32({2, 4, 48, 8})})->outputs[0];
    }
    Node *split = b.node("Split", {heads}, {"q", "k", "v"}, {f32({2, 4, 16, 8}), f32({2, 4, 16, 8}), f32({2, 4, 16, 8})});
    Attribute axis;
    axis.name = "axis";
    axis.kind = AttrKind::Int;
    axis.i = packed ? 3 : 2;
    split->attributes.push_back(axis);
    if (!packed)
      for (Value *o : split->outputs)
        o->type = f32({2, 4, 16, 8});
    Node *out = b.node("MatMul", {probs, split->outputs[2]}, {"out"}, {f32({2, 4, 16, 8})});
    b.output(out->outputs[0]);
    return planOf(b.model(), training(Precision::FP32, 0, 1)).activationsBytes;
  };
  const uint64_t out = 2u * 4 * 16 * 8 * 4;  // live as backward starts, beside what is saved
  EXPECT_EQ(saved(true), out + 2u * 4 * 16 * 8 * 4) << "the value's copy, not the projection";
  EXPECT_EQ(saved(false), out + 2u * 16 * 96 * 4) << "an outer-dim split views: the projection is kept";
}

// transformers' SDPA attention as a tracer records it (graphlint-export's
// fake capture, torch.export): the causal mask create_causal_mask builds
// under a tracer, made additive by a where, and repeat_kv's copies of the
// two key/value heads for four query heads. Eager passes is_causal=True and
// enable_gqa=True instead: neither the mask nor the copies exist
// (docs/memory.md, "The causal mask a tracer builds").
TEST(MemoryPlan, ACausalMaskAndTheHeadRepeatsEagerSkipsAreNotAllocated) {
  auto attributed = [](const char *name, int64_t v) {
    Attribute a;
    a.name = name;
    a.kind = AttrKind::Int;
    a.i = v;
    return a;
  };
  auto inference = [&](const char *comparison) {
    IrBuilder b;
    Value *q = b.input("q", f32({2, 4, 64, 16}));
    Value *k = b.input("k", f32({2, 2, 64, 16}));
    Value *v = b.input("v", f32({2, 2, 64, 16}));
    auto i64 = [](std::initializer_list<int64_t> d) { return Type::tensor(DType::Int64, Shape::of(d)); };
    Node *qa = b.node("aten::arange", {}, {"q_idx"}, {i64({64})});
    qa->attributes.push_back(attributed("end", 64));
    Node *ka = b.node("aten::arange", {}, {"kv_idx"}, {i64({64})});
    ka->attributes.push_back(attributed("end", 64));
    Node *qc = b.node("aten::view", {qa->outputs[0]}, {"q_col"}, {i64({64, 1})});
    Node *cmp = b.node(comparison, {ka->outputs[0], qc->outputs[0]}, {"allowed"},
                       {Type::tensor(DType::Bool, Shape::of({64, 64}))});
    Node *zero = b.node("aten::scalar_tensor", {}, {"zero"}, {f32({})});
    Node *minf = b.node("aten::scalar_tensor", {}, {"minf"}, {f32({})});
    Attribute s;
    s.name = "s";
    s.kind = AttrKind::Float;
    zero->attributes.push_back(s);
    s.f = -1e30;
    minf->attributes.push_back(s);
    Node *mask = b.node("aten::where", {cmp->outputs[0], zero->outputs[0], minf->outputs[0]}, {"mask"},
                        {f32({64, 64})});
    auto repeat = [&](Value *x, const std::string &name) {
      Node *u = b.node("aten::unsqueeze", {x}, {name + "_u"}, {f32({2, 2, 1, 64, 16})});
      u->attributes.push_back(attributed("dim", 2));
      u->outputAliasesInput = {0};
      Node *e = b.node("aten::expand", {u->outputs[0]}, {name + "_e"}, {f32({2, 2, 2, 64, 16})});
      e->outputAliasesInput = {0};
      Node *c = b.node("aten::clone", {e->outputs[0]}, {name + "_c"}, {f32({2, 2, 2, 64, 16})});
      return b.node("aten::_unsafe_view", {c->outputs[0]}, {name + "_r"}, {f32({2, 4, 64, 16})})->outputs[0];
    };
    Node *sdpa = b.node("aten::_scaled_dot_product_flash_attention_for_cpu",
                        {q, repeat(k, "key"), repeat(v, "value"), mask->outputs[0]}, {"out", "lse"},
                        {f32({2, 4, 64, 16}), f32({2, 4, 64})});
    b.output(sdpa->outputs[0]);
    return planOf(b.model(), graphlint::Setup()).activationsBytes;
  };
  const uint64_t out = 2 * 4 * 64 * 16 * 4, lse = 2 * 4 * 64 * 4, repeated = 2 * 4 * 64 * 16 * 4, mask = 64 * 64 * 4;
  EXPECT_EQ(inference("aten::le"), out + lse) << "kv <= q: eager's is_causal, no mask, no copies";
  EXPECT_EQ(inference("aten::lt"), out + lse + 2 * repeated + mask) << "kv < q masks the diagonal too: built";
}

// A .pt2's one scaled_dot_product_attention op in training: eager's fused
// kernel (CPU flash attention, CUDA's alike) keeps its output and a
// logsumexp ([b, h, s] fp32) for its backward besides the operands, so the
// output stays live after its reader's; an op that keeps its inputs only
// lets it go.
TEST(MemoryPlan, AFusedAttentionOpKeepsItsOutputAndLogsumexpForItsBackward) {
  auto peak = [](const char *op) {
    IrBuilder b;
    Value *q = b.param("q", f32({2, 4, 64, 16}));
    Value *k = b.param("k", f32({2, 4, 64, 16}));
    Value *v = b.param("v", f32({2, 4, 64, 16}));
    Node *sdpa = b.node(op, {q, k, v}, {"o"}, {f32({2, 4, 64, 16})});
    Node *relu = b.node("aten::relu", {sdpa->outputs[0]}, {"r"}, {f32({2, 4, 64, 16})});
    b.output(relu->outputs[0]);
    MemorySummary s = planOf(b.model(), training(Precision::FP32, 0, 1));
    return s.peakAllocatedBytes;
  };
  const uint64_t out = 2 * 4 * 64 * 16 * 4, lse = 2 * 4 * 64 * 4;
  EXPECT_EQ(peak("aten::scaled_dot_product_attention") - peak("aten::_scaled_dot_product_attention_math"), out + lse);
}

// A .pt2's scaled_dot_product_attention in a CPU training step under
// attention dropout: eager runs the math path, whose backward keeps q' and
// k' (the scaled operands), the probabilities, the dropout's noise and the
// dropped probabilities, and v; not q and k. Where training's dropout is
// known to be 0 (the importer's dropout_training_p fact), or on CUDA, the
// fused kernel keeps q, k, v, its output and the logsumexp.
TEST(MemoryPlan, AttentionUnderDropoutOnTheCpuKeepsTheMathPathsTensors) {
  auto activations = [](bool trainingP0, Kernels kernels) {
    IrBuilder b;
    Value *w = b.param("w", f32({2, 4, 8, 4}));
    Value *qkv[3];
    for (int i = 0; i < 3; ++i)
      qkv[i] = b.node("aten::add", {w, w}, {std::string("x") + char('0' + i)}, {f32({2, 4, 8, 4})})->outputs[0];
    Node *sdpa = b.node("aten::scaled_dot_product_attention", {qkv[0], qkv[1], qkv[2]}, {"o"}, {f32({2, 4, 8, 4})});
    if (trainingP0)
      sdpa->metadata.emplace_back("dropout_training_p", "0");
    Node *sum = b.node("aten::sum", {sdpa->outputs[0]}, {"s"}, {f32({})});
    b.output(sum->outputs[0]);
    graphlint::Setup s = training(Precision::FP32, 0, 1);
    s.kernels = kernels;
    return planOf(b.model(), s).activationsBytes;
  };
  const uint64_t operand = 2 * 4 * 8 * 4 * 4, scores = 2 * 4 * 8 * 8 * 4, lse = 2 * 4 * 8 * 4, loss = 4;
  EXPECT_EQ(activations(false, Kernels::Cpu), 2 * operand + 3 * scores + operand + loss) << "q', k', probs, noise, dropped, v";
  EXPECT_EQ(activations(true, Kernels::Cpu), 3 * operand + operand + lse + loss) << "q, k, v, out, logsumexp";
  EXPECT_EQ(activations(false, Kernels::Cuda), 3 * operand + operand + lse + loss) << "CUDA's kernel draws the dropout";
}

// The dynamo exporter's decomposition of scaled_dot_product_attention runs
// as CPU flash attention, which allocates its output in the query's dim
// order. Transformers' rotary q keeps the [b, s, h, d] layout of its
// transposed view through elementwise ops, so the caller's transpose back
// and reshape view the output; a partial rotary that ends in a cat
// (GPT-NeoX, Phi-2) gives a contiguous q and output, and the reshape copies.
TEST(MemoryPlan, TheFusedAttentionOutputTakesTheQuerysEagerLayout) {
  auto reshapeCopy = [](bool cat) {
    auto perm = [](Node *n, std::vector<int64_t> p) {
      Attribute a;
      a.name = "perm";
      a.kind = AttrKind::Ints;
      a.ints = std::move(p);
      n->attributes.push_back(a);
      return n;
    };
    auto call = [](Node *n) {
      n->metadata = {{"pkg.torch.onnx.fx_node", "%scaled_dot_product_attention : [num_users=1] = call_function[target="
                                                "torch.ops.aten.scaled_dot_product_attention.default](args = (%q, %k, "
                                                "%v), kwargs = {})"}};
      return n->outputs[0];
    };
    IrBuilder b;
    Value *q;
    if (cat) {
      Value *lo = b.input("lo", f32({2, 4, 64, 8})), *hi = b.input("hi", f32({2, 4, 64, 8}));
      Node *c = b.node("Concat", {lo, hi}, {"q"}, {f32({2, 4, 64, 16})});
      Attribute axis;
      axis.name = "axis";
      axis.kind = AttrKind::Int;
      axis.i = 3;
      c->attributes.push_back(axis);
      q = c->outputs[0];
    } else {
      Value *x = b.input("x", f32({2, 64, 64}));
      Value *heads = b.node("Reshape", {x}, {"heads"}, {f32({2, 64, 4, 16})})->outputs[0];
      Value *t = perm(b.node("Transpose", {heads}, {"t"}, {f32({2, 4, 64, 16})}), {0, 2, 1, 3})->outputs[0];
      q = b.node("Mul", {t, t}, {"q"}, {f32({2, 4, 64, 16})})->outputs[0];  // an elementwise op keeps t's layout
    }
    Value *k = b.input("k", f32({2, 4, 64, 16})), *v = b.input("v", f32({2, 4, 64, 16}));
    Value *scale = b.param("scale", f32({}));
    Value *qs = call(b.node("Mul", {q, scale}, {"qs"}, {f32({2, 4, 64, 16})}));
    Value *kt = call(perm(b.node("Transpose", {k}, {"kt"}, {f32({2, 4, 16, 64})}), {0, 1, 3, 2}));
    Value *ks = call(b.node("Mul", {kt, scale}, {"ks"}, {f32({2, 4, 16, 64})}));
    Value *s = call(b.node("MatMul", {qs, ks}, {"s"}, {f32({2, 4, 64, 64})}));
    Value *p = call(b.node("Softmax", {s}, {"p"}, {f32({2, 4, 64, 64})}));
    Value *o = call(b.node("MatMul", {p, v}, {"o"}, {f32({2, 4, 64, 16})}));
    Value *back = perm(b.node("Transpose", {o}, {"back"}, {f32({2, 64, 4, 16})}), {0, 2, 1, 3})->outputs[0];
    Value *r = b.node("Reshape", {back}, {"r"}, {f32({2, 64, 64})})->outputs[0];
    Value *w = b.param("w", f32({64, 64}));
    Node *y = b.node("MatMul", {r, w}, {"y"}, {f32({2, 64, 64})});
    b.output(o);  // held: the reshape's copy, if any, is live beside it
    b.output(y->outputs[0]);
    graphlint::Setup s0;
    s0.kernels = Kernels::Cpu;
    AnalysisContext ctx(b.model(), s0);
    uint64_t copy = 0;  // r's own storage, live at the peak (at y)
    for (const MemoryPlan::Contributor &c : ctx.get<MemoryPlan>().atPeak())
      if (c.value && c.value->name == "r")
        copy += c.bytes;
    return copy;
  };
  EXPECT_EQ(reshapeCopy(true), 2u * 64 * 64 * 4) << "a contiguous output's transpose back copies";
  EXPECT_EQ(reshapeCopy(false), 0u) << "an output laid out [b, s, h, d]: the reshape views it";
}

// scaled_dot_product_attention as an export writes it (docs/memory.md): the
// plan does not model the kernel eager picks, and says so, once per call.
TEST(MemoryPlan, ScaledDotProductAttentionIsNamedInACaveat) {
  auto caveatOf = [](const Model &m) {
    graphlint::Setup s;
    for (const std::string &c : planOf(m, s).caveats)
      if (c.find("scaled_dot_product_attention") != std::string::npos)
        return c;
    return std::string();
  };
  IrBuilder pt2;  // a .pt2's one generic op
  Value *q = pt2.input("q", f32({2, 4, 64, 16}));
  Node *sdpa = pt2.node("aten::scaled_dot_product_attention", {q, q, q}, {"o"}, {f32({2, 4, 64, 16})});
  pt2.output(sdpa->outputs[0]);
  std::string c = caveatOf(pt2.model());
  EXPECT_NE(c.find("1 scaled_dot_product_attention call (transformers' default attention): costed as one op"),
            std::string::npos)
      << c;

  IrBuilder onnx;  // the dynamo exporter's decomposition: two nodes, one call
  Value *x = onnx.input("q", f32({2, 4, 64, 16}));
  Node *mm = onnx.node("MatMul", {x, x}, {"s"}, {f32({2, 4, 64, 64})});
  Node *sm = onnx.node("Softmax", {mm->outputs[0]}, {"p"}, {f32({2, 4, 64, 64})});
  for (Node *n : {mm, sm})
    n->metadata = {{"pkg.torch.onnx.fx_node", "%scaled_dot_product_attention : [num_users=1] = call_function[target="
                                              "torch.ops.aten.scaled_dot_product_attention.default](args = (%q, %k, "
                                              "%v), kwargs = {})"}};
  onnx.output(sm->outputs[0]);
  c = caveatOf(onnx.model());
  EXPECT_NE(c.find("1 scaled_dot_product_attention call (transformers' default attention): the exporter "
                   "decomposed"),
            std::string::npos)
      << c;

  IrBuilder plain;
  Value *y = plain.input("q", f32({2, 4, 64, 16}));
  Node *mm2 = plain.node("MatMul", {y, y}, {"s"}, {f32({2, 4, 64, 64})});
  plain.output(mm2->outputs[0]);
  EXPECT_EQ(caveatOf(plain.model()), "");
}
