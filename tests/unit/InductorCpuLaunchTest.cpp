// inductor-cpu's launch model (src/analyses/InductorCpuLaunches.cpp): the
// channels-last copies Inductor's CPU lowering adds in front of convolutions,
// one C++ function per run of loop nests between library calls, and the
// schedule its peak-memory pass picks. Each kernel count is what torch 2.14's
// Inductor emits for the same graph as a PyTorch module
// (bench/fusion_compare/launch_cases.py prints them; docs/fusion.md#inductor-cpu-launches).
#include "TestSupport.h"

#include "graphlint/import/Importer.h"
#include "graphlint/analyses/FusionPlan.h"
#include "src/analyses/InductorCpuLaunches.h"

#include <gtest/gtest.h>

using namespace graphlint;
using namespace graphlint::test;

namespace {

const Node &node(const Model &m, size_t i) { return *m.graph->nodes()[i]; }

}  // namespace

TEST(InductorCpuLaunch, ChannelsLastCopyOnlyWhereContiguousIsNotChannelsLast) {
  using fusion_detail::contiguousIsChannelsLast;
  EXPECT_FALSE(contiguousIsChannelsLast(Shape::of({64, 64, 3, 3})));    // k x k weight
  EXPECT_FALSE(contiguousIsChannelsLast(Shape::of({1, 3, 224, 224})));  // an image input
  EXPECT_TRUE(contiguousIsChannelsLast(Shape::of({64, 32, 1, 1})));     // 1x1 weight: same strides
  EXPECT_TRUE(contiguousIsChannelsLast(Shape::of({96, 1, 3, 3})));      // depthwise weight
  EXPECT_TRUE(contiguousIsChannelsLast(Shape::of({1, 1, 28, 28})));     // one channel
  EXPECT_TRUE(contiguousIsChannelsLast(Shape::of({8, 16})));            // not a 2-D convolution
}

TEST(InductorCpuLaunch, ConvolutionOnGraphInputsPaysACopyOnlyKernel) {
  // squeezenet's first layer: Inductor emits cpp(copy x, copy w), the mkldnn
  // convolution, then cpp(relu): 3 kernels, not 2.
  auto m = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1, 8, 16, 16] x, float[8, 8, 3, 3] w) => (float[1, 8, 16, 16] y) {
      c = Conv <pads = [1, 1, 1, 1]> (x, w)
      y = Relu(c)
    })");
  ASSERT_TRUE(m);
  FusionPlan plan(*m, FusionBackend::InductorCpu);
  const FusionGroup &conv = plan.groupOf(node(*m, 0));
  EXPECT_EQ(conv.layoutCopies, 2u);
  EXPECT_EQ(conv.kernels, 2u);  // the copies' C++ function, then the library call
  EXPECT_EQ(plan.kernelsPredicted(), 3u);
  EXPECT_EQ(FusionPlan(*m, FusionBackend::Inductor).groupOf(node(*m, 0)).layoutCopies, 0u);  // CPU lowering only
}

TEST(InductorCpuLaunch, WeightCopyJoinsTheOpenCppFunction) {
  // conv -> relu -> 3x3 conv: the weight copy of the second convolution runs
  // in the ReLU's C++ function (resnet's bn+relu kernels); a 1x1 conv needs none.
  auto m = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1, 8, 16, 16] x, float[8, 8, 1, 1] w1, float[8, 8, 3, 3] w2) => (float[1, 8, 16, 16] y) {
      r0 = Relu(x)
      c1 = Conv(r0, w1)
      r1 = Relu(c1)
      y = Conv <pads = [1, 1, 1, 1]> (r1, w2)
    })");
  ASSERT_TRUE(m);
  FusionPlan plan(*m, FusionBackend::InductorCpu);
  EXPECT_EQ(plan.groupOf(node(*m, 1)).layoutCopies, 0u);
  EXPECT_EQ(plan.groupOf(node(*m, 3)).layoutCopies, 2u);  // w2, and y back to contiguous
  EXPECT_EQ(plan.groupOf(node(*m, 3)).kernels, 2u);
  EXPECT_EQ(plan.kernelsPredicted(), 5u);  // cpp(relu), conv, cpp(relu + copy), conv, cpp(copy y)
}

