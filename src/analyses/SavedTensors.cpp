// Per-op facts the memory plan needs about PyTorch autograd: which operands
// and results each op keeps for its backward (after PyTorch's
// tools/autograd/derivatives.yaml), and which input gradients are views of the
// output gradient rather than new buffers. ONNX ops map to the aten op their
// exporter emitted them from (Gemm/MatMul -> addmm/matmul, Relu -> relu, ...).
#include "graphlint/ir/ValueFacts.h"
#include "graphlint/analyses/MemoryPlan.h"

#include "graphlint/ir/DType.h"
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

// The ONNX op whose save rule a PyTorch op follows (derivatives.yaml says the
// same of both): `.pt2` archives and forward-only FX exports carry aten ops
// (conv2d, batch_norm, relu_, max_pool2d, dropout) that a synthesised
// backward must keep the same tensors for. In-place variants save what their
// functional op does. "" when there is no such op.
llvm::StringRef ruleName(const Node &n) {
  if (isDefaultDomain(n.domain))
    return n.opType;
  if (n.domain != "aten")
    return "";
  llvm::StringRef op = n.opType;
  if (n.op && n.op->inplace)
    op = op.drop_back();
  return llvm::StringSwitch<llvm::StringRef>(op)
      .Case("relu", "Relu").Case("sigmoid", "Sigmoid").Case("tanh", "Tanh").Case("exp", "Exp")
      .Cases("softmax", "_softmax", "Softmax").Cases("log_softmax", "_log_softmax", "LogSoftmax")
      .Case("sqrt", "Sqrt").Case("rsqrt", "Sqrt").Case("reciprocal", "Reciprocal").Case("elu", "Elu")
      .Cases("exp2", "expm1", "Exp").Case("tan", "Tan").Case("neg", "Neg").Cases("trunc", "frac", "Floor")
      .Case("erf", "Erf").Case("log", "Log").Case("sin", "Sin").Case("cos", "Cos").Case("abs", "Abs")
      .Cases("gelu", "silu", "Gelu")  // both keep their input
      .Case("hardswish", "HardSwish").Case("hardsigmoid", "HardSigmoid")
      .Cases("clamp", "hardtanh", "relu6", "Clip").Case("leaky_relu", "LeakyRelu").Case("softplus", "Softplus")
      .Case("mish", "Mish")
      .Cases("max_pool1d", "max_pool2d", "max_pool3d", "max_pool2d_with_indices", "MaxPool")
      .Cases("avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool2d", "AveragePool")
      .Cases("batch_norm", "native_batch_norm", "_native_batch_norm_legit", "BatchNormalization")
      .Cases("layer_norm", "native_layer_norm", "LayerNormalization")
      .Cases("group_norm", "native_group_norm", "GroupNormalization")
      .Case("instance_norm", "InstanceNormalization").Case("rms_norm", "RMSNormalization")
      .Case("mul", "Mul").Case("div", "Div").Case("pow", "Pow")
      .Cases("embedding", "index_select", "Gather").Case("where", "Where")
      .Cases("nll_loss", "nll_loss_forward", "NegativeLogLikelihoodLoss")
      .Case("add", "Add").Case("sub", "Sub").Case("cat", "Concat")
      .Cases("matmul", "mm", "bmm", "MatMul")  // each operand's gradient needs the other
      .Cases("dropout", "native_dropout", "Dropout")
      // Gradients that need nothing saved: conversions and copies pass the
      // gradient back, fills and comparisons have none, steps have zero.
      .Cases("to", "_to_copy", "type_as", "Cast").Cases("clone", "contiguous", "alias", "detach", "Identity")
      .Cases("full_like", "zeros_like", "ones_like", "empty_like", "ConstantOfShape")
      .Cases("new_ones", "new_zeros", "new_full", "new_empty", "ConstantOfShape")
      .Cases("eq", "ne", "Equal").Case("lt", "Less").Case("gt", "Greater").Case("le", "LessOrEqual")
      .Case("ge", "GreaterOrEqual").Cases("logical_not", "bitwise_not", "Not").Cases("__and__", "logical_and", "And")
      .Cases("__or__", "logical_or", "Or").Case("sign", "Sign").Case("floor", "Floor").Case("ceil", "Ceil")
      .Case("round", "Round")
      .Default("");
}

