// The pointwise ops' shortcut past ONNX's inference machinery
// (src/onnx/PointwiseInference.cpp) must give exactly ONNX's result, and
// leave every case ONNX rejects to ONNX so that the same GL001 appears.
#include "TestSupport.h"

#include "src/onnx/PointwiseInference.h"

#include <gtest/gtest.h>

#include <onnx/defs/shape_inference.h>

using namespace graphlint;
using namespace graphlint::test;

namespace {

// "3", "N" (dim_param), "?" (neither) per dim.
onnx::TypeProto tensorOf(std::vector<std::string> dims, int elem = onnx::TensorProto::FLOAT) {
  onnx::TypeProto t;
  auto *tt = t.mutable_tensor_type();
  tt->set_elem_type(elem);
  auto *shape = tt->mutable_shape();
  for (const std::string &d : dims) {
    auto *dim = shape->add_dim();
    if (d == "?")
      continue;
    if (std::isdigit(static_cast<unsigned char>(d[0])))
      dim->set_dim_value(std::stoll(d));
    else
      dim->set_dim_param(d);
  }
  return t;
}

}  // namespace

TEST(PointwiseInference, BroadcastIsOnnxsOwn) {
  using Dims = std::vector<std::string>;
  const std::pair<Dims, Dims> cases[] = {
      {{"1", "64"}, {"64"}},      {{"N", "64"}, {}},          {{"N", "1"}, {"1", "N"}},
      {{"N", "64"}, {"M", "64"}}, {{"N", "64"}, {"1", "64"}}, {{"?", "3"}, {"?", "3"}},
      {{"N"}, {"?"}},             {{"1"}, {"N"}},             {{"2", "1", "N"}, {"7", "1"}},
      {{"3"}, {"4"}},             {{"N", "3"}, {"2", "1"}},
  };
  for (const auto &[l, r] : cases) {
    onnx::TypeProto a = tensorOf(l), b = tensorOf(r);
    const onnx::TypeProto *in[2] = {&a, &b};
    onnx::TypeProto ours;
    bool inferred = onnxio::inferPointwise(onnxio::PointwiseKind::Binary, in, ours);
    onnx::TypeProto theirs = tensorOf({});
    bool rejected = false;
    try {
      onnx::bidirectionalBroadcastShapeInference(a.tensor_type().shape(), b.tensor_type().shape(),
                                                 *theirs.mutable_tensor_type()->mutable_shape());
    } catch (const std::exception &) {
      rejected = true;
    }
    SCOPED_TRACE(a.ShortDebugString() + " + " + b.ShortDebugString());
    EXPECT_EQ(inferred, !rejected);
    if (inferred && !rejected)
      EXPECT_EQ(ours.SerializeAsString(), theirs.SerializeAsString());
  }
}

TEST(PointwiseInference, OnlyShapedTensorsOfOneElementType) {
  onnx::TypeProto f = tensorOf({"2"}), d = tensorOf({"2"}, onnx::TensorProto::DOUBLE), unshaped;
  unshaped.mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  onnx::TypeProto out;
  const onnx::TypeProto *mixed[2] = {&f, &d}, *noShape[2] = {&f, &unshaped};
  EXPECT_FALSE(onnxio::inferPointwise(onnxio::PointwiseKind::Binary, mixed, out));
  EXPECT_FALSE(onnxio::inferPointwise(onnxio::PointwiseKind::Binary, noShape, out));
  const onnx::TypeProto *one[1] = {&unshaped};
  EXPECT_FALSE(onnxio::inferPointwise(onnxio::PointwiseKind::Unary, one, out));
}

// Through the importer: after the first Add of float tensors has passed ONNX's
// type check the others take the shortcut; symbolic dims, a broadcast ONNX
// rejects and mixed element types come out as ONNX has them.
TEST(PointwiseInference, ImportMatchesOnnx) {
  auto m = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N, 64] x, float[64] c, float[M, 64] z, float[3] t, float[4] u, double[64] dd) => (float[N, 64] y) {
      a = Add(x, c)
      b = Relu(a)
      e = Mul(b, c)
      f = Add(e, z)
      h = Add(t, u)
      k = Add(x, dd)
      y = Sigmoid(e)
    })");
  ASSERT_TRUE(m);
  const Graph &g = *m->graph;
  EXPECT_EQ(g.findLocal("a")->type.str(), "f32[N,64]");
  EXPECT_EQ(g.findLocal("b")->type.str(), "f32[N,64]");
  EXPECT_EQ(g.findLocal("e")->type.str(), "f32[N,64]");
  EXPECT_EQ(g.findLocal("f")->type.str(), "f32[?,64]");
  std::string problems;
  for (const ImportProblem &p : m->problems)
    problems += p.message + "\n";
  // ONNX's message for the broadcast it rejects; Add(float, double) is no
  // import problem (graphlint's fallback types it), as before the shortcut.
  EXPECT_EQ(problems, "shape inference failed for node #5 (Add): [ShapeInferenceError] Incompatible dimensions\n");
}
