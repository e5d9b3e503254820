// GL121 dynamic-control-flow, GL122 branch-mismatch, GL123 data-dependent-shape,
// GL131 inplace-alias, GL132 inplace-on-saved-tensor: positive and negative
// fixtures (ONNX text, or IR built by hand for the FX-only mutation, alias and
// saved-tensor facts and for torch.cond), asserting code, node, fusion_id,
// reason and the key words of each message; then the real models stay clean.
#include "IrBuilder.h"
#include "TestSupport.h"

#include "graphlint/analyses/DataDependence.h"
#include "graphlint/analyses/FusionPlan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>

using namespace graphlint;
using graphlint::test::f32;
using graphlint::test::IrBuilder;
using graphlint::test::lintText;
using graphlint::test::tensorOf;
using graphlint::test::withCode;

namespace {

bool has(const std::string &s, const std::string &needle) { return s.find(needle) != std::string::npos; }

std::string dump(const FileReport &r) { return test::dumpDiagnostics(r); }

FileReport lintIr(const Model &m) { return lintModel(m, LintOptions{}); }

// The fusion group the planner puts a node in: the first one named `key`,
// or else the first unnamed one whose op is `key`.
unsigned groupOfNode(const Model &m, const std::string &key) {
  FusionPlan plan(m, FusionBackend::Inductor);
  const Node *found = nullptr;
  forEachGraph(*m.graph, [&](const Graph &g) {
    for (const auto &n : g.nodes())
      if (!found && n->name == key)
        found = n.get();
  });
  forEachGraph(*m.graph, [&](const Graph &g) {
    for (const auto &n : g.nodes())
      if (!found && n->name.empty() && n->opType == key)
        found = n.get();
  });
  EXPECT_TRUE(found) << key;
  return found ? plan.groupOf(*found).id : ~0u;
}

// ---- GL121 dynamic-control-flow ----------------------------------------------

const char *kDataIf = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[128] x) => (float[128] y) {
    s = ReduceSum <keepdims = 0> (x)
    zero = Constant <value = float {0.0}> ()
    c = Greater(s, zero)
    y = If(c) <
      then_branch = t () => (float[128] a) { a = Relu(x) },
      else_branch = e () => (float[128] b) { n = Neg(x)  b = Relu(n) }>
  })";

TEST(DynamicControlFlow, DataDependentIfNamesTheConditionChainAndBodySizes) {
  FileReport r = lintText(kDataIf);
  auto ds = withCode(r, "GL121");
  ASSERT_EQ(ds.size(), 1u) << dump(r);
  const Diagnostic &d = *ds[0];
  EXPECT_EQ(d.severity, Severity::Warning);
  EXPECT_EQ(d.location.opType, "If");
  EXPECT_EQ(d.location.graphPath, "main");
  EXPECT_EQ(d.reason, "control_flow");
  ASSERT_TRUE(d.fusionId);
  EXPECT_EQ(*d.fusionId, groupOfNode(*test::importText(kDataIf), "If"));
  EXPECT_TRUE(has(d.message, "data-dependent branch")) << d.message;
  EXPECT_TRUE(has(d.message, "Greater <- ReduceSum of graph input 'x'")) << d.message;
  EXPECT_TRUE(has(d.message, "then_branch: 1 node(s)")) << d.message;
  EXPECT_TRUE(has(d.message, "else_branch: 2 node(s)")) << d.message;
  ASSERT_FALSE(d.notes.empty());
  EXPECT_TRUE(has(d.notes[0].message, "torch.where")) << d.notes[0].message;
  EXPECT_TRUE(withCode(r, "GL122").empty()) << "consistent branches";
}

TEST(DynamicControlFlow, ConstantConditionIsANoteAboutTheDeadBranch) {
  FileReport r = lintText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x) => (float[4] y) {
      c = Constant <value = bool {1}> ()
      y = If(c) <
        else_branch = e () => (float[4] b) { n = Neg(x)  b = Relu(n) },
        then_branch = t () => (float[4] a) { a = Relu(x) }>
    })");
  auto ds = withCode(r, "GL121");
  ASSERT_EQ(ds.size(), 1u) << dump(r);
  EXPECT_EQ(ds[0]->severity, Severity::Note);
  EXPECT_TRUE(has(ds[0]->message, "constant condition 'c' (true)")) << ds[0]->message;
  EXPECT_TRUE(has(ds[0]->message, "so else_branch (2 node(s)) is dead")) << "found by name, not attribute order: "
                                                                           << ds[0]->message;
}

