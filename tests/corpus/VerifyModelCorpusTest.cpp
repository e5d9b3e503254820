// Typical CNNs from ../shared/corpus (ONNX's "light" models: AlexNet,
// SqueezeNet, ShuffleNet, Inception v1, DenseNet-121, with their weights
// rebuilt by ConstantOfShape) run end to end on the verify executor's cpu
// backend: every node runs (LRN, channel shuffles, dense concatenations,
// inference batch norm included), the output has the shape of the model's
// expected output and is finite. Their expected values were computed from an
// input the corpus does not ship, so values are not compared here; the node
// tests check values op by op.
#include "TestSupport.h"

#include "graphlint/verify/Executor.h"
#include "graphlint/verify/Inputs.h"

#include <gtest/gtest.h>

#include <llvm/Support/FileSystem.h>

#include <cmath>

using namespace graphlint;
using namespace graphlint::verify;
using namespace graphlint::test;

TEST(VerifyModelCorpus, LightCnnsRunEndToEndOnCpu) {
  std::string dir = sharedPath("corpus/onnx-backend/light");
  if (!llvm::sys::fs::is_directory(dir))
    GTEST_SKIP() << "../shared/corpus is absent";
  for (const char *name : {"squeezenet", "shufflenet", "bvlc_alexnet", "inception_v1", "densenet121"}) {
    SCOPED_TRACE(name);
    std::string path = dir + "/light_" + name + ".onnx";
    auto m = importModelFile(path, {});
    ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
    ExecPlan plan(*(*m)->graph);
    auto cpu = makeCpuBackend();
    ASSERT_FALSE(bool(feedModel(**m, plan, *cpu, {})));
    RunRecord r = runPlan(plan, *cpu);
    ASSERT_TRUE(r.complete()) << r.stopReason;
    EXPECT_EQ(r.nodes.size(), plan.steps().size());
    auto want = parseTensorProto(readFile(dir + "/light_" + name + "_output_0.pb"));
    ASSERT_TRUE(bool(want)) << llvm::toString(want.takeError());
    auto got = cpu->fetch(*(*m)->graph->outputs[0]);
    ASSERT_TRUE(got);
    EXPECT_EQ(got->shape, want->shape);
    for (double v : got->data)
      ASSERT_TRUE(std::isfinite(v));
    if (auto planned = plannedPeakBytes(plan))
      EXPECT_EQ(*planned, r.peakBytes);
  }
}
