// The verify executor: the alloc/free plan and its peak, weights read from
// inline payloads and external data, random inputs and weights, an
// unsupported op stopping the run with what ran so far, the bundled models
// end to end on the cpu backend, and the `graphlint verify` command line.
#include "IrBuilder.h"
#include "TestSupport.h"

#include "graphlint/analyses/Liveness.h"
#include "graphlint/analyses/MemoryPlan.h"
#include "graphlint/verify/Comparison.h"

#include <gtest/gtest.h>

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/JSON.h>

#include <fmt/format.h>

#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstdlib>

#include <sys/wait.h>

using namespace graphlint;
using namespace graphlint::verify;
using namespace graphlint::test;

namespace {

// x[1,512] -> MatMul(W[512,512]) -> Relu -> Add(b[512]) -> y, with W and b
// stored as raw_data (W: 1 MiB, stripped by the importer and read back at
// its offset) or in an external data file.
std::string denseModel(bool external, const std::string &dir) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto *g = m.mutable_graph();
  g->set_name("dense");
  auto addInput = [](auto *list, const std::string &name, std::vector<int64_t> dims) {
    auto *vi = list->Add();
    vi->set_name(name);
    auto *tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims)
      tt->mutable_shape()->add_dim()->set_dim_value(d);
  };
  addInput(g->mutable_input(), "x", {1, 512});
  addInput(g->mutable_output(), "y", {1, 512});
  std::string wBytes(512 * 512 * 4, '\0'), bBytes(512 * 4, '\0');
  for (int i = 0; i < 512 * 512; ++i) {
    float v = (i % 7 - 3) * 0.01f;
    std::memcpy(&wBytes[i * 4], &v, 4);
  }
  for (int i = 0; i < 512; ++i) {
    float v = i * 0.5f;
    std::memcpy(&bBytes[i * 4], &v, 4);
  }
  auto *w = g->add_initializer();
  w->set_name("W");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(512);
  w->add_dims(512);
  if (external) {
    writeFile(dir + "/weights.bin", std::string(64, 'x') + wBytes);
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    auto kv = [&](const char *k, const std::string &v) {
      auto *e = w->add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    kv("location", "weights.bin");
    kv("offset", "64");
    kv("length", std::to_string(wBytes.size()));
  } else {
    w->set_raw_data(wBytes);
  }
  auto *b = g->add_initializer();
  b->set_name("b");
  b->set_data_type(onnx::TensorProto::FLOAT);
  b->add_dims(512);
  b->set_raw_data(bBytes);
  auto node = [&](const char *op, std::vector<std::string> in, const std::string &out) {
    auto *n = g->add_node();
    n->set_op_type(op);
    n->set_name(out + "_node");
    for (auto &i : in)
      n->add_input(i);
    n->add_output(out);
  };
  node("MatMul", {"x", "W"}, "h");
  node("Relu", {"h"}, "r");
  node("Add", {"r", "b"}, "y");
  std::string bytes;
  m.SerializeToString(&bytes);
  return bytes;
}

std::unique_ptr<Model> importFile(const std::string &path, std::map<std::string, int64_t> dims = {}) {
  ImportOptions io;
  io.dims = std::move(dims);
  auto m = importModelFile(path, io);
  EXPECT_TRUE(bool(m)) << (m ? "" : llvm::toString(m.takeError()));
  return m ? std::move(*m) : nullptr;
}

}  // namespace

TEST(VerifyExecutor, PlanFreesAfterLastUseAndPeakMatchesLiveness) {
  auto m = importText(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[256] x) => (float[256] y) {
  a = Relu(x)
  b = Neg(a)
  c = Add(a, b)
  y = Sigmoid(c)
})");
  ExecPlan plan(*m->graph);
  ASSERT_EQ(plan.steps().size(), 4u);
  // a dies after c = Add(a, b); b too; c after y.
  EXPECT_TRUE(plan.steps()[0].freeAfter.empty());
  EXPECT_TRUE(plan.steps()[1].freeAfter.empty());
  EXPECT_EQ(plan.steps()[2].freeAfter.size(), 2u);
  EXPECT_EQ(plan.steps()[3].freeAfter.size(), 1u);
  // Resident x (1 KiB) + a + b + c live together at the Add: 4 KiB.
  EXPECT_EQ(plannedPeakBytes(plan), 4096u);
  auto cpu = makeCpuBackend();
  FeedOptions feed;
  ASSERT_FALSE(bool(feedModel(*m, plan, *cpu, feed)));
  RunRecord r = runPlan(plan, *cpu);
  EXPECT_TRUE(r.complete());
  EXPECT_EQ(r.peakBytes, 4096u);
  EXPECT_EQ(r.nodes.size(), 4u);
  // y = sigmoid(relu(x) - relu(x)) = 0.5 everywhere.
  auto y = cpu->fetch(*m->graph->outputs[0]);
  ASSERT_TRUE(y);
  for (double v : y->data)
    EXPECT_EQ(v, 0.5);
}

