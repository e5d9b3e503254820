// GL001 invalid-model: everything that makes the file an invalid ONNX model --
// checker and schema violations, dangling inputs, duplicate definitions,
// cycles, bad opsets, malformed initializers, hostile external-data paths --
// each as its own diagnostic, never stopping at the first.
#include "graphlint/ir/Verifier.h"
#include "graphlint/rules/Rule.h"

namespace graphlint {
namespace {

class InvalidModel final : public Rule {
public:
  static constexpr RuleInfo kInfo{"GL001", "invalid-model", Severity::Error,
      "the file is not a valid model (checker failure, cycle, dangling input, bad opset)",
      {}, GroupScope::None};
  const RuleInfo &info() const override { return kInfo; }

  void check(const Model &m, AnalysisContext &, DiagnosticSink &sink) const override {
    for (const ImportProblem &p : m.problems) {
      if (p.kind != ImportProblem::Kind::Invalid)
        continue;
      emit(sink, p.graph, p.node, p.message);
    }
    for (const VerifierIssue &v : verifyGraph(*m.graph))
      emit(sink, v.graph, v.node, v.message);
  }

private:
  static void emit(DiagnosticSink &sink, const Graph *g, const Node *n, const std::string &msg) {
    if (n)
      sink.report(*n, msg);
    else if (g && g->parentGraph)
      sink.reportIn(*g, msg);
    else
      sink.reportFile(msg);
  }
};

}  // namespace

GRAPHLINT_DEFINE_RULE(InvalidModel)

}  // namespace graphlint
