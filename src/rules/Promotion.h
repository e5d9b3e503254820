// A round trip closed by implicit promotion, shared by GL101 and GL102.
//
// `h.half() * scale` with an f32 `scale` rounds h to f16 and computes in f32.
// torch.onnx writes the promotion as a Cast, so the ONNX graph holds the
// chain Cast(f16) -> Cast(f32) -> Mul, which GL102 reports as a rounding
// round trip; an FX graph holds `_to_copy(f16)` and an `aten::mul` of f16 and
// f32 that promotes. Both describe the same computation, so both get the same
// finding: GL102 at the op that promotes, and neither GL101 shape (the cast
// between compute ops, the mixed-dtype op) for it.
#pragma once

#include "graphlint/ir/Graph.h"
#include "graphlint/ir/OpRegistry.h"
#include "graphlint/ir/ValueFacts.h"
#include "graphlint/ir/DType.h"


#include <optional>

namespace graphlint {

struct PromotionRoundTrip {
  const Node *conversion = nullptr;  // the narrowing conversion that opens it
  const Value *narrow = nullptr;     // the operand the promotion widens again
  DType source = DType::Undefined;   // the dtype it returns to
};

/// When `n` (an op without an ONNX schema, so one that promotes as PyTorch
/// does) reads a floating operand that a conversion made narrower from the
/// dtype `n` computes in, with another operand already in that dtype.
inline std::optional<PromotionRoundTrip> promotionRoundTrip(const Node &n) {
  if ((n.op && n.op->known && isDefaultDomain(n.domain)) || (n.op && n.op->kind == OpKind::ControlFlow))
    return std::nullopt;
  const Value *out = n.outputs.empty() ? nullptr : n.outputs[0];
  if (!out || !isFloating(out->type.dtype))
    return std::nullopt;
  DType wide = out->type.dtype;
  auto tensor = [](const Value *v) {
    return v && v->type.isTensor() && isFloating(v->type.dtype) && v->type.shape.rankKnown &&
           v->type.shape.rank() > 0;
  };
  bool hasWide = false;
  for (const Value *v : n.inputs)
    hasWide |= tensor(v) && v->type.dtype == wide;
  if (!hasWide)
    return std::nullopt;
  for (const Value *v : n.inputs) {
    if (!tensor(v) || v->type.dtype == wide)
      continue;
    const Value *cur = v;
    for (unsigned hops = 0; cur && hops < 16 && cur->kind == Value::Kind::NodeOutput && cur->producer; ++hops) {
      const Node &p = *cur->producer;
      if (isFreeView(p)) {
        cur = p.inputs.empty() ? nullptr : p.inputs[0];
        continue;
      }
      const Value *src = p.inputs.empty() ? nullptr : p.inputs[0];
      // A weight's cast folds at load time (GL102 leaves those alone too).
      if (isAtenConversion(p) && src && src->type.dtype == wide && src->kind != Value::Kind::Param &&
          src->device == v->device)
        return PromotionRoundTrip{&p, v, wide};
      break;
    }
  }
  return std::nullopt;
}

}  // namespace graphlint
