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
