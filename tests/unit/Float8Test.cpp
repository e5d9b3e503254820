// --float8 (Float8Linears.h, docs/cost-model.md "Float8 training") on a
// three-linear MLP, bf16-mixed on H100: which linears convert, the fp8 GEMM
// FLOPs and their time at the fp8 peak, the amax + cast bytes per recipe and
// backend in closed form, the GEMMs' fp8 operand copies in the memory plan,
// and FSDP2's fp8 all-gather at 1 byte per element with its amax all-reduces.
#include "IrBuilder.h"
#include "TestSupport.h"

#include "graphlint/analyses/ComputeModel.h"
#include "graphlint/analyses/Float8Linears.h"
#include "graphlint/analyses/MemoryPlan.h"
#include "graphlint/analyses/StepTimeline.h"
#include "graphlint/base/HardwareProfile.h"

#include <gtest/gtest.h>

using namespace graphlint;
using namespace graphlint::test;

namespace {

// x [M, K] -> fc1 (K -> N1) -> relu -> fc2 (N1 -> N2) -> output (N2 -> V).
constexpr int64_t M = 8192, K = 1024, N1 = 4096, N2 = 2048, V = 1000;

struct Mlp {
  IrBuilder g;
  Node *fc1 = nullptr, *fc2 = nullptr, *head = nullptr;
  Mlp() {
    Value *x = g.input("x", f32({M, K}));
    auto linear = [&](Value *in, const char *name, int64_t in_f, int64_t out_f) {
      Value *w = g.param(std::string(name) + ".weight", f32({out_f, in_f}));
      Value *t = g.node("aten::t", {w}, {std::string(name) + ".t"}, {f32({in_f, out_f})})->outputs[0];
      return g.node("aten::mm", {in, t}, {std::string(name) + ".mm"}, {f32({M, out_f})});
    };
    fc1 = linear(x, "fc1", K, N1);
    Value *r = g.node("aten::relu", {fc1->outputs[0]}, {"relu"}, {f32({M, N1})})->outputs[0];
    fc2 = linear(r, "fc2", N1, N2);
    head = linear(fc2->outputs[0], "output", N2, V);
    g.output(head->outputs[0]);
  }
};

graphlint::Setup float8Setup(Float8 recipe, FusionBackend backend = FusionBackend::Inductor) {
  graphlint::Setup s;
  s.train = true;
  s.optimizer = Optimizer::AdamW;
  s.precision = Precision::BF16Mixed;
  s.backend = backend;
  s.float8 = recipe;
  s.resolveHardware();
  EXPECT_FALSE(s.resolveMesh());
  return s;
}

const GroupCost &groupOf(const ComputeModel &cm, const Node *n) {
  for (const GroupCost &c : cm.groups())
    for (const Node *m : c.group->nodes)
      if (m == n)
        return c;
  ADD_FAILURE() << "no group";
  return cm.groups().front();
}

constexpr double ex1 = M * K, ew1 = N1 * K, ey1 = M * N1;   // fc1's x, W, y
constexpr double ex2 = M * N1, ew2 = N2 * N1, ey2 = M * N2;  // fc2's

}  // namespace

