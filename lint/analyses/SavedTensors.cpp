// Per-op facts the memory plan needs about PyTorch autograd: which operands
// and results each op keeps for its backward (after PyTorch's
// tools/autograd/derivatives.yaml), and which input gradients are views of the
// output gradient rather than new buffers. ONNX ops map to the aten op their
// exporter emitted them from (Gemm/MatMul -> addmm/matmul, Relu -> relu, ...).
#include "graphlint/ir/ValueFacts.h"
#include "graphlint/lint/MemoryPlan.h"

#include "graphlint/ir/OpRegistry.h"

#include <llvm/ADT/StringSwitch.h>

namespace graphlint {
namespace {

enum class Keeps : uint8_t {
  Nothing,        // gradients from sizes alone: Add, Sub, Neg, views, Concat, reductions to a sum/mean
  Result,         // relu, sigmoid, tanh, exp, softmax, sqrt, reciprocal
  Input0,         // erf, log, gelu, hardswish, clamp, leaky_relu, pools, norms
  OtherOperand,   // mul: each operand's gradient needs the other
  Divisor,        // div: self's gradient needs other; other's needs both
  Contraction,    // mm/conv: input's gradient needs the weight and vice versa
  Indices,        // gather/embedding: the indices
  Condition,      // where: the condition
  AllInputs,      // pow, einsum, attention and other multi-input math
};

Keeps keepsOf(const Node &n) {
  if (!isDefaultDomain(n.domain) && n.op->kind == OpKind::Contraction)
    return Keeps::AllInputs;
  return llvm::StringSwitch<Keeps>(n.opType)
      .Cases("Relu", "Sigmoid", "Tanh", "Exp", "Softmax", "LogSoftmax", Keeps::Result)
      .Cases("Sqrt", "Reciprocal", "Elu", "Selu", Keeps::Result)
      .Cases("Erf", "Log", "Sin", "Cos", "Abs", "Gelu", "HardSwish", "HardSigmoid", "Clip", Keeps::Input0)
      .Cases("LeakyRelu", "Softplus", "Mish", "Celu", "PRelu", "ThresholdedRelu", "Atan", "Asin", Keeps::Input0)
      .Cases("MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "LpPool", Keeps::Input0)
      .Cases("BatchNormalization", "LayerNormalization", "InstanceNormalization", "GroupNormalization",
             "RMSNormalization", Keeps::Input0)
      .Cases("ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2", "ReduceLogSumExp", Keeps::Input0)
      .Case("Mul", Keeps::OtherOperand)
      .Case("Div", Keeps::Divisor)
      .Cases("Conv", "ConvTranspose", "MatMul", "Gemm", Keeps::Contraction)
      .Cases("Gather", "GatherElements", "GatherND", Keeps::Indices)
      .Case("Where", Keeps::Condition)
      .Cases("Pow", "Einsum", "Attention", "LSTM", "GRU", "RNN", Keeps::AllInputs)
      .Default(n.op->kind == OpKind::Contraction ? Keeps::AllInputs
               : n.op->kind == OpKind::Pointwise ? Keeps::Input0
                                                  : Keeps::Nothing);
}

bool needs(llvm::ArrayRef<bool> needsGrad, unsigned i) { return i < needsGrad.size() && needsGrad[i]; }

uint64_t bytesOfStatic(const Value *v, unsigned width) {
  if (!v || !v->type.isTensor())
    return 0;
  auto numel = v->type.shape.numElements();
  return numel && *numel > 0 ? static_cast<uint64_t>(*numel) * width : 0;
}

/// Buffers an op saves that are not graph values.
uint64_t extraSaved(const Node &n) {
  const Value *x = n.inputs.empty() ? nullptr : n.inputs[0];
  if (n.opType == "MaxPool" && (n.outputs.size() < 2 || !n.outputs[1]))
    return bytesOfStatic(n.outputs.empty() ? nullptr : n.outputs[0], 8);  // int64 indices
  if (n.opType == "BatchNormalization" || n.opType == "InstanceNormalization" || n.opType == "GroupNormalization") {
    auto c = x ? x->type.staticDim(1) : std::nullopt;
    return c && *c > 0 ? static_cast<uint64_t>(*c) * 8 : 0;  // fp32 mean and inverse std
  }
  if (n.opType == "LayerNormalization" || n.opType == "RMSNormalization") {
    // fp32 mean and rstd per normalised row.
    auto numel = x ? x->type.shape.numElements() : std::nullopt;
    int64_t axis = n.attrInt("axis").value_or(-1);
    int64_t rank = x && x->type.shape.rankKnown ? static_cast<int64_t>(x->type.shape.dims.size()) : 0;
    if (!numel || rank == 0)
      return 0;
    if (axis < 0)
      axis += rank;
    int64_t row = 1;
    for (int64_t d = axis; d < rank; ++d) {
      auto s = x->type.staticDim(static_cast<int>(d));
      if (!s || *s <= 0)
        return 0;
      row *= *s;
    }
    return static_cast<uint64_t>(*numel / row) * 8;
  }
  return 0;
}

}  // namespace

SavedForBackward savedForBackward(const Node &n, llvm::ArrayRef<bool> needsGrad) {
  SavedForBackward s;
  bool any = false;
  for (bool b : needsGrad)
    any |= b;
  if (!any)
    return s;
  // The FX frontend read the joint graph: trust it over the rules.
  if (!n.outputSavedForBackward.empty()) {
    for (unsigned o = 0; o < n.outputSavedForBackward.size(); ++o)
      if (n.outputSavedForBackward[o])
        s.outputs.push_back(o);
    return s;
  }
  auto keepIn = [&](unsigned i) {
    if (i < n.inputs.size() && n.inputs[i])
      s.inputs.push_back(i);
  };
  switch (keepsOf(n)) {
  case Keeps::Nothing:
    break;
  case Keeps::Result:
    s.outputs.push_back(0);
    break;
  case Keeps::Input0:
    keepIn(0);
    break;
  case Keeps::OtherOperand:
  case Keeps::Contraction:
    if (needs(needsGrad, 1))
      keepIn(0);
    if (needs(needsGrad, 0))
      keepIn(1);
    break;
  case Keeps::Divisor:
    if (needs(needsGrad, 1))
      keepIn(0);
    keepIn(1);
    break;
  case Keeps::Indices:
    keepIn(1);
    break;
  case Keeps::Condition:
    keepIn(0);
    break;
  case Keeps::AllInputs:
    for (unsigned i = 0; i < n.inputs.size(); ++i)
      keepIn(i);
    break;
  }
  if (n.opType == "MaxPool" && n.outputs.size() > 1 && n.outputs[1])
    s.outputs.push_back(1);
  if (n.opType == "Dropout" && n.outputs.size() > 1 && n.outputs[1])
    s.outputs.push_back(1);  // the mask
  s.extraBytes = extraSaved(n);
  return s;
}

bool gradPassesThrough(const Node &n, unsigned input) {
  if (input >= n.inputs.size() || !n.inputs[input] || n.outputs.empty() || !n.outputs[0])
    return false;
  auto sameSize = [&] {
    auto a = n.inputs[input]->type.shape.numElements();
    auto b = n.outputs[0]->type.shape.numElements();
    return a && b && *a == *b;
  };
  if (n.opType == "Add" || (n.opType == "Sub" && input == 0))
    return sameSize();
  // The input's gradient is a view (or a slice) of the output's.
  if (input == 0 && (isViewOp(n) || n.opType == "Transpose" || n.opType == "Dropout"))
    return true;
  return n.opType == "Concat";
}

}  // namespace graphlint
