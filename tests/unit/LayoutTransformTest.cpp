// NCHW <-> NHWC layout transforms around tensor-core convolutions
// (docs/cost-model.md "Compute"): the FX importer keeps a rank-4 tensor's
// memory format from its recorded strides, and the compute model charges a
// read and a write of every NCHW operand and result of a convolution that
// runs on tensor cores, as kernels of their own.
#include "graphlint/import/Importer.h"
#include "graphlint/analyses/Analysis.h"
#include "graphlint/analyses/ComputeModel.h"
#include "graphlint/base/Setup.h"

#include <gtest/gtest.h>

#include <string>

namespace graphlint {
namespace {

// One 3x3 convolution, 8 -> 16 channels on 4 x 8 x H x W (10 x 10 unless
// given), the input, weight and output strides given (NCHW or NHWC).
std::string convGraph(const std::string &xStrides, const std::string &wStrides, const std::string &yStrides,
                      const std::string &hw = "10,10") {
  return R"({"format":"graphlint-fx","version":2,
    "params":[{"name":"w","kind":"parameter","shape":[16,8,3,3],"dtype":"float32","device":"cpu",
               "requires_grad":false,"strides":)" + wStrides + R"(}],
    "inputs":[{"name":"x","shape":[4,8,)" + hw + R"(],"dtype":"float32","device":"cpu","strides":)" + xStrides + R"(}],
    "nodes":[{"name":"y","op":"aten::convolution","inputs":["x","w"],
              "attrs":{"bias":null,"stride":[1,1],"padding":[1,1],"dilation":[1,1],"transposed":false,
                       "output_padding":[0,0],"groups":1},
              "outputs":[{"name":"y","shape":[4,16,)" + hw + R"(],"dtype":"float32","device":"cpu",
                          "strides":)" + yStrides + R"(}]}],
    "outputs":["y"]})";
}

const std::string kNchw = convGraph("[800,100,10,1]", "[72,9,3,1]", "[1600,100,10,1]");
const std::string kNhwc = convGraph("[800,1,80,8]", "[72,1,24,8]", "[1600,1,160,16]");

std::unique_ptr<Model> import(const std::string &json) {
  auto m = importFxBytes(json, "conv.fx.json", {});
  if (!m) {
    ADD_FAILURE() << llvm::toString(m.takeError());
    return nullptr;
  }
  return std::move(*m);
}

struct Costed {
  std::unique_ptr<Model> model;
  std::unique_ptr<Setup> setup;  // the context reads it: kept alive beside it
  std::unique_ptr<AnalysisContext> ctx;
  KernelTime forward;
};

Costed cost(const std::string &json, Precision p, const std::string &target) {
  Costed c;
  c.model = import(json);
  c.setup = std::make_unique<Setup>();
  c.setup->precision = p;
  c.setup->target = target;
  c.ctx = std::make_unique<AnalysisContext>(*c.model, *c.setup);
  c.forward = c.ctx->get<ComputeModel>().forwardTotal();
  return c;
}

TEST(MemoryFormat, ReadFromTheRecordedStrides) {
  auto nchw = import(kNchw), nhwc = import(kNhwc);
  ASSERT_TRUE(nchw && nhwc);
  EXPECT_EQ(nchw->graph->inputs[0]->memoryFormat, Value::MemoryFormat::Contiguous);
  EXPECT_EQ(nhwc->graph->inputs[0]->memoryFormat, Value::MemoryFormat::ChannelsLast);
  EXPECT_EQ(nhwc->graph->outputs[0]->memoryFormat, Value::MemoryFormat::ChannelsLast);
  // [N, C, 1, 1]: both orders describe it; no strides: nothing is known.
  auto pooled = import(convGraph("[8,1,1,1]", "[72,9,3,1]", "[16,1,1,1]", "1,1"));
  ASSERT_TRUE(pooled);
  EXPECT_EQ(pooled->graph->inputs[0]->memoryFormat, Value::MemoryFormat::Unknown);
  auto none = import(R"({"format":"graphlint-fx","version":1,"params":[],
    "inputs":[{"name":"x","shape":[4,8,10,10],"dtype":"float32"}],
    "nodes":[{"name":"y","op":"aten::relu","inputs":["x"],"outputs":[{"name":"y","shape":[4,8,10,10],"dtype":"float32"}]}],
    "outputs":["y"]})");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->graph->inputs[0]->memoryFormat, Value::MemoryFormat::Unknown);
}

TEST(LayoutTransforms, NchwTensorCoreConvolutionsReadAndWriteEachTensorOnceMore) {
  // fp16-mixed stores the fp32 tensors in 2 bytes: x 3200 + w 1152 + y 6400 elements.
  const double tensors = 2.0 * (3200 + 1152 + 6400);
  Costed nchw = cost(kNchw, Precision::FP16Mixed, "A100-80GB");
  Costed nhwc = cost(kNhwc, Precision::FP16Mixed, "A100-80GB");
  EXPECT_DOUBLE_EQ(nhwc.forward.layoutBytes, 0);
  EXPECT_DOUBLE_EQ(nchw.forward.layoutBytes, 2 * tensors);
  EXPECT_DOUBLE_EQ(nchw.forward.bytes, nhwc.forward.bytes + 2 * tensors);
  EXPECT_EQ(nchw.forward.kernels, nhwc.forward.kernels + 3);  // x, w and y transformed
  // The transforms run before and after the convolution, not under it.
  const HardwareProfile *hw = nchw.ctx->get<ComputeModel>().hardware();
  ASSERT_TRUE(hw);
  EXPECT_NEAR(nchw.forward.gpuSeconds - nhwc.forward.gpuSeconds,
              2 * tensors / (hw->memoryBandwidth * hw->memoryEfficiency), 1e-15);
  // TF32 convolutions are tensor-core work too.
  EXPECT_DOUBLE_EQ(cost(kNchw, Precision::TF32, "A100-80GB").forward.layoutBytes, 4 * tensors);
}

TEST(LayoutTransforms, CudaCoreConvolutionsReadNchwAsItIs) {
  // V100 has no TF32: an fp32 convolution runs on CUDA cores, in NCHW.
  EXPECT_DOUBLE_EQ(cost(kNchw, Precision::FP32, "V100").forward.layoutBytes, 0);
  EXPECT_GT(cost(kNchw, Precision::FP16Mixed, "V100").forward.layoutBytes, 0);
}

}  // namespace
}  // namespace graphlint
