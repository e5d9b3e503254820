// Reporters are pure functions from sorted diagnostics to text: one per
// output format. They never analyse; docs/output-formats.md specifies each.
#pragma once

#include "graphlint/ir/Display.h"
#include "graphlint/engine/Driver.h"
#include "graphlint/engine/Plan.h"
#include "graphlint/engine/RunComparison.h"

#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

#include <optional>
#include <string_view>

namespace graphlint {

enum class OutputFormat { Text, Gcc, Json, Sarif, Github };
std::optional<OutputFormat> outputFormatFromName(std::string_view s);

struct Totals {
  unsigned errors = 0, warnings = 0, notes = 0, fatal = 0;
  unsigned suppressed = 0, baselined = 0;
};
Totals totalsOf(const std::vector<FileReport> &reports);

/// Version of the JSON report format; bumped on incompatible changes.
inline constexpr int kJsonFormatVersion = 1;

/// `fusion`: after each file's diagnostics, its fusion table (--fusion);
/// `cost`: then its cost table (--cost).
/// `quiet` (--quiet): only fatal-file lines and the summary line (and the
/// fusion tables when `fusion`).
void renderText(const std::vector<FileReport> &reports, llvm::raw_ostream &os, bool color, bool fusion = false,
                bool quiet = false, bool cost = false);
/// Where a finding is in the graph, module path first: "blocks.3.attn.proj:
/// node #12 'addmm_3' (aten::addmm)", then " in FILE" when `withFile` (the
/// model file as a note under the user's line). Empty for a whole-file
/// finding without `withFile`.
std::string graphLocationText(const Location &l, bool withFile);
/// The primary location as text reporters print it: "model.py:41:9" (the
/// user's line; ":COL" only when known), else the model file.
std::string primaryPositionText(const Location &l);
/// --statistics: one line per rule that fired, `COUNT  CODE name`, by count
/// (descending) then code.
void renderStatistics(const std::vector<FileReport> &reports, llvm::raw_ostream &os);
void renderGcc(const std::vector<FileReport> &reports, llvm::raw_ostream &os);
void renderJson(const std::vector<FileReport> &reports, llvm::raw_ostream &os);
llvm::json::Value diagnosticToJson(const Diagnostic &d);
/// SARIF 2.1.0 (GitHub code scanning): docs/output-formats.md#sarif.
void renderSarif(const std::vector<FileReport> &reports, llvm::raw_ostream &os);
/// A path as a SARIF artifact URI: relative to the current directory when
/// under it, '/'-separated, percent-encoded; else an absolute file:// URI.
std::string sarifUri(const std::string &path);
/// The first prose paragraph of a rule doc page (headings skipped).
std::string firstParagraph(std::string_view doc);
/// GitHub Actions workflow commands (::error file=...,line=...::message).
void renderGithub(const std::vector<FileReport> &reports, llvm::raw_ostream &os);
std::string githubEscapeData(const std::string &s);
std::string githubEscapeProperty(const std::string &s);

/// The `fusion` section of a JSON file entry (null when not present).
llvm::json::Value fusionToJson(const FusionSummary &s);
/// `--fusion` in the text format: the group table and the summary line of one
/// model, headed by `title` (the file).
void renderFusionText(const FusionSummary &s, const std::string &title, llvm::raw_ostream &os);
/// The one-line summary: "N nodes, G groups, K kernels; breaks: ...; structural: ...".
std::string fusionSummaryLine(const FusionSummary &s);
/// `--emit-dot`: the model's fusion plan as a Graphviz digraph (needs the
/// summary's edges). docs/output-formats.md describes the drawing.
void renderDot(const FusionSummary &s, const std::string &title, llvm::raw_ostream &os);

/// The `compute` and `communication` sections of a JSON file entry (null when
/// not present; communication only for a training step).
llvm::json::Value computeToJson(const CostSummary &s);
llvm::json::Value communicationToJson(const CostSummary &s);
/// `--cost` in the text format: the per-step table of one model, headed by
/// `title` (the file).
void renderCostText(const CostSummary &s, const std::string &title, llvm::raw_ostream &os);
/// The `memory` section of a JSON file entry (null when not present);
/// docs/memory.md describes the fields.
llvm::json::Value memoryToJson(const MemorySummary &s);
/// `--memory` in the text format: the model-state/peak table and the largest
/// storages live at the peak, headed by `title` (the file).
void renderMemoryText(const MemorySummary &s, const std::string &title, llvm::raw_ostream &os);
/// `--memory-plot`: live bytes over the step as an SVG line chart, phases
/// shaded, the peak and the device capacity marked.
void renderMemorySvg(const MemorySummary &s, const std::string &title, llvm::raw_ostream &os);
/// The same, and below the chart each pipeline rank's peak (pp > 1) and each
/// data-parallel and mesh collective of the step: link, bytes, time, hidden.
void renderMemorySvg(const MemorySummary &s, const CostSummary::Communication *comm, const std::string &title,
                     llvm::raw_ostream &os);

/// `--emit-memory-snapshot FILE.pickle`: the predicted memory snapshot as
/// torch.cuda.memory._snapshot()'s dict, pickled (protocol 2; docs/viewers.md).
void renderMemorySnapshot(const MemorySnapshot &s, llvm::raw_ostream &os);

/// `--emit-trace FILE.json`: the predicted step trace as torch.profiler's
/// Chrome trace JSON (docs/viewers.md), `title` the model file.
void renderStepTrace(const StepTrace &t, const std::string &title, llvm::raw_ostream &os);

/// `--emit-model-explorer DIR` (docs/viewers.md#model-explorer): the files
/// written into DIR for one model, in this order: Model Explorer's JSON graph
/// (one graph collection: the main graph, its bodies and local functions,
/// module paths as namespaces) and one node-data overlay per prediction.
enum class ExplorerFile : uint8_t { Graph, FusionGroup, PredictedTime, PeakBytes, Findings };
inline constexpr ExplorerFile kExplorerFiles[] = {ExplorerFile::Graph, ExplorerFile::FusionGroup,
                                                  ExplorerFile::PredictedTime, ExplorerFile::PeakBytes,
                                                  ExplorerFile::Findings};
/// "graph.json", "fusion_group.json", "predicted_time.json",
/// "peak_bytes.json", "findings.json".
std::string_view explorerFileName(ExplorerFile f);
/// One of the files, from the report's GraphSummary and diagnostics.
void renderModelExplorer(const FileReport &r, ExplorerFile f, llvm::raw_ostream &os);

/// `graphlint compare` (docs/viewers.md#compare): the predicted-vs-measured
/// table (the `top` ops with the largest time error) and its JSON.
void renderCompareText(const RunComparison &c, unsigned top, llvm::raw_ostream &os);
llvm::json::Value compareToJson(const RunComparison &c);

/// `graphlint plan` (docs/plan.md): the JSON contract (`candidates[]`, best
/// first, every one evaluated; `evaluated`), the text report (the top `top`
/// setups, why the runner-up lost, the launch line, the closest setups that
/// do not fit) and the memory-vs-throughput Pareto front as an SVG chart.
/// `baseFlags`: the setup flags the plan was given, which the lint line of
/// each candidate repeats.
llvm::json::Value planToJson(const PlanResult &r, const std::string &model, const std::vector<std::string> &baseFlags);
void renderPlanText(const PlanResult &r, const std::string &model, unsigned top,
                    const std::vector<std::string> &baseFlags, llvm::raw_ostream &os);
void renderParetoSvg(const PlanResult &r, const std::string &title, llvm::raw_ostream &os);

/// `graphlint inspect`: the model's structure as JSON (a documented contract)
/// or as a readable summary.
llvm::json::Value inspectJson(const Model &m);
void renderInspectText(const Model &m, llvm::raw_ostream &os);

}  // namespace graphlint
