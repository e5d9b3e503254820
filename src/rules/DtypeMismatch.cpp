// GL101 dtype-mismatch: tensors of different floating dtypes meet inside what
// would be one fusion group. Two shapes of it: a precision-changing Cast that
// sits between compute ops (the f16 -> f32 -> f16 island around a LayerNorm or
// Softmax), and an op that reads floating inputs of different dtypes (implicit
// promotion, possible in FX graphs). Casts that only convert graph inputs,
// weights or outputs are conversions at the boundary, not islands: not flagged.
#include "graphlint/ir/LibrarySource.h"
#include "graphlint/ir/ValueFacts.h"
#include "graphlint/ir/OpRegistry.h"
#include "graphlint/ir/Verifier.h"
#include "graphlint/analyses/FusionPlan.h"
#include "graphlint/rules/Rule.h"
#include "Promotion.h"

#include <fmt/format.h>

#include <llvm/ADT/DenseSet.h>

#include <deque>

namespace graphlint {
namespace {

const Value *in0(const Node &n) { return n.inputs.empty() ? nullptr : n.inputs[0]; }
const Value *out0(const Node &n) { return n.outputs.empty() ? nullptr : n.outputs[0]; }

// Views and shape queries launch no kernel; the dtype flows through views (isFreeView).
bool isCompute(const Node &n) {
  return !isConversion(n) && !(n.op && n.op->kind == OpKind::ShapeOnly);
}

// Ops that fill a fresh tensor from a shape or constants: what they produce is
// a constant in all but name, and a cast of it folds into the fill.
bool isFactory(const Node &n) {
  return isDefaultDomain(n.domain) && (n.opType == "ConstantOfShape" || n.opType == "Range" || n.opType == "EyeLike");
}

bool isFloatConversion(const Node &n) {
  const Value *in = in0(n), *out = out0(n);
  return isConversion(n) && in && out && isFloating(in->type.dtype) && isFloating(out->type.dtype) &&
         in->type.dtype != out->type.dtype;
}

// The compute op whose result reaches `v` through views only, or null (a
// graph input, a weight, a constant or fill, host-side shape arithmetic,
// another conversion).
const Node *computeProducer(const Value *v, const FusionPlan &plan) {
  for (unsigned hops = 0; v && hops < 64; ++hops) {
    if (v->kind != Value::Kind::NodeOutput || !v->producer)
      return nullptr;
    const Node &p = *v->producer;
    if (isFreeView(p)) {
      v = in0(p);
      continue;
    }
    return isCompute(p) && !isFactory(p) && plan.groupOf(p).kind != GroupKind::ShapeOnly ? &p : nullptr;
  }
  return nullptr;
}

// The first compute op that reads `v` (through views), or null.
const Node *computeConsumer(const Value *v) {
  std::deque<const Value *> work{v};
  for (unsigned visited = 0; !work.empty() && visited < 64; ++visited) {
    const Value *cur = work.front();
    work.pop_front();
    for (const Use &u : cur->uses) {
      if (isFreeView(*u.user) && u.operand == 0 && out0(*u.user))
        work.push_back(out0(*u.user));
      else if (isCompute(*u.user))
        return u.user;
    }
  }
  return nullptr;
}

// The conversion that closes (or opened) the island of `cast`: searching
// forward for a conversion back to the source dtype, or backward for one from
// the target dtype. Bounded, so long graphs stay linear.
const Node *islandPartner(const Node &cast, bool forward) {
  DType want = forward ? in0(cast)->type.dtype : out0(cast)->type.dtype;
  DType from = forward ? out0(cast)->type.dtype : in0(cast)->type.dtype;
  std::deque<const Node *> work{&cast};
  llvm::DenseSet<const Node *> seen{&cast};
  for (unsigned visited = 0; !work.empty() && visited < 32; ++visited) {
    const Node *cur = work.front();
    work.pop_front();
    auto visit = [&](const Node *next) -> const Node * {
      if (!next || !seen.insert(next).second)
        return nullptr;
      if (next != &cast && isFloatConversion(*next)) {
        bool match = forward ? in0(*next)->type.dtype == from && out0(*next)->type.dtype == want
                             : in0(*next)->type.dtype == want && out0(*next)->type.dtype == from;
        return match ? next : nullptr;  // a different conversion ends the island either way
      }
      work.push_back(next);
      return nullptr;
    };
    if (forward) {
      for (const Value *o : cur->outputs)
        if (o)
          for (const Use &u : o->uses)
            if (const Node *hit = visit(u.user))
              return hit;
    } else {
      for (const Value *i : cur->inputs)
        if (i && i->kind == Value::Kind::NodeOutput)
          if (const Node *hit = visit(i->producer))
            return hit;
    }
  }
  return nullptr;
}

// fp32 against a 16-bit float in library code (transformers' RMSNorm and
// router upcasts, the softmax and loss in fp32, SDPA's fp32 log-sum-exp): the
// library keeps that precision on purpose, and the user cannot change it
// short of patching the library. The same pattern in the user's own code is
// reported.
bool deliberateLibraryUpcast(const Node &n, DType a, DType b) {
  auto half = [](DType t) { return t == DType::Float16 || t == DType::BFloat16; };
  bool f32Pair = (a == DType::Float && half(b)) || (b == DType::Float && half(a));
  return f32Pair && !libraryOf(n.loc).empty();
}

std::string tensorRef(const Value &v) { return fmt::format("'{}' ({})", v.name, dtypeShortName(v.type.dtype)); }

// What the planner says about the split at `n` under the chosen backend.
void addPlanNote(Diagnostic &d, const FusionPlan &plan, const Node &n, std::string_view what) {
  std::string backend(fusionBackendName(plan.backend()));
  for (const FusionBoundary *b : plan.boundariesInto(n))
    if (b->reason == BreakReason::DtypeMismatch) {
      d.note(fmt::format("{}: the fusion group splits here, fusion group {} (ending at {}) and fusion "
                         "group {} become separate kernels ({})",
                         backend, b->fromGroup, describeNode(*b->producer), b->toGroup, b->detail));
      return;
    }
  d.note(fmt::format("{} keeps {} inside fusion group {}, but TensorRT and ONNX Runtime split their "
                     "fusion there",
                     backend, what, plan.groupOf(n).id));
}

class DtypeMismatch final : public Rule {
public:
  static constexpr RuleInfo kInfo{"GL101", "dtype-mismatch", Severity::Warning,
      "tensors of different dtypes meet inside a would-be fusion group (mixed-precision "
      "island, implicit promotion)"};
  const RuleInfo &info() const override { return kInfo; }

