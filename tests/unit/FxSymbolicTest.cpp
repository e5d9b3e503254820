// FX format version 2 (docs/fx-format.md): size expressions in shapes and
// strides, the `symbols` table with hints, -D rescaling flattened dims, the
// warnings for a -D that binds nothing, the JSON `dims` record, and unbacked
// sizes (u0 from nonzero) reaching GL112/GL123 at the user's lines. The
// fixture tests/fixtures/fx/symbolic_v2.fx.json is hand-written against the
// lines of symbolic_v2.py.
#include "TestSupport.h"

#include "graphlint/import/Importer.h"
#include "graphlint/engine/Driver.h"
#include "graphlint/report/Reporters.h"

#include <gtest/gtest.h>

#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

namespace graphlint {
namespace {

using test::sourcePath;

const std::string kFixture = "tests/fixtures/fx/symbolic_v2.fx.json";

std::unique_ptr<Model> importWith(std::map<std::string, int64_t> dims) {
  ImportOptions io;
  io.dims = std::move(dims);
  auto m = importModelFile(sourcePath(kFixture), io);
  if (!m) {
    ADD_FAILURE() << llvm::toString(m.takeError());
    return nullptr;
  }
  return std::move(*m);
}

const Value *value(const Model &m, llvm::StringRef name) { return m.graph->findLocal(name); }

TEST(FxSymbolic, HintsSizeTheGraphWithoutDimFlags) {
  auto m = importWith({});
  ASSERT_TRUE(m);
  // batch*seq evaluated at the traced sizes 2 x 16.
  EXPECT_EQ(value(*m, "addmm")->type.str(), "f32[32,128]");
  EXPECT_EQ(value(*m, "x")->type.str(), "f32[2,16,64]");
  // The unbacked size stays a symbol, shown by name.
  EXPECT_EQ(value(*m, "mm")->type.str(), "f32[u0,128]");
  ASSERT_EQ(m->symbols.size(), 3u);
  EXPECT_EQ(m->symbols[0].name, "batch");
  EXPECT_EQ(m->symbols[0].origin, SymbolInfo::Origin::Hint);
  EXPECT_EQ(m->symbols[2].name, "u0");
  EXPECT_EQ(m->symbols[2].kind, SymbolInfo::Kind::Unbacked);
  EXPECT_EQ(m->symbols[2].origin, SymbolInfo::Origin::Unbound);
  EXPECT_EQ(m->symbols[2].max, 32768);
  EXPECT_TRUE(m->setupWarnings.empty());
}

TEST(FxSymbolic, DimFlagsRescaleFlattenedDims) {
  auto m = importWith({{"batch", 8}, {"seq", 2048}});
  ASSERT_TRUE(m);
  EXPECT_EQ(value(*m, "addmm")->type.str(), "f32[16384,128]");
  EXPECT_EQ(value(*m, "mask")->type.str(), "bool[16384]");
  EXPECT_EQ(m->symbols[0].origin, SymbolInfo::Origin::Cli);
  EXPECT_EQ(m->symbols[0].value, 8);
  // A size list argument is bound like a dim.
  const Attribute *size = value(*m, "view")->producer->attr("size");
  ASSERT_TRUE(size);
  EXPECT_EQ(size->ints, (std::vector<int64_t>{16384, 64}));
  // Parameters never depend on symbols.
  EXPECT_EQ(m->graph->params()[0]->tensor.byteSize, 128u * 64 * 4);
}

TEST(FxSymbolic, UnbackedSizeCanBeBoundByName) {
  auto m = importWith({{"u0", 100}});
  ASSERT_TRUE(m);
  EXPECT_EQ(value(*m, "mm")->type.str(), "f32[100,128]");
  EXPECT_EQ(m->symbols[2].origin, SymbolInfo::Origin::Cli);
}

TEST(FxSymbolic, DimThatBindsNothingWarnsWithSymbolsAndInputs) {
  auto m = importWith({{"sequence", 4}});
  ASSERT_TRUE(m);
  ASSERT_EQ(m->setupWarnings.size(), 1u);
  EXPECT_EQ(m->setupWarnings[0], "-D sequence=4 binds nothing: the file's size symbols are batch (x.shape[0]), seq (x.shape[1]), u0 "
                                 "(nonzero) (inputs: "
                                 "x f32[batch,seq,64], mask bool[batch*seq])");
}

TEST(FxSymbolic, UnbackedSizesReachHostSyncAndDataDependentShapeAtUserLines) {
  FileReport r = lintFile(sourcePath(kFixture), {});
  ASSERT_FALSE(r.fatal) << r.fatalMessage;
  std::set<test::Finding> want = test::markerFindings(sourcePath("tests/fixtures/fx/symbolic_v2.py"));
  std::set<test::Finding> got = test::findingsByLine(r, "symbolic_v2.py", {"GL112", "GL123"});
  EXPECT_EQ(got, want) << "expected: " << test::describeFindings(want) << "\nactual:   " << test::describeFindings(got);
  // new_zeros has no data-dependent input: only its u0-sized output says so.
  bool named = false;
  for (const Diagnostic *d : test::withCode(r, "GL123"))
    named |= d->location.nodeName == "new_zeros" && d->message.find("f32[u0,8], sized by the unbacked (data-dependent) size u0") != std::string::npos &&
             d->message.find("aten::nonzero") == std::string::npos && d->message.find("nonzero 'nonzero'") != std::string::npos;
  EXPECT_TRUE(named);
}

TEST(FxSymbolic, JsonReportsTheBindingsUsed) {
  LintOptions opts;
  opts.setup.dims = {{"batch", 8}, {"nothing", 3}};
  opts.memorySummary = true;
  FileReport r = lintFile(sourcePath(kFixture), opts);
  ASSERT_FALSE(r.fatal) << r.fatalMessage;
  std::string out;
  llvm::raw_string_ostream os(out);
  renderJson({r}, os);
  os.flush();
  EXPECT_NE(out.find(R"("from": "cli")"), std::string::npos) << out.substr(0, 2000);
  EXPECT_NE(out.find(R"("from": "hint")"), std::string::npos);
  EXPECT_NE(out.find(R"("kind": "unbacked")"), std::string::npos);
  EXPECT_NE(out.find("-D nothing=3 binds nothing"), std::string::npos);
  // seq came from the hint, u0 from nothing: both are assumptions the user did not make.
  EXPECT_EQ(r.memory.assumedDims, (std::vector<std::string>{"seq=16", "u0=1"}));
}

TEST(FxSymbolic, ExporterDiagnosticsBecomeWarnings) {
  std::string doc = test::readFile(sourcePath(kFixture));
  doc.replace(doc.find("\"symbols\""), 0,
              R"("diagnostics": [{"kind": "no-gradient", "message": "parameter 'proj.bias' gets no gradient"},
                                  {"kind": "constant-baked", "message": "torch.tensor([...]) became a constant",
                                   "source": {"file": "symbolic_v2.py", "line": 16}}], )");
  auto m = importFxBytes(doc, "d.fx.json", {});
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  EXPECT_EQ((*m)->setupWarnings,
            (std::vector<std::string>{"exporter (no-gradient): parameter 'proj.bias' gets no gradient",
                                      "exporter (constant-baked) at symbolic_v2.py:16: torch.tensor([...]) became a "
                                      "constant"}));
}

TEST(FxSymbolic, MalformedExpressionsNameTheField) {
  std::string doc = test::readFile(sourcePath(kFixture));
  auto importError = [](const std::string &bytes) {
    auto m = importFxBytes(bytes, "bad.fx.json", {});
    return m ? std::string("imported") : llvm::toString(m.takeError());
  };
  std::string badShape = doc;
  badShape.replace(badShape.find("\"batch*seq\""), 11, "\"batch*/seq\"");
  EXPECT_EQ(importError(badShape), "inputs[1].shape[0]: invalid size expression 'batch*/seq': unexpected '/'");
  std::string badStride = doc;
  badStride.replace(badStride.find("\"64*seq\""), 8, "\"64*(seq\"");
  EXPECT_EQ(importError(badStride), "inputs[0].strides[0]: invalid size expression '64*(seq': missing ')'");
  std::string badKind = doc;
  badKind.replace(badKind.find("\"unbacked\""), 10, "\"weird\"");
  EXPECT_EQ(importError(badKind), "symbols.u0.kind: expected \"input\" or \"unbacked\", got 'weird'");
  // Version 1 took any string as a symbol name: still does.
  std::string v1 = doc;
  v1.replace(v1.find("\"version\": 2"), 12, "\"version\": 1");
  v1.replace(v1.find("\"batch*seq\""), 11, "\"batch*/seq\"");
  auto m = importFxBytes(v1, "v1.fx.json", {});
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  EXPECT_EQ((*m)->graph->findLocal("mask")->type.str(), "bool[batch*/seq]");
}


// Rescaling equals capturing (issue 42 item 5). full_range_slice.py's
// `h[:, 0:, :]` is a full-range slice eager skips: its indexing returns h
// itself, so no SliceBackward runs. The symbolic trace records slices and
// zero-filled slice_backward copies; the importer records them as the
// aliases eager runs, so the capture at batch 2 x seq 24 bound with
// -D batch=4 -D seq=32 predicts what the static capture at [4, 32] does.
const std::string kSymbolicSlices = "tests/fixtures/fx/full_range_slice.sym.train.fx.json";
const std::string kStaticSlices = "tests/fixtures/fx/full_range_slice.static.train.fx.json";

std::unique_ptr<Model> importSlices(std::map<std::string, int64_t> dims) {
  ImportOptions io;
  io.dims = std::move(dims);
  auto m = importModelFile(sourcePath(kSymbolicSlices), io);
  if (!m) {
    ADD_FAILURE() << llvm::toString(m.takeError());
    return nullptr;
  }
  return std::move(*m);
}

std::string opOf(const Model &m, llvm::StringRef value) {
  const Value *v = m.graph->findLocal(value);
  return v && v->producer ? v->producer->domain + "::" + v->producer->opType : "(none)";
}

TEST(FxSymbolic, FullRangeSlicesAreTheAliasesEagerRuns) {
  auto m = importSlices({{"batch", 4}, {"seq", 32}});
  ASSERT_TRUE(m);
  // h[:, 0:, :] (slice_1, slice_2) and the `:` of g[:, :16] (slice_3): views
  // without a kernel, whose gradients are the incoming ones.
  for (llvm::StringRef v : {"slice_1", "slice_2", "slice_3", "slice_backward_1", "slice_backward_2",
                            "slice_backward_3"}) {
    EXPECT_EQ(opOf(*m, v), "aten::alias") << v.str();
    const Node *n = m->graph->findLocal(v)->producer;
    EXPECT_EQ(n->inputs.size(), 1u);
    EXPECT_EQ(n->outputAliasesInput, (llvm::SmallVector<int, 1>{0}));
    EXPECT_TRUE(n->attributes.empty());
    ASSERT_TRUE(n->metadataValue("full_range_slice"));
    EXPECT_EQ(*n->metadataValue("full_range_slice"), v.startswith("slice_backward") ? "aten::slice_backward"
                                                                                    : "aten::slice");
  }
  // g[:, :16] of a 32-long sequence keeps half: a view, and a zero-filled
  // input-sized gradient in backward, as eager has.
  EXPECT_EQ(opOf(*m, "slice_4"), "aten::slice");
  EXPECT_EQ(opOf(*m, "slice_backward"), "aten::slice_backward");
  // The gradient marks stay: slice_backward_3's output is up's output's gradient.
  const Node *grad = m->graph->findLocal("slice_backward_3")->producer;
  ASSERT_EQ(grad->outputGradientOf.size(), 1u);
  EXPECT_EQ(grad->outputGradientOf[0], m->graph->findLocal("view_1"));
}

TEST(FxSymbolic, SliceCoveringTheBoundDimIsAnAliasAtThatSize) {
  // At seq 16, g[:, :16] keeps every position: eager aliases it too.
  auto m = importSlices({{"seq", 16}});
  ASSERT_TRUE(m);
  EXPECT_EQ(opOf(*m, "slice_4"), "aten::alias");
  EXPECT_EQ(opOf(*m, "slice_backward"), "aten::alias");
}

TEST(FxSymbolic, UnboundFullRangeSliceIsAnAliasForEverySize) {
  // Without hints the sizes stay symbols: a slice whose output is its
  // input's own symbol keeps every element whatever the binding; [batch,16]
  // of [batch,seq] keeps all only where seq <= 16, so it stays a slice.
  auto doc = llvm::json::parse(test::readFile(sourcePath(kSymbolicSlices)));
  ASSERT_TRUE(bool(doc)) << llvm::toString(doc.takeError());
  doc->getAsObject()->erase("symbols");
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  os << *doc;
  os.flush();
  auto m = importFxBytes(bytes, "unbound.fx.json", {});
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  EXPECT_EQ((*m)->graph->findLocal("slice_2")->type.str(), "f32[batch,seq,512]");
  EXPECT_EQ((*m)->graph->findLocal("slice_4")->type.str(), "f32[batch,16,128]");
  EXPECT_EQ(opOf(**m, "slice_2"), "aten::alias");
  EXPECT_EQ(opOf(**m, "slice_backward_2"), "aten::alias");
  EXPECT_EQ(opOf(**m, "slice_4"), "aten::slice");
  EXPECT_EQ(opOf(**m, "slice_backward"), "aten::slice_backward");
}

TEST(FxSymbolic, Torch113KeepsTheSliceBackwardItsEagerRuns) {
  // torch 1.13's eager records SliceBackward0 for h[:, 0:, :] and allocates
  // its zero-filled gradient: a 1.13 capture keeps the slices as traced.
  std::string doc = test::readFile(sourcePath(kSymbolicSlices));
  size_t at = doc.find("\"torch\":\"2.");
  ASSERT_NE(at, std::string::npos);
  doc.replace(at, 11, "\"torch\":\"1.");
  auto m = importFxBytes(doc, "t113.fx.json", {});
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  EXPECT_EQ(opOf(**m, "slice_1"), "aten::slice");
  EXPECT_EQ(opOf(**m, "slice_backward_3"), "aten::slice_backward");
}

TEST(FxSymbolic, RescaledCapturePredictsWhatTheStaticCaptureDoes) {
  for (Kernels kernels : {Kernels::Cuda, Kernels::Cpu}) {
    LintOptions opts;
    opts.setup.train = true;
    opts.setup.kernels = kernels;
    FileReport fixed = lintFile(sourcePath(kStaticSlices), opts);
    opts.setup.dims = {{"batch", 4}, {"seq", 32}};
    FileReport rescaled = lintFile(sourcePath(kSymbolicSlices), opts);
    ASSERT_FALSE(fixed.fatal || rescaled.fatal) << fixed.fatalMessage << rescaled.fatalMessage;
    // Before: the symbolic capture's full-range slice_backward copies put
    // one more f32[4,32,512] (256 KiB) at the peak: 1,155,208 B against
    // 1,056,392 B (eager on torch 2.13's CPU measured 1,056,408 B).
    EXPECT_EQ(rescaled.memory.peakAllocatedBytes, fixed.memory.peakAllocatedBytes);
    EXPECT_EQ(rescaled.memory.activationsBytes, fixed.memory.activationsBytes);
    EXPECT_EQ(rescaled.cost.bytesBackward, fixed.cost.bytesBackward);
    EXPECT_EQ(rescaled.cost.kernelsForward, fixed.cost.kernelsForward);
    EXPECT_EQ(rescaled.cost.kernelsBackward, fixed.cost.kernelsBackward);
    EXPECT_DOUBLE_EQ(rescaled.cost.secondsForward + rescaled.cost.secondsBackward,
                     fixed.cost.secondsForward + fixed.cost.secondsBackward);
  }
}

// A data-dependent size the exporter sizes by an assumption (MoE
// tokens_per_expert, docs/fx-format.md "Mixture of experts"): its `default`
// binds it, follows -D of the symbols it names, and yields to -D of its own.
TEST(FxSymbolic, DefaultedUnbackedSizeFollowsItsExpressionUnlessBound) {
  std::string doc = test::readFile(sourcePath(kFixture));
  doc.replace(doc.find("\"source\": \"nonzero\""), 20,
              "\"source\": \"nonzero\", \"default\": \"CeilDiv(batch*seq*2, 4)\", "
              "\"assumption\": \"an even share of the routed rows\"");
  auto import = [&](std::map<std::string, int64_t> dims) {
    ImportOptions io;
    io.dims = std::move(dims);
    auto m = importFxBytes(doc, "moe.fx.json", io);
    EXPECT_TRUE(bool(m)) << llvm::toString(m.takeError());
    return m ? std::move(*m) : nullptr;
  };
  auto hinted = import({});
  ASSERT_TRUE(hinted);
  EXPECT_EQ(value(*hinted, "mm")->type.str(), "f32[16,128]");  // ceil(2 x 16 x 2 / 4)
  EXPECT_EQ(hinted->symbols[2].origin, SymbolInfo::Origin::Default);
  EXPECT_EQ(hinted->symbols[2].assumption, "an even share of the routed rows");
  auto rescaled = import({{"batch", 8}});
  ASSERT_TRUE(rescaled);
  EXPECT_EQ(value(*rescaled, "mm")->type.str(), "f32[64,128]");
  auto bound = import({{"batch", 8}, {"u0", 100}});
  ASSERT_TRUE(bound);
  EXPECT_EQ(value(*bound, "mm")->type.str(), "f32[100,128]");
  EXPECT_EQ(bound->symbols[2].origin, SymbolInfo::Origin::Cli);
  // A default naming itself cannot be evaluated: the symbol stays unbound.
  std::string self = doc;
  self.replace(self.find("CeilDiv(batch*seq*2, 4)"), 23, "u0 + 1");
  auto m = importFxBytes(self, "self.fx.json", {});
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  EXPECT_EQ((*m)->graph->findLocal("mm")->type.str(), "f32[u0,128]");
  std::string bad = doc;
  bad.replace(bad.find("CeilDiv(batch*seq*2, 4)"), 23, "batch*/seq");
  auto e = importFxBytes(bad, "bad.fx.json", {});
  ASSERT_FALSE(bool(e));
  EXPECT_EQ(llvm::toString(e.takeError()), "symbols.u0.default: invalid size expression 'batch*/seq': unexpected '/'");
}

}  // namespace
}  // namespace graphlint
