// GL121 dynamic-control-flow: If/Loop/Scan and torch.cond/while_loop. Fusion
// cannot cross them; the message says what decides the branch or the trip
// count (constant, tensor shapes, or tensor contents) and how big the bodies
// are. An If on a constant condition is only a note: the branch is dead.
#include "graphlint/ir/ValueFacts.h"
#include "graphlint/ir/Display.h"
#include "graphlint/analyses/DataDependence.h"
#include "graphlint/analyses/FusionPlan.h"
#include "graphlint/rules/Rule.h"

#include <fmt/format.h>

#include <llvm/ADT/STLExtras.h>

namespace graphlint {
namespace {

size_t countNodes(const Graph &g) {
  size_t n = 0;
  forEachGraph(g, [&](const Graph &sub) { n += sub.nodes().size(); });
  return n;
}

// The attribute a body hangs on (then_branch, body, ...): a graph's own name
// is whatever the exporter chose.
std::string bodyLabel(const Node &n, unsigned idx) {
  for (const Attribute &a : n.attributes)
    if (llvm::is_contained(a.graphs, idx))
      return a.name;
  return fmt::format("body {}", idx);
}

std::string bodySizes(const Node &n) {
  std::string s;
  // An FX higher-order op carries its bodies' sizes, not the bodies
  // (docs/fx-format.md, `body_nodes`): torch.cond's true and false branch,
  // while_loop's condition and body.
  if (const Attribute *sizes = n.attr("body_nodes"); sizes && n.subgraphs().empty()) {
    bool cond = n.opType == "cond";
    for (size_t i = 0; i < sizes->ints.size(); ++i)
      s += fmt::format("{}{}: {} node(s)", s.empty() ? "" : ", ",
                       cond && i < 2 ? (i == 0 ? "true branch" : "false branch")
                       : !cond && i < 2 ? (i == 0 ? "condition" : "body")
                                        : fmt::format("body {}", i),
                       sizes->ints[i]);
    return s;
  }
  for (unsigned i = 0; i < n.subgraphs().size(); ++i)
    s += fmt::format("{}{}: {} node(s)", s.empty() ? "" : ", ", bodyLabel(n, i), countNodes(*n.subgraphs()[i]));
  return s;
}

std::string valueOrigin(const Value *v) {
  switch (v->kind) {
  case Value::Kind::GraphInput: return fmt::format("{} input '{}'", v->graph && v->graph->parentGraph ? "body" : "graph", v->name);
  case Value::Kind::Param: return fmt::format("initializer '{}'", v->name);
  case Value::Kind::OuterScope: return v->outer ? valueOrigin(v->outer) : fmt::format("'{}'", v->name);
  default: return fmt::format("'{}'", v->name);
  }
}

// "Cast <- Greater <- ReduceSum of '/Relu_output_0'": the ops that compute a
// condition, following the data-tainted operand, a few steps back.
std::string chain(const Value *v, const DataDependence &dd) {
  std::string ops;
  for (unsigned step = 0; step < 4 && v; ++step) {
    v = captureOrigin(v);
    if (v->kind != Value::Kind::NodeOutput || !v->producer)
      break;
    const Node &p = *v->producer;
    ops += (ops.empty() ? "" : " <- ") + p.opType;
    const Value *next = nullptr;
    for (const Value *in : p.inputs)
      if (in && dd.contentTaint(in)) {
        next = in;
        break;
      }
    if (!next)
      for (const Value *in : p.inputs)
        if (in) {
          next = in;
          break;
        }
    v = next;
  }
  if (!v)
    return ops;
  return ops.empty() ? valueOrigin(v) : fmt::format("{} of {}", ops, valueOrigin(v));
}

enum class Decider { Constant, Shapes, Data, None };

Decider classify(const Value *v, const DataDependence &dd) {
  if (!v)
    return Decider::None;
  if (DataDependence::constantValue(v))
    return Decider::Constant;
  return dd.contentTaint(v) || dd.shapeTaint(v) ? Decider::Data : Decider::Shapes;
}

class DynamicControlFlow final : public Rule {
public:
  static constexpr RuleInfo kInfo{"GL121", "dynamic-control-flow", Severity::Warning,
      "If/Loop/Scan, torch.cond/while_loop: fusion cannot cross it"};
  const RuleInfo &info() const override { return kInfo; }

