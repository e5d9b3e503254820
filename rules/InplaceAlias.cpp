// PLACEHOLDER being written in this session: GL131 inplace-alias.
#include "graphlint/lint/Rule.h"

namespace graphlint {
namespace {
class InplaceAlias final : public Rule {
public:
  const RuleInfo &info() const override {
    static const RuleInfo i{"GL131", "inplace-alias", Severity::Warning, "PLACEHOLDER"};
    return i;
  }
  void check(const Model &, AnalysisContext &, DiagnosticSink &) const override {}
};
}  // namespace

const Rule *makeInplaceAliasRule() {
  static const InplaceAlias r;
  return &r;
}

}  // namespace graphlint
