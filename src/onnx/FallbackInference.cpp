#include "FallbackInference.h"

#include "FallbackRules.h"
#include "graphlint/ir/OpRegistry.h"

#include <fmt/format.h>

#include <llvm/ADT/StringSwitch.h>

#include <cmath>
#include <map>

namespace graphlint::onnxio {
namespace {

using namespace fallback;


bool reduce(FallbackContext &c) {
  const Type &x = c.inputs[0];
  if (!x.isTensor() || !x.shape.rankKnown)
    return false;
  bool keep = attrIntOr(c.node, "keepdims", 1) != 0;
  bool noop = attrIntOr(c.node, "noop_with_empty_axes", 0) != 0;
  std::optional<std::vector<int64_t>> axes;
  if (c.inputs.size() > 1 && c.inputs[1].kind != TypeKind::Unknown) {
    axes = c.values.size() > 1 ? c.values[1] : std::nullopt;
    if (!axes) {
      if (!keep)
        return false;
      Type o = x;  // rank kept, reduced dims unknown
      for (Dim &d : o.shape.dims)
        d = Dim::unknown();
      c.outputs = {o};
      return true;
    }
  } else if (c.node.attr("axes")) {
    axes = attrInts(c.node, "axes");
  }
  size_t rank = x.shape.rank();
  std::vector<bool> reduced(rank, false);
  if (!axes || axes->empty()) {
    if (noop) {
      c.outputs = {x};
      return true;
    }
    reduced.assign(rank, true);
  } else {
    for (int64_t a : *axes) {
      if (!normAxis(a, rank))
        return false;
      reduced[a] = true;
    }
  }
  Type o = x;
  bool argLike = c.node.opType == "ArgMax" || c.node.opType == "ArgMin";
  if (argLike)
    o.dtype = DType::Int64;
  o.shape.dims.clear();
  for (size_t i = 0; i < rank; ++i) {
    if (!reduced[i])
      o.shape.dims.push_back(x.shape.dims[i]);
    else if (keep)
      o.shape.dims.push_back(Dim::fixed(1));
  }
  c.outputs = {o};
  return true;
}

bool broadcast(FallbackContext &c, std::optional<DType> resultType, size_t dtypeFrom = 0) {
  std::vector<const Shape *> shapes;
  for (const Type &t : c.inputs) {
    if (!t.isTensor() || !t.shape.rankKnown)
      return false;
    shapes.push_back(&t.shape);
  }
  auto s = broadcastShapes(shapes);
  if (!s || dtypeFrom >= c.inputs.size())
    return false;
  c.outputs = {Type::tensor(resultType.value_or(c.inputs[dtypeFrom].dtype), *s)};
  return true;
}

bool resizeWithScales(FallbackContext &c, size_t scalesIndex);

bool resize(FallbackContext &c) {
  if (resizeWithScales(c, 2))
    return true;
  const Type &x = c.inputs[0];
  if (!x.isTensor() || !x.shape.rankKnown)
    return false;
  size_t r = x.shape.rank();
  std::vector<int64_t> axes = attrInts(c.node, "axes");
  if (axes.empty())
    for (size_t i = 0; i < r; ++i)
      axes.push_back(static_cast<int64_t>(i));
  Type o = x;
  if (c.values.size() > 3 && c.values[3] && c.values[3]->size() == axes.size()) {
    const auto &sizes = *c.values[3];
    std::string policy = c.node.attr("keep_aspect_ratio_policy") ? c.node.attr("keep_aspect_ratio_policy")->s : "stretch";
    if (policy != "stretch") {
      double scale = policy == "not_larger" ? 1e300 : 0;
      for (size_t i = 0; i < axes.size(); ++i) {
        int64_t a = axes[i];
        if (!normAxis(a, r) || !x.shape.dims[a].isStatic())
          return false;
        double s = static_cast<double>(sizes[i]) / static_cast<double>(x.shape.dims[a].value);
        scale = policy == "not_larger" ? std::min(scale, s) : std::max(scale, s);
      }
      for (int64_t a : axes) {
        normAxis(a, r);
        o.shape.dims[a] = dimFromDouble(std::round(scale * static_cast<double>(x.shape.dims[a].value)));
      }
    } else {
      for (size_t i = 0; i < axes.size(); ++i) {
        int64_t a = axes[i];
        if (!normAxis(a, r))
          return false;
        o.shape.dims[a] = checkedDim(sizes[i]);
      }
    }
    c.outputs = {o};
    return true;
  }
  for (int64_t a : axes)
    if (normAxis(a, r))
      o.shape.dims[a] = Dim::unknown();
  c.outputs = {o};
  return true;  // scales are floats we do not carry: rank only
}


Dim addDims(const Dim &a, const Dim &b) {
  return a.isStatic() && b.isStatic() ? checkedDim(checkedAdd(a.value, b.value)) : Dim::unknown();
}

Dim divDim(const Dim &a, int64_t b) { return a.isStatic() && b > 0 ? Dim::fixed(a.value / b) : Dim::unknown(); }

// Attention (opset 23+) and FlexAttention: Q/K/V are 4-D [B, heads, seq, head]
// or 3-D [B, seq, heads*head]; optional past K/V extend the key sequence.
bool attention(FallbackContext &c) {
  if (c.inputs.size() < 3)
    return false;
  const Shape &q = c.inputs[0].shape, &k = c.inputs[1].shape, &v = c.inputs[2].shape;
  if (!q.rankKnown || !k.rankKnown || !v.rankKnown || q.rank() != k.rank() || q.rank() != v.rank())
    return false;
  DType dt = c.inputs[0].dtype;
  int64_t qh = attrIntOr(c.node, "q_num_heads", 0), kvh = attrIntOr(c.node, "kv_num_heads", 0);
  Dim batch = q.dims[0], qHeads, qSeq, kvHeads, kvSeq, headK, headV;
  if (q.rank() == 4) {
    qHeads = q.dims[1];
    qSeq = q.dims[2];
    kvHeads = k.dims[1];
    kvSeq = k.dims[2];
    headK = k.dims[3];
    headV = v.dims[3];
  } else if (q.rank() == 3 && qh && kvh) {
    qHeads = Dim::fixed(qh);
    qSeq = q.dims[1];
    kvHeads = Dim::fixed(kvh);
    kvSeq = k.dims[1];
    headK = divDim(k.dims[2], kvh);
    headV = divDim(v.dims[2], kvh);
  } else {
    return false;
  }
  Dim total = kvSeq;
  if (c.inputs.size() > 4 && c.inputs[4].shape.rankKnown && c.inputs[4].shape.rank() == 4)
    total = addDims(c.inputs[4].shape.dims[2], kvSeq);
  auto t4 = [&](Dim a, Dim b, Dim c2, Dim d) {
    Shape s;
    s.rankKnown = true;
    s.dims = {a, b, c2, d};
    return Type::tensor(dt, s);
  };
  Type y = c.inputs[0];
  if (q.rank() == 4) {
    y.shape.dims[3] = headV;
  } else {
    y.shape.dims[2] = headV.isStatic() ? checkedDim(checkedMul(headV.value, qh)) : Dim::unknown();
  }
  c.outputs = {y, t4(batch, kvHeads, total, headK), t4(batch, kvHeads, total, headV), t4(batch, qHeads, qSeq, total)};
  return true;
}

// LinearAttention: output like the query; the recurrent state is
// [B, kv_heads, key head size, value head size].
bool linearAttention(FallbackContext &c) {
  if (c.inputs.size() < 3 || !c.inputs[1].shape.rankKnown || !c.inputs[2].shape.rankKnown)
    return false;
  int64_t kvh = attrIntOr(c.node, "kv_num_heads", 0);
  const Shape &k = c.inputs[1].shape, &v = c.inputs[2].shape;
  Shape state;
  state.rankKnown = true;
  if (k.rank() == 3 && kvh)
    state.dims = {k.dims[0], Dim::fixed(kvh), divDim(k.dims[2], kvh), divDim(v.dims[2], kvh)};
  else if (k.rank() == 4)
    state.dims = {k.dims[0], k.dims[1], k.dims[3], v.dims[3]};
  else
    return false;
  c.outputs = {c.inputs[0], Type::tensor(c.inputs[0].dtype, state)};
  return true;
}

// CausalConvWithState: a depthwise causal conv; the carried state keeps the
// last kernel-1 steps.
bool causalConv(FallbackContext &c) {
  if (c.inputs.size() < 2 || !c.inputs[0].shape.rankKnown || !c.inputs[1].shape.rankKnown ||
      c.inputs[0].shape.rank() < 3)
    return false;
  const Shape &x = c.inputs[0].shape, &w = c.inputs[1].shape;
  Shape state = x;
  const Dim &kernel = w.dims.back();
  state.dims.back() = kernel.isStatic() ? checkedDim(checkedSub(kernel.value, 1)) : Dim::unknown();
  c.outputs = {c.inputs[0], Type::tensor(c.inputs[0].dtype, state)};
  return true;
}

bool bitcast(FallbackContext &c) {
  const Type &x = c.inputs[0];
  DType to = dtypeFromCode(attrIntOr(c.node, "to", 0)).value_or(DType::Undefined);
  if (!x.isTensor() || to == DType::Undefined)
    return false;
  Type o = tensorLike(x, to);
  unsigned from = dtypeBits(x.dtype), bits = dtypeBits(to);
  if (from && bits && from != bits && o.shape.rankKnown) {
    if (from > bits)
      o.shape.dims.push_back(Dim::fixed(from / bits));
    else if (!o.shape.dims.empty())
      o.shape.dims.pop_back();
  }
  c.outputs = {o};
  return true;
}


std::optional<double> scalarOf(const FallbackContext &c, size_t i) {
  if (i < c.floats.size() && c.floats[i] && c.floats[i]->size() == 1)
    return (*c.floats[i])[0];
  if (const auto *v = valuesOf(c, i); v && v->size() == 1)
    return static_cast<double>((*v)[0]);
  return std::nullopt;
}

bool range(FallbackContext &c) {
  auto s = scalarOf(c, 0), l = scalarOf(c, 1), d = scalarOf(c, 2);
  Shape out = unknownDims(1);
  if (s && l && d && *d != 0)
    out.dims[0] = dimFromDouble(std::max(0.0, std::ceil((*l - *s) / *d)));
  c.outputs = {Type::tensor(c.inputs[0].dtype, out)};
  return true;
}

bool oneHot(FallbackContext &c) {
  const Type &idx = c.inputs[0];
  if (!idx.shape.rankKnown || c.inputs.size() < 3)
    return false;
  auto depth = scalarOf(c, 1);
  int64_t axis = attrIntOr(c.node, "axis", -1);
  size_t r = idx.shape.rank() + 1;
  if (!normAxis(axis, r))
    return false;
  Type o = Type::tensor(c.inputs[2].dtype, idx.shape);
  o.shape.dims.insert(o.shape.dims.begin() + axis, depth ? dimFromDouble(*depth) : Dim::unknown());
  c.outputs = {o};
  return true;
}

bool topK(FallbackContext &c) {
  const Type &x = c.inputs[0];
  if (!x.shape.rankKnown)
    return false;
  int64_t axis = attrIntOr(c.node, "axis", -1);
  if (!normAxis(axis, x.shape.rank()))
    return false;
  std::optional<double> k = c.node.attr("k") ? std::optional<double>(attrIntOr(c.node, "k", 0)) : scalarOf(c, 1);
  Type v = x;
  v.shape.dims[axis] = k ? dimFromDouble(*k) : Dim::unknown();
  c.outputs = {v, tensorLike(v, DType::Int64)};
  return true;
}

bool einsum(FallbackContext &c) {
  const Attribute *eq = c.node.attr("equation");
  if (!eq)
    return false;
  std::string e;
  for (char ch : eq->s)
    if (ch != ' ')
      e += ch;
  size_t arrow = e.find("->");
  std::string lhs = e.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t pos = 0;;) {
    size_t comma = lhs.find(',', pos);
    terms.push_back(lhs.substr(pos, comma - pos));
    if (comma == std::string::npos)
      break;
    pos = comma + 1;
  }
  if (terms.size() != c.inputs.size() || e.find("...") != std::string::npos)
    return false;
  std::map<char, Dim> sizes;
  std::map<char, int> count;
  for (size_t t = 0; t < terms.size(); ++t) {
    const Shape &s = c.inputs[t].shape;
    if (!s.rankKnown || s.rank() != terms[t].size())
      return false;
    for (size_t i = 0; i < terms[t].size(); ++i) {
      char l = terms[t][i];
      ++count[l];
      Dim &d = sizes[l];
      if (d.isUnknown() || (d.isStatic() && d.value == 1))
        d = s.dims[i];
    }
  }
  std::string out;
  if (arrow != std::string::npos) {
    out = e.substr(arrow + 2);
  } else {
    for (const auto &[l, n] : count)
      if (n == 1)
        out += l;
  }
  Shape s;
  s.rankKnown = true;
  for (char l : out) {
    if (!sizes.count(l))
      return false;
    s.dims.push_back(sizes[l]);
  }
  c.outputs = {Type::tensor(c.inputs[0].dtype, s)};
  return true;
}

bool stft(FallbackContext &c) {
  const Type &sig = c.inputs[0];
  if (!sig.shape.rankKnown || sig.shape.rank() != 3)
    return false;
  auto step = scalarOf(c, 1);
  std::optional<double> frame = scalarOf(c, 3);
  if (!frame && c.inputs.size() > 2 && c.inputs[2].shape.rankKnown && c.inputs[2].shape.rank() == 1 &&
      c.inputs[2].shape.dims[0].isStatic())
    frame = static_cast<double>(c.inputs[2].shape.dims[0].value);
  Shape out = unknownDims(4);
  out.dims[0] = sig.shape.dims[0];
  out.dims[3] = Dim::fixed(2);
  const Dim &len = sig.shape.dims[1];
  Dim frameDim = frame ? dimFromDouble(*frame) : Dim::unknown();
  Dim stepDim = step ? dimFromDouble(*step) : Dim::unknown();
  if (stepDim.isStatic() && stepDim.value > 0 && frameDim.isStatic() && len.isStatic() && len.value >= frameDim.value)
    out.dims[1] = Dim::fixed((len.value - frameDim.value) / stepDim.value + 1);
  if (frameDim.isStatic())
    out.dims[2] = attrIntOr(c.node, "onesided", 1) ? Dim::fixed(frameDim.value / 2 + 1) : frameDim;
  c.outputs = {Type::tensor(sig.dtype, out)};
  return true;
}

bool window(FallbackContext &c) {
  auto size = scalarOf(c, 0);
  DType dt = dtypeFromCode(attrIntOr(c.node, "output_datatype", 1)).value_or(DType::Float);
  Shape s = unknownDims(1);
  if (size)
    s.dims[0] = dimFromDouble(*size);
  c.outputs = {Type::tensor(dt, s)};
  return true;
}

bool melWeights(FallbackContext &c) {
  auto bins = scalarOf(c, 0), dft = scalarOf(c, 1);
  DType dt = dtypeFromCode(attrIntOr(c.node, "output_datatype", 1)).value_or(DType::Float);
  Shape s = unknownDims(2);
  if (Dim d = dft ? dimFromDouble(*dft) : Dim::unknown(); d.isStatic())
    s.dims[0] = Dim::fixed(d.value / 2 + 1);
  if (bins)
    s.dims[1] = dimFromDouble(*bins);
  c.outputs = {Type::tensor(dt, s)};
  return true;
}

bool resizeWithScales(FallbackContext &c, size_t scalesIndex) {
  const Type &x = c.inputs[0];
  if (!x.shape.rankKnown || scalesIndex >= c.floats.size() || !c.floats[scalesIndex])
    return false;
  const auto &scales = *c.floats[scalesIndex];
  std::vector<int64_t> axes = attrInts(c.node, "axes");
  if (axes.empty())
    for (size_t i = 0; i < x.shape.rank(); ++i)
      axes.push_back(static_cast<int64_t>(i));
  if (scales.size() != axes.size())
    return false;
  Type o = x;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i];
    if (!normAxis(a, x.shape.rank()))
      return false;
    const Dim &d = x.shape.dims[a];
    o.shape.dims[a] = d.isStatic() ? dimFromDouble(std::floor(static_cast<double>(d.value) * scales[i])) : Dim::unknown();
  }
  c.outputs = {o};
  return true;
}

}  // namespace

