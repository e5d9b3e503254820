// The IR's building blocks as a rule author sees them: dtype names and widths
// (float8, int4, int2 included), dims and shapes as printed in messages,
// element counts that must not overflow, and the verifier on hand-built graphs.
#include "IrBuilder.h"
#include "TestSupport.h"

#include "graphlint/ir/DType.h"
#include "graphlint/ir/OpRegistry.h"
#include "graphlint/ir/ValueFacts.h"
#include "graphlint/ir/Type.h"
#include "graphlint/ir/Verifier.h"

#include <gtest/gtest.h>

#include <climits>
#include <limits>

using namespace graphlint;

namespace {

TEST(DType, OnnxNamesMatchTensorProtoCodes) {
  struct Case { int code; const char *name; const char *shortName; unsigned bits; };
  const Case cases[] = {
      {1, "FLOAT", "f32", 32},           {7, "INT64", "i64", 64},
      {9, "BOOL", "bool", 8},            {10, "FLOAT16", "f16", 16},
      {11, "DOUBLE", "f64", 64},         {15, "COMPLEX128", "c128", 128},
      {16, "BFLOAT16", "bf16", 16},      {17, "FLOAT8E4M3FN", "f8e4m3fn", 8},
      {18, "FLOAT8E4M3FNUZ", "f8e4m3fnuz", 8},
      {19, "FLOAT8E5M2", "f8e5m2", 8},   {20, "FLOAT8E5M2FNUZ", "f8e5m2fnuz", 8},
      {21, "UINT4", "u4", 4},            {22, "INT4", "i4", 4},
      {23, "FLOAT4E2M1", "f4e2m1", 4},   {24, "FLOAT8E8M0", "f8e8m0", 8},
      {25, "UINT2", "u2", 2},            {26, "INT2", "i2", 2},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    auto dt = dtypeFromCode(c.code);
    ASSERT_TRUE(dt);
    EXPECT_EQ(dtypeName(*dt), c.name);
    EXPECT_EQ(dtypeShortName(*dt), c.shortName);
    EXPECT_EQ(dtypeBits(*dt), c.bits);
    EXPECT_EQ(dtypeFromName(c.name), dt);
    EXPECT_EQ(dtypeFromName(c.shortName), dt);
  }
}

TEST(DType, StringAndUndefinedHaveNoWidthAndUnknownCodesAreRejected) {
  EXPECT_EQ(dtypeBits(DType::String), 0u);
  EXPECT_EQ(dtypeBits(DType::Undefined), 0u);
  EXPECT_FALSE(dtypeFromCode(-1));
  EXPECT_FALSE(dtypeFromCode(27));
  EXPECT_FALSE(dtypeFromCode(1000));
  EXPECT_FALSE(dtypeFromName("FLOAT128"));
}

TEST(DType, Classification) {
  EXPECT_TRUE(isFloating(DType::Float8E4M3FN));
  EXPECT_TRUE(isFloating(DType::BFloat16));
  EXPECT_TRUE(isFloating(DType::Float4E2M1));
  EXPECT_FALSE(isFloating(DType::Int4));
  EXPECT_TRUE(isInteger(DType::Int4));
  EXPECT_TRUE(isInteger(DType::UInt2));
  EXPECT_FALSE(isInteger(DType::Bool));
  EXPECT_FALSE(isInteger(DType::Float));
}

TEST(DType, SubByteTypesArePackedAndRoundedUp) {
  EXPECT_EQ(bytesFor(DType::Int4, 3), 2u);    // 12 bits -> 2 bytes
  EXPECT_EQ(bytesFor(DType::Int4, 4), 2u);
  EXPECT_EQ(bytesFor(DType::UInt2, 5), 2u);   // 10 bits -> 2 bytes
  EXPECT_EQ(bytesFor(DType::Int2, 4), 1u);
  EXPECT_EQ(bytesFor(DType::Float8E5M2, 10), 10u);
  EXPECT_EQ(bytesFor(DType::Float, 0), 0u);
  EXPECT_FALSE(bytesFor(DType::String, 4));
  EXPECT_FALSE(bytesFor(DType::Float, -1));
  EXPECT_EQ(bytesFor(DType::Complex128, INT64_MAX), std::nullopt) << "overflows 64-bit bytes";
}

TEST(Shape, PrintsStaticSymbolicAndUnknownDims) {
  Shape s;
  s.rankKnown = true;
  s.dims = {Dim::fixed(2), Dim::named("batch"), Dim::unknown(), Dim::fixed(0)};
  EXPECT_EQ(s.str(), "[2,batch,?,0]");
  EXPECT_EQ(Shape::unranked().str(), "?");
  Shape scalar;
  scalar.rankKnown = true;
  EXPECT_EQ(scalar.str(), "[]");
  EXPECT_EQ(scalar.numElements(), 1);
  EXPECT_EQ(Type::tensor(DType::Float, Shape::of({1, 1000})).str(), "f32[1,1000]");
  EXPECT_EQ(Type::tensor(DType::BFloat16, s).str(), "bf16[2,batch,?,0]");
  EXPECT_EQ(Type().str(), "?");
}

TEST(Shape, DimEquality) {
  EXPECT_EQ(Dim::fixed(3), Dim::fixed(3));
  EXPECT_NE(Dim::fixed(3), Dim::fixed(4));
  EXPECT_EQ(Dim::named("N"), Dim::named("N"));
  EXPECT_NE(Dim::named("N"), Dim::named("M"));
  EXPECT_NE(Dim::named("N"), Dim::unknown());
  EXPECT_NE(Dim::fixed(0), Dim::named(""));
}

TEST(Shape, NumElementsIsNulloptOnOverflowSymbolsAndNegatives) {
  EXPECT_EQ(Shape::of({2, 3, 4}).numElements(), 24);
  EXPECT_EQ(Shape::of({0, INT64_MAX}).numElements(), 0);
  EXPECT_EQ(Shape::of({INT64_MAX, 1}).numElements(), INT64_MAX);
  EXPECT_FALSE(Shape::of({INT64_MAX, 2}).numElements());
  EXPECT_FALSE(Shape::of({1LL << 32, 1LL << 32}).numElements());
  EXPECT_FALSE(Shape::of({-1, 4}).numElements());
  Shape sym = Shape::of({4});
  sym.dims.push_back(Dim::named("batch"));
  EXPECT_FALSE(sym.numElements());
  EXPECT_FALSE(Shape::unranked().numElements());
  EXPECT_FALSE(Type::tensor(DType::Float, Shape::of({1LL << 62, 2})).byteSize());
  EXPECT_EQ(Type::tensor(DType::Float16, Shape::of({3, 5})).byteSize(), 30u);
}

// ---- Verifier on hand-built IR -------------------------------------------

struct Builder {
  Graph g;
  Node *node(const std::string &name, const std::string &op, std::vector<Value *> ins, std::vector<std::string> outs) {
    Node *n = g.createNode();
    n->name = name;
    n->opType = op;
    n->graph = &g;
    n->op = OpRegistry::instance().lookup("", op, 17);
    for (Value *v : ins) {
      v->uses.push_back({n, static_cast<unsigned>(n->inputs.size())});
      n->inputs.push_back(v);
    }
    for (const std::string &o : outs) {
      Value *v = g.createValue(o, Value::Kind::NodeOutput);
      v->producer = n;
      v->resultIndex = static_cast<unsigned>(n->outputs.size());
      n->outputs.push_back(v);
    }
    g.renumber();
    return n;
  }
  Value *input(const std::string &name) {
    Value *v = g.createValue(name, Value::Kind::GraphInput);
    v->type = Type::tensor(DType::Float, Shape::of({4}));
    g.inputs.push_back(v);
    return v;
  }
};

std::vector<std::string> messages(const std::vector<VerifierIssue> &issues) {
  std::vector<std::string> out;
  for (const auto &i : issues)
    out.push_back(i.message);
  return out;
}

TEST(Verifier, CleanGraphHasNoIssues) {
  Builder b;
  Value *x = b.input("x");
  Node *r = b.node("relu", "Relu", {x}, {"y"});
  b.g.outputs.push_back(r->outputs[0]);
  EXPECT_TRUE(verifyGraph(b.g).empty()) << ::testing::PrintToString(messages(verifyGraph(b.g)));
}

TEST(Verifier, DanglingInputNamesTheValueAndNode) {
  Builder b;
  Value *x = b.input("x");
  Value *ghost = b.g.createValue("ghost", Value::Kind::Missing);
  Node *add = b.node("add0", "Add", {x, ghost}, {"y"});
  b.g.outputs.push_back(add->outputs[0]);
  auto issues = verifyGraph(b.g);
  ASSERT_EQ(issues.size(), 1u) << ::testing::PrintToString(messages(issues));
  EXPECT_EQ(issues[0].node, add);
  EXPECT_EQ(issues[0].message, "input 1 'ghost' of node 'add0' (Add) is not produced by any node, graph input or "
                               "initializer in scope (dangling input)");
}

TEST(Verifier, DuplicateDefinitionNamesBothDefiners) {
  Builder b;
  Value *x = b.input("x");
  b.node("a", "Relu", {x}, {"y"});
  Node *second = b.node("b", "Sigmoid", {x}, {"y"});
  auto issues = verifyGraph(b.g);
  ASSERT_EQ(issues.size(), 1u) << ::testing::PrintToString(messages(issues));
  EXPECT_EQ(issues[0].node, second);
  EXPECT_EQ(issues[0].message,
            "'y' is defined twice, by node 'a' (Relu) and by node 'b' (Sigmoid) (graphs must be in SSA form)");
}

TEST(Verifier, OutputShadowingAGraphInputIsADuplicate) {
  Builder b;
  Value *x = b.input("x");
  b.node("n", "Relu", {x}, {"x"});
  auto msgs = messages(verifyGraph(b.g));
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_NE(msgs[0].find("'x' is defined twice, by a graph input and by node 'n' (Relu)"), std::string::npos)
      << msgs[0];
}

TEST(Verifier, CycleIsReportedOnceWithItsNodes) {
  Builder b;
  Value *x = b.input("x");
  // a = Add(x, c); c = Relu(a): a two-node cycle.
  Node *add = b.node("add", "Add", {x}, {"a"});
  Node *relu = b.node("relu", "Relu", {add->outputs[0]}, {"c"});
  add->inputs.push_back(relu->outputs[0]);
  relu->outputs[0]->uses.push_back({add, 1});
  auto issues = verifyGraph(b.g);
  ASSERT_EQ(issues.size(), 1u) << ::testing::PrintToString(messages(issues));
  EXPECT_EQ(issues[0].node, add);
  EXPECT_EQ(issues[0].message, "the graph has a cycle through 2 node(s): 'add' (Add), 'relu' (Relu)");
}

TEST(Verifier, EachCycleIsReportedWithOnlyItsMembers) {
  Builder b;
  Value *x = b.input("x");
  // A self-loop, a clean node, and a three-node cycle feeding a consumer.
  Node *self = b.node("self", "Relu", {x}, {"s"});
  self->inputs[0] = self->outputs[0];
  self->outputs[0]->uses.push_back({self, 0});
  Node *ok = b.node("ok", "Relu", {x}, {"k"});
  Node *p = b.node("p", "Add", {ok->outputs[0]}, {"pa"});
  Node *q = b.node("q", "Relu", {p->outputs[0]}, {"qa"});
  Node *r = b.node("r", "Tanh", {q->outputs[0]}, {"ra"});
  p->inputs.push_back(r->outputs[0]);
  r->outputs[0]->uses.push_back({p, 1});
  b.node("after", "Sigmoid", {r->outputs[0]}, {"out"});
  auto msgs = messages(verifyGraph(b.g));
  EXPECT_EQ(msgs, (std::vector<std::string>{"the graph has a cycle through 1 node(s): 'self' (Relu)",
                                            "the graph has a cycle through 3 node(s): 'p' (Add), 'q' (Relu), "
                                            "'r' (Tanh)"}));
}

TEST(Verifier, MissingGraphOutput) {
  Builder b;
  b.input("x");
  b.g.outputs.push_back(b.g.createValue("nowhere", Value::Kind::Missing));
  auto msgs = messages(verifyGraph(b.g));
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_EQ(msgs[0], "graph output 'nowhere' is not produced by any node, input or initializer");
}

TEST(Verifier, UnnamedNodesAreDescribedByIndex) {
  Builder b;
  Value *x = b.input("x");
  Node *n = b.node("", "Relu", {x}, {"y"});
  EXPECT_EQ(describeNode(*n), "#1 (Relu)") << "1-based, as the reporters number nodes";
  n->name = "r";
  EXPECT_EQ(describeNode(*n), "'r' (Relu)");
}

TEST(Verifier, ChecksNestedGraphsToo) {
  auto m = test::importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (bool c, float[4] x) => (float[4] y) {
      y = If(c) <
        then_branch = t () => (float[4] o) { o = Relu(nowhere) },
        else_branch = e () => (float[4] o2) { o2 = Relu(x) }>
    })");
  ASSERT_TRUE(m);
  auto issues = verifyGraph(*m->graph);
  ASSERT_EQ(issues.size(), 1u) << ::testing::PrintToString(messages(issues));
  EXPECT_NE(issues[0].message.find("'nowhere'"), std::string::npos);
  EXPECT_EQ(issues[0].graph->path(), "main/#1:then_branch");
}

}  // namespace

