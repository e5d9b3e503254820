// PLACEHOLDER being written in this session: GL132 inplace-on-saved-tensor.
#include "graphlint/lint/Rule.h"

namespace graphlint {
namespace {
class InplaceOnSavedTensor final : public Rule {
public:
  const RuleInfo &info() const override {
    static const RuleInfo i{"GL132", "inplace-on-saved-tensor", Severity::Warning, "PLACEHOLDER"};
    return i;
  }
  void check(const Model &, AnalysisContext &, DiagnosticSink &) const override {}
};
}  // namespace

const Rule *makeInplaceOnSavedTensorRule() {
  static const InplaceOnSavedTensor r;
  return &r;
}

}  // namespace graphlint
