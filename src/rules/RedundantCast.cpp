// GL102 redundant-cast: a conversion to the dtype its input already has, or a
// chain of conversions (with only views between them) that returns to its
// source dtype. A round trip through a type that holds every source value
// exactly (f16 -> f32 -> f16, i32 -> i64 -> i32) is a pure waste of two
// kernels; one through a narrower float (f32 -> f16 -> f32) rounds the values
// and is reported as such. Round trips that change values on purpose (float ->
// int -> float truncation, int -> bool -> int) are left alone, as are casts of
// constants (folded at load time), of scalars and in host-side shape
// arithmetic, which cost nothing.
#include "graphlint/ir/ValueFacts.h"
#include "graphlint/ir/OpRegistry.h"
#include "graphlint/ir/Verifier.h"
#include "graphlint/analyses/FusionPlan.h"
#include "graphlint/rules/Rule.h"
#include "Promotion.h"

#include <fmt/format.h>

#include <vector>

namespace graphlint {
namespace {

const Value *in0(const Node &n) { return n.inputs.empty() ? nullptr : n.inputs[0]; }
const Value *out0(const Node &n) { return n.outputs.empty() ? nullptr : n.outputs[0]; }

bool knownDevice(const Value &v) { return v.device.kind != Device::Kind::Unknown; }

// A node that converts the dtype of input 0 and does nothing else. FX
// conversions (`_to_copy`, `to`) may also move the tensor to another device:
// they count only when both devices are known and equal.
bool isPureConversion(const Node &n) {
  const Value *in = in0(n), *out = out0(n);
  if (!in || !out || in->type.dtype == DType::Undefined || out->type.dtype == DType::Undefined)
    return false;
  if (isOnnxCast(n))
    return true;
  return isAtenConversion(n) && knownDevice(*in) && knownDevice(*out) && in->device == out->device;
}

struct Format {
  enum Kind { None, Bool, Int, Float } kind = None;
  unsigned bits = 0;      // integer width
  bool isSigned = false;
  unsigned exponent = 0;  // float exponent bits
  unsigned mantissa = 0;  // float stored mantissa bits
};

Format formatOf(DType t) {
  switch (t) {
  case DType::Bool: return {Format::Bool};
  case DType::UInt8: return {Format::Int, 8, false};
  case DType::Int8: return {Format::Int, 8, true};
  case DType::UInt16: return {Format::Int, 16, false};
  case DType::Int16: return {Format::Int, 16, true};
  case DType::UInt32: return {Format::Int, 32, false};
  case DType::Int32: return {Format::Int, 32, true};
  case DType::UInt64: return {Format::Int, 64, false};
  case DType::Int64: return {Format::Int, 64, true};
  case DType::UInt4: return {Format::Int, 4, false};
  case DType::Int4: return {Format::Int, 4, true};
  case DType::UInt2: return {Format::Int, 2, false};
  case DType::Int2: return {Format::Int, 2, true};
  case DType::Double: return {Format::Float, 0, true, 11, 52};
  case DType::Float: return {Format::Float, 0, true, 8, 23};
  case DType::Float16: return {Format::Float, 0, true, 5, 10};
  case DType::BFloat16: return {Format::Float, 0, true, 8, 7};
  case DType::Float8E4M3FN: case DType::Float8E4M3FNUZ: return {Format::Float, 0, true, 4, 3};
  case DType::Float8E5M2: case DType::Float8E5M2FNUZ: return {Format::Float, 0, true, 5, 2};
  case DType::Float4E2M1: return {Format::Float, 0, true, 2, 1};
  case DType::Float8E8M0: return {Format::Float, 0, false, 8, 0};
  default: return {};
  }
}

// True when every value of `narrow` is exactly representable in `wide`.
bool holdsExactly(DType wide, DType narrow) {
  if (wide == narrow)
    return true;
  Format w = formatOf(wide), n = formatOf(narrow);
  if (w.kind == Format::None || n.kind == Format::None)
    return false;
  if (n.kind == Format::Bool)
    return true;
  if (w.kind == Format::Bool)
    return false;
  if (w.kind == Format::Int && n.kind == Format::Int)
    return n.isSigned ? w.isSigned && w.bits >= n.bits : (w.isSigned ? w.bits > n.bits : w.bits >= n.bits);
  if (w.kind == Format::Int)
    return false;  // no integer type holds fractions
  if (n.kind == Format::Int) {
    if (n.isSigned && !w.isSigned)
      return false;
    unsigned magnitude = n.bits - (n.isSigned ? 1 : 0);
    return magnitude <= w.mantissa + 1 && (1u << (w.exponent - 1)) > magnitude;
  }
  return w.isSigned >= n.isSigned && w.exponent >= n.exponent && w.mantissa >= n.mantissa;
}

std::string chainText(const std::vector<const Node *> &chain) {
  std::string s(dtypeShortName(in0(*chain.front())->type.dtype));
  for (const Node *c : chain)
    s += fmt::format(" -> {}", dtypeShortName(out0(*c)->type.dtype));
  return s;
}

class RedundantCast final : public Rule {
public:
  static constexpr RuleInfo kInfo{"GL102", "redundant-cast", Severity::Warning,
      "a Cast chain returns to its source dtype, or casts to the same dtype"};
  const RuleInfo &info() const override { return kInfo; }

