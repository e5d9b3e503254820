// Baselines (--write-baseline / --baseline): the findings a project accepted
// at some point, so that only new ones fail the build. An entry is keyed by
// the model file (relative to the baseline file's directory), the rule code
// and the finding's fingerprint (fingerprintOf: graph path, the user's source
// file, the module path with layer indices folded, op type -- the SARIF
// partialFingerprint), none of which change when weights change or an
// unrelated op is added and the model re-exported. Findings with one
// fingerprint are counted. docs/configuration.md#baseline.
#pragma once

#include "graphlint/engine/Driver.h"

#include <llvm/Support/Error.h>

#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace graphlint {

/// Version of the baseline file format.
inline constexpr int kBaselineVersion = 2;

struct BaselineEntry {
  std::string file;         // model path relative to the baseline's directory
  std::string code, name;
  std::string graph, node, op;
  std::string fingerprint;
  std::string message;      // informational: what was accepted
  std::string source;       // informational: the user's source file ("" when none)
  std::string module;       // informational: the module path, layer indices folded
};

class Baseline {
public:
  static llvm::Expected<Baseline> load(const std::string &path);
  /// The same from bytes already read; `path` names them and anchors the
  /// entries' relative file keys.
  static llvm::Expected<Baseline> parse(llvm::StringRef text, const std::string &path);
  /// Writes every finding of `reports` (fatal files have none) to `path`.
  static llvm::Error write(const std::string &path, const std::vector<FileReport> &reports);

  /// Drops the findings the baseline accepts from `reports` (counting them in
  /// FileReport::baselined) and returns the entries, of files in `reports`,
  /// that matched no finding: stale, the finding is gone.
  /// `checked(i, code)` says whether rule `code` ran on reports[i]: entries
  /// of rules that did not run are not stale.
  std::vector<BaselineEntry> apply(std::vector<FileReport> &reports,
                                   const std::function<bool(size_t, const std::string &)> &checked) const;

  const std::string &path() const { return path_; }
  size_t size() const { return entries_.size(); }

private:
  std::string path_;
  std::string baseDir_;
  std::vector<BaselineEntry> entries_;
};

}  // namespace graphlint
