// Training-step predictions that depend on what the graph says about its own
// training (issue 15): a joint graph is costed as it is (against PyTorch's
// measured peak for the same step), which initializers are parameters, the
// activation-checkpointing options, one precision policy for memory and
// communication, and the provenance of the figures (unknown sizes and costs).
#include "IrBuilder.h"
#include "TestSupport.h"

#include "graphlint/analyses/ComputeModel.h"
#include "graphlint/analyses/MemoryPlan.h"
#include "graphlint/analyses/OpFlops.h"
#include "graphlint/analyses/StepTimeline.h"
#include "graphlint/base/SetupKeys.h"
#include "graphlint/report/Reporters.h"

#include <fmt/format.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/MemoryBuffer.h>

#include <gtest/gtest.h>

#include <cmath>

using namespace graphlint;
using namespace graphlint::test;

namespace {

constexpr uint64_t kMiB = 1 << 20;

std::unique_ptr<Model> importFixture(const std::string &rel) {
  ImportOptions io;
  auto m = importModelFile(sourcePath(rel), io);
  EXPECT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
  return m ? std::move(*m) : nullptr;
}

// A fixture with the first `from` in its text replaced by `to`, imported
// from a copy named `name` in the test's temporary folder.
llvm::Expected<std::unique_ptr<Model>> importEdited(const std::string &rel, const std::string &from,
                                                    const std::string &to, const std::string &name) {
  std::string text = readFile(sourcePath(rel));
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos)
    text.replace(at, from.size(), to);
  std::string path = tempDir() + "/" + name;
  writeFile(path, text);
  return importModelFile(path, {});
}

graphlint::Setup adam(Precision p = Precision::FP32) {
  graphlint::Setup s;
  s.train = true;
  s.optimizer = Optimizer::Adam;
  s.precision = p;
  return s;
}

// tests/fixtures/fx/joint_mlp.py: the joint graph of one MLP step. Its
// backward nodes are the backward: the FLOPs are the graph's own (nothing
// synthesised on top), the forward FLOPs match the forward-only export, and
// the peak matches what PyTorch held for the same eager Adam step.
TEST(JointGraph, CostedAsItIsAgainstTheMeasuredStep) {
  auto joint = importFixture("tests/fixtures/fx/joint_mlp.train.fx.json");
  auto fwd = importFixture("tests/fixtures/fx/joint_mlp.fx.json");
  ASSERT_TRUE(joint && fwd);
  ASSERT_TRUE(joint->graph->hasBackward());
  ASSERT_FALSE(fwd->graph->hasBackward());
  double forwardNodes = 0, backwardNodes = 0;
  for (const auto &n : joint->graph->nodes())
    (n->backwardPhase ? backwardNodes : forwardNodes) += nodeFlops(*n).value_or(0);
  ASSERT_GT(backwardNodes, forwardNodes);  // dX and dW per matmul

  graphlint::Setup s = adam();
  AnalysisContext jc(*joint, s), fc(*fwd, s);
  const ComputeModel &jm = jc.get<ComputeModel>();
  EXPECT_TRUE(jm.joint());
  EXPECT_DOUBLE_EQ(jm.forwardTotal().flops, forwardNodes);
  EXPECT_DOUBLE_EQ(jm.backwardTotal().flops, backwardNodes);
  EXPECT_NEAR(jm.forwardTotal().flops, fc.get<ComputeModel>().forwardTotal().flops,
              0.01 * jm.forwardTotal().flops);
  // The communication model finds each parameter's gradient in the graph.
  for (const TrainableParam &p : jm.params())
    EXPECT_GE(p.gradGroup, static_cast<int>(jm.backwardStart())) << p.value->name;

  // joint_mlp.measured.json: validation/validate_memory.py's LiveStorages, torch 1.13.
  auto buf = llvm::MemoryBuffer::getFile(sourcePath("tests/fixtures/fx/joint_mlp.measured.json"));
  ASSERT_TRUE(static_cast<bool>(buf));
  auto truth = llvm::json::parse((*buf)->getBuffer());
  ASSERT_TRUE(static_cast<bool>(truth));
  const llvm::json::Object *train = truth->getAsObject()->getObject("training");
  double measured = *train->getNumber("peak_allocated_bytes");
  double resident = *train->getNumber("resident_bytes");
  const MemorySummary &m = jc.get<MemoryPlan>().summary();
  double predictedResident = static_cast<double>(m.paramsBytes + m.optimizerBytes + m.inputsBytes);
  double beyond = (static_cast<double>(m.peakAllocatedBytes) - predictedResident) / (measured - resident) - 1;
  EXPECT_LT(std::abs(beyond), 0.03) << "predicted " << m.peakAllocatedBytes << ", measured " << measured;
  // Parameter gradients are the graph's: one per trained parameter, fp32.
  EXPECT_EQ(m.gradsBytes, m.paramsBytes);
}

// tests/fixtures/fx/packed_projection.py: three selects of one projection,
// whose gradients autograd's InputBuffer sums. The trace ran under
// graphlint-export's dispatch mode, so its sums are out of place; the
// exporter marks them (`accumulates`) and the plan adds in place where eager
// on torch 2.x does, into a buffer it alone holds: the peak measured without
// a mode. Traced by torch 1.x, whose autograd always sums into a new buffer,
// the same graph keeps the sums apart: the peak a dispatch mode measures.
TEST(JointGraph, GradientSumsAreInPlaceOnTorch2AndApartOnTorch1) {
  auto buf = llvm::MemoryBuffer::getFile(sourcePath("tests/fixtures/fx/packed_projection.measured.json"));
  ASSERT_TRUE(static_cast<bool>(buf));
  auto truth = llvm::json::parse((*buf)->getBuffer());
  ASSERT_TRUE(static_cast<bool>(truth));
  auto measured = [&](llvm::StringRef key) { return static_cast<uint64_t>(*truth->getAsObject()->getNumber(key)); };
  auto beyondResident = [](const Model &m) {
    graphlint::Setup s = adam();
    s.kernels = Kernels::Cpu;
    AnalysisContext ctx(m, s);
    const MemorySummary &sum = ctx.get<MemoryPlan>().summary();
    return forwardBackwardPeak(sum) - (sum.paramsBytes + sum.inputsBytes + sum.optimizerBytes);
  };
  auto torch2 = importFixture("tests/fixtures/fx/packed_projection.train.fx.json");
  ASSERT_TRUE(torch2);
  unsigned marked = 0;
  for (const auto &n : torch2->graph->nodes())
    marked += n->metadataValue("accumulates") != nullptr;
  EXPECT_EQ(marked, 2u);  // q's and k's gradients, then v's
  EXPECT_EQ(beyondResident(*torch2), measured("in_place"));

  auto torch1 = importEdited("tests/fixtures/fx/packed_projection.train.fx.json", "\"torch\":\"2.",
                             "\"torch\":\"1.", "packed_projection_torch1.fx.json");
  ASSERT_TRUE(static_cast<bool>(torch1)) << llvm::toString(torch1.takeError());
  EXPECT_EQ(beyondResident(**torch1), measured("summed_apart"));

  // The training step synthesised from the forward export sums the same way,
  // by the torch that exported it (an ONNX file: its producer).
  auto forward2 = importFixture("tests/fixtures/fx/packed_projection.fx.json");
  ASSERT_TRUE(forward2);
  EXPECT_EQ(beyondResident(*forward2), measured("in_place"));
  auto forward1 = importEdited("tests/fixtures/fx/packed_projection.fx.json", "\"torch\":\"2.", "\"torch\":\"1.",
                               "packed_projection_forward_torch1.fx.json");
  ASSERT_TRUE(static_cast<bool>(forward1)) << llvm::toString(forward1.takeError());
  EXPECT_EQ(beyondResident(**forward1), measured("summed_apart"));
}

