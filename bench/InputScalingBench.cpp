// Timings of the inputs that once took seconds or hung (issue 12's fuzzing
// findings, issue 40's round 2): a 2^39 spatial dim, a ConstantOfShape of a
// 10^8-long declared shape, 100,000-deep scoped node names, globs that
// backtracked, 50,000-deep module paths. The unit tests keep what a user
// sees (the inferred type, the match, the lint result); the time is measured
// here, where a busy machine cannot fail a test (docs/performance.md).
// Sizes double so google benchmark fits the complexity: the fixes made these
// linear, and a quadratic regression shows as a worse fit, not a flaky test.
#include "graphlint/engine/Driver.h"
#include "graphlint/engine/Glob.h"
#include "graphlint/ir/ModuleContainers.h"
#include "graphlint/onnx/OnnxImporter.h"

#include <benchmark/benchmark.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/FileSystem.h>
#include <onnx/defs/parser.h>
#include <onnx/onnx_pb.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

using namespace graphlint;

namespace {

onnx::ModelProto parse(const std::string &text) {
  onnx::ModelProto m;
  onnx::OnnxParser parser(text.c_str());
  if (!parser.Parse(m).IsOK())
    std::abort();
  return m;
}

std::string repeat(const std::string &s, size_t n) { return llvm::join(std::vector<std::string>(n, s), ""); }

std::string scratchPath(const char *name) {
  llvm::SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("graphlint-bench", dir))
    std::abort();
  return std::string(dir) + "/" + name;
}

// Imports `bytes` (written nowhere: `path` only names them) per iteration.
void BM_Import(benchmark::State &state, const std::string &bytes) {
  std::string path = scratchPath("model.onnx");
  for (auto _ : state) {
    auto m = importOnnxBytes(bytes, path, {});
    if (!m) {
      llvm::consumeError(m.takeError());
      std::abort();
    }
    benchmark::DoNotOptimize(m->get());
  }
}

// ONNX 1.12 walked a 2^39 dim one stride at a time; graphlint's window
// arithmetic infers it at once (Robustness.HugeSpatialDimIsInferredByTheCheckedFallback).
std::string poolOverA2To39Dim() {
  return parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[16, 1, 549755813888, 549755813888] x) => (float[16, 1, ?, ?] y) {
      y = AveragePool<kernel_shape = [1, 1], strides = [2, 2], auto_pad = "NOTSET">(x)
    })").SerializeAsString();
}
BENCHMARK_CAPTURE(BM_Import, AveragePoolOverA2To39Dim, poolOverA2To39Dim())->Unit(benchmark::kMillisecond);

// A ConstantOfShape whose shape input declares 10^8 elements, its output's
// shape left to inference (Robustness.ConstantOfShapeRankFromAHugeDeclaredLengthStaysUnknown).
std::string constantOfAHugeDeclaredShape() {
  onnx::ModelProto p = parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (int64[100000000] x) => (float[1] y) {
      y = ConstantOfShape(x)
    })");
  p.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  return p.SerializeAsString();
}
BENCHMARK_CAPTURE(BM_Import, ConstantOfShapeOfAHugeDeclaredLength, constantOfAHugeDeclaredShape())
    ->Unit(benchmark::kMillisecond);

// Two nodes named with N scopes each: 20 s and 9.8 GB at 100,000 before the
// scope tree (Robustness.LongScopedNodeNameIsLinear).
void BM_LintLongScopedNodeNames(benchmark::State &state) {
  onnx::ModelProto m = parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x) => (float[4] y) {
      h = Relu(x)
      y = Relu(h)
    })");
  for (onnx::NodeProto &node : *m.mutable_graph()->mutable_node())
    node.set_name(repeat("/a", static_cast<size_t>(state.range(0))) + "/Relu");
  std::string path = scratchPath("scoped.onnx");
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
  for (auto _ : state)
    benchmark::DoNotOptimize(lintFile(path, {}).fatal);
  state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_LintLongScopedNodeNames)->RangeMultiplier(2)->Range(12500, 100000)->Unit(benchmark::kMillisecond)
    ->Complexity();

// "*a" x 64 + "*b" against 63 'a's and N 'b's (no match, found only by
// searching): llvm::GlobPattern backtracked exponentially on such pairs
// (Glob.ManyStarsFinishInstantly).
void BM_GlobManyStars(benchmark::State &state) {
  auto g = Glob::compile(repeat("*a", 64) + "*b");
  if (!g)
    std::abort();
  std::string text = repeat("a", 63) + repeat("b", static_cast<size_t>(state.range(0)));
  for (auto _ : state)
    benchmark::DoNotOptimize(g->matches(text));
  state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_GlobManyStars)->RangeMultiplier(2)->Range(200, 3200)->Complexity();

// "*" + 50,000 'a' + "b*" against N 'a's and a "bc" (a match at the end):
// 27 s at 400,000 before KMP (Glob.OneStarBeforeALongSegmentIsLinear).
void BM_GlobOneStarBeforeALongSegment(benchmark::State &state) {
  auto g = Glob::compile("*" + repeat("a", 50000) + "b*");
  if (!g)
    std::abort();
  std::string text = repeat("a", static_cast<size_t>(state.range(0))) + "bc";
  for (auto _ : state)
    benchmark::DoNotOptimize(g->matches(text));
  state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_GlobOneStarBeforeALongSegment)->RangeMultiplier(2)->Range(100000, 800000)->Unit(benchmark::kMillisecond)
    ->Complexity();

// One module path of N components (ModulePathTrie.DeepPathsCostTheirLengthNotItsSquare).
void BM_ModulePathTrieDeepPath(benchmark::State &state) {
  std::string path = "m";
  for (int64_t i = 0; i < state.range(0); ++i)
    path += ".m" + std::to_string(i % 7);
  for (auto _ : state) {
    ModulePathTrie trie;
    benchmark::DoNotOptimize(trie.insert(path));
  }
  state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_ModulePathTrieDeepPath)->RangeMultiplier(2)->Range(6250, 50000)->Unit(benchmark::kMillisecond)
    ->Complexity();

}  // namespace

BENCHMARK_MAIN();
