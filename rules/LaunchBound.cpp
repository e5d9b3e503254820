// PLACEHOLDER being written in this session: GL142 launch-bound.
#include "graphlint/lint/Rule.h"

namespace graphlint {
namespace {
class LaunchBound final : public Rule {
public:
  const RuleInfo &info() const override {
    static const RuleInfo i{"GL142", "launch-bound", Severity::Warning, "PLACEHOLDER"};
    return i;
  }
  void check(const Model &, AnalysisContext &, DiagnosticSink &) const override {}
};
}  // namespace

const Rule *makeLaunchBoundRule() {
  static const LaunchBound r;
  return &r;
}

}  // namespace graphlint
