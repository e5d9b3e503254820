// PLACEHOLDER being written in this session: GL121 dynamic-control-flow.
#include "graphlint/lint/Rule.h"

namespace graphlint {
namespace {
class DynamicControlFlow final : public Rule {
public:
  const RuleInfo &info() const override {
    static const RuleInfo i{"GL121", "dynamic-control-flow", Severity::Warning, "PLACEHOLDER"};
    return i;
  }
  void check(const Model &, AnalysisContext &, DiagnosticSink &) const override {}
};
}  // namespace

const Rule *makeDynamicControlFlowRule() {
  static const DynamicControlFlow r;
  return &r;
}

}  // namespace graphlint
