// PLACEHOLDER being written in this session: GL101 dtype-mismatch.
#include "graphlint/lint/Rule.h"

namespace graphlint {
namespace {
class DtypeMismatch final : public Rule {
public:
  const RuleInfo &info() const override {
    static const RuleInfo i{"GL101", "dtype-mismatch", Severity::Warning, "PLACEHOLDER"};
    return i;
  }
  void check(const Model &, AnalysisContext &, DiagnosticSink &) const override {}
};
}  // namespace

const Rule *makeDtypeMismatchRule() {
  static const DtypeMismatch r;
  return &r;
}

}  // namespace graphlint
