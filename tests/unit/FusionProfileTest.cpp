// The rules that tell the backend profiles apart, each one a behaviour the
// comparison harness measured on the real compiler (bench/fusion_compare,
// docs/validation.md#fusion-against-the-compilers).
#include "TestSupport.h"

#include "graphlint/import/Importer.h"
#include "graphlint/analyses/FusionPlan.h"

#include <gtest/gtest.h>

using namespace graphlint;
using namespace graphlint::test;

namespace {

const Node &node(const Model &m, size_t i) { return *m.graph->nodes()[i]; }

bool together(const FusionPlan &p, const Model &m, size_t a, size_t b) {
  return p.groupOf(node(m, a)).id == p.groupOf(node(m, b)).id;
}

}  // namespace

TEST(FusionProfile, InductorCpuCallsConvolutionWithoutEpilogue) {
  // mkldnn/MKL extern kernels: the ReLU after a Conv is a C++ kernel of its own.
  auto m = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1, 8, 16, 16] x, float[8, 8, 3, 3] w) => (float[1, 8, 16, 16] y) {
      c = Conv <pads = [1, 1, 1, 1]> (x, w)
      y = Relu(c)
    })");
  ASSERT_TRUE(m);
  EXPECT_FALSE(together(FusionPlan(*m, FusionBackend::InductorCpu), *m, 0, 1));
  // (+1: the channels-last copies of x and w, InductorCpuLaunchTest)
  EXPECT_EQ(FusionPlan(*m, FusionBackend::InductorCpu).kernelsPredicted(), 3u);
  EXPECT_TRUE(together(FusionPlan(*m, FusionBackend::Inductor), *m, 0, 1));  // Triton epilogue (modelled)
}

TEST(FusionProfile, InductorLowersMaxPoolAsAPointwiseLoop) {
  auto m = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1, 8, 16, 16] x) => (float[1, 8, 8, 8] y) {
      r = Relu(x)
      y = MaxPool <kernel_shape = [2, 2], strides = [2, 2]> (r)
    })");
  ASSERT_TRUE(m);
  EXPECT_TRUE(together(FusionPlan(*m, FusionBackend::InductorCpu), *m, 0, 1));
  EXPECT_FALSE(together(FusionPlan(*m, FusionBackend::OrtCpu), *m, 0, 1));
}

TEST(FusionProfile, OrtCpuRunsElementwiseOpsOutsideAPatternOneByOne) {
  auto m = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4, 64] x, float[4, 64] z) => (float[4, 64] y) {
      a = Mul(x, z)
      y = Add(a, z)
    })");
  ASSERT_TRUE(m);
  FusionPlan cpu(*m, FusionBackend::OrtCpu);
  EXPECT_FALSE(together(cpu, *m, 0, 1));
  EXPECT_EQ(cpu.kernelsPredicted(), 2u);
  ASSERT_EQ(cpu.boundariesInto(node(*m, 1)).size(), 1u);
  EXPECT_EQ(cpu.boundariesInto(node(*m, 1))[0]->reason, BreakReason::ReductionBoundary);
  EXPECT_TRUE(together(FusionPlan(*m, FusionBackend::OrtCuda), *m, 0, 1));  // the old union profile
}

TEST(FusionProfile, OrtCpuFusesTheErfGeluPattern) {
  // GeluFusion: x * (1 + erf(x / sqrt 2)) * 0.5, one Gelu kernel; the Relu after it is not part of it.
  auto m = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4, 64] x) => (float[4, 64] y) {
      s = Constant <value = float {1.4142135}> ()
      one = Constant <value = float {1.0}> ()
      half = Constant <value = float {0.5}> ()
      d = Div(x, s)
      e = Erf(d)
      a = Add(e, one)
      m1 = Mul(x, a)
      g = Mul(m1, half)
      y = Relu(g)
    })");
  ASSERT_TRUE(m);
  FusionPlan cpu(*m, FusionBackend::OrtCpu);
  for (size_t i = 4; i <= 7; ++i)
    EXPECT_TRUE(together(cpu, *m, 3, i)) << i;
  EXPECT_FALSE(together(cpu, *m, 7, 8));
  EXPECT_EQ(cpu.kernelsPredicted(), 2u);
}

