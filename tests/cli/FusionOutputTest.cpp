// The fusion plan's outputs from the command line: --backend (and its usage
// errors), the --fusion summary line, the JSON `fusion` section's contract,
// and --emit-dot, whose files must be well-formed DOT that Graphviz renders
// (checked with `dot -Tsvg` when Graphviz is installed).
#include "TestSupport.h"

#include "graphlint/report/Reporters.h"

#include <gtest/gtest.h>

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/Program.h>

#include <regex>
#include <set>
#include <sstream>

using namespace graphlint;
using namespace graphlint::test;

namespace {

std::string model(const std::string &name) { return sourcePath("models/" + name); }

std::vector<std::string> summaryLines(const std::string &out) {
  static const std::regex re(R"(  (\d+) nodes, (\d+) groups, (\d+) kernels; breaks: (.*); structural: (.*))");
  std::vector<std::string> found;
  std::istringstream in(out);
  for (std::string l; std::getline(in, l);)
    if (std::regex_match(l, re))
      found.push_back(l);
  return found;
}

TEST(FusionCli, BackendUnknownIsAUsageError) {
  for (const std::vector<std::string> &args :
       {std::vector<std::string>{"--backend", "xla", model("gpt_tiny.onnx")},
        std::vector<std::string>{"--backend=cuda", model("gpt_tiny.onnx")},
        std::vector<std::string>{"inspect", "--backend", "tvm", model("gpt_tiny.onnx")},
        std::vector<std::string>{model("gpt_tiny.onnx"), "--backend"}}) {
    CliResult r = runCli(args);
    EXPECT_EQ(r.exitCode, 2) << args[0];
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_NE(r.err.find("--backend"), std::string::npos) << r.err;
  }
  for (const char *ok : {"inductor", "tensorrt", "ort"}) {
    CliResult r = runCli({"--fail-on", "never", "--backend", ok, model("control_flow.onnx")});
    EXPECT_EQ(r.exitCode, 0) << ok << r.err;
  }
}

TEST(FusionCli, EmitDotNeedsAFile) {
  CliResult r = runCli({model("gpt_tiny.onnx"), "--emit-dot"});
  EXPECT_EQ(r.exitCode, 2);
  r = runCli({"--emit-dot=", model("gpt_tiny.onnx")});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("--emit-dot"), std::string::npos) << r.err;
}

TEST(FusionCli, HelpListsTheFusionFlags) {
  CliResult r = runCli({"--help"});
  for (const char *flag : {"--backend inductor|inductor-cpu|tensorrt|ort-cpu|ort-cuda", "ort = ort-cpu", "--fusion",
                           "--emit-dot FILE"})
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
}

TEST(FusionCli, BackendNamesAndTheOrtAlias) {
  // The old name `ort` keeps working and names the CPU execution provider.
  for (auto [flag, label] : {std::pair{"ort", "ort-cpu"}, {"onnxruntime", "ort-cpu"}, {"ort-cpu", "ort-cpu"},
                             {"ort-cuda", "ort-cuda"}, {"inductor-cpu", "inductor-cpu"}, {"trt", "tensorrt"}}) {
    CliResult r = runCli({"--no-color", "--fail-on", "never", "--fusion", "--backend", flag, model("gpt_tiny.onnx")});
    EXPECT_EQ(r.exitCode, 0) << flag << ": " << r.err;
    EXPECT_NE(r.out.find(std::string("fusion plan for ") + label + "\n"), std::string::npos) << flag << "\n" << r.out;
  }
  CliResult bad = runCli({"--backend", "ort-gpu", model("gpt_tiny.onnx")});
  EXPECT_EQ(bad.exitCode, 2);
  EXPECT_NE(bad.err.find("inductor, inductor-cpu, tensorrt, ort-cpu (ort), ort-cuda"), std::string::npos) << bad.err;
}

