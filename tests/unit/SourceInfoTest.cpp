// The user's own source line and module path, recovered from what exporters
// record on ONNX nodes: Python tracebacks, TorchScript ranges, scoped node
// names and torch.onnx's metadata_props (NodeProto field 9, newer than the
// installed ONNX, so these tests write it as a raw unknown field).
#include "TestSupport.h"

#include "src/onnx/SourceInfo.h"
#include "IrBuilder.h"
#include "graphlint/ir/PythonLocals.h"
#include "graphlint/ir/StackTrace.h"

#include <onnx/onnx_pb.h>

#include <google/protobuf/unknown_field_set.h>

#include <gtest/gtest.h>

#include <regex>
#include <sstream>

using namespace graphlint;
using namespace graphlint::test;

namespace {

TEST(SourceInfo, PythonTracebackFrame) {
  SourceLoc l = parseStackTrace(R"(File "m.py", line 3, in f)");
  EXPECT_EQ(l.file, "m.py");
  EXPECT_EQ(l.line, 3u);
  EXPECT_EQ(l.function, "f");
  EXPECT_TRUE(l.valid());
}

TEST(SourceInfo, TorchScriptRange) {
  SourceLoc l = parseStackTrace("m.py(3): f");
  EXPECT_EQ(l.file, "m.py");
  EXPECT_EQ(l.line, 3u);
  EXPECT_EQ(l.function, "f");
}

TEST(SourceInfo, InnermostUserFrameWinsOverTorchInternals) {
  const char *trace = R"(Traceback (most recent call last):
  File "/home/u/train.py", line 40, in main
    y = model(x)
  File "/home/u/model.py", line 12, in forward
    return self.act(self.fc(x))
  File "/usr/lib/python3/site-packages/torch/nn/modules/linear.py", line 114, in forward
    return F.linear(input, self.weight, self.bias)
)";
  SourceLoc l = parseStackTrace(trace);
  EXPECT_EQ(l.file, "/home/u/model.py");
  EXPECT_EQ(l.line, 12u);
  EXPECT_EQ(l.function, "forward");
}

TEST(SourceInfo, NoFrameGivesAnInvalidLocation) {
  EXPECT_FALSE(parseStackTrace("").valid());
  EXPECT_FALSE(parseStackTrace("just a doc string (not a trace): hello").valid());
  EXPECT_FALSE(parseStackTrace(R"(File "m.py", line x, in f)").valid());
  EXPECT_FALSE(parseStackTrace("notpython.cpp(3): f").valid());
}

TEST(SourceInfo, TraceFramesKeepEachStatementLine) {
  auto frames = parseTraceFrames(R"(File "m.py", line 40, in forward
    h = self.block(
  File "/usr/lib/python3/site-packages/torch/nn/modules/linear.py", line 114, in forward
    return F.linear(input, self.weight, self.bias)
  File "n.py", line 3, in f
)",
                                 8);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[0].file, "m.py");
  EXPECT_EQ(frames[0].line, 40u);
  EXPECT_EQ(frames[0].code, "h = self.block(");
  EXPECT_EQ(frames[1].code, "return F.linear(input, self.weight, self.bias)");
  EXPECT_EQ(frames[2].function, "f");
  EXPECT_EQ(frames[2].code, "");
  EXPECT_EQ(parseTraceFrames(R"(File "m.py", line 1, in f
  File "m.py", line 2, in g)",
                             1)
                .size(),
            1u);
}

TEST(SourceInfo, AssignedNamesOfAStatement) {
  using Names = std::vector<std::string>;
  auto names = [](llvm::StringRef code) {
    Names out;
    for (llvm::StringRef n : assignedNames(code))
      out.push_back(n.str());
    return out;
  };
  EXPECT_EQ(names("h = self.ln(h)"), Names({"h"}));
  EXPECT_EQ(names("attn_output, _ = self.attn("), Names({"attn_output", "_"}));
  EXPECT_EQ(names("(q, k), *rest = f(x)"), Names({}));  // a nested target
  EXPECT_EQ(names("(q, k) = f(x)"), Names({"q", "k"}));
  EXPECT_EQ(names("*head, tail = x.split(2)"), Names({"head", "tail"}));
  EXPECT_EQ(names("out: BaseModelOutput = self.transformer("), Names({"out"}));
  EXPECT_EQ(names("x += self.f(x)"), Names({"x"}));
  EXPECT_EQ(names("a = b = c"), Names({"a"}));
  EXPECT_EQ(names("s = \"a=b\""), Names({"s"}));
  for (const char *none : {"return f(a=b)", "x == y", "self.cache = x", "x[0] = y", "if a <= b:", "f(x) # a = b",
                           "else: x = 1", "y != x", "", "return x"})
    EXPECT_EQ(names(none), Names({})) << none;
}