TEST(Float8, ConvertsTheLinearsTorchtitanConvertsAndRunsTheirGemmsAtTheFp8Peak) {
  Mlp mlp;
  graphlint::Setup s = float8Setup(Float8::Tensorwise);
  AnalysisContext ctx(mlp.g.model(), s);
  const Float8Linears &f8 = ctx.get<Float8Linears>();
  ASSERT_EQ(f8.linears().size(), 2u);
  EXPECT_EQ(f8.linears()[0].name, "fc1");
  EXPECT_EQ(f8.linears()[1].name, "fc2");
  ASSERT_EQ(f8.skipped().size(), 1u);  // V = 1000 is not divisible by 16 either; the name decides first
  EXPECT_EQ(f8.skipped()[0].name, "output");
  EXPECT_DOUBLE_EQ(f8.convertedElements(), ew1 + ew2);

  const ComputeModel &cm = ctx.get<ComputeModel>();
  const double f1 = 2.0 * M * K * N1, f2 = 2.0 * M * N1 * N2;
  EXPECT_DOUBLE_EQ(cm.fp8MatmulFlopsForward(), f1 + f2);
  // Synthesised backward: fc1 reads data (dW only, 1x), fc2 dX and dW (2x).
  EXPECT_DOUBLE_EQ(cm.fp8MatmulFlopsBackward(), f1 + 2 * f2);
  const GroupCost &g1 = groupOf(cm, mlp.fc1), &head = groupOf(cm, mlp.head);
  EXPECT_EQ(g1.precision, MathPrecision::FP8);
  EXPECT_EQ(head.precision, MathPrecision::BF16) << "the output layer stays bf16";
  // The GEMM at the fp8 peak (with the relu inductor fuses into its
  // epilogue at the fp32 rate), reading fp8 operands (1 byte) and writing
  // bf16; its casts serial to it.
  const HardwareProfile &hw = *s.targetProfile();
  double gemm = std::max(f1 / (hw.peakFor(MathPrecision::FP8) * hw.tensorCoreEfficiency) +
                             ey1 / (hw.peakFor(MathPrecision::FP32) * hw.computeEfficiency),
                         (ex1 + ew1 + 2 * ey1) / (hw.memoryBandwidth * hw.memoryEfficiency));
  EXPECT_NEAR(g1.forward.seconds - g1.float8Forward.seconds, gemm, gemm * 1e-9);
  EXPECT_NEAR(g1.float8Forward.seconds, 5 * (ex1 + ew1) / (hw.memoryBandwidth * hw.memoryEfficiency), 1e-12);

  // The same MLP without --float8: every GEMM at the bf16 peak, no casts.
  graphlint::Setup bf = float8Setup(Float8::None);
  AnalysisContext plain(mlp.g.model(), bf);
  const ComputeModel &cb = plain.get<ComputeModel>();
  EXPECT_EQ(groupOf(cb, mlp.fc1).precision, MathPrecision::BF16);
  EXPECT_EQ(cb.float8CastsForward().kernels, 0u);
  EXPECT_GT(groupOf(cb, mlp.fc1).forward.seconds, g1.forward.seconds) << "fp8 is faster than bf16 here";
}

TEST(Float8, CastBytesInClosedFormPerRecipeAndBackend) {
  Mlp mlp;
  // torch.compile, tensorwise: each cast is an amax kernel (reads 2 B/elem)
  // and a cast kernel (reads 2, writes 1 per layout): 5 B/elem, 2 kernels.
  // Backward: dy once with both layouts (6), W again (5), x again (5).
  graphlint::Setup tw = float8Setup(Float8::Tensorwise);
  AnalysisContext a(mlp.g.model(), tw);
  const ComputeModel &ct = a.get<ComputeModel>();
  EXPECT_DOUBLE_EQ(ct.float8CastsForward().bytes, 5 * (ex1 + ew1) + 5 * (ex2 + ew2));
  EXPECT_EQ(ct.float8CastsForward().kernels, 8u);
  EXPECT_DOUBLE_EQ(ct.float8CastsBackward().bytes, 6 * ey1 + 5 * ew1 + 5 * ex1 + 6 * ey2 + 5 * ew2 + 5 * ex2);
  EXPECT_EQ(ct.float8CastsBackward().kernels, 12u);

  // Rowwise: a scale along each GEMM's reduction axis, so dy is cast twice.
  graphlint::Setup rw = float8Setup(Float8::Rowwise);
  AnalysisContext b(mlp.g.model(), rw);
  const ComputeModel &cr = b.get<ComputeModel>();
  EXPECT_DOUBLE_EQ(cr.float8CastsForward().bytes, ct.float8CastsForward().bytes);
  EXPECT_DOUBLE_EQ(cr.float8CastsBackward().bytes, 10 * ey1 + 5 * ew1 + 5 * ex1 + 10 * ey2 + 5 * ew2 + 5 * ex2);
  EXPECT_EQ(cr.float8CastsBackward().kernels, 16u);

  // Eager: abs, max, to(fp32), * scale, clamp, to(fp8): 4h + 25 = 33 B/elem
  // in 6 kernels per cast; the transposed operands are copies (2 B/elem).
  graphlint::Setup eg = float8Setup(Float8::Tensorwise, FusionBackend::Eager);
  AnalysisContext c(mlp.g.model(), eg);
  const ComputeModel &ce = c.get<ComputeModel>();
  EXPECT_DOUBLE_EQ(ce.float8CastsForward().bytes, 33 * (ex1 + ew1 + ex2 + ew2));
  EXPECT_EQ(ce.float8CastsForward().kernels, 24u);
  auto eagerBackward = [](double ex, double ew, double ey) {
    return 33 * ey + (33 * ew + 2 * ew) + (33 * ex + 2 * ex) + (33 * ey + 2 * ey);
  };
  EXPECT_DOUBLE_EQ(ce.float8CastsBackward().bytes, eagerBackward(ex1, ew1, ey1) + eagerBackward(ex2, ew2, ey2));
  EXPECT_EQ(ce.float8CastsBackward().kernels, 2u * (6 + 7 + 7 + 7));
}