TEST(FusionProfile, OrtCpuSkipLayerNormTakesOnlyASumReadOnce) {
  // Pre-LN blocks read the residual sum twice (the norm and the next
  // residual): ORT's session-level SkipLayerNormFusion leaves them apart.
  auto m = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4, 64] x, float[4, 64] e, float[64] s, float[64] b) => (float[4, 64] y, float[4, 64] z) {
      h = Add(x, e)
      y = LayerNormalization(h, s, b)
      k = Add(x, e)
      z0 = LayerNormalization(k, s, b)
      z = Add(z0, h)
    })");
  ASSERT_TRUE(m);
  FusionPlan cpu(*m, FusionBackend::OrtCpu);
  EXPECT_FALSE(together(cpu, *m, 0, 1));  // h is read by the norm and the final Add
  EXPECT_TRUE(together(cpu, *m, 2, 3));   // k only by its norm: SkipLayerNormalization
}

TEST(FusionProfile, OrtCpuConvTakesNoResidualSum) {
  // FusedConv's Z input (Conv + Add + Relu) is the CUDA EP's; the CPU EP at
  // ORT_ENABLE_EXTENDED leaves the residual Add and the Relu after it.
  auto m = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1, 8, 16, 16] x, float[8, 8, 3, 3] w) => (float[1, 8, 16, 16] y) {
      c = Conv <pads = [1, 1, 1, 1]> (x, w)
      s = Add(c, x)
      y = Relu(s)
    })");
  ASSERT_TRUE(m);
  EXPECT_EQ(FusionPlan(*m, FusionBackend::OrtCpu).kernelsPredicted(), 3u);
  EXPECT_EQ(FusionPlan(*m, FusionBackend::OrtCuda).kernelsPredicted(), 1u);
}

TEST(FusionProfile, InductorInlinesIndexValuesUnlessALibraryCallReadsThem) {
  // A mask computed from an index tensor alone costs no kernel of its own:
  // Inductor recomputes it inside the kernel that reads it.
  auto parsed = importFxBytes(R"({"format": "graphlint-fx", "version": 1, "mode": "forward",
    "params": [], "inputs": [{"name": "x", "shape": [8, 8], "dtype": "float32"}],
    "nodes": [
      {"name": "iota", "op": "prims::iota", "inputs": [], "outputs": [{"name": "iota", "shape": [8], "dtype": "int64"}]},
      {"name": "lt", "op": "aten::lt", "inputs": ["iota"], "attrs": {"other": 4},
       "outputs": [{"name": "lt", "shape": [8], "dtype": "bool"}]},
      {"name": "where", "op": "aten::where", "inputs": ["lt", "x"], "attrs": {"other": 0.0},
       "outputs": [{"name": "where", "shape": [8, 8], "dtype": "float32"}]}],
    "outputs": ["where"]})", "mask.fx.json", {});
  ASSERT_TRUE(static_cast<bool>(parsed)) << llvm::toString(parsed.takeError());
  const std::unique_ptr<Model> &m = *parsed;
  FusionPlan plan(*m, FusionBackend::InductorCpu);
  EXPECT_EQ(plan.groupOf(node(*m, 0)).kind, GroupKind::ShapeOnly);
  EXPECT_EQ(plan.groupOf(node(*m, 1)).kind, GroupKind::ShapeOnly);
  EXPECT_EQ(plan.kernelsPredicted(), 1u);
}

TEST(FusionProfile, OrtFoldsAPadWhosePadsComeFromAConstantNode) {
  // PadFusion reads the pads' contents, from a weight or (here) a Constant
  // node alike; it used to read them as a weight and crash on a Constant.
  auto text = [](const char *pads) {
    return std::string(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (float[1, 3, 8, 8] x, float[4, 3, 3, 3] w) => (float[1, 4, H, W] y) {
        p = Constant <value = int64[8] {)") + pads + R"(}> ()
        xp = Pad(x, p)
        y = Conv(xp, w)
      })";
  };
  auto spatial = importText(text("0, 0, 1, 1, 0, 0, 1, 1"));
  ASSERT_TRUE(spatial);
  for (FusionBackend b : {FusionBackend::OrtCpu, FusionBackend::OrtCuda})
    EXPECT_TRUE(together(FusionPlan(*spatial, b), *spatial, 1, 2)) << fusionBackendName(b);
  // Negative pads crop: no convolution padding, so the Pad stays a kernel.
  auto crop = importText(text("0, 0, -1, -1, 0, 0, -1, -1"));
  ASSERT_TRUE(crop);
  EXPECT_FALSE(together(FusionPlan(*crop, FusionBackend::OrtCpu), *crop, 1, 2));
}