  bool perNode() const override { return true; }

  void checkNode(const Node &n, const Model &, AnalysisContext &ctx, DiagnosticSink &sink) const override {
    ControlFlowKind k = controlFlowKind(n);
    if (k == ControlFlowKind::None)
      return;
    const DataDependence &dd = ctx.get<DataDependence>();
    Diagnostic *d = nullptr;
    switch (k) {
    case ControlFlowKind::If:
    case ControlFlowKind::Cond: d = reportBranch(n, k, dd, sink); break;
    case ControlFlowKind::Loop: d = reportLoop(n, dd, sink); break;
    case ControlFlowKind::Scan: d = reportScan(n, sink); break;
    default: d = reportOther(n, k, sink); break;
    }
    d->fusionId = ctx.get<FusionPlan>().groupOf(n).id;
    d->reason = std::string(breakReasonName(BreakReason::ControlFlow));
  }

private:
  static Diagnostic *reportBranch(const Node &n, ControlFlowKind k, const DataDependence &dd, DiagnosticSink &sink) {
    const Value *cond = n.inputs.empty() ? nullptr : n.inputs[0];
    std::string what = fmt::format("{} '{}'", controlFlowKindName(k), nodeLabel(n));
    std::vector<int64_t> ints;
    Decider dec = classify(cond, dd);
    if (dec == Decider::Constant && DataDependence::constantValue(cond, &ints) && ints.size() == 1) {
      bool taken = ints[0] != 0;
      BranchBodies b = branchBodies(n);
      const Graph *deadBody = taken ? b.elseBody : b.thenBody;
      Diagnostic &d = sink.report(
          n, fmt::format("{} has a constant condition '{}' ({}): only {} can run, so {} ({} node(s)) is dead and the "
                         "If only stops fusion",
                         what, cond->name, taken ? "true" : "false", taken ? b.thenName : b.elseName,
                         taken ? b.elseName : b.thenName, deadBody ? countNodes(*deadBody) : 0));
      d.severity = Severity::Note;
      d.note("fold the If: inline the branch that runs (onnxsim / constant folding does this), or remove "
             "the constant test from forward()");
      return &d;
    }
    std::string decided;
    std::string hint;
    if (dec == Decider::Data) {
      decided = fmt::format("a data-dependent branch: the condition '{}' comes from tensor contents ({}), so the "
                            "device must sync with the host to pick a branch",
                            cond->name, chain(cond, dd));
      hint = "compute both sides and select with torch.where(cond, a, b) (ONNX Where) or a mask, so the choice stays "
             "on the device; or move the data-dependent Python `if` out of forward()";
    } else {
      decided = fmt::format("the condition '{}' is computed from tensor shapes ({}), not contents", cond ? cond->name : "?",
                            cond ? chain(cond, dd) : "?");
      hint = "decide shape-dependent branches in Python before tracing (static shapes fold them), or export with "
             "fixed shapes so the branch disappears";
    }
    Diagnostic &d = sink.report(
        n, fmt::format("{} splits the graph: fusion cannot cross it; {} ({})", what, decided, bodySizes(n)));
    d.note(hint);
    return &d;
  }

