// Compiled execution's memory rules (docs/memory.md "Compiled execution",
// graphlint/analyses/CompiledExecution.h) on small synthetic graphs, to the
// byte: Inductor's fused intermediates, AOTAutograd's partitioner, and memory
// following the execution the setup states.
#include "IrBuilder.h"
#include "TestSupport.h"

#include "graphlint/analyses/CompiledExecution.h"
#include "graphlint/analyses/FusionPlan.h"
#include "graphlint/analyses/MemoryPlan.h"
#include "graphlint/base/SetupKeys.h"
#include "graphlint/fx/FxImporter.h"

#include <fmt/format.h>
#include <llvm/Support/Error.h>

#include <gtest/gtest.h>

using namespace graphlint;
using namespace graphlint::test;

namespace {

constexpr uint64_t kMiB = 1 << 20;

MemorySummary planOf(const Model &m, const Setup &s) {
  AnalysisContext ctx(m, s);
  return ctx.get<MemoryPlan>().summary();
}

Setup compiled(bool train = false) {
  graphlint::Setup s;
  s.backend = FusionBackend::Inductor;
  s.backendStated = true;
  s.train = train;
  s.optimizer = Optimizer::SGD;
  return s;
}

TEST(CompiledMemory, FusedIntermediatesNeverMaterialise) {
  // x -> Exp a -> Exp b -> Exp c: eager holds two activations at once (3 MiB
  // with x); Inductor runs the chain as one kernel that writes c only.
  IrBuilder b;
  Value *v = b.input("x", f32({1024, 256}));  // 1 MiB
  for (const char *name : {"a", "b", "c"})
    v = b.node("Exp", {v}, {name}, {f32({1024, 256})})->outputs[0];
  b.output(v);
  graphlint::Setup eager;  // inductor is the fusion default, but not stated
  MemorySummary e = planOf(b.model(), eager);
  EXPECT_EQ(e.execution, "eager");
  EXPECT_FALSE(e.executionStated);
  EXPECT_EQ(e.peakAllocatedBytes, 3 * kMiB);
  MemorySummary c = planOf(b.model(), compiled());
  EXPECT_EQ(c.execution, "compiled");
  EXPECT_TRUE(c.executionStated);
  EXPECT_EQ(c.peakAllocatedBytes, 2 * kMiB);  // x and c
  EXPECT_EQ(c.fusedAwayTensors, 2u);
  EXPECT_EQ(c.fusedAwayBytes, 2 * kMiB);
  // A stated eager backend keeps eager's memory, and says it was stated.
  graphlint::Setup stated;
  stated.backend = FusionBackend::Eager;
  stated.backendStated = true;
  MemorySummary se = planOf(b.model(), stated);
  EXPECT_EQ(se.execution, "eager");
  EXPECT_TRUE(se.executionStated);
  EXPECT_EQ(se.peakAllocatedBytes, 3 * kMiB);
}

TEST(CompiledMemory, AKernelReusesTheBufferOfAnInputThatDiesInIt) {
  // h = x @ W (a library mm: a buffer of its own); y = h * 2 + 1 in one
  // pointwise kernel that writes into h's buffer (Inductor's in-place reuse).
  IrBuilder b;
  Value *x = b.input("x", f32({256, 1024}));  // 1 MiB
  Value *w = b.param("W", f32({1024, 1024}));
  Value *two = b.param("two", f32({1}));
  Value *h = b.node("MatMul", {x, w}, {"h"}, {f32({256, 1024})})->outputs[0];
  Value *t = b.node("Mul", {h, two}, {"t"}, {f32({256, 1024})})->outputs[0];
  b.output(b.node("Add", {t, two}, {"y"}, {f32({256, 1024})})->outputs[0]);
  uint64_t resident = 4 * kMiB + 4 + kMiB;
  EXPECT_EQ(planOf(b.model(), graphlint::Setup{}).peakAllocatedBytes, resident + 2 * kMiB);  // h, t; then t, y
  MemorySummary c = planOf(b.model(), compiled());
  EXPECT_EQ(c.peakAllocatedBytes, resident + kMiB);  // h's buffer becomes y
}

TEST(CompiledMemory, ThePartitionerRecomputesWhatOnlyFusibleBackwardsRead) {
  // h = x @ W1; t = tanh(h); m = h * t; y = m @ W2. Eager keeps h and t
  // (the product's backward), t (tanh's) and m (the second matmul's): h, t,
  // m and the output y at the start of backward. AOTAutograd recomputes t
  // from h, which it keeps anyway; m stays, read by
  // the second matmul's backward (a matmul: not fusible), and h is a matmul's
  // output (never recomputed).
  IrBuilder b;
  Value *x = b.input("x", f32({256, 1024}));  // 1 MiB
  Value *w1 = b.param("W1", f32({1024, 1024}));
  Value *w2 = b.param("W2", f32({1024, 1024}));
  Value *h = b.node("MatMul", {x, w1}, {"h"}, {f32({256, 1024})})->outputs[0];
  Value *t = b.node("Tanh", {h}, {"t"}, {f32({256, 1024})})->outputs[0];
  Value *m = b.node("Mul", {h, t}, {"m"}, {f32({256, 1024})})->outputs[0];
  b.output(b.node("MatMul", {m, w2}, {"y"}, {f32({256, 1024})})->outputs[0]);
  graphlint::Setup eager;
  eager.train = true;
  eager.optimizer = Optimizer::SGD;
  EXPECT_EQ(planOf(b.model(), eager).activationsBytes, 4 * kMiB);
  MemorySummary c = planOf(b.model(), compiled(true));
  EXPECT_EQ(c.recomputedTensors, 1u);
  EXPECT_EQ(c.recomputedBytes, kMiB);
  EXPECT_EQ(c.activationsBytes, 3 * kMiB);  // h, m, y
}

// RMSNorm blocks (c = x.float(); y = c * rsqrt(mean(c^2) + eps); y @ W) as a
// joint graph, compiled, under --recompute full. The norm's kernel runs from
// pow to the views of y the matmul reads, so the kernel holds pow's output to
// a later forward node; that is not a backward read: the checkpoint neither
// keeps pow's output nor rebuilds it, and full recompute stays below no
// recompute (before: every layer's pow output counted as saved until the end
// of backward, 70B TP rows +100%).
std::string rmsNormBlocks(int layers) {
  const int B = 4, S = 256, H = 256;
  std::string nodes, params, grads;
  auto shape = [&](bool reduced) { return fmt::format("[{},{},{}]", B, S, reduced ? 1 : H); };
  const std::string flat = fmt::format("[{},{}]", B * S, H), full = shape(false);
  auto q = [](const std::string &a) { return "\"" + a + "\""; };
  auto node = [&](const std::string &name, const char *op, const std::string &inputs, const std::string &module,
                  bool backward, const std::string &shp, const char *attrs = "{}") {
    nodes += fmt::format(R"({}{{"name":"{}","op":"{}","inputs":[{}],"outputs":[{{"name":"{}","shape":{},
      "dtype":"float32","device":"cpu"}}],"attrs":{},"module":"{}","phase":"{}"}})",
                         nodes.empty() ? "" : ",", name, op, inputs, name, shp, attrs, module,
                         backward ? "backward" : "forward");
  };
  std::string cur = "x";
  for (int i = 0; i < layers; ++i) {
    std::string n = fmt::format("layers.{}.norm", i), fc = fmt::format("layers.{}.fc", i), k = std::to_string(i);
    params += fmt::format(R"({}{{"name":"{}.weight","shape":[{},{}],"dtype":"float32","device":"cpu","requires_grad":true}})",
                          params.empty() ? "" : ",", fc, H, H);
    node("c" + k, "aten::_to_copy", q(cur), n, false, full, R"({"dtype":"float32"})");
    node("p" + k, "aten::pow", q("c" + k), n, false, full, R"({"exponent":2})");
    node("m" + k, "aten::mean", q("p" + k), n, false, shape(true), R"({"dim":[-1],"keepdim":true})");
    node("a" + k, "aten::add", q("m" + k), n, false, shape(true), R"({"other":1e-6})");
    node("r" + k, "aten::rsqrt", q("a" + k), n, false, shape(true));
    node("y" + k, "aten::mul", q("c" + k) + "," + q("r" + k), n, false, full);
    node("v" + k, "aten::view", q("y" + k), fc, false, flat);
    node("t" + k, "aten::t", q(fc + ".weight"), fc, false, fmt::format("[{},{}]", H, H));
    node("o" + k, "aten::mm", q("v" + k) + "," + q("t" + k), fc, false, flat);
    node("u" + k, "aten::view", q("o" + k), fc, false, full);
    cur = "u" + k;
  }
  node("g", "aten::ones_like", q(cur), "", true, full);
  std::string g = "g";
  for (int i = layers - 1; i >= 0; --i) {
    std::string k = std::to_string(i);
    node("gv" + k, "aten::view", q(g), "", true, flat);
    node("gw" + k, "aten::mm", q("gv" + k) + "," + q("t" + k), "", true, flat);
    node("gd" + k, "aten::mm", q("gv" + k) + "," + q("v" + k), "", true, fmt::format("[{},{}]", H, H));
    node("gy" + k, "aten::view", q("gw" + k), "", true, full);
    node("gc" + k, "aten::mul", q("gy" + k) + "," + q("r" + k), "", true, full);
    node("gx" + k, "aten::mul", q("gc" + k) + "," + q("c" + k), "", true, full);
    g = "gx" + k;
    grads += ",\"gd" + k + "\"";
  }
  return fmt::format(R"({{"format":"graphlint-fx","version":2,"mode":"train","params":[{}],
    "inputs":[{{"name":"x","shape":{},"dtype":"float32","device":"cpu"}}],"nodes":[{}],"outputs":["{}"{}]}})",
                     params, full, nodes, cur, grads);
}

