// What the step-time calibration changed in the compute model
// (docs/cost-model.md "Calibration"), on the committed resnet50 joint graph
// (tests/fixtures/calibration/resnet50.fx.json, graphlint-export --train,
// torchvision 0.29): convolution_backward FLOPs, views that write nothing,
// TF32 convolutions under fp32, --precision tf32, --backend eager, two-pass
// batch norm and the tensor-core efficiency. The published rows themselves
// are StepTimeCalibration's (validation/calibrate_step_time.py).
#include "IrBuilder.h"
#include "TestSupport.h"

#include "graphlint/analyses/ComputeModel.h"
#include "graphlint/base/HardwareProfile.h"
#include "graphlint/analyses/StepTimeline.h"

#include <gtest/gtest.h>

using namespace graphlint;
using namespace graphlint::test;

namespace {

std::unique_ptr<Model> resnet50(int64_t batch) {
  ImportOptions io;
  io.dims = {{"batch", batch}};
  auto m = importModelFile(sourcePath("tests/fixtures/calibration/resnet50.fx.json"), io);
  if (!m) {
    ADD_FAILURE() << llvm::toString(m.takeError());
    return nullptr;
  }
  return std::move(*m);
}

// AnalysisContext keeps a reference to its Setup: hold it in a variable.
graphlint::Setup trainingOn(const char *target, Precision p, FusionBackend b = FusionBackend::Inductor) {
  graphlint::Setup s;
  s.train = true;
  s.optimizer = Optimizer::Momentum;
  s.precision = p;
  s.backend = b;
  s.target = target;
  return s;
}

}  // namespace

// Every kernel of the joint graph has a cost, and the backward is the
// closed form: dX and dW of every convolution (2x forward) but dX of the
// first, whose input is data (4.09 GMACs per image forward, the first conv
// 118 MMACs).
TEST(StepTimeModel, ConvolutionBackwardIsTwoForwardConvolutions) {
  auto m = resnet50(8);
  ASSERT_TRUE(m);
  graphlint::Setup ctxSetup = trainingOn("A100-80GB", Precision::FP32);
  AnalysisContext ctx(*m, ctxSetup);
  const ComputeModel &cm = ctx.get<ComputeModel>();
  EXPECT_EQ(cm.unknownGroups(), 0u);
  double fwd = cm.forwardTotal().matmulFlops, bwd = cm.backwardTotal().matmulFlops;
  double firstConv = 2.0 * 8 * 64 * 112 * 112 * 3 * 7 * 7;
  EXPECT_NEAR(fwd / 8 / 2, 4.09e9, 0.01e9);
  EXPECT_NEAR(bwd, 2 * fwd - firstConv, 1e-6 * bwd);
}

// PyTorch runs fp32 convolutions in TF32 on Ampere (cudnn.allow_tf32) and in
// fp32 on Volta; tf32 and fp32 store the same bytes.
TEST(StepTimeModel, Fp32ConvolutionsRunInTf32WhereTheGpuHasIt) {
  auto m = resnet50(8);
  ASSERT_TRUE(m);
  graphlint::Setup a100Setup = trainingOn("A100-80GB", Precision::FP32);
  AnalysisContext a100(*m, a100Setup);
  graphlint::Setup v100Setup = trainingOn("V100", Precision::FP32);
  AnalysisContext v100(*m, v100Setup);
  graphlint::Setup tf32Setup = trainingOn("A100-80GB", Precision::TF32);
  AnalysisContext tf32(*m, tf32Setup);
  EXPECT_EQ(a100.get<ComputeModel>().matmulPrecision(), MathPrecision::TF32);
  EXPECT_EQ(tf32.get<ComputeModel>().forwardTotal().bytes, a100.get<ComputeModel>().forwardTotal().bytes);
  const HardwareProfile &v = *HardwareCatalog::instance().find("V100");
  EXPECT_FALSE(v.supportsTf32());
  // On V100 the convolutions run at the fp32 CUDA-core rate with compute_efficiency.
  double convSeconds = v100.get<ComputeModel>().forwardTotal().matmulFlops / (v.peakFor(MathPrecision::FP32) * 0.7);
  EXPECT_GE(v100.get<ComputeModel>().forwardTotal().gpuSeconds, 0.99 * convSeconds);
}

