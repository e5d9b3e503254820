// The FX frontend: graphlint-export's JSON imported into the IR, and the
// rules firing at the user's source lines. The committed fixtures
// (tests/fixtures/fx/*.fx.json, exported from the *.py beside them) need no
// Python; FxExport.* re-export the same models at test time when
// /usr/bin/python3 has torch, and skip otherwise. Expected findings are
// written next to the code that triggers them: `# expect: GL131`.
#include "TestSupport.h"

#include "graphlint/import/Importer.h"
#include "graphlint/ir/OpRegistry.h"
#include "graphlint/engine/Driver.h"
#include "graphlint/analyses/FusionPlan.h"

#include <gtest/gtest.h>

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Program.h>

#include <fstream>
#include <set>
#include <sstream>
#include <utility>

namespace graphlint {
namespace {

using test::readFile;
using test::sourcePath;
using test::tempDir;
using test::writeFile;

using test::Finding;

const std::set<std::string> kFxRules = {"GL101", "GL102", "GL111", "GL112", "GL131", "GL132"};

std::set<Finding> expectedFindings(const std::string &pyPath) { return test::markerFindings(pyPath); }
std::set<Finding> actualFindings(const FileReport &r, const std::string &file) {
  return test::findingsByLine(r, file, kFxRules);
}
std::string describe(const std::set<Finding> &fs) { return test::describeFindings(fs); }

void expectFindingsAtMarkers(const std::string &fxJson, const std::string &py, const std::string &shownAs) {
  FileReport r = lintFile(fxJson, {});
  ASSERT_FALSE(r.fatal) << r.fatalMessage;
  std::set<Finding> want = expectedFindings(py), got = actualFindings(r, shownAs);
  ASSERT_FALSE(want.empty());
  EXPECT_EQ(got, want) << "expected: " << describe(want) << "\nactual:   " << describe(got);
}

std::unique_ptr<Model> importFixture(const std::string &name) {
  auto m = importModelFile(sourcePath("tests/fixtures/fx/" + name), {});
  if (!m) {
    ADD_FAILURE() << llvm::toString(m.takeError());
    return nullptr;
  }
  return std::move(*m);
}

const Node *findNode(const Model &m, llvm::StringRef op) {
  for (const auto &n : m.graph->nodes())
    if (n->opType == op)
      return n.get();
  return nullptr;
}

// ---------------------------------------------------------------------------
// Committed fixtures: no Python needed
// ---------------------------------------------------------------------------

TEST(FxFixture, ForwardHazardsFireAtTheUsersLines) {
  expectFindingsAtMarkers(sourcePath("tests/fixtures/fx/hazards.fx.json"), sourcePath("tests/fixtures/fx/hazards.py"),
                          "hazards.py");
}

TEST(FxFixture, InplaceOnSavedTensorFiresInTrainingGraphs) {
  expectFindingsAtMarkers(sourcePath("tests/fixtures/fx/saved.fx.json"), sourcePath("tests/fixtures/fx/saved.py"),
                          "saved.py");
}

TEST(FxFixture, GccFormatStartsWithTheUsersFileAndLine) {
  test::CliResult r = test::runCli({"--format", "gcc", sourcePath("tests/fixtures/fx/saved.fx.json")});
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;  // GL132 is an error
  EXPECT_NE(r.out.find("saved.py:20:9: error: in-place aten::mul_"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("saved.py:22:9: error: in-place aten::add_"), std::string::npos) << r.out;
}

TEST(FxFixture, InspectShowsTheAtenGraph) {
  test::CliResult r = test::runCli({"inspect", "--print-ir", sourcePath("tests/fixtures/fx/saved.fx.json")});
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("producer graphlint-export"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("= aten::mul_(%sigmoid) {other=2}  # mul_ @ saved.py:20"), std::string::npos) << r.out;
}

TEST(FxFixture, ImportsTypesDevicesParamsAndEffects) {
  auto m = importFixture("hazards.fx.json");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->format, ModelFormat::Fx);
  EXPECT_EQ(m->producerName, "graphlint-export");
  const Graph &g = *m->graph;
  ASSERT_EQ(g.params().size(), 4u);
  const Value *w = g.findLocal("fc.weight");
  ASSERT_TRUE(w && w->kind == Value::Kind::Param);
  EXPECT_EQ(w->type.str(), "f32[16,16]");
  EXPECT_EQ(w->device.str(), "cuda:0");
  EXPECT_TRUE(w->requiresGrad);
  EXPECT_EQ(w->param->tensor.byteSize, 16u * 16 * 4);
  FileStats st = statsOf(*m);
  EXPECT_EQ(st.params, 4u);
  EXPECT_EQ(st.paramBytes, (16u * 16 + 16 + 16 * 8 + 8) * 4);

  const Node *addmm = findNode(*m, "addmm");
  ASSERT_TRUE(addmm);
  EXPECT_EQ(addmm->domain, "aten");
  EXPECT_EQ(addmm->modulePath, "fc");
  EXPECT_EQ(addmm->loc.file, "hazards.py");
  EXPECT_EQ(addmm->loc.line, 18u);
  EXPECT_EQ(addmm->loc.function, "forward");
  EXPECT_TRUE(addmm->op->known);
  EXPECT_EQ(addmm->op->kind, OpKind::Contraction);

  const Node *relu = findNode(*m, "relu_");
  ASSERT_TRUE(relu);
  EXPECT_EQ(relu->op->kind, OpKind::Pointwise) << "in-place variants classify as their functional op";
  EXPECT_EQ(llvm::ArrayRef<unsigned>(relu->mutatedInputs), llvm::ArrayRef<unsigned>({0}));
  ASSERT_EQ(relu->outputAliasesInput.size(), 1u);
  EXPECT_EQ(relu->outputAliasesInput[0], 0);
  EXPECT_EQ(relu->loc.col, 9u);

  const Node *copy = findNode(*m, "_to_copy");
  ASSERT_TRUE(copy);
  EXPECT_EQ(copy->outputs[0]->device.str(), "cpu");
  EXPECT_EQ(copy->inputs[0]->device.str(), "cuda:0");

  const Node *item = findNode(*m, "_local_scalar_dense");
  ASSERT_TRUE(item);
  EXPECT_EQ(item->outputs[0]->type.kind, TypeKind::Opaque) << "a Python scalar, not a tensor";
}

TEST(FxFixture, SavedForBackwardMarksAndBackwardStatus) {
  auto m = importFixture("saved.fx.json");
  ASSERT_TRUE(m);
  const Node *sig = findNode(*m, "sigmoid");
  ASSERT_TRUE(sig);
  ASSERT_EQ(sig->outputSavedForBackward.size(), 1u);
  EXPECT_TRUE(sig->outputSavedForBackward[0]) << "sigmoid's backward reads its output";
  bool backwardFailed = false;
  for (const auto &[k, v] : m->metadata)
    backwardFailed |= k == "backward_error" && llvm::StringRef(v).contains("inplace operation");
  EXPECT_TRUE(backwardFailed) << "the exporter records autograd's own error";
}

TEST(FxFixture, DimBindingsReplaceSymbols) {
  std::string json = readFile(sourcePath("tests/fixtures/fx/saved.fx.json"));
  // Name the batch dim of the input, as `graphlint-export --dim batch=4` does.
  const std::string needle = "\"name\":\"input0\",\"shape\":[4,";
  size_t at = json.find(needle);
  ASSERT_NE(at, std::string::npos);
  json.replace(at, needle.size(), "\"name\":\"input0\",\"shape\":[\"batch\",");
  auto sym = importFxBytes(json, "x.fx.json", {});
  ASSERT_TRUE(bool(sym)) << llvm::toString(sym.takeError());
  EXPECT_EQ((*sym)->graph->inputs[0]->type.str(), "f32[batch,16]");
  ImportOptions opts;
  opts.dims["batch"] = 8;
  auto bound = importFxBytes(json, "x.fx.json", opts);
  ASSERT_TRUE(bool(bound)) << llvm::toString(bound.takeError());
  EXPECT_EQ((*bound)->graph->inputs[0]->type.str(), "f32[8,16]");
}

// An in-place op on a fresh intermediate read only by it (torchvision's
// ReLU(inplace=True) after a BatchNorm) fuses like its functional op; the
// same write fuses no more once another op reads the old value.
TEST(FxFusion, UnobservableInplaceWritesFuse) {
  auto graph = [](bool extraReader) {
    std::string t = R"("shape":[8],"dtype":"float32","device":"cuda:0")";
    std::string extra = extraReader ? R"(,{"name":"e","op":"aten::neg","inputs":["m"],"outputs":[{"name":"e",)" + t + "}]}"
                                    : std::string();
    return R"({"format":"graphlint-fx","version":1,"params":[],"inputs":[{"name":"x",)" + t + R"(}],"nodes":[
      {"name":"m","op":"aten::mul","inputs":["x","x"],"outputs":[{"name":"m",)" + t + R"(}]},
      {"name":"r","op":"aten::relu_","inputs":["m"],"outputs":[{"name":"r",)" + t + R"(}],"mutates":[0],"aliases":[0]},
      {"name":"a","op":"aten::add","inputs":["r","x"],"outputs":[{"name":"a",)" + t + R"(}]})" + extra +
           R"(],"outputs":["a"]})";
  };
  for (bool extraReader : {false, true}) {
    auto m = importFxBytes(graph(extraReader), "fuse.fx.json", {});
    ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
    const Graph &g = *(*m)->graph;
    FusionPlan plan(**m, FusionBackend::Inductor);
    bool fused = plan.groupOf(*g.nodes()[0]).id == plan.groupOf(*g.nodes()[1]).id;
    EXPECT_EQ(fused, !extraReader) << (extraReader ? "the old value is read: the write stays ordered"
                                                   : "nothing observes the write: relu_ fuses like relu");
    if (extraReader) {
      auto into = plan.boundariesInto(*g.nodes()[1]);
      ASSERT_FALSE(into.empty());
      EXPECT_EQ(into[0]->reason, BreakReason::InplaceAlias);
    }
  }
}

// ---------------------------------------------------------------------------
// Malformed files: a one-line error naming the problem, never a crash
// ---------------------------------------------------------------------------

std::string importError(const std::string &json) {
  auto m = importFxBytes(json, "bad.fx.json", {});
  if (m)
    return "";
  return llvm::toString(m.takeError());
}

const char *kMinimal = R"({"format":"graphlint-fx","version":1,"params":[],
  "inputs":[{"name":"x","shape":[2],"dtype":"float32","device":"cpu"}],
  "nodes":[NODE],"outputs":["y"]})";