// graphlint-export records which backward tensor is the gradient of which
// forward activation (`grad_of`): the memory plan then names an
// activation's gradient after it and attributes it to its producer, as for
// an ONNX model's synthesised backward (GL202 sums per producer), instead of
// to whichever backward op wrote it.
TEST(JointGraph, ActivationGradientsBelongToTheirActivation) {
  auto joint = importFixture("tests/fixtures/fx/joint_mlp.train.fx.json");
  ASSERT_TRUE(joint);
  const Node *mm = nullptr;
  for (const auto &n : joint->graph->nodes())
    if (n->name == "mm")
      mm = n.get();
  ASSERT_NE(mm, nullptr);
  ASSERT_EQ(mm->outputGradientOf.size(), 1u);
  ASSERT_NE(mm->outputGradientOf[0], nullptr);
  EXPECT_EQ(mm->outputGradientOf[0]->name, "relu") << "fc2's backward mm computes the gradient of relu";
  graphlint::Setup s = adam();
  s.optimizer = Optimizer::SGD;  // no optimizer state: the peak is in backward
  AnalysisContext ctx(*joint, s);
  unsigned gradients = 0;
  for (const MemoryPlan::Contributor &c : ctx.get<MemoryPlan>().atPeak()) {
    // The seed (ones_like(out), the caller's backward argument) is no
    // activation's gradient computed by the graph.
    if (c.kind != MemoryKind::Gradient || !c.value || (c.value->producer && c.value->producer->opType == "ones_like"))
      continue;
    ++gradients;
    ASSERT_NE(c.producer, nullptr);
    EXPECT_FALSE(c.producer->backwardPhase) << c.value->name << " is attributed to backward node "
                                            << c.producer->name;
  }
  EXPECT_GT(gradients, 0u) << "an activation gradient is live at the backward peak";

  // A name that is not a forward value is an import error naming the field.
  auto m = importEdited("tests/fixtures/fx/joint_mlp.train.fx.json", "\"grad_of\":[\"relu\"]", "\"grad_of\":[\"mm\"]",
                        "bad_grad_of.fx.json");
  ASSERT_FALSE(static_cast<bool>(m));
  std::string err = llvm::toString(m.takeError());
  EXPECT_NE(err.find("grad_of[0]"), std::string::npos) << err;
  EXPECT_NE(err.find("'mm' is not the output of an earlier forward node"), std::string::npos) << err;
}

// An eval() forward export has no dropout op: the exporter notes the
// module's p on the value it passes through, and a training step predicted
// from that graph saves the mask (bool) and the new output dropout makes.
TEST(Dropout, EvalExportCountsTheMaskInTraining) {
  auto m = importFixture("tests/fixtures/fx/dropout_mlp.fx.json");
  ASSERT_TRUE(m);
  const Node *marked = nullptr;
  for (const auto &n : m->graph->nodes())
    if (!n->outputDropout.empty() && n->outputDropout[0] > 0)
      marked = n.get();
  ASSERT_NE(marked, nullptr);
  EXPECT_EQ(marked->opType, "relu");
  EXPECT_FLOAT_EQ(marked->outputDropout[0], 0.1f);
  graphlint::Setup s = adam();
  uint64_t with = AnalysisContext(*m, s).get<MemoryPlan>().summary().activationsBytes;
  const_cast<Node *>(marked)->outputDropout.clear();
  uint64_t without = AnalysisContext(*m, s).get<MemoryPlan>().summary().activationsBytes;
  EXPECT_EQ(with - without, 32u * 256 * 4 + 32u * 256);  // f32[32,256] output + its bool mask
  s.train = false;  // inference: dropout is the identity
  uint64_t inference = AnalysisContext(*m, s).get<MemoryPlan>().summary().peakAllocatedBytes;
  const_cast<Node *>(marked)->outputDropout.push_back(0.1f);
  EXPECT_EQ(AnalysisContext(*m, s).get<MemoryPlan>().summary().peakAllocatedBytes, inference);
}

// A causal mask registered as a buffer reaches the output only through a
// comparison: it is not a parameter (no gradient, no optimizer state, no
// DDP traffic). ONNX training info, when present, decides instead.
TEST(TrainableParams, OnnxMaskBufferIsNotTrained) {
  IrBuilder b;
  Value *x = b.input("x", f32({64, 256}));
  Value *w = b.param("W", f32({256, 256}));
  Value *mask = b.param("mask", f32({64, 256}));
  Value *zero = b.param("zero", f32({1}));
  Value *h = b.node("MatMul", {x, w}, {"h"}, {f32({64, 256})})->outputs[0];
  Value *keep = b.node("Equal", {mask, zero}, {"keep"}, {tensorOf(DType::Bool, {64, 256})})->outputs[0];
  b.output(b.node("Where", {keep, h, zero}, {"y"}, {f32({64, 256})})->outputs[0]);
  graphlint::Setup s = adam();
  s.worldSize = 8;
  EXPECT_FALSE(s.resolveMesh());
  AnalysisContext ctx(b.model(), s);
  const MemorySummary &m = ctx.get<MemoryPlan>().summary();
  EXPECT_EQ(m.gradsBytes, 256u * 256 * 4);
  EXPECT_EQ(m.optimizerBytes, 2u * 256 * 256 * 4);
  ASSERT_EQ(ctx.get<ComputeModel>().params().size(), 1u);
  EXPECT_EQ(ctx.get<ComputeModel>().params()[0].value, w);

  // training_info says W is frozen and the mask is trained: it wins.
  for (const auto &p : b.graph().params())
    p->trained = p->value == mask;
  AnalysisContext ctx2(b.model(), s);
  EXPECT_EQ(ctx2.get<MemoryPlan>().summary().gradsBytes, 64u * 256 * 4);
}