// Eager PyTorch: one kernel per op that is not a view, each through memory.
TEST(StepTimeModel, EagerBackendLaunchesOneKernelPerOp) {
  auto m = resnet50(8);
  ASSERT_TRUE(m);
  graphlint::Setup eagerSetup = trainingOn("A100-80GB", Precision::BF16Mixed, FusionBackend::Eager);
  AnalysisContext eager(*m, eagerSetup);
  graphlint::Setup fusedSetup = trainingOn("A100-80GB", Precision::BF16Mixed, FusionBackend::Inductor);
  AnalysisContext fused(*m, fusedSetup);
  const KernelTime &e = eager.get<ComputeModel>().forwardTotal(), &f = fused.get<ComputeModel>().forwardTotal();
  // 53 convolutions, 53 batch norms, 49 ReLUs, 16 residual adds, max pool,
  // average pool, the classifier's addmm: 174 forward kernels on CUDA cores
  // (fp32 on V100, which read NCHW as it is); on tensor cores the NCHW
  // tensors of each convolution are converted to NHWC and back by kernels
  // of their own.
  graphlint::Setup cudaCores = trainingOn("V100", Precision::FP32, FusionBackend::Eager);
  AnalysisContext v100(*m, cudaCores);
  EXPECT_EQ(v100.get<ComputeModel>().forwardTotal().kernels, 174u);
  EXPECT_EQ(v100.get<ComputeModel>().forwardTotal().layoutBytes, 0);
  EXPECT_GT(e.kernels, 174u);
  EXPECT_GT(e.layoutBytes, 0);
  EXPECT_LT(f.kernels, e.kernels);
  EXPECT_GT(e.bytes, f.bytes);
  EXPECT_DOUBLE_EQ(e.flops, f.flops);
}

// A view writes nothing and batch norm reads its input twice: the first
// batch norm's kernel moves 2x its input + its output (+ 64-channel
// statistics), the in-place ReLU after it 1x in + 1x out, although autograd
// reads that ReLU's output again through views.
TEST(StepTimeModel, EagerKernelsMoveWhatTheyTouch) {
  auto m = resnet50(8);
  ASSERT_TRUE(m);
  graphlint::Setup ctxSetup = trainingOn("A100-80GB", Precision::FP32, FusionBackend::Eager);
  AnalysisContext ctx(*m, ctxSetup);
  const ComputeModel &cm = ctx.get<ComputeModel>();
  double act = 8.0 * 64 * 112 * 112 * 4;
  bool sawNorm = false, sawRelu = false;
  for (const GroupCost &g : cm.groups()) {
    if (!g.group || g.group->nodes.empty())
      continue;
    std::string op = g.group->nodes.front()->atenName();
    if (op == "_native_batch_norm_legit" && !sawNorm) {
      sawNorm = true;
      EXPECT_NEAR(g.forward.bytes, 3 * act, 0.001 * act);
    }
    if (op == "relu_" && !sawRelu) {
      sawRelu = true;
      EXPECT_DOUBLE_EQ(g.forward.bytes, 2 * act);
    }
  }
  EXPECT_TRUE(sawNorm && sawRelu);
}

// tensor_core_efficiency: its own field, default 0.5, validated like the others.
TEST(StepTimeModel, TensorCoreEfficiencyIsAProfileField) {
  const char *yaml = R"(
profiles:
  - name: X1
    sm_count: 1
    memory_gib: 1
    memory_bandwidth_gb_per_s: 100
    peak_tflops: { fp32: 10, bf16: 100 }
    tensor_core_efficiency: 0.65
  - name: X2
    sm_count: 1
    memory_gib: 1
    memory_bandwidth_gb_per_s: 100
    peak_tflops: { fp32: 10 }
)";
  auto p = parseHardwareYaml(yaml, "user.yaml");
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  EXPECT_DOUBLE_EQ((*p)[0].tensorCoreEfficiency, 0.65);
  EXPECT_DOUBLE_EQ((*p)[0].efficiencyFor(MathPrecision::BF16), 0.65);
  EXPECT_DOUBLE_EQ((*p)[0].efficiencyFor(MathPrecision::FP32), 0.7);
  EXPECT_DOUBLE_EQ((*p)[1].tensorCoreEfficiency, 0.5);
  auto bad = parseHardwareYaml(R"(
profiles:
  - name: X3
    sm_count: 1
    memory_gib: 1
    memory_bandwidth_gb_per_s: 100
    peak_tflops: { fp32: 10 }
    tensor_core_efficiency: 1.5
)", "bad.yaml");
  ASSERT_FALSE(bool(bad));
  EXPECT_NE(llvm::toString(bad.takeError()).find("tensor_core_efficiency"), std::string::npos);
}

