// One model, one answer (issue 42 item 7). A UNet's dynamo ONNX export
// printed MFU 191.7% and its FX capture 126.5% (the FLOPs of TF32
// convolutions held to the fp32 CUDA-core peak of the graph's first
// contraction, a Linear), and the two disagreed on the step time (2.17 vs
// 3.28 ms: only the FX capture paid the NCHW layout transforms, the ONNX
// file's synthesised backward moved twice the forward's bytes) and on the
// training peak (+8..14% vs -5..-7%: torch.onnx's GroupNorm decomposition
// kept two input-sized tensors eager's kernel does not).
// tests/fixtures/parity/conv_norm_block.py is that UNet's block, exported
// as an FX joint graph, a dynamo ONNX file and a TorchScript ONNX file; the
// step time and the peak of all three agree within the 2% the memory parity
// of validation/memory_matrix.py asks of ONNX against FX (PARITY), and the peak
// is within 3% of the step PyTorch ran (docs/validation.md).
#include "TestSupport.h"

#include "graphlint/analyses/ComputeModel.h"
#include "graphlint/analyses/MemoryPlan.h"
#include "graphlint/analyses/StepTimeline.h"
#include "graphlint/import/Importer.h"

#include <llvm/Support/JSON.h>

#include <gtest/gtest.h>

#include <cmath>

using namespace graphlint;
using namespace graphlint::test;

namespace {

constexpr double kParity = 0.02;  // validation/memory_matrix.py PARITY: ONNX against FX, the same model
constexpr double kTruth = 0.03;   // the memory target against the measured step (docs/memory.md)

std::unique_ptr<Model> load(const std::string &file, int64_t batch) {
  ImportOptions io;
  io.dims = {{"batch", batch}};
  auto m = importModelFile(sourcePath("tests/fixtures/parity/" + file), io);
  if (!m) {
    ADD_FAILURE() << file << ": " << llvm::toString(m.takeError());
    return nullptr;
  }
  return std::move(*m);
}

graphlint::Setup adamOn(const char *target, Kernels kernels = Kernels::Cuda) {
  graphlint::Setup s;
  s.train = true;
  s.optimizer = Optimizer::Adam;
  s.target = target;
  s.kernels = kernels;
  return s;
}

struct Predicted {
  double step = 0, mfu = 0;
  uint64_t peak = 0;
};

Predicted predict(const std::string &file, int64_t batch, const graphlint::Setup &s) {
  Predicted p;
  auto m = load(file, batch);
  if (!m)
    return p;
  AnalysisContext ctx(*m, s);
  const StepTimeline &st = ctx.get<StepTimeline>();
  p.step = st.stepSeconds();
  p.mfu = st.mfu();
  p.peak = ctx.get<MemoryPlan>().summary().peakAllocatedBytes;
  return p;
}

const char *kFiles[] = {"conv_norm_block.train.fx.json", "conv_norm_block.onnx", "conv_norm_block_ts.onnx"};

// A Linear first (fp32 on CUDA cores) and a large convolution after it
// (TF32 on tensor cores): the UNet's mix in two nodes.
const char *kLinearThenConv = R"({"format":"graphlint-fx","version":2,
  "params":[{"name":"w","kind":"parameter","shape":[64,64],"dtype":"float32","requires_grad":true,"strides":[64,1]},
            {"name":"k","kind":"parameter","shape":[256,256,3,3],"dtype":"float32","requires_grad":true,
             "strides":[2304,9,3,1]}],
  "inputs":[{"name":"t","shape":[64,64],"dtype":"float32","strides":[64,1]},
            {"name":"x","shape":[64,256,32,32],"dtype":"float32","strides":[262144,1024,32,1]}],
  "nodes":[{"name":"e","op":"aten::mm","inputs":["t","w"],
            "outputs":[{"name":"e","shape":[64,64],"dtype":"float32","strides":[64,1]}]},
           {"name":"y","op":"aten::convolution","inputs":["x","k"],
            "attrs":{"bias":null,"stride":[1,1],"padding":[1,1],"dilation":[1,1],"transposed":false,
                     "output_padding":[0,0],"groups":1},
            "outputs":[{"name":"y","shape":[64,256,32,32],"dtype":"float32","strides":[262144,1024,32,1]}]}],
  "outputs":["e","y"]})";

}  // namespace