// Four blocks of MatMul -> Relu -> MatMul under blocks.i: without
// checkpointing each block saves its input and its Relu (2 MiB per block);
// per-layer checkpointing (torch.utils.checkpoint around each block) keeps
// only each block's input and the output; sqrt(n) segments cut elsewhere.
TEST(Recompute, PerLayerKeepsOnlyEachBlocksInput) {
  IrBuilder b;
  Value *x = b.input("x", f32({256, 1024}));  // 1 MiB
  Value *cur = b.node("Relu", {x}, {"stem"}, {f32({256, 1024})})->outputs[0];
  b.graph().nodes().back()->modulePath = "stem";
  for (int i = 0; i < 4; ++i) {
    std::string p = "blocks." + std::to_string(i);
    Value *w1 = b.param(p + ".fc1.weight", f32({1024, 1024}));
    Value *w2 = b.param(p + ".fc2.weight", f32({1024, 1024}));
    Node *fc1 = b.node("MatMul", {cur, w1}, {p + ".h"}, {f32({256, 1024})});
    Node *act = b.node("Relu", {fc1->outputs[0]}, {p + ".r"}, {f32({256, 1024})});
    Node *fc2 = b.node("MatMul", {act->outputs[0], w2}, {p + ".y"}, {f32({256, 1024})});
    fc1->modulePath = p + ".fc1";
    act->modulePath = p + ".act";
    fc2->modulePath = p + ".fc2";
    cur = fc2->outputs[0];
  }
  b.output(cur);
  std::vector<llvm::StringRef> layers = checkpointLayers(b.graph());
  EXPECT_EQ(layers[1], "blocks.0");
  EXPECT_EQ(layers[0], "");
  graphlint::Setup s = adam();
  auto plan = [&](Recompute r) {
    s.recompute = r;
    AnalysisContext ctx(b.model(), s);
    return ctx.get<MemoryPlan>().summary();
  };
  MemorySummary none = plan(Recompute::None), layer = plan(Recompute::Layer), sqrtN = plan(Recompute::Sqrt);
  // none: the stem output and 4 x (Relu output + block output) are saved.
  EXPECT_EQ(none.activationsBytes, 9 * kMiB);
  // layer: the stem output and each block's output (the next block's input, the graph output).
  EXPECT_EQ(layer.activationsBytes, 5 * kMiB);
  EXPECT_LT(sqrtN.activationsBytes, none.activationsBytes);
  EXPECT_EQ(layer.recompute, "layer");
  EXPECT_EQ(sqrtN.recompute, "sqrt");
  EXPECT_EQ(recomputeFromName("full"), Recompute::Layer);
  // The backward reruns the checkpointed forward: its FLOPs, not the stem's.
  s.recompute = Recompute::Layer;
  AnalysisContext ctx(b.model(), s);
  const ComputeModel &cm = ctx.get<ComputeModel>();
  EXPECT_NEAR(cm.recomputedFlops(), 8 * 2.0 * 256 * 1024 * 1024, 5 * 256 * 1024.0);  // + the Relus at most
}

// bf16-mixed: 2-byte gradients in memory and on the wire.
TEST(PrecisionPolicy, OneElementSizeForGradientsInMemoryAndTraffic) {
  IrBuilder b;
  Value *x = b.input("x", f32({8, 1024}));
  Value *w = b.param("W", f32({1024, 1024}));
  b.output(b.node("MatMul", {x, w}, {"y"}, {f32({8, 1024})})->outputs[0]);
  LintOptions opts;
  opts.setup = adam(Precision::BF16Mixed);
  opts.setup.worldSize = 8;
  opts.setup.target = "A100-80GB";
  EXPECT_FALSE(opts.setup.resolveMesh());
  FileReport r = lintModel(b.model(), opts);
  const double psi = 1024.0 * 1024.0;
  EXPECT_EQ(r.memory.gradsBytes, 2 * psi);
  ASSERT_TRUE(r.cost.communication.present);
  EXPECT_EQ(r.cost.communication.elementBytes, 2);
  double bucketBytes = 0;
  for (const auto &bk : r.cost.communication.buckets)
    bucketBytes += bk.bytes;
  EXPECT_EQ(bucketBytes, 2 * psi);
  EXPECT_EQ(precisionPolicy(Precision::FP32).gradBytes, 4u);
  EXPECT_EQ(precisionPolicy(Precision::BF16).momentBytes, 2u);
}

// Unknown sizes make the memory figures lower bounds: the summary says so and
// GL201 says "at least".
TEST(Provenance, UnknownSizesMakeLowerBounds) {
  IrBuilder b;
  Value *x = b.input("x", f32({1 << 14, 1 << 14}));  // 1 GiB
  Value *cur = x;
  for (int i = 0; i < 10; ++i) {
    Type unknown = f32({1});
    unknown.shape.rankKnown = false;
    cur = b.node("Relu", {cur}, {"u" + std::to_string(i)}, {unknown})->outputs[0];
  }
  b.output(cur);
  LintOptions opts;
  opts.setup.target = "L4";
  opts.setup.dims.clear();
  FileReport r = lintModel(b.model(), opts);
  EXPECT_EQ(r.memory.unsizedTensors, 10u);
  EXPECT_EQ(r.memory.tensors, 11u);
  EXPECT_TRUE(r.memory.lowerBound());
  std::string text;
  llvm::raw_string_ostream os(text);
  renderMemoryText(r.memory, "m", os);
  EXPECT_NE(os.str().find("provenance: 10 of 11 tensors of unknown size"), std::string::npos) << text;
  EXPECT_NE(os.str().find("LOWER BOUNDS"), std::string::npos) << text;
  // A 1 GiB input fits a 24 GiB L4; a 24 GiB context reserve does not: a
  // lower bound that exceeds still exceeds, and GL201 says "at least".
  opts.setup.ruleOptions["GL201"]["context-mib"] = 24 * 1024;
  FileReport over = lintModel(b.model(), opts);
  bool found = false;
  for (const Diagnostic &d : over.diagnostics)
    if (d.code == "GL201") {
      found = true;
      EXPECT_NE(d.message.find("is at least"), std::string::npos) << d.message;
    }
  EXPECT_TRUE(found);
}

}  // namespace

// Python locals and module containers (graphlint-export's `held` and
// `module_containers`, docs/fx-format.md): a chain of four 1 MiB sigmoids.
// Without them two activations are live at a time; `held` keeps the first
// one until the last node, as a Python local bound to it would; a prefix the
// exporter calls a container (an nn.ModuleList) holds no arguments, where a
// called module holds them to its end.
namespace {

std::string sigmoidChain(const char *firstHeld, const char *containers, bool inBlocks) {
  std::string nodes;
  const char *names[] = {"a", "b", "c", "d"};
  for (int i = 0; i < 4; ++i) {
    std::string module = inBlocks && i > 0 ? fmt::format("blocks.{}.f", i - 1) : "";
    nodes += fmt::format(R"({}{{"name":"{}","op":"aten::sigmoid","inputs":["{}"],"outputs":[{{"name":"{}",
      "shape":[262144],"dtype":"float32"}}],"module":"{}"{}}})",
                         i ? "," : "", names[i], i ? names[i - 1] : "x", names[i], module,
                         i == 0 && firstHeld ? fmt::format(R"(,"held":["{}"])", firstHeld) : "");
  }
  return fmt::format(R"({{"format":"graphlint-fx","version":2,"params":[],{}
    "inputs":[{{"name":"x","shape":[262144],"dtype":"float32","device":"cpu"}}],"nodes":[{}],"outputs":["d"]}})",
                     containers ? fmt::format(R"("module_containers":["{}"],)", containers) : "", nodes);
}

uint64_t activationPeak(const std::string &json) {
  auto m = importFxBytes(json, "chain.fx.json", {});
  EXPECT_TRUE(static_cast<bool>(m)) << (m ? "" : llvm::toString(m.takeError()));
  if (!m)
    return 0;
  graphlint::Setup s;
  AnalysisContext ctx(**m, s);
  const MemorySummary &sum = ctx.get<MemoryPlan>().summary();
  return sum.peakAllocatedBytes - sum.inputsBytes - sum.paramsBytes;
}

}  // namespace

