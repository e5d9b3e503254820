// PLACEHOLDER being written in this session: GL141 tensor-core-alignment.
#include "graphlint/lint/Rule.h"

namespace graphlint {
namespace {
class TensorCoreAlignment final : public Rule {
public:
  const RuleInfo &info() const override {
    static const RuleInfo i{"GL141", "tensor-core-alignment", Severity::Warning, "PLACEHOLDER"};
    return i;
  }
  void check(const Model &, AnalysisContext &, DiagnosticSink &) const override {}
};
}  // namespace

const Rule *makeTensorCoreAlignmentRule() {
  static const TensorCoreAlignment r;
  return &r;
}

}  // namespace graphlint
