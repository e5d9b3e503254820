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

void renderText(const std::vector<FileReport> &reports, llvm::raw_ostream &os, bool color);
void renderGcc(const std::vector<FileReport> &reports, llvm::raw_ostream &os);
void renderJson(const std::vector<FileReport> &reports, llvm::raw_ostream &os);
llvm::json::Value diagnosticToJson(const Diagnostic &d);

/// `graphlint inspect`: the model's structure as JSON (a documented contract)
/// or as a readable summary.
llvm::json::Value inspectJson(const Model &m);
void renderInspectText(const Model &m, llvm::raw_ostream &os);

}  // namespace graphlint
