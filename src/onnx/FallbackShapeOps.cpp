// graphlint's fallback rules for windows (pooling, convolution), splits and
// pads, and for the ops whose output shape is read from values (Reshape,
// Expand, Tile, Slice, Squeeze/Unsqueeze, ConstantOfShape). Every dim is
// computed with overflow-checked arithmetic.
#include "FallbackRules.h"

#include <fmt/format.h>

#include <algorithm>

namespace graphlint::onnxio::fallback {

namespace {

// Output length of one spatial dim of a pooling/conv window; the caller has
// checked stride, dilation and kernel >= 1 and pads >= 0. Unknown when the
// window does not fit or the arithmetic overflows.
Dim windowDim(const Dim &in, int64_t k, int64_t stride, int64_t dil, int64_t padTotal, bool ceil,
              const std::string &autoPad) {
  if (!in.isStatic())
    return Dim::unknown();
  CheckedInt km1 = checkedSub(k, 1);
  CheckedInt spread = km1 ? checkedMul(*km1, dil) : std::nullopt;
  CheckedInt eff = spread ? checkedAdd(*spread, 1) : std::nullopt;
  if (!eff)
    return Dim::unknown();
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER")
    return checkedDim(checkedCeilDiv(in.value, stride));
  if (autoPad == "VALID") {
    CheckedInt span = checkedSub(in.value, *eff);
    return span && *span >= 0 ? checkedDim(checkedAdd(*span / stride, 1)) : Dim::unknown();
  }
  CheckedInt padded = checkedAdd(in.value, padTotal);
  CheckedInt span = padded ? checkedSub(*padded, *eff) : std::nullopt;
  if (!span || *span < 0)
    return Dim::unknown();
  CheckedInt steps = ceil ? checkedCeilDiv(*span, stride) : CheckedInt(*span / stride);
  if (!steps)
    return Dim::unknown();
  int64_t out = *steps + 1;
  // With ceil_mode the last window must start inside the (left-padded) input.
  CheckedInt lastStart = checkedMul(out - 1, stride);
  if (ceil && lastStart && *lastStart >= in.value + padTotal / 2)
    --out;
  return Dim::fixed(out);
}

// Window attributes out of range make the node invalid: a problem, and the
// spatial dims stay unknown instead of dividing by zero or going negative.
bool windowAttrsValid(FallbackContext &c, const std::vector<int64_t> &k, const std::vector<int64_t> &strides,
                      const std::vector<int64_t> &dil, const std::vector<int64_t> &pads) {
  auto bad = [&](const char *name, const std::vector<int64_t> &v, int64_t min) {
    for (int64_t x : v)
      if (x < min) {
        c.problems.push_back(fmt::format("{} {} must be >= {} (got {})", c.node.opType, name, min, intsStr(v)));
        return true;
      }
    return false;
  };
  // Every attribute is checked, so that each bad one is reported.
  const bool anyBad[] = {bad("kernel_shape", k, 1), bad("strides", strides, 1), bad("dilations", dil, 1),
                         bad("pads", pads, 0)};
  return std::none_of(std::begin(anyBad), std::end(anyBad), [](bool b) { return b; });
}

}  // namespace

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
  bool valid = windowAttrsValid(c, k, strides, dil, pads);
  for (size_t i = 0; i < sp; ++i) {
    CheckedInt padTotal = checkedAdd(pads[i], pads[i + sp]);
    o.shape.dims[i + 2] = valid && padTotal ? windowDim(x.shape.dims[i + 2], k[i], strides[i], dil[i], *padTotal, ceil, autoPad)
                                            : Dim::unknown();
  }
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
  bool splitGiven = c.node.inputs.size() > 1 && c.node.inputs[1];
  if (c.values.size() > 1 && c.values[1])
    sizes = *c.values[1];
  else if (splitGiven)
    sizes.assign(n, -1);  // given but unknown: sizes unknown
  else if (c.node.attr("split"))
    sizes = attrInts(c.node, "split");
  const Dim &d = x.shape.dims[axis];
  if (sizes.empty() && d.isStatic()) {
    int64_t parts = attrIntOr(c.node, "num_outputs", static_cast<int64_t>(n));
    if (parts < 1) {
      c.problems.push_back(n == 0 ? std::string("Split has no outputs")
                                  : fmt::format("Split num_outputs must be >= 1 (got {})", parts));
      return false;
    }
    CheckedInt chunk = checkedCeilDiv(d.value, parts);
    for (int64_t i = 0, left = d.value; chunk && i < static_cast<int64_t>(n); ++i, left -= std::min(*chunk, left))
      sizes.push_back(std::max<int64_t>(0, std::min(*chunk, left)));
  }
  for (size_t i = 0; i < n; ++i) {
    Type o = x;
    o.shape.dims[axis] = i < sizes.size() && sizes[i] >= 0 ? Dim::fixed(sizes[i]) : Dim::unknown();
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
    CheckedInt grown = d.isStatic() ? checkedAdd(d.value, (*pads)[i]) : std::nullopt;
    o.shape.dims[a] = checkedDim(grown ? checkedAdd(*grown, (*pads)[i + axes.size()]) : std::nullopt);
  }
  c.outputs = {o};
  return true;
}