TEST(DynamicControlFlow, StaticLoopSuggestsUnrollingAndDynamicLoopNamesItsTripCount) {
  const char *loop = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x, int64 n) => (float[4] y) {
      trip = Constant <value = int64 {3}> ()
      t = Constant <value = bool {1}> ()
      y = Loop(%s, t, x) <body = b (int64 i, bool ci, float[4] h) => (bool co, float[4] h2) {
        co = Identity(ci)
        h2 = Relu(h)
      }>
    })";
  FileReport stat = lintText(std::string(loop).replace(std::string(loop).find("%s"), 2, "trip"));
  auto ds = withCode(stat, "GL121");
  ASSERT_EQ(ds.size(), 1u) << dump(stat);
  EXPECT_EQ(ds[0]->location.opType, "Loop");
  EXPECT_EQ(ds[0]->reason, "control_flow");
  EXPECT_TRUE(has(ds[0]->message, "static trip count of 3")) << ds[0]->message;
  EXPECT_FALSE(has(ds[0]->message, "while-loop")) << ds[0]->message;
  EXPECT_TRUE(has(ds[0]->notes[0].message, "unroll the loop (3 iterations)")) << ds[0]->notes[0].message;

  FileReport dyn = lintText(std::string(loop).replace(std::string(loop).find("%s"), 2, "n"));
  ds = withCode(dyn, "GL121");
  ASSERT_EQ(ds.size(), 1u) << dump(dyn);
  EXPECT_TRUE(has(ds[0]->message, "dynamic trip count from graph input 'n'")) << ds[0]->message;
  EXPECT_TRUE(has(ds[0]->message, "body: 2 node(s)")) << ds[0]->message;
  EXPECT_TRUE(withCode(dyn, "GL123").empty()) << "no scan outputs: nothing stacked along the trip count\n" << dump(dyn);
}

TEST(DynamicControlFlow, TorchCondAndWhileLoopFromFx) {
  IrBuilder b;
  Value *x = b.input("x", f32({4}));
  Node *sum = b.node("ReduceSum", {x}, {"s"}, {f32({})});
  Node *cond = b.node("higher_order::cond", {sum->outputs[0], x}, {"out"}, {f32({4})});
  IrBuilder t = b.body(cond, "true_graph");
  t.output(t.node("Relu", {t.input("x_t", f32({4}))}, {"rt"}, {f32({4})})->outputs[0]);
  IrBuilder e = b.body(cond, "false_graph");
  e.output(e.node("Neg", {e.input("x_f", f32({4}))}, {"rf"}, {f32({4})})->outputs[0]);
  Node *wl = b.node("torch.ops.higher_order.while_loop", {cond->outputs[0]}, {"w"}, {f32({4})});
  b.output(wl->outputs[0]);
  auto m = b.take();

  FileReport r = lintIr(*m);
  auto ds = withCode(r, "GL121");
  ASSERT_EQ(ds.size(), 2u) << dump(r);
  EXPECT_EQ(ds[0]->location.nodeName, "out");
  EXPECT_TRUE(has(ds[0]->message, "torch.cond 'out'")) << ds[0]->message;
  EXPECT_TRUE(has(ds[0]->message, "data-dependent branch")) << ds[0]->message;
  EXPECT_TRUE(has(ds[0]->message, "true_graph: 1 node(s), false_graph: 1 node(s)")) << ds[0]->message;
  EXPECT_EQ(ds[0]->fusionId, groupOfNode(*m, "out"));
  EXPECT_EQ(ds[1]->location.nodeName, "w");
  EXPECT_TRUE(has(ds[1]->message, "torch.while_loop")) << ds[1]->message;
  EXPECT_EQ(ds[1]->reason, "control_flow");
}

