// The verify executor's cpu reference backend against ONNX's backend node
// tests: every test whose ops the backend supports runs through the shared
// planner and dispatcher with the test's own inputs, and its outputs must
// match the expected ones within ONNX's tolerances. The dispatcher's measured
// peak must equal the liveness peak planned from the IR's static types, which
// checks the memory plan the comparison reports.
#include "TestSupport.h"

#include "graphlint/verify/Executor.h"

#include <gtest/gtest.h>

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <fmt/format.h>

#include <map>
#include <set>

using namespace graphlint;
using namespace graphlint::verify;
using namespace graphlint::test;

namespace {

struct NodeTally {
  unsigned supported = 0, passed = 0, peakChecked = 0, notSupported = 0;
  std::map<std::string, std::vector<std::string>> failuresByOp;
  std::set<std::string> passedTests;
};

bool allOpsSupported(const Graph &g, const std::set<std::string> &ops) {
  for (const auto &n : g.nodes())
    if (!n->domain.empty() || !ops.count(n->opType) || !n->subgraphs().empty())
      return false;
  for (const auto *list : {&g.inputs, &g.outputs})
    for (const Value *v : *list)
      if (v->type.kind != TypeKind::Tensor || !hostSupportsDtype(v->type.dtype))
        return false;
  return !g.nodes().empty();
}

// A failure that is the backend declining (a mode or output it does not
// implement) or test data onnx 1.12 writes in another dtype than the model
// declares (bfloat16 as UINT16): reported, not a wrong result.
bool isNotSupported(const std::string &why) {
  return why.find("not supported") != std::string::npos || why.rfind("skip:", 0) == 0;
}

// Runs one test directory; returns "" on success, else why it failed.
std::string runNodeTest(const std::string &dir, bool &peakChecked) {
  auto m = importModelFile(dir + "/model.onnx", {});
  if (!m)
    return "import: " + llvm::toString(m.takeError());
  const Graph &g = *(*m)->graph;
  ExecPlan plan(g);
  auto backend = makeCpuBackend();
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    auto t = parseTensorProto(readFile(fmt::format("{}/test_data_set_0/input_{}.pb", dir, i)));
    if (!t)
      return "input: " + llvm::toString(t.takeError());
    if (t->dtype != g.inputs[i]->type.dtype)
      return "skip: input data type differs from the declared one";
    if (auto e = backend->bind(*g.inputs[i], *t))
      return llvm::toString(std::move(e));
  }
  for (const auto &p : g.params())
    if (auto t = tensorFromLiteral(p->tensor))
      cantFail(backend->bind(*p->value, *t));
  RunRecord r = runPlan(plan, *backend);
  if (!r.complete())
    return r.stopReason;
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    auto want = parseTensorProto(readFile(fmt::format("{}/test_data_set_0/output_{}.pb", dir, i)));
    if (!want)
      return "expected output: " + llvm::toString(want.takeError());
    auto got = backend->fetch(*g.outputs[i]);
    std::string why;
    if (!got)
      return "output " + g.outputs[i]->name + " not produced";
    // Integer results must be exact; floats within ONNX's rtol 1e-3, atol 1e-5
    // (the reference computes in double, the expected data in float32).
    bool exact = !isFloating(want->dtype);
    if (want->dtype != g.outputs[i]->type.dtype)
      return "skip: expected data type differs from the declared one";
    if (got->dtype != want->dtype)
      return fmt::format("output {}: dtype {} != expected {}", i, dtypeName(got->dtype), dtypeName(want->dtype));
    if (!allClose(*got, *want, exact ? 0 : 1e-3, exact ? 0 : 1e-5, why))
      return fmt::format("output {}: {}", i, why);
  }
  // The memory plan: planned (static types) and measured peaks agree.
  if (auto planned = plannedPeakBytes(plan)) {
    peakChecked = true;
    if (*planned != r.peakBytes)
      return fmt::format("peak: planned {} bytes, measured {}", *planned, r.peakBytes);
  }
  return "";
}

