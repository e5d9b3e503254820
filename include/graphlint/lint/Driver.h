// The driver runs the pipeline for each file: import -> analyses -> rules ->
// sorted diagnostics. Files are linted in parallel; results come back in the
// order the files were given, so output is deterministic.
#pragma once

#include "graphlint/ir/Importer.h"
#include "graphlint/lint/Diagnostic.h"
#include "graphlint/lint/FusionSummary.h"
#include "graphlint/lint/MemorySummary.h"
#include "graphlint/lint/Setup.h"

#include <memory>
#include <string>
#include <vector>

namespace graphlint {

struct LintOptions {
  Setup setup;
  /// Copy the fusion plan into FileReport::fusion (JSON, --fusion, --emit-dot).
  bool fusionSummary = true;
  /// Also record every data edge in the summary (for --emit-dot).
  bool fusionEdges = false;
  /// Copy the memory plan into FileReport::memory (JSON, --memory, --memory-plot).
  bool memorySummary = true;
  /// Keep each imported model alive instead of freeing it after linting. The
  /// CLI sets this: it exits right after reporting, and tearing down a
  /// million-node IR costs more than the OS reclaiming it.
  bool skipModelTeardown = false;
};

struct FileStats {
  uint64_t nodes = 0;        // all graphs, nested included
  uint64_t graphs = 0;
  uint64_t values = 0;
  uint64_t params = 0;
  uint64_t paramBytes = 0;
};

struct FileReport {
  std::string path;
  /// The file could not be linted at all (unreadable, not a model).
  bool fatal = false;
  std::string fatalMessage;   // one line, without the path
  std::vector<Diagnostic> diagnostics;  // sorted
  FileStats stats;
  /// The fusion plan as plain data (present unless fatal or not requested).
  FusionSummary fusion;
  /// The memory plan as plain data (present unless fatal or not requested).
  MemorySummary memory;
};

ImportOptions importOptionsFor(const LintOptions &opts);
FileStats statsOf(const Model &m);
FileReport lintModel(const Model &m, const LintOptions &opts);
FileReport lintFile(const std::string &path, const LintOptions &opts);
std::vector<FileReport> lintFiles(const std::vector<std::string> &paths, const LintOptions &opts, unsigned jobs);

}  // namespace graphlint
