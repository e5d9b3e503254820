// What every element of a tensor is, proved from how the graph builds it
// (include/graphlint/ir/ValueFacts.h): the bounds of index arithmetic, a
// bool tensor that is uniformly true or false, a tensor of zeros. Exporters
// that trace a model build some tensors from positions alone (transformers'
// attention masks under torch.export are `where(kv_index >= 0, 0, min)`),
// and these facts say what such a tensor holds without running it.
#include "graphlint/ir/ValueFacts.h"

#include "graphlint/ir/Graph.h"
#include "graphlint/ir/OpRegistry.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringSwitch.h>

#include <algorithm>
#include <limits>
#include <string>

namespace graphlint {

namespace {

// A walk deeper than this proves nothing (a mask's chain is under 10 hops).
constexpr unsigned kMaxDepth = 16;

std::optional<int64_t> intAttr(const Node &n, llvm::StringRef name) {
  std::optional<double> d = numericAttr(n, name);
  if (!d || *d != static_cast<double>(static_cast<int64_t>(*d)))
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

}  // namespace

ElementBounds elementBounds(const Value *v) { return bounds(v, 0); }

std::optional<bool> uniformBool(const Value *v) { return uniform(v, 0); }

bool isAllZero(const Value *v) { return zero(v, 0); }

bool isAllPassMask(const Value *v) { return allPass(v, 0); }

}  // namespace graphlint