TEST(FusionCli, FusionPrintsTheSummaryLinePerFile) {
  CliResult r = runCli({"--no-color", "--fail-on", "never", "--fusion", model("gpt_tiny.onnx"),
                        model("control_flow.onnx")});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  auto lines = summaryLines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  // control_flow.onnx has an If: its boundaries are fusion breakers, listed
  // under "breaks" by reason.
  EXPECT_NE(lines[1].find("control_flow="), std::string::npos) << lines[1];
  EXPECT_EQ(lines[1].find("breaks: none"), std::string::npos) << lines[1];
  EXPECT_NE(r.out.find("fusion plan for inductor"), std::string::npos);
  // The closing lint summary still ends the output.
  EXPECT_NE(r.out.find("2 files checked"), std::string::npos);

  // Without --fusion, and in the gcc format, no table.
  for (const std::vector<std::string> &args :
       {std::vector<std::string>{"--no-color", model("control_flow.onnx")},
        std::vector<std::string>{"--format", "gcc", "--fusion", model("control_flow.onnx")}}) {
    CliResult plain = runCli(args);
    EXPECT_TRUE(summaryLines(plain.out).empty()) << plain.out;
    EXPECT_EQ(plain.out.find("fusion plan"), std::string::npos) << plain.out;
  }
}

TEST(FusionCli, BackendChangesThePlan) {
  auto kernels = [](const std::string &backend) {
    CliResult r = runCli({"--no-color", "--fail-on", "never", "--fusion", "--backend", backend, model("gpt_tiny.onnx")});
    auto lines = summaryLines(r.out);
    EXPECT_EQ(lines.size(), 1u) << r.out;
    EXPECT_NE(r.out.find("fusion plan for " + backend), std::string::npos);
    return lines.empty() ? std::string() : lines[0];
  };
  std::string inductor = kernels("inductor"), trt = kernels("tensorrt");
  EXPECT_NE(inductor, trt);  // tensorrt fuses less: more kernels
}

TEST(FusionCli, InspectShowsThePlan) {
  CliResult r = runCli({"inspect", "--fusion", "--backend", "ort", model("control_flow.onnx")});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(summaryLines(r.out).size(), 1u) << r.out;
  EXPECT_NE(r.out.find("fusion plan for ort"), std::string::npos);
  r = runCli({"inspect", "--format", "json", "--fusion", model("control_flow.onnx")});
  auto doc = llvm::json::parse(r.out);
  ASSERT_TRUE(static_cast<bool>(doc)) << llvm::toString(doc.takeError());
  ASSERT_NE(doc->getAsObject()->getObject("fusion"), nullptr);
  EXPECT_EQ(*doc->getAsObject()->getObject("fusion")->getString("backend"), "inductor");
}

// The JSON section's contract: groups partition the nodes, boundaries refer to
// existing groups and nodes, kernels add up.
TEST(FusionCli, JsonFusionSectionIsConsistent) {
  for (const char *name : {"gpt_tiny.onnx", "control_flow.onnx", "resnet18.onnx", "mobilenet_v3_small.onnx"}) {
    CliResult r = runCli({"--format", "json", "--fail-on", "never", "--backend", "tensorrt", model(name)});
    auto doc = llvm::json::parse(r.out);
    ASSERT_TRUE(static_cast<bool>(doc)) << llvm::toString(doc.takeError());
    EXPECT_EQ(*doc->getAsObject()->getInteger("version"), 1);
    const llvm::json::Object &file = *(*doc->getAsObject()->getArray("files"))[0].getAsObject();
    const llvm::json::Object *f = file.getObject("fusion");
    ASSERT_NE(f, nullptr) << name;
    EXPECT_EQ(*f->getString("backend"), "tensorrt");
    int64_t nodes = 0, kernels = 0, id = 0;
    std::set<std::string> groupGraphs;
    for (const llvm::json::Value &g : *f->getArray("groups")) {
      const llvm::json::Object &o = *g.getAsObject();
      EXPECT_EQ(*o.getInteger("id"), id++) << name;  // dense, in order
      EXPECT_FALSE(o.getArray("nodes")->empty());
      for (const llvm::json::Value &n : *o.getArray("nodes"))
        EXPECT_FALSE(n.getAsString()->empty());
      nodes += static_cast<int64_t>(o.getArray("nodes")->size());
      kernels += *o.getInteger("kernels");
      groupGraphs.insert(o.getString("graph")->str());
      EXPECT_TRUE(o.getString("kind").hasValue());
    }
    EXPECT_EQ(nodes, *file.getObject("stats")->getInteger("nodes")) << name;
    EXPECT_EQ(nodes, *f->getInteger("nodes")) << name;
    EXPECT_EQ(kernels, *f->getInteger("kernels_predicted")) << name;
    EXPECT_EQ(groupGraphs.size(), static_cast<size_t>(*file.getObject("stats")->getInteger("graphs"))) << name;
    int64_t boundaries = 0;
    for (const llvm::json::Value &b : *f->getArray("boundaries")) {
      const llvm::json::Object &o = *b.getAsObject();
      EXPECT_LT(*o.getInteger("from_group"), id);
      EXPECT_LT(*o.getInteger("to_group"), id);
      EXPECT_NE(*o.getInteger("from_group"), *o.getInteger("to_group"));
      for (const char *k : {"node", "producer", "value", "reason", "graph"})
        EXPECT_TRUE(o.getString(k).hasValue()) << k;
      EXPECT_TRUE(o.getBoolean("breaker").hasValue());
      ++boundaries;
    }
    int64_t counted = 0;
    for (const auto &kv : *f->getObject("boundaries_by_reason"))
      counted += *kv.second.getAsInteger();
    EXPECT_EQ(counted, boundaries) << name;
  }
}

