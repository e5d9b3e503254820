// Value-level facts shared by every consumer (include/graphlint/ir/ValueFacts.h).
#include "graphlint/ir/ValueFacts.h"

#include <llvm/ADT/StringSet.h>

#include "graphlint/ir/Graph.h"
#include "graphlint/ir/OpRegistry.h"

#include <algorithm>
#include <limits>
#include <string>

namespace graphlint {

const Value *captureOrigin(const Value *v) {
  while (v && v->kind == Value::Kind::OuterScope && v->outer)
    v = v->outer;
  return v;
}

bool isViewOp(const Node &n) { return n.op && n.op->viewOfInput0; }

bool isLayoutOpName(llvm::StringRef op) {
  static const llvm::StringSet<> kLayout = {
      "Reshape", "Expand",  "Unsqueeze", "Squeeze", "Transpose", "Slice",  "Flatten", "Identity",
      "view",    "_unsafe_view", "reshape", "expand", "unsqueeze", "squeeze", "transpose", "permute",
      "slice",   "select",  "alias",     "t",       "detach",    "flatten"};
  return kLayout.count(op) > 0;
}

bool isFreeView(const Node &n) { return isViewOp(n) && n.op->kind == OpKind::ShapeOnly; }

bool isAtenConversion(const Node &n) { return n.op && n.op->conversion == ConversionKind::Convert; }

bool isConversion(const Node &n) { return n.op && n.op->conversion != ConversionKind::None; }

bool isOnnxCast(const Node &n) { return n.op && n.op->conversion == ConversionKind::Cast; }

bool isInplaceOp(const Node &n) { return n.op && n.op->inplace; }

std::optional<llvm::SmallVector<int64_t, 4>> viewStrides(llvm::ArrayRef<int64_t> shape,
                                                         llvm::ArrayRef<int64_t> strides,
                                                         llvm::ArrayRef<int64_t> newShape) {
  if (shape.size() != strides.size())
    return std::nullopt;
  // A damaged file's sizes and strides: any product that overflows, or a
  // negative size, makes the layout unknown.
  auto mul = [](int64_t a, int64_t b, int64_t &out) { return !__builtin_mul_overflow(a, b, &out); };
  int64_t numel = 1;
  for (int64_t d : shape)
    if (d < 0 || !mul(numel, d, numel))
      return std::nullopt;
  for (int64_t d : newShape)
    if (d < 0)
      return std::nullopt;
  if (numel == 0 || shape.empty())
    return contiguousStrides(newShape);  // nothing to lay out, or one element
  // From the innermost dim out: old dims whose strides chain (stride[d-1] ==
  // stride[d] * size[d]) form one contiguous chunk; the new dims must tile
  // each chunk exactly, so no new dim straddles two chunks, and each new dim
  // steps through its chunk from the chunk's innermost stride.
  llvm::SmallVector<int64_t, 4> out(newShape.size(), 1);
  auto nd = static_cast<int64_t>(newShape.size()) - 1;
  int64_t chunkNumel = 1, viewNumel = 1, chunkStride = strides.back();
  for (auto d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    chunkNumel *= shape[static_cast<size_t>(d)];  // at most numel
    int64_t chunkSpan = 0;
    if (!mul(chunkNumel, chunkStride, chunkSpan))
      return std::nullopt;
    bool chunkEnds = d == 0 || (shape[static_cast<size_t>(d - 1)] != 1 && strides[static_cast<size_t>(d - 1)] != chunkSpan);
    if (!chunkEnds)
      continue;
    while (nd >= 0 && (viewNumel < chunkNumel || newShape[static_cast<size_t>(nd)] == 1)) {
      if (!mul(viewNumel, chunkStride, out[static_cast<size_t>(nd)]) ||
          !mul(viewNumel, newShape[static_cast<size_t>(nd)], viewNumel))
        return std::nullopt;
      --nd;
    }
    if (viewNumel != chunkNumel)
      return std::nullopt;
    if (d > 0) {
      chunkStride = strides[static_cast<size_t>(d - 1)];
      chunkNumel = viewNumel = 1;
    }
  }
  if (nd != -1)
    return std::nullopt;
  return out;
}

bool stridesAllowView(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> strides,
                      llvm::ArrayRef<int64_t> newShape) {
  return shape.size() != strides.size() || viewStrides(shape, strides, newShape).has_value();
}

llvm::SmallVector<int64_t, 4> denseStrides(llvm::ArrayRef<int64_t> dims, llvm::ArrayRef<int64_t> strides) {
  if (strides.size() != dims.size())
    return contiguousStrides(dims);
  llvm::SmallVector<size_t, 4> order;
  for (size_t d = 0; d < dims.size(); ++d)
    order.push_back(d);
  // Outermost first: the larger stride, and among equal ones the earlier dim.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return strides[a] > strides[b]; });
  llvm::SmallVector<int64_t, 4> out(dims.size(), 1);
  int64_t running = 1;
  for (size_t k = order.size(); k-- > 0;) {
    out[order[k]] = running;
    if (__builtin_mul_overflow(running, std::max<int64_t>(dims[order[k]], 1), &running))
      running = std::numeric_limits<int64_t>::max();
  }
  return out;
}

llvm::SmallVector<int64_t, 4> contiguousStrides(llvm::ArrayRef<int64_t> shape) {
  llvm::SmallVector<int64_t, 4> out(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    if (__builtin_mul_overflow(out[d], std::max<int64_t>(shape[d], 1), &out[d - 1]))
      out[d - 1] = std::numeric_limits<int64_t>::max();  // a damaged size: the checked products above give up
  return out;
}

llvm::SmallVector<std::pair<unsigned, int64_t>, 2> matmulOperandCopies(llvm::ArrayRef<int64_t> dims0,
                                                                       llvm::ArrayRef<int64_t> strides0,
                                                                       llvm::ArrayRef<int64_t> dims1,
                                                                       llvm::ArrayRef<int64_t> strides1) {
  llvm::SmallVector<std::pair<unsigned, int64_t>, 2> out;
  llvm::ArrayRef<int64_t> dims[2] = {dims0, dims1}, strides[2] = {strides0, strides1};
  for (int i = 0; i < 2; ++i)
    if (dims[i].size() < 2 || strides[i].size() != dims[i].size())
      return out;  // 1-d operands and unknown strides: not judged
  if (dims[0].size() < 3 && dims[1].size() < 3)
    return out;  // mm
  if (dims[1].size() == 2)
    return out;  // PyTorch folds the batch of operand 0 into mm's rows: no broadcast copy judged here
  size_t batchRank = std::max(dims[0].size(), dims[1].size()) - 2;
  llvm::SmallVector<int64_t, 4> batch(batchRank, 1);
  for (int i = 0; i < 2; ++i)
    for (size_t k = 0; k + 2 < dims[i].size(); ++k) {
      int64_t &b = batch[batchRank - (dims[i].size() - 2) + k];
      b = std::max(b, dims[i][k]);
    }
  int64_t batchNumel = 1, copyNumel = 0;
  for (int64_t b : batch)
    if (b < 0 || __builtin_mul_overflow(batchNumel, b, &batchNumel))
      return out;
  for (unsigned i = 0; i < 2; ++i) {
    // The operand expanded to the batch: missing and size-1 dims broadcast
    // with stride 0.
    llvm::SmallVector<int64_t, 4> shape = batch, st(batchRank, 0);
    size_t lead = batchRank - (dims[i].size() - 2);
    for (size_t k = 0; k + 2 < dims[i].size(); ++k)
      st[lead + k] = dims[i][k] == batch[lead + k] ? strides[i][k] : 0;
    int64_t rows = dims[i][dims[i].size() - 2], cols = dims[i].back();
    shape.append({rows, cols});
    st.append({strides[i][dims[i].size() - 2], strides[i].back()});
    if (__builtin_mul_overflow(batchNumel, rows, &copyNumel) || __builtin_mul_overflow(copyNumel, cols, &copyNumel))
      return {};
    if (!stridesAllowView(shape, st, {batchNumel, rows, cols}))
      out.push_back({i, copyNumel});
  }
  return out;
}

llvm::SmallVector<std::pair<unsigned, int64_t>, 3> attentionMathOperandCopies(
    llvm::ArrayRef<int64_t> qDims, llvm::ArrayRef<int64_t> qStrides, llvm::ArrayRef<int64_t> kDims,
    llvm::ArrayRef<int64_t> kStrides, llvm::ArrayRef<int64_t> vDims, llvm::ArrayRef<int64_t> vStrides) {
  llvm::SmallVector<std::pair<unsigned, int64_t>, 3> out;
  size_t r = qDims.size();
  if (r < 2 || kDims.size() != r || vDims.size() != r || qStrides.size() != r || kStrides.size() != r ||
      vStrides.size() != r)
    return out;
  llvm::SmallVector<int64_t, 4> k(kDims.begin(), kDims.end()), ks(kStrides.begin(), kStrides.end());
  llvm::SmallVector<int64_t, 4> v(vDims.begin(), vDims.end()), vs(vStrides.begin(), vStrides.end());
  auto repeatHeads = [&](llvm::SmallVectorImpl<int64_t> &dims, llvm::SmallVectorImpl<int64_t> &strides) {
    if (r >= 3 && dims[r - 3] != qDims[r - 3]) {
      dims[r - 3] = qDims[r - 3];
      strides = contiguousStrides(dims);
    }
  };
  repeatHeads(k, ks);
  repeatHeads(v, vs);
  std::swap(k[r - 1], k[r - 2]);  // k^T
  std::swap(ks[r - 1], ks[r - 2]);
  for (auto copy : matmulOperandCopies(qDims, denseStrides(qDims, qStrides), k, denseStrides(k, ks)))
    out.push_back(copy);
  llvm::SmallVector<int64_t, 4> scores(qDims.begin(), qDims.end() - 1);
  scores.push_back(k[r - 1]);
  for (auto [i, numel] : matmulOperandCopies(scores, contiguousStrides(scores), v, vs))
    if (i == 1)
      out.push_back({2, numel});
  return out;
}

bool reshapeCopies(const Node &n) { return n.metadataValue("reshape_copies") != nullptr; }

namespace {

// An "I:NUMEL,..." fact of the `.pt2` importer: operand index, element count.
llvm::SmallVector<std::pair<unsigned, int64_t>, 2> operandCounts(const Node &n, llvm::StringRef key) {
  llvm::SmallVector<std::pair<unsigned, int64_t>, 2> out;
  const std::string *fact = n.metadataValue(key);
  if (!fact)
    return out;
  llvm::SmallVector<llvm::StringRef, 2> items;
  llvm::StringRef(*fact).split(items, ',', -1, false);
  for (llvm::StringRef item : items) {
    auto [index, numel] = item.split(':');
    unsigned i = 0;
    int64_t count = 0;
    if (!index.getAsInteger(10, i) && !numel.getAsInteger(10, count) && i < n.inputs.size() && count > 0)
      out.push_back({i, count});
  }
  return out;
}

}  // namespace

llvm::SmallVector<std::pair<unsigned, int64_t>, 2> matmulCopies(const Node &n) {
  return operandCounts(n, "matmul_copies");
}

llvm::SmallVector<std::pair<unsigned, int64_t>, 2> attentionMathCopies(const Node &n) {
  return operandCounts(n, "attention_math_copies");
}

llvm::StringRef dynamoFxTarget(const Node &n) {
  const std::string *fx = n.metadataValue("pkg.torch.onnx.fx_node");
  if (!fx)
    return {};
  llvm::StringRef target = llvm::StringRef(*fx).split("target=").second;
  return target.take_until([](char c) { return c == ']' || c == '('; });
}

const std::string *decomposedAttentionCall(const Node &n) {
  if (!isDefaultDomain(n.domain) || !dynamoFxTarget(n).startswith("torch.ops.aten.scaled_dot_product_attention."))
    return nullptr;
  return n.metadataValue("pkg.torch.onnx.fx_node");
}

namespace {

// The dropout_p an FX node string of a scaled_dot_product_attention call
// records: its fifth argument, or the keyword; 0 when it has neither.
double fxAttentionDropoutP(llvm::StringRef fxNode) {
  // `... = call_function[target=...](args = (%q, %k, %v, %mask, 0.1), kwargs = {...})`
  llvm::StringRef rest = fxNode.split("args = (").second;
  auto [args, kwargs] = rest.split("), kwargs = ");
  llvm::SmallVector<llvm::StringRef, 8> parts;
  args.split(parts, ", ");
  double p;
  if (parts.size() > 4 && !parts[4].trim().getAsDouble(p))
    return p;
  llvm::StringRef kw = kwargs.split("dropout_p: ").second.take_until([](char c) { return c == ',' || c == '}'; });
  if (!kw.empty() && !kw.trim().getAsDouble(p))
    return p;
  return 0.0;
}

}  // namespace

bool attentionDropsOut(const Node &n) {
  if (const std::string *call = decomposedAttentionCall(n))
    return fxAttentionDropoutP(*call) > 0;
  if (n.domain != "aten" || n.atenName() != "scaled_dot_product_attention")
    return false;
  if (numericAttr(n, "dropout_p").value_or(0) > 0)
    return true;
  const std::string *trainingP0 = n.metadataValue("dropout_training_p");
  return !trainingP0 || *trainingP0 != "0";
}

std::optional<double> numericAttr(const Node &n, llvm::StringRef name) {
  const Attribute *a = n.attr(name);
  if (a && a->kind == AttrKind::Float)
    return a->f;
  if (a && a->kind == AttrKind::Int)
    return static_cast<double>(a->i);
  return std::nullopt;
}

std::optional<double> dropoutProbability(const Node &n) { return numericAttr(n, "p"); }

const ConstData *constantPayload(const Value *v) {
  for (unsigned depth = 0; depth < 8; ++depth) {
    v = captureOrigin(v);
    if (!v)
      return nullptr;
    if (v->kind == Value::Kind::Param)
      return v->param && v->param->tensor.data.known ? &v->param->tensor.data : nullptr;
    if (v->kind != Value::Kind::NodeOutput || !v->producer)
      return nullptr;
    const Node &p = *v->producer;
    if (isDefaultDomain(p.domain) && p.opType == "Constant") {
      const Attribute *a = p.attr("value");
      return a && !a->tensors.empty() && a->tensors[0].data.known ? &a->tensors[0].data : nullptr;
    }
    if (!isFreeView(p) || p.inputs.empty())
      return nullptr;
    v = p.inputs[0];
  }
  return nullptr;
}

bool isTrainingOnnxDropout(const Node &n) {
  if (!isDefaultDomain(n.domain) || n.opType != "Dropout" || n.inputs.size() < 3 || !n.inputs[2])
    return false;
  const ConstData *training = constantPayload(n.inputs[2]);
  if (!training || training->ints.size() != 1 || training->ints[0] == 0)
    return false;
  const ConstData *ratio = n.inputs[1] ? constantPayload(n.inputs[1]) : nullptr;
  return !(ratio && ratio->floats.size() == 1 && ratio->floats[0] == 0.0);
}

bool isTrainingOnnxBatchNorm(const Node &n) {
  return isDefaultDomain(n.domain) && n.opType == "BatchNormalization" && n.attrInt("training_mode").value_or(0) != 0;
}

bool isNoopConversion(const Node &n) {
  bool onnxCast = isDefaultDomain(n.domain) && n.opType == "Cast";
  if ((!onnxCast && (n.domain != "aten" || n.opType != "to")) || n.inputs.empty() || !n.inputs[0] ||
      n.outputs.size() != 1 || !n.outputs[0])
    return false;
  const std::string *overload = n.metadataValue("overload");
  if (!onnxCast && (!overload || *overload != "dtype" || n.attrInt("copy").value_or(0) != 0))
    return false;
  const Type &in = n.inputs[0]->type, &out = n.outputs[0]->type;
  return in.isTensor() && out.isTensor() && in.dtype != DType::Undefined && in.dtype == out.dtype;
}

bool isPromotionCast(const Node &n) {
  if (!isDefaultDomain(n.domain) || n.opType != "Cast")
    return false;
  const std::string *fx = n.metadataValue("pkg.torch.onnx.fx_node");
  return fx && llvm::StringRef(*fx).contains("target=torch.ops.prims.convert_element_type.");
}

bool isIdentityDropout(const Node &n) {
  if (n.domain != "aten")
    return false;
  std::string name = n.atenName();
  llvm::StringRef op = name;
  if (op.endswith("_"))
    op = op.drop_back();
  if (op != "dropout" && op != "feature_dropout" && op != "alpha_dropout" && op != "feature_alpha_dropout")
    return false;
  const std::string *trainingP0 = n.metadataValue("dropout_training_p");
  // A graph exported in train() records training's own p (train=True).
  bool zeroIsTrainings = n.metadataValue("dropout_module") || (trainingP0 && *trainingP0 == "0") ||
                         n.attrInt("train").value_or(0) != 0;
  return zeroIsTrainings && dropoutProbability(n) == 0.0;
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
