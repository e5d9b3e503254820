// PLACEHOLDER being written in this session: GL123 data-dependent-shape.
#include "graphlint/lint/Rule.h"

namespace graphlint {
namespace {
class DataDependentShape final : public Rule {
public:
  const RuleInfo &info() const override {
    static const RuleInfo i{"GL123", "data-dependent-shape", Severity::Warning, "PLACEHOLDER"};
    return i;
  }
  void check(const Model &, AnalysisContext &, DiagnosticSink &) const override {}
};
}  // namespace

const Rule *makeDataDependentShapeRule() {
  static const DataDependentShape r;
  return &r;
}

}  // namespace graphlint