TEST(CompiledMemory, AKernelHoldingItsInputIsNotABackwardReadUnderRecompute) {
  auto planFor = [](int layers, const char *recompute) {
    auto m = importFxBytes(rmsNormBlocks(layers), "rms.train.fx.json", {});
    EXPECT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
    graphlint::Setup s = compiled(true);
    const SetupKey *key = findSetupKey("recompute");
    EXPECT_FALSE(applySetup(s, {SetupSetting{key, recompute}}));
    AnalysisContext ctx(**m, s);
    const MemoryPlan &plan = ctx.get<MemoryPlan>();
    for (const MemoryPlan::Contributor &c : plan.atPeak())
      EXPECT_FALSE(c.value && llvm::StringRef(c.value->name).startswith("p"))
          << c.value->name << " (" << c.bytes << " B) is live at the " << recompute << " peak";
    return plan.summary().peakAllocatedBytes;
  };
  uint64_t none4 = planFor(4, "none"), full4 = planFor(4, "full"), full8 = planFor(8, "full");
  EXPECT_LT(full4, none4);
  // Four more layers keep four more checkpointed inputs (1 MiB each, the
  // block's output) and four more fc.weight grads (256 KiB each), nothing else.
  EXPECT_EQ(full8 - full4, 4 * (kMiB + kMiB / 4));
}

