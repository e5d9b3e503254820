// --emit-model-explorer DIR (docs/viewers.md#model-explorer): graph.json is
// Model Explorer's JSON graph (every edge joins two nodes of one graph, from
// an output the source declares; module paths become namespaces; bodies are
// subgraphs), and the overlays add up to the report: the predicted times to
// the compute model's forward + backward, the bytes at the peak to the
// memory plan's peak, the findings to the findings at nodes.
// tests/viewers/model_explorer_test.py loads the same files with the
// model_explorer package and its server.
#include "TestSupport.h"

#include "graphlint/report/Reporters.h"

#include <gtest/gtest.h>

#include <llvm/Support/JSON.h>

#include <map>
#include <set>

using namespace graphlint;
using namespace graphlint::test;

namespace {

std::string model(const std::string &name) { return sourcePath("models/" + name); }

// A string member ("" when absent).
std::string str(const llvm::json::Object &o, llvm::StringRef key) { return o.getString(key).getValueOr("").str(); }

llvm::json::Value parseFile(const std::string &path) {
  auto v = llvm::json::parse(readFile(path));
  EXPECT_TRUE(bool(v)) << path << ": " << llvm::toString(v.takeError());
  return v ? std::move(*v) : llvm::json::Value(nullptr);
}

const llvm::json::Object &fileEntry(const llvm::json::Value &report) {
  return *(*report.getAsObject()->getArray("files"))[0].getAsObject();
}

// Runs the lint with --emit-model-explorer into a fresh folder; the JSON
// report is parsed into `report`.
std::string emit(const std::vector<std::string> &args, llvm::json::Value &report) {
  std::string dir = tempDir() + "/me";
  std::vector<std::string> all{"--format", "json", "--exit-zero", "--emit-model-explorer", dir};
  all.insert(all.end(), args.begin(), args.end());
  CliResult r = runCli(all);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  auto v = llvm::json::parse(r.out);
  EXPECT_TRUE(bool(v)) << (v ? "" : llvm::toString(v.takeError()));
  report = v ? std::move(*v) : llvm::json::Value(nullptr);
  return dir;
}

struct GraphView {
  std::string id;
  std::map<std::string, const llvm::json::Object *> nodes;  // by id
};

// Checks the structure every graph must have and returns the graphs by id
// (pointing into `doc`).
std::map<std::string, GraphView> checkGraphs(const llvm::json::Value &doc) {
  std::map<std::string, GraphView> out;
  const llvm::json::Object *top = doc.getAsObject();
  EXPECT_TRUE(top && top->getString("label"));
  const llvm::json::Array *graphs = top ? top->getArray("graphs") : nullptr;
  EXPECT_TRUE(graphs && !graphs->empty());
  if (!graphs)
    return out;
  for (const llvm::json::Value &gv : *graphs) {
    const llvm::json::Object &g = *gv.getAsObject();
    GraphView view;
    view.id = g.getString("id").getValueOr("").str();
    for (const llvm::json::Value &nv : *g.getArray("nodes")) {
      const llvm::json::Object &n = *nv.getAsObject();
      std::string id = n.getString("id").getValueOr("").str();
      EXPECT_TRUE(view.nodes.emplace(id, &n).second) << "node id repeated: " << id;
      EXPECT_TRUE(n.getString("label") && n.getString("namespace")) << id;
      EXPECT_TRUE(n.getArray("attrs") && n.getArray("incomingEdges") && n.getArray("outputsMetadata")) << id;
    }
    for (const auto &[id, n] : view.nodes)
      for (const llvm::json::Value &ev : *n->getArray("incomingEdges")) {
        const llvm::json::Object &e = *ev.getAsObject();
        std::string src = e.getString("sourceNodeId").getValueOr("").str();
        auto it = view.nodes.find(src);
        EXPECT_NE(it, view.nodes.end()) << view.id << ": " << id << " reads unknown node " << src;
        if (it == view.nodes.end())
          continue;
        std::set<std::string> outputs;
        for (const llvm::json::Value &ov : *it->second->getArray("outputsMetadata"))
          outputs.insert(ov.getAsObject()->getString("id").getValueOr("").str());
        EXPECT_TRUE(outputs.count(e.getString("sourceNodeOutputId").getValueOr("").str()))
            << view.id << ": " << id << " reads an output " << src << " does not declare";
      }
    out.emplace(view.id, std::move(view));
  }
  return out;
}

std::string attr(const llvm::json::Object &n, llvm::StringRef key) {
  for (const llvm::json::Value &kv : *n.getArray("attrs"))
    if (str(*kv.getAsObject(), "key") == key)
      return str(*kv.getAsObject(), "value");
  return "";
}

// An overlay's results in graph `graph`: node id -> value.
std::map<std::string, double> results(const llvm::json::Value &overlay, const std::string &graph) {
  std::map<std::string, double> out;
  const llvm::json::Object *g = overlay.getAsObject()->getObject(graph);
  EXPECT_TRUE(g) << graph;
  if (!g)
    return out;
  EXPECT_TRUE(bool(g->getString("name")));
  for (const auto &[id, r] : *g->getObject("results"))
    out[id.str()] = r.getAsObject()->getNumber("value").getValueOr(-1);
  return out;
}

double sum(const std::map<std::string, double> &m) {
  double s = 0;
  for (const auto &[id, v] : m)
    s += v;
  return s;
}

TEST(ModelExplorer, OnnxGraphCollapsesIntoLayersAndOverlaysAddUp) {
  llvm::json::Value report = nullptr;
  std::string dir = emit({"--train", "-D", "batch=8", model("resnet18.onnx")}, report);
  llvm::json::Value doc = parseFile(dir + "/graph.json");
  auto graphs = checkGraphs(doc);
  ASSERT_EQ(graphs.size(), 1u);
  const GraphView &main = graphs.at("main");
  // 49 ops, the input and 42 initializers.
  EXPECT_EQ(main.nodes.size(), 49u + 1u + 42u);
  const llvm::json::Object &conv = *main.nodes.at("/layer1/layer1.0/conv1/Conv");
  EXPECT_EQ(str(conv, "label"), "Conv");
  EXPECT_EQ(str(conv, "namespace"), "layer1/layer1.0/conv1");
  EXPECT_EQ(attr(conv, "kernel_shape"), "[3,3]");
  EXPECT_EQ(attr(conv, "graphlint.module"), "layer1.0.conv1");
  const llvm::json::Object &out0 = *(*conv.getArray("outputsMetadata"))[0].getAsObject();
  EXPECT_EQ(str(out0, "id"), "0");
  std::map<std::string, std::string> meta;
  for (const llvm::json::Value &kv : *out0.getArray("attrs"))
    meta[kv.getAsObject()->getString("key")->str()] = kv.getAsObject()->getString("value")->str();
  EXPECT_EQ(meta["tensor_shape"], "f32[8,64,56,56]");
  EXPECT_EQ(meta["dtype"], "f32");
  EXPECT_EQ(meta["shape"], "[8,64,56,56]");
  EXPECT_EQ(meta["tensor_name"], "/layer1/layer1.0/conv1/Conv_output_0");
  // Its weight is a node of its own, pinned to the top of the conv's layer.
  ASSERT_EQ(conv.getArray("incomingEdges")->size(), 3u);
  std::string weight = (*conv.getArray("incomingEdges"))[1].getAsObject()->getString("sourceNodeId")->str();
  EXPECT_EQ(str(*main.nodes.at(weight), "namespace"), "layer1/layer1.0/conv1");
  EXPECT_TRUE(main.nodes.at(weight)->getObject("config")->getBoolean("pinToGroupTop").getValueOr(false));

  const llvm::json::Object &file = fileEntry(report);
  const llvm::json::Object &compute = *file.getObject("compute");
  double predicted = compute.getNumber("time_forward_s").getValueOr(0) +
                     compute.getNumber("time_backward_s").getValueOr(0);
  double overlay = sum(results(parseFile(dir + "/predicted_time.json"), "main"));
  EXPECT_GT(predicted, 0);
  EXPECT_NEAR(overlay, predicted, predicted * 1e-9);
  double peak = file.getObject("memory")->getNumber("peak_allocated_bytes").getValueOr(0);
  EXPECT_EQ(sum(results(parseFile(dir + "/peak_bytes.json"), "main")), peak);
  // Every op has a fusion group; inputs and parameters none.
  EXPECT_EQ(results(parseFile(dir + "/fusion_group.json"), "main").size(), 49u);
}

TEST(ModelExplorer, FindingsOverlayCountsEveryPlaceAFindingPointsAt) {
  llvm::json::Value report = nullptr;
  std::string dir = emit({"--train", "-D", "batch=8", "-D", "seq=64", model("gpt_tiny.onnx")}, report);
  llvm::json::Value doc = parseFile(dir + "/graph.json");
  auto graphs = checkGraphs(doc);
  double atNodes = 0;
  for (const llvm::json::Value &d : *fileEntry(report).getArray("diagnostics")) {
    atNodes += d.getAsObject()->getObject("location")->getInteger("node_index").hasValue();
    for (const llvm::json::Value &l : *d.getAsObject()->getArray("also_at"))
      atNodes += l.getAsObject()->getInteger("node_index").hasValue();
  }
  EXPECT_GT(atNodes, 0);
  auto findings = results(parseFile(dir + "/findings.json"), "main");
  EXPECT_EQ(sum(findings), atNodes);
  // The node shows each finding's code and severity.
  ASSERT_FALSE(findings.empty());
  std::string text = attr(*graphs.at("main").nodes.at(findings.begin()->first), "graphlint.findings");
  EXPECT_TRUE(llvm::StringRef(text).startswith("GL")) << text;
  EXPECT_TRUE(text.find(" warning: ") != std::string::npos || text.find(" error: ") != std::string::npos ||
              text.find(" note: ") != std::string::npos)
      << text;
}

TEST(ModelExplorer, FxTrainingGraphPutsTheBackwardUnderItsOwnLayer) {
  llvm::json::Value report = nullptr;
  std::string dir =
      emit({"--train", "--precision", "bf16-mixed", sourcePath("tests/fixtures/fx/tiny_llama.train.fx.json")}, report);
  llvm::json::Value doc = parseFile(dir + "/graph.json");
  auto graphs = checkGraphs(doc);
  const GraphView &main = graphs.at("main");
  size_t backward = 0, scopedBackward = 0, layered = 0;
  for (const auto &[id, n] : main.nodes) {
    std::string ns = str(*n, "namespace");
    if (attr(*n, "graphlint.phase") == "backward") {
      ++backward;
      EXPECT_TRUE(llvm::StringRef(ns).startswith("backward")) << id << " " << ns;
      scopedBackward += llvm::StringRef(ns).startswith("backward/");
    }
    layered += ns.find("layers/layers.0") != std::string::npos;
  }
  EXPECT_GT(backward, 100u);
  EXPECT_GT(scopedBackward, backward / 2) << "backward nodes take the module they differentiate";
  EXPECT_GT(layered, 10u);
  // Labels are the aten ops, the full name an attribute.
  size_t mm = 0;
  for (const auto &[id, n] : main.nodes)
    if (str(*n, "label") == "mm") {
      ++mm;
      EXPECT_EQ(attr(*n, "graphlint.op"), "aten::mm");
    }
  EXPECT_GT(mm, 0u);
  const llvm::json::Object &compute = *fileEntry(report).getObject("compute");
  double predicted = compute.getNumber("time_forward_s").getValueOr(0) +
                     compute.getNumber("time_backward_s").getValueOr(0);
  EXPECT_NEAR(sum(results(parseFile(dir + "/predicted_time.json"), "main")), predicted, predicted * 1e-9);
  double peak = fileEntry(report).getObject("memory")->getNumber("peak_allocated_bytes").getValueOr(0);
  EXPECT_EQ(sum(results(parseFile(dir + "/peak_bytes.json"), "main")), peak);
}

TEST(ModelExplorer, ControlFlowBodiesAreSubgraphs) {
  llvm::json::Value report = nullptr;
  std::string dir = emit({model("control_flow.onnx")}, report);
  llvm::json::Value doc = parseFile(dir + "/graph.json");
  auto graphs = checkGraphs(doc);
  ASSERT_TRUE(graphs.count("main/If:then_branch") && graphs.count("main/If:else_branch") &&
              graphs.count("main/Loop:body"));
  std::set<std::string> linked;
  for (const auto &[id, n] : graphs.at("main").nodes)
    if (const llvm::json::Array *subs = n->getArray("subgraphIds"))
      for (const llvm::json::Value &s : *subs)
        linked.insert(s.getAsString()->str());
  EXPECT_EQ(linked, (std::set<std::string>{"main/If:then_branch", "main/If:else_branch", "main/Loop:body"}));
  // A body reads the enclosing graph's values through capture nodes.
  const GraphView &then = graphs.at("main/If:then_branch");
  EXPECT_TRUE(then.nodes.count("/Relu_output_0"));
  for (const char *overlay : {"fusion_group", "predicted_time", "peak_bytes", "findings"})
    EXPECT_TRUE(parseFile(dir + "/" + overlay + ".json").getAsObject()->getObject("main/Loop:body")) << overlay;
}

// A call of a model-local function opens the function's body, a graph of
// its own with its formal inputs as nodes.
TEST(ModelExplorer, LocalFunctionCallsOpenTheFunctionBody) {
  LintOptions opts;
  opts.graphSummary = true;
  FileReport r = lintText(R"(
    <ir_version: 8, opset_import: ["" : 17, "local" : 1]>
    g (float[4] x) => (float[4] y) {
      t = Relu(x)
      y = local.Twice(t)
    }
    <domain: "local", opset_import: ["" : 17]>
    Twice (a) => (b) {
      b = Add(a, a)
    })",
                          opts);
  ASSERT_TRUE(r.graph.present);
  std::string text;
  llvm::raw_string_ostream os(text);
  renderModelExplorer(r, ExplorerFile::Graph, os);
  os.flush();
  auto v = llvm::json::parse(text);
  ASSERT_TRUE(bool(v)) << llvm::toString(v.takeError());
  auto graphs = checkGraphs(*v);
  ASSERT_EQ(graphs.size(), 2u);
  std::string body;
  for (const auto &[id, g] : graphs)
    if (id != "main")
      body = id;
  const llvm::json::Object *call = nullptr;
  for (const auto &[id, n] : graphs.at("main").nodes)
    if (str(*n, "label") == "local::Twice")
      call = n;
  ASSERT_TRUE(call);
  ASSERT_TRUE(call->getArray("subgraphIds"));
  EXPECT_EQ(str(*call, "label"), "local::Twice");
  EXPECT_EQ((*call->getArray("subgraphIds"))[0].getAsString().getValueOr(""), body);
  // The body: its input `a` and the Add reading it twice.
  EXPECT_EQ(graphs.at(body).nodes.size(), 2u);
}

