#include "graphlint/ir/OpRegistry.h"

#include <onnx/defs/schema.h>

#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/StringSwitch.h>

#include <deque>
#include <mutex>
#include <string>

namespace graphlint {

std::string_view opKindName(OpKind k) {
  switch (k) {
  case OpKind::Pointwise: return "pointwise";
  case OpKind::Broadcast: return "broadcast";
  case OpKind::Injective: return "injective";
  case OpKind::Reduction: return "reduction";
  case OpKind::Contraction: return "contraction";
  case OpKind::ShapeOnly: return "shape-only";
  case OpKind::ControlFlow: return "control-flow";
  case OpKind::DataDependentOutput: return "data-dependent-output";
  case OpKind::Collective: return "collective";
  case OpKind::Unknown: return "unknown";
  }
  return "unknown";
}

namespace {

// Sync: a device-to-host sync for a data-dependent output size; SyncValue:
// one that hands a tensor value to the host.
enum Flag : unsigned { None = 0, View = 1, Sync = 2, SyncValue = 4 };

struct TableEntry {
  const char *domain;
  const char *name;
  OpKind kind;
  unsigned flags;
  /// First opset at which the op's shape semantics differ from ONNX 1.12's
  /// schema (0 = never). Ops the installed ONNX lacks entirely use 1.
  int changedAt;
};

using K = OpKind;

// Reviewed classification of the ops graphlint knows. ONNX ops absent from the
// installed ONNX (newer opsets) are listed here so they are not "unknown".
const TableEntry kTable[] = {
    // Pointwise (unary or same-shape) ops.
    {"", "Abs", K::Pointwise, None, 0}, {"", "Acos", K::Pointwise, None, 0},
    {"", "Acosh", K::Pointwise, None, 0}, {"", "Asin", K::Pointwise, None, 0},
    {"", "Asinh", K::Pointwise, None, 0}, {"", "Atan", K::Pointwise, None, 0},
    {"", "Atanh", K::Pointwise, None, 0}, {"", "Cast", K::Pointwise, None, 0},
    {"", "CastLike", K::Pointwise, None, 0}, {"", "Ceil", K::Pointwise, None, 0},
    {"", "Celu", K::Pointwise, None, 0}, {"", "Clip", K::Pointwise, None, 0},
    {"", "Cos", K::Pointwise, None, 0}, {"", "Cosh", K::Pointwise, None, 0},
    {"", "Elu", K::Pointwise, None, 0}, {"", "Erf", K::Pointwise, None, 0},
    {"", "Exp", K::Pointwise, None, 0}, {"", "Floor", K::Pointwise, None, 0},
    {"", "HardSigmoid", K::Pointwise, None, 0}, {"", "HardSwish", K::Pointwise, None, 0},
    {"", "IsInf", K::Pointwise, None, 0}, {"", "IsNaN", K::Pointwise, None, 0},
    {"", "LeakyRelu", K::Pointwise, None, 0}, {"", "Log", K::Pointwise, None, 0},
    {"", "Neg", K::Pointwise, None, 0}, {"", "Not", K::Pointwise, None, 0},
    {"", "Reciprocal", K::Pointwise, None, 0}, {"", "Relu", K::Pointwise, None, 0},
    {"", "Round", K::Pointwise, None, 0}, {"", "Selu", K::Pointwise, None, 0},
    {"", "Shrink", K::Pointwise, None, 0}, {"", "Sigmoid", K::Pointwise, None, 0},
    {"", "Sign", K::Pointwise, None, 0}, {"", "Sin", K::Pointwise, None, 0},
    {"", "Sinh", K::Pointwise, None, 0}, {"", "Softplus", K::Pointwise, None, 0},
    {"", "Softsign", K::Pointwise, None, 0}, {"", "Sqrt", K::Pointwise, None, 0},
    {"", "Tan", K::Pointwise, None, 0}, {"", "Tanh", K::Pointwise, None, 0},
    {"", "ThresholdedRelu", K::Pointwise, None, 0}, {"", "Dropout", K::Pointwise, None, 0},
    {"", "Bernoulli", K::Pointwise, None, 0}, {"", "RandomNormalLike", K::Pointwise, None, 0},
    {"", "RandomUniformLike", K::Pointwise, None, 0}, {"", "RandomNormal", K::Pointwise, None, 0},
    {"", "RandomUniform", K::Pointwise, None, 0}, {"", "EyeLike", K::Pointwise, None, 0},
    {"", "ConstantOfShape", K::Pointwise, None, 20}, {"", "Range", K::Pointwise, None, 0},
    {"", "QuantizeLinear", K::Pointwise, None, 19}, {"", "DequantizeLinear", K::Pointwise, None, 19},
    {"", "DynamicQuantizeLinear", K::Reduction, None, 0},
    {"", "Mish", K::Pointwise, None, 18}, {"", "Gelu", K::Pointwise, None, 20},
    {"", "Swish", K::Pointwise, None, 24}, {"", "BitwiseNot", K::Pointwise, None, 18},
    {"", "Trilu", K::Pointwise, None, 0}, {"", "BatchNormalization", K::Broadcast, None, 0},
    // Broadcasting elementwise ops.
    {"", "Add", K::Broadcast, None, 0}, {"", "Sub", K::Broadcast, None, 0},
    {"", "Mul", K::Broadcast, None, 0}, {"", "Div", K::Broadcast, None, 0},
    {"", "Pow", K::Broadcast, None, 0}, {"", "Mod", K::Broadcast, None, 0},
    {"", "Max", K::Broadcast, None, 0}, {"", "Min", K::Broadcast, None, 0},
    {"", "Mean", K::Broadcast, None, 0}, {"", "Sum", K::Broadcast, None, 0},
    {"", "And", K::Broadcast, None, 0}, {"", "Or", K::Broadcast, None, 0},
    {"", "Xor", K::Broadcast, None, 0}, {"", "Equal", K::Broadcast, None, 0},
    {"", "Greater", K::Broadcast, None, 0}, {"", "GreaterOrEqual", K::Broadcast, None, 0},
    {"", "Less", K::Broadcast, None, 0}, {"", "LessOrEqual", K::Broadcast, None, 0},
    {"", "Where", K::Broadcast, None, 0}, {"", "PRelu", K::Broadcast, None, 0},
    {"", "BitShift", K::Broadcast, None, 0}, {"", "BitwiseAnd", K::Broadcast, None, 18},
    {"", "BitwiseOr", K::Broadcast, None, 18}, {"", "BitwiseXor", K::Broadcast, None, 18},
    {"", "StringConcat", K::Broadcast, None, 20}, {"", "RegexFullMatch", K::Pointwise, None, 20},
    // Data movement.
    {"", "Concat", K::Injective, None, 0}, {"", "Gather", K::Injective, None, 0},
    {"", "GatherElements", K::Injective, None, 0}, {"", "GatherND", K::Injective, None, 0},
    {"", "Slice", K::Injective, None, 0}, {"", "Split", K::Injective, None, 18},
    {"", "Transpose", K::Injective, None, 0}, {"", "Tile", K::Injective, None, 0},
    {"", "Expand", K::Injective, None, 0}, {"", "Pad", K::Injective, None, 18},
    {"", "Resize", K::Injective, None, 18}, {"", "Upsample", K::Injective, None, 0},
    {"", "DepthToSpace", K::Injective, None, 0}, {"", "SpaceToDepth", K::Injective, None, 0},
    {"", "ScatterElements", K::Injective, None, 0}, {"", "ScatterND", K::Injective, None, 0},
    {"", "Scatter", K::Injective, None, 0}, {"", "OneHot", K::Injective, None, 0},
    {"", "ReverseSequence", K::Injective, None, 0}, {"", "GridSample", K::Injective, None, 20},
    {"", "AffineGrid", K::Injective, None, 20}, {"", "CenterCropPad", K::Injective, None, 18},
    {"", "Col2Im", K::Injective, None, 18}, {"", "TensorScatter", K::Injective, None, 24},
    {"", "MaxUnpool", K::Injective, None, 0}, {"", "RoiAlign", K::Injective, None, 0},
    {"", "SequenceConstruct", K::Injective, None, 0}, {"", "SequenceAt", K::Injective, None, 0},
    {"", "SequenceEmpty", K::ShapeOnly, None, 0}, {"", "SequenceErase", K::Injective, None, 0},
    {"", "SequenceInsert", K::Injective, None, 0}, {"", "SequenceLength", K::ShapeOnly, None, 0},
    {"", "SplitToSequence", K::Injective, None, 0}, {"", "ConcatFromSequence", K::Injective, None, 0},
    {"", "Optional", K::ShapeOnly, None, 0}, {"", "OptionalGetElement", K::ShapeOnly, None, 18},
    {"", "OptionalHasElement", K::ShapeOnly, None, 18},
    {"", "StringSplit", K::DataDependentOutput, Sync, 20}, {"", "StringNormalizer", K::Pointwise, None, 0},
    {"", "ImageDecoder", K::DataDependentOutput, Sync, 20},
    // Views and shape queries: no kernel.
    {"", "Reshape", K::ShapeOnly, View, 0}, {"", "Flatten", K::ShapeOnly, View, 0},
    {"", "Squeeze", K::ShapeOnly, View, 0}, {"", "Unsqueeze", K::ShapeOnly, View, 0},
    {"", "Identity", K::ShapeOnly, View, 0}, {"", "Shape", K::ShapeOnly, None, 0},
    {"", "Size", K::ShapeOnly, None, 0}, {"", "Constant", K::ShapeOnly, None, 0},
    // Reductions (incl. normalisations, softmax, pooling, scans over an axis).
    {"", "ArgMax", K::Reduction, None, 0}, {"", "ArgMin", K::Reduction, None, 0},
    {"", "ReduceL1", K::Reduction, None, 18}, {"", "ReduceL2", K::Reduction, None, 18},
    {"", "ReduceLogSum", K::Reduction, None, 18}, {"", "ReduceLogSumExp", K::Reduction, None, 18},
    {"", "ReduceMax", K::Reduction, None, 18}, {"", "ReduceMean", K::Reduction, None, 18},
    {"", "ReduceMin", K::Reduction, None, 18}, {"", "ReduceProd", K::Reduction, None, 18},
    {"", "ReduceSum", K::Reduction, None, 0}, {"", "ReduceSumSquare", K::Reduction, None, 18},
    {"", "Softmax", K::Reduction, None, 0}, {"", "LogSoftmax", K::Reduction, None, 0},
    {"", "Hardmax", K::Reduction, None, 0}, {"", "LayerNormalization", K::Reduction, None, 0},
    {"", "GroupNormalization", K::Reduction, None, 18}, {"", "InstanceNormalization", K::Reduction, None, 0},
    {"", "RMSNormalization", K::Reduction, None, 23}, {"", "LpNormalization", K::Reduction, None, 0},
    {"", "MeanVarianceNormalization", K::Reduction, None, 0}, {"", "LRN", K::Reduction, None, 0},
    {"", "MaxPool", K::Reduction, None, 1}, {"", "AveragePool", K::Reduction, None, 19},
    {"", "LpPool", K::Reduction, None, 18}, {"", "GlobalAveragePool", K::Reduction, None, 0},
    {"", "GlobalMaxPool", K::Reduction, None, 0}, {"", "GlobalLpPool", K::Reduction, None, 0},
    {"", "MaxRoiPool", K::Reduction, None, 0}, {"", "CumSum", K::Reduction, None, 0},
    {"", "TopK", K::Reduction, None, 0}, {"", "SoftmaxCrossEntropyLoss", K::Reduction, None, 0},
    {"", "NegativeLogLikelihoodLoss", K::Reduction, None, 0}, {"", "Det", K::Reduction, None, 0},
    {"", "Multinomial", K::Reduction, None, 0},
    // Contractions.
    {"", "MatMul", K::Contraction, None, 0}, {"", "Gemm", K::Contraction, None, 0},
    {"", "Conv", K::Contraction, None, 0}, {"", "ConvTranspose", K::Contraction, None, 0},
    {"", "ConvInteger", K::Contraction, None, 0}, {"", "MatMulInteger", K::Contraction, None, 0},
    {"", "QLinearConv", K::Contraction, None, 0}, {"", "QLinearMatMul", K::Contraction, None, 0},
    {"", "DeformConv", K::Contraction, None, 19}, {"", "Einsum", K::Contraction, None, 0},
    {"", "LSTM", K::Contraction, None, 0}, {"", "GRU", K::Contraction, None, 0},
    {"", "RNN", K::Contraction, None, 0}, {"", "Attention", K::Contraction, None, 23},
    {"", "RotaryEmbedding", K::Broadcast, None, 23}, {"", "DFT", K::Contraction, None, 20},
    {"", "STFT", K::Contraction, None, 1}, {"", "MelWeightMatrix", K::Pointwise, None, 0},
    {"", "BlackmanWindow", K::Pointwise, None, 0}, {"", "HannWindow", K::Pointwise, None, 0},
    {"", "HammingWindow", K::Pointwise, None, 0}, {"", "TfIdfVectorizer", K::Reduction, None, 0},
    // Newer ONNX ops (opsets 24-28) the installed library does not know.
    {"", "BitCast", K::Pointwise, View, 1}, {"", "SwiGLU", K::Broadcast, None, 1},
    {"", "CumProd", K::Reduction, None, 1}, {"", "FlexAttention", K::Contraction, None, 1},
    {"ai.onnx.preview", "FlexAttention", K::Contraction, None, 1}, {"", "LinearAttention", K::Contraction, None, 1}, {"", "CausalConvWithState", K::Contraction, None, 1},
    // Control flow.
    {"", "If", K::ControlFlow, None, 0}, {"", "Loop", K::ControlFlow, None, 0},
    {"", "Scan", K::ControlFlow, None, 0}, {"", "SequenceMap", K::ControlFlow, None, 0},
    // Data-dependent output shapes: force a device-to-host sync.
    {"", "NonZero", K::DataDependentOutput, Sync, 0}, {"", "Unique", K::DataDependentOutput, Sync, 0},
    {"", "Compress", K::DataDependentOutput, Sync, 0}, {"", "NonMaxSuppression", K::DataDependentOutput, Sync, 0},
    // ONNX Runtime's device copies (inserted by its graph partitioner).
    {"", "MemcpyToHost", K::Injective, None, 1}, {"", "MemcpyFromHost", K::Injective, None, 1},
    {"com.microsoft", "MemcpyToHost", K::Injective, None, 1}, {"com.microsoft", "MemcpyFromHost", K::Injective, None, 1},
    // Collectives (com.microsoft distributed ops).
    {"com.microsoft", "AllReduce", K::Collective, None, 0}, {"com.microsoft", "AllGather", K::Collective, None, 0},
    {"com.microsoft", "AllToAll", K::Collective, None, 0}, {"com.microsoft", "ReduceScatter", K::Collective, None, 0},
    // PyTorch aten ops (FX frontend), without overload; an in-place variant
    // (relu_, add_) is looked up under its functional name.
    {"aten", "abs", K::Pointwise, None, 0}, {"aten", "neg", K::Pointwise, None, 0},
    {"aten", "relu", K::Pointwise, None, 0}, {"aten", "gelu", K::Pointwise, None, 0},
    {"aten", "silu", K::Pointwise, None, 0}, {"aten", "mish", K::Pointwise, None, 0},
    {"aten", "sigmoid", K::Pointwise, None, 0}, {"aten", "tanh", K::Pointwise, None, 0},
    {"aten", "exp", K::Pointwise, None, 0}, {"aten", "exp2", K::Pointwise, None, 0},
    {"aten", "expm1", K::Pointwise, None, 0}, {"aten", "log", K::Pointwise, None, 0},
    {"aten", "log2", K::Pointwise, None, 0}, {"aten", "log10", K::Pointwise, None, 0},
    {"aten", "log1p", K::Pointwise, None, 0}, {"aten", "sqrt", K::Pointwise, None, 0},
    {"aten", "rsqrt", K::Pointwise, None, 0}, {"aten", "sin", K::Pointwise, None, 0},
    {"aten", "cos", K::Pointwise, None, 0}, {"aten", "tan", K::Pointwise, None, 0},
    {"aten", "asin", K::Pointwise, None, 0}, {"aten", "acos", K::Pointwise, None, 0},
    {"aten", "atan", K::Pointwise, None, 0}, {"aten", "sinh", K::Pointwise, None, 0},
    {"aten", "cosh", K::Pointwise, None, 0}, {"aten", "erf", K::Pointwise, None, 0},
    {"aten", "erfc", K::Pointwise, None, 0}, {"aten", "erfinv", K::Pointwise, None, 0},
    {"aten", "reciprocal", K::Pointwise, None, 0}, {"aten", "clamp", K::Pointwise, None, 0},
    {"aten", "clamp_min", K::Pointwise, None, 0}, {"aten", "clamp_max", K::Pointwise, None, 0},
    {"aten", "hardtanh", K::Pointwise, None, 0}, {"aten", "hardswish", K::Pointwise, None, 0},
    {"aten", "hardsigmoid", K::Pointwise, None, 0}, {"aten", "leaky_relu", K::Pointwise, None, 0},
    {"aten", "elu", K::Pointwise, None, 0}, {"aten", "celu", K::Pointwise, None, 0},
    {"aten", "selu", K::Pointwise, None, 0}, {"aten", "softplus", K::Pointwise, None, 0},
    {"aten", "threshold", K::Pointwise, None, 0}, {"aten", "sign", K::Pointwise, None, 0},
    {"aten", "sgn", K::Pointwise, None, 0}, {"aten", "floor", K::Pointwise, None, 0},
    {"aten", "ceil", K::Pointwise, None, 0}, {"aten", "round", K::Pointwise, None, 0},
    {"aten", "trunc", K::Pointwise, None, 0}, {"aten", "frac", K::Pointwise, None, 0},
    {"aten", "logical_not", K::Pointwise, None, 0}, {"aten", "bitwise_not", K::Pointwise, None, 0},
    {"aten", "isnan", K::Pointwise, None, 0}, {"aten", "isinf", K::Pointwise, None, 0},
    {"aten", "isfinite", K::Pointwise, None, 0}, {"aten", "nan_to_num", K::Pointwise, None, 0},
    {"aten", "_to_copy", K::Pointwise, None, 0}, {"aten", "to", K::Pointwise, None, 0},
    {"aten", "type_as", K::Pointwise, None, 0}, {"aten", "clone", K::Pointwise, None, 0},
    {"aten", "contiguous", K::Pointwise, None, 0}, {"aten", "fill", K::Pointwise, None, 0},
    {"aten", "zero", K::Pointwise, None, 0}, {"aten", "tril", K::Pointwise, None, 0},
    {"aten", "triu", K::Pointwise, None, 0}, {"aten", "lift_fresh_copy", K::Pointwise, None, 0},
    {"aten", "ones_like", K::Pointwise, None, 0}, {"aten", "zeros_like", K::Pointwise, None, 0},
    {"aten", "full_like", K::Pointwise, None, 0}, {"aten", "empty_like", K::Pointwise, None, 0},
    {"aten", "arange", K::Pointwise, None, 0}, {"aten", "full", K::Pointwise, None, 0},
    {"aten", "zeros", K::Pointwise, None, 0}, {"aten", "ones", K::Pointwise, None, 0},
    {"aten", "scalar_tensor", K::Pointwise, None, 0}, {"aten", "new_zeros", K::Pointwise, None, 0},
    {"aten", "new_ones", K::Pointwise, None, 0}, {"aten", "new_full", K::Pointwise, None, 0},
    {"aten", "new_empty", K::Pointwise, None, 0}, {"aten", "new_empty_strided", K::Pointwise, None, 0},
    {"aten", "empty_strided", K::Pointwise, None, 0}, {"aten", "linspace", K::Pointwise, None, 0},
    {"aten", "dropout", K::Pointwise, None, 0}, {"aten", "native_dropout", K::Pointwise, None, 0},
    {"aten", "bernoulli", K::Pointwise, None, 0}, {"aten", "rand", K::Pointwise, None, 0},
    {"aten", "randn", K::Pointwise, None, 0}, {"aten", "randint", K::Pointwise, None, 0},
    {"aten", "rand_like", K::Pointwise, None, 0}, {"aten", "randn_like", K::Pointwise, None, 0},
    {"aten", "randint_like", K::Pointwise, None, 0}, {"aten", "normal", K::Pointwise, None, 0},
    {"aten", "uniform", K::Pointwise, None, 0}, {"aten", "exponential", K::Pointwise, None, 0},
    {"aten", "add", K::Broadcast, None, 0}, {"aten", "sub", K::Broadcast, None, 0},
    {"aten", "rsub", K::Broadcast, None, 0}, {"aten", "mul", K::Broadcast, None, 0},
    {"aten", "div", K::Broadcast, None, 0}, {"aten", "true_divide", K::Broadcast, None, 0},
    {"aten", "floor_divide", K::Broadcast, None, 0}, {"aten", "remainder", K::Broadcast, None, 0},
    {"aten", "fmod", K::Broadcast, None, 0}, {"aten", "pow", K::Broadcast, None, 0},
    {"aten", "maximum", K::Broadcast, None, 0}, {"aten", "minimum", K::Broadcast, None, 0},
    {"aten", "where", K::Broadcast, None, 0}, {"aten", "eq", K::Broadcast, None, 0},
    {"aten", "ne", K::Broadcast, None, 0}, {"aten", "lt", K::Broadcast, None, 0},
    {"aten", "le", K::Broadcast, None, 0}, {"aten", "gt", K::Broadcast, None, 0},
    {"aten", "ge", K::Broadcast, None, 0}, {"aten", "logical_and", K::Broadcast, None, 0},
    {"aten", "logical_or", K::Broadcast, None, 0}, {"aten", "logical_xor", K::Broadcast, None, 0},
    {"aten", "bitwise_and", K::Broadcast, None, 0}, {"aten", "bitwise_or", K::Broadcast, None, 0},
    {"aten", "bitwise_xor", K::Broadcast, None, 0}, {"aten", "addcmul", K::Broadcast, None, 0},
    {"aten", "addcdiv", K::Broadcast, None, 0}, {"aten", "lerp", K::Broadcast, None, 0},
    {"aten", "masked_fill", K::Broadcast, None, 0}, {"aten", "copy", K::Broadcast, None, 0},
    {"aten", "atan2", K::Broadcast, None, 0}, {"aten", "hypot", K::Broadcast, None, 0},
    {"aten", "xlogy", K::Broadcast, None, 0}, {"aten", "_native_batch_norm_legit_no_training", K::Broadcast, None, 0},
    {"aten", "threshold_backward", K::Broadcast, None, 0}, {"aten", "gelu_backward", K::Broadcast, None, 0},
    {"aten", "sigmoid_backward", K::Broadcast, None, 0}, {"aten", "tanh_backward", K::Broadcast, None, 0},
    {"aten", "silu_backward", K::Broadcast, None, 0}, {"aten", "mish_backward", K::Broadcast, None, 0},
    {"aten", "hardswish_backward", K::Broadcast, None, 0}, {"aten", "hardsigmoid_backward", K::Broadcast, None, 0},
    {"aten", "leaky_relu_backward", K::Broadcast, None, 0}, {"aten", "hardtanh_backward", K::Broadcast, None, 0},
    {"aten", "elu_backward", K::Broadcast, None, 0}, {"aten", "softplus_backward", K::Broadcast, None, 0},
    {"aten", "native_dropout_backward", K::Broadcast, None, 0},
    {"aten", "cat", K::Injective, None, 0}, {"aten", "stack", K::Injective, None, 0},
    {"aten", "gather", K::Injective, None, 0}, {"aten", "index", K::Injective, None, 0},
    {"aten", "index_select", K::Injective, None, 0}, {"aten", "index_put", K::Injective, None, 0},
    {"aten", "_unsafe_index", K::Injective, None, 0},
    {"aten", "index_add", K::Injective, None, 0}, {"aten", "scatter", K::Injective, None, 0},
    {"aten", "scatter_add", K::Injective, None, 0}, {"aten", "scatter_reduce", K::Injective, None, 0},
    {"aten", "slice_scatter", K::Injective, None, 0}, {"aten", "select_scatter", K::Injective, None, 0},
    {"aten", "diagonal_scatter", K::Injective, None, 0}, {"aten", "as_strided_scatter", K::Injective, None, 0},
    {"aten", "constant_pad_nd", K::Injective, None, 0}, {"aten", "pad", K::Injective, None, 0},
    {"aten", "reflection_pad2d", K::Injective, None, 0}, {"aten", "replication_pad2d", K::Injective, None, 0},
    {"aten", "repeat", K::Injective, None, 0}, {"aten", "flip", K::Injective, None, 0},
    {"aten", "roll", K::Injective, None, 0}, {"aten", "embedding", K::Injective, None, 0},
    {"aten", "slice_backward", K::Injective, None, 0}, {"aten", "select_backward", K::Injective, None, 0},
    {"aten", "index_select_backward", K::Injective, None, 0}, {"aten", "upsample_nearest2d", K::Injective, None, 0},
    {"aten", "upsample_bilinear2d", K::Injective, None, 0},
    {"aten", "upsample_nearest2d_backward", K::Injective, None, 0},
    {"aten", "upsample_bilinear2d_backward", K::Injective, None, 0}, {"aten", "im2col", K::Injective, None, 0},
    {"aten", "col2im", K::Injective, None, 0}, {"aten", "one_hot", K::Injective, None, 0},
    {"aten", "view", K::ShapeOnly, View, 0}, {"aten", "_unsafe_view", K::ShapeOnly, View, 0},
    {"aten", "reshape", K::ShapeOnly, View, 0}, {"aten", "_reshape_alias", K::ShapeOnly, View, 0},
    {"aten", "expand", K::ShapeOnly, View, 0}, {"aten", "expand_as", K::ShapeOnly, View, 0},
    {"aten", "view_as", K::ShapeOnly, View, 0}, {"aten", "permute", K::ShapeOnly, View, 0},
    {"aten", "transpose", K::ShapeOnly, View, 0}, {"aten", "t", K::ShapeOnly, View, 0},
    {"aten", "squeeze", K::ShapeOnly, View, 0}, {"aten", "unsqueeze", K::ShapeOnly, View, 0},
    {"aten", "flatten", K::ShapeOnly, View, 0}, {"aten", "unflatten", K::ShapeOnly, View, 0},
    {"aten", "slice", K::ShapeOnly, View, 0}, {"aten", "select", K::ShapeOnly, View, 0},
    {"aten", "alias", K::ShapeOnly, View, 0}, {"aten", "detach", K::ShapeOnly, View, 0},
    {"aten", "as_strided", K::ShapeOnly, View, 0}, {"aten", "split", K::ShapeOnly, View, 0},
    {"aten", "split_with_sizes", K::ShapeOnly, View, 0}, {"aten", "unbind", K::ShapeOnly, View, 0},
    {"aten", "chunk", K::ShapeOnly, View, 0}, {"aten", "narrow", K::ShapeOnly, View, 0},
    {"aten", "diagonal", K::ShapeOnly, View, 0}, {"aten", "movedim", K::ShapeOnly, View, 0},
    {"aten", "unfold", K::ShapeOnly, View, 0}, {"aten", "lift_fresh", K::ShapeOnly, View, 0},
    {"aten", "sym_size", K::ShapeOnly, None, 0}, {"aten", "sym_stride", K::ShapeOnly, None, 0},
    // torch.export's control flow (torch.ops.higher_order.*): known, not opaque (GL121 reports it).
    {"higher_order", "cond", K::ControlFlow, None, 0}, {"higher_order", "while_loop", K::ControlFlow, None, 0},
    {"aten", "sym_numel", K::ShapeOnly, None, 0}, {"aten", "size", K::ShapeOnly, None, 0},
    {"aten", "stride", K::ShapeOnly, None, 0}, {"aten", "numel", K::ShapeOnly, None, 0},
    {"aten", "is_same_size", K::ShapeOnly, None, 0}, {"aten", "empty", K::ShapeOnly, None, 0},
    {"aten", "_shape_as_tensor", K::ShapeOnly, None, 0},
    {"aten", "sum", K::Reduction, None, 0}, {"aten", "mean", K::Reduction, None, 0},
    {"aten", "amax", K::Reduction, None, 0}, {"aten", "amin", K::Reduction, None, 0},
    {"aten", "max", K::Reduction, None, 0}, {"aten", "min", K::Reduction, None, 0},
    {"aten", "argmax", K::Reduction, None, 0}, {"aten", "argmin", K::Reduction, None, 0},
    {"aten", "prod", K::Reduction, None, 0}, {"aten", "var", K::Reduction, None, 0},
    {"aten", "std", K::Reduction, None, 0}, {"aten", "var_mean", K::Reduction, None, 0},
    {"aten", "std_mean", K::Reduction, None, 0}, {"aten", "norm", K::Reduction, None, 0},
    {"aten", "linalg_vector_norm", K::Reduction, None, 0}, {"aten", "logsumexp", K::Reduction, None, 0},
    {"aten", "any", K::Reduction, None, 0}, {"aten", "all", K::Reduction, None, 0},
    {"aten", "cumsum", K::Reduction, None, 0}, {"aten", "cumprod", K::Reduction, None, 0},
    {"aten", "topk", K::Reduction, None, 0}, {"aten", "sort", K::Reduction, None, 0},
    {"aten", "_softmax", K::Reduction, None, 0}, {"aten", "softmax", K::Reduction, None, 0},
    {"aten", "_log_softmax", K::Reduction, None, 0}, {"aten", "log_softmax", K::Reduction, None, 0},
    {"aten", "_softmax_backward_data", K::Reduction, None, 0},
    {"aten", "_log_softmax_backward_data", K::Reduction, None, 0},
    {"aten", "native_layer_norm", K::Reduction, None, 0},
    {"aten", "native_layer_norm_backward", K::Reduction, None, 0}, {"aten", "layer_norm", K::Reduction, None, 0},
    {"aten", "native_group_norm", K::Reduction, None, 0},
    {"aten", "native_group_norm_backward", K::Reduction, None, 0}, {"aten", "group_norm", K::Reduction, None, 0},
    {"aten", "native_batch_norm", K::Reduction, None, 0},
    {"aten", "native_batch_norm_backward", K::Reduction, None, 0},
    {"aten", "_native_batch_norm_legit", K::Reduction, None, 0}, {"aten", "batch_norm", K::Reduction, None, 0},
    {"aten", "max_pool2d", K::Reduction, None, 0}, {"aten", "max_pool2d_with_indices", K::Reduction, None, 0},
    {"aten", "max_pool2d_with_indices_backward", K::Reduction, None, 0},
    {"aten", "avg_pool2d", K::Reduction, None, 0}, {"aten", "avg_pool2d_backward", K::Reduction, None, 0},
    {"aten", "adaptive_avg_pool2d", K::Reduction, None, 0}, {"aten", "_adaptive_avg_pool2d", K::Reduction, None, 0},
    {"aten", "_adaptive_avg_pool2d_backward", K::Reduction, None, 0},
    {"aten", "adaptive_max_pool2d", K::Reduction, None, 0}, {"aten", "nll_loss_forward", K::Reduction, None, 0},
    {"aten", "nll_loss_backward", K::Reduction, None, 0}, {"aten", "nll_loss", K::Reduction, None, 0},
    {"aten", "cross_entropy_loss", K::Reduction, None, 0}, {"aten", "mse_loss", K::Reduction, None, 0},
    {"aten", "embedding_dense_backward", K::Reduction, None, 0},
    {"aten", "mm", K::Contraction, None, 0}, {"aten", "bmm", K::Contraction, None, 0},
    {"aten", "addmm", K::Contraction, None, 0}, {"aten", "matmul", K::Contraction, None, 0},
    {"aten", "linear", K::Contraction, None, 0}, {"aten", "convolution", K::Contraction, None, 0},
    {"aten", "_convolution", K::Contraction, None, 0}, {"aten", "conv2d", K::Contraction, None, 0},
    {"aten", "conv1d", K::Contraction, None, 0}, {"aten", "conv3d", K::Contraction, None, 0},
    {"aten", "convolution_backward", K::Contraction, None, 0}, {"aten", "baddbmm", K::Contraction, None, 0},
    {"aten", "addbmm", K::Contraction, None, 0}, {"aten", "addmv", K::Contraction, None, 0},
    {"aten", "mv", K::Contraction, None, 0}, {"aten", "dot", K::Contraction, None, 0},
    {"aten", "einsum", K::Contraction, None, 0}, {"aten", "scaled_dot_product_attention", K::Contraction, None, 0},
    {"aten", "_scaled_dot_product_attention", K::Contraction, None, 0},
    {"aten", "_scaled_dot_product_attention_math", K::Contraction, None, 0},
    {"aten", "_scaled_dot_product_flash_attention", K::Contraction, None, 0},
    {"aten", "_scaled_dot_product_efficient_attention", K::Contraction, None, 0},
    {"aten", "_flash_attention_forward", K::Contraction, None, 0},
    {"aten", "_scaled_dot_product_flash_attention_for_cpu", K::Contraction, None, 0},
    {"aten", "_scaled_dot_product_cudnn_attention", K::Contraction, None, 0},
    // Their backward kernels, as a joint graph records them (OpFlops: 2.5x the forward).
    {"aten", "_scaled_dot_product_flash_attention_backward", K::Contraction, None, 0},
    {"aten", "_scaled_dot_product_efficient_attention_backward", K::Contraction, None, 0},
    {"aten", "_scaled_dot_product_flash_attention_for_cpu_backward", K::Contraction, None, 0},
    {"aten", "_scaled_dot_product_cudnn_attention_backward", K::Contraction, None, 0},
    {"aten", "_flash_attention_backward", K::Contraction, None, 0},
    // What Inductor's post-grad passes write (bench/fusion_compare plans that graph).
    {"prims", "_low_memory_max_pool_with_offsets", K::Reduction, None, 0},
    {"prims", "_low_memory_max_pool_offsets_to_indices", K::Pointwise, None, 0},
    {"prims", "iota", K::Pointwise, None, 0}, {"prims", "convert_element_type", K::Pointwise, None, 0}, {"aten", "lstm", K::Contraction, None, 0},
    {"aten", "gru", K::Contraction, None, 0}, {"aten", "_native_multi_head_attention", K::Contraction, None, 0},
    {"aten", "_transformer_encoder_layer_fwd", K::Contraction, None, 0},
    {"aten", "nonzero", K::DataDependentOutput, Sync, 0}, {"aten", "masked_select", K::DataDependentOutput, Sync, 0},
    {"aten", "unique", K::DataDependentOutput, Sync, 0}, {"aten", "_unique", K::DataDependentOutput, Sync, 0},
    {"aten", "_unique2", K::DataDependentOutput, Sync, 0},
    {"aten", "unique_consecutive", K::DataDependentOutput, Sync, 0},
    {"aten", "unique_dim", K::DataDependentOutput, Sync, 0}, {"aten", "argwhere", K::DataDependentOutput, Sync, 0},
    {"aten", "_local_scalar_dense", K::DataDependentOutput, Sync | SyncValue, 0},
    {"aten", "item", K::DataDependentOutput, Sync | SyncValue, 0}, {"aten", "tolist", K::DataDependentOutput, Sync | SyncValue, 0}, {"aten", "numpy", K::DataDependentOutput, Sync | SyncValue, 0},
    {"aten", "repr", K::DataDependentOutput, Sync | SyncValue, 0}, {"aten", "equal", K::DataDependentOutput, Sync | SyncValue, 0},
    {"aten", "is_nonzero", K::DataDependentOutput, Sync | SyncValue, 0},
};

// Every other aten/prims op torch declares (1.13 and 2.x), with a kind read
// off its schema by scripts/gen_aten_ops.py: known, so GL002 is for custom
// ops; the reviewed table above wins where both list a name.
const TableEntry kTorchTable[] = {
#include "../../data/aten_ops.inc"
};

std::string key(llvm::StringRef domain, llvm::StringRef op) {
  return (isDefaultDomain(domain) ? std::string() : domain.str()) + "\x1f" + op.str();
}

}  // namespace

struct OpRegistry::Impl {
  llvm::StringMap<const TableEntry *> table;
  llvm::StringMap<const TableEntry *> torchTable;  // generated from torch's schemas
  mutable std::mutex mu;                  // guards the synthesized entries
  mutable llvm::StringMap<const OpInfo *> cache;
  mutable std::deque<OpInfo> storage;
  mutable std::deque<std::string> names;  // backing for OpInfo string_views
};

OpRegistry::OpRegistry() : impl(new Impl) {
  for (const TableEntry &e : kTable)
    impl->table[key(e.domain, e.name)] = &e;
  for (const TableEntry &e : kTorchTable)
    impl->torchTable[key(e.domain, e.name)] = &e;
}

const OpRegistry &OpRegistry::instance() {
  static const OpRegistry r;
  return r;
}

int64_t OpRegistry::installedMaxOpset(llvm::StringRef domain) const {
  const auto &m = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = m.find(isDefaultDomain(domain) ? std::string() : domain.str());
  return it == m.end() ? 0 : it->second.second;
}

const onnx::OpSchema *OpRegistry::schema(llvm::StringRef domain, llvm::StringRef op, int64_t version) const {
  return onnx::OpSchemaRegistry::Schema(op.str(), static_cast<int>(version),
                                        isDefaultDomain(domain) ? std::string() : domain.str());
}

bool OpRegistry::installedSchemaCurrent(llvm::StringRef domain, llvm::StringRef op, int64_t version) const {
  if (!schema(domain, op, version))
    return false;
  auto it = impl->table.find(key(domain, op));
  if (it == impl->table.end())
    return true;  // unchanged in every newer opset we know of
  int changed = it->second->changedAt;
  if (changed == 1)
    return false;  // the installed inference is wrong at every version (e.g. ceil_mode pooling)
  return changed == 0 || version < changed || version <= installedMaxOpset(domain);
}

namespace {

// PyTorch names an in-place variant with one trailing underscore (relu_,
// _index_put_impl_); dunders (__and__) are operators, not variants.
bool isInplaceVariant(llvm::StringRef op) { return op.size() > 1 && op.endswith("_") && !op.endswith("__"); }

ConversionKind conversionKind(llvm::StringRef domain, llvm::StringRef op) {
  if (isDefaultDomain(domain))
    return op == "Cast" || op == "CastLike" ? ConversionKind::Cast : ConversionKind::None;
  // FX and .pt2 nodes are ("aten", "_to_copy"); ONNX's ATen fallback spells "aten::_to_copy" in a custom domain.
  if (domain != "aten" && !op.consume_front("aten::") && !op.consume_front("aten."))
    return ConversionKind::None;
  return llvm::StringSwitch<ConversionKind>(op.split('.').first)
      .Cases("_to_copy", "to", "type_as", "float", "half", "bfloat16", "double", ConversionKind::Convert)
      .Cases("_autocast_to_reduced_precision", "_autocast_to_full_precision", ConversionKind::Autocast)
      .Default(ConversionKind::None);
}

}  // namespace

// Classifies an op the table does not list from its installed ONNX schema.
static OpKind kindFromSchema(const onnx::OpSchema &s) {
  for (const auto &a : s.attributes())
    if (a.second.type == onnx::AttributeProto::GRAPH || a.second.type == onnx::AttributeProto::GRAPHS)
      return OpKind::ControlFlow;
  std::string doc = s.doc() ? s.doc() : "";
  bool elementwise = doc.find("element-wise") != std::string::npos ||
                     doc.find("elementwise") != std::string::npos;
  if (elementwise)
    return doc.find("broadcast") != std::string::npos ? OpKind::Broadcast : OpKind::Pointwise;
  if (s.Name().rfind("Reduce", 0) == 0)
    return OpKind::Reduction;
  // A known op we cannot place: treat it as a kernel of its own.
  return OpKind::Injective;
}

const OpInfo *OpRegistry::lookup(llvm::StringRef domain, llvm::StringRef op, int64_t version) const {
  std::string k = key(domain, op) + "\x1f" + std::to_string(version);
  std::lock_guard<std::mutex> lock(impl->mu);
  auto hit = impl->cache.find(k);
  if (hit != impl->cache.end())
    return hit->second;
  OpInfo info;
  impl->names.push_back(isDefaultDomain(domain) ? std::string() : domain.str());
  info.domain = impl->names.back();
  impl->names.push_back(op.str());
  info.name = impl->names.back();
  auto find = [](const llvm::StringMap<const TableEntry *> &t, const std::string &k) -> const TableEntry * {
    auto it = t.find(k);
    return it == t.end() ? nullptr : it->second;
  };
  const TableEntry *entry = find(impl->table, key(domain, op));
  info.inplace = domain == "aten" && isInplaceVariant(op);
  if (!entry && info.inplace)
    entry = find(impl->table, key(domain, op.drop_back()));  // in-place variant: relu_ -> relu
  info.conversion = conversionKind(domain, op);
  if (!entry)
    entry = find(impl->torchTable, key(domain, op));
  const onnx::OpSchema *s = schema(domain, op, version);
  if (entry) {
    info.kind = entry->kind;
    info.known = true;
    info.viewOfInput0 = entry->flags & View;
    info.hostSync = entry->flags & (Sync | SyncValue);
    info.syncKind = entry->flags & SyncValue ? HostSyncKind::ReadsValue
                    : entry->flags & Sync    ? HostSyncKind::DataDependentSize
                                             : HostSyncKind::None;
  } else if (s) {
    info.kind = kindFromSchema(*s);
    info.known = true;
  }
  info.schema = s;
  info.schemaCurrent = installedSchemaCurrent(domain, op, version);
  info.newerThanLibrary = version > installedMaxOpset(domain);
  impl->storage.push_back(info);
  const OpInfo *p = &impl->storage.back();
  impl->cache[k] = p;
  return p;
}

}  // namespace graphlint