// Model-local function bodies are planned too: their groups carry the
// function's graph name, and the DOT draws them as their own cluster.
TEST(FusionCli, FunctionBodiesArePlanned) {
  std::string path = tempDir() + "/func.onnx";
  writeFile(path, onnxFromText(R"(
    <ir_version: 8, opset_import: ["" : 17, "local" : 1]>
    g (float[N, 8] x) => (float[N, 8] y) {
      h = Relu(x)
      y = local.Scale(h)
    }
    <domain: "local", opset_import: ["" : 17]>
    Scale (a) => (b) {
      c = Neg(a)
      b = Exp(c)
    })"));
  CliResult r = runCli({"--format", "json", "--fail-on", "never", path});
  auto doc = llvm::json::parse(r.out);
  ASSERT_TRUE(static_cast<bool>(doc)) << llvm::toString(doc.takeError()) << r.out << r.err;
  const llvm::json::Object *f = (*doc->getAsObject()->getArray("files"))[0].getAsObject()->getObject("fusion");
  ASSERT_NE(f, nullptr);
  std::set<std::string> graphs, nodes;
  for (const llvm::json::Value &g : *f->getArray("groups")) {
    graphs.insert(g.getAsObject()->getString("graph")->str());
    for (const llvm::json::Value &n : *g.getAsObject()->getArray("nodes"))
      nodes.insert(n.getAsString()->str());
  }
  EXPECT_EQ(graphs.count("main"), 1u);
  EXPECT_EQ(graphs.size(), 2u) << r.out;
  EXPECT_EQ(*f->getInteger("nodes"), 4);
  std::string dot = tempDir() + "/func.dot";
  r = runCli({"--fail-on", "never", "--emit-dot", dot, path});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(readFile(dot).find("subgraph cluster_g1"), std::string::npos) << readFile(dot);
}

// ---- DOT ------------------------------------------------------------------

// Well-formedness without Graphviz: one digraph, braces balanced outside
// quoted strings, quotes closed, every statement line terminated.
void expectWellFormedDot(const std::string &dot, const std::string &what) {
  ASSERT_EQ(dot.rfind("digraph fusion {\n", 0), 0u) << what;
  int depth = 0;
  bool inString = false, escaped = false;
  for (char c : dot) {
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
      else
        EXPECT_NE(c, '\n') << what << ": raw newline inside a quoted string";
      continue;
    }
    if (c == '"')
      inString = true;
    else if (c == '{')
      ++depth;
    else if (c == '}') {
      EXPECT_GE(--depth, 0) << what;
    }
  }
  EXPECT_FALSE(inString) << what;
  EXPECT_EQ(depth, 0) << what;
  std::istringstream in(dot);
  for (std::string l; std::getline(in, l);) {
    char last = l.empty() ? ';' : l.back();
    EXPECT_TRUE(last == ';' || last == '{' || last == '}') << what << ": " << l;
  }
}

// Renders with Graphviz when it is installed; returns false when it is not.
bool renderWithDot(const std::string &dotPath, const std::string &what) {
  auto dot = llvm::sys::findProgramByName("dot");
  if (!dot)
    return false;
  std::string dir = tempDir();
  std::string svg = dir + "/out.svg", err = dir + "/err";
  llvm::StringRef argv[] = {*dot, "-Tsvg", dotPath, "-o", svg};
  llvm::Optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), llvm::StringRef(""), llvm::StringRef(err)};
  int rc = llvm::sys::ExecuteAndWait(*dot, argv, llvm::None, redirects, 120);
  std::string errText = readFile(err);
  EXPECT_EQ(rc, 0) << what << ": " << errText;
  EXPECT_TRUE(errText.empty()) << what << ": dot warned: " << errText;
  EXPECT_NE(readFile(svg).find("<svg"), std::string::npos) << what;
  return true;
}

