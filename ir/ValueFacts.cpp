// Value-level facts shared by every consumer (include/graphlint/ir/ValueFacts.h).
#include "graphlint/ir/ValueFacts.h"

#include <llvm/ADT/StringSwitch.h>

#include "graphlint/ir/Graph.h"
#include "graphlint/ir/OpRegistry.h"

namespace graphlint {

const Value *captureOrigin(const Value *v) {
  while (v && v->kind == Value::Kind::OuterScope && v->outer)
    v = v->outer;
  return v;
}

bool isViewOp(const Node &n) { return n.op && n.op->viewOfInput0; }

bool isFreeView(const Node &n) { return isViewOp(n) && n.op->kind == OpKind::ShapeOnly; }

bool isAtenConversion(const Node &n) {
  return llvm::StringSwitch<bool>(n.atenName())
      .Cases("_to_copy", "to", "type_as", "float", "half", "bfloat16", "double", true)
      .Default(false);
}

namespace {

bool foldedConstant(const Value *v, bool throughCasts, unsigned depth) {
  // A bounded walk: a deeper chain of views is not worth proving constant.
  const Value *base = captureOrigin(v);
  if (!base || depth > 8)
    return false;
  if (base->kind == Value::Kind::Param)
    return base->param != nullptr;
  if (base->kind != Value::Kind::NodeOutput || !base->producer)
    return false;
  const Node &p = *base->producer;
  bool onnx = isDefaultDomain(p.domain);
  if (onnx && p.opType == "Constant")
    return true;
  if (p.inputs.empty() || !(isFreeView(p) || (throughCasts && onnx && p.opType == "Cast")))
    return false;
  // Every operand must fold (a Reshape's shape too).
  for (const Value *in : p.inputs)
    if (in && !foldedConstant(in, throughCasts, depth + 1))
      return false;
  return true;
}

}  // namespace

bool isFoldedConstant(const Value *v, bool throughCasts) { return foldedConstant(v, throughCasts, 0); }

}  // namespace graphlint
