// What every fuzz target shares: the lint of one in-memory model through the
// same library calls the CLI makes (import -> analyses -> every rule ->
// suppression pass -> reporters), with every summary the JSON report asks for.
// Each target is one .cpp defining LLVMFuzzerTestOneInput; libFuzzer drives it
// in the fuzz build (GRAPHLINT_BUILD_FUZZERS) and ReplayMain.cpp replays
// fuzz/regressions/ through it in the normal build.
#pragma once

#include "graphlint/engine/Driver.h"
#include "graphlint/report/Reporters.h"

#include <llvm/Support/raw_ostream.h>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace graphlint::fuzz {

/// A model path in a directory that does not exist: external data named by
/// a fuzzed model never resolves to a real file.
inline constexpr const char *kModelPath = "/nonexistent-graphlint-fuzz/model.onnx";

/// Lints an imported model with all rules and renders it in every format.
inline void lintAndRender(const Model &m) {
  LintOptions opts;
  opts.fusionSummary = opts.fusionEdges = opts.costSummary = opts.memorySummary = true;
  std::vector<FileReport> reports{lintModel(m, opts)};
  llvm::raw_null_ostream sink;
  renderText(reports, sink, /*color=*/false, /*fusion=*/true, /*quiet=*/false, /*cost=*/true);
  renderJson(reports, sink);
  renderSarif(reports, sink);
  renderGcc(reports, sink);
  renderDot(reports[0].fusion, "fuzz", sink);
  renderMemoryText(reports[0].memory, "fuzz", sink);
}

}  // namespace graphlint::fuzz
