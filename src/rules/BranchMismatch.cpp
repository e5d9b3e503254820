// GL122 branch-mismatch: the branches of one If (or torch.cond) yield values of
// different dtypes, ranks or static dims for the same output. Every output
// index is compared, one diagnostic per mismatching output. Differently named
// symbolic dims are not a mismatch: exporters name each branch's dims apart.
#include "graphlint/ir/Display.h"
#include "graphlint/analyses/DataDependence.h"
#include "graphlint/rules/Rule.h"

#include <fmt/format.h>

#include <optional>

namespace graphlint {
namespace {

// What differs between two types, or nullopt when nothing provably does.
std::optional<std::string> mismatch(const Type &a, const Type &b) {
  if (a.kind == TypeKind::Unknown || b.kind == TypeKind::Unknown)
    return std::nullopt;
  if (a.kind != b.kind && !(a.isTensor() && b.isTensor()))
    return std::string("different kinds of value");
  if (a.kind == TypeKind::Sequence || a.kind == TypeKind::Optional) {
    if (!a.element || !b.element)
      return std::nullopt;
    auto inner = mismatch(*a.element, *b.element);
    if (inner)
      return fmt::format("{} elements: {}", a.kind == TypeKind::Sequence ? "sequence" : "optional", *inner);
    return std::nullopt;
  }
  if (!a.isTensor())
    return std::nullopt;
  if (a.dtype != DType::Undefined && b.dtype != DType::Undefined && a.dtype != b.dtype)
    return fmt::format("dtype {} vs {}", dtypeShortName(a.dtype), dtypeShortName(b.dtype));
  if (!a.shape.rankKnown || !b.shape.rankKnown)
    return std::nullopt;
  if (a.shape.rank() != b.shape.rank())
    return fmt::format("rank {} vs {}", a.shape.rank(), b.shape.rank());
  for (size_t i = 0; i < a.shape.rank(); ++i) {
    const Dim &x = a.shape.dims[i], &y = b.shape.dims[i];
    if (x.isStatic() && y.isStatic() && x.value != y.value)
      return fmt::format("dim {}: {} vs {}", i, x.value, y.value);
  }
  return std::nullopt;
}

class BranchMismatch final : public Rule {
public:
  static constexpr RuleInfo kInfo{"GL122", "branch-mismatch", Severity::Error,
      "branches of one If/cond yield different dtypes or ranks for the same output"};
  const RuleInfo &info() const override { return kInfo; }

  bool perNode() const override { return true; }

  void checkNode(const Node &n, const Model &, AnalysisContext &, DiagnosticSink &sink) const override {
    BranchBodies b = branchBodies(n);
    if (!b.thenBody || !b.elseBody)
      return;
    std::string what = fmt::format("{} '{}'", controlFlowKindName(controlFlowKind(n)),
                                   nodeLabel(n));
    const auto &t = b.thenBody->outputs, &e = b.elseBody->outputs;
    if (t.size() != e.size()) {
      Diagnostic &d = sink.report(n, fmt::format("{}: {} yields {} output(s) but {} yields {}", what, b.thenName,
                                                 t.size(), b.elseName, e.size()));
      d.note("both branches must return the same number of values");
      return;
    }
    for (size_t i = 0; i < t.size(); ++i) {
      if (!t[i] || !e[i])
        continue;
      auto why = mismatch(t[i]->type, e[i]->type);
      if (!why)
        continue;
      std::string outName = i < n.outputs.size() && n.outputs[i] ? fmt::format(" '{}'", n.outputs[i]->name) : "";
      Diagnostic &d = sink.report(
          n, fmt::format("{}: output {}{} differs between branches ({}): {} yields '{}' as {}, {} yields '{}' as {}",
                         what, i, outName, *why, b.thenName, t[i]->name, t[i]->type.str(), b.elseName, e[i]->name,
                         e[i]->type.str()));
      d.note("the If's output type depends on which branch runs, so shape inference, compilers and "
             "runtimes reject or mis-plan it; cast/reshape inside the branches so both yield the same "
             "dtype and rank (e.g. .to(dtype) or reshape to a common shape)");
    }
  }
};

}  // namespace

GRAPHLINT_DEFINE_RULE(BranchMismatch)

}  // namespace graphlint