NodeTally runNodeCorpus(const std::string &nodeDir) {
  NodeTally t;
  std::vector<std::string> ops = cpuSupportedOps();
  std::set<std::string> supported(ops.begin(), ops.end());
  std::error_code ec;
  std::vector<std::string> dirs;
  for (llvm::sys::fs::directory_iterator it(nodeDir, ec), end; it != end && !ec; it.increment(ec))
    dirs.push_back(it->path());
  std::sort(dirs.begin(), dirs.end());
  for (const std::string &dir : dirs) {
    ImportOptions io;
    auto m = importModelFile(dir + "/model.onnx", io);
    if (!m) {
      llvm::consumeError(m.takeError());
      continue;
    }
    if (!allOpsSupported(*(*m)->graph, supported))
      continue;
    bool peakChecked = false;
    std::string why = runNodeTest(dir, peakChecked);
    if (isNotSupported(why)) {
      ++t.notSupported;
      continue;
    }
    ++t.supported;
    t.peakChecked += peakChecked;
    std::string name = llvm::sys::path::filename(dir).str();
    if (why.empty()) {
      ++t.passed;
      t.passedTests.insert(name);
    } else {
      t.failuresByOp[(*m)->graph->nodes().front()->opType].push_back(name + ": " + why);
    }
  }
  return t;
}

void report(const NodeTally &t, const std::string &label) {
  std::string text;
  for (const auto &[op, fails] : t.failuresByOp)
    for (const std::string &f : fails)
      text += "  " + op + " " + f + "\n";
  std::cout << fmt::format("[{}] cpu backend: {} of {} supported node tests match; peak checked on {}; "
                           "{} declined (mode or output not supported)\n",
                           label, t.passed, t.supported, t.peakChecked, t.notSupported)
            << text;
}

}  // namespace

TEST(VerifyNodeTests, CpuBackendMatchesInstalledOnnxNodeTests) {
  std::string dir = std::string(GRAPHLINT_NODE_TESTS_DIR) + "/node";
  if (!llvm::sys::fs::is_directory(dir))
    GTEST_SKIP() << "no generated node tests at " << dir << " (run the generate_onnx_node_tests CTest fixture)";
  NodeTally t = runNodeCorpus(dir);
  report(t, "python3-onnx");
  EXPECT_GE(t.supported, 450u);
  EXPECT_EQ(t.passed, t.supported);
  // The ops the bundled models need must be exact on their own tests.
  for (const char *name : {"test_conv_with_strides_padding", "test_maxpool_2d_pads", "test_globalaveragepool",
                           "test_gemm_default_single_elem_vector_bias", "test_matmul_4d", "test_layer_normalization_4d_axis1",
                           "test_softmax_axis_1", "test_hardswish", "test_hardsigmoid", "test_erf", "test_where_example",
                           "test_split_equal_parts_1d", "test_range_float_type_positive_delta", "test_gather_0",
                           "test_slice", "test_transpose_default", "test_reshape_reordered_all_dims", "test_concat_2d_axis_0",
                           "test_constantofshape_float_ones", "test_unsqueeze_axis_0", "test_flatten_axis0",
                           "test_batchnorm_example", "test_averagepool_2d_pads", "test_reduce_mean_default_axes_keepdims_example"})
    EXPECT_TRUE(t.passedTests.count(name)) << name;
}

TEST(VerifyNodeTests, CpuBackendMatchesSharedCorpusNodeTests) {
  if (!sharedAvailable() || !llvm::sys::fs::is_directory(sharedPath("corpus/onnx-backend/node")))
    GTEST_SKIP() << "../shared/corpus is absent";
  NodeTally t = runNodeCorpus(sharedPath("corpus/onnx-backend/node"));
  report(t, "shared corpus");
  EXPECT_GE(t.supported, 650u);
  EXPECT_GE(t.passed, t.supported * 99 / 100);
}