TEST(DynamicControlFlow, StraightLineGraphIsClean) {
  FileReport r = lintText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x) => (float[4] y) { a = Relu(x)  y = Neg(a) })");
  EXPECT_TRUE(withCode(r, "GL121").empty()) << dump(r);
}

// ---- GL122 branch-mismatch -----------------------------------------------------

TEST(BranchMismatch, RankMismatchFromOnnxText) {
  FileReport r = lintText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (bool c, float[4] x) => (float[N] y) {
      y = If(c) <
        then_branch = t () => (float[4] a) { a = Relu(x) },
        else_branch = e () => (float[4,1] b) { ax = Constant <value = int64[1] {1}> ()  b = Unsqueeze(x, ax) }>
    })");
  auto ds = withCode(r, "GL122");
  ASSERT_EQ(ds.size(), 1u) << dump(r);
  EXPECT_EQ(ds[0]->severity, Severity::Error);
  EXPECT_EQ(ds[0]->location.opType, "If");
  EXPECT_TRUE(has(ds[0]->message, "output 0 'y'")) << ds[0]->message;
  EXPECT_TRUE(has(ds[0]->message, "rank 1 vs 2")) << ds[0]->message;
  EXPECT_TRUE(has(ds[0]->message, "then_branch yields 'a' as f32[4]")) << ds[0]->message;
  EXPECT_TRUE(has(ds[0]->message, "else_branch yields 'b' as f32[4,1]")) << ds[0]->message;
}

TEST(BranchMismatch, ComparesEveryOutputDtypeAndStaticDims) {
  IrBuilder b;
  Value *c = b.input("c", tensorOf(DType::Bool, {}));
  Node *ifn = b.node("If", {c}, {"o0", "o1", "o2"}, "branchy");
  IrBuilder t = b.body(ifn, "then_branch");
  IrBuilder e = b.body(ifn, "else_branch");
  Type sym = f32({});
  sym.shape.dims = {Dim::named("then_n"), Dim::fixed(8)};
  Type sym2 = sym;
  sym2.shape.dims[0] = Dim::named("else_n");
  t.output(t.node("Constant", {}, {"t0"}, {f32({2, 3})})->outputs[0]);
  e.output(e.node("Constant", {}, {"e0"}, {f32({2, 3})})->outputs[0]);
  t.output(t.node("Constant", {}, {"t1"}, {tensorOf(DType::Float16, {4})})->outputs[0]);
  e.output(e.node("Constant", {}, {"e1"}, {f32({4})})->outputs[0]);
  t.output(t.node("Constant", {}, {"t2"}, {sym})->outputs[0]);
  e.output(e.node("Constant", {}, {"e2"}, {sym2})->outputs[0]);
  for (Value *o : ifn->outputs)
    b.output(o);
  auto m = b.take();
  FileReport r = lintIr(*m);
  auto ds = withCode(r, "GL122");
  ASSERT_EQ(ds.size(), 1u) << "only output 1 differs; symbolic names are not a mismatch\n" << dump(r);
  EXPECT_EQ(ds[0]->location.nodeName, "branchy");
  EXPECT_TRUE(has(ds[0]->message, "output 1 'o1'")) << ds[0]->message;
  EXPECT_TRUE(has(ds[0]->message, "dtype f16 vs f32")) << ds[0]->message;

  // A static dim that differs is reported too.
  m->graph->nodes()[0]->subgraphs()[1]->outputs[0]->type = f32({2, 5});
  r = lintIr(*m);
  ds = withCode(r, "GL122");
  ASSERT_EQ(ds.size(), 2u) << dump(r);
  EXPECT_TRUE(has(ds[0]->message + ds[1]->message, "dim 1: 3 vs 5")) << dump(r);
}

// ---- GL123 data-dependent-shape -----------------------------------------------