  void check(const Model &m, AnalysisContext &ctx, DiagnosticSink &sink) const override {
    const FusionPlan &plan = ctx.get<FusionPlan>();
    forEachGraph(*m.graph, [&](const Graph &g) {
      for (const auto &np : g.nodes()) {
        const Node &n = *np;
        if (isFloatConversion(n))
          checkCast(n, plan, sink);
        else if (isCompute(n))
          checkPromotion(n, plan, sink);
      }
    });
  }

private:
  static void checkCast(const Node &n, const FusionPlan &plan, DiagnosticSink &sink) {
    const Value &in = *in0(n), &out = *out0(n);
    // A scalar (a scale factor, an epsilon) costs no bandwidth in either precision.
    if (in.type.shape.rankKnown && in.type.shape.rank() == 0)
      return;
    const Node *producer = computeProducer(&in, plan);
    const Node *consumer = computeConsumer(&out);
    if (!producer || !consumer)
      return;  // converts a graph input, a weight or a graph output: not an island
    if (auto rt = promotionRoundTrip(*consumer); rt && rt->conversion == &n)
      return;  // the consumer promotes it back: a round trip, GL102's
    DType from = in.type.dtype, to = out.type.dtype;
    if (deliberateLibraryUpcast(n, from, to))
      return;
    bool up = dtypeBits(to) > dtypeBits(from);
    Diagnostic &d = sink.report(
        n, fmt::format("{} changes precision {} -> {} between compute ops: {} from {} becomes {} read by {}",
                       describeNode(n), dtypeShortName(from), dtypeShortName(to), tensorRef(in),
                       describeNode(*producer), tensorRef(out), describeNode(*consumer)));
    d.reason = std::string(breakReasonName(BreakReason::DtypeMismatch));
    d.fusionId = plan.groupOf(n).id;
    if (const Node *partner = islandPartner(n, up)) {
      d.note(up ? fmt::format("the {} island closes at {}, which converts back to {}", dtypeShortName(to),
                              describeNode(*partner), dtypeShortName(from))
                : fmt::format("this closes the {} island opened by {}", dtypeShortName(from),
                              describeNode(*partner)));
    }
    addPlanNote(d, plan, n, "the cast");
    if (dtypeBits(from) && dtypeBits(to))
      d.notes.push_back(
          {fmt::format("wherever the {} tensor is written to memory it moves {}x the bytes of the {} one",
                       dtypeShortName(up ? to : from), static_cast<double>(std::max(dtypeBits(from), dtypeBits(to))) /
                                                           std::min(dtypeBits(from), dtypeBits(to)),
                       dtypeShortName(up ? from : to)),
           std::nullopt});
    d.note(fmt::format("keep the island in one precision: set the autocast policy (or export) so {} runs "
                       "in {} with {} accumulation, or let the compiler keep the conversion inside one "
                       "kernel",
                       describeNode(up ? *consumer : *producer), dtypeShortName(up ? from : to),
                       dtypeShortName(up ? to : from)));
  }

