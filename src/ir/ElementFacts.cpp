// What every element of a tensor is, proved from how the graph builds it
// (include/graphlint/ir/ValueFacts.h): the bounds of index arithmetic, a
// bool tensor that is uniformly true or false, a tensor of zeros. Exporters
// that trace a model build some tensors from positions alone (transformers'
// attention masks under torch.export are `where(kv_index >= 0, 0, min)`),
// and these facts say what such a tensor holds without running it.
#include "graphlint/ir/ValueFacts.h"

#include "graphlint/ir/Broadcast.h"
#include "graphlint/ir/Graph.h"
#include "graphlint/ir/OpRegistry.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringSwitch.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>

namespace graphlint {

namespace {

// A walk deeper than this proves nothing (a mask's chain is under 10 hops).
constexpr unsigned kMaxDepth = 16;

// An integer attribute read exactly (an Int kind as is: a slice's end may be
// INT64_MAX), or a float one that is a small whole number.
std::optional<int64_t> intAttr(const Node &n, llvm::StringRef name) {
  if (std::optional<int64_t> i = n.attrInt(name))
    return i;
  std::optional<double> d = numericAttr(n, name);
  if (!d || *d != std::floor(*d) || std::abs(*d) >= 9e15)
    return std::nullopt;
  return static_cast<int64_t>(*d);
}

bool isIntegerType(DType t) {
  switch (t) {
  case DType::Int8: case DType::Int16: case DType::Int32: case DType::Int64:
  case DType::UInt8: case DType::UInt16: case DType::UInt32: case DType::UInt64: case DType::Bool:
    return true;
  default:
    return false;
  }
}

const Value *input(const Node &n, unsigned i) { return i < n.inputs.size() ? n.inputs[i] : nullptr; }

// The node `v` is output 0 of, or nullptr (an input, a parameter, another
// output of a node: the facts follow output 0 only).
const Node *producerOf(const Value *v) {
  if (v->kind != Value::Kind::NodeOutput || !v->producer || v->producer->outputs.empty() ||
      v->producer->outputs[0] != v)
    return nullptr;
  return v->producer;
}

bool isWhere(const Node &n) { return n.atenName() == "where" || (isDefaultDomain(n.domain) && n.opType == "Where"); }

// The payload of a Param or an ai.onnx Constant (not through views: the
// callers walk those themselves).
const TensorLiteral *literalOf(const Value *v) {
  if (v->kind == Value::Kind::Param)
    return v->param ? &v->param->tensor : nullptr;
  if (v->kind == Value::Kind::NodeOutput && v->producer && isDefaultDomain(v->producer->domain) &&
      v->producer->opType == "Constant") {
    const Attribute *a = v->producer->attr("value");
    return a && a->tensors.size() == 1 ? &a->tensors[0] : nullptr;
  }
  return nullptr;
}

// Ops whose output 0 holds only elements of input 0 (views, copies,
// broadcasts, slices): bounds, uniformity and zeros carry through.
bool keepsElements(const Node &n) {
  if (isViewOp(n))
    return true;
  if (isDefaultDomain(n.domain))
    return llvm::StringSwitch<bool>(n.opType)
        .Cases("Identity", "Expand", "Unsqueeze", "Squeeze", "Reshape", "Slice", "Transpose", true)
        .Default(false);
  std::string a = n.atenName();
  return llvm::StringSwitch<bool>(a)
      .Cases("alias", "clone", "contiguous", "expand", "expand_as", "unsqueeze", "squeeze", "view", true)
      .Cases("reshape", "slice", "select", "narrow", "permute", "transpose", "t", "repeat", "flatten", true)
      .Default(false);
}

// A conversion to a dtype every element of the input fits unchanged in.
bool keepsValue(const Node &n, bool integer) {
  if (!isConversion(n) || n.inputs.empty() || !n.inputs[0] || n.outputs.empty() || !n.outputs[0])
    return false;
  DType out = n.outputs[0]->type.dtype;
  return integer ? isIntegerType(out) && out != DType::Bool && n.inputs[0]->type.dtype != DType::Bool : true;
}

ElementBounds bounds(const Value *v, unsigned depth);

ElementBounds sumOf(ElementBounds a, ElementBounds b, bool subtract) {
  ElementBounds out;
  auto add = [](std::optional<int64_t> x, std::optional<int64_t> y) -> std::optional<int64_t> {
    int64_t r;
    if (!x || !y || __builtin_add_overflow(*x, *y, &r))
      return std::nullopt;
    return r;
  };
  auto neg = [](std::optional<int64_t> x) -> std::optional<int64_t> {
    if (!x || *x == std::numeric_limits<int64_t>::min())
      return std::nullopt;
    return -*x;
  };
  if (subtract) {
    out.lo = add(a.lo, neg(b.hi));
    out.hi = add(a.hi, neg(b.lo));
  } else {
    out.lo = add(a.lo, b.lo);
    out.hi = add(a.hi, b.hi);
  }
  return out;
}

ElementBounds bounds(const Value *v, unsigned depth) {
  v = captureOrigin(v);
  if (!v || depth > kMaxDepth || !isIntegerType(v->type.dtype) || v->type.dtype == DType::Bool)
    return {};
  if (const TensorLiteral *lit = literalOf(v)) {
    if (!lit->data.known || lit->data.ints.empty())
      return {};
    auto [lo, hi] = std::minmax_element(lit->data.ints.begin(), lit->data.ints.end());
    return {*lo, *hi};
  }
  const Node *p = producerOf(v);
  if (!p)
    return {};
  const Node &n = *p;
  if (keepsElements(n) || keepsValue(n, true))
    return bounds(input(n, 0), depth + 1);
  std::string a = n.atenName();
  if (a == "arange") {
    // arange(end), arange(start, end), arange(start, end, step): an empty
    // range holds no element, so any bounds are true of it.
    int64_t start = intAttr(n, "start").value_or(0), step = intAttr(n, "step").value_or(1);
    if ((n.attr("start") && !intAttr(n, "start")) || (n.attr("step") && !intAttr(n, "step")) || step <= 0)
      return {};
    ElementBounds out{start, std::nullopt};
    if (std::optional<int64_t> end = intAttr(n, "end"); end && *end > std::numeric_limits<int64_t>::min())
      out.hi = *end - 1;
    return out;
  }
  if (isDefaultDomain(n.domain) && n.opType == "Range") {
    const ConstData *start = constantPayload(input(n, 0)), *limit = constantPayload(input(n, 1)),
                    *delta = constantPayload(input(n, 2));
    if (!start || !delta || start->ints.size() != 1 || delta->ints.size() != 1 || delta->ints[0] <= 0)
      return {};
    ElementBounds out{start->ints[0], std::nullopt};
    if (limit && limit->ints.size() == 1 && limit->ints[0] > std::numeric_limits<int64_t>::min())
      out.hi = limit->ints[0] - 1;
    return out;
  }
  bool add = a == "add" || (isDefaultDomain(n.domain) && n.opType == "Add");
  bool sub = a == "sub" || a == "rsub" || (isDefaultDomain(n.domain) && n.opType == "Sub");
  if (!add && !sub)
    return {};
  // aten's alpha scales the second operand; only alpha = 1 is followed.
  if (n.attr("alpha") && intAttr(n, "alpha") != 1)
    return {};
  ElementBounds lhs = bounds(input(n, 0), depth + 1), rhs;
  if (n.inputs.size() >= 2) {
    rhs = bounds(input(n, 1), depth + 1);
  } else if (std::optional<int64_t> other = intAttr(n, "other")) {
    rhs = {*other, *other};
  } else {
    return {};
  }
  if (a == "rsub")
    std::swap(lhs, rhs);
  return sumOf(lhs, rhs, sub);
}

// A comparison the operands' bounds decide for every element.
std::optional<bool> compare(llvm::StringRef op, ElementBounds l, ElementBounds r) {
  auto le = [](std::optional<int64_t> x, std::optional<int64_t> y) { return x && y && *x <= *y; };
  auto lt = [](std::optional<int64_t> x, std::optional<int64_t> y) { return x && y && *x < *y; };
  if (op == "ge") {
    if (le(r.hi, l.lo))
      return true;
    if (lt(l.hi, r.lo))
      return false;
  } else if (op == "gt") {
    if (lt(r.hi, l.lo))
      return true;
    if (le(l.hi, r.lo))
      return false;
  } else if (op == "le") {
    return compare("ge", r, l);
  } else if (op == "lt") {
    return compare("gt", r, l);
  }
  return std::nullopt;
}

std::optional<bool> uniform(const Value *v, unsigned depth) {
  v = captureOrigin(v);
  if (!v || depth > kMaxDepth || v->type.dtype != DType::Bool)
    return std::nullopt;
  if (const TensorLiteral *lit = literalOf(v)) {
    if (lit->uniformByte == 0 || lit->uniformByte == 1)
      return *lit->uniformByte == 1;
    if (!lit->data.known || lit->data.ints.empty())
      return std::nullopt;
    bool first = lit->data.ints[0] != 0;
    for (int64_t x : lit->data.ints)
      if ((x != 0) != first)
        return std::nullopt;
    return first;
  }
  const Node *p = producerOf(v);
  if (!p)
    return std::nullopt;
  const Node &n = *p;
  if (keepsElements(n))
    return uniform(input(n, 0), depth + 1);
  std::string a = n.atenName();
  llvm::StringRef op = a;
  if (isDefaultDomain(n.domain))
    op = llvm::StringSwitch<llvm::StringRef>(n.opType)
             .Case("GreaterOrEqual", "ge")
             .Case("Greater", "gt")
             .Case("LessOrEqual", "le")
             .Case("Less", "lt")
             .Case("And", "logical_and")
             .Case("Or", "logical_or")
             .Case("Not", "logical_not")
             .Default("");
  if (op == "ge" || op == "gt" || op == "le" || op == "lt") {
    ElementBounds l = bounds(input(n, 0), depth + 1), r;
    if (n.inputs.size() >= 2)
      r = bounds(input(n, 1), depth + 1);
    else if (std::optional<int64_t> other = intAttr(n, "other"))
      r = {*other, *other};
    return compare(op, l, r);
  }
  if (op == "logical_and" || op == "bitwise_and" || op == "__and__" || op == "logical_or" ||
      op == "bitwise_or" || op == "__or__") {
    bool conj = op.contains("and");
    std::optional<bool> x = uniform(input(n, 0), depth + 1), y = uniform(input(n, 1), depth + 1);
    // false absorbs an and, true an or; otherwise both must be known.
    if ((x && *x != conj) || (y && *y != conj))
      return !conj;
    if (x && y)
      return conj;
    return std::nullopt;
  }
  if (op == "logical_not" || op == "bitwise_not") {
    std::optional<bool> x = uniform(input(n, 0), depth + 1);
    return x ? std::optional<bool>(!*x) : std::nullopt;
  }
  if (op == "ones" || op == "ones_like" || op == "new_ones")
    return true;
  if (op == "zeros" || op == "zeros_like" || op == "new_zeros")
    return false;
  if (op == "full" || op == "full_like" || op == "new_full" || op == "scalar_tensor") {
    std::optional<double> f = numericAttr(n, op == "scalar_tensor" ? "s" : "fill_value");
    return f ? std::optional<bool>(*f != 0) : std::nullopt;
  }
  return std::nullopt;
}

bool allZero(const ConstData &d) {
  return d.known && (d.floats.size() + d.ints.size()) > 0 &&
         std::all_of(d.floats.begin(), d.floats.end(), [](double x) { return x == 0; }) &&
         std::all_of(d.ints.begin(), d.ints.end(), [](int64_t x) { return x == 0; });
}

bool zero(const Value *v, unsigned depth) {
  v = captureOrigin(v);
  if (!v || depth > kMaxDepth)
    return false;
  if (const TensorLiteral *lit = literalOf(v))
    return lit->uniformByte == 0 || allZero(lit->data);
  const Node *p = producerOf(v);
  if (!p)
    return false;
  const Node &n = *p;
  if (keepsElements(n) || keepsValue(n, false))
    return zero(input(n, 0), depth + 1);
  std::string a = n.atenName();
  if (a == "zeros" || a == "zeros_like" || a == "new_zeros")
    return true;
  if (a == "full" || a == "full_like" || a == "new_full" || a == "scalar_tensor")
    return numericAttr(n, a == "scalar_tensor" ? "s" : "fill_value") == 0.0;
  // where(cond, self, other): the branch a uniform condition picks. A
  // scalar branch is an attribute (where.ScalarOther, .ScalarSelf, .Scalar).
  if (isWhere(n)) {
    std::optional<bool> cond = uniform(input(n, 0), depth + 1);
    if (!cond)
      return false;
    llvm::StringRef branch = *cond ? "self" : "other";
    if (std::optional<double> s = numericAttr(n, branch))
      return *s == 0;
    // The tensor branches in order, after the scalar ones taken out.
    unsigned index = 1 + (!*cond && !n.attr("self") ? 1 : 0);
    return zero(input(n, index), depth + 1);
  }
  if (isDefaultDomain(n.domain) && n.opType == "ConstantOfShape") {
    const Attribute *value = n.attr("value");
    if (!value)
      return true;  // ONNX's default fill is 0
    return value->tensors.size() == 1 && allZero(value->tensors[0].data);
  }
  return false;
}

// torch.fx names a node after its op ("where", "where_3"), and the dynamo
// ONNX exporter names each value, folded ones too, after its FX node.
bool namedAfterFxNode(llvm::StringRef name, llvm::StringRef op) {
  if (!name.consume_front(op))
    return false;
  return name.empty() || (name.consume_front("_") && !name.empty() && llvm::all_of(name, llvm::isDigit));
}

bool allPass(const Value *v, unsigned depth) {
  v = captureOrigin(v);
  if (!v || depth > kMaxDepth)
    return false;
  if (v->kind == Value::Kind::Param)
    return v->param && v->param->computed && namedAfterFxNode(v->param->tensor.name, "where") && zero(v, depth);
  const Node *p = producerOf(v);
  if (!p)
    return false;
  const Node &n = *p;
  if (keepsElements(n) || keepsValue(n, false))
    return allPass(input(n, 0), depth + 1);
  return isWhere(n) && zero(v, depth);
}


// ---- Small integer tensors, evaluated --------------------------------------
//
// A causal mask is an `and` of comparisons between small index tensors
// broadcast against each other ([b, 1, s, 1] against [b, 1, 1, s]). The
// small ones are evaluated element by element; the large bool tensors are
// kept as their terms and checked against the pattern at the end.

constexpr int64_t kMaxSmall = int64_t{1} << 20;
constexpr int64_t kMaxMask = int64_t{1} << 27;

struct IntTensor {
  std::vector<int64_t> shape;
  std::vector<int64_t> data;
};

std::optional<std::vector<int64_t>> staticShape(const Value *v) {
  if (!v || !v->type.isTensor() || !v->type.shape.rankKnown)
    return std::nullopt;
  std::vector<int64_t> out;
  for (const Dim &d : v->type.shape.dims) {
    if (!d.isStatic())
      return std::nullopt;
    out.push_back(d.value);
  }
  return out;
}

std::optional<size_t> normDim(std::optional<int64_t> d, size_t rank) {
  if (!d)
    return std::nullopt;
  int64_t r = static_cast<int64_t>(rank);
  int64_t x = *d < 0 ? *d + r : *d;
  return x >= 0 && x < r ? std::optional<size_t>(static_cast<size_t>(x)) : std::nullopt;
}

std::optional<IntTensor> elementwise(const IntTensor &a, const IntTensor &b,
                                     const std::function<std::optional<int64_t>(int64_t, int64_t)> &f) {
  std::optional<std::vector<int64_t>> out = broadcastShapes({&a.shape, &b.shape});
  std::optional<int64_t> n = out ? elementCount(*out) : std::nullopt;
  if (!n || *n > kMaxSmall)
    return std::nullopt;
  std::vector<int64_t> sa = *broadcastStrides(a.shape, *out), sb = *broadcastStrides(b.shape, *out);
  IntTensor r{*out, {}};
  r.data.reserve(static_cast<size_t>(*n));
  bool ok = true;
  forEachBroadcast(*out, {sa, sb}, [&](int64_t, llvm::ArrayRef<int64_t> off) {
    std::optional<int64_t> x = f(a.data[static_cast<size_t>(off[0])], b.data[static_cast<size_t>(off[1])]);
    ok &= x.has_value();
    r.data.push_back(x.value_or(0));
  });
  return ok ? std::optional<IntTensor>(std::move(r)) : std::nullopt;
}

IntTensor scalarTensor(int64_t x) { return {{}, {x}}; }

std::optional<IntTensor> evalSmall(const Value *v, unsigned depth);

// A scalar operand: the second input, or the `other` attribute.
std::optional<IntTensor> operand(const Node &n, unsigned i, unsigned depth) {
  if (i < n.inputs.size() && n.inputs[i])
    return evalSmall(n.inputs[i], depth + 1);
  if (i == 1)
    if (std::optional<int64_t> other = intAttr(n, "other"))
      return scalarTensor(*other);
  return std::nullopt;
}

std::optional<std::function<std::optional<int64_t>(int64_t, int64_t)>> binaryOp(llvm::StringRef op) {
  using R = std::optional<int64_t>;
  if (op == "add")
    return [](int64_t x, int64_t y) -> R {
      int64_t r;
      return __builtin_add_overflow(x, y, &r) ? R() : R(r);
    };
  if (op == "sub")
    return [](int64_t x, int64_t y) -> R {
      int64_t r;
      return __builtin_sub_overflow(x, y, &r) ? R() : R(r);
    };
  if (op == "mul")
    return [](int64_t x, int64_t y) -> R {
      int64_t r;
      return __builtin_mul_overflow(x, y, &r) ? R() : R(r);
    };
  if (op == "eq")
    return [](int64_t x, int64_t y) -> R { return x == y; };
  if (op == "ne")
    return [](int64_t x, int64_t y) -> R { return x != y; };
  if (op == "le")
    return [](int64_t x, int64_t y) -> R { return x <= y; };
  if (op == "lt")
    return [](int64_t x, int64_t y) -> R { return x < y; };
  if (op == "ge")
    return [](int64_t x, int64_t y) -> R { return x >= y; };
  if (op == "gt")
    return [](int64_t x, int64_t y) -> R { return x > y; };
  if (op == "and")
    return [](int64_t x, int64_t y) -> R { return x != 0 && y != 0; };
  if (op == "or")
    return [](int64_t x, int64_t y) -> R { return x != 0 || y != 0; };
  return std::nullopt;
}

// The aten op name an integer or bool op is evaluated as ("add", "le",
// "and"), or "".
llvm::StringRef binaryName(llvm::StringRef a) {
  return llvm::StringSwitch<llvm::StringRef>(a)
      .Cases("add", "sub", "mul", "eq", "ne", "le", "lt", a)
      .Cases("ge", "gt", a)
      .Cases("bitwise_and", "logical_and", "__and__", "and")
      .Cases("bitwise_or", "logical_or", "__or__", "or")
      .Default("");
}

std::optional<IntTensor> evalNode(const Node &n, const Value *v, unsigned depth) {
  std::string a = n.atenName();
  std::optional<std::vector<int64_t>> outShape = staticShape(v);
  if (!outShape)
    return std::nullopt;
  std::optional<int64_t> outNumel = elementCount(*outShape);
  if (!outNumel || *outNumel > kMaxSmall)
    return std::nullopt;
  bool boolOut = v->type.dtype == DType::Bool;
  auto filled = [&](int64_t x) { return IntTensor{*outShape, std::vector<int64_t>(static_cast<size_t>(*outNumel), x)}; };

  if (a == "arange") {
    int64_t start = intAttr(n, "start").value_or(0), step = intAttr(n, "step").value_or(1);
    std::optional<int64_t> end = intAttr(n, "end");
    if (!end || (n.attr("start") && !intAttr(n, "start")) || (n.attr("step") && !intAttr(n, "step")) || step <= 0 ||
        outShape->size() != 1)
      return std::nullopt;
    IntTensor r{*outShape, {}};
    for (int64_t x = start; x < *end; x += step)
      r.data.push_back(x);
    return static_cast<int64_t>(r.data.size()) == (*outShape)[0] ? std::optional<IntTensor>(r) : std::nullopt;
  }
  if (a == "alias" || a == "clone" || a == "contiguous" || a == "detach" || a == "lift_fresh_copy" ||
      a == "to" || a == "_to_copy" || a == "expand" || a == "expand_as" || a == "view" || a == "_unsafe_view" ||
      a == "reshape" || a == "unsqueeze" || a == "squeeze" || a == "flatten") {
    if (n.inputs.empty())
      return std::nullopt;
    std::optional<IntTensor> x = evalSmall(n.inputs[0], depth + 1);
    if (!x)
      return std::nullopt;
    if (boolOut)
      for (int64_t &e : x->data)
        e = e != 0;
    std::optional<int64_t> in = elementCount(x->shape);
    if (a == "expand" || a == "expand_as") {
      std::optional<std::vector<int64_t>> st = broadcastStrides(x->shape, *outShape);
      if (!st)
        return std::nullopt;
      IntTensor r{*outShape, {}};
      forEachBroadcast(*outShape, {*st}, [&](int64_t, llvm::ArrayRef<int64_t> off) {
        r.data.push_back(x->data[static_cast<size_t>(off[0])]);
      });
      return r;
    }
    // Row-major reinterpretations and copies: the elements in order.
    if (!in || *in != *outNumel)
      return std::nullopt;
    x->shape = *outShape;
    return x;
  }
  if (a == "slice" || a == "select" || a == "narrow") {
    std::optional<IntTensor> x = n.inputs.empty() ? std::nullopt : evalSmall(n.inputs[0], depth + 1);
    if (!x)
      return std::nullopt;
    std::optional<size_t> dim = normDim(intAttr(n, "dim").value_or(0), x->shape.size());
    if (!dim)
      return std::nullopt;
    int64_t size = x->shape[*dim], start, step = 1, count;
    if (a == "select") {
      std::optional<int64_t> i = intAttr(n, "index");
      if (!i)
        return std::nullopt;
      start = *i < 0 ? *i + size : *i;
      count = 1;
      if (start < 0 || start >= size)
        return std::nullopt;
    } else if (a == "narrow") {
      std::optional<int64_t> s = intAttr(n, "start"), len = intAttr(n, "length");
      if (!s || !len)
        return std::nullopt;
      start = *s < 0 ? *s + size : *s;
      count = *len;
    } else {
      step = intAttr(n, "step").value_or(1);
      start = intAttr(n, "start").value_or(0);
      int64_t end = n.attr("end") ? intAttr(n, "end").value_or(std::numeric_limits<int64_t>::max())
                                  : std::numeric_limits<int64_t>::max();
      if (step <= 0 || (n.attr("start") && !intAttr(n, "start")))
        return std::nullopt;
      start = start < 0 ? std::max<int64_t>(start + size, 0) : std::min(start, size);
      end = end < 0 ? std::max<int64_t>(end + size, 0) : std::min(end, size);
      count = end > start ? (end - start + step - 1) / step : 0;
    }
    std::vector<int64_t> shape = x->shape;
    shape[*dim] = count;
    if (a == "select")
      shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(*dim));
    if (shape != *outShape)
      return std::nullopt;
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < *dim; ++d)
      outer *= x->shape[d];
    for (size_t d = *dim + 1; d < x->shape.size(); ++d)
      inner *= x->shape[d];
    IntTensor r{shape, {}};
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t c = 0; c < count; ++c)
        for (int64_t i = 0; i < inner; ++i)
          r.data.push_back(x->data[static_cast<size_t>((o * size + start + c * step) * inner + i)]);
    return r;
  }
  if (a == "index") {
    // x[i0, i1, ...]: index tensors for the leading dims, broadcast together
    // (an index list with gaps is caught by the shape check).
    if (n.inputs.size() < 2)
      return std::nullopt;
    std::optional<IntTensor> x = evalSmall(n.inputs[0], depth + 1);
    size_t k = n.inputs.size() - 1;
    if (!x || k > x->shape.size())
      return std::nullopt;
    std::vector<IntTensor> idx;
    std::vector<int64_t> bshape;
    for (size_t i = 1; i < n.inputs.size(); ++i) {
      std::optional<IntTensor> t = evalSmall(n.inputs[i], depth + 1);
      std::optional<std::vector<int64_t>> b = t ? broadcastShapes({&bshape, &t->shape}) : std::nullopt;
      if (!b || n.inputs[i]->type.dtype == DType::Bool)
        return std::nullopt;
      bshape = *b;
      idx.push_back(std::move(*t));
    }
    std::vector<int64_t> shape = bshape;
    shape.insert(shape.end(), x->shape.begin() + static_cast<std::ptrdiff_t>(k), x->shape.end());
    if (shape != *outShape)
      return std::nullopt;
    int64_t inner = 1;
    for (size_t d = k; d < x->shape.size(); ++d)
      inner *= x->shape[d];
    std::vector<std::vector<int64_t>> strides;
    for (const IntTensor &t : idx)
      strides.push_back(*broadcastStrides(t.shape, bshape));
    IntTensor r{shape, {}};
    bool ok = true;
    forEachBroadcast(bshape, strides, [&](int64_t, llvm::ArrayRef<int64_t> off) {
      int64_t flat = 0;
      for (size_t d = 0; d < k; ++d) {
        int64_t i = idx[d].data[static_cast<size_t>(off[d])], size = x->shape[d];
        i = i < 0 ? i + size : i;
        ok &= i >= 0 && i < size;
        flat = flat * size + std::clamp<int64_t>(i, 0, size - 1);
      }
      for (int64_t e = 0; e < inner; ++e)
        r.data.push_back(x->data[static_cast<size_t>(flat * inner + e)]);
    });
    return ok ? std::optional<IntTensor>(std::move(r)) : std::nullopt;
  }
  if (a == "cat" || a == "diff") {
    // diff(x, n=1, dim, prepend): cat(prepend, x) along dim, then
    // x[1:] - x[:-1].
    std::optional<size_t> dim;
    std::vector<IntTensor> parts;
    for (const Value *in : n.inputs) {
      std::optional<IntTensor> t = evalSmall(in, depth + 1);
      if (!t)
        return std::nullopt;
      parts.push_back(std::move(*t));
    }
    if (parts.empty() || (a == "diff" && (intAttr(n, "n").value_or(1) != 1 || parts.size() > 2)))
      return std::nullopt;
    if (a == "diff" && parts.size() == 2)
      std::swap(parts[0], parts[1]);  // the prepend first
    dim = normDim(intAttr(n, "dim").value_or(a == "diff" ? -1 : 0), parts.back().shape.size());
    if (!dim)
      return std::nullopt;
    std::vector<int64_t> shape = parts[0].shape;
    shape[*dim] = 0;
    for (const IntTensor &t : parts) {
      if (t.shape.size() != shape.size())
        return std::nullopt;
      for (size_t d = 0; d < shape.size(); ++d)
        if (d != *dim && t.shape[d] != shape[d])
          return std::nullopt;
      shape[*dim] += t.shape[*dim];
    }
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < *dim; ++d)
      outer *= shape[d];
    for (size_t d = *dim + 1; d < shape.size(); ++d)
      inner *= shape[d];
    IntTensor r{shape, {}};
    for (int64_t o = 0; o < outer; ++o)
      for (const IntTensor &t : parts) {
        int64_t chunk = t.shape[*dim] * inner;
        r.data.insert(r.data.end(), t.data.begin() + static_cast<std::ptrdiff_t>(o * chunk),
                      t.data.begin() + static_cast<std::ptrdiff_t>((o + 1) * chunk));
      }
    if (a == "diff") {
      int64_t len = shape[*dim];
      if (len < 1)
        return std::nullopt;
      IntTensor d{shape, {}};
      d.shape[*dim] = len - 1;
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t c = 0; c + 1 < len; ++c)
          for (int64_t i = 0; i < inner; ++i)
            d.data.push_back(r.data[static_cast<size_t>((o * len + c + 1) * inner + i)] -
                             r.data[static_cast<size_t>((o * len + c) * inner + i)]);
      r = std::move(d);
    }
    return r.shape == *outShape ? std::optional<IntTensor>(std::move(r)) : std::nullopt;
  }
  if (a == "cumsum") {
    std::optional<IntTensor> x = n.inputs.empty() ? std::nullopt : evalSmall(n.inputs[0], depth + 1);
    std::optional<size_t> dim = x ? normDim(intAttr(n, "dim"), x->shape.size()) : std::nullopt;
    if (!dim || x->shape != *outShape)
      return std::nullopt;
    int64_t outer = 1, inner = 1, len = x->shape[*dim];
    for (size_t d = 0; d < *dim; ++d)
      outer *= x->shape[d];
    for (size_t d = *dim + 1; d < x->shape.size(); ++d)
      inner *= x->shape[d];
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i)
        for (int64_t c = 1; c < len; ++c)
          x->data[static_cast<size_t>((o * len + c) * inner + i)] += x->data[static_cast<size_t>((o * len + c - 1) * inner + i)];
    return x;
  }
  if (a == "rsub" || !binaryName(a).empty()) {
    if (n.attr("alpha") && intAttr(n, "alpha") != 1)
      return std::nullopt;
    std::optional<IntTensor> x = operand(n, 0, depth), y = operand(n, 1, depth);
    if (!x || !y)
      return std::nullopt;
    if (a == "rsub")
      std::swap(x, y);
    std::optional<IntTensor> r = elementwise(*x, *y, *binaryOp(a == "rsub" ? "sub" : binaryName(a)));
    return r && r->shape == *outShape ? r : std::nullopt;
  }
  if (a == "logical_not" || a == "bitwise_not") {
    std::optional<IntTensor> x = n.inputs.empty() ? std::nullopt : evalSmall(n.inputs[0], depth + 1);
    if (!x || x->shape != *outShape || !boolOut)
      return std::nullopt;
    for (int64_t &e : x->data)
      e = e == 0;
    return x;
  }
  if (a == "ones" || a == "ones_like" || a == "new_ones")
    return filled(1);
  if (a == "zeros" || a == "zeros_like" || a == "new_zeros")
    return filled(0);
  if (a == "full" || a == "full_like" || a == "new_full" || a == "scalar_tensor") {
    std::optional<double> f = numericAttr(n, a == "scalar_tensor" ? "s" : "fill_value");
    if (!f || *f != std::floor(*f) || std::abs(*f) > 9e15)
      return std::nullopt;
    return filled(boolOut ? *f != 0 : static_cast<int64_t>(*f));
  }
  return std::nullopt;
}

