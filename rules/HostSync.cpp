// PLACEHOLDER being written in this session: GL112 host-sync.
#include "graphlint/lint/Rule.h"

namespace graphlint {
namespace {
class HostSync final : public Rule {
public:
  const RuleInfo &info() const override {
    static const RuleInfo i{"GL112", "host-sync", Severity::Warning, "PLACEHOLDER"};
    return i;
  }
  void check(const Model &, AnalysisContext &, DiagnosticSink &) const override {}
};
}  // namespace

const Rule *makeHostSyncRule() {
  static const HostSync r;
  return &r;
}

}  // namespace graphlint