TEST(Float8, SavedTensorsStayBf16AndTheGemmsFp8CopiesAreTemporaries) {
  Mlp mlp;
  graphlint::Setup none = float8Setup(Float8::None), tw = float8Setup(Float8::Tensorwise);
  AnalysisContext a(mlp.g.model(), none), b(mlp.g.model(), tw);
  const MemorySummary &m0 = a.get<MemoryPlan>().summary(), &m8 = b.get<MemoryPlan>().summary();
  // torchao saves input_hp and weight_hp_t: what a bf16 linear saves.
  EXPECT_EQ(m8.activationsBytes, m0.activationsBytes);
  // The largest fp8 moment is fc1's synthesised backward: grad_input's dy in
  // both layouts and W (2 ey1 + ew1) against grad_weight's x and dy^T.
  const Float8Linears &f8 = b.get<Float8Linears>();
  EXPECT_DOUBLE_EQ(f8.backwardCasts(f8.linears()[0], 2).liveBytes, std::max(2 * ey1 + ew1, ex1 + ey1));
  EXPECT_GE(m8.peakAllocatedBytes, m0.peakAllocatedBytes);
  EXPECT_EQ(m8.float8, "tensorwise");
}

TEST(Float8, Fp8AllGatherMovesConvertedWeightsAtOneBytePerElement) {
  Mlp mlp;
  auto timeline = [&](bool allGather, bool precompute, std::vector<CollectiveCall> &calls, double &gathered) {
    graphlint::Setup s = float8Setup(Float8::Tensorwise);
    s.dpShard = 4;
    s.float8AllGather = allGather;
    s.float8PrecomputeScale = precompute;
    EXPECT_FALSE(s.resolveMesh());
    AnalysisContext ctx(mlp.g.model(), s);
    const StepTimeline &st = ctx.get<StepTimeline>();
    EXPECT_EQ(st.strategy(), ParallelStrategy::FSDP2);
    calls = st.collectives();
    gathered = 0;
    for (const CollectiveCall &c : calls)
      if (c.kind == CollectiveKind::AllGather && c.phase == "forward")
        gathered += c.bytes;
    return ctx.get<MemoryPlan>().summary().peakAllocatedBytes;
  };
  std::vector<CollectiveCall> bf16Calls, fp8Calls, preCalls;
  double bf16Bytes = 0, fp8Bytes = 0, preBytes = 0;
  uint64_t peakBf16 = timeline(false, false, bf16Calls, bf16Bytes);
  uint64_t peakFp8 = timeline(true, false, fp8Calls, fp8Bytes);
  timeline(true, true, preCalls, preBytes);
  const double head = static_cast<double>(V) * N2;
  EXPECT_DOUBLE_EQ(bf16Bytes, 2 * (ew1 + ew2 + head));   // FSDP2's bf16 param_dtype
  EXPECT_DOUBLE_EQ(fp8Bytes, 1 * (ew1 + ew2) + 2 * head);  // converted weights in fp8
  EXPECT_LT(peakFp8, peakBf16) << "the gathered weights are held in fp8";
  // Without precomputed scales: a 4-byte MAX all-reduce per converted weight
  // before each of its gathers; with them, one of 2 x 4 bytes after the optimizer.
  auto count = [](const std::vector<CollectiveCall> &calls, const char *phase, double bytes) {
    return std::count_if(calls.begin(), calls.end(), [&](const CollectiveCall &c) {
      return c.kind == CollectiveKind::AllReduce && c.phase == phase && c.bytes == bytes;
    });
  };
  EXPECT_EQ(count(fp8Calls, "forward", 4), 2);
  EXPECT_EQ(count(fp8Calls, "backward", 4), 2);
  EXPECT_EQ(count(preCalls, "forward", 4), 0);
  EXPECT_EQ(count(preCalls, "after optimizer", 8), 1);
  EXPECT_EQ(count(bf16Calls, "forward", 4), 0);
}

TEST(Float8, SetupRefusesWhatTorchaoRefuses) {
  graphlint::Setup s;
  s.float8 = Float8::Tensorwise;
  s.target = "A100-80GB";
  auto e = s.checkFloat8();
  ASSERT_TRUE(e);
  EXPECT_NE(e->find("--float8 tensorwise needs fp8 tensor cores; A100-80GB has none"), std::string::npos) << *e;
  s.target = "H100-SXM";
  EXPECT_FALSE(s.checkFloat8());
  s.float8 = Float8::Rowwise;
  s.float8AllGather = true;
  ASSERT_TRUE(s.checkFloat8());
  EXPECT_NE(s.checkFloat8()->find("float8-all-gather needs --float8 tensorwise"), std::string::npos);
  // Without FSDP2 the fp8 all-gather is off, as torchtitan turns it off.
  s.float8 = Float8::Tensorwise;
  EXPECT_FALSE(s.float8GathersFp8());
}