std::optional<IntTensor> evalSmall(const Value *v, unsigned depth) {
  v = captureOrigin(v);
  if (!v || depth > 4 * kMaxDepth || !isIntegerType(v->type.dtype))
    return std::nullopt;
  if (const TensorLiteral *lit = literalOf(v)) {
    std::optional<std::vector<int64_t>> shape = staticShape(v);
    std::optional<int64_t> n = shape ? elementCount(*shape) : std::nullopt;
    if (!n || !lit->data.known || static_cast<int64_t>(lit->data.ints.size()) != *n)
      return std::nullopt;
    return IntTensor{*shape, lit->data.ints};
  }
  const Node *p = producerOf(v);
  return p ? evalNode(*p, v, depth) : std::nullopt;
}

// ---- The causal mask ---------------------------------------------------------

// One factor of a bool tensor's `and`: a small tensor, or a comparison of
// two, each broadcast against the mask's shape.
enum class TermKind { AllTrue, Causal, Other };

struct MaskTerm {
  std::string op;  // "" (the tensor a itself) or a comparison
  IntTensor a, b;
  std::optional<TermKind> known;  // proved without evaluating (a uniform or read-back fold)
};

// The aten name of an ai.onnx bool op the mask terms follow, else "".
std::string maskOpName(const Node &n) {
  if (!isDefaultDomain(n.domain))
    return n.atenName();
  return llvm::StringSwitch<std::string>(n.opType)
      .Case("And", "logical_and")
      .Case("Equal", "eq")
      .Case("Less", "lt")
      .Case("LessOrEqual", "le")
      .Case("Greater", "gt")
      .Case("GreaterOrEqual", "ge")
      .Cases("Expand", "Identity", "expand")
      .Default("");
}

