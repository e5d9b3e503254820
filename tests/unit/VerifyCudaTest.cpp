// The cuda backend against the cpu reference on the bundled models: same
// random inputs and weights, outputs within a TF32-sized tolerance, every
// node run, CUPTI kernels attributed to nodes. Skips cleanly where there is
// no CUDA device (or graphlint was built without the toolkit).
#include "TestSupport.h"

#include "graphlint/verify/Comparison.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdlib>
#include <iostream>

using namespace graphlint;
using namespace graphlint::verify;
using namespace graphlint::test;

namespace {
// tools/device-check.sh runs this test from a carried bundle, away from the
// source tree: it points GRAPHLINT_MODELS_DIR at the bundle's models.
std::string modelPath(const std::string &file) {
  const char *dir = std::getenv("GRAPHLINT_MODELS_DIR");
  return dir && *dir ? std::string(dir) + "/" + file : sourcePath("models/" + file);
}
}  // namespace

TEST(VerifyCuda, BundledModelsMatchTheCpuReference) {
  auto probe = makeCudaBackend();
  if (!probe)
    GTEST_SKIP() << llvm::toString(probe.takeError());
  probe->reset();  // one CUPTI session at a time
  struct Case {
    const char *file;
    std::map<std::string, int64_t> dims;
  } cases[] = {{"resnet18.onnx", {{"batch", 2}}},
               {"mobilenet_v3_small.onnx", {{"batch", 2}}},
               {"gpt_tiny.onnx", {{"batch", 2}, {"seq", 16}}}};
  for (const Case &c : cases) {
    SCOPED_TRACE(c.file);
    ImportOptions io;
    io.dims = c.dims;
    auto m = importModelFile(modelPath(c.file), io);
    ASSERT_TRUE(bool(m));
    graphlint::Setup setup;
    setup.dims = c.dims;
    setup.target = "H200";
    VerifyOptions vo;
    vo.feed.randomWeights = true;
    auto cpu = makeCpuBackend();
    vo.warmupRuns = 0;
    auto ref = verifyModel(**m, setup, *cpu, vo);
    ASSERT_TRUE(bool(ref)) << llvm::toString(ref.takeError());
    auto gpu = makeCudaBackend();
    ASSERT_TRUE(bool(gpu)) << llvm::toString(gpu.takeError());
    vo.warmupRuns = 1;
    auto v = verifyModel(**m, setup, **gpu, vo);
    ASSERT_TRUE(bool(v)) << llvm::toString(v.takeError());
    EXPECT_TRUE(v->stopReason.empty()) << v->stopReason;
    EXPECT_GT(v->measuredKernels, 0u);
    EXPECT_TRUE(v->devicePeakBytes.has_value());
    auto want = cpu->fetch(*(*m)->graph->outputs[0]);
    auto got = (*gpu)->fetch(*(*m)->graph->outputs[0]);
    ASSERT_TRUE(want && got);
    std::string why;
    EXPECT_TRUE(allClose(*got, *want, 2e-2, 2e-3, why)) << why;
    std::cout << fmt::format("[verify cuda] {}: kernels predicted {} measured {}; time predicted {:.1f} us "
                             "measured {:.1f} us; peak predicted {} measured {} device {}\n",
                             c.file, v->predictedKernels, v->measuredKernels, v->predictedSeconds.value_or(0) * 1e6,
                             v->measuredSeconds * 1e6, v->predictedPeakBytes.value_or(0), v->measuredPeakBytes,
                             v->devicePeakBytes.value_or(0));
  }
}