TEST(MemoryPlan, PythonLocalsHeldAndModuleContainers) {
  EXPECT_EQ(activationPeak(sigmoidChain(nullptr, nullptr, false)), 2 * kMiB);
  EXPECT_EQ(activationPeak(sigmoidChain("d", nullptr, false)), 3 * kMiB);
  // `a` is read inside blocks.0 only: the `blocks` prefix would hold it to blocks.2.
  EXPECT_EQ(activationPeak(sigmoidChain(nullptr, nullptr, true)), 3 * kMiB);
  EXPECT_EQ(activationPeak(sigmoidChain(nullptr, "blocks", true)), 2 * kMiB);
  // A held entry that is not a node name is an error naming the field.
  std::string bad = sigmoidChain("d", nullptr, false);
  bad.replace(bad.find(R"(["d"])"), 5, "[3]");
  auto m = importFxBytes(bad, "bad.fx.json", {});
  ASSERT_FALSE(static_cast<bool>(m));
  EXPECT_NE(llvm::toString(m.takeError()).find("nodes[0].held[0]: expected null or a node name"), std::string::npos);
}

// --recompute layer on a joint graph (docs/memory.md "Joint graphs"): two
// blocks of two 1 MiB sigmoids (blocks.0: a0, b0; blocks.1: a1, b1), each
// saving its result, then their backward. Plain, the forward leaves a0, b0,
// a1, b1 for backward, and the peak is at gb0 = sigmoid_backward(ga1, a1):
// those four, the ones_like seed g, ga1 and gb0, 7 MiB. Checkpointed, each
// block keeps only what leaves it (b0, the input of blocks.1; b1, the
// output): a0 and a1 die at their last forward reader. Before gb0, blocks.1
// runs again up to a1 (its last saved tensor: b1 is still held) and a1' is
// rebuilt: b0, b1, g, ga1, a1', gb0, 6 MiB. blocks.0's recompute (a0',
// before gx) comes after b0 and gb0 died: 5 MiB.
namespace {

/// Appends a node with one [262144] fp32 output named after it to `nodes`,
/// the list of a joint FX graph; `fields` is JSON put before its phase
/// (`"module":"blocks.0.f",`, `"attrs":{...},`), `device` that of the output.
void addJointNode(std::string &nodes, const char *name, const char *op, std::initializer_list<const char *> inputs,
                  const std::string &fields, bool backward, const char *device = nullptr) {
  std::string in;
  for (const char *i : inputs)
    in += fmt::format(R"({}"{}")", in.empty() ? "" : ",", i);
  std::string dev = device ? fmt::format(R"(,"device":"{}")", device) : "";
  nodes += fmt::format(R"({}{{"name":"{}","op":"{}","inputs":[{}],"outputs":[{{"name":"{}","shape":[262144],
      "dtype":"float32"{}}}],{}"phase":"{}"}})",
                       nodes.empty() ? "" : ",", name, op, in, name, dev, fields, backward ? "backward" : "forward");
}

std::string twoBlockJointGraph() {
  std::string nodes;
  auto node = [&](const char *name, const char *op, std::initializer_list<const char *> inputs, const char *module,
                  bool backward) {
    addJointNode(nodes, name, op, inputs, fmt::format(R"("module":"{}",)", module), backward);
  };
  node("a0", "aten::sigmoid", {"x"}, "blocks.0.f", false);
  node("b0", "aten::sigmoid", {"a0"}, "blocks.0.g", false);
  node("a1", "aten::sigmoid", {"b0"}, "blocks.1.f", false);
  node("b1", "aten::sigmoid", {"a1"}, "blocks.1.g", false);
  node("g", "aten::ones_like", {"b1"}, "", true);
  node("ga1", "aten::sigmoid_backward", {"g", "b1"}, "", true);
  node("gb0", "aten::sigmoid_backward", {"ga1", "a1"}, "", true);
  node("ga0", "aten::sigmoid_backward", {"gb0", "b0"}, "", true);
  node("gx", "aten::sigmoid_backward", {"ga0", "a0"}, "", true);
  return fmt::format(R"({{"format":"graphlint-fx","version":2,"mode":"train","params":[],
    "inputs":[{{"name":"x","shape":[262144],"dtype":"float32","device":"cpu"}}],"nodes":[{}],"outputs":["b1"]}})",
                     nodes);
}

}  // namespace

// A joint graph's native_dropout (make_fx's decomposition of F.dropout) keeps
// a bool mask on CUDA; on the CPU (--kernels cpu) eager's at::dropout is `input * noise`, the
// noise of the input's dtype, which MulBackward keeps instead: 4 bytes per
// element for an fp32 input. A [1 MiB] fp32 input: 1 MiB in, 1 MiB out, a
// 256 KiB or a 1 MiB mask, and the seed gradient.
namespace {

std::string jointDropout(const char *device) {
  auto out = [&](const char *name, const char *dtype) {
    return fmt::format(R"({{"name":"{}","shape":[262144],"dtype":"{}","device":"{}"}})", name, dtype, device);
  };
  return fmt::format(
      R"({{"format":"graphlint-fx","version":2,"mode":"train","params":[],
    "inputs":[{{"name":"x","shape":[262144],"dtype":"float32","device":"{0}","requires_grad":true}}],
    "nodes":[{{"name":"d","op":"aten::native_dropout","inputs":["x"],"outputs":[{1},{2}],"saved":[false,true],
      "attrs":{{"p":0.5,"train":true}},"phase":"forward"}},
     {{"name":"g","op":"aten::ones_like","inputs":["d.0"],"outputs":[{3}],"phase":"backward"}},
     {{"name":"dx","op":"aten::native_dropout_backward","inputs":["g","d.1"],"outputs":[{4}],"phase":"backward"}}],
    "outputs":["d.0","dx"]}})",
      device, out("d.0", "float32"), out("d.1", "bool"), out("g", "float32"), out("dx", "float32"));
}

}  // namespace

TEST(JointGraph, RecomputeLayerCheckpointsEachBlock) {
  auto m = importFxBytes(twoBlockJointGraph(), "blocks.train.fx.json", {});
  ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
  ASSERT_TRUE((*m)->graph->hasBackward());
  struct Peak {
    uint64_t step, leftForBackward;
    std::string at;
  };
  auto peak = [&](Recompute r) {
    graphlint::Setup s = adam();
    s.recompute = r;
    AnalysisContext ctx(**m, s);
    const MemorySummary &sum = ctx.get<MemoryPlan>().summary();
    return Peak{sum.peakAllocatedBytes - sum.inputsBytes, sum.activationsBytes, sum.peakNode};
  };
  Peak plain = peak(Recompute::None), layer = peak(Recompute::Layer);
  EXPECT_EQ(plain.step, 7 * kMiB);
  EXPECT_EQ(plain.leftForBackward, 4 * kMiB);
  EXPECT_EQ(plain.at, "gb0");
  EXPECT_EQ(layer.step, 6 * kMiB);
  EXPECT_EQ(layer.leftForBackward, 2 * kMiB);
  EXPECT_EQ(layer.at, "gb0");
  // `full` is `layer`; `sqrt` cuts the four forward nodes into two segments
  // of two, the same two blocks here.
  EXPECT_EQ(peak(*recomputeFromName("full")).step, 6 * kMiB);
  EXPECT_EQ(peak(Recompute::Sqrt).step, 6 * kMiB);
}

