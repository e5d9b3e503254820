// GL132 inplace-on-saved-tensor: an in-place op overwrites storage holding a
// tensor that autograd saved for backward, earlier in the graph. PyTorch
// checks the tensor's version counter in backward and raises "one of the
// variables needed for gradient computation has been modified by an inplace
// operation": the training step fails, so this is an error.
#include "graphlint/lint/Rule.h"
#include "graphlint/lint/StorageAliases.h"

#include <fmt/format.h>

namespace graphlint {
namespace {

std::string label(const Node &n) {
  return fmt::format("{} '{}'", n.qualifiedOp(), n.name.empty() ? fmt::format("#{}", n.index + 1) : n.name);
}

class InplaceOnSavedTensor final : public Rule {
public:
  const RuleInfo &info() const override {
    static const RuleInfo i{"GL132", "inplace-on-saved-tensor", Severity::Error,
                            "an in-place op overwrites a tensor saved for backward (autograd will raise at runtime)"};
    return i;
  }

  void check(const Model &, AnalysisContext &ctx, DiagnosticSink &sink) const override {
    const StorageAliases &sa = ctx.get<StorageAliases>();
    for (const StorageAliases::Mutation &mu : sa.mutations()) {
      const Node &m = *mu.node;
      // A tensor saved before the write (the in-place op's own outputs are
      // saved after it, which autograd allows).
      const Value *saved = nullptr;
      for (const Value *w : sa.members(mu.root))
        if (StorageAliases::savedForBackward(*w) && StorageAliases::definedBefore(*w, m)) {
          saved = w;
          break;
        }
      if (!saved)
        continue;
      std::string how = saved == mu.value ? "" : fmt::format(" (through '{}', which shares its storage)", mu.value->name);
      Diagnostic &d = sink.report(
          m, fmt::format("in-place {} overwrites '{}'{}, which {} saved for backward: autograd will raise \"one of the "
                         "variables needed for gradient computation has been modified by an inplace operation\" in "
                         "backward",
                         label(m), saved->name, how,
                         fmt::format("{} produced and", label(*saved->producer))));
      d.notes.push_back({fmt::format("use the out-of-place op ({} instead of {}), or clone() '{}' before the in-place "
                                     "write so the saved version stays intact",
                                     llvm::StringRef(m.opType).rtrim('_').str(), m.opType, saved->name),
                         std::nullopt});
    }
  }
};

}  // namespace

const Rule *makeInplaceOnSavedTensorRule() {
  static const InplaceOnSavedTensor r;
  return &r;
}

}  // namespace graphlint