// Python locals when a call returns fewer graph values than it has names
// (T5's `hidden_states, cross_attn_position_bias, _ = self.layer[1](...)`,
// whose position bias the ONNX exporter folded into a constant): the values
// take the last names, so the attention weights bind `_`, which a module
// does not return, and let go when the block returns, not the model.
TEST(SourceInfo, PythonLocalsBindTheLastNamesWhenValuesAreMissing) {
  test::IrBuilder b;
  Value *x = b.input("x", test::f32({4, 4}));
  Node *s = b.node("Softmax", {x}, {"s"}, {test::f32({4, 4})});
  Node *o = b.node("MatMul", {s->outputs[0], x}, {"o"}, {test::f32({4, 4})});
  Node *r = b.node("Relu", {o->outputs[0]}, {"r"}, {test::f32({4, 4})});
  Node *m = b.node("Mul", {r->outputs[0], r->outputs[0]}, {"m"}, {test::f32({4, 4})});
  Node *head = b.node("Relu", {m->outputs[0]}, {"head"}, {test::f32({4, 4})});
  b.output(head->outputs[0]);
  auto frame = [](unsigned line, const char *function, const char *code) {
    return TraceFrame{"m.py", line, function, code};
  };
  TraceFrame model5 = frame(5, "forward", "z, extra = self.block(x)"), model6 = frame(6, "forward", "return self.head(z)");
  TraceFrame block10 = frame(10, "forward", "h, bias, _ = self.attn(x)");
  TraceFrame attn20 = frame(20, "forward", "out, w = helper(x)");  // helper: no frame of its own
  std::vector<CallSite> sites = {
      {s, {model5, block10, attn20}, {"", "block", "block.attn"}, {}},
      {o, {model5, block10, attn20}, {"", "block", "block.attn"}, {}},
      {r, {model5, frame(11, "forward", "y = self.fc(h)"), frame(30, "forward", "return relu(h)")},
       {"", "block", "block.fc"}, {}},
      {m, {model5, frame(12, "forward", "return y * 2")}, {"", "block"}, {}},
      {head, {model6, frame(40, "forward", "return relu(z)")}, {"", "head"}, {}}};
  holdPythonLocals(b.graph(), sites);
  const std::string *held = s->metadataValue("held.0");
  ASSERT_NE(held, nullptr) << "the attention weights are a local of the block";
  EXPECT_EQ(*held, "m") << "held until the block returns";
}

// transformers' SDPA helper (`attn_output, attn_weights =
// attention_interface(...)`, no frame of its own in a non-strict export)
// returns `attn_output, None`: an operand of the attention op (repeat_kv's
// key copy) is no attention weights, nor is the op's output that a Reshape
// with a constant shape reads, so the layer's `_` holds neither.
TEST(SourceInfo, AnAttentionOperandIsNotTheAttentionWeights) {
  test::IrBuilder b;
  Value *x = b.input("x", test::f32({1, 2, 4, 4}));
  Value *shape = b.param("shape", Type::tensor(DType::Int64, Shape::of({4})));
  Node *kc = b.node("aten::clone", {x}, {"kc"}, {test::f32({1, 2, 4, 4})});
  Node *o = b.node("aten::scaled_dot_product_attention", {x, kc->outputs[0], x}, {"o"}, {test::f32({1, 2, 4, 4})});
  Node *r = b.node("Reshape", {o->outputs[0], shape}, {"r"}, {test::f32({1, 2, 4, 4})});
  Node *p = b.node("Relu", {r->outputs[0]}, {"p"}, {test::f32({1, 2, 4, 4})});
  Node *m = b.node("Mul", {p->outputs[0], p->outputs[0]}, {"m"}, {test::f32({1, 2, 4, 4})});
  Node *head = b.node("Relu", {m->outputs[0]}, {"head"}, {test::f32({1, 2, 4, 4})});
  b.output(head->outputs[0]);
  auto frame = [](unsigned line, const char *code) { return TraceFrame{"m.py", line, "forward", code}; };
  TraceFrame model5 = frame(5, "z = self.layer(x)"), layer10 = frame(10, "h, _ = self.attn(x)");
  TraceFrame attn20 = frame(20, "out, w = attention_interface(x)");
  std::vector<CallSite> sites = {
      {kc, {model5, layer10, attn20}, {"", "layer", "layer.attn"}, {}},
      {o, {model5, layer10, attn20}, {"", "layer", "layer.attn"}, {}},
      {r, {model5, layer10, attn20}, {"", "layer", "layer.attn"}, {}},
      {p, {model5, layer10, frame(21, "return self.proj(out)")}, {"", "layer", "layer.attn", "layer.attn.proj"}, {}},
      {m, {model5, frame(11, "return h * 2")}, {"", "layer"}, {}},
      {head, {frame(6, "return self.head(z)"), frame(40, "return relu(z)")}, {"", "head"}, {}}};
  holdPythonLocals(b.graph(), sites);
  for (const Node *n : {kc, o}) {
    const std::string *held = n->metadataValue("held.0");
    EXPECT_TRUE(held == nullptr || *held != "m") << n->name << " held until " << (held ? *held : "");
  }
}

