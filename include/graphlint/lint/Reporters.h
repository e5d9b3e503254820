// Reporters are pure functions from sorted diagnostics to text: one per
// output format. They never analyse; docs/output-formats.md specifies each.
#pragma once

#include "graphlint/lint/Driver.h"

#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

#include <optional>
#include <string_view>

namespace graphlint {

enum class OutputFormat { Text, Gcc, Json };
std::optional<OutputFormat> outputFormatFromName(std::string_view s);

struct Totals {
  unsigned errors = 0, warnings = 0, notes = 0, fatal = 0;
};
Totals totalsOf(const std::vector<FileReport> &reports);

/// Version of the JSON report format; bumped on incompatible changes.
inline constexpr int kJsonFormatVersion = 1;

/// `fusion`: after each file's diagnostics, its fusion table (--fusion).
void renderText(const std::vector<FileReport> &reports, llvm::raw_ostream &os, bool color, bool fusion = false);
void renderGcc(const std::vector<FileReport> &reports, llvm::raw_ostream &os);
void renderJson(const std::vector<FileReport> &reports, llvm::raw_ostream &os);
llvm::json::Value diagnosticToJson(const Diagnostic &d);

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

/// `graphlint inspect`: the model's structure as JSON (a documented contract)
/// or as a readable summary.
llvm::json::Value inspectJson(const Model &m);
void renderInspectText(const Model &m, llvm::raw_ostream &os);

}  // namespace graphlint
