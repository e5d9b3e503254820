// GL132 inplace-on-saved-tensor: an in-place op overwrites storage holding a
// tensor that autograd saved for backward, after autograd saved it. PyTorch
// checks the tensor's version counter in backward and raises "one of the
// variables needed for gradient computation has been modified by an inplace
// operation": the training step fails, so this is an error. The save point
// (the node after which the exporter saw autograd save the tensor) decides:
// a write before it (`h[:, 0] = 0` ahead of the Linear that saves h) is fine.
// Files without save points can only tell that the tensor existed before the
// write, which is not certain: those findings are warnings.
#include "graphlint/ir/Display.h"
#include "InplaceAdvice.h"

#include "graphlint/rules/Rule.h"
#include "graphlint/analyses/StorageAliases.h"

#include <fmt/format.h>

namespace graphlint {
namespace {

class InplaceOnSavedTensor final : public Rule {
public:
  static constexpr RuleInfo kInfo{"GL132", "inplace-on-saved-tensor", Severity::Error,
      "an in-place op overwrites a tensor saved for backward (autograd will raise at runtime)"};
  const RuleInfo &info() const override { return kInfo; }

  void check(const Model &, AnalysisContext &ctx, DiagnosticSink &sink) const override {
    const StorageAliases &sa = ctx.get<StorageAliases>();
    for (const StorageAliases::Mutation &mu : sa.mutations()) {
      const Node &m = *mu.node;
      // The first tensor of this storage saved before the write; with a save
      // point, "before" is certain, without one it is a guess.
      const Value *saved = nullptr;
      bool certain = false;
      for (const Value *w : sa.members(mu.root)) {
        if (!StorageAliases::savedForBackward(*w))
          continue;
        if (const Node *point = StorageAliases::savedAfter(*w)) {
          if (StorageAliases::executesAfter(m, *point)) {
            saved = w, certain = true;
            break;
          }
        } else if (!saved && StorageAliases::definedBefore(*w, m)) {
          saved = w;
        }
      }
      if (!saved)
        continue;
      std::string how = saved == mu.value ? "" : fmt::format(" (through '{}', which shares its storage)", mu.value->name);
      Diagnostic &d = sink.report(
          m, fmt::format("in-place {} overwrites '{}'{}, the output of {}, {} saved for backward before this write: "
                         "autograd will raise \"one of the variables needed for gradient computation has been "
                         "modified by an inplace operation\" in backward",
                         nodeWithOp(m), saved->name, how, nodeWithOp(*saved->producer), certain ? "which autograd" : "probably"));
      if (!certain) {
        d.severity = Severity::Warning;
        d.note("the export does not say when autograd saved the tensor (no saved_at: an older "
               "graphlint-export), so this may be a write before the save, which is fine; re-export to "
               "know");
      }
      d.note(fmt::format("{}, or clone() '{}' before the write so the saved version stays intact",
                         outOfPlaceAdvice(m, *mu.value, *mu.root), saved->name));
    }
  }
};

}  // namespace

GRAPHLINT_DEFINE_RULE(InplaceOnSavedTensor)

}  // namespace graphlint