// Attention on a GPU target is the FlashAttention kernel the GPU runs (issue
// 41): 4·b·h·s²·d forward, halved for a causal mask, 2.5x that in backward
// (FlashAttention-2), bytes the operands, output and logsumexp (no s²
// softmax); --kernels cpu keeps the full s² of the CPU's path. A joint
// graph's backward kernel costs the same 2.5x.
TEST(StepTimeModel, AttentionIsCostedAsTheFlashKernel) {
  auto bf16 = [](std::initializer_list<int64_t> dims) { return tensorOf(DType::BFloat16, dims); };
  const int64_t b = 2, h = 8, s = 1024, d = 64;
  const double full = 4.0 * b * h * s * s * d;
  auto costOf = [&](bool causal, Kernels kernels, bool joint) {
    IrBuilder g;
    // Trained operands, so the backward differentiates all three.
    Value *q = g.param("q", bf16({b, h, s, d}));
    Value *k = g.param("k", bf16({b, h, s, d}));
    Value *v = g.param("v", bf16({b, h, s, d}));
    Node *fwd = g.node("aten::_scaled_dot_product_flash_attention", {q, k, v}, {"o", "lse"},
                       {bf16({b, h, s, d}), f32({b, h, s})});
    Attribute a;
    a.name = "is_causal";
    a.kind = AttrKind::Int;
    a.i = causal;
    fwd->attributes.push_back(a);
    if (joint) {
      Value *go = g.node("aten::ones_like", {fwd->outputs[0]}, {"go"}, {bf16({b, h, s, d})})->outputs[0];
      Node *bwd = g.node("aten::_scaled_dot_product_flash_attention_backward",
                         {go, q, k, v, fwd->outputs[0], fwd->outputs[1]}, {"dq", "dk", "dv"},
                         {bf16({b, h, s, d}), bf16({b, h, s, d}), bf16({b, h, s, d})});
      bwd->attributes.push_back(a);
      go->producer->backwardPhase = true;
      bwd->backwardPhase = true;
      for (Value *o : bwd->outputs)
        g.output(o);
    }
    g.output(fwd->outputs[0]);
    graphlint::Setup st;
    st.train = true;
    st.precision = Precision::BF16Mixed;
    st.kernels = kernels;
    AnalysisContext ctx(g.model(), st);
    const ComputeModel &cm = ctx.get<ComputeModel>();
    EXPECT_EQ(cm.unknownGroups(), 0u);
    return std::pair{cm.forwardTotal().matmulFlops, cm.backwardTotal().matmulFlops};
  };
  auto dense = costOf(false, Kernels::Cuda, false);
  EXPECT_DOUBLE_EQ(dense.first, full);
  EXPECT_DOUBLE_EQ(dense.second, 2.5 * full);
  auto causal = costOf(true, Kernels::Cuda, false);
  EXPECT_DOUBLE_EQ(causal.first, full / 2);
  EXPECT_DOUBLE_EQ(causal.second, 2.5 * full / 2);
  EXPECT_DOUBLE_EQ(costOf(true, Kernels::Cpu, false).first, full) << "the CPU's path computes every score";
  auto joint = costOf(true, Kernels::Cuda, true);
  EXPECT_DOUBLE_EQ(joint.first, full / 2);
  EXPECT_DOUBLE_EQ(joint.second, 2.5 * full / 2);
}

