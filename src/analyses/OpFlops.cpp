// FLOP formulas per op (docs/cost-model.md "FLOPs"). Only static shapes are
// used: a formula that needs an unknown size gives nullopt.
#include "graphlint/analyses/OpFlops.h"

#include "graphlint/ir/OpRegistry.h"
#include "graphlint/analyses/Contraction.h"
#include "graphlint/ir/ValueFacts.h"

#include <algorithm>

#include <llvm/ADT/StringMap.h>

namespace graphlint {
namespace {

const Value *input(const Node &n, unsigned i) { return i < n.inputs.size() ? n.inputs[i] : nullptr; }
const Value *output0(const Node &n) { return n.outputs.empty() ? nullptr : n.outputs[0]; }

std::optional<double> numel(const Value *v) {
  if (!v || !v->type.isTensor())
    return std::nullopt;
  auto e = v->type.shape.numElements();
  return e ? std::optional<double>(static_cast<double>(*e)) : std::nullopt;
}

std::optional<double> staticDim(const Value *v, int idx) {
  auto d = v ? v->type.staticDim(idx) : std::nullopt;
  return d ? std::optional<double>(static_cast<double>(*d)) : std::nullopt;
}

std::optional<double> product(std::optional<double> a, std::optional<double> b) {
  return a && b ? std::optional<double>(*a * *b) : std::nullopt;
}

// A multiply-accumulate per (output element, reduction step): 2 FLOPs.
std::optional<double> macs(std::optional<double> outputs, std::optional<double> reduction) {
  auto p = product(outputs, reduction);
  return p ? std::optional<double>(2 * *p) : std::nullopt;
}

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

// 2 x the product of every distinct index's size: each output element sums
// over the contracted indices. Ellipses are not resolved.
std::optional<double> einsumFlops(const Node &n) {
  const Attribute *eq = n.attr("equation");
  if (!eq || eq->s.find("...") != std::string::npos)
    return std::nullopt;
  std::string lhs = eq->s.substr(0, eq->s.find("->"));
  llvm::StringMap<int64_t> size;
  unsigned operand = 0;
  int pos = 0;
  for (char c : lhs) {
    if (c == ',') {
      ++operand, pos = 0;
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      auto d = input(n, operand) ? input(n, operand)->type.staticDim(pos) : std::nullopt;
      if (!d)
        return std::nullopt;
      size[std::string(1, c)] = *d;
      ++pos;
    }
  }
  double f = n.inputs.size() > 1 ? 2 : 1;
  for (const auto &e : size)
    f *= static_cast<double>(e.second);
  return f;
}

// ONNX RNN/GRU/LSTM: gates x (input + recurrent) matmuls per step and direction.
std::optional<double> recurrentFlops(const Node &n, double gates) {
  auto x = input(n, 0);
  auto seqBatch = product(staticDim(x, 0), staticDim(x, 1));
  auto hidden = n.attrInt("hidden_size");
  auto in = staticDim(x, 2);
  auto dirs = staticDim(input(n, 1), 0);
  if (!seqBatch || !hidden || !in || !dirs)
    return std::nullopt;
  double h = static_cast<double>(*hidden);
  return 2.0 * gates * h * (*in + h) * *seqBatch * *dirs;
}

// FLOPs per input element of the reductions and normalisations (a mean and a
// variance, a scale and a shift: a handful each); 1 for plain reductions.
double reductionFactor(llvm::StringRef op) {
  if (op == "Softmax" || op == "LogSoftmax" || op == "softmax" || op == "_softmax" || op == "log_softmax")
    return 5;
  if (op.contains("Normalization") || op.contains("norm"))
    return 5;
  return 1;
}

// aten::convolution_backward(grad_out, input, weight, ..., output_mask): the
// input gradient and the weight gradient each cost one forward convolution
// (the same MACs: every output-gradient element meets C_in/group x kernel
// taps); output_mask says which of them autograd asked for.
std::optional<double> convolutionBackwardFlops(const Node &n) {
  const Value *gradOut = input(n, 0), *x = input(n, 1), *w = input(n, 2);
  auto forward = n.attrInt("transposed").value_or(0) ? macs(numel(x), convReduction(w))
                                                     : macs(numel(gradOut), convReduction(w));
  if (!forward)
    return std::nullopt;
  return *forward * convolutionBackwardGradients(n);
}

}  // namespace

unsigned convolutionBackwardGradients(const Node &n) {
  if (n.atenName() != "convolution_backward")
    return 0;
  const Attribute *mask = n.attr("output_mask");
  unsigned products = 0;
  for (unsigned i = 0; i < 2; ++i) {
    bool wanted = mask && i < mask->ints.size() ? mask->ints[i] != 0
                                                : i < n.outputs.size() && n.outputs[i] && !n.outputs[i]->uses.empty();
    products += wanted ? 1 : 0;
  }
  return products;
}

bool isAttentionKernel(const Node &n) {
  const std::string name = n.atenName();
  llvm::StringRef op = name;
  return op == "scaled_dot_product_attention" || op.startswith("_scaled_dot_product_") ||
         op == "_flash_attention_forward" || op == "_flash_attention_backward";
}

std::optional<double> attentionFlops(const Node &n, bool flashKernels) {
  if (!isAttentionKernel(n))
    return std::nullopt;
  const bool backward = llvm::StringRef(n.atenName()).endswith("_backward");
  const unsigned q = backward ? 1 : 0;  // a backward kernel reads grad_out first
  const Value *Q = input(n, q), *K = input(n, q + 1), *V = input(n, q + 2);
  for (const Value *x : {Q, K, V})
    if (!x || !x->type.shape.rankKnown || x->type.shape.rank() != 4)
      return std::nullopt;
  auto b = staticDim(Q, 0), h = staticDim(Q, 1), sq = staticDim(Q, 2), d = staticDim(Q, 3);
  auto sk = staticDim(K, 2), dv = staticDim(V, 3);
  if (!b || !h || !sq || !d || !sk || !dv)
    return std::nullopt;
  double f = 2 * *b * *h * *sq * *sk * (*d + *dv);
  bool causal = numericAttr(n, "is_causal").value_or(0) != 0;
  for (const Value *in : n.inputs)
    causal |= in && isCausalMask(in);
  if (causal && flashKernels)
    f /= 2;
  return backward ? 2.5 * f : f;
}

std::optional<double> contractionFlops(const Node &n, bool flashKernels) {
  if (isAttentionKernel(n))
    return attentionFlops(n, flashKernels);
  if (n.atenName() == "convolution_backward")
    return convolutionBackwardFlops(n);
  if (auto g = contractionGeometry(n)) {
    switch (g->form) {
    case ContractionForm::MatMul:
    case ContractionForm::Gemm:
    case ContractionForm::Conv:  // K = C_in/group x kernel taps per output element
      return macs(numel(output0(n)), g->K ? std::optional<double>(static_cast<double>(*g->K)) : std::nullopt);
    case ContractionForm::ConvTranspose:  // each input element scatters into C_out/group x kernel outputs
      return macs(numel(input(n, 0)), convReduction(input(n, 1)));
    case ContractionForm::Einsum:
      return einsumFlops(n);
    case ContractionForm::Attention:
      return std::nullopt;  // not modelled
    }
  }
  const std::string &op = n.opType;
  if (n.domain.empty() && op == "Einsum")
    return einsumFlops(n);  // contractions the geometry leaves out (ellipses, one operand)
  if (n.domain.empty() && op == "LSTM")
    return recurrentFlops(n, 4);
  if (n.domain.empty() && op == "GRU")
    return recurrentFlops(n, 3);
  if (n.domain.empty() && op == "RNN")
    return recurrentFlops(n, 1);
  if (!n.op || n.op->kind != OpKind::Contraction)
    return 0.0;
  return std::nullopt;  // Attention, DFT, DeformConv: not modelled
}

std::optional<double> nodeFlops(const Node &n, bool flashKernels) {
  if (!n.op)
    return std::nullopt;
  switch (n.op->kind) {
  case OpKind::Contraction:
    return contractionFlops(n, flashKernels);
  case OpKind::Pointwise:
  case OpKind::Broadcast:
    return numel(output0(n));
  case OpKind::Reduction: {
    const std::string aten = n.atenName();
    llvm::StringRef op = aten.empty() ? llvm::StringRef(n.opType) : llvm::StringRef(aten);
    if (op == "MaxPool" || op == "AveragePool" || op == "LpPool") {
      const Attribute *k = n.attr("kernel_shape");
      double window = 1;
      for (int64_t d : k ? k->ints : std::vector<int64_t>{})
        window *= static_cast<double>(d);
      return product(numel(output0(n)), window);
    }
    return product(numel(input(n, 0)), reductionFactor(op));
  }
  case OpKind::Injective:
  case OpKind::ShapeOnly:
  case OpKind::Collective:
    return 0.0;
  case OpKind::DataDependentOutput:
    return numel(input(n, 0));
  case OpKind::ControlFlow:
  case OpKind::Unknown:
    return std::nullopt;
  }
  return std::nullopt;
}

double backwardFlops(const Node &n, double forward, const std::function<bool(const Value *)> &needsGrad) {
  if (isAttentionKernel(n))  // FlashAttention-2's backward: five matmuls to the forward's two
    return std::any_of(n.inputs.begin(), n.inputs.begin() + std::min<size_t>(3, n.inputs.size()), needsGrad)
               ? 2.5 * forward
               : 0;
  if (n.op && n.op->kind == OpKind::Contraction) {
    double operands = 0;
    for (unsigned i = 0; i < 2 && i < n.inputs.size(); ++i)
      operands += needsGrad(n.inputs[i]) ? 1 : 0;
    // addmm(bias, a, b): the matrices are operands 1 and 2.
    if (n.atenName() == "addmm" || n.atenName() == "baddbmm")
      operands = (n.inputs.size() > 1 && needsGrad(n.inputs[1])) + (n.inputs.size() > 2 && needsGrad(n.inputs[2]));
    return forward * operands;
  }
  for (const Value *v : n.inputs)
    if (needsGrad(v))
      return forward;
  return 0;
}

}  // namespace graphlint
