// Exporter-decomposed kernels eager runs as one
// (include/graphlint/analyses/DecomposedKernels.h).
#include "graphlint/analyses/DecomposedKernels.h"

#include "graphlint/ir/OpRegistry.h"
#include "graphlint/ir/ValueFacts.h"

namespace graphlint {
namespace {

const Node *soleUser(const Value *v) {
  return v && v->uses.size() == 1 && !v->isGraphOutput() ? v->uses[0].user : nullptr;
}

bool isOnnx(const Node *n, llvm::StringRef op) { return n && isDefaultDomain(n->domain) && n->opType == op; }

// The operand of binary `n` that is not `v` (nullptr unless exactly one is).
const Value *otherOperand(const Node &n, const Value *v) {
  if (n.inputs.size() != 2 || (n.inputs[0] == v) == (n.inputs[1] == v))
    return nullptr;
  return n.inputs[0] == v ? n.inputs[1] : n.inputs[0];
}

const Value *output0(const Node *n) { return n && !n->outputs.empty() ? n->outputs[0] : nullptr; }

// SiLU: Mul(x, Sigmoid(x)).
std::optional<DecomposedKernel> silu(const Node &sig) {
  if (sig.opType != "Sigmoid" || sig.inputs.empty() || !sig.inputs[0])
    return std::nullopt;
  const Node *mul = soleUser(output0(&sig));
  if (!mul || mul->opType != "Mul" || otherOperand(*mul, sig.outputs[0]) != sig.inputs[0])
    return std::nullopt;
  return DecomposedKernel{DecomposedKernel::Kind::Silu, mul, sig.inputs[0], {&sig}, {}, nullptr};
}

// GELU, exact: Mul(x, Add(Erf(Div(x, sqrt 2)), 1)) [* 0.5].
std::optional<DecomposedKernel> gelu(const Node &erf) {
  if (erf.opType != "Erf" || erf.inputs.empty() || !erf.inputs[0] || !erf.inputs[0]->producer)
    return std::nullopt;
  const Node *div = erf.inputs[0]->producer;
  if ((div->opType != "Div" && div->opType != "Mul") || div->inputs.size() != 2 || !isFoldedConstant(div->inputs[1]))
    return std::nullopt;
  const Value *x = div->inputs[0];
  const Node *add = soleUser(output0(&erf));
  if (!add || add->opType != "Add" || !isFoldedConstant(otherOperand(*add, erf.outputs[0])))
    return std::nullopt;
  const Node *mul = soleUser(output0(add));
  if (!mul || mul->opType != "Mul" || otherOperand(*mul, add->outputs[0]) != x)
    return std::nullopt;
  DecomposedKernel k{DecomposedKernel::Kind::Gelu, mul, x, {div, &erf, add}, {}, nullptr};
  if (const Node *half = soleUser(output0(mul));
      half && half->opType == "Mul" && isFoldedConstant(otherOperand(*half, mul->outputs[0]))) {
    k.inner.push_back(mul);
    k.last = half;
  }
  return k;
}

// A per-channel parameter as GroupNorm's affine reads it: the value or a
// view of it (Unsqueeze/Reshape to [C, 1, 1]); not computed from the input.
bool isChannelOperand(const Value *v, const Value *x) {
  for (unsigned hops = 0; v && hops < 4; ++hops) {
    if (v == x)
      return false;
    if (v->kind == Value::Kind::Param || !v->producer)
      return true;
    if (!isViewOp(*v->producer) || v->producer->inputs.empty())
      return false;
    v = v->producer->inputs[0];
  }
  return false;
}

// GroupNorm as torch.onnx writes it, dynamo and TorchScript alike (opset <
// 21 has no GroupNormalization with torch's per-channel affine):
//   r = Reshape(x, [N, G, -1]); n = InstanceNormalization(r, ones[G], zeros[G]);
//   y = Add(Mul(Reshape(n, shape(x)), weight'), bias')
// As written the Mul keeps n for the weight's gradient: an input-sized
// tensor native_group_norm never makes (it keeps x, mean and rstd).
std::optional<DecomposedKernel> groupNorm(const Node &norm) {
  if (!isOnnx(&norm, "InstanceNormalization") || norm.inputs.size() != 3 || !norm.inputs[0] || !output0(&norm) ||
      !isFoldedConstant(norm.inputs[1]) || !isFoldedConstant(norm.inputs[2]))
    return std::nullopt;
  const Node *in = norm.inputs[0]->producer;
  if (!isOnnx(in, "Reshape") || in->inputs.empty() || !in->inputs[0] || soleUser(norm.inputs[0]) != &norm)
    return std::nullopt;
  const Value *x = in->inputs[0];
  const Node *out = soleUser(norm.outputs[0]);
  if (!isOnnx(out, "Reshape") || !output0(out) || !(out->outputs[0]->type.shape == x->type.shape))
    return std::nullopt;
  const Node *mul = soleUser(out->outputs[0]);
  const Value *weight = isOnnx(mul, "Mul") ? otherOperand(*mul, out->outputs[0]) : nullptr;
  if (!weight || !isChannelOperand(weight, x) || !output0(mul))
    return std::nullopt;
  const Node *add = soleUser(mul->outputs[0]);
  const Value *bias = isOnnx(add, "Add") ? otherOperand(*add, mul->outputs[0]) : nullptr;
  if (!bias || !isChannelOperand(bias, x))
    return std::nullopt;
  return DecomposedKernel{DecomposedKernel::Kind::GroupNorm, add, x, {in, &norm, out, mul}, {weight, bias},
                          norm.inputs[0]};
}

}  // namespace

DecomposedKernels::DecomposedKernels(const Graph &g) {
  for (const auto &np : g.nodes())
    for (auto match : {silu, gelu, groupNorm})
      if (std::optional<DecomposedKernel> k = match(*np))
        add(std::move(*k));
}

void DecomposedKernels::add(DecomposedKernel k) {
  // A piece belongs to one kernel: the first match keeps it.
  if (lastOf_.count(k.last) || innerOf_.count(k.last) ||
      llvm::any_of(k.inner, [&](const Node *n) { return lastOf_.count(n) || innerOf_.count(n); }))
    return;
  auto index = static_cast<unsigned>(kernels_.size());
  lastOf_[k.last] = index;
  for (const Node *n : k.inner)
    innerOf_[n] = index;
  kernels_.push_back(std::move(k));
}

const DecomposedKernel *DecomposedKernels::endingAt(const Node &n) const {
  auto it = lastOf_.find(&n);
  return it == lastOf_.end() ? nullptr : &kernels_[it->second];
}

}  // namespace graphlint