bool maskTerms(const Value *v, unsigned depth, std::vector<MaskTerm> &out) {
  v = captureOrigin(v);
  if (!v || depth > kMaxDepth || v->type.dtype != DType::Bool)
    return false;
  if (const TensorLiteral *lit = literalOf(v); lit && lit->causalMask) {
    out.push_back({"", {}, {}, TermKind::Causal});
    return true;
  }
  if (uniform(v, 0) == true) {
    out.push_back({"", {}, {}, TermKind::AllTrue});
    return true;
  }
  if (std::optional<IntTensor> t = evalSmall(v, 0)) {
    out.push_back({"", std::move(*t), {}, std::nullopt});
    return true;
  }
  const Node *p = producerOf(v);
  if (!p)
    return false;
  const Node &n = *p;
  std::string a = maskOpName(n);
  // Broadcasts and copies keep the elements where right-aligned
  // broadcasting puts them.
  if (a == "expand" || a == "alias" || a == "clone" || a == "contiguous" || a == "detach" || a == "to" ||
      a == "_to_copy")
    return !n.inputs.empty() && n.inputs[0] && n.inputs[0]->type.dtype == DType::Bool &&
           maskTerms(n.inputs[0], depth + 1, out);
  llvm::StringRef op = binaryName(a);
  if (op == "and")
    return n.inputs.size() == 2 && maskTerms(n.inputs[0], depth + 1, out) && maskTerms(n.inputs[1], depth + 1, out);
  if (op == "eq" || op == "ne" || op == "le" || op == "lt" || op == "ge" || op == "gt") {
    std::optional<IntTensor> x = operand(n, 0, 0), y = operand(n, 1, 0);
    if (!x || !y)
      return false;
    out.push_back({op.str(), std::move(*x), std::move(*y), std::nullopt});
    return true;
  }
  return false;
}

