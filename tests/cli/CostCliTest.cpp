// `--cost` on the command line: the per-step table after the findings, and the
// JSON `compute` section with or without it (docs/output-formats.md).
#include "TestSupport.h"

#include <gtest/gtest.h>

#include <llvm/Support/JSON.h>

using namespace graphlint;
using namespace graphlint::test;

TEST(CostCli, TextTableFollowsTheFindings) {
  CliResult r = runCli({"--no-color", "--cost", "-D", "batch=1", sourcePath("models/resnet18.onnx")});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  size_t table = r.out.find("cost of " + sourcePath("models/resnet18.onnx") + " on H100-SXM");
  ASSERT_NE(table, std::string::npos) << r.out;
  EXPECT_GT(table, r.out.find("note[GL004]"));
  // 1.814 GMACs: 3.63 GFLOP with the pointwise work, one forward row.
  // 23 kernels and 57 NCHW <-> NHWC transforms around its TF32 convolutions (an ONNX
  // tensor is dense NCHW, as an FX capture of the same model records it).
  EXPECT_NE(r.out.find("  forward              80        3.633"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("backward"), std::string::npos);  // inference: no training step
  // Without --cost, no table.
  CliResult plain = runCli({"--no-color", "-D", "batch=1", sourcePath("models/resnet18.onnx")});
  EXPECT_EQ(plain.out.find("cost of "), std::string::npos);
}

TEST(CostCli, JsonAlwaysHasTheComputeSection) {
  CliResult r = runCli({"--format", "json", "-D", "batch=1", sourcePath("models/resnet18.onnx")});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  auto v = llvm::json::parse(r.out);
  ASSERT_TRUE(bool(v)) << llvm::toString(v.takeError());
  const llvm::json::Object &file = *(*v->getAsObject()->getArray("files"))[0].getAsObject();
  const llvm::json::Object *compute = file.getObject("compute");
  ASSERT_TRUE(compute);
  EXPECT_NEAR(*compute->getNumber("matmul_flops_forward") / 2, 1.814e9, 0.001e9);
  EXPECT_EQ(*compute->getString("target"), "H100-SXM");
  EXPECT_EQ(compute->getArray("groups")->size(), 23u);
  EXPECT_EQ(file.get("communication")->kind(), llvm::json::Value::Null);  // not a training step
}

// The target is resolved once to the profile's spelling: one report never names
// it two ways (`compute.target` "A100-80GB" beside `memory.setup.target`
// "a100-80g"), whether it came from the command line or a config file.
TEST(CostCli, TargetAliasIsReportedInOneSpellingEverywhere) {
  std::string dir = tempDir(), model = dir + "/m.onnx";
  writeFile(model, readFile(sourcePath("models/resnet18.onnx")));
  auto targets = [](const std::string &out) {
    std::vector<std::string> found;
    auto v = llvm::json::parse(out);
    if (!v) {
      ADD_FAILURE() << llvm::toString(v.takeError());
      return found;
    }
    const llvm::json::Object &file = *(*v->getAsObject()->getArray("files"))[0].getAsObject();
    if (auto t = file.getObject("compute")->getString("target"))
      found.push_back(t->str());
    if (auto t = file.getObject("memory")->getObject("setup")->getString("target"))
      found.push_back(t->str());
    return found;
  };
  CliResult r = runCli({"--format", "json", "--memory", "--target", "a100-80g", "-D", "batch=1", model});
  EXPECT_EQ(targets(r.out), (std::vector<std::string>{"A100-80GB", "A100-80GB"})) << r.err;
  writeFile(dir + "/.graphlint.yaml", "setup:\n  target: a100-80g\n");
  r = runCli({"--format", "json", "--memory", "-D", "batch=1", model});
  EXPECT_EQ(targets(r.out), (std::vector<std::string>{"A100-80GB", "A100-80GB"})) << r.err;
}