TEST(DataDependentShape, NonZeroCountReachesRangeAndAKernel) {
  const char *text = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[8] x, float[8,8] w) => (float[M] y, float[K,8] z) {
      nz = NonZero(x)
      shp = Shape(nz)
      one = Constant <value = int64 {1}> ()
      zero = Constant <value = int64 {0}> ()
      cnt = Gather(shp, one)
      idx = Range(zero, cnt, one)
      y = Cast <to = 1> (idx)
      minus1 = Constant <value = int64[1] {-1}> ()
      flat = Reshape(nz, minus1)
      g = Gather(w, flat)
      z = MatMul(g, w)
    })";
  FileReport r = lintText(text);
  auto ds = withCode(r, "GL123");
  ASSERT_GE(ds.size(), 2u) << dump(r);
  const Diagnostic *range = nullptr, *mm = nullptr;
  for (const Diagnostic *d : ds) {
    if (d->location.opType == "Range") range = d;
    if (d->location.opType == "MatMul") mm = d;
    EXPECT_EQ(d->reason, "data_dependent_shape");
    EXPECT_TRUE(d->fusionId);
  }
  ASSERT_TRUE(range) << dump(r);
  EXPECT_TRUE(has(range->message, "takes its limit (input 1 'cnt')")) << range->message;
  EXPECT_TRUE(has(range->message, "NonZero '#1'")) << range->message;
  EXPECT_TRUE(has(range->message, "path length 3")) << "NonZero -> Shape -> Gather -> Range: " << range->message;
  EXPECT_TRUE(has(range->notes[0].message, "pad to a static maximum")) << range->notes[0].message;
  ASSERT_TRUE(mm) << dump(r);
  EXPECT_TRUE(has(mm->message, "reads 'g', whose dims depend on data")) << mm->message;
  EXPECT_TRUE(has(mm->message, "NonZero '#1'")) << mm->message;
  // One diagnostic per node.
  std::set<std::string> nodes;
  for (const Diagnostic *d : ds)
    EXPECT_TRUE(nodes.insert(d->location.graphPath + std::to_string(*d->location.nodeIndex)).second) << dump(r);
}

TEST(DataDependentShape, ContentsOfATensorAsAReshapeShape) {
  const char *text = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[16,16] x) => (float[A,B] y) {
      mx = ReduceMax <keepdims = 0> (x)
      n = Cast <to = 7> (mx)
      one = Constant <value = int64[1] {1}> ()
      nn = Unsqueeze(n, one)
      s = Concat <axis = 0> (nn, one)
      y = Reshape(x, s)
    })";
  FileReport r = lintText(text);
  auto ds = withCode(r, "GL123");
  ASSERT_EQ(ds.size(), 1u) << dump(r);
  EXPECT_EQ(ds[0]->location.opType, "Reshape");
  EXPECT_TRUE(has(ds[0]->message, "takes its shape (input 1 's') from tensor values, not shapes")) << ds[0]->message;
  EXPECT_TRUE(has(ds[0]->message, "ReduceMax '#1'")) << ds[0]->message;
  EXPECT_TRUE(has(ds[0]->message, "path length 4")) << ds[0]->message;
  EXPECT_EQ(ds[0]->fusionId, groupOfNode(*test::importText(text), "Reshape"));
}

TEST(DataDependentShape, ShapeArithmeticFromShapesIsStatic) {
  FileReport r = lintText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,4,6] x) => (float[N,24] y) {
      shp = Shape(x)
      zero = Constant <value = int64[1] {0}> ()
      n = Gather(shp, zero)
      m = Constant <value = int64[1] {24}> ()
      s = Concat <axis = 0> (n, m)
      y = Reshape(x, s)
      k = Constant <value = int64[1] {2}> ()
    })");
  EXPECT_TRUE(withCode(r, "GL123").empty()) << dump(r);
}

TEST(DataDependentShape, AnalysisIsSharedAndKnowsShapeOperands) {
  auto m = test::importText(kDataIf);
  DataDependence dd(*m);
  const Graph &g = *m->graph;
  const Value *s = g.findLocal("s"), *c = g.findLocal("c");
  ASSERT_TRUE(s && c);
  ASSERT_TRUE(dd.contentTaint(c));
  EXPECT_EQ(dd.contentTaint(c)->origin, s->producer) << "ReduceSum narrows x to a scalar";
  EXPECT_EQ(dd.contentTaint(c)->hops, 1u);
  EXPECT_FALSE(dd.shapeTaint(c));
  EXPECT_TRUE(dd.sites().empty());
}

// ---- GL131 inplace-alias --------------------------------------------------------

