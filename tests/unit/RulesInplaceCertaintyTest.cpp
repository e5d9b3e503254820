// The in-place, host-sync, cast and unknown-op rules on the facts that decide
// whether a finding is certain (issue 16; the truth set in tests/truth/
// checks the same against execution): GL132 save points (a write before the
// save is fine, a file without them only warns), indexed-assignment advice,
// backward-phase writes and buffers left out of GL131/GL132, the exporter's
// host_sync flag for GL112, bool->bool casts left out of GL102, every torch
// op known to the registry, and the FX importer's checks of saved_at.
#include "IrBuilder.h"
#include "TestSupport.h"

#include "graphlint/import/Importer.h"
#include "graphlint/ir/OpRegistry.h"

#include <gtest/gtest.h>

using namespace graphlint;
using graphlint::test::f32;
using graphlint::test::IrBuilder;
using graphlint::test::tensorOf;
using graphlint::test::withCode;

namespace {

bool has(const std::string &s, const std::string &needle) { return s.find(needle) != std::string::npos; }

std::string dump(const FileReport &r) { return test::dumpDiagnostics(r); }

FileReport lintIr(const Model &m) { return lintModel(m, LintOptions{}); }

// h = neg(x); v = select(h); fill_(v) ("h[:, 0] = 0"); y = mm(h, w), which
// saves h. `savedAfter` picks the save point of h: "fill" (the mm after the
// write saves it, as in eager) or "neg" (saved before the write).
std::unique_ptr<Model> indexedWriteThenMatmul(const std::string &savedAfter) {
  IrBuilder b;
  Value *x = b.input("x", f32({4, 4}));
  Value *w = b.param("w", f32({4, 4}));
  Node *h = b.node("aten::neg", {x}, {"h"}, {f32({4, 4})});
  Node *v = b.node("aten::select", {h->outputs[0]}, {"v"}, {f32({4})});
  v->outputAliasesInput = {0};
  Node *fill = b.node("aten::fill_", {v->outputs[0]}, {"fill_"}, {f32({4})});
  fill->mutatedInputs = {0};
  fill->outputAliasesInput = {0};
  Node *mm = b.node("aten::mm", {h->outputs[0], w}, {"y"}, {f32({4, 4})});
  h->outputSavedForBackward = {true};
  h->outputSavedAfter = {savedAfter == "fill" ? fill : h};
  b.output(mm->outputs[0]);
  return b.take();
}

TEST(InplaceCertainty, AWriteBeforeTheSaveIsNotAnError) {
  FileReport r = lintIr(*indexedWriteThenMatmul("fill"));
  EXPECT_TRUE(withCode(r, "GL132").empty()) << dump(r);
  EXPECT_EQ(withCode(r, "GL131").size(), 1u) << "the base is still read through its old name\n" << dump(r);
}

TEST(InplaceCertainty, AWriteAfterTheSaveIsAnErrorWithIndexedAssignmentAdvice) {
  FileReport r = lintIr(*indexedWriteThenMatmul("neg"));
  auto ds = withCode(r, "GL132");
  ASSERT_EQ(ds.size(), 1u) << dump(r);
  EXPECT_EQ(ds[0]->severity, Severity::Error);
  EXPECT_EQ(ds[0]->location.nodeName, "fill_");
  EXPECT_TRUE(has(ds[0]->message, "overwrites 'h' (through 'v', which shares its storage), the output of aten::neg "
                                  "'h', which autograd saved for backward before this write"))
      << ds[0]->message;
  const std::string &advice = ds[0]->notes.back().message;
  EXPECT_TRUE(has(advice, "`h = h.clone()` before the indexed assignment")) << advice;
  EXPECT_FALSE(has(advice, "fill instead of fill_")) << advice;
  auto alias = withCode(r, "GL131");
  ASSERT_EQ(alias.size(), 1u) << dump(r);
  EXPECT_FALSE(has(alias[0]->notes.back().message, "fill instead of fill_")) << alias[0]->notes.back().message;
}

TEST(InplaceCertainty, WithoutSavePointsTheFindingIsAWarning) {
  IrBuilder b;
  Value *x = b.input("x", f32({4}));
  Node *sig = b.node("aten::sigmoid", {x}, {"s"}, {f32({4})});
  sig->outputSavedForBackward = {true};  // an export from before saved_at
  Node *mul = b.node("aten::mul_", {sig->outputs[0], x}, {"s_"}, {f32({4})});
  mul->mutatedInputs = {0};
  b.output(mul->outputs[0]);
  FileReport r = lintIr(*b.take());
  auto ds = withCode(r, "GL132");
  ASSERT_EQ(ds.size(), 1u) << dump(r);
  EXPECT_EQ(ds[0]->severity, Severity::Warning);
  EXPECT_TRUE(has(ds[0]->message, "probably saved for backward before this write")) << ds[0]->message;
  EXPECT_TRUE(has(ds[0]->notes[0].message, "re-export")) << ds[0]->notes[0].message;
  EXPECT_TRUE(has(ds[0]->notes[1].message, "use the out-of-place op (mul instead of mul_)")) << ds[0]->notes[1].message;
}

TEST(InplaceCertainty, OutArgumentAdviceDropsOut) {
  IrBuilder b;
  Value *x = b.input("x", f32({4}));
  Node *e = b.node("aten::exp", {x}, {"c"}, {f32({4})});
  e->outputSavedForBackward = {true};
  e->outputSavedAfter = {e};
  Node *add = b.node("aten::add", {x, e->outputs[0]}, {"out"}, {f32({4})});
  add->mutatedInputs = {1};
  add->outputAliasesInput = {1};
  b.output(add->outputs[0]);
  FileReport r = lintIr(*b.take());
  auto ds = withCode(r, "GL132");
  ASSERT_EQ(ds.size(), 1u) << dump(r);
  EXPECT_EQ(ds[0]->severity, Severity::Error);
  EXPECT_TRUE(has(ds[0]->notes.back().message, "drop out=")) << ds[0]->notes.back().message;
}

TEST(InplaceCertainty, BackwardWritesAndBufferUpdatesAreNotTheUsers) {
  IrBuilder b;
  Value *x = b.input("x", f32({4}));
  Value *mean = b.param("bn.running_mean", f32({4}));
  mean->param->buffer = true;
  Node *sig = b.node("aten::sigmoid", {x}, {"s"}, {f32({4})});
  sig->outputSavedForBackward = {true};
  sig->outputSavedAfter = {sig};
  // torch 2.x batch norm writes its running statistics from the kernel.
  Node *bn = b.node("aten::_native_batch_norm_legit", {sig->outputs[0], mean}, {"bn"}, {f32({4})});
  bn->mutatedInputs = {1};
  Node *reread = b.node("aten::mul", {mean, x}, {"m"}, {f32({4})});
  // Autograd's own copy into a view of a saved tensor, in the backward pass.
  Node *view = b.node("aten::as_strided", {sig->outputs[0]}, {"as_strided"}, {f32({4})});
  view->outputAliasesInput = {0};
  view->backwardPhase = true;
  Node *copy = b.node("aten::copy_", {view->outputs[0], reread->outputs[0]}, {"copy_"}, {f32({4})});
  copy->mutatedInputs = {0};
  copy->backwardPhase = true;
  Node *after = b.node("aten::neg", {sig->outputs[0]}, {"n"}, {f32({4})});
  b.output(after->outputs[0]);
  b.output(bn->outputs[0]);
  FileReport r = lintIr(*b.take());
  EXPECT_TRUE(withCode(r, "GL131").empty()) << dump(r);
  EXPECT_TRUE(withCode(r, "GL132").empty()) << dump(r);
}

TEST(InplaceCertainty, HostSyncFlagFromTheExporterIsASync) {
  IrBuilder b;
  Value *x = b.input("x", f32({8}));
  Value *mask = b.input("mask", tensorOf(DType::Bool, {8}));
  Node *index = b.node("aten::index", {x, mask}, {"picked"}, {f32({8})});
  Node *plain = b.node("aten::index", {x, x}, {"plain"}, {f32({8})});
  index->hostSync = true;  // boolean-mask indexing: an unbacked output size
  b.output(index->outputs[0]);
  b.output(plain->outputs[0]);
  FileReport r = lintIr(*b.take());
  auto ds = withCode(r, "GL112");
  ASSERT_EQ(ds.size(), 1u) << dump(r);
  EXPECT_EQ(ds[0]->location.nodeName, "picked");
  EXPECT_EQ(ds[0]->reason, "host_sync");
}

TEST(InplaceCertainty, BoolToBoolCastsAreExporterPlumbing) {
  IrBuilder b;
  Value *mask = b.input("mask", tensorOf(DType::Bool, {8}));
  Value *x = b.input("x", f32({8}));
  Node *bb = b.node("aten::_to_copy", {mask}, {"mask_copy"}, {tensorOf(DType::Bool, {8})});
  Node *ff = b.node("aten::_to_copy", {x}, {"x_copy"}, {f32({8})});
  for (Node *n : {bb, ff}) {
    n->inputs[0]->device = Device{Device::Kind::CPU, -1};
    n->outputs[0]->device = Device{Device::Kind::CPU, -1};
  }
  b.output(bb->outputs[0]);
  b.output(ff->outputs[0]);
  FileReport r = lintIr(*b.take());
  auto ds = withCode(r, "GL102");
  ASSERT_EQ(ds.size(), 1u) << dump(r);
  EXPECT_EQ(ds[0]->location.nodeName, "x_copy");
}

TEST(InplaceCertainty, EveryTorchOpIsKnownCustomOpsAreNot) {
  const OpRegistry &reg = OpRegistry::instance();
  struct Case { const char *domain, *name; OpKind kind; bool view; };
  const Case cases[] = {
      {"aten", "median", OpKind::Reduction, false},
      {"aten", "_fft_r2c", OpKind::Contraction, false},
      {"aten", "view_as_real", OpKind::ShapeOnly, true},
      {"aten", "_scaled_dot_product_flash_attention_for_cpu", OpKind::Contraction, false},
      {"aten", "_assert_async", OpKind::ShapeOnly, false},
      {"aten", "relu", OpKind::Pointwise, false},  // the reviewed table wins
      {"aten", "add_", OpKind::Broadcast, false},  // in-place: its functional op's entry
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    const OpInfo *op = reg.lookup(c.domain, c.name, 1);
    EXPECT_TRUE(op->known);
    EXPECT_EQ(op->kind, c.kind) << opKindName(op->kind);
    EXPECT_EQ(op->viewOfInput0, c.view);
  }
  EXPECT_FALSE(reg.lookup("mylib", "fused_gelu", 1)->known);
  EXPECT_FALSE(reg.lookup("aten", "not_an_op_at_all", 1)->known);
  EXPECT_TRUE(reg.lookup("aten", "nonzero", 1)->hostSync);

  IrBuilder b;
  Value *x = b.input("x", f32({8}));
  Node *med = b.node("aten::median", {x}, {"m"}, {f32({1})});
  Node *custom = b.node("mylib::fused_gelu", {x}, {"g"}, {f32({8})});
  b.output(med->outputs[0]);
  b.output(custom->outputs[0]);
  FileReport r = lintIr(*b.take());
  auto ds = withCode(r, "GL002");
  ASSERT_EQ(ds.size(), 1u) << dump(r);
  EXPECT_EQ(ds[0]->location.nodeName, "g");
}

// ---- the FX importer's saved_at ----------------------------------------------

const char *kSaved = R"({"format":"graphlint-fx","version":2,"params":[],
  "inputs":[{"name":"x","shape":[2],"dtype":"float32","device":"cpu"}],
  "nodes":[
    {"name":"s","op":"aten::sigmoid","inputs":["x"],"outputs":[{"name":"s","shape":[2],"dtype":"float32"}],
     "saved":[true],"saved_at":[SPOINT]},
    {"name":"t","op":"aten::neg","inputs":["x"],"outputs":[{"name":"t","shape":[2],"dtype":"float32"}],
     "saved":[true],"saved_at":[TPOINT]}],
  "outputs":["s","t"]})";

