// The driver runs the pipeline for each file: import -> analyses -> rules ->
// sorted diagnostics. Files are linted in parallel; results come back in the
// order the files were given, so output is deterministic.
#pragma once

#include "graphlint/import/Importer.h"
#include "graphlint/engine/Config.h"
#include "graphlint/engine/CostSummary.h"
#include "graphlint/base/Diagnostic.h"
#include "graphlint/engine/FusionSummary.h"
#include "graphlint/engine/GraphSummary.h"
#include "graphlint/analyses/MemorySnapshot.h"
#include "graphlint/analyses/MemorySummary.h"
#include "graphlint/analyses/StepTrace.h"
#include "graphlint/base/Setup.h"

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace graphlint {

class AnalysisContext;

struct LintOptions {
  Setup setup;
  /// Which rules run, severity overrides and suppressions (from Config).
  RulePolicy policy = RulePolicy::allRules();
  /// Copy the fusion plan into FileReport::fusion (JSON, --fusion, --emit-dot).
  bool fusionSummary = true;
  /// Also record every data edge in the summary (for --emit-dot).
  bool fusionEdges = false;
  /// Copy the compute model and step timeline into FileReport::cost (JSON
  /// `compute` / `communication`, --cost).
  bool costSummary = true;
  /// Copy the memory plan into FileReport::memory (JSON, --memory, --memory-plot).
  bool memorySummary = true;
  /// Record the memory plan's allocator replay into FileReport::snapshot
  /// (--emit-memory-snapshot; off by default: it holds every event).
  bool memorySnapshot = false;
  /// Record the step timeline as trace events into FileReport::trace
  /// (--emit-trace).
  bool stepTrace = false;
  /// Copy the graphs, each node with its fusion group, predicted seconds and
  /// bytes at the memory peak, into FileReport::graph (--emit-model-explorer).
  bool graphSummary = false;
  /// Keep each imported model alive instead of freeing it after linting. The
  /// CLI sets this: it exits right after reporting, and tearing down a
  /// million-node IR costs more than the OS reclaiming it.
  bool skipModelTeardown = false;
  /// Presentation (src/engine/Grouping.cpp), which the CLI turns on: fold findings
  /// of one cause at one source line into one diagnostic (off with
  /// --no-group), and keep each message's first line short (the rest becomes
  /// a note). Off by default, so that rule tests see what the rules wrote.
  bool group = false;
  /// Fold findings whose source line is library code (site-packages) into one
  /// per rule and library (off with --show-library-findings).
  bool foldLibrary = false;
  bool shortenMessages = false;
  /// Read the user's source lines the findings point at into
  /// FileReport::sourceLines (the text reporter's snippets).
  bool sourceLines = false;
  /// Called at the end of lintModel while the model and its analyses are
  /// alive, for a caller that needs more than the summaries (graphlint diff
  /// reads the memory plan's storages at the peak and the fusion groups per
  /// node). It reads; it never changes the report's findings.
  std::function<void(const Model &, AnalysisContext &)> withAnalyses;
};

struct FileStats {
  uint64_t nodes = 0;        // all graphs, nested included
  uint64_t graphs = 0;
  uint64_t values = 0;
  uint64_t params = 0;        // parameters: registered buffers apart
  uint64_t paramBytes = 0;
  uint64_t buffers = 0;       // registered buffers (norm running stats, masks)
  uint64_t bufferBytes = 0;
};

struct FileReport {
  std::string path;
  /// The file could not be linted at all (unreadable, not a model).
  bool fatal = false;
  std::string fatalMessage;   // one line, without the path
  std::vector<Diagnostic> diagnostics;  // sorted; suppressed and baselined ones removed
  unsigned suppressed = 0;   // dropped by per-file/per-node ignores and node metadata
  unsigned baselined = 0;    // dropped because the --baseline accepts them
  /// Origins ("file:line") of config ignore entries that suppressed something.
  std::set<std::string> usedIgnores;
  FileStats stats;
  /// The size symbols and the values used for them (-D, hint, unbound).
  std::vector<SymbolInfo> symbols;
  /// Setup problems the lint went on after (a -D that binds nothing): one
  /// line each without the path; the CLI prints them on stderr.
  std::vector<std::string> setupWarnings;
  /// Rules that could not run on this model and what would let them (a
  /// forward-only export for GL132): one line each, without the path.
  std::vector<std::string> hints;
  /// The text of the user's source lines the diagnostics point at, by
  /// (file, line) as in SourceLoc, when readable (LintOptions::sourceLines).
  std::map<std::pair<std::string, unsigned>, std::string> sourceLines;
  /// The fusion plan as plain data (present unless fatal or not requested).
  FusionSummary fusion;
  /// The compute and communication model as plain data (present unless fatal
  /// or not requested).
  CostSummary cost;
  /// The memory plan as plain data (present unless fatal or not requested).
  MemorySummary memory;
  /// The predicted memory snapshot (present only when requested).
  MemorySnapshot snapshot;
  /// The predicted step trace (present only when requested).
  StepTrace trace;
  /// The graphs with per-node predictions (present only when requested).
  GraphSummary graph;
};

ImportOptions importOptionsFor(const LintOptions &opts);
FileStats statsOf(const Model &m);
FileReport lintModel(const Model &m, const LintOptions &opts);
FileReport lintFile(const std::string &path, const LintOptions &opts);
/// Frees a model after its lint, or leaves it to the OS at exit under
/// LintOptions::skipModelTeardown (not in sanitizer builds).
void disposeModel(std::unique_ptr<Model> model, const LintOptions &opts);
std::vector<FileReport> lintFiles(const std::vector<std::string> &paths, const LintOptions &opts, unsigned jobs);

/// Called after each file is linted, from the thread that linted it (calls
/// are serialised): files done so far, total, the file just finished.
using ProgressFn = std::function<void(size_t done, size_t total, const std::string &path)>;
/// One LintOptions per file (each file's own configuration).
std::vector<FileReport> lintFiles(const std::vector<std::string> &paths, const std::vector<LintOptions> &opts,
                                  unsigned jobs, const ProgressFn &progress = {});

}  // namespace graphlint
