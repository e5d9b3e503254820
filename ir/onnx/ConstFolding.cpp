#include "ConstFolding.h"

#include <llvm/ADT/StringRef.h>

#include <numeric>

namespace graphlint::onnxio {
namespace {

int64_t numel(const std::vector<int64_t> &dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

std::optional<IntTensor> elementwise(const IntTensor &a, const IntTensor &b, int64_t (*f)(int64_t, int64_t)) {
  // Scalars and equal shapes cover the shape arithmetic exporters emit.
  IntTensor out;
  if (a.values.size() == b.values.size()) {
    out.dims = a.dims.size() >= b.dims.size() ? a.dims : b.dims;
    for (size_t i = 0; i < a.values.size(); ++i)
      out.values.push_back(f(a.values[i], b.values[i]));
  } else if (b.values.size() == 1) {
    out.dims = a.dims;
    for (int64_t v : a.values)
      out.values.push_back(f(v, b.values[0]));
  } else if (a.values.size() == 1) {
    out.dims = b.dims;
    for (int64_t v : b.values)
      out.values.push_back(f(a.values[0], v));
  } else {
    return std::nullopt;
  }
  return out;
}

int64_t floorDiv(int64_t a, int64_t b) {
  if (b == 0)
    return 0;
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
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
    if (!known(0) || numel(in[0]->values) > static_cast<int64_t>(kMaxFoldElements))
      return std::nullopt;
    int64_t fill = 0;
    if (const Attribute *v = n.attr("value"); v && !v->tensors.empty() && v->tensors[0].data.known) {
      if (!v->tensors[0].data.ints.empty())
        fill = v->tensors[0].data.ints[0];
      else
        return std::nullopt;
    }
    return IntTensor{in[0]->values, std::vector<int64_t>(numel(in[0]->values), fill)};
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
    if (in[1]->values.size() != 1)
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
      for (int64_t i = start; i < end; i += step)
        t.values.push_back(in[0]->values[i]);
    } else {
      start = std::clamp<int64_t>(start, -1, size - 1);
      end = std::clamp<int64_t>(end, -1, size - 1);
      for (int64_t i = start; i > end; i += step)
        t.values.push_back(in[0]->values[i]);
    }
    t.dims = {static_cast<int64_t>(t.values.size())};
    return t;
  }
  if (op == "Range") {
    if (!known(0) || !known(1) || !known(2) || in[2]->values.empty() || in[2]->values[0] == 0)
      return std::nullopt;
    int64_t s = in[0]->values[0], l = in[1]->values[0], d = in[2]->values[0];
    int64_t count = std::max<int64_t>(0, (l - s + d + (d > 0 ? -1 : 1)) / d);
    if (count > static_cast<int64_t>(kMaxFoldElements))
      return std::nullopt;
    IntTensor t{{count}, {}};
    for (int64_t i = 0; i < count; ++i)
      t.values.push_back(s + i * d);
    return t;
  }
  if (op == "Neg" || op == "Abs") {
    if (!known(0))
      return std::nullopt;
    IntTensor t = *in[0];
    for (int64_t &v : t.values)
      v = op == "Neg" ? -v : std::abs(v);
    return t;
  }
  if (op == "ReduceProd" || op == "ReduceSum") {
    if (!known(0) || in[0]->dims.size() != 1 || n.attr("axes") || in.size() > 1)
      return std::nullopt;
    int64_t acc = op == "ReduceProd" ? 1 : 0;
    for (int64_t v : in[0]->values)
      acc = op == "ReduceProd" ? acc * v : acc + v;
    bool keep = n.attrInt("keepdims").value_or(1) != 0;
    return IntTensor{keep ? std::vector<int64_t>{1} : std::vector<int64_t>{}, {acc}};
  }
  using BinOp = int64_t (*)(int64_t, int64_t);
  BinOp f = nullptr;
  if (op == "Add") f = [](int64_t a, int64_t b) { return a + b; };
  else if (op == "Sub") f = [](int64_t a, int64_t b) { return a - b; };
  else if (op == "Mul") f = [](int64_t a, int64_t b) { return a * b; };
  else if (op == "Div") f = [](int64_t a, int64_t b) { return b ? a / b : 0; };
  else if (op == "Mod") f = [](int64_t a, int64_t b) { return b ? a - floorDiv(a, b) * b : 0; };
  else if (op == "Max") f = [](int64_t a, int64_t b) { return std::max(a, b); };
  else if (op == "Min") f = [](int64_t a, int64_t b) { return std::min(a, b); };
  else if (op == "Equal") f = [](int64_t a, int64_t b) -> int64_t { return a == b; };
  else if (op == "Less") f = [](int64_t a, int64_t b) -> int64_t { return a < b; };
  else if (op == "Greater") f = [](int64_t a, int64_t b) -> int64_t { return a > b; };
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