bool refineType(Type &t, const Type &better) {
  if (better.kind == TypeKind::Unknown)
    return false;
  if (t.kind == TypeKind::Unknown) {
    t = better;
    return true;
  }
  if (!t.isTensor() || !better.isTensor())
    return false;
  bool changed = false;
  if (t.dtype == DType::Undefined && better.dtype != DType::Undefined) {
    t.dtype = better.dtype;
    changed = true;
  }
  if (!t.shape.rankKnown && better.shape.rankKnown) {
    t.shape = better.shape;
    return true;
  }
  if (t.shape.rankKnown && better.shape.rankKnown && t.shape.rank() == better.shape.rank())
    for (size_t i = 0; i < t.shape.rank(); ++i)
      if (!t.shape.dims[i].isStatic() && !better.shape.dims[i].isUnknown() && t.shape.dims[i] != better.shape.dims[i] &&
          (t.shape.dims[i].isUnknown() || better.shape.dims[i].isStatic())) {
        t.shape.dims[i] = better.shape.dims[i];
        changed = true;
      }
  return changed;
}

std::optional<Shape> broadcastShapes(const std::vector<const Shape *> &shapes) {
  size_t rank = 0;
  for (const Shape *s : shapes)
    rank = std::max(rank, s->rank());
  Shape out;
  out.rankKnown = true;
  out.dims.assign(rank, Dim::fixed(1));
  for (const Shape *s : shapes) {
    size_t off = rank - s->rank();
    for (size_t i = 0; i < s->rank(); ++i) {
      const Dim &d = s->dims[i];
      Dim &o = out.dims[off + i];
      if (d.isStatic() && d.value == 1)
        continue;
      if (o.isStatic() && o.value == 1) {
        o = d;
      } else if (d.isStatic() && o.isStatic()) {
        if (d.value != o.value)
          return std::nullopt;
      } else if (d != o) {
        // Symbolic vs static (or two different symbols): a static non-1 dim
        // decides; otherwise unknown.
        o = o.isStatic() ? o : d.isStatic() ? d : Dim::unknown();
      }
    }
  }
  return out;
}