// MFU holds each FLOP to the peak of the math it runs in: the convolution's
// to TF32's, the Linear's to fp32's. Held to the first contraction's fp32
// peak, the TF32 convolution made MFU 3.7x (the UNet's 191.7%).
TEST(FrontendParity, MfuHoldsEachContractionToThePeakItRunsAt) {
  auto m = importFxBytes(kLinearThenConv, "mix.fx.json", {});
  ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
  graphlint::Setup s = adamOn("H100-SXM");
  AnalysisContext ctx(**m, s);
  const ComputeModel &cm = ctx.get<ComputeModel>();
  const HardwareProfile *hw = cm.hardware();
  ASSERT_TRUE(hw);
  EXPECT_EQ(cm.matmulPrecision(), MathPrecision::TF32);  // most contraction FLOPs: the convolution's
  const double conv = 2.0 * 64 * 256 * 32 * 32 * 256 * 9, mm = 2.0 * 64 * 64 * 64;
  // Forward and dW of each (x and t are data: no dX).
  double ideal = 2 * conv / hw->peakFor(MathPrecision::TF32) + 2 * mm / hw->peakFor(MathPrecision::FP32);
  EXPECT_NEAR(cm.peakSeconds(), ideal, 1e-9 * ideal);
  const StepTimeline &st = ctx.get<StepTimeline>();
  EXPECT_NEAR(st.mfu(), ideal / st.stepSeconds(), 1e-9);
  EXPECT_GT(st.mfu(), 0.3);  // compute-bound: near the tensor-core efficiency
  EXPECT_LE(st.mfu(), 1.0);
}

// The three exports of one model: the same step time and peak within 2%,
// at a launch-bound and a compute-bound batch, and MFU never above 100%.
TEST(FrontendParity, OnnxAndFxCapturesOfOneModelAgreeOnStepTimeAndMemory) {
  for (int64_t batch : {8, 64, 512}) {
    SCOPED_TRACE(batch);
    graphlint::Setup s = adamOn("H100-SXM");
    Predicted fx = predict(kFiles[0], batch, s);
    ASSERT_GT(fx.step, 0);
    EXPECT_LE(fx.mfu, 1.0);
    for (const char *onnx : {kFiles[1], kFiles[2]}) {
      SCOPED_TRACE(onnx);
      Predicted o = predict(onnx, batch, s);
      EXPECT_NEAR(o.step / fx.step, 1.0, kParity);
      EXPECT_NEAR(static_cast<double>(o.peak) / static_cast<double>(fx.peak), 1.0, kParity);
      EXPECT_LE(o.mfu, 1.0);
    }
  }
}

// The peak against the step PyTorch ran on the CPU at batch 8
// (conv_norm_block.measured.json: every live storage at every aten op of the
// second Adam step), through each frontend.
TEST(FrontendParity, PeakIsWithinThreePercentOfTheMeasuredStep) {
  auto measured = llvm::json::parse(readFile(sourcePath("tests/fixtures/parity/conv_norm_block.measured.json")));
  ASSERT_TRUE(static_cast<bool>(measured)) << llvm::toString(measured.takeError());
  const llvm::json::Object *training = measured->getAsObject()->getObject("training");
  ASSERT_TRUE(training);
  double truth = *training->getNumber("peak_allocated_bytes");
  graphlint::Setup s = adamOn("H100-SXM", Kernels::Cpu);
  for (const char *file : kFiles) {
    SCOPED_TRACE(file);
    EXPECT_NEAR(static_cast<double>(predict(file, 8, s).peak) / truth, 1.0, kTruth);
  }
}
