// A rule is a small, pure check: it reads the model and cached analyses and
// appends diagnostics to a sink. It never prints and never mutates the IR.
// Each rule lives in one file in rules/ and is listed once in the registry.
#pragma once

#include "graphlint/lint/Analysis.h"
#include "graphlint/lint/Diagnostic.h"

#include <llvm/ADT/ArrayRef.h>

#include <string_view>
#include <vector>

namespace graphlint {

/// A numeric option a rule reads through Setup::ruleOption (a threshold), set
/// per rule in .graphlint.yaml (docs/configuration.md). The config loader
/// rejects names a rule does not declare and values outside [min, max].
struct RuleOptionInfo {
  std::string_view name;      // "threshold"
  double defaultValue;
  double min;
  double max;
  std::string_view help;      // one line for docs and `config --dump`
};

/// Whether the grouping pass (lint/Grouping.cpp) folds a rule's findings of
/// one cause at one user source line (a layer's line run in 24 layers) into
/// one diagnostic (the default), or leaves each alone (a rule whose every
/// finding is its own problem, such as GL001's broken nodes).
enum class GroupScope : uint8_t { SourceLine, None };

struct RuleInfo {
  std::string_view code;      // "GL001": a public contract, never reused
  std::string_view name;      // "invalid-model"
  Severity severity;          // default severity
  std::string_view summary;   // one line for `graphlint rules`
  llvm::ArrayRef<RuleOptionInfo> options = {};
  GroupScope grouping = GroupScope::SourceLine;
};

class Rule {
public:
  virtual ~Rule() = default;
  virtual const RuleInfo &info() const = 0;
  /// A whole-model check (a rule that reads a summary, compares nodes, or
  /// reports once per model). Per-node rules leave it alone.
  virtual void check(const Model &model, AnalysisContext &ctx, DiagnosticSink &sink) const {
    (void)model, (void)ctx, (void)sink;
  }
  /// Per-node rules (`perNode()` true) are called once for every node of the
  /// main graph and of every nested body, in forEachGraph order, from one
  /// traversal the driver shares among all of them (clang-tidy's matchers,
  /// ruff's per-statement dispatch), instead of each walking the graph.
  virtual bool perNode() const { return false; }
  virtual void checkNode(const Node &n, const Model &model, AnalysisContext &ctx, DiagnosticSink &sink) const {
    (void)n, (void)model, (void)ctx, (void)sink;
  }
};

/// Every rule, sorted by code.
const std::vector<const Rule *> &allRules();
const Rule *findRule(std::string_view codeOrName);
/// The rule's documentation page (docs/rules/CODE-name.md, embedded at build time).
std::string_view ruleDoc(std::string_view code);

}  // namespace graphlint