bool constantOfShape(FallbackContext &c) {
  if (c.inputs.empty()) {
    c.problems.push_back("ConstantOfShape has no shape input");
    return false;
  }
  DType dt = DType::Float;
  if (const Attribute *v = c.node.attr("value"); v && !v->tensors.empty())
    dt = v->tensors[0].dtype;
  Shape s;
  const Shape &in = c.inputs[0].shape;
  if (c.values.size() > 0 && c.values[0] && rankWithinBounds(static_cast<int64_t>(c.values[0]->size()))) {
    s.rankKnown = true;
    for (int64_t d : *c.values[0]) {
      if (d < 0)
        c.problems.push_back(fmt::format("ConstantOfShape shape has a negative dim {}", d));
      s.dims.push_back(checkedDim(d));
    }
  } else if (in.rankKnown && in.rank() == 1 && in.dims[0].isStatic() && rankWithinBounds(in.dims[0].value)) {
    s.rankKnown = true;
    s.dims.resize(static_cast<size_t>(in.dims[0].value));
  }
  c.outputs = {Type::tensor(dt, s)};
  return true;
}

bool reshape(FallbackContext &c) {
  const Type &x = c.inputs[0];
  const auto *shape = valuesOf(c, 1);
  if (!shape) {
    const Type &st = c.inputs.size() > 1 ? c.inputs[1] : Type{};
    if (st.shape.rankKnown && st.shape.rank() == 1 && st.shape.dims[0].isStatic()) {
      c.outputs = {Type::tensor(x.dtype, unknownDims(st.shape.dims[0].value))};
      return true;
    }
    return false;
  }
  bool allowZero = attrIntOr(c.node, "allowzero", 0) != 0;
  if (!rankWithinBounds(static_cast<int64_t>(shape->size())))
    return false;
  Shape out;
  out.rankKnown = true;
  int inferIdx = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape->size(); ++i) {
    int64_t d = (*shape)[i];
    if (d == 0 && !allowZero) {
      if (!x.shape.rankKnown || i >= x.shape.rank())
        return false;
      out.dims.push_back(x.shape.dims[i]);
      if (x.shape.dims[i].isStatic() && known >= 0)
        known = checkedMul(known, x.shape.dims[i].value).value_or(-1);
      else
        known = -1;
    } else if (d == -1) {
      inferIdx = static_cast<int>(i);
      out.dims.push_back(Dim::unknown());
    } else {
      out.dims.push_back(checkedDim(d));
      if (known >= 0)
        known = d >= 0 ? checkedMul(known, d).value_or(-1) : -1;
    }
  }
  if (inferIdx >= 0) {
    auto total = x.shape.numElements();
    if (total && known > 0)
      out.dims[inferIdx] = Dim::fixed(*total / known);
  }
  c.outputs = {Type::tensor(x.dtype, out)};
  return true;
}

bool expand(FallbackContext &c) {
  const Type &x = c.inputs[0];
  const auto *shape = valuesOf(c, 1);
  if (!x.shape.rankKnown || !shape)
    return false;
  Shape target = staticShape(*shape);
  auto s = broadcastShapes({&x.shape, &target});
  if (!s)
    return false;
  c.outputs = {Type::tensor(x.dtype, *s)};
  return true;
}

bool tile(FallbackContext &c) {
  const Type &x = c.inputs[0];
  const auto *reps = valuesOf(c, 1);
  if (!x.shape.rankKnown || !reps || reps->size() != x.shape.rank())
    return false;
  Type o = x;
  for (size_t i = 0; i < reps->size(); ++i)
    o.shape.dims[i] = x.shape.dims[i].isStatic() ? checkedDim(checkedMul(x.shape.dims[i].value, (*reps)[i])) : Dim::unknown();
  c.outputs = {o};
  return true;
}

