#include "ConstFolding.h"

#include "graphlint/ir/CheckedMath.h"

#include <llvm/ADT/StringRef.h>

#include <numeric>

namespace graphlint::onnxio {
namespace {

using BinOp = CheckedInt (*)(int64_t, int64_t);

// An element that overflows (or divides by zero) makes the whole result
// unknown: a wrapped value would be a wrong shape, not an approximate one.
std::optional<IntTensor> elementwise(const IntTensor &a, const IntTensor &b, BinOp f) {
  // Scalars and equal shapes cover the shape arithmetic exporters emit.
  IntTensor out;
  auto push = [&](int64_t x, int64_t y) {
    CheckedInt r = f(x, y);
    if (r)
      out.values.push_back(*r);
    return r.has_value();
  };
  if (a.values.size() == b.values.size()) {
    out.dims = a.dims.size() >= b.dims.size() ? a.dims : b.dims;
    for (size_t i = 0; i < a.values.size(); ++i)
      if (!push(a.values[i], b.values[i]))
        return std::nullopt;
  } else if (b.values.size() == 1) {
    out.dims = a.dims;
    for (int64_t v : a.values)
      if (!push(v, b.values[0]))
        return std::nullopt;
  } else if (a.values.size() == 1) {
    out.dims = b.dims;
    for (int64_t v : b.values)
      if (!push(a.values[0], v))
        return std::nullopt;
  } else {
    return std::nullopt;
  }
  return out;
}

}  // namespace

std::optional<IntTensor> foldIntegers(const Node &n, const std::vector<std::optional<IntTensor>> &in,
                                      const std::vector<Type> &types) {
  if (!n.domain.empty())
    return std::nullopt;
  llvm::StringRef op = n.opType;
  auto known = [&](size_t i) { return i < in.size() && in[i].has_value(); };
  if (op == "Shape") {
    if (types.empty() || !types[0].shape.isFullyStatic())
      return std::nullopt;
    IntTensor t;
    for (const Dim &d : types[0].shape.dims)
      t.values.push_back(d.value);
    int64_t r = static_cast<int64_t>(t.values.size());
    int64_t start = n.attrInt("start").value_or(0), end = n.attrInt("end").value_or(r);
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = std::clamp<int64_t>(start, 0, r);
    end = std::clamp<int64_t>(end, start, r);
    t.values = std::vector<int64_t>(t.values.begin() + start, t.values.begin() + end);
    t.dims = {static_cast<int64_t>(t.values.size())};
    return t;
  }
  if (op == "Size") {
    if (types.empty() || !types[0].shape.numElements())
      return std::nullopt;
    return IntTensor{{}, {*types[0].shape.numElements()}};
  }
  if (op == "Identity" || op == "Cast" || op == "Squeeze" || op == "Unsqueeze" || op == "Reshape" || op == "Flatten") {
    if (!known(0))
      return std::nullopt;
    IntTensor t = *in[0];
    t.dims.clear();  // caller takes dims from the inferred output type
    return t;
  }
  if (op == "ConstantOfShape") {
    CheckedInt count = known(0) ? checkedProduct(in[0]->values) : std::nullopt;
    if (!count || *count > static_cast<int64_t>(kMaxFoldElements))
      return std::nullopt;
    int64_t fill = 0;
    if (const Attribute *v = n.attr("value"); v && !v->tensors.empty() && v->tensors[0].data.known) {
      if (!v->tensors[0].data.ints.empty())
        fill = v->tensors[0].data.ints[0];
      else
        return std::nullopt;
    }
    return IntTensor{in[0]->values, std::vector<int64_t>(static_cast<size_t>(*count), fill)};
  }
  if (op == "Concat") {
    IntTensor t;
    for (size_t i = 0; i < in.size(); ++i) {
      if (!known(i) || in[i]->dims.size() > 1)
        return std::nullopt;
      t.values.insert(t.values.end(), in[i]->values.begin(), in[i]->values.end());
    }
    t.dims = {static_cast<int64_t>(t.values.size())};
    return t;
  }
  if (op == "Gather") {
    if (!known(0) || !known(1) || in[0]->dims.size() != 1 || n.attrInt("axis").value_or(0) != 0)
      return std::nullopt;
    IntTensor t;
    t.dims = in[1]->dims;
    int64_t size = static_cast<int64_t>(in[0]->values.size());
    for (int64_t idx : in[1]->values) {
      if (idx < 0)
        idx += size;
      if (idx < 0 || idx >= size)
        return std::nullopt;
      t.values.push_back(in[0]->values[idx]);
    }
    return t;
  }
  if (op == "Slice") {
    if (!known(0) || !known(1) || !known(2) || in[0]->dims.size() != 1)
      return std::nullopt;
    if ((in.size() > 3 && !known(3) && n.inputs[3]) || (in.size() > 4 && !known(4) && n.inputs[4]))
      return std::nullopt;
    if (in[1]->values.size() != 1 || in[2]->values.size() != 1 || (in.size() > 4 && known(4) && in[4]->values.size() != 1))
      return std::nullopt;
    int64_t size = static_cast<int64_t>(in[0]->values.size());
    int64_t start = in[1]->values[0], end = in[2]->values[0];
    int64_t step = in.size() > 4 && known(4) ? in[4]->values[0] : 1;
    if (step == 0)
      return std::nullopt;
    if (start < 0) start += size;
    if (end < 0) end += size;
    IntTensor t;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, size);
      end = std::clamp<int64_t>(end, 0, size);
      for (int64_t i = start; i < end; i = checkedAdd(i, step).value_or(end))
        t.values.push_back(in[0]->values[i]);
    } else {
      start = std::clamp<int64_t>(start, -1, size - 1);
      end = std::clamp<int64_t>(end, -1, size - 1);
      for (int64_t i = start; i > end; i = checkedAdd(i, step).value_or(end))
        t.values.push_back(in[0]->values[i]);
    }
    t.dims = {static_cast<int64_t>(t.values.size())};
    return t;
  }
  if (op == "Range") {
    if (!known(0) || !known(1) || !known(2) || in[2]->values.empty() || in[2]->values[0] == 0)
      return std::nullopt;
    if (in[0]->values.empty() || in[1]->values.empty())
      return std::nullopt;
    int64_t s = in[0]->values[0], l = in[1]->values[0], d = in[2]->values[0];
    CheckedInt span = checkedSub(l, s);
    CheckedInt rounded = span ? checkedAdd(*span, d + (d > 0 ? -1 : 1)) : std::nullopt;
    CheckedInt q = rounded ? checkedDiv(*rounded, d) : std::nullopt;
    if (!q)
      return std::nullopt;
    int64_t count = std::max<int64_t>(0, *q);
    if (count > static_cast<int64_t>(kMaxFoldElements))
      return std::nullopt;
    IntTensor t{{count}, {}};
    for (int64_t i = 0; i < count; ++i) {
      CheckedInt step = checkedMul(i, d);
      CheckedInt v = step ? checkedAdd(s, *step) : std::nullopt;
      if (!v)
        return std::nullopt;
      t.values.push_back(*v);
    }
    return t;
  }
  if (op == "Neg" || op == "Abs") {
    if (!known(0))
      return std::nullopt;
    IntTensor t = *in[0];
    for (int64_t &v : t.values) {
      CheckedInt r = v < 0 || op == "Neg" ? checkedNeg(v) : CheckedInt(v);
      if (!r)
        return std::nullopt;  // -INT64_MIN
      v = *r;
    }
    return t;
  }
  if (op == "ReduceProd" || op == "ReduceSum") {
    if (!known(0) || in[0]->dims.size() != 1 || n.attr("axes") || in.size() > 1)
      return std::nullopt;
    CheckedInt acc = op == "ReduceProd" ? 1 : 0;
    for (int64_t v : in[0]->values)
      if (acc)
        acc = op == "ReduceProd" ? checkedMul(*acc, v) : checkedAdd(*acc, v);
    if (!acc)
      return std::nullopt;
    bool keep = n.attrInt("keepdims").value_or(1) != 0;
    return IntTensor{keep ? std::vector<int64_t>{1} : std::vector<int64_t>{}, {*acc}};
  }
  // Integer Div truncates (ONNX follows C); integer Mod with fmod = 0 takes
  // the divisor's sign. Division by zero is not folded.
  BinOp f = nullptr;
  if (op == "Add") f = checkedAdd;
  else if (op == "Sub") f = checkedSub;
  else if (op == "Mul") f = checkedMul;
  else if (op == "Div") f = checkedDiv;
  else if (op == "Mod" && n.attrInt("fmod").value_or(0) == 0) f = checkedFloorMod;
  else if (op == "Max") f = [](int64_t a, int64_t b) -> CheckedInt { return std::max(a, b); };
  else if (op == "Min") f = [](int64_t a, int64_t b) -> CheckedInt { return std::min(a, b); };
  else if (op == "Equal") f = [](int64_t a, int64_t b) -> CheckedInt { return a == b; };
  else if (op == "Less") f = [](int64_t a, int64_t b) -> CheckedInt { return a < b; };
  else if (op == "Greater") f = [](int64_t a, int64_t b) -> CheckedInt { return a > b; };
  if (f && in.size() == 2 && known(0) && known(1))
    return elementwise(*in[0], *in[1], f);
  if (op == "Where" && in.size() == 3 && known(0) && known(1) && known(2)) {
    size_t n0 = in[0]->values.size();
    if (in[1]->values.size() != n0 && in[1]->values.size() != 1)
      return std::nullopt;
    if (in[2]->values.size() != n0 && in[2]->values.size() != 1)
      return std::nullopt;
    IntTensor t{in[0]->dims, {}};
    for (size_t i = 0; i < n0; ++i)
      t.values.push_back(in[0]->values[i] ? in[1]->values[in[1]->values.size() == 1 ? 0 : i]
                                          : in[2]->values[in[2]->values.size() == 1 ? 0 : i]);
    return t;
  }
  return std::nullopt;
}

}  // namespace graphlint::onnxio