TEST(ModelExplorer, SeveralModelsOneFolderEachAndNoInputOverwritten) {
  std::string dir = tempDir();
  CliResult r = runCli({"--exit-zero", "-q", "--emit-model-explorer", dir + "/me", "-D", "batch=1", "-D", "seq=16",
                        model("resnet18.onnx"), model("gpt_tiny.onnx")});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  for (const char *m : {"resnet18", "gpt_tiny"})
    for (const char *f : {"graph", "fusion_group", "predicted_time", "peak_bytes", "findings"})
      EXPECT_TRUE(parseFile(dir + "/me/" + m + "/" + f + ".json").getAsObject()) << m << " " << f;
  // A model named like one of the files is refused before anything is written.
  std::string copy = dir + "/graph.json";
  writeFile(copy, readFile(sourcePath("tests/fixtures/fx/tiny_llama.train.fx.json")));
  std::string before = readFile(copy);
  CliResult refused = runCli({"--emit-model-explorer", dir, copy});
  EXPECT_EQ(refused.exitCode, 2);
  EXPECT_NE(refused.err.find("refusing to write --emit-model-explorer '" + copy + "'"), std::string::npos)
      << refused.err;
  EXPECT_EQ(readFile(copy), before);
  // A folder that cannot be made is an error (exit 2).
  writeFile(dir + "/plain", "x");
  CliResult blocked = runCli({"--exit-zero", "--emit-model-explorer", dir + "/plain/sub", model("resnet18.onnx")});
  EXPECT_EQ(blocked.exitCode, 2);
  EXPECT_NE(blocked.err.find("cannot write --emit-model-explorer"), std::string::npos) << blocked.err;
}

}  // namespace