std::string withNode(const std::string &node) {
  std::string s = kMinimal;
  s.replace(s.find("NODE"), 4, node);
  return s;
}

TEST(FxImporter, MinimalGraphImports) {
  auto m = importFxBytes(withNode(R"({"name":"y","op":"aten::relu","inputs":["x"],
                                      "outputs":[{"name":"y","shape":[2],"dtype":"float32"}]})"),
                         "ok.fx.json", {});
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  EXPECT_EQ((*m)->graph->nodes().size(), 1u);
  EXPECT_TRUE((*m)->graph->outputs[0]->isGraphOutput());
}

TEST(FxImporter, MalformedFilesNameTheProblem) {
  const std::string relu = R"("op":"aten::relu","inputs":["x"],"outputs":[{"name":"y","shape":[2],"dtype":"float32"}])";
  struct Case {
    std::string json;
    std::string error;
  } cases[] = {
      {"{\"nodes\": []}", "not a graphlint FX graph"},
      {"[1, 2]", "top level is not an object"},
      {R"({"format":"graphlint-fx"})", "version: missing"},
      {R"({"format":"graphlint-fx","version":3})", "FX format version 3 is not supported (this graphlint reads versions 1 to 2): upgrade graphlint"},
      {R"({"format":"graphlint-fx","version":0})", "FX format version 0 is not supported"},
      {R"({"format":"graphlint-fx","version":1,"params":[],"inputs":[],"outputs":[]})", "nodes: missing"},
      {R"({"format":"graphlint-fx","version":1,"params":{},"inputs":[],"nodes":[],"outputs":[]})",
       "params: expected an array"},
      {R"({"format":"graphlint-fx","version":1,"params":[],"inputs":[],"nodes":[], "outputs":[)", "is not valid JSON"},
      {withNode(R"({"inputs":["x"],"outputs":[]})"), "nodes[0].op: missing"},
      {withNode(R"({"op":"relu","inputs":["x"],"outputs":[]})"), "nodes[0].op: 'relu' is not a qualified op name"},
      {withNode(R"({"op":"aten::relu","inputs":["z"],"outputs":[]})"), "nodes[0].inputs[0]: 'z' is not defined"},
      {withNode(R"({"op":"aten::relu","inputs":[3],"outputs":[]})"), "nodes[0].inputs[0]: expected a value name"},
      {withNode(R"({"op":"aten::relu","inputs":["x"],"outputs":[{"name":"y","shape":2,"dtype":"float32"}]})"),
       "nodes[0].outputs[0].shape: expected an array"},
      {withNode(R"({"op":"aten::relu","inputs":["x"],"outputs":[{"name":"y","shape":[-1],"dtype":"float32"}]})"),
       "nodes[0].outputs[0].shape[0]: negative dimension"},
      {withNode(R"({"op":"aten::relu","inputs":["x"],"outputs":[{"name":"y","shape":[2],"dtype":"float99"}]})"),
       "nodes[0].outputs[0].dtype: unknown dtype 'float99'"},
      {withNode(R"({"op":"aten::relu","inputs":["x"],"outputs":[{"name":"x","shape":[2],"dtype":"float32"}]})"),
       "nodes[0].outputs[0].name: 'x' is defined twice"},
      {withNode("{" + relu + R"(,"mutates":[1]})"), "nodes[0].mutates[0]: expected an input index below 1"},
      {withNode("{" + relu + R"(,"aliases":[5]})"), "nodes[0].aliases[0]: expected -1 or an input index"},
      {withNode("{" + relu + R"(,"saved":[1]})"), "nodes[0].saved[0]: expected true or false"},
      {withNode("{" + relu + R"(,"saved":[true,false]})"), "more entries than the node has outputs"},
      {withNode("{" + relu + R"(,"source":{"file":"m.py","line":"7"}})"), "nodes[0].source.line: expected an integer"},
      {withNode("{" + relu + R"(,"source":{"line":7}})"), "nodes[0].source.file: missing"},
      {std::string(100, '[') + std::string(100, ']'), "nested deeper than 64 levels"},
  };
  for (const Case &c : cases) {
    std::string err = importError(c.json);
    EXPECT_NE(err.find(c.error), std::string::npos) << "input: " << c.json << "\nerror: " << err;
    EXPECT_EQ(err.find('\n'), std::string::npos) << "one line: " << err;
  }
  // A missing output reference is caught after the nodes.
  std::string noOut = withNode("{" + relu + "}");
  noOut.replace(noOut.find("[\"y\"]"), 5, "[\"q\"]");
  EXPECT_NE(importError(noOut).find("outputs[0]: 'q' is not defined"), std::string::npos) << importError(noOut);
}