TEST(VerifyExecutor, UnsupportedOpStopsTheRunAndKeepsWhatRan) {
  auto m = importText(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[4,4] x) => (float[4,4] y) {
  a = Relu(x)
  b = Det(a)
  y = Add(a, b)
})");
  ExecPlan plan(*m->graph);
  auto cpu = makeCpuBackend();
  ASSERT_FALSE(bool(feedModel(*m, plan, *cpu, {})));
  RunRecord r = runPlan(plan, *cpu);
  ASSERT_FALSE(r.complete());
  EXPECT_EQ(r.stoppedAt->opType, "Det");
  EXPECT_NE(r.stopReason.find("Det is not supported by the cpu backend"), std::string::npos) << r.stopReason;
  ASSERT_EQ(r.nodes.size(), 1u);
  EXPECT_EQ(r.nodes[0].node->opType, "Relu");
}

TEST(VerifyExecutor, ReadsInlineAndExternalWeightsAtTheirOffsets) {
  for (bool external : {false, true}) {
    std::string dir = tempDir();
    writeFile(dir + "/dense.onnx", denseModel(external, dir));
    auto m = importFile(dir + "/dense.onnx");
    ASSERT_TRUE(m);
    const Param *w = nullptr;
    for (const auto &p : m->graph->params())
      if (p->tensor.name == "W")
        w = p.get();
    ASSERT_TRUE(w);
    // The importer kept no bytes; the executor reads them from the file.
    EXPECT_FALSE(w->tensor.data.known);
    auto t = loadParam(*m, *w);
    ASSERT_TRUE(bool(t)) << llvm::toString(t.takeError());
    ASSERT_EQ(t->numel(), 512 * 512);
    EXPECT_FLOAT_EQ(t->data[0], -0.03f);
    EXPECT_FLOAT_EQ(t->data[10], 0.0f);
    EXPECT_FLOAT_EQ(t->data[512 * 512 - 1], ((512 * 512 - 1) % 7 - 3) * 0.01f);
    ExecPlan plan(*m->graph);
    auto cpu = makeCpuBackend();
    ASSERT_FALSE(bool(feedModel(*m, plan, *cpu, {})));
    RunRecord r = runPlan(plan, *cpu);
    ASSERT_TRUE(r.complete()) << r.stopReason;
    // Resident: W 1 MiB + b 2 KiB + x 2 KiB; h, r and y are 2 KiB each and
    // at most two are live at once (h dies after Relu, r after the Add).
    EXPECT_EQ(r.peakBytes, 1048576u + 2048 * 2 + 2048 * 2);
    EXPECT_EQ(plannedPeakBytes(plan), r.peakBytes);
  }
}