// Blocks of `mms` MatMuls under blocks.i, a Relu after each but the last
// (256 x 1024 fp32: 1 MiB per tensor), after a stem Relu outside any block.
namespace {
void blockModel(IrBuilder &b, int blocks, int mms) {
  Value *x = b.input("x", f32({256, 1024}));
  Value *cur = b.node("Relu", {x}, {"stem"}, {f32({256, 1024})})->outputs[0];
  b.graph().nodes().back()->modulePath = "stem";
  for (int i = 0; i < blocks; ++i) {
    std::string p = "blocks." + std::to_string(i);
    for (int k = 1; k <= mms; ++k) {
      std::string fc = p + ".fc" + std::to_string(k);
      Value *w = b.param(fc + ".weight", f32({1024, 1024}));
      Node *mm = b.node("MatMul", {cur, w}, {fc + ".out"}, {f32({256, 1024})});
      mm->modulePath = fc;
      cur = mm->outputs[0];
      if (k < mms) {
        Node *act = b.node("Relu", {cur}, {p + ".act" + std::to_string(k) + ".out"}, {f32({256, 1024})});
        act->modulePath = p + ".act" + std::to_string(k);
        cur = act->outputs[0];
      }
    }
  }
  b.output(cur);
}

struct Step {
  double step, forward, backward, recomputedFlops, forwardFlops;
  uint64_t activations;
};
Step stepUnder(const Model &m, const std::string &recompute, FusionBackend backend = FusionBackend::Inductor) {
  graphlint::Setup s = adam();
  s.target = "A100-80GB";
  s.backend = backend;
  const SetupKey *key = findSetupKey("recompute");
  SetupKey::Checked c = key->check(recompute, SetupSyntax::CommandLine);
  EXPECT_TRUE(c.value) << c.error;
  EXPECT_FALSE(applySetup(s, {{key, c.value.value_or("none")}}));
  AnalysisContext ctx(m, s);
  const StepTimeline &t = ctx.get<StepTimeline>();
  const ComputeModel &cm = ctx.get<ComputeModel>();
  return {t.stepSeconds(), t.forwardSeconds(), t.backwardSeconds(), cm.recomputedFlops(), cm.forwardTotal().flops,
          ctx.get<MemoryPlan>().summary().activationsBytes};
}

// The forward seconds of the groups whose first node's module path starts
// with `prefix`, without checkpointing.
double forwardSecondsOf(const Model &m, llvm::StringRef prefix) {
  graphlint::Setup s = adam();
  s.target = "A100-80GB";
  EXPECT_FALSE(applySetup(s, {}));
  AnalysisContext ctx(m, s);
  double t = 0;
  for (const GroupCost &c : ctx.get<ComputeModel>().groups())
    if (c.group && !c.group->nodes.empty() && llvm::StringRef(c.group->nodes.front()->modulePath).startswith(prefix))
      t += c.forward.seconds;
  return t;
}
}  // namespace

// The step time under checkpointing exceeds none's by exactly the forward
// run again: every block's under layer, every second block's under
// selective-layer=2 (blocks.1 and blocks.3: torchtitan's count % 2 == 0),
// and under selective-op all but the saved first matmul of each block.
TEST(Recompute, StepTimeAddsTheRecomputedForward) {
  IrBuilder b;
  blockModel(b, 4, 2);
  Step none = stepUnder(b.model(), "none"), layer = stepUnder(b.model(), "layer");
  double stem = forwardSecondsOf(b.model(), "stem");
  ASSERT_GT(stem, 0);
  ASSERT_GT(none.forward, stem);
  double blocks = none.forward - stem;
  EXPECT_NEAR(layer.step - none.step, blocks, 1e-12 * none.step);
  EXPECT_NEAR(layer.backward - none.backward, blocks, 1e-12 * none.step);
  EXPECT_DOUBLE_EQ(layer.forward, none.forward);
  // Every block's two MatMuls (and Relu) again: 8 x 2 x 256 x 1024 x 1024 plus 4 Relus.
  EXPECT_DOUBLE_EQ(layer.recomputedFlops, 8 * 2.0 * 256 * 1024 * 1024 + 4 * 256 * 1024.0);

  Step every2 = stepUnder(b.model(), "selective-layer=2");
  double odd = forwardSecondsOf(b.model(), "blocks.1") + forwardSecondsOf(b.model(), "blocks.3");
  EXPECT_NEAR(odd, blocks / 2, 1e-12 * none.step);  // the blocks are alike
  EXPECT_NEAR(every2.step - none.step, odd, 1e-12 * none.step);
  EXPECT_DOUBLE_EQ(every2.recomputedFlops, layer.recomputedFlops / 2);

  Step op = stepUnder(b.model(), "selective-op");
  double savedMatMuls = 0;
  for (int i = 0; i < 4; ++i)
    savedMatMuls += forwardSecondsOf(b.model(), "blocks." + std::to_string(i) + ".fc1");
  EXPECT_NEAR(op.step - none.step, blocks - savedMatMuls, 1e-12 * none.step);
  // fc2 of each block; the Relu runs in fc1's kernel (Inductor's epilogue),
  // which the policy saves.
  EXPECT_DOUBLE_EQ(op.recomputedFlops, 4 * 2.0 * 256 * 1024 * 1024);
}

// What each policy keeps for the backward (activationsBytes: the saved
// tensors when the forward ends, the output among them). Two blocks of
// fc1 -> Relu -> fc2 -> Relu -> fc3: without checkpointing each keeps both
// Relu outputs and its output (and the stem's output, fc1's input);
// layer keeps each block's input (the stem's, then blocks.0's output) and
// the output; selective-op keeps fc1's output (the 1st matmul) too, fc2's
// (the 2nd) is recomputed, fc3's (the 3rd) is the block's output.
TEST(Recompute, SelectiveOpSavesEveryOtherMatMulsOutput) {
  IrBuilder b;
  blockModel(b, 2, 3);
  const Graph &g = b.graph();
  graphlint::Setup s = adam();
  s.recompute = Recompute::SelectiveOp;
  RecomputePlan plan = recomputePlan(g, s);
  std::vector<std::string> saved;
  for (const auto &n : g.nodes())
    if (plan.policySaved[n->index])
      saved.push_back(n->outputs[0]->name);
  EXPECT_EQ(saved, (std::vector<std::string>{"blocks.0.fc1.out", "blocks.0.fc3.out", "blocks.1.fc1.out",
                                             "blocks.1.fc3.out"}));
  EXPECT_EQ(plan.segment[0], -1);  // the stem
  EXPECT_EQ(plan.segment[1], 0);
  EXPECT_EQ(plan.segment.back(), 1);
  EXPECT_EQ(stepUnder(b.model(), "none").activations, 7 * kMiB);
  EXPECT_EQ(stepUnder(b.model(), "layer").activations, 3 * kMiB);
  EXPECT_EQ(stepUnder(b.model(), "selective-op").activations, 5 * kMiB);
}