// attention_efficiency: on H100-class targets FlashAttention-style kernels
// reach 0.297 of the bf16 peak (pytorch/benchmark d5f0a12, PR #2296: sdpa
// forward, mean 294.2 of 989.4 TFLOP/s), not the GEMMs' 0.5. Forward,
// synthesised backward and a joint graph's backward kernel all run at it.
TEST(StepTimeModel, AttentionRunsAtTheMeasuredAttentionEfficiencyOnH100) {
  auto bf16 = [](std::initializer_list<int64_t> dims) { return tensorOf(DType::BFloat16, dims); };
  const int64_t b = 2, h = 8, s = 2048, d = 128;
  const double full = 4.0 * b * h * s * s * d;  // dense: compute-bound by far
  HardwareCatalog catalog = HardwareCatalog::builtin();
  const HardwareProfile &h100 = *catalog.find("H100-SXM");
  ASSERT_DOUBLE_EQ(h100.attentionEfficiencyFor(MathPrecision::BF16), 0.297);
  EXPECT_DOUBLE_EQ(h100.efficiencyFor(MathPrecision::BF16), 0.5) << "GEMMs keep the calibrated share";
  const double attentionPeak = 989.4e12 * 0.297;
  // The attention group's (forward, backward) GPU seconds.
  auto timeOf = [&](bool joint) {
    IrBuilder g;
    Value *q = g.param("q", bf16({b, h, s, d}));
    Value *k = g.param("k", bf16({b, h, s, d}));
    Value *v = g.param("v", bf16({b, h, s, d}));
    Node *fwd = g.node("aten::_scaled_dot_product_flash_attention", {q, k, v}, {"o", "lse"},
                       {bf16({b, h, s, d}), f32({b, h, s})});
    Node *bwd = nullptr;
    if (joint) {
      Value *go = g.node("aten::ones_like", {fwd->outputs[0]}, {"go"}, {bf16({b, h, s, d})})->outputs[0];
      bwd = g.node("aten::_scaled_dot_product_flash_attention_backward",
                   {go, q, k, v, fwd->outputs[0], fwd->outputs[1]}, {"dq", "dk", "dv"},
                   {bf16({b, h, s, d}), bf16({b, h, s, d}), bf16({b, h, s, d})});
      go->producer->backwardPhase = true;
      bwd->backwardPhase = true;
      for (Value *o : bwd->outputs)
        g.output(o);
    }
    g.output(fwd->outputs[0]);
    graphlint::Setup st;  // target: H100-SXM
    st.train = true;
    st.precision = Precision::BF16Mixed;
    AnalysisContext ctx(g.model(), st);
    const ComputeModel &cm = ctx.get<ComputeModel>();
    double forward = 0, backward = 0;
    for (const GroupCost &c : cm.groups()) {
      if (!c.group || c.group->nodes.empty())
        continue;
      const Node *lead = c.group->nodes.front();
      if (lead == fwd) {
        EXPECT_DOUBLE_EQ(c.forward.attentionFlops, full);
        forward = c.forward.gpuSeconds;
        if (!joint)
          backward = c.backward.gpuSeconds;
      }
      if (lead == bwd) {
        EXPECT_DOUBLE_EQ(c.forward.attentionFlops + c.backward.attentionFlops, 2.5 * full);
        backward = c.forward.gpuSeconds + c.backward.gpuSeconds;
      }
    }
    return std::pair{forward, backward};
  };
  auto synthesised = timeOf(false);
  EXPECT_NEAR(synthesised.first, full / attentionPeak, 1e-9 * synthesised.first);
  EXPECT_GT(synthesised.first, 1.5 * full / (989.4e12 * 0.5)) << "attention costed at the GEMM efficiency";
  EXPECT_NEAR(synthesised.second, 2.5 * full / attentionPeak, 1e-9 * synthesised.second);
  auto joint = timeOf(true);
  EXPECT_NEAR(joint.first, full / attentionPeak, 1e-9 * joint.first);
  EXPECT_NEAR(joint.second, 2.5 * full / attentionPeak, 1e-9 * joint.second);
}