TEST(VerifyExecutor, MissingWeightsNeedRandomWeights) {
  std::string dir = tempDir();
  writeFile(dir + "/dense.onnx", denseModel(/*external=*/true, dir));
  llvm::sys::fs::remove(dir + "/weights.bin");
  auto m = importFile(dir + "/dense.onnx");
  ASSERT_TRUE(m);
  ExecPlan plan(*m->graph);
  auto cpu = makeCpuBackend();
  llvm::Error e = feedModel(*m, plan, *cpu, {});
  ASSERT_TRUE(bool(e));
  std::string msg = llvm::toString(std::move(e));
  EXPECT_NE(msg.find("weights.bin"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--random-weights"), std::string::npos) << msg;
  FeedOptions random;
  random.randomWeights = true;
  auto cpu2 = makeCpuBackend();
  EXPECT_FALSE(bool(feedModel(*m, plan, *cpu2, random)));
  EXPECT_TRUE(runPlan(plan, *cpu2).complete());
}

// The bundled models run end to end on the reference backend with random
// weights; every output is finite and the measured peak is the planned one.
TEST(VerifyExecutor, BundledModelsRunEndToEndOnCpu) {
  struct Case {
    const char *file;
    std::map<std::string, int64_t> dims;
    std::vector<int64_t> outShape;
  } cases[] = {
      {"models/resnet18.onnx", {{"batch", 1}}, {1, 1000}},
      {"models/mobilenet_v3_small.onnx", {{"batch", 1}}, {1, 1000}},
      {"models/gpt_tiny.onnx", {{"batch", 2}, {"seq", 16}}, {2, 16, 1000}},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.file);
    auto m = importFile(sourcePath(c.file), c.dims);
    ASSERT_TRUE(m);
    graphlint::Setup setup;
    setup.dims = c.dims;
    auto cpu = makeCpuBackend();
    VerifyOptions vo;
    vo.feed.randomWeights = true;
    vo.warmupRuns = 0;
    auto v = verifyModel(*m, setup, *cpu, vo);
    ASSERT_TRUE(bool(v)) << llvm::toString(v.takeError());
    EXPECT_TRUE(v->stopReason.empty()) << v->stopReason;
    EXPECT_EQ(v->nodesRun, v->nodesTotal);
    // The executor's own schedule, from static types, is exact...
    EXPECT_EQ(plannedPeakBytes(ExecPlan(*m->graph)), v->measuredPeakBytes);
    // ...and graphlint's memory plan predicts it within 6%: it runs
    // activations in place as PyTorch does, the reference executor does not.
    ASSERT_TRUE(v->predictedPeakBytes);
    double err = (double(*v->predictedPeakBytes) - double(v->measuredPeakBytes)) / double(v->measuredPeakBytes);
    EXPECT_LT(std::abs(err), 0.06) << *v->predictedPeakBytes << " vs " << v->measuredPeakBytes;
    EXPECT_GT(v->predictedKernels, 0u);
    ASSERT_TRUE(v->predictedSeconds);
    EXPECT_GT(*v->predictedSeconds, 0);
    auto out = cpu->fetch(*m->graph->outputs[0]);
    ASSERT_TRUE(out);
    EXPECT_EQ(out->shape, c.outShape);
    for (double x : out->data)
      ASSERT_TRUE(std::isfinite(x));
    std::cout << fmt::format("[verify cpu] {}: {} nodes, {} groups, predicted peak {} B, measured {} B, "
                             "predicted {} kernels / {:.3f} ms (H100 roofline), cpu {:.1f} ms\n",
                             c.file, v->nodesRun, v->groups.size(), *v->predictedPeakBytes, v->measuredPeakBytes,
                             v->predictedKernels, *v->predictedSeconds * 1e3, v->measuredSeconds * 1e3);
  }
}

// Linting must not load the CUDA libraries: the cuda backend is a module
// that only `verify --device cuda` opens.
TEST(VerifyCli, LintBinaryDoesNotLinkCudaLibraries) {
  std::string out = tempDir() + "/ldd.txt";
  std::string cmd = std::string("ldd '") + GRAPHLINT_CLI + "' > '" + out + "' 2>&1";
  if (std::system(cmd.c_str()) != 0)
    GTEST_SKIP() << "ldd is not available";
  std::string libs = readFile(out);
  for (const char *lib : {"libcudnn", "libcublas", "libcupti", "libcudart"})
    EXPECT_EQ(libs.find(lib), std::string::npos) << lib << " is linked:\n" << libs;
}

TEST(VerifyCli, MissingModuleIsNoDeviceWithTheReason) {
  // A module path that does not load: the same one-line exit 2, with why.
  std::string bogus = tempDir() + "/libgraphlint_cuda.so";
  writeFile(bogus, "not an ELF file");
  std::string out = tempDir() + "/verify.txt";
  std::string cmd = "GRAPHLINT_CUDA_MODULE='" + bogus + "' '" + GRAPHLINT_CLI + "' verify '" +
                    sourcePath("models/resnet18.onnx") + "' > '" + out + "' 2>&1";
  int rc = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(rc));
  EXPECT_EQ(WEXITSTATUS(rc), 2);
  std::string err = readFile(out);
  EXPECT_NE(err.find("no CUDA device is available: cannot load the cuda backend " + bogus), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

TEST(VerifyCli, NoCudaDeviceExitsTwoWithOneLine) {
  // This machine has no GPU (or the binary no CUDA): one line, exit 2.
  auto probe = makeCudaBackend();
  if (probe)
    GTEST_SKIP() << "a CUDA device is available here";
  llvm::consumeError(probe.takeError());
  CliResult r = runCli({"verify", sourcePath("models/resnet18.onnx")});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("no CUDA device is available"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(VerifyCli, CpuBackendJsonHasVerifySection) {
  CliResult r = runCli({"verify", "--device", "cpu", "--random-weights", "-D", "batch=1", "-D", "seq=8",
                        "--format", "json", sourcePath("models/gpt_tiny.onnx")});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto v = llvm::json::parse(r.out);
  ASSERT_TRUE(bool(v)) << llvm::toString(v.takeError());
  const auto *verify = v->getAsObject()->getObject("verify");
  ASSERT_TRUE(verify);
  EXPECT_EQ(verify->getString("backend").getValueOr(""), "cpu");
  EXPECT_EQ(verify->getBoolean("complete"), true);
  const auto *peak = verify->getObject("peak_memory");
  ASSERT_TRUE(peak);
  double predicted = double(peak->getInteger("predicted_bytes").getValueOr(0));
  double measured = double(peak->getInteger("measured_bytes").getValueOr(1));
  EXPECT_NEAR(predicted / measured, 1.0, 0.06);
  EXPECT_GT(verify->getArray("groups")->size(), 10u);
}

TEST(VerifyCli, TextTableAndUsageErrors) {
  CliResult r = runCli({"verify", "--device", "cpu", "--random-weights", "-D", "batch=1",
                        sourcePath("models/mobilenet_v3_small.onnx")});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("verify on cpu"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("peak:    predicted"), std::string::npos) << r.out;
  // Unbound dims, missing weights, bad flags: exit 2 with one line.
  r = runCli({"verify", "--device", "cpu", "--random-weights", sourcePath("models/resnet18.onnx")});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("--dim"), std::string::npos) << r.err;
  r = runCli({"verify", "--device", "cpu", "-D", "batch=1", sourcePath("models/resnet18.onnx")});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("--random-weights"), std::string::npos) << r.err;
  r = runCli({"verify", "--device", "tpu", sourcePath("models/resnet18.onnx")});
  EXPECT_EQ(r.exitCode, 2);
  r = runCli({"verify", "--device", "cpu", sourcePath("tests/fixtures/does-not-exist.onnx")});
  EXPECT_EQ(r.exitCode, 2);
  // An input too large to allocate is an error, not a crash.
  r = runCli({"verify", "--device", "cpu", "--random-weights", "-D", "batch=4000000000000",
              sourcePath("models/resnet18.onnx")});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("cannot allocate"), std::string::npos) << r.err;
}

TEST(VerifyCli, StoppedRunExitsOneAndShowsWhatRan) {
  std::string dir = tempDir();
  writeFile(dir + "/det.onnx", onnxFromText(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[4,4] x) => (float[4,4] y) {
  a = Relu(x)
  b = Det(a)
  y = Add(a, b)
})"));
  CliResult r = runCli({"verify", "--device", "cpu", dir + "/det.onnx"});
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_NE(r.out.find("1 of 3 ran"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("stopped before node"), std::string::npos) << r.out;
  // Control flow is not executed: the bundled control_flow model stops at its If.
  r = runCli({"verify", "--device", "cpu", "--random-weights", "-D", "batch=2", "--format", "json",
              sourcePath("models/control_flow.onnx")});
  EXPECT_EQ(r.exitCode, 1) << r.err;
  auto v = llvm::json::parse(r.out);
  ASSERT_TRUE(bool(v)) << llvm::toString(v.takeError());
  const auto *stopped = v->getAsObject()->getObject("verify")->getObject("stopped");
  ASSERT_TRUE(stopped) << r.out;
  EXPECT_EQ(stopped->getString("op").getValueOr(""), "If");
  EXPECT_TRUE(stopped->getString("reason").getValueOr("").contains("control flow"));
}

namespace {

// A backend that runs on the cpu reference but reports measurements the way
// the cuda backend does (annotate): 2 kernels and 1 us per node, a device peak.
class MeasuringBackend final : public Backend {
public:
  std::string_view name() const override { return "fake-gpu"; }
  std::optional<std::string> unsupported(const Node &n) const override { return cpu_->unsupported(n); }
  llvm::Error bind(const Value &v, const HostTensor &t) override { return cpu_->bind(v, t); }
  llvm::Error execute(const Node &n) override { return cpu_->execute(n); }
  uint64_t bytesOf(const Value &v) const override { return cpu_->bytesOf(v); }
  void release(const Value &v) override { cpu_->release(v); }
  std::optional<HostTensor> fetch(const Value &v) const override { return cpu_->fetch(v); }
  void annotate(RunRecord &r) const override {
    for (NodeRecord &nr : r.nodes) {
      nr.kernels = 2;
      nr.seconds = 1e-6;
    }
    r.devicePeakBytes = 4u << 20;
    r.memcpys = 3;
  }

private:
  std::unique_ptr<Backend> cpu_ = makeCpuBackend();
};

}  // namespace

// Backend measurements (CUPTI on the cuda backend) sum per fusion group and in
// total, and every error is (predicted - measured) / measured.
TEST(VerifyComparison, BackendMeasurementsSumPerFusionGroup) {
  auto m = importText(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[64,64] x, float[64,64] w) => (float[64,64] y) {
  h = MatMul(x, w)
  r = Relu(h)
  s = Softmax(r)
  y = Sigmoid(s)
})");
  MeasuringBackend backend;
  graphlint::Setup setup;
  VerifyOptions vo;
  vo.warmupRuns = 0;
  auto v = verifyModel(*m, setup, backend, vo);
  ASSERT_TRUE(bool(v)) << llvm::toString(v.takeError());
  EXPECT_EQ(v->measuredKernels, 8u);
  EXPECT_DOUBLE_EQ(v->measuredSeconds, 4e-6);
  EXPECT_EQ(v->devicePeakBytes, 4u << 20);
  EXPECT_EQ(v->memcpys, 3u);
  unsigned nodes = 0;
  double predicted = 0;
  for (const GroupComparison &g : v->groups) {
    ASSERT_TRUE(g.ran);
    unsigned groupNodes = static_cast<unsigned>(std::count(g.ops.begin(), g.ops.end(), '+') + 1);
    nodes += groupNodes;
    EXPECT_EQ(g.measuredKernels, 2 * groupNodes) << g.ops;
    EXPECT_DOUBLE_EQ(g.measuredSeconds, 1e-6 * groupNodes) << g.ops;
    ASSERT_TRUE(g.predictedSeconds);
    predicted += *g.predictedSeconds;
  }
  EXPECT_EQ(nodes, 4u);
  ASSERT_TRUE(v->predictedSeconds);
  EXPECT_DOUBLE_EQ(*v->predictedSeconds, predicted);
  EXPECT_DOUBLE_EQ(*relativeError(v->predictedSeconds, v->measuredSeconds), (predicted - 4e-6) / 4e-6);
  EXPECT_FALSE(relativeError(std::nullopt, 1.0));
  EXPECT_FALSE(relativeError(1.0, 0.0));
  // The JSON carries the device peak and the group table.
  llvm::json::Value j = verifyToJson(*v);
  const auto *verify = j.getAsObject()->getObject("verify");
  EXPECT_EQ(verify->getObject("peak_memory")->getInteger("device_bytes"), int64_t(4u << 20));
  EXPECT_EQ(verify->getString("backend").getValueOr(""), "fake-gpu");
  EXPECT_EQ(verify->getArray("groups")->size(), v->groups.size());
}

TEST(VerifyExecutor, PlanSharesTheMemoryPlansLivenessInsideModuleScopes) {
  // x -> /pre/Exp -> a -> /blk/Exp -> b -> /blk/Exp_1 -> c -> /blk/Exp_2 -> d.
  // `a` enters module scope /blk, whose forward holds its argument until it
  // returns (the last /blk node): the memory plan keeps it live to /blk/Exp_2.
  // The executor used to free it after its last reader (/blk/Exp) and so
  // measured a 3 MiB peak against the plan's 4 MiB; both now read one Liveness.
  IrBuilder b;
  Value *v = b.input("x", f32({1024, 256}));  // 1 MiB
  const char *names[] = {"/pre/Exp", "/blk/Exp", "/blk/Exp_1", "/blk/Exp_2"};
  const char *outs[] = {"a", "b", "c", "d"};
  for (int i = 0; i < 4; ++i) {
    Node *n = b.node("Exp", {v}, {outs[i]}, names[i]);
    n->outputs[0]->type = f32({1024, 256});
    v = n->outputs[0];
  }
  b.output(v);
  const Model &m = b.model();
  const Value *a = m.graph->nodes()[0]->outputs[0];
  EXPECT_EQ(Liveness(*m.graph).lastRead(a), 3);
  ExecPlan plan(*m.graph);
  ASSERT_EQ(plan.steps().size(), 4u);
  EXPECT_TRUE(plan.steps()[1].freeAfter.empty());  // a is held by /blk
  ASSERT_EQ(plan.steps()[3].freeAfter.size(), 2u);  // a and c die at the scope's end
  const graphlint::Setup setup;  // the context keeps a reference: it must outlive it
  AnalysisContext ctx(m, setup);
  const uint64_t predicted = ctx.get<MemoryPlan>().summary().peakAllocatedBytes;
  EXPECT_EQ(predicted, 4u << 20);
  EXPECT_EQ(plannedPeakBytes(plan), predicted);
  auto cpu = makeCpuBackend();
  ASSERT_FALSE(bool(feedModel(m, plan, *cpu, FeedOptions{})));
  RunRecord r = runPlan(plan, *cpu);
  EXPECT_TRUE(r.complete());
  EXPECT_EQ(r.peakBytes, predicted);
}