// selective-layer=2 checkpoints blocks.1 and blocks.3 whole; blocks.0 and
// blocks.2 keep their input and Relu output (2 MiB each), blocks.1 and
// blocks.3 their input, plus the output: 1 + 2 + 1 + 2 + 1 MiB.
TEST(Recompute, SelectiveLayerCheckpointsEveryNthBlock) {
  IrBuilder b;
  blockModel(b, 4, 2);
  graphlint::Setup s = adam();
  s.recompute = Recompute::SelectiveLayer;
  s.recomputeEvery = 2;
  RecomputePlan plan = recomputePlan(b.graph(), s);
  std::vector<std::string> checkpointed;
  for (const auto &n : b.graph().nodes())
    if (plan.segment[n->index] >= 0)
      checkpointed.push_back(n->modulePath);
  EXPECT_EQ(checkpointed, (std::vector<std::string>{"blocks.1.fc1", "blocks.1.act1", "blocks.1.fc2", "blocks.3.fc1",
                                                    "blocks.3.act1", "blocks.3.fc2"}));
  EXPECT_EQ(stepUnder(b.model(), "selective-layer=2").activations, 7 * kMiB);
  EXPECT_EQ(stepUnder(b.model(), "selective-layer=1").activations, stepUnder(b.model(), "layer").activations);
  EXPECT_EQ(stepUnder(b.model(), "none").activations, 9 * kMiB);
}

// The key reads selective-layer=N (N from 1; bare: torchtitan's default 2)
// and --dump prints it back.
TEST(Recompute, SelectiveLayerKeyRoundTrips) {
  const SetupKey *key = findSetupKey("recompute");
  ASSERT_TRUE(key);
  auto canonical = [&](const char *text) { return key->check(text, SetupSyntax::CommandLine).value.value_or("refused"); };
  EXPECT_EQ(canonical("selective-layer=3"), "selective-layer=3");
  EXPECT_EQ(canonical("selective-layer"), "selective-layer=2");
  EXPECT_EQ(canonical("selective-op"), "selective-op");
  EXPECT_EQ(canonical("selective-layer=0"), "refused");
  EXPECT_EQ(canonical("selective-layer=x"), "refused");
  EXPECT_NE(key->check("selective-layer=0", SetupSyntax::CommandLine).error.find("--recompute"), std::string::npos);
  graphlint::Setup s;
  key->apply(s, "selective-layer=3");
  EXPECT_EQ(s.recompute, Recompute::SelectiveLayer);
  EXPECT_EQ(s.recomputeEvery, 3u);
  EXPECT_EQ(key->dump(s), " selective-layer=3");
  key->apply(s, "selective-op");
  EXPECT_EQ(key->dump(s), " selective-op");
}

// A joint graph (graphlint-export --train) under --recompute layer: its
// backward runs both blocks' forward again, all of its forward here. Eager
// runs each sigmoid as its own kernel; Inductor fuses the whole step into
// one kernel, whose recompute is the backward's only segment.
TEST(JointGraph, RecomputeLayerAddsTheForwardToTheStepTime) {
  auto m = importFxBytes(twoBlockJointGraph(), "blocks.train.fx.json", {});
  ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
  for (FusionBackend backend : {FusionBackend::Eager, FusionBackend::Inductor}) {
    Step none = stepUnder(**m, "none", backend), layer = stepUnder(**m, "layer", backend);
    ASSERT_GT(none.forward, 0);
    EXPECT_NEAR(layer.step - none.step, none.forward, 1e-12 * none.step);
    EXPECT_NEAR(layer.backward - none.backward, none.forward, 1e-12 * none.step);
    EXPECT_GT(none.forwardFlops, 0);
    EXPECT_DOUBLE_EQ(layer.recomputedFlops, none.forwardFlops);
    if (backend == FusionBackend::Eager) {
      // selective-layer=2: blocks.1 alone, half of the forward (the blocks are alike).
      Step every2 = stepUnder(**m, "selective-layer=2", backend);
      EXPECT_NEAR(every2.step - none.step, none.forward / 2, 1e-12 * none.step);
    }
  }
}

// Which modules --recompute layer checkpoints (checkpointLayers): an
// efficientnet-like graph with a stem (features.0, a Conv2dNormActivation
// whose children are leaves), stages of blocks (features.1.0, features.2.0,
// features.2.1), a head (features.3) and a classifier leaf: the blocks are
// the layers, the stage is looked through, the stem, the head and the leaf
// are not layers.
// The layer of each node of a chain of Relus at these module paths.
static std::vector<std::string> layersOfChain(const std::vector<const char *> &paths) {
  IrBuilder b;
  Value *cur = b.input("x", f32({8, 8}));
  for (const char *p : paths) {
    Node *n = b.node("Relu", {cur}, {std::string(p) + ".y"}, {f32({8, 8})});
    n->modulePath = p;
    cur = n->outputs[0];
  }
  b.output(cur);
  std::vector<llvm::StringRef> layers = checkpointLayers(b.graph());
  return std::vector<std::string>(layers.begin(), layers.end());
}

TEST(Recompute, LayersAreTheRepeatedBlocks) {
  EXPECT_EQ(layersOfChain({"features.0.0", "features.0.1", "features.1.0.block.0", "features.1.0.block.1",
                           "features.2.0.block.0", "features.2.0.block.1", "features.2.1.block.0",
                           "features.2.1.block.1", "features.3.0", "features.3.1", "classifier.1"}),
            (std::vector<std::string>{"", "", "features.1.0", "features.1.0", "features.2.0", "features.2.0",
                                      "features.2.1", "features.2.1", "", "", ""}));
}

// Stages whose blocks sit in a named container (timm's ConvNeXt
// `stages.1.blocks.0`): the repeated blocks are the layers, the stage's
// downsample is none; a T5 block's sub-layers (`layer.0` attention,
// `layer.1` MLP) differ from each other, so the block stays the layer.
TEST(Recompute, LayersAreTheBlocksOfAStageContainer) {
  auto layersOf = layersOfChain;
  EXPECT_EQ(layersOf({"stem.0", "stages.0.blocks.0.conv_dw", "stages.0.blocks.0.mlp.fc1", "stages.0.blocks.1.conv_dw",
                      "stages.0.blocks.1.mlp.fc1", "stages.1.downsample.0", "stages.1.downsample.1",
                      "stages.1.blocks.0.conv_dw", "stages.1.blocks.0.mlp.fc1", "stages.1.blocks.1.conv_dw",
                      "stages.1.blocks.1.mlp.fc1", "head.fc"}),
            (std::vector<std::string>{"", "stages.0.blocks.0", "stages.0.blocks.0", "stages.0.blocks.1",
                                      "stages.0.blocks.1", "", "", "stages.1.blocks.0", "stages.1.blocks.0",
                                      "stages.1.blocks.1", "stages.1.blocks.1", ""}));
  EXPECT_EQ(layersOf({"shared", "encoder.block.0.layer.0.SelfAttention.q", "encoder.block.0.layer.0.layer_norm",
                      "encoder.block.0.layer.1.DenseReluDense.wi", "encoder.block.0.layer.1.layer_norm",
                      "encoder.block.1.layer.0.SelfAttention.q", "encoder.block.1.layer.0.layer_norm",
                      "encoder.block.1.layer.1.DenseReluDense.wi", "encoder.block.1.layer.1.layer_norm"}),
            (std::vector<std::string>{"", "encoder.block.0", "encoder.block.0", "encoder.block.0", "encoder.block.0",
                                      "encoder.block.1", "encoder.block.1", "encoder.block.1", "encoder.block.1"}));
  // torchvision's inverted residuals: `block.0` and `block.1` are alike
  // conv-norm-act units of leaves, not blocks; the residual is the layer.
  EXPECT_EQ(layersOf({"features.2.0.block.0.0", "features.2.0.block.0.1", "features.2.0.block.1.0",
                      "features.2.0.block.1.1", "features.2.1.block.0.0", "features.2.1.block.0.1",
                      "features.2.1.block.1.0", "features.2.1.block.1.1"}),
            (std::vector<std::string>{"features.2.0", "features.2.0", "features.2.0", "features.2.0", "features.2.1",
                                      "features.2.1", "features.2.1", "features.2.1"}));
}