TEST(InductorCpuLaunch, ConcatFeedingAConvolutionIsCopiedOnceForAllReaders) {
  // googlenet: the inception concat is contiguous (ConcatKernel); the copies
  // of it for the next block's branches read one tensor and fuse into one
  // node. Each convolution's output, a graph output here, is copied back to
  // the contiguous strides eager PyTorch returns.
  auto m = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1, 8, 8, 8] a, float[1, 8, 8, 8] b, float[4, 16, 1, 1] w1, float[4, 16, 1, 1] w2)
      => (float[1, 4, 8, 8] y1, float[1, 4, 8, 8] y2) {
      ra = Relu(a)
      rb = Relu(b)
      cat = Concat <axis = 1> (ra, rb)
      y1 = Conv(cat, w1)
      y2 = Conv(cat, w2)
    })");
  ASSERT_TRUE(m);
  FusionPlan plan(*m, FusionBackend::InductorCpu);
  EXPECT_EQ(plan.groupOf(node(*m, 3)).layoutCopies, 2u);  // cat (for both), y1
  EXPECT_EQ(plan.groupOf(node(*m, 4)).layoutCopies, 1u);  // y2 only: the shared copy counted once
  EXPECT_EQ(plan.kernelsPredicted(), 5u);  // cpp(relus, concat, copies), conv, cpp(copy y1), conv, cpp(copy y2)
}

TEST(InductorCpuLaunch, LoopNestsBetweenTwoLibraryCallsShareOneFunction) {
  // Two independent loop nests with no library call between them: one C++
  // function on the CPU (scheduler.py flushes only before extern calls),
  // two groups and two kernels for the CUDA profile.
  auto m = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4, 64] x, float[8, 32] z) => (float[4, 64] y1, float[8] y2) {
      y1 = Exp(x)
      y2 = ReduceMax <axes = [1], keepdims = 0> (z)
    })");
  ASSERT_TRUE(m);
  FusionPlan cpu(*m, FusionBackend::InductorCpu);
  EXPECT_NE(cpu.groupOf(node(*m, 0)).id, cpu.groupOf(node(*m, 1)).id);  // still two loop nests
  EXPECT_EQ(cpu.groupOf(node(*m, 0)).launch, cpu.groupOf(node(*m, 1)).launch);
  EXPECT_EQ(cpu.kernelsPredicted(), 1u);
  EXPECT_EQ(FusionPlan(*m, FusionBackend::Inductor).kernelsPredicted(), 2u);
}

TEST(InductorCpuLaunch, SharedHeadWeightsOnTwoLevels) {
  // retinanet's heads in small: the same two convolutions on two FPN levels.
  // One fused node copies each shared weight once per level; Inductor emits
  // cpp(relus, w copies), conv, cpp(relu), conv, cpp(relu, v copies), conv,
  // conv, cpp(output copies): 8 kernels.
  auto m = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1, 64, 32, 32] p3, float[1, 64, 16, 16] p4, float[64, 64, 3, 3] w, float[64, 64, 3, 3] v)
      => (float[1, 64, 32, 32] o3, float[1, 64, 16, 16] o4) {
      a3 = Relu(p3)
      c3 = Conv <pads = [1, 1, 1, 1]> (a3, w)
      r3 = Relu(c3)
      o3 = Conv <pads = [1, 1, 1, 1]> (r3, v)
      a4 = Relu(p4)
      c4 = Conv <pads = [1, 1, 1, 1]> (a4, w)
      r4 = Relu(c4)
      o4 = Conv <pads = [1, 1, 1, 1]> (r4, v)
    })");
  ASSERT_TRUE(m);
  FusionPlan plan(*m, FusionBackend::InductorCpu);
  EXPECT_EQ(plan.groupOf(node(*m, 1)).layoutCopies, 1u);  // w, once for both levels
  EXPECT_EQ(plan.groupOf(node(*m, 5)).layoutCopies, 0u);
  EXPECT_EQ(plan.groupOf(node(*m, 0)).launch, plan.groupOf(node(*m, 4)).launch);  // a3 and a4
  EXPECT_EQ(plan.kernelsPredicted(), 8u);
}