// A strict (dynamo) torch.export records every frame it inlined: its own
// wrapper (torch), decorators' wrappers and helper functions besides the
// module forwards, and no frame for torch's leaf modules. The forwards pair
// with the modules whose class's file holds them; a wrapper belongs to the
// module call it wraps, a helper to the module it runs in.
TEST(SourceInfo, StrictTraceFramesPairWithTheirModules) {
  auto frame = [](const char *file, unsigned line, const char *function) {
    return TraceFrame{file, line, function, ""};
  };
  CallSite site;
  site.frames = {frame("/v/torch/_dynamo/functional_export.py", 232, "forward"), frame("/p/m.py", 5, "forward"),
                 frame("/p/utils.py", 3, "wrapped_func"), frame("/p/m.py", 20, "forward"),
                 frame("/p/m.py", 30, "helper")};
  site.modules = {"", "attn", "attn.proj"};
  site.moduleTypes = {"m.Model", "m.Attn", "torch.nn.modules.linear.Linear"};
  AlignedFrames a = alignTraceFrames(site);
  ASSERT_EQ(a.frames.size(), 4u) << "torch's own frame is dropped";
  EXPECT_EQ(a.modules, (std::vector<std::string>{"", "attn", "attn", "attn"}))
      << "the wrapper runs in attn's call, the helper inside attn; Linear has no frame";
  EXPECT_EQ(a.helper, (std::vector<bool>{false, true, false, true}));

  site.moduleTypes = {"m.Model", "other.Attn", "torch.nn.modules.linear.Linear"};
  a = alignTraceFrames(site);
  EXPECT_EQ(a.modules, (std::vector<std::string>{"", "attn", "attn", "attn"}))
      << "a forward inherited from another file takes the next module that is not torch's";

  site.moduleTypes.clear();
  EXPECT_TRUE(alignTraceFrames(site).frames.empty()) << "without the classes a container cannot be told apart";

  site.modules = {""};
  site.moduleTypes = {"m.Model"};
  a = alignTraceFrames(site);
  EXPECT_EQ(a.modules, (std::vector<std::string>{"", "", "", ""}));
  EXPECT_EQ(a.helper, (std::vector<bool>{false, true, true, true}))
      << "a forward with no module left is a call inside the module around it (`super().forward(x)`)";
  site.frames.insert(site.frames.begin(), frame("/p/run.py", 3, "main"));
  a = alignTraceFrames(site);
  ASSERT_EQ(a.frames.size(), 4u) << "the frames of the script that called the export are dropped";
  EXPECT_EQ(a.frames[0].file, "/p/m.py");

  site.frames = {frame("/p/m.py", 20, "forward")};
  site.modules.clear();
  site.moduleTypes.clear();
  EXPECT_TRUE(alignTraceFrames(site).frames.empty()) << "a forward and no module: not paired";

  CallSite plain;  // non-strict: one frame per module forward, kept as it is
  plain.frames = {frame("/p/m.py", 5, "forward"), frame("/p/m.py", 9, "_forward_impl")};
  plain.modules = {"", "body"};
  a = alignTraceFrames(plain);
  EXPECT_EQ(a.modules, plain.modules);
  EXPECT_EQ(a.helper, (std::vector<bool>{false, false}));
}

