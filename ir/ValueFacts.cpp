// Value-level facts shared by every consumer (include/graphlint/ir/ValueFacts.h).
#include "graphlint/ir/ValueFacts.h"

#include "graphlint/ir/Graph.h"
#include "graphlint/ir/OpRegistry.h"

#include <algorithm>
#include <string>

namespace graphlint {

const Value *captureOrigin(const Value *v) {
  while (v && v->kind == Value::Kind::OuterScope && v->outer)
    v = v->outer;
  return v;
}

bool isViewOp(const Node &n) { return n.op && n.op->viewOfInput0; }

bool isFreeView(const Node &n) { return isViewOp(n) && n.op->kind == OpKind::ShapeOnly; }

bool isAtenConversion(const Node &n) { return n.op && n.op->conversion == ConversionKind::Convert; }

bool isConversion(const Node &n) { return n.op && n.op->conversion != ConversionKind::None; }

bool isOnnxCast(const Node &n) { return n.op && n.op->conversion == ConversionKind::Cast; }

bool isInplaceOp(const Node &n) { return n.op && n.op->inplace; }

bool isIdentityDropout(const Node &n) {
  if (n.domain != "aten")
    return false;
  std::string name = n.atenName();
  llvm::StringRef op = name;
  if (op.endswith("_"))
    op = op.drop_back();
  if (op != "dropout" && op != "feature_dropout" && op != "alpha_dropout" && op != "feature_alpha_dropout")
    return false;
  bool module = std::any_of(n.metadata.begin(), n.metadata.end(),
                            [](const auto &kv) { return kv.first == "dropout_module"; });
  const Attribute *p = n.attr("p");
  return module && p && ((p->kind == AttrKind::Float && p->f == 0) || (p->kind == AttrKind::Int && p->i == 0));
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
  if (isDefaultDomain(p.domain) && p.opType == "Constant")
    return true;
  if (p.inputs.empty() || !(isFreeView(p) || (throughCasts && isDefaultDomain(p.domain) && p.opType == "Cast")))
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
