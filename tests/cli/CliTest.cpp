// The command line as users and CI scripts drive it: help and version, the
// rule catalogue and doc pages, exit codes under --fail-on / --exit-zero,
// deterministic output with parallel jobs, the `inspect --format json`
// contract and the gcc problem-matcher format.
#include "TestSupport.h"

#include <gtest/gtest.h>

#include <llvm/Support/JSON.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>

using namespace graphlint;
using namespace graphlint::test;

namespace {

std::vector<std::string> lines(const std::string &s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);)
    out.push_back(l);
  return out;
}

std::string model(const std::string &name) { return sourcePath("models/" + name); }

std::string writeText(const std::string &name, const std::string &text) {
  std::string path = tempDir() + "/" + name;
  writeFile(path, onnxFromText(text));
  return path;
}

std::string cleanModel() {
  return writeText("clean.onnx", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N, 16] x, float[16, 8] w) => (float[N, 8] y) {
      h = MatMul(x, w)
      y = Relu(h)
    })");
}

std::string invalidModel() {
  return writeText("invalid.onnx", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x) => (float[4] y) {
      y = Add(x, ghost)
    })");
}

// ---- help, version, rules -------------------------------------------------

TEST(Cli, Help) {
  for (const char *flag : {"--help", "-h"}) {
    CliResult r = runCli({flag});
    EXPECT_EQ(r.exitCode, 0) << flag;
    EXPECT_EQ(r.out.rfind("graphlint - ", 0), 0u) << r.out;
    for (const char *section : {"USAGE", "LINT OPTIONS", "EXIT CODES", "--fail-on", "--exit-zero", "--dim", "--jobs",
                                "--format text|gcc|json", "graphlint rule CODE|NAME"})
      EXPECT_NE(r.out.find(section), std::string::npos) << section;
    EXPECT_TRUE(r.err.empty()) << r.err;
  }
  // --help wins wherever it appears, even after a subcommand.
  EXPECT_EQ(runCli({"inspect", "--help"}).exitCode, 0);
}

TEST(Cli, Version) {
  CliResult r = runCli({"--version"});
  EXPECT_EQ(r.exitCode, 0);
  // The second line is the range of FX format versions read (the Python
  // package checks its exporter against it).
  EXPECT_TRUE(std::regex_match(r.out, std::regex(R"(graphlint \d+\.\d+\.\d+\ngraphlint-fx \d+-\d+\n)"))) << r.out;
  EXPECT_EQ(r.out, std::string("graphlint ") + GRAPHLINT_VERSION + "\ngraphlint-fx 1-2\n");
}