// Llama under a strict export: the helper's frames are in the trace, so its
// locals live until it returns (repeat_kv's key copy), and the attention
// weights it returns pass through a decorator's `return func(...)` to the
// layer's `h, _ = self.attn(x)`, which holds them until the layer returns.
TEST(SourceInfo, StrictTraceHoldsHelperLocalsAndWhatWrappersReturn) {
  test::IrBuilder b;
  Value *x = b.input("x", test::f32({4, 4}));
  Node *kc = b.node("Relu", {x}, {"kc"}, {test::f32({4, 4})});
  Node *s = b.node("Softmax", {kc->outputs[0]}, {"s"}, {test::f32({4, 4})});
  Node *o = b.node("MatMul", {s->outputs[0], x}, {"o"}, {test::f32({4, 4})});
  Node *p = b.node("Relu", {o->outputs[0]}, {"p"}, {test::f32({4, 4})});
  Node *m = b.node("Mul", {p->outputs[0], p->outputs[0]}, {"m"}, {test::f32({4, 4})});
  Node *head = b.node("Relu", {m->outputs[0]}, {"head"}, {test::f32({4, 4})});
  b.output(head->outputs[0]);
  auto frame = [](const char *file, unsigned line, const char *function, const char *code) {
    return TraceFrame{file, line, function, code};
  };
  TraceFrame dyn = frame("/v/torch/_dynamo/functional_export.py", 232, "forward", "return self.m(*args)");
  TraceFrame model5 = frame("/p/m.py", 5, "forward", "h = self.layer(x)");
  TraceFrame layer10 = frame("/p/m.py", 10, "forward", "h, _ = self.attn(x)");
  TraceFrame wrap = frame("/p/utils.py", 3, "wrapped_func", "return func(*args, **kwargs)");
  TraceFrame attn20 = frame("/p/m.py", 20, "forward", "out, w = helper(x)");
  const std::vector<std::string> types = {"m.Model", "m.Layer", "m.Attn"};
  std::vector<CallSite> sites = {
      {kc, {dyn, model5, layer10, wrap, attn20, frame("/p/m.py", 29, "helper", "k = repeat(x)")},
       {"", "layer", "layer.attn"}, types},
      {s, {dyn, model5, layer10, wrap, attn20, frame("/p/m.py", 30, "helper", "w = softmax(k)")},
       {"", "layer", "layer.attn"}, types},
      {o, {dyn, model5, layer10, wrap, attn20, frame("/p/m.py", 31, "helper", "out = w @ x")},
       {"", "layer", "layer.attn"}, types},
      {p, {dyn, model5, layer10, wrap, frame("/p/m.py", 21, "forward", "return self.proj(out), w")},
       {"", "layer", "layer.attn", "layer.attn.proj"},
       {"m.Model", "m.Layer", "m.Attn", "torch.nn.modules.linear.Linear"}},
      {m, {dyn, model5, frame("/p/m.py", 11, "forward", "return h * 2")}, {"", "layer"}, {"m.Model", "m.Layer"}},
      {head, {dyn, frame("/p/m.py", 6, "forward", "return self.head(h)")}, {"", "head"},
       {"m.Model", "torch.nn.modules.linear.Linear"}}};
  holdPythonLocals(b.graph(), sites);
  const std::string *key = kc->metadataValue("held.0");
  ASSERT_NE(key, nullptr) << "the key copy is a local of the helper";
  EXPECT_EQ(*key, "o") << "held until the helper returns";
  const std::string *weights = s->metadataValue("held.0");
  ASSERT_NE(weights, nullptr) << "the attention weights the helper returned reach the layer's `_`";
  EXPECT_EQ(*weights, "m") << "held until the layer returns";
}

TEST(SourceInfo, ModulePathFromScopedNodeName) {
  EXPECT_EQ(onnxio::modulePathFromScopedName("/layer1/layer1.0/conv1/Conv"), "layer1.0.conv1");
  EXPECT_EQ(onnxio::modulePathFromScopedName("/fc/Gemm"), "fc");
  EXPECT_EQ(onnxio::modulePathFromScopedName("/Relu"), "");
  EXPECT_EQ(onnxio::modulePathFromScopedName("Conv_12"), "");
  EXPECT_EQ(onnxio::modulePathFromScopedName(""), "");
}

TEST(SourceInfo, RealExportCarriesModulePaths) {
  auto m = importModelFile(sourcePath("models/resnet18.onnx"), {});
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  bool found = false;
  for (const auto &n : (*m)->graph->nodes())
    if (n->name == "/layer1/layer1.0/conv1/Conv") {
      EXPECT_EQ(n->modulePath, "layer1.0.conv1");
      found = true;
    }
  EXPECT_TRUE(found);
}