std::string savedWith(const std::string &s, const std::string &t) {
  std::string json = kSaved;
  json.replace(json.find("SPOINT"), 6, s);
  json.replace(json.find("TPOINT"), 6, t);
  return json;
}

std::string importError(const std::string &json) {
  auto m = importFxBytes(json, "bad.fx.json", {});
  return m ? std::string() : llvm::toString(m.takeError());
}

TEST(InplaceCertainty, FxImporterResolvesSavePointsAndRejectsEarlierOnes) {
  auto m = importFxBytes(savedWith("\"t\"", "\"t\""), "saved.fx.json", {});
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  auto nodes = (*m)->graph->nodes();
  ASSERT_EQ(nodes[0]->outputSavedAfter.size(), 1u);
  EXPECT_EQ(nodes[0]->outputSavedAfter[0], nodes[1].get()) << "saved when a later node ran";
  EXPECT_EQ(nodes[1]->outputSavedAfter[0], nodes[1].get()) << "saved as its producer's output";
  auto null = importFxBytes(savedWith("null", "\"t\""), "saved.fx.json", {});
  ASSERT_TRUE(bool(null)) << llvm::toString(null.takeError());
  EXPECT_EQ((*null)->graph->nodes()[0]->outputSavedAfter[0], nullptr);
  EXPECT_EQ(importError(savedWith("\"s\"", "\"s\"")), "nodes[1].saved_at[0]: 's' is not this node or a later one");
  EXPECT_TRUE(has(importError(savedWith("\"zz\"", "\"t\"")), "nodes[0].saved_at[0]: 'zz' is not this node or a later one"));
  EXPECT_TRUE(has(importError(savedWith("3", "\"t\"")), "nodes[0].saved_at[0]: expected null or a node name"));
  EXPECT_TRUE(has(importError(savedWith("\"t\", \"t\"", "\"t\"")), "'aliases', 'saved', 'saved_at', 'grad_of' or 'dropout' has more entries"));
}

}  // namespace
