// Snapshot tests of the cost model as users see it: the `--cost` text table
// and the JSON `compute` / `communication` sections of a DDP training step on
// 8 GPUs, over the bundled GPT decoder. Cost-model changes move these numbers
// on purpose; review them:
//
//   GRAPHLINT_UPDATE_GOLDENS=1 build/tests/graphlint_golden_tests --gtest_filter='CostGolden.*'
//   git diff tests/golden/
#include "TestSupport.h"

#include "graphlint/report/Reporters.h"

#include <gtest/gtest.h>

using namespace graphlint;
using namespace graphlint::test;

namespace {

FileReport gptTrainingStep() {
  LintOptions o;
  o.setup.dims = {{"batch", 8}, {"seq", 32}};
  o.setup.train = true;
  o.setup.worldSize = 8;
  o.setup.precision = Precision::BF16Mixed;
  EXPECT_FALSE(o.setup.resolveMesh());
  FileReport r = lintFile(sourcePath("models/gpt_tiny.onnx"), o);
  r.path = "models/gpt_tiny.onnx";
  return r;
}

}  // namespace

TEST(CostGolden, Text) {
  FileReport r = gptTrainingStep();
  std::string out;
  llvm::raw_string_ostream os(out);
  renderCostText(r.cost, r.path, os);
  expectGolden("cost.text.golden", os.str());
}

TEST(CostGolden, Json) {
  FileReport r = gptTrainingStep();
  llvm::json::Object o{{"compute", computeToJson(r.cost)}, {"communication", communicationToJson(r.cost)}};
  std::string out;
  llvm::raw_string_ostream os(out);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(o))) << "\n";
  expectGolden("cost.json.golden", os.str());
}