// Appends metadata_props entries (field 9 of NodeProto in ONNX >= 1.16) to a
// node as unknown fields, so the bytes look like a newer exporter's.
std::string withNodeMetadata(const std::string &modelBytes, int nodeIndex,
                             const std::vector<std::pair<std::string, std::string>> &props) {
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(modelBytes));
  onnx::NodeProto *n = m.mutable_graph()->mutable_node(nodeIndex);
  auto *unknown = n->GetReflection()->MutableUnknownFields(n);
  for (const auto &[k, v] : props) {
    onnx::StringStringEntryProto kv;
    kv.set_key(k);
    kv.set_value(v);
    unknown->AddLengthDelimited(9, kv.SerializeAsString());
  }
  return m.SerializeAsString();
}

const char *kCustomOpModel = R"(
  <ir_version: 8, opset_import: ["" : 17, "com.acme" : 1]>
  g (float[N, 16] x) => (float[N, 16] y) {
    h = Relu(x)
    y = com.acme.FancyNorm(h)
  })";

TEST(SourceInfo, NodeMetadataStackTraceGivesSourceLoc) {
  std::string bytes = withNodeMetadata(onnxFromText(kCustomOpModel), 1,
                                       {{"pkg.torch.onnx.name_scopes", "['', 'encoder', 'encoder.norm']"},
                                        {"pkg.torch.onnx.stack_trace",
                                         "File \"model.py\", line 27, in forward\n    y = self.norm(h)"}});
  std::string dir = tempDir();
  auto m = importOnnxBytes(bytes, dir + "/model.onnx", {});
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  const Node &n = *(*m)->graph->nodes()[1];
  ASSERT_EQ(n.opType, "FancyNorm");
  EXPECT_EQ(n.metadata.size(), 2u);
  EXPECT_EQ(n.loc.file, "model.py");
  EXPECT_EQ(n.loc.line, 27u);
  EXPECT_EQ(n.loc.function, "forward");
  EXPECT_EQ(n.modulePath, "encoder.norm");
  // Nodes without metadata keep an invalid location.
  EXPECT_FALSE((*m)->graph->nodes()[0]->loc.valid());
}

TEST(SourceInfo, DocStringTraceIsTheFallback) {
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(onnxFromText(kCustomOpModel)));
  m.mutable_graph()->mutable_node(1)->set_doc_string("/src/net.py(88): forward\n");
  auto im = importOnnxBytes(m.SerializeAsString(), tempDir() + "/model.onnx", {});
  ASSERT_TRUE(bool(im)) << llvm::toString(im.takeError());
  const Node &n = *(*im)->graph->nodes()[1];
  EXPECT_EQ(n.loc.file, "/src/net.py");
  EXPECT_EQ(n.loc.line, 88u);
}

TEST(SourceInfo, GccFormatPointsAtTheUsersLine) {
  std::string bytes = withNodeMetadata(onnxFromText(kCustomOpModel), 1,
                                       {{"pkg.torch.onnx.stack_trace", "File \"model.py\", line 27, in forward"}});
  std::string path = tempDir() + "/exported.onnx";
  writeFile(path, bytes);
  CliResult r = runCli({"--format", "gcc", path});
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  // The GL002 finding on FancyNorm lands on the user's source line; the next
  // line, a note at the model file, names the node.
  std::regex line(R"(^model\.py:27:1: warning: operator 'FancyNorm' .* \[GL002 unknown-operator\]$)");
  std::regex node(R"(^.*exported\.onnx:2:1: note: (.*: )?node #2 ('.*' )?\(com\.acme::FancyNorm\)$)");
  bool matched = false, named = false;
  std::istringstream in(r.out);
  for (std::string l, prev; std::getline(in, l); prev = l) {
    matched |= std::regex_match(l, line);
    named |= std::regex_match(l, node) && std::regex_match(prev, line);
  }
  EXPECT_TRUE(matched) << r.out;
  EXPECT_TRUE(named) << r.out;

  // The text format leads with the user's line; the node follows, with the
  // model file as a note.
  CliResult t = runCli({"--no-color", path});
  EXPECT_NE(t.out.find("model.py:27: warning[GL002]"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("(com.acme::FancyNorm) in " + path), std::string::npos) << t.out;
  // JSON carries it as structured data.
  CliResult j = runCli({"--format", "json", path});
  EXPECT_NE(j.out.find(R"("file": "model.py")"), std::string::npos) << j.out;
  EXPECT_NE(j.out.find(R"("line": 27)"), std::string::npos) << j.out;
}

}  // namespace