// What a term is over the mask's shape: every element true, exactly
// `j <= i` on the last two dims, or neither.
TermKind classify(const MaskTerm &t, const std::vector<int64_t> &shape) {
  if (t.known)
    return *t.known;
  std::optional<std::vector<int64_t>> sa = broadcastStrides(t.a.shape, shape);
  std::optional<std::vector<int64_t>> sb = t.op.empty() ? sa : broadcastStrides(t.b.shape, shape);
  if (!sa || !sb)
    return TermKind::Other;
  std::optional<std::function<std::optional<int64_t>(int64_t, int64_t)>> f;
  if (!t.op.empty())
    f = binaryOp(t.op);
  int64_t s = shape.back();
  bool allTrue = true, causal = true;
  int64_t e = 0;
  forEachBroadcast(shape, {*sa, *sb}, [&](int64_t, llvm::ArrayRef<int64_t> off) {
    int64_t i = (e / s) % s, j = e % s;
    ++e;
    if (!allTrue && !causal)
      return;
    int64_t x = t.a.data[static_cast<size_t>(off[0])];
    bool val = f ? (*f)(x, t.b.data[static_cast<size_t>(off[1])]).value_or(0) != 0 : x != 0;
    allTrue &= val;
    causal &= val == (j <= i);
  });
  return allTrue ? TermKind::AllTrue : causal ? TermKind::Causal : TermKind::Other;
}