bool inferFallback(FallbackContext &c) {
  const Node &n = c.node;
  // The rules below are ONNX's own operators (ai.onnx however a model spells
  // it, ai.onnx.ml's Binarizer, ai.onnx.preview's FlexAttention): a custom
  // domain's com.example::Reshape is not Reshape, and its shapes stay unknown
  // (GL002 says so).
  llvm::StringRef domain = n.domain;
  if (!isDefaultDomain(domain) && domain != "ai.onnx.ml" && !domain.startswith("ai.onnx.preview"))
    return false;
  llvm::StringRef op = n.opType;
  if (op == "OptionalHasElement") {
    c.outputs = {Type::tensor(DType::Bool, Shape::of({}))};
    return true;
  }
  if (c.inputs.empty()) {
    if (op == "ConstantOfShape")
      c.problems.push_back("ConstantOfShape has no shape input");
    return false;
  }
  if (op.startswith("Reduce") || op == "ArgMax" || op == "ArgMin")
    return reduce(c);
  if (op == "Split")
    return split(c);
  if (op == "Reshape")
    return reshape(c);
  if (op == "Expand")
    return expand(c);
  if (op == "Tile")
    return tile(c);
  if (op == "Slice")
    return slice(c);
  if (op == "Squeeze" || op == "Unsqueeze")
    return squeezeOrUnsqueeze(c, op == "Squeeze");
  if (op == "Range")
    return range(c);
  if (op == "OneHot")
    return oneHot(c);
  if (op == "TopK")
    return topK(c);
  if (op == "Einsum")
    return einsum(c);
  if (op == "STFT")
    return stft(c);
  if (op == "BlackmanWindow" || op == "HannWindow" || op == "HammingWindow")
    return window(c);
  if (op == "MelWeightMatrix")
    return melWeights(c);
  if (op == "Upsample")
    return resizeWithScales(c, 1);
  if (op == "MeanVarianceNormalization") {
    c.outputs = {sameAs(c.inputs[0])};
    return c.inputs[0].isTensor();
  }
  if (op == "MaxUnpool" && valuesOf(c, 2) && staticShape(*valuesOf(c, 2)).rankKnown) {
    c.outputs = {Type::tensor(c.inputs[0].dtype, staticShape(*valuesOf(c, 2)))};
    return true;
  }
  if (op == "Pad")
    return pad(c);
  if (op == "Resize")
    return resize(c);
  if (op == "ConstantOfShape")
    return constantOfShape(c);
  if (op == "AveragePool" || op == "LpPool" || op == "MaxPool")
    return pool(c, std::nullopt);
  if (op == "DeformConv" || op == "Conv") {
    if (c.inputs.size() < 2 || !c.inputs[1].shape.rankKnown || !c.inputs[1].shape.dims[0].isStatic())
      return false;
    return pool(c, c.inputs[1].shape.dims[0].value);
  }
  if (op == "Attention" || op == "FlexAttention")
    return attention(c);
  if (op == "LinearAttention")
    return linearAttention(c);
  if (op == "CausalConvWithState")
    return causalConv(c);
  if (op == "BitCast")
    return bitcast(c);
  if (op == "SwiGLU" || op == "CumProd") {
    c.outputs = {sameAs(c.inputs[0])};
    return c.inputs[0].isTensor();
  }
  if (op == "IsInf" || op == "IsNaN" || op == "RegexFullMatch") {
    c.outputs = {tensorLike(c.inputs[0], DType::Bool)};
    return c.inputs[0].isTensor();
  }
  if (op == "OptionalHasElement") {
    c.outputs = {Type::tensor(DType::Bool, Shape::of({}))};
    return true;
  }
  if (op == "OptionalGetElement") {
    const Type &t = c.inputs[0];
    c.outputs = {t.kind == TypeKind::Optional && t.element ? *t.element : t};
    return t.kind != TypeKind::Unknown;
  }
  if (op == "StringConcat")
    return broadcast(c, DType::String);
  if (op == "StringSplit") {
    const Type &x = c.inputs[0];
    Type o = x;
    if (o.shape.rankKnown)
      o.shape.dims.push_back(Dim::unknown());
    c.outputs = {o, tensorLike(x, DType::Int64)};
    return x.isTensor();
  }
  if (op == "ImageDecoder") {
    Shape s;
    s.rankKnown = true;
    s.dims.assign(3, Dim::unknown());
    c.outputs = {Type::tensor(DType::UInt8, s)};
    return true;
  }
  if (op == "CenterCropPad" && c.values.size() > 1 && c.values[1]) {
    Type o = c.inputs[0];
    if (!o.shape.rankKnown)
      return false;
    std::vector<int64_t> axes = attrInts(n, "axes");
    const auto &sizes = *c.values[1];
    if (axes.empty())
      for (size_t i = 0; i < o.shape.rank(); ++i)
        axes.push_back(static_cast<int64_t>(i));
    if (axes.size() != sizes.size())
      return false;
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t a = axes[i];
      if (!normAxis(a, o.shape.rank()))
        return false;
      o.shape.dims[a] = checkedDim(sizes[i]);
    }
    c.outputs = {o};
    return true;
  }
  if (op == "Col2Im" && c.values.size() > 2 && c.values[1] && c.values[2]) {
    const Type &x = c.inputs[0];
    if (!x.shape.rankKnown || x.shape.rank() != 3)
      return false;
    int64_t block = checkedProduct(*c.values[2]).value_or(0);
    if (!rankWithinBounds(static_cast<int64_t>(c.values[1]->size()) + 2))
      return false;
    Type o = x;
    o.shape.dims.clear();
    o.shape.dims.push_back(x.shape.dims[0]);
    o.shape.dims.push_back(x.shape.dims[1].isStatic() && block > 0 ? Dim::fixed(x.shape.dims[1].value / block) : Dim::unknown());
    for (int64_t d : *c.values[1])
      o.shape.dims.push_back(checkedDim(d));
    c.outputs = {o};
    return true;
  }
  if (op == "AffineGrid" && c.values.size() > 1 && c.values[1]) {
    const auto &size = *c.values[1];
    if (size.size() < 4 || !rankWithinBounds(static_cast<int64_t>(size.size())))
      return false;
    Shape s;
    s.rankKnown = true;
    s.dims.push_back(checkedDim(size[0]));
    for (size_t i = 2; i < size.size(); ++i)
      s.dims.push_back(checkedDim(size[i]));
    s.dims.push_back(Dim::fixed(static_cast<int64_t>(size.size() - 2)));
    c.outputs = {Type::tensor(c.inputs[0].dtype, s)};
    return true;
  }
  if (op == "GridSample" && c.inputs.size() > 1) {
    const Type &x = c.inputs[0], &grid = c.inputs[1];
    if (!x.shape.rankKnown || !grid.shape.rankKnown || grid.shape.rank() < 3)
      return false;
    Type o = x;
    o.shape.dims.resize(2);
    for (size_t i = 1; i + 1 < grid.shape.rank(); ++i)
      o.shape.dims.push_back(grid.shape.dims[i]);
    c.outputs = {o};
    return true;
  }
  if (op == "DFT") {
    Type o = c.inputs[0];
    if (!o.shape.rankKnown)
      return false;
    int64_t axis = -2;
    bool axisInput = n.inputs.size() > 2 && n.inputs[2];
    if (c.values.size() > 2 && c.values[2] && c.values[2]->size() == 1)
      axis = (*c.values[2])[0];
    else if (axisInput)
      return false;  // the axis is a runtime value
    else if (n.attr("axis"))
      axis = attrIntOr(n, "axis", 1);
    if (!normAxis(axis, o.shape.rank()))
      return false;
    if (c.values.size() > 1 && c.values[1] && c.values[1]->size() == 1)
      o.shape.dims[axis] = checkedDim((*c.values[1])[0]);
    if (attrIntOr(n, "onesided", 0) && o.shape.dims[axis].isStatic())
      o.shape.dims[axis] = Dim::fixed(o.shape.dims[axis].value / 2 + 1);
    o.shape.dims.back() = Dim::fixed(2);
    c.outputs = {o};
    return true;
  }
  if (op == "QuantizeLinear" || op == "DequantizeLinear") {
    DType dt = op == "QuantizeLinear" ? (c.inputs.size() > 2 && c.inputs[2].dtype != DType::Undefined ? c.inputs[2].dtype : DType::UInt8)
                                      : (c.inputs.size() > 1 ? c.inputs[1].dtype : DType::Float);
    if (auto od = n.attrInt("output_dtype"); od && *od)
      dt = dtypeFromCode(*od).value_or(dt);
    c.outputs = {tensorLike(c.inputs[0], dt)};
    return c.inputs[0].isTensor();
  }
  if (op == "Cast" || op == "CastLike") {
    DType dt = op == "Cast" ? dtypeFromCode(attrIntOr(n, "to", 0)).value_or(DType::Undefined)
                            : (c.inputs.size() > 1 ? c.inputs[1].dtype : DType::Undefined);
    c.outputs = {tensorLike(c.inputs[0], dt)};
    return c.inputs[0].isTensor() && dt != DType::Undefined;
  }
  // Generic rules by kind for ops whose shape follows their inputs.
  switch (n.op ? n.op->kind : OpKind::Unknown) {
  case OpKind::Pointwise:
    if (!c.inputs[0].isTensor())
      return false;
    c.outputs = {sameAs(c.inputs[0])};
    return true;
  case OpKind::Broadcast: {
    bool cmp = llvm::StringSwitch<bool>(op)
                   .Cases("Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", true)
                   .Cases("And", "Or", "Xor", true)
                   .Default(false);
    if (op == "Where")
      return broadcast(c, std::nullopt, 1);
    if (op == "RotaryEmbedding" || op == "GroupNormalization" || op == "RMSNormalization") {
      c.outputs = {sameAs(c.inputs[0])};
      return true;
    }
    return broadcast(c, cmp ? std::optional<DType>(DType::Bool) : std::nullopt);
  }
  case OpKind::Reduction:
    if (op == "GroupNormalization" || op == "RMSNormalization" || op == "LayerNormalization") {
      c.outputs = {sameAs(c.inputs[0])};
      return c.inputs[0].isTensor();
    }
    return false;
  case OpKind::Injective:
    if (op == "TensorScatter" || op == "ScatterElements" || op == "ScatterND") {
      c.outputs = {sameAs(c.inputs[0])};
      return true;
    }
    return false;
  default:
    return false;
  }
}

}  // namespace graphlint::onnxio
