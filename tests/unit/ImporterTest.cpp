#include "TestSupport.h"

#include "graphlint/ir/OpRegistry.h"

#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

using namespace graphlint;
using namespace graphlint::test;

TEST(Importer, TextualModelImportsWithShapes) {
  auto m = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N, 16] x, float[16, 8] w) => (float[N, 8] y) {
      h = MatMul(x, w)
      y = Relu(h)
    })");
  ASSERT_TRUE(m);
  const Graph &g = *m->graph;
  ASSERT_EQ(g.nodes().size(), 2u);
  const Value *h = g.findLocal("h");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->type.str(), "f32[N,8]");
  EXPECT_EQ(g.nodes()[0]->op->kind, OpKind::Contraction);
  EXPECT_EQ(g.nodes()[1]->op->kind, OpKind::Pointwise);
}

// A valid model with a custom op feeding a standard op must not be reported
// as invalid: the custom op's output type is unknown (GL002 says so), which is
// not a schema violation of its consumer. Disabled until shape completion
// (src/onnx/ShapeCompletion.cpp) stops turning "input has no type" inference
// errors downstream of opaque ops into GL001.
TEST(Importer, ConsumerOfCustomOpIsNotInvalid) {
  FileReport r = lintText(R"(
    <ir_version: 8, opset_import: ["" : 17, "com.acme" : 1]>
    g (float[N, 16] x) => (float[N, 16] y) {
      h = com.acme.FancyNorm(x)
      y = Relu(h)
    })");
  EXPECT_EQ(withCode(r, "GL002").size(), 1u);
  for (const Diagnostic *d : withCode(r, "GL001"))
    ADD_FAILURE() << "false GL001: " << d->message;
}

// A custom domain's op that shares a standard op's name is not that op: its
// output shape stays unknown, as GL002 says, instead of ai.onnx Reshape's.
TEST(Importer, CustomDomainOpNamedLikeAStandardOpGetsNoStandardShapes) {
  auto m = importText(R"(
    <ir_version: 8, opset_import: ["" : 17, "com.example" : 1]>
    g (float[2, 6] x) => (float[?, ?] y) {
      s = Constant<value = int64[2] {3, 4}>()
      y = com.example.Reshape(x, s)
      z = Reshape(x, s)
    })");
  const Value *y = m->graph->findLocal("y"), *z = m->graph->findLocal("z");
  ASSERT_TRUE(y && z);
  EXPECT_FALSE(y->type.shape.isFullyStatic()) << "com.example::Reshape got " << y->type.str();
  EXPECT_EQ(z->type.str(), "f32[3,4]");
}

TEST(Importer, InitializersAreDescribedWithoutTheirBytes) {
  auto m = importModelFile(sourcePath("models/resnet18.onnx"), {});
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  uint64_t external = 0, inlineCount = 0, bytes = 0;
  for (const auto &p : (*m)->graph->params()) {
    bytes += p->tensor.byteSize;
    if (p->tensor.storage == TensorLiteral::Storage::External) {
      ++external;
      EXPECT_EQ(p->tensor.externalPath, "resnet18.weights");
      EXPECT_FALSE(p->externalFileExists);
    } else {
      ++inlineCount;
    }
  }
  // Tensors over 1024 bytes are external in the bundled models.
  EXPECT_EQ(external, 27u);
  EXPECT_EQ(inlineCount, 15u);
  EXPECT_EQ(bytes, 46738848u);
}

TEST(Importer, UsedButNotImportedDomainIsInvalid) {
  auto r = lintText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) {
      y = com.example.Fancy(x)
    })");
  auto gl001 = withCode(r, "GL001");
  ASSERT_EQ(gl001.size(), 1u);
  EXPECT_NE(gl001[0]->message.find("domain 'com.example'"), std::string::npos) << gl001[0]->message;
}

TEST(Importer, ConstantWithHostileExternalDataIsRefused) {
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(onnxFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x) => (float[4] y) {
      c = Constant <value = float[4] {1, 2, 3, 4}> ()
      y = Add(x, c)
    })")));
  onnx::TensorProto *t = m.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_t();
  t->clear_float_data();
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto *loc = t->add_external_data();
  loc->set_key("location");
  loc->set_value("/etc/passwd");
  std::string bytes;
  m.SerializeToString(&bytes);
  auto model = importOnnxBytes(bytes, tempDir() + "/m.onnx", {});
  ASSERT_TRUE(bool(model)) << llvm::toString(model.takeError());
  FileReport r = lintModel(**model, {});
  auto gl001 = withCode(r, "GL001");
  ASSERT_EQ(gl001.size(), 1u);
  EXPECT_NE(gl001[0]->message.find("absolute external data path '/etc/passwd'; refused"), std::string::npos)
      << gl001[0]->message;
}