Keeps keepsOf(const Node &n, llvm::StringRef rule) {
  if (!isDefaultDomain(n.domain) && rule.empty() && n.op->kind == OpKind::Contraction)
    return Keeps::AllInputs;
  if (rule == "Dropout")  // native_dropout_backward(grad, mask, scale): the mask only (extraSaved); inference: the identity
    return Keeps::Nothing;
  if (rule == "SoftmaxCrossEntropyLoss")
    return Keeps::Indices;  // nll_loss keeps the labels; log_softmax its result (extraSaved)
  return llvm::StringSwitch<Keeps>(rule)
      .Cases("Relu", "Sigmoid", "Tanh", "Exp", "Softmax", "LogSoftmax", Keeps::Result)
      .Cases("Sqrt", "Reciprocal", "Elu", "Selu", "Tan", Keeps::Result)
      .Cases("Erf", "Log", "Sin", "Cos", "Abs", "Gelu", "HardSwish", "HardSigmoid", "Clip", Keeps::Input0)
      .Cases("LeakyRelu", "Softplus", "Mish", "Celu", "PRelu", "ThresholdedRelu", "Atan", "Asin", Keeps::Input0)
      .Cases("MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "LpPool", Keeps::Input0)
      .Cases("BatchNormalization", "LayerNormalization", "InstanceNormalization", "GroupNormalization",
             "RMSNormalization", Keeps::Input0)
      .Cases("ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2", "ReduceLogSumExp", Keeps::Input0)
      .Cases("Cast", "CastLike", "Identity", "ConstantOfShape", "Equal", "Less", "Greater", Keeps::Nothing)
      .Cases("LessOrEqual", "GreaterOrEqual", "Not", "And", "Or", "Xor", Keeps::Nothing)
      .Cases("Sign", "Floor", "Ceil", "Round", "Neg", Keeps::Nothing)
      .Case("Mul", Keeps::OtherOperand)
      .Case("Div", Keeps::Divisor)
      .Cases("Conv", "ConvTranspose", "MatMul", "Gemm", Keeps::Contraction)
      .Cases("Gather", "GatherElements", "GatherND", "NegativeLogLikelihoodLoss", Keeps::Indices)
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

}  // namespace

const Value *droppedIndicesOf(const Node &n) {
  const Value *x = n.inputs.empty() ? nullptr : n.inputs[0];
  const Value *y = n.outputs.empty() ? nullptr : n.outputs[0];
  if (!x || !y || (n.outputs.size() > 1 && n.outputs[1]) || ruleName(n) != "MaxPool")
    return nullptr;
  // max_pool1d (rank 3) has an index-free kernel; max_pool2d and max_pool3d
  // are composites over max_pool{2,3}d_with_indices.
  size_t rank = x->type.shape.rank();
  return rank == 4 || rank == 5 ? y : nullptr;
}

const Value *fusedBatchNormOutput(const Node &n) {
  if (n.opType != "Conv" || !isDefaultDomain(n.domain) || n.outputs.empty() || !n.outputs[0])
    return nullptr;
  llvm::StringRef target = dynamoFxTarget(n);
  return target.startswith("torch.ops.aten._native_batch_norm_legit") ||
                 target.startswith("torch.ops.aten.native_batch_norm") ||
                 target.startswith("torch.ops.aten.batch_norm") ||
                 target.startswith("torch.ops.aten.cudnn_batch_norm")
             ? n.outputs[0]
             : nullptr;
}

namespace {

/// Buffers an op saves that are not graph values.
uint64_t extraSaved(const Node &n, llvm::StringRef rule) {
  const Value *x = n.inputs.empty() ? nullptr : n.inputs[0];
  const Value *y = n.outputs.empty() ? nullptr : n.outputs[0];
  bool secondOutput = n.outputs.size() > 1 && n.outputs[1];
  if (rule == "MaxPool" && !secondOutput)
    return bytesOfStatic(y, 8);  // int64 indices
  // A dropout without its mask output (aten's dropout, an ai.onnx Dropout in
  // training mode): the mask CUDA's fused kernel keeps, one byte per element
  // (native_dropout's bool mask).
  if (rule == "Dropout" && !secondOutput &&
      ((n.domain == "aten" && !isIdentityDropout(n)) || isTrainingOnnxDropout(n)))
    return bytesOfStatic(y, 1);
  if (rule == "BatchNormalization" || rule == "InstanceNormalization" || rule == "GroupNormalization" ||
      fusedBatchNormOutput(n)) {
    auto c = rule == "Conv" ? (y ? y->type.staticDim(1) : std::nullopt) : (x ? x->type.staticDim(1) : std::nullopt);
    return c && *c > 0 ? static_cast<uint64_t>(*c) * 8 : 0;  // fp32 mean and inverse std
  }
  if (rule == "LayerNormalization" || rule == "RMSNormalization") {
    // fp32 mean and rstd per normalised row.
    auto numel = x ? x->type.shape.numElements() : std::nullopt;
    int64_t axis = n.attrInt("axis").value_or(-1);
    int64_t rank = x && x->type.shape.rankKnown ? static_cast<int64_t>(x->type.shape.dims.size()) : 0;
    if (!numel || rank == 0)
      return 0;
    if (const Attribute *shape = n.attr("normalized_shape"); shape && !shape->ints.empty())
      axis = rank - static_cast<int64_t>(shape->ints.size());  // aten names the normalised trailing dims
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
  llvm::StringRef rule = ruleName(n);
  switch (keepsOf(n, rule)) {
  case Keeps::Nothing:
    break;
  case Keeps::Result:
    s.outputs.push_back(0);
    break;
  case Keeps::Input0:
    // An in-place variant overwrites what its derivative reads: autograd
    // saves a copy of the original (hardswish_, silu_; relu_ reads its
    // result) and not the tensor itself, whose storage, the result now, lives
    // only as long as what reads the result keeps it.
    if (n.op && n.op->inplace && !n.inputs.empty() && n.inputs[0])
      s.extraBytes += bytesOfStatic(n.inputs[0], std::max(1u, dtypeBits(n.inputs[0]->type.dtype) / 8));
    else
      keepIn(0);
    break;
  case Keeps::OtherOperand:
  case Keeps::Contraction: {
    // A batched matmul's operand that eager copies for its bmm: the copy is
    // what autograd keeps, a new buffer, and the operand may die.
    auto copies = matmulCopies(n);
    auto keepOrCopy = [&](unsigned i) {
      auto c = llvm::find_if(copies, [&](const auto &p) { return p.first == i; });
      if (c == copies.end() || !n.inputs[i])
        return keepIn(i);
      s.copies.push_back(*c);
    };
    if (needs(needsGrad, 1))
      keepOrCopy(0);
    if (needs(needsGrad, 0))
      keepOrCopy(1);
    break;
  }
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
  if ((rule == "MaxPool" || rule == "Dropout" || rule == "SoftmaxCrossEntropyLoss") && n.outputs.size() > 1 &&
      n.outputs[1])
    s.outputs.push_back(1);  // the indices, the mask, the log-probabilities
  s.extraBytes += extraSaved(n, rule);
  // PyTorch's cross_entropy is log_softmax, which keeps its logits-sized
  // result, then nll_loss: the log-probabilities unless the graph outputs them.
  if (rule == "SoftmaxCrossEntropyLoss" && !(n.outputs.size() > 1 && n.outputs[1]) && !n.inputs.empty())
    s.extraLike = n.inputs[0];
  // The batch norm fused into a Conv keeps the convolution's output.
  if (const Value *convOut = fusedBatchNormOutput(n))
    s.extraLike = convOut;
  return s;
}

llvm::SmallVector<const Value *, 2> backwardTemporariesLike(const Node &n) {
  if (const Value *convOut = fusedBatchNormOutput(n))
    return {convOut};  // the batch norm's gradient of its input
  llvm::StringRef rule = ruleName(n);
  if (rule == "SoftmaxCrossEntropyLoss" && !n.inputs.empty() && n.inputs[0])
    return {n.inputs[0]};
  // pow(x, c) of a scalar c (RMSNorm's x.pow(2)): autograd's pow_backward is
  // grad * (c * x.pow(c - 1)), two x-sized temporaries live while the
  // gradient is made.
  if (rule == "Pow" && !n.inputs.empty() && n.inputs[0] && n.inputs[0]->type.isTensor() && n.inputs[0]->type.shape.rankKnown) {
    const Value *e = n.inputs.size() > 1 ? n.inputs[1] : nullptr;
    std::optional<int64_t> en = e ? e->type.shape.numElements() : std::optional<int64_t>(1);
    if (en == 1 && n.inputs[0]->type.shape.numElements() != std::optional<int64_t>(1))
      return {n.inputs[0], n.inputs[0]};
  }
  return {};
}

bool gradPassesThrough(const Node &n, unsigned input) {
  if (input >= n.inputs.size() || !n.inputs[input] || n.outputs.empty() || !n.outputs[0])
    return false;
  // Autograd casts a gradient to its input's dtype (the engine's
  // validate_outputs): a bfloat16 operand of a promoting add gets a new buffer.
  if (n.inputs[input]->type.dtype != n.outputs[0]->type.dtype)
    return false;
  auto sameSize = [&] {
    auto a = n.inputs[input]->type.shape.numElements();
    auto b = n.outputs[0]->type.shape.numElements();
    return a && b && *a == *b;
  };
  llvm::StringRef rule = ruleName(n);
  if (rule == "Add" || (rule == "Sub" && input == 0))
    return sameSize();
  // The input's gradient is a view (or a slice) of the output's: a view of
  // as many elements (a select, slice or narrow of fewer has a backward that
  // makes an input-sized buffer of zeros, an expand's sums into a new one).
  // ONNX's inference Dropout only: a training dropout's backward multiplies
  // by the mask; a PyTorch dropout that returns its input itself (p = 0)
  // records no autograd node, so the gradient reaching its output is its
  // input's.
  if (input == 0 && (((isViewOp(n) || rule == "Transpose") && sameSize()) ||
                     (n.opType == "Dropout" && !isTrainingOnnxDropout(n)) || isIdentityDropout(n)))
    return true;
  return rule == "Concat";
}

}  // namespace graphlint
