// Precision from the graph (issue 42 item 4, docs/memory.md "Precision: the
// capture's or the policy's"). A capture traced in bf16 records which
// tensors stay fp32 (an RMSNorm's upcast, the loss on fp32 logits): a
// 16-bit --precision keeps them fp32 in memory and time and decides only
// the model states. An fp32 capture records nothing of the 16-bit run: the
// policy narrows its fp32 activations and contractions, as before.
// tests/fixtures/fx/upcast_bf16.py is the reproducer (the user trial's
// Qwen2 in bf16 was under-predicted by 10.6%, this model by 21.9%).
#include "TestSupport.h"

#include "graphlint/analyses/CapturePrecision.h"
#include "graphlint/analyses/ComputeModel.h"
#include "graphlint/analyses/MemoryPlan.h"
#include "graphlint/import/Importer.h"

#include <llvm/Support/JSON.h>

#include <gtest/gtest.h>

using namespace graphlint;
using namespace graphlint::test;

namespace {

std::unique_ptr<Model> load(const std::string &file) {
  auto m = importModelFile(sourcePath("tests/fixtures/fx/" + file), {});
  if (!m) {
    ADD_FAILURE() << file << ": " << llvm::toString(m.takeError());
    return nullptr;
  }
  return std::move(*m);
}

graphlint::Setup adam(Precision p) {
  graphlint::Setup s;
  s.train = true;
  s.optimizer = Optimizer::Adam;
  s.precision = p;
  s.kernels = Kernels::Cpu;  // the truth was measured on the CPU
  return s;
}

uint64_t peak(const Model &m, Precision p) {
  graphlint::Setup s = adam(p);
  AnalysisContext ctx(m, s);
  return ctx.get<MemoryPlan>().summary().peakAllocatedBytes;
}

}  // namespace

TEST(CapturePrecision, RecordedWhenAContractionReadsSixteenBitOperands) {
  auto bf16 = load("upcast_bf16.train.fx.json"), fp32 = load("upcast_fp32.train.fx.json");
  ASSERT_TRUE(bf16 && fp32);
  graphlint::Setup s = adam(Precision::BF16);
  CapturePrecision recorded(*bf16, s), policy(*fp32, s);
  EXPECT_TRUE(recorded.recorded());
  ASSERT_TRUE(recorded.evidence());
  EXPECT_EQ(recorded.evidence()->atenName(), "mm");  // the first Linear, in bf16
  EXPECT_FALSE(recorded.policyNarrowsFp32());
  EXPECT_EQ(recorded.storedBits(DType::Float), 32u);  // the upcast stays fp32
  EXPECT_EQ(recorded.contractionMath(DType::Float), MathPrecision::FP32);
  EXPECT_EQ(recorded.contractionMath(DType::BFloat16), MathPrecision::BF16);
  // The fp32 capture says nothing of a bf16 run: the policy decides.
  EXPECT_FALSE(policy.recorded());
  EXPECT_TRUE(policy.policyNarrowsFp32());
  EXPECT_EQ(policy.storedBits(DType::Float), 16u);
  EXPECT_EQ(policy.contractionMath(DType::Float), MathPrecision::BF16);
  // Under fp32 nothing is narrowed either way.
  graphlint::Setup f = adam(Precision::FP32);
  EXPECT_FALSE(CapturePrecision(*fp32, f).policyNarrowsFp32());
}

// The bf16 capture's peak under --precision bf16 against the step PyTorch
// ran (upcast_bf16.measured.json): within the 3% memory target (it is within
// 20 bytes); narrowing its fp32 upcasts, it was 21.9% low.
TEST(CapturePrecision, Bf16CaptureKeepsItsFp32TensorsAgainstTheMeasuredStep) {
  auto bf16 = load("upcast_bf16.train.fx.json");
  ASSERT_TRUE(bf16);
  auto measured = llvm::json::parse(readFile(sourcePath("tests/fixtures/fx/upcast_bf16.measured.json")));
  ASSERT_TRUE(static_cast<bool>(measured)) << llvm::toString(measured.takeError());
  double truth = *measured->getAsObject()->getObject("training")->getNumber("peak_allocated_bytes");
  EXPECT_NEAR(static_cast<double>(peak(*bf16, Precision::BF16)) / truth, 1.0, 0.03);
  // The activations are the capture's under every policy; bf16-mixed adds
  // the fp32 master copy and moments, not wider activations.
  graphlint::Setup b = adam(Precision::BF16), f = adam(Precision::FP32), mixed = adam(Precision::BF16Mixed);
  AnalysisContext cb(*bf16, b), cf(*bf16, f), cm(*bf16, mixed);
  uint64_t act = cb.get<MemoryPlan>().summary().activationsBytes;
  EXPECT_EQ(act, cf.get<MemoryPlan>().summary().activationsBytes);
  EXPECT_EQ(act, cm.get<MemoryPlan>().summary().activationsBytes);
}