bool causalBool(const Value *v) {
  if (const TensorLiteral *lit = literalOf(captureOrigin(v)); lit && lit->causalMask)
    return true;  // the importer read the pattern from a fold's payload
  std::optional<std::vector<int64_t>> shape = staticShape(v);
  std::optional<int64_t> n = shape ? elementCount(*shape) : std::nullopt;
  if (!n || *n == 0 || *n > kMaxMask || shape->size() < 2 || shape->back() != (*shape)[shape->size() - 2])
    return false;
  std::vector<MaskTerm> terms;
  if (!maskTerms(v, 0, terms))
    return false;
  bool causal = false;
  for (const MaskTerm &t : terms) {
    TermKind k = classify(t, *shape);
    if (k == TermKind::Other)
      return false;
    causal |= k == TermKind::Causal;
  }
  return causal;
}

// A scalar a node writes: scalar_tensor(s), full(fill_value), a literal.
std::optional<double> scalarValue(const Value *v) {
  v = captureOrigin(v);
  if (!v)
    return std::nullopt;
  if (const TensorLiteral *lit = literalOf(v)) {
    if (lit->data.known && lit->data.floats.size() == 1)
      return lit->data.floats[0];
    if (lit->data.known && lit->data.ints.size() == 1)
      return static_cast<double>(lit->data.ints[0]);
    return std::nullopt;
  }
  const Node *p = producerOf(v);
  if (!p)
    return std::nullopt;
  std::string a = p->atenName();
  llvm::StringRef key = a == "scalar_tensor" ? "s" : (a == "full" || a == "new_full") ? "fill_value" : "";
  if (key.empty())
    return std::nullopt;
  if (const Attribute *attr = p->attr(key); attr && attr->kind == AttrKind::String)
    return attr->s == "-inf" ? std::optional<double>(-std::numeric_limits<double>::infinity()) : std::nullopt;
  return numericAttr(*p, key);
}
}  // namespace

