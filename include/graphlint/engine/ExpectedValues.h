// Expected-values files (`graphlint --expect FILE`, `--write-expected FILE`;
// docs/diff.md "Expected values"): the predicted metrics (ReportMetrics.h) of
// each model under each setup, with a relative noise margin per metric, as
// PyTorch's pr_time_benchmarks keep expected_results.csv. A check fails in
// both directions: a metric worse than expected beyond its margin is a
// regression, one better beyond it an unexplained win that the file must be
// updated for; either way the proposed new file is printed. A model is keyed
// by its path relative to the file's directory and by its setup (the setup
// keys that differ from the defaults, as `config --dump` writes them).
#pragma once

#include "graphlint/engine/Driver.h"

#include <llvm/Support/Error.h>

#include <map>
#include <string>
#include <vector>

namespace graphlint {

inline constexpr int kExpectedValuesVersion = 1;

struct ExpectedMetric {
  double value = 0;
  double noise = 0;  // relative: 0.01 is +-1%
};

struct ExpectedEntry {
  std::string model;   // relative to the file's directory
  std::string setup;   // setupKeyText
  std::map<std::string, ExpectedMetric> metrics;
};

class ExpectedValues {
public:
  static llvm::Expected<ExpectedValues> load(const std::string &path);
  static llvm::Expected<ExpectedValues> parse(llvm::StringRef text, const std::string &path);
  /// The file's text (JSON, keys sorted, one entry per model and setup).
  std::string render() const;

  const std::string &path() const { return path_; }
  std::vector<ExpectedEntry> &entries() { return entries_; }
  const std::vector<ExpectedEntry> &entries() const { return entries_; }
  /// The entry of a model path (as given on the command line) and setup.
  const ExpectedEntry *find(const std::string &model, const std::string &setup) const;
  /// `model` relative to this file's directory.
  std::string key(const std::string &model) const;

  /// An empty file at `path` (for --write-expected without --expect).
  explicit ExpectedValues(std::string path = "");

private:
  std::string path_, baseDir_;
  std::vector<ExpectedEntry> entries_;
};

/// What identifies a setup in the file: "key: value" of every setup key
/// whose value differs from the default, in --dump order, "; "-separated
/// ("" for the defaults).
std::string setupKeyText(const Setup &s);

/// The default noise margin of a metric: 1% for bytes and FLOPs, 2% for
/// times, MFU and kernel counts.
double defaultNoise(const std::string &metric);

struct ExpectedCheck {
  std::vector<std::string> failures;  // one line each, without a prefix
  ExpectedValues proposed;            // the file with the run's values
};

/// Compares each linted model's metrics with `expected` (models the file
/// does not name fail too) and proposes the file with the run's values,
/// keeping the margins and the entries of models not linted.
ExpectedCheck checkExpected(const ExpectedValues &expected, const std::vector<FileReport> &reports,
                            const std::vector<std::string> &setups);

}  // namespace graphlint
