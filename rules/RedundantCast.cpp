// PLACEHOLDER being written in this session: GL102 redundant-cast.
#include "graphlint/lint/Rule.h"

namespace graphlint {
namespace {
class RedundantCast final : public Rule {
public:
  const RuleInfo &info() const override {
    static const RuleInfo i{"GL102", "redundant-cast", Severity::Warning, "PLACEHOLDER"};
    return i;
  }
  void check(const Model &, AnalysisContext &, DiagnosticSink &) const override {}
};
}  // namespace

const Rule *makeRedundantCastRule() {
  static const RedundantCast r;
  return &r;
}

}  // namespace graphlint