// A bf16 capture's trainable weights are the run's compute copies: a mixed
// policy stores them as it says. Under FSDP2 bf16-mixed (torchtitan:
// param_dtype bf16, reduce_dtype fp32) the sharded weights and gradients are
// fp32, as for an fp32 capture of the same model; pure bf16 keeps 2 bytes.
TEST(CapturePrecision, MixedPolicySizesTheWeightsOfASixteenBitCapture) {
  auto bf16 = load("upcast_bf16.train.fx.json"), fp32 = load("upcast_fp32.train.fx.json");
  ASSERT_TRUE(bf16 && fp32);
  auto states = [](const Model &m, Precision p, unsigned dpShard) {
    graphlint::Setup s = adam(p);
    s.dpShard = dpShard;
    EXPECT_FALSE(s.resolveMesh());
    AnalysisContext ctx(m, s);
    const MemorySummary &sum = ctx.get<MemoryPlan>().summary();
    return std::pair{sum.paramsBytes, sum.gradsBytes};
  };
  for (unsigned shard : {1u, 8u}) {
    EXPECT_EQ(states(*bf16, Precision::BF16Mixed, shard), states(*fp32, Precision::BF16Mixed, shard)) << shard;
    auto pure = states(*bf16, Precision::BF16, shard), mixed = states(*bf16, Precision::BF16Mixed, shard);
    EXPECT_GT(pure.first, 0u);
    if (shard > 1)  // FSDP2: fp32 shards of weights and gradients
      EXPECT_EQ(mixed.first, 2 * pure.first) << shard;
  }
}

// An fp32 capture under a 16-bit policy: every fp32 activation in 16 bits,
// every contraction at the bf16 peak -- the policy is the only information.
TEST(CapturePrecision, Fp32CaptureTakesThePolicy) {
  auto fp32 = load("upcast_fp32.train.fx.json");
  ASSERT_TRUE(fp32);
  graphlint::Setup b = adam(Precision::BF16), f = adam(Precision::FP32);
  AnalysisContext cb(*fp32, b), cf(*fp32, f);
  const MemorySummary &narrow = cb.get<MemoryPlan>().summary(), &wide = cf.get<MemoryPlan>().summary();
  EXPECT_LT(narrow.activationsBytes, wide.activationsBytes * 0.51);  // fp32 halved; int64 ids kept
  EXPECT_GT(narrow.activationsBytes, wide.activationsBytes * 0.49);
  EXPECT_EQ(cb.get<ComputeModel>().matmulPrecision(), MathPrecision::BF16);
  EXPECT_EQ(cf.get<ComputeModel>().matmulPrecision(), MathPrecision::FP32);
}

// Time follows the same facts: the bf16 capture's matmuls run in bf16 under
// any policy, its fp32 bytes move as fp32.
TEST(CapturePrecision, Bf16CaptureIsCostedInItsOwnDtypes) {
  auto bf16 = load("upcast_bf16.train.fx.json");
  ASSERT_TRUE(bf16);
  graphlint::Setup b = adam(Precision::BF16), f = adam(Precision::FP32);
  b.target = f.target = "H100-SXM";
  AnalysisContext cb(*bf16, b), cf(*bf16, f);
  const ComputeModel &mb = cb.get<ComputeModel>(), &mf = cf.get<ComputeModel>();
  EXPECT_EQ(mb.matmulPrecision(), MathPrecision::BF16);
  EXPECT_EQ(mf.matmulPrecision(), MathPrecision::BF16);
  EXPECT_DOUBLE_EQ(mb.forwardTotal().bytes, mf.forwardTotal().bytes);
  EXPECT_DOUBLE_EQ(mb.backwardTotal().bytes, mf.backwardTotal().bytes);
}
