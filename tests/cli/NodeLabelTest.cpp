// One node, one label: the unnamed MatMul of a two-node graph is "#2" (its
// 1-based position, docs/output-formats.md "Node numbers") in GL141's
// message, the text report's `--> node #2`, the JSON report's diagnostics
// (message and node_index + 1), `memory.peak_node`, the memory timeline,
// `fusion.groups[].nodes`, and SARIF's logical location. GL141 and the
// memory trace used to print it "#1" (0-based) while the fusion plan and the
// text report said "#2".
#include "TestSupport.h"

#include <gtest/gtest.h>

#include <llvm/Support/JSON.h>

using namespace graphlint::test;

namespace {

// Relu is node #1, the LM-head MatMul (N = 50257, not a multiple of 8) #2 and
// the memory peak (its 11.5 MiB output).
const char *kModel = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float16[120, 2048] x, float16[2048, 50257] w) => (float16[120, 50257] y) {
    r = Relu(x)
    y = MatMul(r, w)
  })";

std::string writeModel() {
  std::string path = tempDir() + "/lm_head.onnx";
  writeFile(path, onnxFromText(kModel));
  return path;
}

}  // namespace

TEST(NodeLabel, OneUnnamedNodeReadsTheSameInEverySection) {
  std::string path = writeModel();
  const std::string gl141 = "MatMul '#2'";

  CliResult text = runCli({"--exit-zero", "--select", "GL141", path});
  ASSERT_EQ(text.exitCode, 0) << text.err;
  EXPECT_NE(text.out.find(gl141), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("--> node #2 (MatMul)"), std::string::npos) << text.out;

  CliResult json = runCli({"--exit-zero", "--format", "json", path});
  ASSERT_EQ(json.exitCode, 0) << json.err;
  auto v = llvm::json::parse(json.out);
  ASSERT_TRUE(bool(v)) << llvm::toString(v.takeError());
  const llvm::json::Object *file = (*v->getAsObject()->getArray("files"))[0].getAsObject();
  bool sawGl141 = false;
  for (const llvm::json::Value &d : *file->getArray("diagnostics")) {
    const llvm::json::Object &o = *d.getAsObject();
    if (o.getString("code").getValueOr("") != "GL141")
      continue;
    sawGl141 = true;
    EXPECT_NE(o.getString("message").getValueOr("").str().find(gl141), std::string::npos);
    EXPECT_EQ(o.getObject("location")->getInteger("node_index").getValueOr(-1) + 1, 2);
  }
  EXPECT_TRUE(sawGl141) << json.out;
  const llvm::json::Object *mem = file->getObject("memory");
  ASSERT_TRUE(mem);
  EXPECT_EQ(mem->getString("peak_node").getValueOr(""), "#2");
  const llvm::json::Array *timeline = mem->getArray("timeline");
  ASSERT_TRUE(timeline && timeline->size() == 2u);
  EXPECT_EQ((*timeline)[0].getAsObject()->getString("node").getValueOr(""), "#1");
  EXPECT_EQ((*timeline)[1].getAsObject()->getString("node").getValueOr(""), "#2");
  bool inGroup = false;
  for (const llvm::json::Value &g : *file->getObject("fusion")->getArray("groups"))
    for (const llvm::json::Value &n : *g.getAsObject()->getArray("nodes"))
      inGroup = inGroup || n.getAsString().getValueOr("") == "#2";
  EXPECT_TRUE(inGroup) << json.out;

  CliResult sarif = runCli({"--exit-zero", "--format", "sarif", "--select", "GL141", path});
  ASSERT_EQ(sarif.exitCode, 0) << sarif.err;
  EXPECT_NE(sarif.out.find(R"("name": "#2")"), std::string::npos) << sarif.out;
  EXPECT_NE(sarif.out.find(R"("fullyQualifiedName": "main/#2")"), std::string::npos) << sarif.out;
  EXPECT_NE(sarif.out.find(gl141), std::string::npos);
}