// The recompute of a checkpointed block rebuilds the dropout's mask at the
// size eager allocates: the CPU's input-sized noise under --kernels cpu.
// Two layers entered through the same submodule (blocks.0.drop,
// blocks.1.drop); block 0's mask is read by backward only, so --recompute
// layer drops it in forward and rebuilds it before dx.
std::string checkpointedDropout() {
  auto out = [](const char *name, const char *dtype) {
    return fmt::format(R"({{"name":"{}","shape":[262144],"dtype":"{}","device":"cpu"}})", name, dtype);
  };
  return fmt::format(
      R"({{"format":"graphlint-fx","version":2,"mode":"train","params":[],
    "inputs":[{{"name":"x","shape":[262144],"dtype":"float32","device":"cpu","requires_grad":true}}],
    "nodes":[{{"name":"d","op":"aten::native_dropout","inputs":["x"],"outputs":[{},{}],"saved":[false,true],
      "attrs":{{"p":0.5,"train":true}},"module":"blocks.0.drop","phase":"forward"}},
     {{"name":"s","op":"aten::sigmoid","inputs":["d.0"],"outputs":[{}],"saved":[true],"module":"blocks.1.drop","phase":"forward"}},
     {{"name":"g","op":"aten::ones_like","inputs":["s"],"outputs":[{}],"phase":"backward"}},
     {{"name":"gs","op":"aten::sigmoid_backward","inputs":["g","s"],"outputs":[{}],"phase":"backward"}},
     {{"name":"dx","op":"aten::native_dropout_backward","inputs":["gs","d.1"],"outputs":[{}],"phase":"backward"}}],
    "outputs":["s","dx"]}})",
      out("d.0", "float32"), out("d.1", "bool"), out("s", "float32"), out("g", "float32"), out("gs", "float32"),
      out("dx", "float32"));
}

TEST(JointGraph, RecomputedCpuDropoutRebuildsAnInputSizedMask) {
  auto liveAt = [](Kernels kernels, const char *node) -> uint64_t {
    auto m = importFxBytes(checkpointedDropout(), "ckpt-dropout.fx.json", {});
    EXPECT_TRUE(static_cast<bool>(m)) << (m ? "" : llvm::toString(m.takeError()));
    if (!m)
      return 0;
    graphlint::Setup s = adam();
    s.kernels = kernels;
    s.recompute = Recompute::Layer;
    AnalysisContext ctx(**m, s);
    const MemorySummary &sum = ctx.get<MemoryPlan>().summary();
    for (const auto &p : sum.timeline)
      if (p.node == node && p.phase == "backward")
        return p.liveBytes - sum.inputsBytes;
    ADD_FAILURE() << "no backward point " << node;
    return 0;
  };
  // While block 0 is recomputed: the rebuilt mask is 256 KiB as a bool, 1 MiB as fp32 noise.
  EXPECT_EQ(liveAt(Kernels::Cuda, "d (recompute)"), 4 * kMiB + kMiB / 4);
  EXPECT_EQ(liveAt(Kernels::Cpu, "d (recompute)"), 5 * kMiB);
}

// torch 1.13's fake capture traces silu_backward as its CompositeImplicit
// formula (sigmoid, empty_like + fill_ + sub_ for 1 - s, mul, add, mul, mul);
// eager's fused kernel allocates only the gradient.
TEST(JointGraph, TracedSiluBackwardIsOneKernel) {
  std::string nodes;
  auto node = [&](const char *name, const char *op, std::initializer_list<const char *> inputs, const char *attrs,
                  bool backward) { addJointNode(nodes, name, op, inputs, attrs, backward, "cpu"); };
  node("y", "aten::silu", {"x"}, R"("saved":[false],)", false);
  node("g", "aten::ones_like", {"y"}, "", true);
  node("s", "aten::sigmoid", {"x"}, "", true);
  node("e", "aten::empty_like", {"s"}, "", true);
  node("f", "aten::fill_", {"e"}, R"("attrs":{"value":1},)", true);
  node("t", "aten::sub_", {"f", "s"}, "", true);
  node("u", "aten::mul", {"x", "t"}, "", true);
  node("v", "aten::add", {"u"}, R"("attrs":{"other":1},)", true);
  node("w", "aten::mul", {"s", "v"}, "", true);
  node("gx", "aten::mul", {"g", "w"}, "", true);
  std::string json = fmt::format(R"({{"format":"graphlint-fx","version":2,"mode":"train","params":[],
    "inputs":[{{"name":"x","shape":[262144],"dtype":"float32","device":"cpu","requires_grad":true}}],
    "nodes":[{}],"outputs":["y","gx"]}})",
                                 nodes);
  auto m = importFxBytes(json, "silu.fx.json", {});
  ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
  graphlint::Setup s = adam();  // the context keeps a reference to the setup
  AnalysisContext ctx(**m, s);
  const MemorySummary &sum = ctx.get<MemoryPlan>().summary();
  // y (an output), the seed g and gx: the formula's temporaries never exist.
  EXPECT_EQ(sum.peakAllocatedBytes - sum.inputsBytes, 3 * kMiB);
}

namespace {

// The peak of an Adam step on an FX JSON graph beyond its inputs, under
// CUDA's or the CPU's kernels.
uint64_t adamPeakBeyondInputs(const std::string &json, Kernels kernels) {
  auto m = importFxBytes(json, "step.fx.json", {});
  EXPECT_TRUE(static_cast<bool>(m)) << (m ? "" : llvm::toString(m.takeError()));
  if (!m)
    return 0;
  graphlint::Setup s = adam();
  s.kernels = kernels;
  AnalysisContext ctx(**m, s);
  const MemorySummary &sum = ctx.get<MemoryPlan>().summary();
  return sum.peakAllocatedBytes - sum.inputsBytes;
}

}  // namespace