TEST(InplaceAlias, ReluInPlaceThenTheOldNameIsRead) {
  IrBuilder b;
  Value *x = b.input("x", f32({4}));
  Node *h = b.node("Relu", {x}, {"h"}, {f32({4})});
  Node *ip = b.node("aten::relu_", {h->outputs[0]}, {"relu_"}, {f32({4})});
  ip->mutatedInputs = {0};
  ip->outputAliasesInput = {0};
  Node *add = b.node("Add", {h->outputs[0], x}, {"y"}, {f32({4})});
  b.output(add->outputs[0]);
  auto m = b.take();
  FileReport r = lintIr(*m);
  auto ds = withCode(r, "GL131");
  ASSERT_EQ(ds.size(), 1u) << dump(r);
  EXPECT_EQ(ds[0]->location.nodeName, "relu_");
  EXPECT_EQ(ds[0]->reason, "inplace_alias");
  EXPECT_EQ(ds[0]->fusionId, groupOfNode(*m, "relu_"));
  EXPECT_TRUE(has(ds[0]->message, "in-place aten::relu_ 'relu_' overwrites 'h'")) << ds[0]->message;
  EXPECT_TRUE(has(ds[0]->message, "'h' is read afterwards by Add 'y'")) << ds[0]->message;
  EXPECT_TRUE(has(ds[0]->notes.back().message, "relu instead of relu_")) << ds[0]->notes.back().message;
  EXPECT_TRUE(withCode(r, "GL132").empty()) << "nothing saved for backward";
}

TEST(InplaceAlias, MutatingAGraphInputOrAParameter) {
  IrBuilder b;
  Value *x = b.input("x", f32({4}));
  Value *w = b.param("running_mean", f32({4}));
  Node *add = b.node("aten::add_", {x, w}, {"x_"}, {f32({4})});
  add->mutatedInputs = {0};
  Node *upd = b.node("aten::mul_", {w, x}, {"w_"}, {f32({4})});
  upd->mutatedInputs = {0};
  b.output(add->outputs[0]);
  auto m = b.take();
  FileReport r = lintIr(*m);
  auto ds = withCode(r, "GL131");
  ASSERT_EQ(ds.size(), 2u) << dump(r);
  EXPECT_EQ(ds[0]->location.nodeName, "x_");
  EXPECT_TRUE(has(ds[0]->message, "belongs to the caller (graph input 'x')")) << ds[0]->message;
  EXPECT_TRUE(has(ds[0]->message, "'x' is read afterwards by aten::mul_ 'w_'")) << ds[0]->message;
  EXPECT_EQ(ds[1]->location.nodeName, "w_");
  EXPECT_TRUE(has(ds[1]->message, "belongs to the caller (parameter/buffer 'running_mean')")) << ds[1]->message;
}

TEST(InplaceAlias, MutatingAViewThenReadingTheBase) {
  IrBuilder b;
  Value *in = b.input("in", f32({8}));
  Node *x = b.node("Relu", {in}, {"x"}, {f32({8})});
  Node *v = b.node("aten::slice", {x->outputs[0]}, {"v"}, {f32({4})});
  v->outputAliasesInput = {0};
  Node *mul = b.node("aten::mul_", {v->outputs[0], in}, {"v_"}, {f32({4})});
  mul->mutatedInputs = {0};
  mul->outputAliasesInput = {0};
  Node *read = b.node("Neg", {x->outputs[0]}, {"y"}, {f32({8})});
  b.output(read->outputs[0]);
  auto m = b.take();
  FileReport r = lintIr(*m);
  auto ds = withCode(r, "GL131");
  ASSERT_EQ(ds.size(), 1u) << dump(r);
  EXPECT_EQ(ds[0]->location.nodeName, "v_");
  EXPECT_TRUE(has(ds[0]->message, "overwrites 'v' (a view of 'x': same storage): 'x' is read afterwards by Neg 'y'")) << ds[0]->message;
  EXPECT_TRUE(has(ds[0]->notes[0].message, "'x' and 'v' share storage")) << ds[0]->notes[0].message;
}

