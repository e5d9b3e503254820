// GL002 unknown-operator: an op with no known schema (usually a custom domain).
// It is opaque to fusion and cost; one diagnostic per distinct op, at its
// first use, counting the others.
#include "graphlint/ir/OpRegistry.h"
#include "graphlint/rules/Rule.h"

#include <fmt/format.h>

#include <map>

namespace graphlint {
namespace {

class UnknownOperator final : public Rule {
public:
  static constexpr RuleInfo kInfo{"GL002", "unknown-operator", Severity::Warning,
                                  "an op has no known schema (custom domain); it is opaque to fusion and cost"};
  const RuleInfo &info() const override { return kInfo; }

  void check(const Model &m, AnalysisContext &, DiagnosticSink &sink) const override {
    struct Seen { const Node *first = nullptr; unsigned count = 0; };
    std::map<std::string, Seen> ops;
    std::vector<std::string> order;
    forEachGraph(*m.graph, [&](const Graph &g) {
      for (const auto &n : g.nodes()) {
        if (n->op->known || m.findFunction(n->domain, n->opType))
          continue;
        Seen &s = ops[n->qualifiedOp()];
        if (!s.first) {
          s.first = n.get();
          order.push_back(n->qualifiedOp());
        }
        ++s.count;
      }
    });
    for (const std::string &op : order) {
      const Seen &s = ops[op];
      const Node &n = *s.first;
      std::string domain = n.domain.empty() ? "ai.onnx" : n.domain;
      Diagnostic &d = sink.report(
          n, fmt::format("operator '{}' (domain '{}', opset {}) has no known schema: graphlint treats it as opaque, so "
                         "fusion and cost analyses cannot see through it and its output shapes are unknown",
                         n.opType, domain, n.opsetVersion));
      if (s.count > 1)
        d.note(fmt::format("{} more node(s) use '{}'", s.count - 1, op));
      if (n.domain.empty())
        d.note("this op is not in the ai.onnx opset; check the op name or the exporter's opset");
      else
        d.note(fmt::format("custom ops run as separate kernels; register a shape function or replace '{}' "
                           "with standard ops where possible",
                           op));
    }
  }
};

}  // namespace

GRAPHLINT_DEFINE_RULE(UnknownOperator)

}  // namespace graphlint