// What every element of a tensor is, proved from how the graph builds it
// (ValueFacts.h, src/ir/ElementFacts.cpp). The mask is transformers' as
// torch.export records it for a bidirectional model without a padding mask:
// where(expand(arange(64) + 0 >= 0), zeros(), min): every element 0.
namespace {
Attribute intAttr(const std::string &name, int64_t v) {
  Attribute a;
  a.name = name;
  a.kind = AttrKind::Int;
  a.i = v;
  return a;
}
Attribute floatAttr(const std::string &name, double v) {
  Attribute a;
  a.name = name;
  a.kind = AttrKind::Float;
  a.f = v;
  return a;
}
}  // namespace

TEST(ElementFacts, TheAllPassMaskOfATracedBidirectionalModel) {
  test::IrBuilder b;
  Node *ar = b.node("aten::arange", {}, {"arange"}, {test::tensorOf(DType::Int64, {64})});
  ar->attributes.push_back(intAttr("end", 64));
  Node *add = b.node("aten::add", {ar->outputs[0]}, {"kv"}, {test::tensorOf(DType::Int64, {64})});
  add->attributes.push_back(intAttr("other", 0));
  Node *un = b.node("aten::unsqueeze", {add->outputs[0]}, {"kv4"}, {test::tensorOf(DType::Int64, {1, 1, 64, 1})});
  un->attributes.push_back(intAttr("dim", 0));
  Node *ge = b.node("aten::ge", {un->outputs[0]}, {"ge"}, {test::tensorOf(DType::Bool, {1, 1, 64, 1})});
  ge->attributes.push_back(intAttr("other", 0));
  Node *ex = b.node("aten::expand", {ge->outputs[0]}, {"cond"}, {test::tensorOf(DType::Bool, {2, 1, 64, 64})});
  Node *zeros = b.node("aten::zeros", {}, {"zero"}, {test::f32({})});
  Node *where = b.node("aten::where", {ex->outputs[0], zeros->outputs[0]}, {"mask"}, {test::f32({2, 1, 64, 64})});
  where->attributes.push_back(floatAttr("other", -3.4028234663852886e+38));

  ElementBounds kv = elementBounds(add->outputs[0]);
  EXPECT_EQ(kv.lo, std::optional<int64_t>(0));
  EXPECT_EQ(kv.hi, std::optional<int64_t>(63));
  EXPECT_EQ(uniformBool(ex->outputs[0]), std::optional<bool>(true));
  EXPECT_TRUE(isAllZero(where->outputs[0]));
  EXPECT_TRUE(isAllPassMask(where->outputs[0]));

  // kv >= 1 is false at kv = 0 and true elsewhere: not uniform.
  ge->attributes[0].i = 1;
  EXPECT_EQ(uniformBool(ex->outputs[0]), std::nullopt);
  EXPECT_FALSE(isAllPassMask(where->outputs[0]));
  // kv >= 64 is false everywhere: where picks the other branch, min.
  ge->attributes[0].i = 64;
  EXPECT_EQ(uniformBool(ex->outputs[0]), std::optional<bool>(false));
  EXPECT_FALSE(isAllZero(where->outputs[0]));
  // ...and a zero there makes it all zero again.
  where->attributes[0].f = 0;
  EXPECT_TRUE(isAllPassMask(where->outputs[0]));
}

