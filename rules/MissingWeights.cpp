// GL004 missing-weights: external weight data is absent (or shorter than the
// model says). The lint goes on from shapes; only byte-reading checks are lost.
#include "graphlint/lint/Rule.h"

namespace graphlint {
namespace {

class MissingWeights final : public Rule {
public:
  const RuleInfo &info() const override {
    static const RuleInfo i{"GL004", "missing-weights", Severity::Warning,
                            "external weight data is absent (lint continues on shapes)"};
    return i;
  }

  void check(const Model &m, AnalysisContext &, DiagnosticSink &sink) const override {
    for (const ImportProblem &p : m.problems) {
      if (p.kind != ImportProblem::Kind::MissingWeights)
        continue;
      Diagnostic &d = sink.reportFile(p.message);
      d.notes.push_back({"place the complete weight file next to the model; weightless exports (like graphlint's "
                         "bundled models) report this by design",
                         std::nullopt});
    }
  }
};

}  // namespace

const Rule *makeMissingWeightsRule() {
  static const MissingWeights r;
  return &r;
}

}  // namespace graphlint
