// ONNX files from torch 2.x's dynamo exporter (torch.onnx.export(...,
// dynamo=True), opset 18): findings point at the user's file:line from the
// per-node `pkg.torch.onnx.stack_trace`, and carry the module path from
// `pkg.torch.onnx.name_scopes` (not the FX node name that list ends with).
// The fixture is written by tests/fixtures/dynamo/make_dynamo.py (torch 2.13).
#include "TestSupport.h"

#include "graphlint/lint/Driver.h"
#include "ir/onnx/SourceInfo.h"

#include <gtest/gtest.h>

namespace graphlint {
namespace {

using test::sourcePath;

TEST(DynamoOnnx, CastChainsReportedAtTheUsersLinesAndModules) {
  FileReport r = lintFile(sourcePath("tests/fixtures/dynamo/dynamo_cast.onnx"), {});
  ASSERT_FALSE(r.fatal) << r.fatalMessage;
  std::set<test::Finding> want = test::markerFindings(sourcePath("tests/fixtures/dynamo/dynamo_models.py"));
  std::set<test::Finding> got = test::findingsByLine(r, "dynamo_models.py", {"GL101", "GL102"});
  EXPECT_EQ(got, want) << "expected: " << test::describeFindings(want) << "\nactual:   " << test::describeFindings(got);
  std::map<unsigned, std::string> modules;
  for (const Diagnostic *d : test::withCode(r, "GL102"))
    modules[d->location.source.line] = d->location.modulePath;
  EXPECT_EQ(modules, (std::map<unsigned, std::string>{{16, "block"}, {27, ""}}));
}

TEST(DynamoOnnx, ModulePathFromNameScopes) {
  Node n;
  n.metadata = {{"pkg.torch.onnx.name_scopes", "['', 'block', 'block.fc', 'linear']"},
                {"pkg.torch.onnx.class_hierarchy",
                 "['m.CastChain', 'm.Block', 'torch.nn.modules.linear.Linear', 'aten.linear.default']"}};
  EXPECT_EQ(onnxio::dynamoModulePath(n), std::optional<std::string>("block.fc"));
  n.metadata = {{"pkg.torch.onnx.name_scopes", "['', '_to_copy']"},
                {"pkg.torch.onnx.class_hierarchy", "['m.CastChain', 'aten._to_copy.default']"}};
  EXPECT_EQ(onnxio::dynamoModulePath(n), std::optional<std::string>(""));
  n.metadata = {{"namespace", "layer1/layer1.0"}};
  EXPECT_EQ(onnxio::dynamoModulePath(n), std::nullopt);
}

}  // namespace
}  // namespace graphlint
