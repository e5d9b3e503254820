// GL004 missing-weights: external weight data is absent (or shorter than the
// model says). The lint goes on from shapes; only byte-reading checks are lost.
#include "graphlint/rules/Rule.h"

#include <algorithm>

namespace graphlint {
namespace {

class MissingWeights final : public Rule {
public:
  static constexpr RuleInfo kInfo{"GL004", "missing-weights", Severity::Warning,
      "external weight data is absent (lint continues on shapes)"};
  const RuleInfo &info() const override { return kInfo; }

  void check(const Model &m, AnalysisContext &, DiagnosticSink &sink) const override {
    // A model whose metadata says its weights were stripped on purpose (the
    // bundled models, models/export_models.py) gets a note, not a warning.
    bool stripped = std::any_of(m.metadata.begin(), m.metadata.end(), [](const auto &kv) {
      return kv.first == kStrippedKey && kv.second == "stripped";
    });
    for (const ImportProblem &p : m.problems) {
      if (p.kind != ImportProblem::Kind::MissingWeights)
        continue;
      Diagnostic &d = sink.reportFile(p.message);
      if (stripped) {
        d.severity = Severity::Note;
        d.note("expected: the model's metadata says its weights were stripped on purpose "
               "(graphlint.weights: stripped)");
      } else {
        d.note("place the complete weight file next to the model; a model exported without its weights "
               "on purpose can say so with the metadata entry graphlint.weights: stripped");
      }
    }
  }

  static constexpr const char *kStrippedKey = "graphlint.weights";
};

}  // namespace

GRAPHLINT_DEFINE_RULE(MissingWeights)

}  // namespace graphlint