// Every prefix and many single-byte mutations of a real export either import
// (and then lint) or fail with a message: never a crash or a hang.
TEST(FxImporter, TruncatedAndMutatedFixturesNeverCrash) {
  const std::string full = readFile(sourcePath("tests/fixtures/fx/hazards.fx.json"));
  ASSERT_GT(full.size(), 1000u);
  unsigned imported = 0, rejected = 0;
  auto attempt = [&](const std::string &bytes) {
    auto m = importFxBytes(bytes, "fuzz.fx.json", {});
    if (!m) {
      std::string err = llvm::toString(m.takeError());
      EXPECT_FALSE(err.empty());
      EXPECT_EQ(err.find('\n'), std::string::npos) << err;
      ++rejected;
      return;
    }
    ++imported;
    lintModel(**m, {});
  };
  for (size_t cut = 0; cut < full.size(); cut += 37)
    attempt(full.substr(0, cut));
  const char replacements[] = {'"', '{', '}', '[', ']', '0', '-', 'x', ',', ':', 'n'};
  for (size_t pos = 0, k = 0; pos < full.size(); pos += 53, ++k) {
    std::string bytes = full;
    bytes[pos] = replacements[k % sizeof replacements];
    attempt(bytes);
  }
  EXPECT_GT(rejected, 0u);
  EXPECT_GT(imported, 0u) << "some mutations (inside names or numbers) still form a valid graph";
}

