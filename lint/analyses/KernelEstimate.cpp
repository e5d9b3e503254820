// Roofline-lite estimates for GL142 until the cost model lands. Only static
// shapes are used: a group touching a tensor of unknown size has no estimate.
#include "graphlint/lint/KernelEstimate.h"

#include "graphlint/ir/OpRegistry.h"

#include <llvm/ADT/DenseSet.h>

namespace graphlint {
namespace {

const Value *input(const Node &n, unsigned i) { return i < n.inputs.size() ? n.inputs[i] : nullptr; }

std::optional<double> numel(const Value *v) {
  if (!v || !v->type.isTensor())
    return std::nullopt;
  auto e = v->type.shape.numElements();
  return e ? std::optional<double>(static_cast<double>(*e)) : std::nullopt;
}

std::optional<int64_t> staticDim(const Value *v, int idx) { return v ? v->type.staticDim(idx) : std::nullopt; }

// C/group x kernel spatial size: the reduction length per output element.
std::optional<double> convReduction(const Value *w) {
  if (!w || !w->type.shape.rankKnown || w->type.shape.rank() < 2)
    return std::nullopt;
  double r = 1;
  for (size_t i = 1; i < w->type.shape.rank(); ++i) {
    if (!w->type.shape.dims[i].isStatic())
      return std::nullopt;
    r *= static_cast<double>(w->type.shape.dims[i].value);
  }
  return r;
}

}  // namespace

std::optional<double> contractionFlops(const Node &n) {
  if (!n.op || n.op->kind != OpKind::Contraction)
    return 0.0;
  const Value *out = n.outputs.empty() ? nullptr : n.outputs[0];
  const std::string &op = n.opType;
  if (op == "MatMul" || op == "MatMulInteger" || op == "QLinearMatMul") {
    auto o = numel(out);
    auto k = staticDim(input(n, 0), -1);
    if (!o || !k) return std::nullopt;
    return 2.0 * *o * static_cast<double>(*k);
  }
  if (op == "Gemm") {
    auto o = numel(out);
    auto k = staticDim(input(n, 0), n.attrInt("transA").value_or(0) ? 0 : 1);
    if (!o || !k) return std::nullopt;
    return 2.0 * *o * static_cast<double>(*k);
  }
  if (op == "Conv" || op == "ConvInteger" || op == "QLinearConv") {
    auto o = numel(out);
    auto r = convReduction(input(n, op == "QLinearConv" ? 3 : 1));
    if (!o || !r) return std::nullopt;
    return 2.0 * *o * *r;
  }
  if (op == "ConvTranspose") {
    // Each input element scatters into C_out/group x kernel outputs.
    auto i = numel(input(n, 0));
    auto r = convReduction(input(n, 1));
    if (!i || !r) return std::nullopt;
    return 2.0 * *i * *r;
  }
  return std::nullopt;  // Einsum, RNNs, Attention: not modelled yet
}

std::optional<KernelEstimate> estimateGroup(const FusionGroup &g, const HardwareProfile &hw) {
  KernelEstimate e;
  llvm::DenseSet<const Node *> members(g.nodes.begin(), g.nodes.end());
  llvm::DenseSet<const Value *> counted;
  bool precisionSet = false;
  for (const Node *n : g.nodes) {
    for (const Value *v : n->inputs) {
      if (!v || (v->kind == Value::Kind::NodeOutput && members.count(v->producer)) || !counted.insert(v).second)
        continue;
      auto b = v->type.byteSize();
      if (!b) return std::nullopt;
      e.bytes += static_cast<double>(*b);
    }
    for (const Value *v : n->outputs) {
      if (!v) continue;
      bool leaves = v->isGraphOutput();
      for (const Use &u : v->uses)
        leaves |= !members.count(u.user);
      if (!leaves) continue;
      auto b = v->type.byteSize();
      if (!b) return std::nullopt;
      e.bytes += static_cast<double>(*b);
    }
    auto f = contractionFlops(*n);
    if (!f) return std::nullopt;
    e.flops += *f;
    if (*f > 0 && !precisionSet) {
      // fp32 counts at the CUDA-core rate: TF32 is a framework setting, and the
      // slower rate keeps "tiny" conservative.
      const Value *a = input(*n, 0);
      if (auto p = a ? mathPrecisionOf(a->type.dtype) : std::nullopt) {
        e.precision = *p;
        precisionSet = true;
      }
    }
  }
  e.seconds = rooflineSeconds(hw, e.flops, e.precision, e.bytes);
  return e;
}

}  // namespace graphlint