  static Diagnostic *reportLoop(const Node &n, const DataDependence &dd, DiagnosticSink &sink) {
    const Value *trip = n.inputs.size() > 0 ? n.inputs[0] : nullptr;
    const Value *cond = n.inputs.size() > 1 ? n.inputs[1] : nullptr;
    const Graph *body = n.subgraphs().empty() ? nullptr : n.subgraphs()[0].get();
    const Value *bodyCond = body && !body->outputs.empty() ? body->outputs[0] : nullptr;
    std::vector<int64_t> ints;
    std::string tripText;
    bool staticTrip = false;
    if (!trip)
      tripText = "no trip count (runs until its condition is false)";
    else if (DataDependence::constantValue(trip, &ints) && ints.size() == 1)
      tripText = fmt::format("a static trip count of {}", ints[0]), staticTrip = true;
    else if (classify(trip, dd) == Decider::Data)
      tripText = trip->kind == Value::Kind::NodeOutput
                     ? fmt::format("a dynamic trip count '{}' computed from tensor values ({})", trip->name, chain(trip, dd))
                     : fmt::format("a dynamic trip count from {}", valueOrigin(trip));
    else
      tripText = fmt::format("a trip count '{}' computed from tensor shapes ({})", trip->name, chain(trip, dd));
    bool whileCond = bodyCond && dd.contentTaint(bodyCond);
    std::string condText;
    if (whileCond)
      condText = fmt::format("; its continue-condition '{}' depends on tensor values (a while-loop)", bodyCond->name);
    else if (cond && !DataDependence::constantValue(cond) && dd.contentTaint(cond))
      condText = fmt::format("; it runs only if '{}' (from data) holds", cond->name);
    Diagnostic &d = sink.report(
        n, fmt::format("Loop '{}' splits the graph: fusion cannot cross it; it has {}{} ({})",
                       nodeLabel(n), tripText, condText, bodySizes(n)));
    if (staticTrip && !whileCond)
      d.note(fmt::format("unroll the loop ({} iterations) in Python so the exporter emits straight-line "
                         "ops the compiler can fuse, or batch the iterations into one tensor op",
                         ints[0]));
    else
      d.note("move the Python loop out of forward(), batch the iterations into tensor ops, or bound the "
             "trip count statically (a fixed maximum with masking) so the loop can be unrolled");
    return &d;
  }

  static Diagnostic *reportScan(const Node &n, DiagnosticSink &sink) {
    auto numScan = n.attrInt("num_scan_inputs").value_or(0);
    std::string iters = "an iteration count taken from the scanned axis";
    // Scan-9+ inputs are [state..., scan...]; the scanned axis is 0 by default.
    if (numScan > 0 && static_cast<size_t>(numScan) <= n.inputs.size()) {
      const Value *x = n.inputs[n.inputs.size() - numScan];
      if (x && x->type.isTensor() && x->type.shape.rankKnown && x->type.shape.rank() > 0) {
        const Dim &dim = x->type.shape.dims[0];
        iters = dim.isStatic() ? fmt::format("{} iterations (static)", dim.value)
                               : fmt::format("{} iterations (dynamic)", dim.str());
      }
    }
    Diagnostic &d = sink.report(
        n, fmt::format("Scan '{}' splits the graph: fusion cannot cross it; it runs its body over {} scanned input(s), "
                       "{} ({})",
                       nodeLabel(n), numScan, iters, bodySizes(n)));
    d.note("express the recurrence as batched tensor ops (cumsum, a matmul over the sequence), or unroll "
           "it when the length is static");
    return &d;
  }

  static Diagnostic *reportOther(const Node &n, ControlFlowKind k, DiagnosticSink &sink) {
    std::string decided = k == ControlFlowKind::WhileLoop
                              ? "its iteration count is decided at runtime by cond_fn"
                              : fmt::format("'{}' owns {} body graph(s)", n.qualifiedOp(), n.subgraphs().size());
    Diagnostic &d = sink.report(
        n, fmt::format("{} '{}' splits the graph: fusion cannot cross it; {}{}", controlFlowKindName(k),
                       nodeLabel(n), decided,
                       n.subgraphs().empty() ? "" : fmt::format(" ({})", bodySizes(n))));
    d.note("move Python control flow out of forward(), or replace it with tensor ops (torch.where, "
           "masking, batched ops) so the compiler sees one straight-line graph");
    return &d;
  }
};

}  // namespace

GRAPHLINT_DEFINE_RULE(DynamicControlFlow)

}  // namespace graphlint