TEST(ElementFacts, ACausalMaskOrAZerosTensorIsNoAllPassMask) {
  test::IrBuilder b;
  Node *q = b.node("aten::arange", {}, {"q"}, {test::tensorOf(DType::Int64, {64})});
  q->attributes.push_back(intAttr("end", 64));
  Node *kv = b.node("aten::arange", {}, {"kv"}, {test::tensorOf(DType::Int64, {64})});
  kv->attributes.push_back(intAttr("end", 64));
  Node *qc = b.node("aten::unsqueeze", {q->outputs[0]}, {"qc"}, {test::tensorOf(DType::Int64, {64, 1})});
  Node *le = b.node("aten::le", {kv->outputs[0], qc->outputs[0]}, {"le"}, {test::tensorOf(DType::Bool, {64, 64})});
  Node *zeros = b.node("aten::zeros", {}, {"zero"}, {test::f32({})});
  Node *where = b.node("aten::where", {le->outputs[0], zeros->outputs[0]}, {"causal"}, {test::f32({64, 64})});
  where->attributes.push_back(floatAttr("other", -1e30));
  EXPECT_EQ(uniformBool(le->outputs[0]), std::nullopt) << "kv <= q: true below the diagonal only";
  EXPECT_FALSE(isAllPassMask(where->outputs[0]));
  EXPECT_TRUE(isCausalMask(le->outputs[0]));
  EXPECT_TRUE(isCausalMask(where->outputs[0]));
  EXPECT_FALSE(isCausalMask(zeros->outputs[0]));
  // T5's cross-attention position bias: a zeros tensor the model builds in
  // eager too. All zero, but no mask.
  Node *bias = b.node("aten::zeros", {}, {"position_bias"}, {test::f32({1, 4, 64, 64})});
  EXPECT_TRUE(isAllZero(bias->outputs[0]));
  EXPECT_FALSE(isAllPassMask(bias->outputs[0]));
  // A sum of ranges: [0, 63] - [0, 63] = [-63, 63].
  Node *sub = b.node("aten::sub", {qc->outputs[0], kv->outputs[0]}, {"rel"}, {test::tensorOf(DType::Int64, {64, 64})});
  ElementBounds rel = elementBounds(sub->outputs[0]);
  EXPECT_EQ(rel.lo, std::optional<int64_t>(-63));
  EXPECT_EQ(rel.hi, std::optional<int64_t>(63));
}

