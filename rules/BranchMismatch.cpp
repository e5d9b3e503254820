// PLACEHOLDER being written in this session: GL122 branch-mismatch.
#include "graphlint/lint/Rule.h"

namespace graphlint {
namespace {
class BranchMismatch final : public Rule {
public:
  const RuleInfo &info() const override {
    static const RuleInfo i{"GL122", "branch-mismatch", Severity::Warning, "PLACEHOLDER"};
    return i;
  }
  void check(const Model &, AnalysisContext &, DiagnosticSink &) const override {}
};
}  // namespace

const Rule *makeBranchMismatchRule() {
  static const BranchMismatch r;
  return &r;
}

}  // namespace graphlint
