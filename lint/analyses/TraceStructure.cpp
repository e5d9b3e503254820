// The model structure the memory trace reads (MemoryTrace.h): the repeated
// layers --recompute layer checkpoints, and exporter-decomposed kernels
// (GELU, SiLU) that PyTorch runs as one. Module scopes (a module's forward
// holds its arguments until it returns) are part of the shared Liveness.
#include "MemoryTraceBuilder.h"

#include <algorithm>

namespace graphlint {

llvm::StringRef checkpointLayer(const Node &n) {
  llvm::StringRef path = n.modulePath;
  size_t start = 0;
  while (start <= path.size()) {
    size_t dot = path.find('.', start);
    llvm::StringRef part = path.slice(start, dot);
    llvm::StringRef digits = part.substr(part.rfind('_') == llvm::StringRef::npos ? 0 : part.rfind('_') + 1);
    bool index = !digits.empty() && digits.find_first_not_of("0123456789") == llvm::StringRef::npos;
    if (index)
      return path.slice(0, dot);
    if (dot == llvm::StringRef::npos)
      break;
    start = dot + 1;
  }
  return {};
}

}  // namespace graphlint

namespace graphlint::memory {

void PlanBuilder::findComposites() {
  auto soleUser = [](const Value *v) -> const Node * {
    return v && v->uses.size() == 1 && !v->isGraphOutput() ? v->uses[0].user : nullptr;
  };
  auto isConst = [](const Value *v) {
    return v && (v->kind == Value::Kind::Param || (v->producer && v->producer->opType == "Constant"));
  };
  auto other = [](const Node *n, const Value *v) -> const Value * {
    return n->inputs.size() == 2 ? (n->inputs[0] == v ? n->inputs[1] : n->inputs[0]) : nullptr;
  };
  for (const auto &np : g_.nodes()) {
    // SiLU: x * Sigmoid(x).
    const Node &sig = *np;
    if (sig.opType == "Sigmoid" && !sig.inputs.empty() && sig.inputs[0]) {
      const Node *mul = soleUser(sig.outputs.empty() ? nullptr : sig.outputs[0]);
      if (mul && mul->opType == "Mul" && other(mul, sig.outputs[0]) == sig.inputs[0]) {
        compositeInner_.insert(&sig);
        compositeInput_[mul] = sig.inputs[0];
        inplaceActivation_.insert(mul);
      }
    }
  }
  for (const auto &np : g_.nodes()) {
    const Node &erf = *np;
    if (erf.opType != "Erf" || erf.inputs.empty() || !erf.inputs[0] || !erf.inputs[0]->producer)
      continue;
    const Node *div = erf.inputs[0]->producer;
    if ((div->opType != "Div" && div->opType != "Mul") || div->inputs.size() != 2 || !isConst(div->inputs[1]))
      continue;
    const Value *x = div->inputs[0];
    const Node *add = soleUser(erf.outputs[0]);
    if (!add || add->opType != "Add" || !isConst(other(add, erf.outputs[0])))
      continue;
    const Node *mul = soleUser(add->outputs[0]);
    if (!mul || mul->opType != "Mul" || other(mul, add->outputs[0]) != x)
      continue;
    const Node *last = mul;
    if (const Node *half = soleUser(mul->outputs[0]);
        half && half->opType == "Mul" && isConst(other(half, mul->outputs[0])))
      last = half;
    for (const Node *inner : {div, &erf, add, mul})
      if (inner != last)
        compositeInner_.insert(inner);
    compositeInput_[last] = x;
  }
}

}  // namespace graphlint::memory