TEST(InplaceAlias, ReadingOnlyTheMutatedResultIsClean) {
  IrBuilder b;
  Value *x = b.input("x", f32({4}));
  Node *h = b.node("Relu", {x}, {"h"}, {f32({4})});
  Node *ip = b.node("aten::relu_", {h->outputs[0]}, {"r"}, {f32({4})});
  ip->mutatedInputs = {0};
  ip->outputAliasesInput = {0};
  Node *before = b.node("Neg", {x}, {"early"}, {f32({4})});
  Node *add = b.node("Add", {ip->outputs[0], before->outputs[0]}, {"y"}, {f32({4})});
  b.output(add->outputs[0]);
  auto m = b.take();
  FileReport r = lintIr(*m);
  EXPECT_TRUE(withCode(r, "GL131").empty()) << dump(r);
}

TEST(InplaceAlias, ReadInALaterBodyCounts) {
  IrBuilder b;
  Value *c = b.input("c", tensorOf(DType::Bool, {}));
  Value *x = b.input("x0", f32({4}));
  Node *h = b.node("Relu", {x}, {"h"}, {f32({4})});
  Node *ip = b.node("aten::relu_", {h->outputs[0]}, {"ip"}, {f32({4})});
  ip->mutatedInputs = {0};
  Node *ifn = b.node("If", {c}, {"o"}, {f32({4})}, "branch");
  IrBuilder t = b.body(ifn, "then_branch");
  t.output(t.node("Neg", {t.capture(h->outputs[0])}, {"tn"}, {f32({4})})->outputs[0]);
  IrBuilder e = b.body(ifn, "else_branch");
  e.output(e.node("Abs", {e.capture(x)}, {"ea"}, {f32({4})})->outputs[0]);
  b.output(ifn->outputs[0]);
  auto m = b.take();
  FileReport r = lintIr(*m);
  auto ds = withCode(r, "GL131");
  ASSERT_EQ(ds.size(), 1u) << dump(r);
  EXPECT_EQ(ds[0]->location.nodeName, "ip");
  EXPECT_TRUE(has(ds[0]->message, "read afterwards by Neg 'tn'")) << ds[0]->message;
}

// ---- GL132 inplace-on-saved-tensor ----------------------------------------------

TEST(InplaceOnSavedTensor, MutatingASigmoidOutputSavedForBackward) {
  IrBuilder b;
  Value *x = b.input("x", f32({4}));
  Node *sig = b.node("Sigmoid", {x}, {"y"}, {f32({4})});
  sig->outputSavedForBackward = {true};
  sig->outputSavedAfter = {sig};
  Node *mul = b.node("aten::mul_", {sig->outputs[0], x}, {"y_"}, {f32({4})});
  mul->mutatedInputs = {0};
  b.output(mul->outputs[0]);
  auto m = b.take();
  FileReport r = lintIr(*m);
  auto ds = withCode(r, "GL132");
  ASSERT_EQ(ds.size(), 1u) << dump(r);
  EXPECT_EQ(ds[0]->severity, Severity::Error);
  EXPECT_EQ(ds[0]->location.nodeName, "y_");
  EXPECT_TRUE(has(ds[0]->message, "overwrites 'y'")) << ds[0]->message;
  EXPECT_TRUE(has(ds[0]->message, "the output of Sigmoid 'y', which autograd saved for backward before this write"))
      << ds[0]->message;
  EXPECT_TRUE(has(ds[0]->message, "modified by an inplace operation")) << ds[0]->message;
  EXPECT_TRUE(has(ds[0]->notes[0].message, "clone() 'y'")) << ds[0]->notes[0].message;
}

TEST(InplaceOnSavedTensor, MutatingAViewOfASavedTensor) {
  IrBuilder b;
  Value *x = b.input("x", f32({8}));
  Node *e = b.node("Exp", {x}, {"ex"}, {f32({8})});
  e->outputSavedForBackward = {true};
  Node *v = b.node("aten::view", {e->outputs[0]}, {"v"}, {f32({2, 4})});
  v->outputAliasesInput = {0};
  Node *add = b.node("aten::add_", {v->outputs[0], x}, {"v_"}, {f32({2, 4})});
  add->mutatedInputs = {0};
  b.output(add->outputs[0]);
  auto m = b.take();
  FileReport r = lintIr(*m);
  auto ds = withCode(r, "GL132");
  ASSERT_EQ(ds.size(), 1u) << dump(r);
  EXPECT_TRUE(has(ds[0]->message, "overwrites 'ex' (through 'v', which shares its storage)")) << ds[0]->message;
}