TEST(CompiledMemory, RandomAndContractionOutputsAreNeverRecomputed) {
  IrBuilder b;
  Value *x = b.input("x", f32({8}));
  Value *mm = b.node("MatMul", {x, x}, {"mm"}, {f32({})})->outputs[0];
  Value *drop = b.node("aten::native_dropout", {x}, {"d"}, {f32({8})})->outputs[0];
  Value *e = b.node("Exp", {x}, {"e"}, {f32({8})})->outputs[0];
  EXPECT_FALSE(partitionerRecomputable(*mm->producer));
  EXPECT_FALSE(partitionerRecomputable(*drop->producer));
  EXPECT_TRUE(partitionerRecomputable(*e->producer));
  EXPECT_FALSE(fusibleInBackward(*mm->producer));
  EXPECT_TRUE(fusibleInBackward(*e->producer));
}

TEST(CompiledMemory, TheBackendIsStatedOnlyWhereItIsApplied) {
  graphlint::Setup s;
  EXPECT_FALSE(s.compiledExecution());
  ASSERT_FALSE(applySetup(s, {}));
  EXPECT_FALSE(s.backendStated);
  const SetupKey *key = findSetupKey("backend");
  ASSERT_NE(key, nullptr);
  ASSERT_FALSE(applySetup(s, {SetupSetting{key, "inductor-cpu"}}));
  EXPECT_TRUE(s.backendStated);
  EXPECT_TRUE(s.compiledExecution());
  ASSERT_FALSE(applySetup(s, {SetupSetting{key, "eager"}}));
  EXPECT_FALSE(s.compiledExecution());
}

}  // namespace