TEST(JointGraph, CpuDropoutKeepsAnInputSizedMask) {
  std::string json = jointDropout("cpu");
  EXPECT_EQ(adamPeakBeyondInputs(json, Kernels::Cuda), 3 * kMiB + kMiB / 4);  // --kernels cuda: out, bool mask, seed, dx
  EXPECT_EQ(adamPeakBeyondInputs(json, Kernels::Cpu), 4 * kMiB);  // --kernels cpu: out, fp32 noise, seed, dx
}

// torch 1.13's fake capture traces at::dropout's CPU path (its fake tensors
// are CPU tensors): noise = empty_like(x).bernoulli_(1 - p).div_(1 - p),
// then x * noise, the noise saved. On CUDA eager runs one native_dropout
// whose mask is a bool: the same step as the native_dropout graph above.
TEST(JointGraph, TracedCpuDropoutIsCudasBoolMask) {
  std::string nodes;
  auto node = [&](const char *name, const char *op, std::initializer_list<const char *> inputs, const char *fields,
                  bool backward) { addJointNode(nodes, name, op, inputs, fields, backward, "cpu"); };
  node("e", "aten::empty_like", {"x"}, "", false);
  node("b", "aten::bernoulli_", {"e"}, R"("attrs":{"p":0.5},"mutates":[0],"aliases":[0],)", false);
  node("n", "aten::div_", {"b"}, R"("attrs":{"other":0.5},"mutates":[0],"aliases":[0],"saved":[true],)", false);
  node("d", "aten::mul", {"x", "n"}, "", false);
  node("g", "aten::ones_like", {"d"}, "", true);
  node("dx", "aten::mul", {"g", "n"}, "", true);
  std::string json = fmt::format(R"({{"format":"graphlint-fx","version":2,"mode":"train","params":[],
    "inputs":[{{"name":"x","shape":[262144],"dtype":"float32","device":"cpu","requires_grad":true}}],
    "nodes":[{}],"outputs":["d","dx"]}})",
                                 nodes);
  EXPECT_EQ(adamPeakBeyondInputs(json, Kernels::Cuda), 3 * kMiB + kMiB / 4);  // out, bool mask, seed, dx
  EXPECT_EQ(adamPeakBeyondInputs(json, Kernels::Cpu), 4 * kMiB);                // out, fp32 noise, seed, dx
}

namespace {

// A scalar initializer whose payload the importer kept (a Dropout's ratio or
// training_mode).
Value *scalarConstant(IrBuilder &b, const std::string &name, DType dt, double value) {
  Value *v = b.param(name, tensorOf(dt, {}));
  v->param->tensor.data.known = true;
  if (dt == DType::Float)
    v->param->tensor.data.floats = {value};
  else
    v->param->tensor.data.ints = {static_cast<int64_t>(value)};
  return v;
}

// Live bytes beyond the resident states (inputs, parameters, optimizer
// state: under bf16-mixed, SGD's fp32 master weights) at a node's backward
// (the most since the previous node's: a timeline point's figure).
uint64_t liveAtBackward(const Model &m, const graphlint::Setup &s, llvm::StringRef node) {
  AnalysisContext ctx(m, s);
  const MemorySummary &sum = ctx.get<MemoryPlan>().summary();
  for (const auto &p : sum.timeline)
    if (p.node == node && p.phase == "backward")
      return p.liveBytes - sum.inputsBytes - sum.paramsBytes - sum.optimizerBytes;
  ADD_FAILURE() << "no backward point " << node.str();
  return 0;
}

}  // namespace

// The dynamo ONNX exporter writes a train() module's dropout as an ai.onnx
// Dropout whose training_mode input is a constant true (and no mask output
// when nothing reads it): a new tensor and a kept mask, as PyTorch's dropout,
// not the identity an inference Dropout is. h = x * W, d = Dropout(h),
// out = d * d, 1 MiB each: when backward starts, out and the d its product
// saved are live, and the mask.
TEST(SynthesisedStep, TrainingModeOnnxDropoutKeepsAMask) {
  auto build = [](double training) {
    auto b = std::make_unique<IrBuilder>();
    Value *x = b->input("x", f32({262144}));
    Value *w = b->param("W", f32({262144}));
    Value *ratio = scalarConstant(*b, "ratio", DType::Float, 0.1);
    Value *mode = scalarConstant(*b, "training_mode", DType::Bool, training);
    Node *h = b->node("Mul", {x, w}, {"h"}, {f32({262144})});
    Node *d = b->node("Dropout", {h->outputs[0], ratio, mode}, {"d"}, {f32({262144})});
    Node *out = b->node("Mul", {d->outputs[0], d->outputs[0]}, {"out"}, {f32({262144})});
    b->output(out->outputs[0]);
    return b;
  };
  auto activations = [](const Model &m, graphlint::Setup s) {
    AnalysisContext ctx(m, s);
    return ctx.get<MemoryPlan>().summary().activationsBytes;
  };
  graphlint::Setup s = adam();
  s.optimizer = Optimizer::SGD;
  auto train = build(1), eval = build(0);
  EXPECT_EQ(activations(train->model(), s), 2 * kMiB + kMiB / 4);  // out, d, CUDA's bool mask
  EXPECT_EQ(activations(eval->model(), s), 2 * kMiB);              // out, d (a view of h)
  // At out's backward: out (the caller holds it), the seed, the d it saved,
  // the mask d's backward will read, and d's two gradients (out = d * d),
  // which the engine sums once the apply has returned.
  EXPECT_EQ(liveAtBackward(train->model(), s, "out"), 5 * kMiB + kMiB / 4);
  s.kernels = Kernels::Cpu;  // the CPU's dropout keeps fp32 noise
  EXPECT_EQ(activations(train->model(), s), 3 * kMiB);
}

// torch's cross_entropy is log_softmax (which keeps its logits-sized
// result) then nll_loss, whose backward makes a logits-sized gradient of the
// log-probabilities before log_softmax_backward makes the logits' gradient:
// an ai.onnx SoftmaxCrossEntropyLoss costs the same. Logits 64 x 4096 fp32
// (1 MiB) from x @ W.
TEST(SynthesisedStep, CrossEntropyKeepsLogProbabilities) {
  IrBuilder b;
  Value *x = b.input("x", f32({64, 256}));
  Value *labels = b.input("labels", tensorOf(DType::Int64, {64}));
  Value *w = b.param("W", f32({256, 4096}));
  Node *logits = b.node("MatMul", {x, w}, {"logits"}, {f32({64, 4096})});
  Node *loss = b.node("SoftmaxCrossEntropyLoss", {logits->outputs[0], labels}, {"loss"}, {f32({})});
  b.output(loss->outputs[0]);
  graphlint::Setup s = adam();
  s.optimizer = Optimizer::SGD;
  // The saved log-probabilities, nll_loss_backward's output, the logits'
  // gradient (1 MiB each), the loss and its seed (4 bytes each).
  EXPECT_EQ(liveAtBackward(b.model(), s, "loss"), 3 * kMiB + 8);
  s.precision = Precision::BF16Mixed;  // 16-bit activations: the log-probabilities too
  EXPECT_EQ(liveAtBackward(b.model(), s, "loss"), 3 * kMiB / 2 + 4);
}