TEST(FusionDot, BundledModelsRender) {
  bool rendered = false;
  for (const char *name : {"gpt_tiny", "control_flow"}) {
    std::string path = tempDir() + "/" + name + ".dot";
    CliResult r = runCli({"--fail-on", "never", "--emit-dot", path, model(std::string(name) + ".onnx")});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    std::string dot = readFile(path);
    expectWellFormedDot(dot, name);
    EXPECT_NE(dot.find("subgraph cluster_f"), std::string::npos) << name;
    if (std::string(name) == "control_flow") {
      // Nested bodies are clusters, the If's boundaries red with their reason.
      EXPECT_NE(dot.find("subgraph cluster_g1"), std::string::npos);
      EXPECT_NE(dot.find("label=\"main/If:then_branch\""), std::string::npos);
      EXPECT_NE(dot.find("color=red, fontcolor=red, label=\"control_flow\""), std::string::npos);
    }
    rendered |= renderWithDot(path, name);
  }
  if (!rendered)
    GTEST_SKIP() << "Graphviz (dot) is not installed: checked well-formedness only";
}

TEST(FusionDot, SeveralModelsGetOneFileEach) {
  std::string dir = tempDir();
  CliResult r = runCli({"--fail-on", "never", "--emit-dot", dir + "/plan.dot", model("gpt_tiny.onnx"),
                        model("control_flow.onnx"), model("gpt_tiny.onnx")});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  for (const char *f : {"plan.gpt_tiny.dot", "plan.control_flow.dot", "plan.gpt_tiny-2.dot"})
    EXPECT_TRUE(llvm::sys::fs::exists(dir + "/" + f)) << f;
  EXPECT_FALSE(llvm::sys::fs::exists(dir + "/plan.dot"));
}

TEST(FusionDot, UnwritableFileExitsTwo) {
  CliResult r = runCli({"--fail-on", "never", "--emit-dot", tempDir() + "/no/such/dir/x.dot", model("gpt_tiny.onnx")});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("cannot write"), std::string::npos) << r.err;
}

TEST(FusionDot, NamesAreEscaped) {
  // Hand-made summary: names with quotes, backslashes, angle brackets, braces,
  // a newline and a record separator; an If with a body.
  FusionSummary s;
  s.present = true;
  s.backend = "inductor";
  s.graphs = {{"main", -1, -1, ""}, {"main/If \"x\":then_branch", 0, 1, "then_branch"}};
  s.nodes = {{"a\"b\\c<d>{e}|f", "a\"b\\c<d>{e}|f", "Relu", 0, 0, 0},
             {"If\nline", "If\nline", "If", 0, 1, 1},
             {"#1", "", "com.x::My\"Op", 1, 0, 2}};
  s.groups = {{0, "pointwise", 0, {0}, 1}, {1, "control-flow", 0, {1}, 0}, {2, "unknown", 1, {2}, 1}};
  s.boundaries = {{0, 1, 0, 1, "v\\\"", "control_flow", true, "x \"y\""}};
  s.edges = {{0, 1, "v\\\"", 0}, {0, 2, "v\\\"", -1}};
  s.kernelsPredicted = 2;
  std::string dot;
  llvm::raw_string_ostream os(dot);
  renderDot(s, "dir/m<1>.onnx", os);
  os.flush();
  expectWellFormedDot(dot, "escapes");
  EXPECT_NE(dot.find(R"x(label="Relu\na\"b\\c<d>{e}|f")x"), std::string::npos) << dot;
  EXPECT_NE(dot.find(R"x(label="If\nIf\nline")x"), std::string::npos) << dot;
  EXPECT_NE(dot.find(R"x(label="control_flow (x \"y\")")x"), std::string::npos) << dot;
  std::string path = tempDir() + "/escapes.dot";
  writeFile(path, dot);
  if (!renderWithDot(path, "escapes"))
    GTEST_SKIP() << "Graphviz (dot) is not installed: checked well-formedness only";
}

}  // namespace