bool slice(FallbackContext &c) {
  const Type &x = c.inputs[0];
  if (!x.shape.rankKnown)
    return false;
  size_t r = x.shape.rank();
  std::vector<int64_t> starts, ends, axes, steps;
  if (c.node.attr("starts")) {  // Slice-1
    starts = attrInts(c.node, "starts");
    ends = attrInts(c.node, "ends");
    axes = attrInts(c.node, "axes");
  } else {
    if (!valuesOf(c, 1) || !valuesOf(c, 2)) {
      Type o = x;
      auto ax = valuesOf(c, 3);
      for (size_t i = 0; i < r; ++i) {
        int64_t a = static_cast<int64_t>(i);
        bool sliced = !ax;
        if (ax)
          for (int64_t v : *ax)
            sliced |= normAxis(v, r) && v == a;
        if (sliced)
          o.shape.dims[i] = Dim::unknown();
      }
      c.outputs = {o};
      return true;
    }
    starts = *valuesOf(c, 1);
    ends = *valuesOf(c, 2);
    if (c.node.inputs.size() > 3 && c.node.inputs[3]) {
      if (!valuesOf(c, 3))
        return false;
      axes = *valuesOf(c, 3);
    }
    if (c.node.inputs.size() > 4 && c.node.inputs[4]) {
      if (!valuesOf(c, 4))
        return false;
      steps = *valuesOf(c, 4);
    }
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(static_cast<int64_t>(i));
  steps.resize(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size())
    return false;
  Type o = x;
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t a = axes[i];
    if (!normAxis(a, r) || steps[i] == 0)
      return false;
    const Dim &d = x.shape.dims[a];
    if (!d.isStatic()) {
      o.shape.dims[a] = Dim::unknown();
      continue;
    }
    // n >= 0 and s, e are clamped into [-1, n] before any difference, so
    // only the negation of the step can overflow (INT64_MIN).
    int64_t n = d.value, s = starts[i], e = ends[i], st = steps[i];
    if (n < 0) {
      o.shape.dims[a] = Dim::unknown();
      continue;
    }
    if (s < 0) s = s < -n ? -1 : s + n;
    if (e < 0) e = e < -n ? -1 : e + n;
    CheckedInt len;
    if (st > 0) {
      s = std::clamp<int64_t>(s, 0, n);
      e = std::clamp<int64_t>(e, 0, n);
      len = e > s ? checkedCeilDiv(e - s, st) : CheckedInt(0);
    } else {
      s = std::clamp<int64_t>(s, -1, n - 1);
      e = std::clamp<int64_t>(e, -1, n - 1);
      CheckedInt back = checkedNeg(st);
      len = !back ? std::nullopt : s > e ? checkedCeilDiv(s - e, *back) : CheckedInt(0);
    }
    o.shape.dims[a] = checkedDim(len);
  }
  c.outputs = {o};
  return true;
}

bool squeezeOrUnsqueeze(FallbackContext &c, bool squeeze) {
  const Type &x = c.inputs[0];
  auto axes = axesOf(c, 1);
  if (!x.shape.rankKnown || !axes)
    return false;
  Type o = x;
  if (squeeze) {
    size_t r = x.shape.rank();
    std::vector<bool> drop(r, false);
    if (axes->empty()) {
      for (size_t i = 0; i < r; ++i) {
        if (!x.shape.dims[i].isStatic())
          return false;
        drop[i] = x.shape.dims[i].value == 1;
      }
    }
    for (int64_t a : *axes) {
      if (!normAxis(a, r))
        return false;
      drop[a] = true;
    }
    o.shape.dims.clear();
    for (size_t i = 0; i < r; ++i)
      if (!drop[i])
        o.shape.dims.push_back(x.shape.dims[i]);
  } else {
    size_t outRank = x.shape.rank() + axes->size();
    if (!rankWithinBounds(static_cast<int64_t>(outRank)))
      return false;
    std::vector<bool> ins(outRank, false);
    for (int64_t a : *axes) {
      if (!normAxis(a, outRank))
        return false;
      ins[a] = true;
    }
    o.shape.dims.clear();
    size_t k = 0;
    for (size_t i = 0; i < outRank; ++i)
      o.shape.dims.push_back(ins[i] ? Dim::fixed(1) : x.shape.dims[k++]);
  }
  c.outputs = {o};
  return true;
}
}  // namespace graphlint::onnxio::fallback