TEST(InplaceOnSavedTensor, SavedAfterTheWriteOrNotSavedIsClean) {
  IrBuilder b;
  Value *x = b.input("x", f32({4}));
  Node *h = b.node("Neg", {x}, {"h"}, {f32({4})});
  Node *ip = b.node("aten::relu_", {h->outputs[0]}, {"r"}, {f32({4})});
  ip->mutatedInputs = {0};
  ip->outputAliasesInput = {0};
  ip->outputSavedForBackward = {true};  // relu_ saves its own result: fine
  Node *sig = b.node("Sigmoid", {ip->outputs[0]}, {"s"}, {f32({4})});
  sig->outputSavedForBackward = {true};
  b.output(sig->outputs[0]);
  auto m = b.take();
  FileReport r = lintIr(*m);
  EXPECT_TRUE(withCode(r, "GL132").empty()) << dump(r);
}

// ---- Real models ----------------------------------------------------------------

std::vector<std::string> realModels() {
  std::vector<std::string> out;
  for (const char *name : {"resnet18.onnx", "mobilenet_v3_small.onnx", "gpt_tiny.onnx", "control_flow.onnx"})
    out.push_back(test::sourcePath(std::string("models/") + name));
  if (test::sharedAvailable()) {
    std::string light = test::sharedPath("corpus/onnx-backend/light");
    if (std::filesystem::is_directory(light))
      for (const auto &e : std::filesystem::directory_iterator(light))
        if (e.path().extension() == ".onnx")
          out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(ControlFlowAliasRealModels, CleanModelsStayCleanAndControlFlowIsFound) {
  for (const std::string &path : realModels()) {
    SCOPED_TRACE(path);
    FileReport r = lintFile(path, LintOptions{});
    ASSERT_FALSE(r.fatal) << r.fatalMessage;
    bool cf = has(path, "control_flow.onnx");
    for (const char *code : {"GL122", "GL123", "GL131", "GL132"})
      EXPECT_TRUE(withCode(r, code).empty()) << code << "\n" << dump(r);
    auto gl121 = withCode(r, "GL121");
    if (!cf) {
      EXPECT_TRUE(gl121.empty()) << dump(r);
      continue;
    }
    ASSERT_EQ(gl121.size(), 2u) << dump(r);
    EXPECT_EQ(gl121[0]->location.nodeName, "/If");
    EXPECT_TRUE(has(gl121[0]->message, "ReduceSum")) << gl121[0]->message;
    EXPECT_EQ(gl121[1]->location.nodeName, "/Loop");
    EXPECT_TRUE(has(gl121[1]->message, "dynamic trip count from graph input 'n'")) << gl121[1]->message;
  }
}

TEST(ControlFlowAliasRealModels, BackendNodeTestsRaiseTheirFindings) {
  if (!test::sharedAvailable())
    GTEST_SKIP() << "shared corpus absent";
  std::string node = test::sharedPath("corpus/onnx-backend/node/");
  struct Case { const char *dir; const char *code; const char *words; };
  const Case cases[] = {
      {"test_if", "GL121", "data-dependent branch"},
      {"test_if_seq", "GL121", "If '#1'"},
      {"test_loop11", "GL121", "dynamic trip count from graph input 'trip_count'"},
      {"test_scan9_sum", "GL121", "3 iterations (static)"},
      {"test_nonzero_example", "GL123", "graph output 'result' of NonZero '#1' has a size that depends on tensor values"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.dir);
    std::string path = node + c.dir + "/model.onnx";
    ASSERT_TRUE(std::filesystem::exists(path)) << path;
    FileReport r = lintFile(path, LintOptions{});
    auto ds = withCode(r, c.code);
    ASSERT_EQ(ds.size(), 1u) << dump(r);
    EXPECT_TRUE(has(ds[0]->message, c.words)) << ds[0]->message;
    EXPECT_TRUE(withCode(r, "GL122").empty()) << dump(r);
  }
}

}  // namespace
