// PLACEHOLDER being written in this session: GL111 cross-device.
#include "graphlint/lint/Rule.h"

namespace graphlint {
namespace {
class CrossDevice final : public Rule {
public:
  const RuleInfo &info() const override {
    static const RuleInfo i{"GL111", "cross-device", Severity::Warning, "PLACEHOLDER"};
    return i;
  }
  void check(const Model &, AnalysisContext &, DiagnosticSink &) const override {}
};
}  // namespace

const Rule *makeCrossDeviceRule() {
  static const CrossDevice r;
  return &r;
}

}  // namespace graphlint