// transformers' causal mask as graphlint-export's fake capture and a
// non-strict torch.export record it (create_causal_mask under a tracer):
// position ids, the packed-sequence index (a cumsum of position jumps), and
// `kv <= q and same sequence`, made additive by a where. Eager passes
// is_causal=True and no mask instead (isCausalMask).
namespace {
struct TracedCausalMask {
  test::IrBuilder b;
  Node *ne = nullptr, *where = nullptr, *mask = nullptr, *positions = nullptr;
  explicit TracedCausalMask(bool positionsFromInput = false, int64_t window = 0) {
    auto i64 = [](std::initializer_list<int64_t> d) { return test::tensorOf(DType::Int64, d); };
    auto boolT = [](std::initializer_list<int64_t> d) { return test::tensorOf(DType::Bool, d); };
    auto arange = [&](int64_t end, const char *name) {
      Node *n = b.node("aten::arange", {}, {name}, {i64({end})});
      n->attributes.push_back(intAttr("end", end));
      return n->outputs[0];
    };
    auto op = [&](const char *aten, std::vector<Value *> in, const char *name, Type t,
                  std::vector<Attribute> attrs = {}) {
      Node *n = b.node(aten, in, {name}, {t});
      n->attributes = std::move(attrs);
      return n;
    };
    Value *pos;
    if (positionsFromInput) {
      pos = b.input("position_ids", i64({2, 64}));
    } else {
      Node *add = op("aten::add", {arange(64, "arange")}, "cache_position", i64({64}), {intAttr("other", 0)});
      Node *un = op("aten::unsqueeze", {add->outputs[0]}, "pos1", i64({1, 64}), {intAttr("dim", 0)});
      pos = op("aten::expand", {un->outputs[0]}, "position_ids", i64({2, 64}))->outputs[0];
    }
    positions = pos->producer;
    // find_packed_sequence_indices: diff with a prepended first - 1, != 1, cumsum.
    Node *first = op("aten::slice", {pos}, "first", i64({2, 1}), {intAttr("dim", 1), intAttr("start", 0), intAttr("end", 1)});
    Node *dummy = op("aten::sub", {first->outputs[0]}, "dummy", i64({2, 1}), {intAttr("other", 1)});
    Node *cat = op("aten::cat", {dummy->outputs[0], pos}, "cat", i64({2, 65}), {intAttr("dim", -1)});
    Node *lo = op("aten::slice", {cat->outputs[0]}, "lo", i64({2, 64}), {intAttr("dim", -1), intAttr("start", 0), intAttr("end", 64)});
    Node *hi = op("aten::slice", {cat->outputs[0]}, "hi", i64({2, 64}),
                  {intAttr("dim", -1), intAttr("start", 1), intAttr("end", std::numeric_limits<int64_t>::max())});
    Node *d = op("aten::sub", {hi->outputs[0], lo->outputs[0]}, "d", i64({2, 64}));
    ne = op("aten::ne", {d->outputs[0]}, "jump", boolT({2, 64}), {intAttr("other", 1)});
    Node *seq = op("aten::cumsum", {ne->outputs[0]}, "seq", i64({2, 64}), {intAttr("dim", -1)});
    // Index grids: batch [2,1,1,1], q [1,1,64,1], kv [1,1,1,64].
    Node *bi = op("aten::view", {arange(2, "b")}, "bi", i64({2, 1, 1, 1}));
    Node *qi = op("aten::view", {arange(64, "q")}, "qi", i64({1, 1, 64, 1}));
    Node *ki = op("aten::view", {arange(64, "k")}, "ki", i64({1, 1, 1, 64}));
    Node *qpos = op("aten::index", {pos, bi->outputs[0], qi->outputs[0]}, "qpos", i64({2, 1, 64, 1}));
    Node *kpos = op("aten::index", {pos, bi->outputs[0], ki->outputs[0]}, "kpos", i64({2, 1, 1, 64}));
    Node *le = op("aten::le", {kpos->outputs[0], qpos->outputs[0]}, "causal", boolT({2, 1, 64, 64}));
    Node *ones = op("aten::new_ones", {qpos->outputs[0]}, "ones", boolT({}));
    Node *m = op("aten::bitwise_and", {ones->outputs[0], le->outputs[0]}, "and1", boolT({2, 1, 64, 64}));
    if (window > 0) {  // sliding_window_overlay: kv > q - window
      Node *back = op("aten::sub", {qpos->outputs[0]}, "back", i64({2, 1, 64, 1}), {intAttr("other", window)});
      Node *gt = op("aten::gt", {kpos->outputs[0], back->outputs[0]}, "window", boolT({2, 1, 64, 64}));
      m = op("aten::bitwise_and", {m->outputs[0], gt->outputs[0]}, "and_w", boolT({2, 1, 64, 64}));
    }
    Node *qs = op("aten::index", {seq->outputs[0], bi->outputs[0], qi->outputs[0]}, "qseq", i64({2, 1, 64, 1}));
    Node *ks = op("aten::index", {seq->outputs[0], bi->outputs[0], ki->outputs[0]}, "kseq", i64({2, 1, 1, 64}));
    Node *same = op("aten::eq", {qs->outputs[0], ks->outputs[0]}, "same", boolT({2, 1, 64, 64}));
    Node *and2 = op("aten::bitwise_and", {m->outputs[0], same->outputs[0]}, "and2", boolT({2, 1, 64, 64}));
    mask = op("aten::expand", {and2->outputs[0]}, "mask", boolT({2, 1, 64, 64}));
    Node *zero = op("aten::scalar_tensor", {}, "zero", test::f32({}), {floatAttr("s", 0)});
    Attribute ninf;
    ninf.name = "s";
    ninf.kind = AttrKind::String;
    ninf.s = "-inf";
    Node *minf = op("aten::scalar_tensor", {}, "minf", test::f32({}), {ninf});
    where = op("aten::where", {mask->outputs[0], zero->outputs[0], minf->outputs[0]}, "additive", test::f32({2, 1, 64, 64}));
  }
};
}  // namespace

TEST(ElementFacts, TheCausalMaskTransformersBuildsUnderATracer) {
  TracedCausalMask t;
  EXPECT_TRUE(isCausalMask(t.mask->outputs[0]));
  EXPECT_TRUE(isCausalMask(t.where->outputs[0]));
  EXPECT_FALSE(isAllPassMask(t.where->outputs[0]));
}

TEST(ElementFacts, APaddedPackedOrWindowedMaskIsNotCausal) {
  // Position ids the caller passes: their values are not in the graph.
  EXPECT_FALSE(isCausalMask(TracedCausalMask(true).where->outputs[0]));
  // A sliding window shorter than the sequence masks more than `kv <= q`...
  EXPECT_FALSE(isCausalMask(TracedCausalMask(false, 16).where->outputs[0]));
  // ...one at least as long masks nothing more.
  EXPECT_TRUE(isCausalMask(TracedCausalMask(false, 64).where->outputs[0]));
  // Every position a jump: each token its own sequence, a diagonal mask.
  TracedCausalMask packed;
  packed.ne->attributes[0].i = 2;
  EXPECT_FALSE(isCausalMask(packed.where->outputs[0]));
}