  void check(const Model &m, AnalysisContext &ctx, DiagnosticSink &sink) const override {
    const FusionPlan &plan = ctx.get<FusionPlan>();
    forEachGraph(*m.graph, [&](const Graph &g) {
      for (const auto &np : g.nodes()) {
        const Node &n = *np;
        if (auto rt = promotionRoundTrip(n)) {
          reportPromotionRoundTrip(n, *rt, sink);
          continue;
        }
        if (!isPureConversion(n) || plan.groupOf(n).kind == GroupKind::ShapeOnly)
          continue;
        const Value &in = *in0(n), &out = *out0(n);
        // A scalar conversion costs nothing measurable, and exporters emit one
        // before every If condition (torch.onnx casts it to bool).
        if ((in.type.shape.rankKnown && in.type.shape.rank() == 0) || isFoldedConstant(&in))
          continue;
        if (in.type.dtype == out.type.dtype) {
          // Exporters cast every boolean condition to bool whatever it already
          // is (torch.onnx before Where/Not/And, decompositions' masks): the
          // user wrote none of these, and a bool copy changes no value.
          if (in.type.dtype == DType::Bool)
            continue;
          Diagnostic &d = sink.report(n, fmt::format("{} converts '{}' to {}, the dtype it already has: the cast is a "
                                                     "copy that changes nothing",
                                                     describeNode(n), in.name, dtypeShortName(out.type.dtype)));
          d.note(fmt::format("remove the cast and read '{}' directly", in.name));
          continue;
        }
        checkRoundTrip(n, sink);
      }
    });
  }

private:
  // `h.half() * scale`: the FX form of ONNX's Cast(f16) -> Cast(f32) -> Mul,
  // whose second cast is the promotion inside the op (Promotion.h). Always a
  // rounding round trip: a promotion only widens.
  static void reportPromotionRoundTrip(const Node &n, const PromotionRoundTrip &rt, DiagnosticSink &sink) {
    const Value &src = *in0(*rt.conversion);
    Diagnostic &d = sink.report(
        n, fmt::format("cast chain {} -> {} -> {} returns '{}' to its source dtype {}, only rounding it to {} "
                       "precision on the way: {}, then {} promotes '{}' back to {}",
                       dtypeShortName(rt.source), dtypeShortName(rt.narrow->type.dtype), dtypeShortName(rt.source),
                       src.name, dtypeShortName(rt.source), dtypeShortName(rt.narrow->type.dtype),
                       describeNode(*rt.conversion), describeNode(n), rt.narrow->name, dtypeShortName(rt.source)));
    d.notes.push_back({"if the rounding is not intended, remove the cast; if it is, say so with a comment or an "
                       "explicit quantize op",
                       std::nullopt});
  }

  // Walks back from `last` through views and conversions to the earliest
  // conversion whose source dtype `last` returns to.
  static void checkRoundTrip(const Node &last, DiagnosticSink &sink) {
    DType target = out0(last)->type.dtype;
    std::vector<const Node *> chain{&last};
    unsigned views = 0;
    const Node *start = nullptr;
    const Value *v = in0(last);
    for (unsigned hops = 0; v && hops < 16 && v->kind == Value::Kind::NodeOutput && v->producer; ++hops) {
      const Node &p = *v->producer;
      if (isFreeView(p)) {
        ++views;
        v = in0(p);
        continue;
      }
      if (!isPureConversion(p) || in0(p)->type.dtype == out0(p)->type.dtype)
        break;
      chain.insert(chain.begin(), &p);
      if (in0(p)->type.dtype == target) {
        start = &p;
        break;
      }
      v = in0(p);
    }
    if (!start || isFoldedConstant(in0(*start)))
      return;
    // Every intermediate dtype must hold the source values exactly, else the
    // round trip changes them: only float roundings are worth reporting.
    bool exact = true;
    DType narrowest = target;
    for (size_t i = 0; i + 1 < chain.size(); ++i) {
      DType mid = out0(*chain[i])->type.dtype;
      if (!holdsExactly(mid, target)) {
        exact = false;
        if (!isFloating(mid) || !isFloating(target))
          return;  // float -> int -> float truncation or int -> bool -> int: deliberate
        narrowest = mid;
      }
    }
    const Value &src = *in0(*start);
    std::string names;
    for (const Node *c : chain)
      names += (names.empty() ? "" : ", ") + describeNode(*c);
    std::string between = views ? fmt::format(" (with {} view op(s) between)", views) : std::string();
    Diagnostic &d =
        sink.report(last, exact ? fmt::format("cast chain {}{} returns '{}' to its source dtype {} without changing a "
                                              "value: {} are redundant",
                                              chainText(chain), between, src.name, dtypeShortName(target), names)
                                : fmt::format("cast chain {}{} returns '{}' to its source dtype {}, only rounding it to "
                                              "{} precision on the way: {}",
                                              chainText(chain), between, src.name, dtypeShortName(target),
                                              dtypeShortName(narrowest), names));
    bool intermediateShared = false;
    for (size_t i = 0; i + 1 < chain.size(); ++i)
      for (const Value *o : chain[i]->outputs)
        intermediateShared |= o && o->uses.size() > 1;
    if (!exact)
      d.note("if the rounding is not intended, remove the casts; if it is, say so with a comment or an "
             "explicit quantize op");
    else if (intermediateShared)
      d.note(fmt::format("other ops read the intermediate value, so keep {} but let {} read '{}' directly",
                         describeNode(*start), describeNode(last), src.name));
    else
      d.note(views ? fmt::format("remove the casts; the view ops between them work on '{}' as it is",
                                 src.name)
                   : fmt::format("remove the casts and read '{}' directly", src.name));
  }
};

}  // namespace

GRAPHLINT_DEFINE_RULE(RedundantCast)

}  // namespace graphlint
