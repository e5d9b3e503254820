#include "FallbackInference.h"

#include "graphlint/ir/OpRegistry.h"

#include <llvm/ADT/StringSwitch.h>

#include <cmath>

namespace graphlint::onnxio {
namespace {

int64_t attrIntOr(const Node &n, llvm::StringRef name, int64_t dflt) { return n.attrInt(name).value_or(dflt); }

std::vector<int64_t> attrInts(const Node &n, llvm::StringRef name) {
  const Attribute *a = n.attr(name);
  return a && a->kind == AttrKind::Ints ? a->ints : std::vector<int64_t>{};
}

bool normAxis(int64_t &a, size_t rank) {
  if (a < 0)
    a += static_cast<int64_t>(rank);
  return a >= 0 && a < static_cast<int64_t>(rank);
}

Type sameAs(const Type &t) { return t; }

Type tensorLike(const Type &t, DType dt) {
  Type o = t;
  o.dtype = dt;
  return o;
}

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

// Output length of one spatial dim of a pooling/conv window.
Dim windowDim(const Dim &in, int64_t k, int64_t stride, int64_t dil, int64_t padTotal, bool ceil,
              const std::string &autoPad) {
  if (!in.isStatic())
    return Dim::unknown();
  int64_t eff = (k - 1) * dil + 1;
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER")
    return Dim::fixed((in.value + stride - 1) / stride);
  if (autoPad == "VALID")
    return Dim::fixed((in.value - eff) / stride + 1);
  double q = static_cast<double>(in.value + padTotal - eff) / static_cast<double>(stride);
  int64_t out = static_cast<int64_t>(ceil ? std::ceil(q) : std::floor(q)) + 1;
  // With ceil_mode the last window must start inside the (left-padded) input.
  if (ceil && (out - 1) * stride >= in.value + padTotal / 2)
    --out;
  return Dim::fixed(out);
}

bool pool(FallbackContext &c, std::optional<int64_t> channelsOut) {
  const Type &x = c.inputs[0];
  if (!x.isTensor() || !x.shape.rankKnown || x.shape.rank() < 3)
    return false;
  size_t sp = x.shape.rank() - 2;
  auto k = attrInts(c.node, "kernel_shape");
  if (k.empty() && c.inputs.size() > 1 && c.inputs[1].shape.rankKnown && c.inputs[1].shape.rank() == x.shape.rank()) {
    for (size_t i = 0; i < sp; ++i) {
      const Dim &d = c.inputs[1].shape.dims[i + 2];
      if (!d.isStatic())
        return false;
      k.push_back(d.value);
    }
  }
  if (k.size() != sp)
    return false;
  auto strides = attrInts(c.node, "strides");
  auto dil = attrInts(c.node, "dilations");
  auto pads = attrInts(c.node, "pads");
  strides.resize(sp, 1);
  dil.resize(sp, 1);
  pads.resize(2 * sp, 0);
  const Attribute *ap = c.node.attr("auto_pad");
  std::string autoPad = ap ? ap->s : "NOTSET";
  bool ceil = attrIntOr(c.node, "ceil_mode", 0) != 0;
  Type o = x;
  if (channelsOut)
    o.shape.dims[1] = Dim::fixed(*channelsOut);
  for (size_t i = 0; i < sp; ++i)
    o.shape.dims[i + 2] = windowDim(x.shape.dims[i + 2], k[i], strides[i], dil[i], pads[i] + pads[i + sp], ceil, autoPad);
  c.outputs = {o};
  for (size_t i = 1; i < c.node.outputs.size(); ++i)
    c.outputs.push_back(tensorLike(o, DType::Int64));
  return true;
}

bool split(FallbackContext &c) {
  const Type &x = c.inputs[0];
  if (!x.isTensor() || !x.shape.rankKnown)
    return false;
  int64_t axis = attrIntOr(c.node, "axis", 0);
  if (!normAxis(axis, x.shape.rank()))
    return false;
  size_t n = c.node.outputs.size();
  std::vector<int64_t> sizes;
  if (c.values.size() > 1 && c.values[1])
    sizes = *c.values[1];
  else if (c.node.attr("split"))
    sizes = attrInts(c.node, "split");
  const Dim &d = x.shape.dims[axis];
  if (sizes.empty() && d.isStatic()) {
    int64_t parts = attrIntOr(c.node, "num_outputs", static_cast<int64_t>(n));
    int64_t chunk = (d.value + parts - 1) / parts;
    for (int64_t i = 0, left = d.value; i < static_cast<int64_t>(n); ++i, left -= chunk)
      sizes.push_back(std::max<int64_t>(0, std::min(chunk, left)));
  }
  for (size_t i = 0; i < n; ++i) {
    Type o = x;
    o.shape.dims[axis] = i < sizes.size() ? Dim::fixed(sizes[i]) : Dim::unknown();
    c.outputs.push_back(o);
  }
  return true;
}

bool pad(FallbackContext &c) {
  const Type &x = c.inputs[0];
  if (!x.isTensor() || !x.shape.rankKnown)
    return false;
  size_t r = x.shape.rank();
  std::optional<std::vector<int64_t>> pads = c.values.size() > 1 ? c.values[1] : std::nullopt;
  if (!pads && c.node.attr("pads"))
    pads = attrInts(c.node, "pads");
  std::vector<int64_t> axes;
  if (c.values.size() > 3 && c.values[3])
    axes = *c.values[3];
  else
    for (size_t i = 0; i < r; ++i)
      axes.push_back(static_cast<int64_t>(i));
  Type o = x;
  if (!pads || pads->size() != 2 * axes.size()) {
    for (int64_t a : axes)
      if (normAxis(a, r))
        o.shape.dims[a] = Dim::unknown();
    c.outputs = {o};
    return true;
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i];
    if (!normAxis(a, r))
      return false;
    const Dim &d = x.shape.dims[a];
    o.shape.dims[a] = d.isStatic() ? Dim::fixed(d.value + (*pads)[i] + (*pads)[i + axes.size()]) : Dim::unknown();
  }
  c.outputs = {o};
  return true;
}

bool resize(FallbackContext &c) {
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
        o.shape.dims[a] = Dim::fixed(static_cast<int64_t>(std::round(scale * static_cast<double>(x.shape.dims[a].value))));
      }
    } else {
      for (size_t i = 0; i < axes.size(); ++i) {
        int64_t a = axes[i];
        if (!normAxis(a, r))
          return false;
        o.shape.dims[a] = Dim::fixed(sizes[i]);
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

bool constantOfShape(FallbackContext &c) {
  DType dt = DType::Float;
  if (const Attribute *v = c.node.attr("value"); v && !v->tensors.empty())
    dt = v->tensors[0].dtype;
  Shape s;
  if (c.values.size() > 0 && c.values[0]) {
    s.rankKnown = true;
    for (int64_t d : *c.values[0])
      s.dims.push_back(Dim::fixed(d));
  } else if (c.inputs[0].shape.rankKnown && c.inputs[0].shape.rank() == 1 && c.inputs[0].shape.dims[0].isStatic()) {
    s.rankKnown = true;
    s.dims.resize(c.inputs[0].shape.dims[0].value);
  }
  c.outputs = {Type::tensor(dt, s)};
  return true;
}

bool attention(FallbackContext &c) {
  const Type &q = c.inputs[0];
  if (c.inputs.size() < 3 || !q.isTensor() || !q.shape.rankKnown)
    return false;
  const Type &v = c.inputs[2];
  Type y = q;
  if (q.shape.rank() == 4 && v.shape.rankKnown && v.shape.rank() == 4) {
    y.shape.dims[3] = v.shape.dims[3];
  } else if (q.shape.rank() == 3 && v.shape.rankKnown && v.shape.rank() == 3) {
    int64_t qh = attrIntOr(c.node, "q_num_heads", 0), kvh = attrIntOr(c.node, "kv_num_heads", 0);
    const Dim &vh = v.shape.dims[2];
    y.shape.dims[2] = qh && kvh && vh.isStatic() ? Dim::fixed(vh.value / kvh * qh) : Dim::unknown();
  } else {
    return false;
  }
  c.outputs = {y};
  return true;
}

}  // namespace

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
  llvm::StringRef op = n.opType;
  if (c.inputs.empty() && op != "ConstantOfShape")
    return false;
  if (op.startswith("Reduce") || op == "ArgMax" || op == "ArgMin")
    return reduce(c);
  if (op == "Split")
    return split(c);
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
  if (op == "Attention")
    return attention(c);
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
      o.shape.dims[a] = Dim::fixed(sizes[i]);
    }
    c.outputs = {o};
    return true;
  }
  if (op == "Col2Im" && c.values.size() > 2 && c.values[1] && c.values[2]) {
    const Type &x = c.inputs[0];
    if (!x.shape.rankKnown || x.shape.rank() != 3)
      return false;
    int64_t block = 1;
    for (int64_t b : *c.values[2])
      block *= b;
    Type o = x;
    o.shape.dims.clear();
    o.shape.dims.push_back(x.shape.dims[0]);
    o.shape.dims.push_back(x.shape.dims[1].isStatic() && block ? Dim::fixed(x.shape.dims[1].value / block) : Dim::unknown());
    for (int64_t d : *c.values[1])
      o.shape.dims.push_back(Dim::fixed(d));
    c.outputs = {o};
    return true;
  }
  if (op == "AffineGrid" && c.values.size() > 1 && c.values[1]) {
    const auto &size = *c.values[1];
    if (size.size() < 4)
      return false;
    Shape s;
    s.rankKnown = true;
    s.dims.push_back(Dim::fixed(size[0]));
    for (size_t i = 2; i < size.size(); ++i)
      s.dims.push_back(Dim::fixed(size[i]));
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
    if (c.values.size() > 2 && c.values[2] && c.values[2]->size() == 1)
      axis = (*c.values[2])[0];
    else if (n.attr("axis"))
      axis = attrIntOr(n, "axis", 1);
    if (!normAxis(axis, o.shape.rank()))
      return false;
    if (c.values.size() > 1 && c.values[1] && c.values[1]->size() == 1)
      o.shape.dims[axis] = Dim::fixed((*c.values[1])[0]);
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
