// Configuration: which rules run, at what severity, what is suppressed, when
// the exit code fails, and the setup the cost analyses assume. Sources, later
// wins: built-in defaults, the nearest .graphlint.yaml above the model file
// (or --config FILE), the command line. Each source is parsed into a
// ConfigLayer; resolveConfig() folds the layers into the effective Config of
// one model file. docs/configuration.md is the user-facing contract.
#pragma once

#include "graphlint/base/Diagnostic.h"
#include "graphlint/rules/RuleSelectors.h"
#include "graphlint/base/Setup.h"
#include "graphlint/base/SetupKeys.h"

#include <llvm/Support/Error.h>
#include <llvm/Support/raw_ostream.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace graphlint {

/// The file name discovery looks for.
inline constexpr const char *kConfigFileName = ".graphlint.yaml";

/// A per-file-ignores or per-node-ignores entry: rules to drop where the glob
/// matches, and where it was written (for messages and unused reports).
struct IgnoreEntry {
  std::string pattern;              // glob
  std::vector<std::string> codes;   // resolved rule codes
  std::vector<std::string> selectors;  // as written: codes, names, prefixes
  std::string origin;               // "path/.graphlint.yaml:12"
  std::string baseDir;              // per-file-ignores: the config file's directory (globs are relative to it)
};

/// One source of configuration. Unset optionals leave earlier layers alone.
struct ConfigLayer {
  std::string origin;    // the config file, or "command line"
  std::string baseDir;   // per-file-ignores globs are relative to it
  /// A launch config (--launch-config, LaunchConfig.h): not "the config
  /// file", and `config --dump` names it after each setup value it set.
  bool showOrigin = false;
  /// Replaces the selection of earlier layers (then extend-select and ignore
  /// of this layer apply). Rule codes, resolved from codes, names, prefixes.
  std::optional<std::vector<std::string>> select;
  std::vector<std::string> extendSelect;
  std::vector<std::string> ignore;
  std::map<std::string, Severity> severity;   // by rule code
  std::set<std::string> disabled;             // `severity: off`
  RuleOptionValues options;
  std::vector<IgnoreEntry> perFileIgnores;
  std::vector<IgnoreEntry> perNodeIgnores;
  /// fail-on: a severity, or nullopt inside for `never`.
  std::optional<std::optional<Severity>> failOn;
  std::optional<bool> reportUnusedIgnores;

  /// Setup values (Setup.h), checked against their key's row of the setup
  /// table (SetupKeys.h), in the order written; later layers win.
  std::vector<SetupSetting> setup;
};

/// What the driver applies to one file's findings after the rules ran.
struct RulePolicy {
  std::set<std::string> enabled;               // rule codes that run
  std::map<std::string, Severity> severity;    // overrides of the default
  /// per-file-ignores entries whose glob matched this file.
  std::vector<IgnoreEntry> fileIgnores;
  /// The other per-file-ignores entries: matched against each finding's
  /// source file (the user's Python file, a library's), not the model file.
  std::vector<IgnoreEntry> sourceIgnores;
  std::vector<IgnoreEntry> nodeIgnores;
  /// Report suppressions that suppressed nothing as GL005.
  bool reportUnusedIgnores = false;

  /// Every rule enabled at its default severity, nothing suppressed.
  static RulePolicy allRules();
  bool isEnabled(const std::string &code) const { return enabled.count(code) != 0; }
};

/// The effective configuration of one model file.
struct Config {
  std::string file;                            // the config file used, "" if none
  RulePolicy policy = RulePolicy::allRules();
  std::optional<Severity> failOn = Severity::Error;  // nullopt: never
  Setup setup;
  /// Setup key -> the launch config that set it, when no later layer did.
  std::map<std::string, std::string> setupOrigin;
};

/// Parses .graphlint.yaml text. Every error names the file, the line and the
/// key: an unknown key, rule, severity or option, a value of the wrong type.
llvm::Expected<ConfigLayer> parseConfigYaml(llvm::StringRef text, const std::string &path);
/// Reads and parses a config file.
llvm::Expected<ConfigLayer> loadConfigFile(const std::string &path);
/// Where discovery found a model's config file, and the candidates it passed
/// over as untrusted (one warning line each, without a "graphlint:" prefix).
struct ConfigDiscovery {
  std::string path;  // empty: none
  std::vector<std::string> ignored;
};

/// The nearest trusted .graphlint.yaml in the model file's directory or
/// above it, up to the repository's top level (the folder holding `.git`;
/// with no repository, up to `/`). Passed over, with a warning, are files
/// owned by another user (root excepted), writable by every user or in a
/// directory writable by every user, and symlinks that resolve outside the
/// repository (no repository: outside the folder holding the link), as
/// git's safe.directory does (docs/configuration.md).
ConfigDiscovery discoverConfigFile(const std::string &modelPath);
/// discoverConfigFile's path; empty when there is none.
std::string findConfigFile(const std::string &modelPath);

/// A per-file-ignores entry against a finding's source file (as the exporter
/// recorded it: relative to the model's repository, or absolute for a
/// library); a glob without '/' also matches the bare file name.
bool sourceGlobMatches(const IgnoreEntry &e, const std::string &sourceFile);

/// Folds the layers, in order, over the defaults for `modelPath` (matched
/// against per-file-ignores globs).
llvm::Expected<Config> resolveConfig(const std::vector<const ConfigLayer *> &layers, const std::string &modelPath);

/// Applies `p` to one file's findings, in place: severity overrides, then
/// drops what per-file-ignores, node metadata, suppression comments in the
/// user's source (Model::sourceSuppressions: a finding whose source line
/// carries one naming its rule) and per-node-ignores suppress.
/// With p.reportUnusedIgnores, node suppressions and source comments that
/// suppressed nothing become GL005 findings. Returns the number of findings suppressed; adds the
/// origin of every config entry that suppressed something to `usedEntries`.
unsigned applyRulePolicy(const Model &m, const RulePolicy &p, std::vector<Diagnostic> &diags,
                         std::set<std::string> &usedEntries);

/// GL005 findings for per-file-ignores and per-node-ignores entries of the
/// given layers that suppressed nothing in any file of the run (`used` is
/// the union of every file's usedEntries). They point at the config line.
std::vector<Diagnostic> unusedConfigIgnores(const std::vector<const ConfigLayer *> &layers,
                                            const std::set<std::string> &used, const RulePolicy &p);

/// The effective configuration as .graphlint.yaml text (`graphlint config
/// --dump`): every key, with the rule list spelled out.
void dumpConfig(const Config &c, const std::string &modelPath, llvm::raw_ostream &os);

}  // namespace graphlint