ElementBounds elementBounds(const Value *v) { return bounds(v, 0); }

std::optional<bool> uniformBool(const Value *v) { return uniform(v, 0); }

bool isAllZero(const Value *v) { return zero(v, 0); }

bool isAllPassMask(const Value *v) { return allPass(v, 0); }

bool isCausalMask(const Value *v) {
  v = captureOrigin(v);
  if (!v)
    return false;
  if (v->type.dtype == DType::Bool)
    return causalBool(v);
  if (const TensorLiteral *lit = literalOf(v); lit && lit->causalMask)
    return true;  // a fold of the additive mask
  // where(causal, 0, negative): the additive form of the same mask.
  const Node *p = producerOf(v);
  if (!p || !isWhere(*p) || p->inputs.empty())
    return false;
  auto branch = [&](llvm::StringRef attr, unsigned &next) -> std::optional<double> {
    if (std::optional<double> s = numericAttr(*p, attr))
      return s;
    if (const Attribute *a = p->attr(attr); a && a->kind == AttrKind::String)
      return a->s == "-inf" ? std::optional<double>(-std::numeric_limits<double>::infinity()) : std::nullopt;
    const Value *in = next < p->inputs.size() ? p->inputs[next++] : nullptr;
    if (in && isAllZero(in))
      return 0.0;
    return in ? scalarValue(in) : std::nullopt;
  };
  unsigned next = 1;
  std::optional<double> keep = branch("self", next), drop = branch("other", next);
  return keep == 0.0 && drop && *drop < 0 && staticShape(p->inputs[0]) == staticShape(v) && causalBool(p->inputs[0]);
}

}  // namespace graphlint
