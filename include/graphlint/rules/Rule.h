// A rule is a small, pure check: it reads the model and cached analyses and
// appends diagnostics to a sink. It never prints and never mutates the IR.
// Each rule lives in one file in rules/, ends with GRAPHLINT_DEFINE_RULE and
// is listed once in src/rules/Rules.def; a rule with options declares them as a
// plain struct and one table binding its fields (RuleOption below).
#pragma once

#include "graphlint/analyses/Analysis.h"
#include "graphlint/base/Diagnostic.h"

#include <llvm/ADT/ArrayRef.h>

#include <array>
#include <cstddef>
#include <string_view>
#include <type_traits>
#include <vector>

namespace graphlint {

/// A numeric option of a rule (a threshold), set per rule in .graphlint.yaml
/// (docs/configuration.md), as the config loader, `config --dump` and the
/// docs test see it: derived from the rule's RuleOption table, never written
/// by hand. The loader rejects names a rule does not declare and values
/// outside [min, max].
struct RuleOptionInfo {
  std::string_view name;      // "threshold"
  double defaultValue;
  double min;
  double max;
  std::string_view help;      // one line for docs and `config --dump`
};

/// Whether the grouping pass (src/engine/Grouping.cpp) folds a rule's findings of
/// one cause at one user source line (a layer's line run in 24 layers) into
/// one diagnostic (the default), or leaves each alone (a rule whose every
/// finding is its own problem, such as GL001's broken nodes).
enum class GroupScope : uint8_t { SourceLine, None };

/// What a rule is, as data: each rule holds it as `static constexpr RuleInfo
/// kInfo` (so ruleOptions<R> reads its code) and returns it from info().
struct RuleInfo {
  std::string_view code;      // "GL001": a public contract, never reused
  std::string_view name;      // "invalid-model"
  Severity severity;          // default severity
  std::string_view summary;   // one line for `graphlint rules`
  llvm::ArrayRef<RuleOptionInfo> options = {};  // ruleOptionInfos<kOptions>, or none
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

/// One field of a rule's options struct O (`struct LaunchBoundOptions {
/// double minKernels = 4; };`) bound to its YAML name, the range the config
/// loader accepts and one line of help. The default is the field's
/// initialiser, so it is written once. A rule lists its table as the static
/// member `kOptions` and passes `ruleOptionInfos<kOptions>` as RuleInfo::options.
template <class O> struct RuleOption {
  using Options = O;
  std::string_view name;
  double O::*field;
  double min;
  double max;
  std::string_view help;
};

namespace detail {
template <class O, size_t N> constexpr std::array<RuleOptionInfo, N> optionInfos(const RuleOption<O> (&table)[N]) {
  const O defaults{};
  std::array<RuleOptionInfo, N> out{};
  for (size_t i = 0; i < N; ++i)
    out[i] = {table[i].name, defaults.*table[i].field, table[i].min, table[i].max, table[i].help};
  return out;
}

template <class R> using OptionsOf = typename std::remove_cv_t<std::remove_extent_t<decltype(R::kOptions)>>::Options;

/// R's options as the setup states them: the config's values over the
/// struct's defaults. An analysis in all but name, so the context computes it
/// once per model and the rule's per-node calls share it.
template <class R> struct ResolvedRuleOptions {
  ResolvedRuleOptions(const Model &, AnalysisContext &ctx) {
    for (const auto &o : R::kOptions)
      value.*o.field = ctx.setup().ruleOption(R::kInfo.code, o.name, value.*o.field);
  }
  OptionsOf<R> value;
};
}  // namespace detail

/// RuleInfo::options of the rule whose RuleOption table is Table (each
/// default read from the options struct's initialisers).
template <const auto &Table> inline constexpr auto ruleOptionInfos = detail::optionInfos(Table);

/// The options of rule R (its `kOptions` table and `kInfo`) for this model's
/// setup, typed: `const LaunchBoundOptions &o = ruleOptions<LaunchBound>(ctx);`.
template <class R> const detail::OptionsOf<R> &ruleOptions(AnalysisContext &ctx) {
  return ctx.get<detail::ResolvedRuleOptions<R>>().value;
}

/// Ends a rule's file, inside namespace graphlint: the factory src/rules/Rules.def
/// lists (`make<Class>Rule`), returning the one instance (rules are stateless).
#define GRAPHLINT_DEFINE_RULE(Class)                                                                                   \
  const Rule *make##Class##Rule() {                                                                                    \
    static const Class rule;                                                                                           \
    return &rule;                                                                                                      \
  }

/// Every rule, sorted by code.
const std::vector<const Rule *> &allRules();
const Rule *findRule(std::string_view codeOrName);
/// The rule's documentation page (docs/rules/CODE-name.md, embedded at build time).
std::string_view ruleDoc(std::string_view code);

}  // namespace graphlint
