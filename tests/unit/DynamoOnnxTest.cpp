// ONNX files from torch 2.x's dynamo exporter (torch.onnx.export(...,
// dynamo=True), opset 18): findings point at the user's file:line from the
// per-node `pkg.torch.onnx.stack_trace`, and carry the module path from
// `pkg.torch.onnx.name_scopes` (not the FX node name that list ends with).
// What the exporter's optimizer folds is read back from the FX nodes it
// records (`pkg.torch.onnx.fx_node`): which initializers are parameters,
// which it computed from buffers and constants, and the Python locals of the
// stack traces. The fixtures are written by tests/fixtures/dynamo/make_dynamo.py
// (torch 2.13).
#include "TestSupport.h"

#include "graphlint/ir/Importer.h"
#include "graphlint/lint/Driver.h"
#include "graphlint/lint/MemoryPlan.h"
#include "graphlint/lint/TrainableParams.h"
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

// dynamo_attention_model.py: the optimizer folds qk's and out's transposed
// weights into new initializers (val_0, val_12) and the causal bias, which
// eager computes in forward from a buffer, into one (masked_fill); its
// Split (from SplitToSequence + SequenceAt) carries no metadata.
TEST(DynamoOnnx, FoldedInitializersAreParametersOrForwardValues) {
  auto m = importModelFile(sourcePath("tests/fixtures/dynamo/dynamo_attention.onnx"), {});
  ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
  const Graph &g = *(*m)->graph;
  std::set<std::string> trained, computed;
  for (const Value *v : trainableParams(g))
    trained.insert(v->name);
  for (const auto &p : g.params())
    if (p->computed)
      computed.insert(p->value->name);
  EXPECT_EQ(trained, (std::set<std::string>{"blocks.0.qk.bias", "out.bias", "val_0", "val_12"}));
  EXPECT_EQ(computed, (std::set<std::string>{"masked_fill", "scalar_tensor_default"}));
  for (const auto &n : g.nodes()) {
    if (n->opType == "Split")  // between the qk projection (blocks.0.qk) and the scores (blocks.0)
      EXPECT_EQ(n->modulePath, "blocks.0");
    // `h = self.blocks[0](x)`: h is a local of the model's forward, held past its
    // last read (out's MatMul) until forward returns.
    if (n->name == "node_matmul_1") {
      const std::string *held = n->metadataValue("held.0");
      ASSERT_NE(held, nullptr);
      EXPECT_EQ(*held, g.nodes().back()->name);
    }
  }
  // The ModuleList `blocks` never ran a forward: a container, which holds
  // nothing the way a module call does.
  std::vector<std::string> containers;
  for (const auto &kv : (*m)->metadata)
    if (kv.first == "module_container")
      containers.push_back(kv.second);
  EXPECT_EQ(containers, std::vector<std::string>{"blocks"});
  // The memory plan: the parameters are resident (816 fp32 values); the
  // folded bias is an activation from its first reader to its last.
  graphlint::Setup setup;
  AnalysisContext ctx(**m, setup);
  const MemorySummary &sum = ctx.get<MemoryPlan>().summary();
  EXPECT_EQ(sum.paramsBytes, 816u * 4);
  bool biasLive = false;
  for (const MemoryPlan::Contributor &c : ctx.get<MemoryPlan>().atPeak())
    biasLive |= c.value && c.value->name == "masked_fill";
  EXPECT_FALSE(biasLive) << "freed after the scores' Add, before the peak";
}

}  // namespace
}  // namespace graphlint
