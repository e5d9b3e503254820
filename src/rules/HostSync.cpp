// GL112 host-sync: an op that makes the host wait for the GPU. Either the size
// of its output depends on the values of its input (NonZero, Unique, Compress,
// NonMaxSuppression, aten nonzero/masked_select/unique), so the host must read
// a count back before it can allocate the output and launch the next kernel, or
// it hands a tensor value to Python (aten item/_local_scalar_dense/tolist,
// is_nonzero for `if t:`, equal).
// Either way the launch queue drains and fusion stops at the op.
#include "graphlint/ir/OpRegistry.h"
#include "graphlint/ir/Verifier.h"
#include "graphlint/analyses/FusionPlan.h"
#include "graphlint/rules/Rule.h"

#include <fmt/format.h>

#include <llvm/ADT/StringSwitch.h>

namespace graphlint {
namespace {

using SyncKind = HostSyncKind;

// The kind is the op registry's (src/ir/OpRegistry.cpp, keyed by domain and op);
// aten ops are looked up by their name without overload ("nonzero.default").
SyncKind syncKindOf(const Node &n) {
  std::string aten = n.atenName();
  SyncKind kind = SyncKind::None;
  if (!aten.empty())
    kind = OpRegistry::instance().lookup("aten", aten, 1)->syncKind;
  else if (n.op && (n.op->hostSync || n.op->kind == OpKind::DataDependentOutput))
    kind = SyncKind::DataDependentSize;
  // The exporter saw the sync happen: a boolean-mask index (aten::index with
  // a bool index gets an unbacked size).
  if (kind == SyncKind::None && n.hostSync)
    kind = SyncKind::DataDependentSize;
  return kind;
}

// Specific advice for the common syncing ops; the general one otherwise.
std::string hintFor(const Node &n, SyncKind kind) {
  std::string op = n.atenName();
  if (op.empty())
    op = n.opType;
  if (kind == SyncKind::ReadsValue)
    return "keep the value on the device as a 0-d tensor and compute with it there; branch on it outside the "
           "compiled region, or read it back once per N steps";
  return llvm::StringSwitch<std::string>(op)
      .Cases("NonZero", "nonzero", "argwhere", "masked_select",
             "use static-size alternatives: keep the mask and compute with torch.where(mask, x, 0) or a multiply, "
             "or use nonzero_static / a pre-allocated maximum size")
      .Case("Compress", "use static-size alternatives: keep the full tensor with a mask (Where) instead of dropping "
                        "elements, or pad to a pre-allocated maximum size")
      .Case("NonMaxSuppression", "fix the output size: a static max_output_boxes_per_class with padded, "
                                 "score-masked results (or batched NMS in the postprocessing outside the graph)")
      .Default("use static-size alternatives: masks instead of dropped elements, a pre-allocated maximum output "
               "size, or move this step out of the per-step graph");
}

class HostSync final : public Rule {
public:
  static constexpr RuleInfo kInfo{"GL112", "host-sync", Severity::Warning,
      "an op forces a device-to-host sync (.item(), nonzero, unique, data-dependent sizes)"};
  const RuleInfo &info() const override { return kInfo; }

  bool perNode() const override { return true; }

  void checkNode(const Node &n, const Model &m, AnalysisContext &ctx, DiagnosticSink &sink) const override {
    SyncKind kind = syncKindOf(n);
    if (kind == SyncKind::None)
      return;
    const FusionPlan &plan = ctx.get<FusionPlan>();
    // On constants the planner evaluates the op on the host (and ONNX
    // Runtime folds it): nothing waits for the GPU.
    if (m.format == ModelFormat::Onnx && plan.groupOf(n).kind == GroupKind::ShapeOnly)
      return;
    report(n, kind, plan, sink);
  }

private:
  static void report(const Node &n, SyncKind kind, const FusionPlan &plan, DiagnosticSink &sink) {
    const Value *in = n.inputs.empty() ? nullptr : n.inputs[0];
    const Value *out = n.outputs.empty() ? nullptr : n.outputs[0];
    std::string input = in ? fmt::format("'{}' ({})", in->name, in->type.str()) : std::string("its input");
    std::string message;
    if (kind == SyncKind::ReadsValue)
      message = fmt::format("{} forces a device-to-host sync: it copies a value of {} to the host, which must wait "
                            "for every queued kernel to finish",
                            describeNode(n), input);
    else
      message = fmt::format("{} forces a device-to-host sync: the size of its output{} depends on the values of {}, "
                            "so the host must wait for the GPU and read the size back before it can allocate the "
                            "output and launch the next kernel",
                            describeNode(n), out ? fmt::format(" '{}'", out->name) : std::string(), input);
    Diagnostic &d = sink.report(n, std::move(message));
    d.reason = std::string(breakReasonName(BreakReason::HostSync));
    d.fusionId = plan.groupOf(n).id;
    unsigned readers = 0;
    for (const Value *o : n.outputs)
      if (o)
        readers += static_cast<unsigned>(o->uses.size());
    if (readers)
      d.note(fmt::format("fusion stops here: the {} op(s) reading its output start new kernels after the sync",
                         readers));
    d.note(hintFor(n, kind));
  }
};

}  // namespace

GRAPHLINT_DEFINE_RULE(HostSync)

}  // namespace graphlint