TEST(Cli, RulesListsTheCatalogueInCodeOrder) {
  CliResult r = runCli({"rules"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  auto ls = lines(r.out);
  ASSERT_GE(ls.size(), 4u) << r.out;
  const char *expected[][3] = {{"GL001", "invalid-model", "error"},
                               {"GL002", "unknown-operator", "warning"},
                               {"GL003", "unresolved-shape", "warning"},
                               {"GL004", "missing-weights", "warning"}};
  for (size_t i = 0; i < 4; ++i) {
    std::istringstream in(ls[i]);
    std::string code, name, sev;
    in >> code >> name >> sev;
    EXPECT_EQ(code, expected[i][0]) << ls[i];
    EXPECT_EQ(name, expected[i][1]) << ls[i];
    EXPECT_EQ(sev, expected[i][2]) << ls[i];
  }
  // Codes are sorted whatever rules are added later.
  std::vector<std::string> codes;
  for (const auto &l : ls)
    codes.push_back(l.substr(0, 5));
  EXPECT_TRUE(std::is_sorted(codes.begin(), codes.end()));
}

TEST(Cli, RulesAsJson) {
  CliResult r = runCli({"rules", "--format", "json"});
  EXPECT_EQ(r.exitCode, 0);
  auto v = llvm::json::parse(r.out);
  ASSERT_TRUE(bool(v)) << llvm::toString(v.takeError());
  const llvm::json::Array *arr = v->getAsArray();
  ASSERT_TRUE(arr);
  ASSERT_GE(arr->size(), 4u);
  const llvm::json::Object *first = (*arr)[0].getAsObject();
  EXPECT_EQ(first->getString("code"), llvm::Optional<llvm::StringRef>("GL001"));
  EXPECT_EQ(first->getString("name"), llvm::Optional<llvm::StringRef>("invalid-model"));
  EXPECT_EQ(first->getString("severity"), llvm::Optional<llvm::StringRef>("error"));
}

TEST(Cli, RuleDocByCodeOrName) {
  CliResult byCode = runCli({"rule", "GL001"});
  EXPECT_EQ(byCode.exitCode, 0) << byCode.err;
  EXPECT_EQ(byCode.out.rfind("# GL001", 0), 0u) << byCode.out;
  EXPECT_NE(byCode.out.find("invalid-model"), std::string::npos);
  CliResult byName = runCli({"rule", "invalid-model"});
  EXPECT_EQ(byName.exitCode, 0);
  EXPECT_EQ(byName.out, byCode.out);
  EXPECT_EQ(runCli({"rule", "gl001"}).out, byCode.out) << "codes are case-insensitive";
  for (const char *code : {"GL002", "GL003", "GL004"}) {
    CliResult r = runCli({"rule", code});
    EXPECT_EQ(r.exitCode, 0) << code;
    EXPECT_EQ(r.out.rfind(std::string("# ") + code, 0), 0u) << r.out;
  }
}

TEST(Cli, UnknownRuleIsAUsageError) {
  CliResult r = runCli({"rule", "GL999"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_EQ(r.err, "graphlint: no rule named 'GL999' (see 'graphlint rules')\nTry 'graphlint --help'.\n");
  EXPECT_EQ(runCli({"rule"}).exitCode, 2);
  EXPECT_EQ(runCli({"rule", "GL001", "GL002"}).exitCode, 2);
}

TEST(Cli, UsageErrorsExitTwo) {
  std::string m = model("resnet18.onnx");
  struct Case { std::vector<std::string> args; const char *message; };
  const Case cases[] = {
      {{}, "no input files"},
      {{"--frobnicate", m}, "unknown option '--frobnicate'"},
      {{"--precison", "bf16", m}, "unknown option '--precison'; did you mean '--precision'?"},
      {{"--show-libary-findings", m}, "unknown option '--show-libary-findings'; did you mean '--show-library-findings'?"},
      {{"--jsn", m}, "unknown option '--jsn'"},  // 1 edit of 3 letters from --json? no such option; nothing near
      {{"--format", "xml", m}, "--format must be one of text, gcc, json, sarif, github"},
      {{"--fail-on", "fatal", m}, "--fail-on must be one of error, warning, note, never"},
      {{"--color", "sometimes", m}, "--color must be auto, always or never"},
      {{"-j", "0", m}, "--jobs expects an integer from 1 to 1024, got '0'"},
      {{"--dim", "batch", m}, "--dim expects NAME=SIZE, got 'batch'"},
      {{"--dim", "batch=-1", m}, "--dim batch: '-1' is not a non-negative integer"},
      {{"--format"}, "--format needs a value"},
      {{"inspect", m, m}, "inspect expects exactly one FILE"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.message);
    CliResult r = runCli(c.args);
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_EQ(r.err, std::string("graphlint: ") + c.message + "\nTry 'graphlint --help'.\n");
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

// ---- exit codes --------------------------------------------------------------

TEST(Cli, ExitCodesFollowFailOnAndExitZero) {
  std::string clean = cleanModel();
  std::string warnOnly = sourcePath("tests/fixtures/fx/hazards.fx.json");  // warnings only
  std::string noteOnly = model("resnet18.onnx");  // GL004 note: its weights were stripped on purpose
  std::string invalid = invalidModel();          // GL001 error
  struct Case { std::vector<std::string> args; int exit; };
  const Case cases[] = {
      {{clean}, 0},
      {{clean, "--fail-on", "note"}, 0},
      {{warnOnly}, 0},
      {{warnOnly, "--fail-on", "warning"}, 1},
      {{warnOnly, "--fail-on=warning"}, 1},
      {{warnOnly, "--fail-on", "note"}, 1},
      {{warnOnly, "--fail-on", "warning", "--exit-zero"}, 0},
      {{noteOnly}, 0},
      {{noteOnly, "--fail-on", "warning"}, 0},
      {{noteOnly, "--fail-on", "note"}, 1},
      {{invalid}, 1},
      {{invalid, "--fail-on", "error"}, 1},
      {{invalid, "--fail-on", "never"}, 0},
      {{invalid, "--exit-zero"}, 0},
      {{clean, invalid}, 1},
      {{"lint", invalid, "--format", "json"}, 1},
      {{"--", invalid}, 1},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(::testing::PrintToString(c.args));
    CliResult r = runCli(c.args);
    EXPECT_EQ(r.exitCode, c.exit) << r.out << r.err;
  }
}

TEST(Cli, CleanModelSaysSo) {
  CliResult r = runCli({"--no-color", cleanModel()});
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_EQ(r.out, "1 file checked: 0 errors, 0 warnings, 0 notes\n");
}

TEST(Cli, NoColorWhenNotATerminalAndColorOnRequest) {
  std::string m = invalidModel();
  CliResult plain = runCli({m});  // stdout is a file: auto means no colour
  EXPECT_EQ(plain.out.find('\x1b'), std::string::npos) << plain.out;
  CliResult colored = runCli({"--color", "always", m});
  EXPECT_NE(colored.out.find('\x1b'), std::string::npos);
  EXPECT_EQ(runCli({"--color=always", "--no-color", m}).out, plain.out);
}

// ---- determinism with parallel jobs -----------------------------------------

TEST(Cli, ParallelJobsGiveTheSameOutputAsSerial) {
  std::vector<std::string> files{model("resnet18.onnx"), invalidModel(), model("gpt_tiny.onnx"),
                                 model("control_flow.onnx"), cleanModel(), model("mobilenet_v3_small.onnx"),
                                 tempDir() + "/missing.onnx"};
  for (const char *fmt : {"text", "json", "gcc"}) {
    SCOPED_TRACE(fmt);
    std::vector<std::string> serialArgs{"--format", fmt, "--no-color", "-j", "1"};
    serialArgs.insert(serialArgs.end(), files.begin(), files.end());
    CliResult serial = runCli(serialArgs);
    EXPECT_EQ(serial.exitCode, 2);  // the missing file
    // Files appear in the order given, whatever finishes first.
    size_t prev = 0;
    for (size_t i = 0; i + 1 < files.size(); ++i) {
      size_t at = serial.out.find(files[i] == files[4] ? "clean.onnx" : files[i]);
      if (files[i] == files[4])
        continue;  // a clean file prints nothing but the summary
      ASSERT_NE(at, std::string::npos) << files[i];
      EXPECT_GE(at, prev) << files[i];
      prev = at;
    }
    for (int run = 0; run < 4; ++run) {
      std::vector<std::string> args{"--format", fmt, "--no-color", "-j", run % 2 ? "2" : "4"};
      args.insert(args.end(), files.begin(), files.end());
      CliResult par = runCli(args);
      EXPECT_EQ(par.exitCode, serial.exitCode);
      EXPECT_EQ(par.out, serial.out) << "run " << run;
      EXPECT_EQ(par.err, serial.err) << "run " << run;
    }
  }
}

// ---- inspect --format json contract -------------------------------------------

void expectValueEntry(const llvm::json::Value &v) {
  const llvm::json::Object *o = v.getAsObject();
  ASSERT_TRUE(o);
  ASSERT_TRUE(o->getString("name")) << "value entry without a name";
  const llvm::json::Value *dt = o->get("dtype");
  ASSERT_TRUE(dt) << "no dtype key";
  if (auto s = dt->getAsString())
    EXPECT_TRUE(std::regex_match(s->str(), std::regex("[A-Z][A-Z0-9]*"))) << s->str();
  else
    EXPECT_EQ(dt->kind(), llvm::json::Value::Null);
  const llvm::json::Value *shape = o->get("shape");
  ASSERT_TRUE(shape) << "no shape key";
  if (shape->kind() == llvm::json::Value::Null)
    return;
  const llvm::json::Array *dims = shape->getAsArray();
  ASSERT_TRUE(dims);
  for (const llvm::json::Value &d : *dims) {
    bool ok = d.kind() == llvm::json::Value::Null || d.kind() == llvm::json::Value::String ||
              (d.getAsInteger() && *d.getAsInteger() >= 0);
    EXPECT_TRUE(ok) << "dim must be int >= 0, symbol or null";
  }
}

llvm::json::Value inspectJson(const std::vector<std::string> &args) {
  CliResult r = runCli(args);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  auto v = llvm::json::parse(r.out);
  if (!v) {
    ADD_FAILURE() << llvm::toString(v.takeError()) << r.out;
    return nullptr;
  }
  return std::move(*v);
}

TEST(Cli, InspectJsonOnResnet18) {
  llvm::json::Value v = inspectJson({"inspect", "--format", "json", model("resnet18.onnx")});
  const llvm::json::Object *root = v.getAsObject();
  ASSERT_TRUE(root);
  for (const char *key : {"graph", "inputs", "outputs", "values", "params", "ops"})
    EXPECT_TRUE(root->get(key)) << key;

  const llvm::json::Object *graph = root->getObject("graph");
  ASSERT_TRUE(graph);
  EXPECT_EQ(graph->getInteger("nodes").getValueOr(-1), 49);
  EXPECT_EQ(graph->getInteger("top_level_nodes").getValueOr(-1), 49);
  EXPECT_EQ(graph->getInteger("subgraphs").getValueOr(-1), 0);
  EXPECT_EQ(graph->getInteger("inputs").getValueOr(-1), 1);
  EXPECT_EQ(graph->getInteger("outputs").getValueOr(-1), 1);
  EXPECT_EQ(graph->getInteger("ir_version").getValueOr(-1), 8);
  EXPECT_EQ(graph->getString("producer"), llvm::Optional<llvm::StringRef>("pytorch 1.13.0"));

  // 42 initializers (BN folded into Conv): 11,684,712 float parameters. The
  // weights are not in the file; the totals come from shapes alone.
  const llvm::json::Object *params = root->getObject("params");
  ASSERT_TRUE(params);
  EXPECT_EQ(params->getInteger("count").getValueOr(-1), 42);
  EXPECT_EQ(params->getInteger("bytes").getValueOr(-1), 11684712 * 4);

  const llvm::json::Object *ops = root->getObject("ops");
  ASSERT_TRUE(ops);
  std::map<std::string, int64_t> hist;
  int64_t total = 0;
  for (const auto &kv : *ops) {
    hist[kv.first.str()] = *kv.second.getAsInteger();
    total += *kv.second.getAsInteger();
  }
  std::map<std::string, int64_t> want{{"Conv", 20}, {"Relu", 17}, {"Add", 8}, {"MaxPool", 1},
                                      {"GlobalAveragePool", 1}, {"Flatten", 1}, {"Gemm", 1}};
  EXPECT_EQ(hist, want);
  EXPECT_EQ(total, 49);

  const llvm::json::Array *inputs = root->getArray("inputs");
  ASSERT_TRUE(inputs && inputs->size() == 1);
  expectValueEntry((*inputs)[0]);
  EXPECT_EQ((*inputs)[0], llvm::json::Value(llvm::json::Object{
                              {"name", "input"}, {"dtype", "FLOAT"},
                              {"shape", llvm::json::Array{"batch", 3, 224, 224}}}));

  const llvm::json::Array *outputs = root->getArray("outputs");
  ASSERT_TRUE(outputs && outputs->size() == 1);
  EXPECT_EQ((*outputs)[0], llvm::json::Value(llvm::json::Object{
                               {"name", "logits"}, {"dtype", "FLOAT"}, {"shape", llvm::json::Array{"batch", 1000}}}));

  const llvm::json::Array *values = root->getArray("values");
  ASSERT_TRUE(values);
  EXPECT_GE(values->size(), 49u);
  bool sawConv1 = false;
  for (const llvm::json::Value &val : *values) {
    expectValueEntry(val);
    const llvm::json::Object *o = val.getAsObject();
    if (o->getString("name") == llvm::Optional<llvm::StringRef>("/conv1/Conv_output_0")) {
      sawConv1 = true;
      EXPECT_EQ(*o->get("shape"), llvm::json::Value(llvm::json::Array{"batch", 64, 112, 112}));
      EXPECT_EQ(*o->get("dtype"), llvm::json::Value("FLOAT"));
    }
  }
  EXPECT_TRUE(sawConv1);
}

TEST(Cli, InspectDimBindsSymbols) {
  for (std::vector<std::string> args : {std::vector<std::string>{"inspect", "--format", "json", "--dim", "batch=8"},
                                        std::vector<std::string>{"inspect", "--format=json", "-Dbatch=8"},
                                        std::vector<std::string>{"inspect", "--format", "json", "-D", "batch=8"}}) {
    SCOPED_TRACE(::testing::PrintToString(args));
    args.push_back(model("resnet18.onnx"));
    llvm::json::Value v = inspectJson(args);
    const llvm::json::Object *root = v.getAsObject();
    ASSERT_TRUE(root);
    const llvm::json::Array *outputs = root->getArray("outputs");
    ASSERT_TRUE(outputs && outputs->size() == 1);
    EXPECT_EQ(*outputs->front().getAsObject()->get("shape"), llvm::json::Value(llvm::json::Array{8, 1000}));
    const llvm::json::Array *inputs = root->getArray("inputs");
    EXPECT_EQ(*inputs->front().getAsObject()->get("shape"), llvm::json::Value(llvm::json::Array{8, 3, 224, 224}));
    // Every intermediate is concrete now.
    for (const llvm::json::Value &val : *root->getArray("values"))
      for (const llvm::json::Value &d : *val.getAsObject()->getArray("shape"))
        EXPECT_TRUE(d.getAsInteger()) << val.getAsObject()->getString("name")->str();
  }
}

TEST(Cli, InspectJsonOnEveryBundledModelFollowsTheContract) {
  for (const char *name : {"mobilenet_v3_small.onnx", "gpt_tiny.onnx", "control_flow.onnx"}) {
    SCOPED_TRACE(name);
    llvm::json::Value v = inspectJson({"inspect", "--format", "json", model(name)});
    const llvm::json::Object *root = v.getAsObject();
    ASSERT_TRUE(root);
    for (const char *key : {"inputs", "outputs", "values"})
      for (const llvm::json::Value &val : *root->getArray(key))
        expectValueEntry(val);
    const llvm::json::Object *params = root->getObject("params");
    EXPECT_GT(params->getInteger("count").getValueOr(-1), 0);
    EXPECT_GT(params->getInteger("bytes").getValueOr(-1), 0);
  }
  llvm::json::Value cf = inspectJson({"inspect", "--format", "json", model("control_flow.onnx")});
  const llvm::json::Object *g = cf.getAsObject()->getObject("graph");
  EXPECT_EQ(g->getInteger("top_level_nodes").getValueOr(-1), 10);
  EXPECT_EQ(g->getInteger("nodes").getValueOr(-1), 22);
  EXPECT_EQ(g->getInteger("subgraphs").getValueOr(-1), 3);
}

TEST(Cli, InspectTextAndIr) {
  CliResult r = runCli({"inspect", model("resnet18.onnx")});
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_NE(r.out.find("nodes      49 (49 top-level"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("output     logits: f32[batch,1000]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Conv=20"), std::string::npos) << r.out;
  CliResult ir = runCli({"inspect", "--print-ir", "-D", "batch=2", model("resnet18.onnx")});
  EXPECT_EQ(ir.exitCode, 0);
  EXPECT_NE(ir.out.find("%logits: f32[2,1000] = Gemm("), std::string::npos) << ir.out;
  CliResult bad = runCli({"inspect", tempDir() + "/nope.onnx"});
  EXPECT_EQ(bad.exitCode, 2);
  EXPECT_NE(bad.err.find("nope.onnx: error: no such file"), std::string::npos) << bad.err;
}

// ---- gcc format ------------------------------------------------------------------

TEST(Cli, GccLinesMatchTheProblemMatcher) {
  // The regex of VS Code's $gcc problem matcher.
  const std::regex matcher(R"(^(.*):(\d+):(\d+):\s+(warning|error|note):\s+(.*)$)");
  std::string custom = writeText("custom.onnx", R"(
    <ir_version: 8, opset_import: ["" : 17, "com.acme" : 1]>
    g (float[N, 16] x, int64[K] s) => (float[N, 16] y, float r) {
      h = com.acme.FancyNorm(x)
      y = Relu(h)
      t = Reshape(x, s)
      r = ReduceSum(t)
    })");
  CliResult r = runCli({"--format", "gcc", model("resnet18.onnx"), model("gpt_tiny.onnx"), invalidModel(), custom,
                        tempDir() + "/missing.onnx"});
  EXPECT_EQ(r.exitCode, 2);
  auto ls = lines(r.out);
  ASSERT_GE(ls.size(), 5u) << r.out;
  std::set<std::string> severities;
  for (const std::string &l : ls) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(l, m, matcher)) << l;
    EXPECT_GE(std::stoul(m[2]), 1u) << l;
    EXPECT_GE(std::stoul(m[3]), 1u) << l;
    severities.insert(m[4]);
  }
  EXPECT_EQ(severities, (std::set<std::string>{"error", "warning", "note"})) << r.out;
  // A node finding points at the node's 1-based index in the model file.
  bool danglingLine = false;
  for (const std::string &l : ls)
    danglingLine |= l.find("invalid.onnx:1:1: error: input 1 'ghost'") != std::string::npos &&
                    l.find("[GL001 invalid-model]") != std::string::npos;
  EXPECT_TRUE(danglingLine) << r.out;
}

}  // namespace

TEST(Cli, TargetSelectsTheHardwareProfile) {
  CliResult bad = runCli({sourcePath("models/resnet18.onnx"), "--target", "TPU-v5p"});
  EXPECT_EQ(bad.exitCode, 2);
  EXPECT_NE(bad.err.find("--target: unknown target 'TPU-v5p' (known: V100,"), std::string::npos) << bad.err;
  // At batch 1, mobilenet_v3_small is launch-bound on an L4 (GL142 names it).
  CliResult l4 = runCli({sourcePath("models/mobilenet_v3_small.onnx"), "-D", "batch=1", "--target", "l4", "--format", "gcc"});
  EXPECT_EQ(l4.exitCode, 0) << l4.err;
  EXPECT_NE(l4.out.find("are launch-bound on L4"), std::string::npos) << l4.out;
}

// A -D that binds nothing is a warning on stderr naming the file's symbols
// and inputs, for ONNX and FX alike; the lint goes on (exit status unchanged).
namespace {
TEST(Cli, DimThatBindsNothingWarnsOnStderr) {
  std::string onnx = test::tempDir() + "/clean.onnx";
  test::writeFile(onnx, test::onnxFromText(test::readFile(sourcePath("tests/fixtures/clean.onnxtxt"))));
  CliResult r = runCli({onnx, "-D", "batch=4", "-D", "bacth=8", "--format", "json"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.err.find(onnx + ": warning: -D bacth=8 binds nothing: the file's size symbols are batch (inputs: x "
                              "f32[batch,16], w1 f32[16,32], b1 f32[32], w2 f32[32,8])"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("-D batch=4"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find(R"("from": "cli")"), std::string::npos);
  // A static model: -D has nothing to resize, and says so.
  std::string fixed = writeText("static.onnx", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2, 16] x) => (float[2, 16] y) {
      y = Relu(x)
    })");
  CliResult st = runCli({fixed, "-D", "batch=8", "--quiet"});
  EXPECT_NE(st.err.find("-D batch=8 binds nothing: the file has no symbolic dims, its inputs are static (x f32[2,16])"),
            std::string::npos)
      << st.err;
}
}  // namespace

// Each subcommand takes only the flags it reads: a flag another subcommand
// owns is exit 2 with one line, never accepted and silently ignored.
TEST(Cli, SubcommandsRefuseFlagsTheyDoNotRead) {
  CliResult r = runCli({"rules", "--train", "--memory-plot", "x.svg"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("--train is not an option of 'graphlint rules' (it takes --format text|json)"),
            std::string::npos)
      << r.err;
  r = runCli({"inspect", "--memory", sourcePath("models/resnet18.onnx")});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("--memory is not an option of 'graphlint inspect'"), std::string::npos) << r.err;
  r = runCli({"verify", "--device", "cpu", "--baseline", "b.json", sourcePath("models/resnet18.onnx")});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("--baseline is not an option of 'graphlint verify'"), std::string::npos) << r.err;
  r = runCli({"--print-ir", sourcePath("models/resnet18.onnx")});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("--print-ir is not an option of 'graphlint lint'"), std::string::npos) << r.err;
  r = runCli({"rule", "--format", "json", "GL001"});
  EXPECT_EQ(r.exitCode, 2);
  // What each reads still works, short forms included.
  EXPECT_EQ(runCli({"rules", "--format=json"}).exitCode, 0);
  EXPECT_EQ(runCli({"inspect", "-Dbatch=2", "--fusion", sourcePath("models/resnet18.onnx")}).exitCode, 0);
  EXPECT_EQ(runCli({"config", "--dump", "--fsdp", "-D", "batch=2", sourcePath("models/resnet18.onnx")}).exitCode, 0);
}
