// GL005 unused-suppression: a suppression that cannot or did not suppress
// anything. This check reports graphlint.ignore node metadata naming no rule;
// the driver's suppression pass (src/engine/Suppressions.cpp) adds, under
// --report-unused-ignores, the suppressions that suppressed no finding.
#include "graphlint/rules/Rule.h"
#include "graphlint/rules/RuleSelectors.h"

#include <fmt/format.h>

namespace graphlint {
namespace {

class UnusedSuppression final : public Rule {
public:
  static constexpr RuleInfo kInfo{"GL005", "unused-suppression", Severity::Warning,
                                  "a suppression names no rule, or (--report-unused-ignores) suppresses nothing", {},
                                  GroupScope::None};
  const RuleInfo &info() const override { return kInfo; }

  void check(const Model &m, AnalysisContext &, DiagnosticSink &sink) const override {
    forEachGraph(*m.graph, [&](const Graph &g) {
      for (const auto &n : g.nodes()) {
        auto s = nodeSuppressionOf(*n);
        if (!s)
          continue;
        for (const std::string &token : s->unknown)
          sink.report(*n, fmt::format("'{}' in this node's {} metadata names no rule (see 'graphlint rules')", token,
                                      kIgnoreMetadataKey));
      }
    });
    for (const SourceSuppression &s : m.sourceSuppressions)
      for (const std::string &token : s.tokens)
        if (resolveRuleSelector(token).empty())
          sink.reportAt(sourceSuppressionLocation(sink.file(), s),
                        fmt::format("'{}' in this line's suppression comment names no rule (see 'graphlint rules')",
                                    token));
  }
};

}  // namespace

GRAPHLINT_DEFINE_RULE(UnusedSuppression)

}  // namespace graphlint