TEST(FxImporter, CliExitsTwoWithOneLine) {
  std::string path = tempDir() + "/broken.fx.json";
  writeFile(path, withNode(R"({"op":"aten::relu","inputs":["nope"],"outputs":[]})"));
  test::CliResult r = test::runCli({"--no-color", path});
  EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
  EXPECT_EQ(r.out.rfind(path + ": fatal: nodes[0].inputs[0]: 'nope' is not defined before this node", 0), 0u) << r.out;
}

// ---------------------------------------------------------------------------
// Exporting at test time (needs /usr/bin/python3 with torch)
// ---------------------------------------------------------------------------

const char *kPython = "/usr/bin/python3";

int runShell(const std::string &cmd, std::string *output = nullptr) {
  std::string dir = tempDir();
  std::string log = dir + "/log";
  llvm::Optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), llvm::StringRef(log), llvm::StringRef(log)};
  // No __pycache__ beside the fixtures in the source tree.
  std::string script = "PYTHONDONTWRITEBYTECODE=1; export PYTHONDONTWRITEBYTECODE; " + cmd;
  std::vector<llvm::StringRef> argv{"/bin/sh", "-c", script};
  int rc = llvm::sys::ExecuteAndWait("/bin/sh", argv, llvm::None, redirects, /*SecondsToWait=*/300);
  if (output)
    *output = readFile(log);
  return rc;
}

bool torchAvailable() {
  static const bool ok = llvm::sys::fs::exists(kPython) && runShell(std::string(kPython) + " -c 'import torch'") == 0;
  return ok;
}