  // Implicit promotion: one op reads floating tensors of different dtypes.
  // Ops with an ONNX schema are skipped: within one type constraint the
  // checker already rejects a mismatch (GL001), and inputs under different
  // constraints (Resize scales, BatchNormalization statistics, Dropout ratio)
  // are meant to differ. Rank-0 tensors are skipped too: like Python scalars,
  // they do not take part in PyTorch's type promotion.
  static void checkPromotion(const Node &n, const FusionPlan &plan, DiagnosticSink &sink) {
    if (n.op && n.op->known && isDefaultDomain(n.domain))
      return;
    if (n.op && n.op->kind == OpKind::ControlFlow)
      return;
    if (promotionRoundTrip(n))
      return;  // promotes back what a cast narrowed: a round trip, GL102's
    const Value *first = nullptr, *other = nullptr;
    for (const Value *v : n.inputs) {
      if (!v || !v->type.isTensor() || !isFloating(v->type.dtype) || !v->type.shape.rankKnown ||
          v->type.shape.rank() == 0)
        continue;
      if (!first)
        first = v;
      else if (v->type.dtype != first->type.dtype && !other)
        other = v;
    }
    if (!other || deliberateLibraryUpcast(n, first->type.dtype, other->type.dtype))
      return;
    const Value *wide = dtypeBits(other->type.dtype) > dtypeBits(first->type.dtype) ? other : first;
    const Value *narrow = wide == other ? first : other;
    const Value *out = out0(n);
    Diagnostic &d = sink.report(
        n, fmt::format("{} reads {} and {}: mixed floating dtypes in one op force an implicit promotion{}",
                       describeNode(n), tensorRef(*first), tensorRef(*other),
                       out && isFloating(out->type.dtype) ? fmt::format(" to {}", dtypeShortName(out->type.dtype))
                                                          : std::string()));
    d.reason = std::string(breakReasonName(BreakReason::DtypeMismatch));
    d.fusionId = plan.groupOf(n).id;
    addPlanNote(d, plan, n, "the promotion");
    d.note(fmt::format("keep both operands in one precision: produce {} in {} (or cast it once where it "
                       "is created) instead of promoting inside the fused region",
                       tensorRef(*narrow), dtypeShortName(wide->type.dtype)));
  }
};

}  // namespace

GRAPHLINT_DEFINE_RULE(DtypeMismatch)

}  // namespace graphlint
