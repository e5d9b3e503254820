// GL003 unresolved-shape: a tensor whose dtype or rank could not be inferred.
// Reports the origin only -- the first node whose inputs are resolved but whose
// output is not -- and counts the values downstream that inherit the gap.
#include "graphlint/ir/OpRegistry.h"
#include "graphlint/rules/Rule.h"

#include <fmt/format.h>

#include <llvm/ADT/DenseSet.h>

namespace graphlint {
namespace {

bool unresolved(const Value &v) {
  // Sequences, optionals and maps are marked as such; only tensors can lack
  // a dtype or rank.
  if (v.type.kind == TypeKind::Sequence || v.type.kind == TypeKind::Optional || v.type.kind == TypeKind::Map ||
      v.type.kind == TypeKind::Opaque)
    return false;
  return !v.type.isResolvedTensor();
}

class UnresolvedShape final : public Rule {
public:
  static constexpr RuleInfo kInfo{"GL003", "unresolved-shape", Severity::Warning,
                                  "a tensor's dtype or rank could not be inferred"};
  const RuleInfo &info() const override { return kInfo; }

  void check(const Model &m, AnalysisContext &, DiagnosticSink &sink) const override {
    forEachGraph(*m.graph, [&](const Graph &g) { checkGraph(g, sink); });
  }

private:
  static void checkGraph(const Graph &g, DiagnosticSink &sink) {
    for (const Value *v : g.inputs)
      if (unresolved(*v))
        sink.reportIn(g, fmt::format("graph input '{}' has no {}: declare its type when exporting", v->name,
                                     v->type.dtype == DType::Undefined ? "element type" : "rank"));
    llvm::DenseSet<const Value *> tainted;
    for (const auto &n : g.nodes()) {
      bool inputsResolved = true;
      for (const Value *in : n->inputs)
        if (in && (unresolved(*in) || tainted.count(in)))
          inputsResolved = false;
      for (const Value *out : n->outputs) {
        if (!out || !unresolved(*out))
          continue;
        tainted.insert(out);
        if (!inputsResolved || !n->op->known)
          continue;  // inherited, or GL002 already explains an opaque op
        if (out->uses.empty() && !out->isGraphOutput())
          continue;  // nothing reads it (e.g. an unused Dropout mask)
        unsigned downstream = countDownstream(*out);
        std::string missing = out->type.dtype == DType::Undefined && !out->type.shape.rankKnown ? "dtype and rank"
                              : out->type.dtype == DType::Undefined                             ? "dtype"
                                                                                                : "rank";
        Diagnostic &d = sink.report(*n, fmt::format("the {} of output '{}' of {} could not be inferred", missing,
                                                    out->name, n->qualifiedOp()));
        if (downstream)
          d.note(fmt::format("{} value(s) downstream depend on it and are unresolved too", downstream));
        d.note("bind symbolic dims with --dim NAME=SIZE, or export with static shapes / constant shape inputs");
      }
    }
  }

  static unsigned countDownstream(const Value &root) {
    llvm::DenseSet<const Value *> seen;
    std::vector<const Value *> work{&root};
    while (!work.empty()) {
      const Value *v = work.back();
      work.pop_back();
      for (const Use &u : v->uses)
        for (const Value *o : u.user->outputs)
          if (o && unresolved(*o) && seen.insert(o).second)
            work.push_back(o);
    }
    return static_cast<unsigned>(seen.size());
  }
};

}  // namespace

GRAPHLINT_DEFINE_RULE(UnresolvedShape)

}  // namespace graphlint