#define REQUIRE_TORCH()                                                                                     \
  if (!torchAvailable())                                                                                    \
  GTEST_SKIP() << kPython << " cannot import torch: the export tests need it (the fixture tests cover the rest)"

/// Exports `model` (a file in tests/fixtures/fx) from inside that directory
/// and returns the JSON's path. Source paths are relative to the repository
/// root (the model's git top-level), wherever the exporter runs.
std::string exportFixture(const std::string &model, const std::string &flags) {
  std::string out = tempDir() + "/" + model + ".fx.json";
  std::string log;
  int rc = runShell("cd '" + sourcePath("tests/fixtures/fx") + "' && PYTHONPATH='" + sourcePath("python") + "' " +
                        kPython + " -m graphlint.export " + model + " -o '" + out + "' " + flags,
                    &log);
  EXPECT_EQ(rc, 0) << log;
  return out;
}

TEST(FxExport, ForwardHazardsFireAtTheUsersLines) {
  REQUIRE_TORCH();
  // Source paths are relative to the repository root, not the exporter's directory.
  expectFindingsAtMarkers(exportFixture("hazards.py", "--device cuda"), sourcePath("tests/fixtures/fx/hazards.py"),
                          "tests/fixtures/fx/hazards.py");
}

TEST(FxExport, InplaceOnSavedTensorFiresInTrainingGraphs) {
  REQUIRE_TORCH();
  expectFindingsAtMarkers(exportFixture("saved.py", "--train"), sourcePath("tests/fixtures/fx/saved.py"),
                          "tests/fixtures/fx/saved.py");
}

TEST(FxExport, TrainingGraphHasBackwardAndSymbolicDims) {
  REQUIRE_TORCH();
  std::string path = exportFixture("parity.py", "--train --dim batch=5");
  auto m = importModelFile(path, {});
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  unsigned backward = 0, saved = 0;
  const Node *convBackward = nullptr;
  for (const auto &n : (*m)->graph->nodes()) {
    for (const auto &[k, v] : n->metadata)
      backward += k == "phase" && v == "backward";
    for (bool s : n->outputSavedForBackward)
      saved += s;
    if (n->opType == "convolution_backward")
      convBackward = n.get();
  }
  EXPECT_GT(backward, 5u);
  ASSERT_TRUE(convBackward);
  EXPECT_EQ(convBackward->loc.file, "tests/fixtures/fx/parity.py")
      << "backward ops point at the forward line they differentiate";
  EXPECT_EQ(convBackward->loc.line, 14u);
  EXPECT_GT(saved, 2u);
  // The batch dim is the symbol `batch` (hint 5, bound to it without -D).
  EXPECT_EQ((*m)->graph->inputs[0]->type.str(), "f32[5,3,16,16]");
  ASSERT_FALSE((*m)->symbols.empty());
  EXPECT_EQ((*m)->symbols[0].name, "batch");
  EXPECT_EQ((*m)->symbols[0].origin, SymbolInfo::Origin::Hint);
  FileReport r = lintFile(path, {});
  EXPECT_FALSE(r.fatal) << r.fatalMessage;
  EXPECT_TRUE(test::withCode(r, "GL001").empty()) << "the joint graph is well formed";
}

// The same model as ONNX and as FX: same parameter count and bytes, and the
// same host-sync finding (the fusion breaker both formats can express).
TEST(FxExport, MatchesTheOnnxExportOfTheSameModel) {
  REQUIRE_TORCH();
  std::string fx = exportFixture("parity.py", "");
  std::string onnx = tempDir() + "/parity.onnx";
  std::string log;
  int rc = runShell(std::string(kPython) + " -c \"import sys, torch; sys.path.insert(0, '" +
                        sourcePath("tests/fixtures/fx") + "'); import parity; m = parity.model().eval(); "
                        "torch.onnx.export(m, parity.example_inputs(), '" + onnx + "', opset_version=17, "
                        "do_constant_folding=False)\"",
                    &log);
  if (rc != 0)
    GTEST_SKIP() << "torch.onnx.export unavailable: " << log;
  FileReport a = lintFile(fx, {}), b = lintFile(onnx, {});
  ASSERT_FALSE(a.fatal || b.fatal) << a.fatalMessage << b.fatalMessage;
  EXPECT_EQ(a.stats.params, b.stats.params);
  EXPECT_EQ(a.stats.paramBytes, b.stats.paramBytes);
  EXPECT_EQ(test::withCode(a, "GL112").size(), 1u);
  EXPECT_EQ(test::withCode(b, "GL112").size(), 1u);
}

}  // namespace
}  // namespace graphlint
