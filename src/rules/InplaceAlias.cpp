// GL131 inplace-alias: an in-place op writes storage that is still read
// through an older name afterwards (the same tensor, or another view of it),
// or storage the caller owns (a graph input or a parameter). Compilers must
// keep the write ordered and copy around it: functionalisation inserts
// copies, fusion stops at the mutation.
#include "graphlint/ir/Display.h"
#include "InplaceAdvice.h"

#include "graphlint/analyses/FusionPlan.h"
#include "graphlint/rules/Rule.h"
#include "graphlint/analyses/StorageAliases.h"

#include <fmt/format.h>

#include <llvm/ADT/StringExtras.h>

namespace graphlint {
namespace {

class InplaceAlias final : public Rule {
public:
  static constexpr RuleInfo kInfo{"GL131", "inplace-alias", Severity::Warning,
      "an in-place op mutates a tensor (or a view sharing its storage) that is read later, or a "
      "graph input/parameter"};
  const RuleInfo &info() const override { return kInfo; }

  void check(const Model &, AnalysisContext &ctx, DiagnosticSink &sink) const override {
    const StorageAliases &sa = ctx.get<StorageAliases>();
    if (sa.mutations().empty())
      return;  // the common case (every ONNX model): no FusionPlan needed either
    const FusionPlan &plan = ctx.get<FusionPlan>();
    for (const StorageAliases::Mutation &mu : sa.mutations()) {
      const Node &m = *mu.node;
      const Value *root = mu.root;
      // Buffers (running statistics) are the module's own state, updated in
      // place by design (torch 2.x BatchNorm writes them from its kernel);
      // the compilers write them back after the step.
      if (root->kind == Value::Kind::Param && root->param && root->param->buffer)
        continue;
      // Reads after the mutation through names that existed before it:
      // they observe the new contents.
      const Node *firstReader = nullptr;
      const Value *readVia = nullptr;
      unsigned reads = 0;
      for (const Value *w : sa.members(root)) {
        if (!StorageAliases::definedBefore(*w, m))
          continue;
        for (const Use &u : w->uses) {
          if (u.user == &m || !StorageAliases::executesAfter(*u.user, m))
            continue;
          ++reads;
          if (!firstReader || StorageAliases::executesAfter(*firstReader, *u.user))
            firstReader = u.user, readVia = w;
        }
      }
      bool callerOwned = root->kind == Value::Kind::Param ||
                         (root->kind == Value::Kind::GraphInput && root->graph && !root->graph->parentGraph);
      if (!firstReader && !callerOwned)
        continue;
      std::string msg = fmt::format("in-place {} overwrites '{}'", nodeWithOp(m), mu.value->name);
      if (root != mu.value)
        msg += fmt::format(" (a view of '{}': same storage)", root->name);
      std::vector<std::string> why;
      if (callerOwned)
        why.push_back(fmt::format("the storage belongs to the caller ({} '{}')",
                                  root->kind == Value::Kind::Param ? "parameter/buffer" : "graph input", root->name));
      if (firstReader)
        why.push_back(fmt::format("'{}' is read afterwards by {}{}", readVia->name, nodeWithOp(*firstReader),
                                  reads > 1 ? fmt::format(" ({} later reads in all)", reads) : ""));
      msg += ": " + llvm::join(why, ", and ") +
             "; the write must stay ordered against every alias, so the compiler copies around it and fusion stops "
             "here";
      Diagnostic &d = sink.report(m, msg);
      if (firstReader && readVia != mu.value)
        d.note(fmt::format("'{}' and '{}' share storage: the read sees the mutated values", readVia->name,
                           mu.value->name));
      d.note(outOfPlaceAdvice(m, *mu.value, *root) + ", or clone() the tensor before mutating it");
      d.fusionId = plan.groupOf(m).id;
      d.reason = std::string(breakReasonName(BreakReason::InplaceAlias));
    }
  }
};

}  // namespace

GRAPHLINT_DEFINE_RULE(InplaceAlias)

}  // namespace graphlint
