#include "TestSupport.h"

#include "graphlint/ir/OpRegistry.h"

#include <gtest/gtest.h>

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
