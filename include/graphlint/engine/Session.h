// A lint session: what one run of graphlint owns between reading its
// arguments and rendering, as clang-tidy's and ruff's drivers hand a session
// to the engine. It finds each model's configuration (the nearest
// .graphlint.yaml, or --config), loads each config file once, resolves the
// setup once per model (Config::setup, hardware included), loads and applies
// the baseline, adds the cross-file GL005 findings of config ignores no file
// used, decides which summaries the driver computes, and says what the exit
// code is. The CLI's subcommands (tools/graphlint/) and, through the binary,
// the Python package use nothing else to lint. Rendering stays outside:
// reporters read the FileReports the session returns.
#pragma once

#include "graphlint/engine/Baseline.h"
#include "graphlint/engine/Config.h"
#include "graphlint/engine/Driver.h"

#include <llvm/Support/Error.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace graphlint {

/// What the renderer will show, from which the session decides what the
/// driver copies out of each model's analyses (a summary nobody reads is not
/// computed: the memory plan of a 70B graph costs seconds).
struct ReportNeeds {
  bool allSections = false;   // JSON: fusion, compute, communication and memory always
  bool fusionText = false;    // --fusion in text
  bool costText = false;      // --cost in text
  bool memoryText = false;    // --memory
  bool dot = false;           // --emit-dot (fusion plan with every data edge)
  bool memoryPlot = false;    // --memory-plot
  bool sourceSnippets = false;  // text without --quiet: the user's source lines
  bool memorySnapshot = false;  // --emit-memory-snapshot
  bool stepTrace = false;       // --emit-trace
  bool modelExplorer = false;   // --emit-model-explorer
};

struct SessionOptions {
  /// Everything the command line says that a config file can say too; the
  /// last layer, so it wins. origin "command line".
  ConfigLayer commandLine;
  /// --config FILE: used for every model instead of discovery.
  std::string configFile;
  /// --launch-config FILE: a DeepSpeed, accelerate or torchtitan config read
  /// as a layer between the config file and the command line (LaunchConfig.h).
  std::string launchConfig;
  /// false with --no-config / --isolated: no .graphlint.yaml is looked for.
  bool discoverConfigs = true;
  /// Told each discovered config file passed over as untrusted, once
  /// (one line, without a "graphlint:" prefix).
  std::function<void(const std::string &)> onWarning;
  /// --baseline FILE: findings it accepts are dropped.
  std::string baseline;
  /// --write-baseline FILE: every finding is written there; the run passes.
  std::string writeBaseline;
  /// --no-group turns grouping off.
  bool group = true;
  /// --show-library-findings: each finding in library code on its own line.
  bool showLibraryFindings = false;
  ReportNeeds needs;
};

/// A baseline entry that matched no finding (printed on stderr).
struct StaleBaselineEntry {
  std::string baseline;
  BaselineEntry entry;
};

struct SessionResult {
  std::vector<FileReport> reports;
  std::vector<StaleBaselineEntry> stale;
  /// Findings written to --write-baseline (when it was given).
  size_t baselineWritten = 0;
};

class LintSession {
public:
  explicit LintSession(SessionOptions options);

  /// The effective configuration of one model file; a config file that
  /// cannot be read or parsed is an error naming it (file:line: problem).
  /// Each config file is loaded once per session.
  llvm::Expected<Config> configFor(const std::string &model);
  /// The config files loaded so far, in first-use order.
  const std::vector<const ConfigLayer *> &configFiles() const { return order_; }

  /// Every model's configuration and the baseline, before anything is
  /// linted: a bad config or baseline stops the run (exit 2).
  llvm::Error prepare(const std::vector<std::string> &models);
  /// The driver's options for models[i] (after prepare).
  const LintOptions &lintOptions(size_t i) const { return opts_[i]; }
  const Config &config(size_t i) const { return configs_[i]; }

  /// The paths this session reads (models, the external-data files they
  /// name, config files, baseline, the hardware file), each with its role,
  /// for refusing outputs onto them.
  std::vector<std::pair<std::string, std::string>> inputs(const std::vector<std::string> &models) const;

  /// Lints the prepared models on `jobs` threads, then applies cross-file
  /// GL005, writes --write-baseline and applies --baseline.
  llvm::Expected<SessionResult> run(const std::vector<std::string> &models, unsigned jobs,
                                    const ProgressFn &progress = {});

  /// The exit code the findings give: 2 if a file was fatal, 1 if a finding
  /// reaches its file's fail-on (unless exitZero or a baseline was written),
  /// else 0.
  int exitCode(const SessionResult &r, bool exitZero) const;

private:
  SessionOptions o_;
  std::map<std::string, std::unique_ptr<ConfigLayer>> loaded_;
  std::vector<const ConfigLayer *> order_;
  std::vector<Config> configs_;
  std::vector<LintOptions> opts_;
  std::optional<Baseline> baseline_;
  std::set<std::string> warned_;
  /// The --launch-config layer, read once.
  std::unique_ptr<ConfigLayer> launch_;
};

/// The LintOptions a session gives one model: its configuration, the
/// presentation passes and the summaries `needs` asks for.
LintOptions lintOptionsFor(const Config &c, const ReportNeeds &needs, bool group, bool foldLibrary = true);

}  // namespace graphlint
