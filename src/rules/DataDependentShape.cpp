// GL123 data-dependent-shape: a size computed from tensor values (NonZero,
// Unique, NMS outputs, or contents such as ReduceMax -> Cast) reaches an op
// that needs it: a shape/size operand, a kernel sized by it, or a graph
// output. The sites come from the DataDependence analysis, one per node.
#include "graphlint/ir/Display.h"
#include "graphlint/ir/OpRegistry.h"
#include "graphlint/analyses/DataDependence.h"
#include "graphlint/analyses/FusionPlan.h"
#include "graphlint/rules/Rule.h"

#include <fmt/format.h>

#include <set>

namespace graphlint {
namespace {

// The op without its domain: these messages name aten ops as the user wrote them.
std::string opAndLabel(const Node &n) { return fmt::format("{} '{}'", n.opType, nodeLabel(n)); }

// What the operand means to the op, for the message.
std::string operandRole(const Node &n, unsigned i) {
  llvm::StringRef op = n.opType;
  if (op == "Range") return i == 0 ? "start" : i == 1 ? "limit" : "delta";
  if (op == "Slice") return i == 1 ? "starts" : "ends";
  if (op == "Resize") return i == 2 ? "scales" : i == 3 ? "sizes" : "scales";
  if (op == "Upsample") return "scales";
  if (op == "Tile") return "repeats";
  if (op == "TopK") return "K";
  if (op == "OneHot") return "depth";
  if (op == "Pad") return "pads";
  if (op == "Split") return "split";
  if (op == "MaxUnpool") return "output_shape";
  if (op == "Col2Im") return i == 1 ? "image_shape" : "block_shape";
  return "shape";
}

std::string originText(const Taint &t) {
  if (t.origin) {
    bool dataOp = t.origin->op && t.origin->op->kind == OpKind::DataDependentOutput;
    return fmt::format("{}{}", opAndLabel(*t.origin), dataOp ? " (its output size depends on values)" : "");
  }
  if (t.source)
    return fmt::format("the contents of {} '{}'", t.source->graph && t.source->graph->parentGraph ? "body input" : "graph input",
                       t.source->name);
  return "runtime data";
}

// The unbacked symbols (u0, u1) a value's dims mention: "u0", "u0, u1".
std::string unbackedIn(const Model &m, const Value &v) {
  std::set<std::string> syms;
  for (const Dim &d : v.type.shape.dims)
    if (d.isSymbolic())
      d.expr->collectSymbols(syms);
  std::string out;
  for (const SymbolInfo &s : m.symbols)
    if (s.kind == SymbolInfo::Kind::Unbacked && syms.count(s.name))
      out += (out.empty() ? "" : ", ") + s.name;
  return out;
}

class DataDependentShape final : public Rule {
public:
  static constexpr RuleInfo kInfo{"GL123", "data-dependent-shape", Severity::Warning,
      "a shape computed from tensor values flows into later ops (recompiles, graph breaks)"};
  const RuleInfo &info() const override { return kInfo; }

  void check(const Model &m, AnalysisContext &ctx, DiagnosticSink &sink) const override {
    const DataDependence &dd = ctx.get<DataDependence>();
    const FusionPlan &plan = ctx.get<FusionPlan>();
    for (const DataDependentSite &s : dd.sites()) {
      const Node &n = *s.node;
      unsigned path = s.taint.hops + 1;
      std::string msg;
      std::string hint;
      switch (s.kind) {
      case DataDependentSite::Kind::ShapeArgument:
        msg = fmt::format("{} takes its {} (input {} '{}') from {}: {} from {} (path length {}), so its output dims "
                          "are only known at runtime",
                          opAndLabel(n), operandRole(n, s.operand), s.operand, s.value->name,
                          s.fromContents ? "tensor values, not shapes" : "a tensor whose dims depend on data",
                          s.fromContents ? "computed" : "sized", originText(s.taint), path);
        hint = s.fromContents
                   ? "derive sizes from shapes (x.shape / Shape) instead of values, or pad to a static maximum size and "
                     "carry a mask, so the compiler can specialise the kernel once"
                   : "pad to a static maximum size and carry a mask or a valid count instead of a data-dependent size";
        break;
      case DataDependentSite::Kind::DynamicConsumer:
        msg = fmt::format("{} reads '{}', whose dims depend on data: they come from {} (path length {}); the kernel "
                          "cannot be specialised and its output dims are unknown until runtime",
                          opAndLabel(n), s.value ? s.value->name : "?", originText(s.taint), path);
        hint = "keep a static size: pad to a maximum (e.g. torch.nonzero(x, size=MAX), fixed top-k) and mask the "
               "padding instead of compacting the tensor";
        break;
      case DataDependentSite::Kind::UnbackedSize:
        msg = fmt::format("{} outputs '{}' {}, sized by the unbacked (data-dependent) size {} that comes from {} "
                          "(path length {}): the size is only known at runtime",
                          opAndLabel(n), s.value->name, s.value->type.str(), unbackedIn(m, *s.value), originText(s.taint),
                          path);
        hint = "keep a static size: pad to a maximum (e.g. torch.nonzero(x, size=MAX)) and mask the padding, or bound "
               "the size with torch._check so the compiler can plan for its maximum";
        break;
      case DataDependentSite::Kind::GraphOutput:
        msg = s.taint.origin == &n
                  ? fmt::format("graph output '{}' of {} has a size that depends on tensor values", s.value->name,
                                opAndLabel(n))
                  : fmt::format("graph output '{}' of {} has dims that depend on data: they come from {} (path length "
                                "{})",
                                s.value->name, opAndLabel(n), originText(s.taint), path);
        msg += "; every consumer of the model sees a data-dependent shape (recompiles, dynamic allocation)";
        hint = "return a fixed-size, padded tensor with a mask or a count of valid entries";
        break;
      }
      Diagnostic &d = sink.report(n, msg);
      d.note(hint);
      d.fusionId = plan.groupOf(n).id;
      d.reason = std::string(breakReasonName(BreakReason::DataDependentShape));
    }
  }
};

}  // namespace

GRAPHLINT_DEFINE_RULE(DataDependentShape)

}  // namespace graphlint
