// Pointwise and broadcast ops of the cpu reference backend: unary math,
// binary arithmetic and comparisons with numpy broadcasting, variadic
// Sum/Min/Max/Mean, Where, Clip, Cast and the pass-through ops.
#include "CpuKernels.h"

#include <cmath>
#include <functional>

namespace graphlint::verify::cpu {
namespace {

constexpr double kPi = 3.14159265358979323846;

using UnaryFn = double (*)(const Node &, double);

template <UnaryFn F> llvm::Error unary(const Node &n, Inputs in, Outputs &out) {
  const HostTensor *x = input(in, 0);
  if (!x)
    return kernelError(n, "missing input");
  HostTensor y(x->dtype, x->shape);
  for (int64_t i = 0; i < x->numel(); ++i)
    y.data[i] = F(n, x->data[i]);
  return result(out, std::move(y));
}

double relu(const Node &, double x) { return x > 0 ? x : 0; }
double sigmoid(const Node &, double x) { return 1.0 / (1.0 + std::exp(-x)); }
double tanhF(const Node &, double x) { return std::tanh(x); }
double erfF(const Node &, double x) { return std::erf(x); }
double expF(const Node &, double x) { return std::exp(x); }
double logF(const Node &, double x) { return std::log(x); }
double sqrtF(const Node &, double x) { return std::sqrt(x); }
double neg(const Node &, double x) { return -x; }
double absF(const Node &, double x) { return std::fabs(x); }
double notF(const Node &, double x) { return x == 0 ? 1 : 0; }
double reciprocal(const Node &, double x) { return 1.0 / x; }
double floorF(const Node &, double x) { return std::floor(x); }
double ceilF(const Node &, double x) { return std::ceil(x); }
double roundF(const Node &, double x) { return std::nearbyint(x); }  // half to even
double sinF(const Node &, double x) { return std::sin(x); }
double cosF(const Node &, double x) { return std::cos(x); }
double signF(const Node &, double x) { return x > 0 ? 1 : (x < 0 ? -1 : 0); }
double softplus(const Node &, double x) { return std::log1p(std::exp(x)); }
double softsign(const Node &, double x) { return x / (1 + std::fabs(x)); }
double leakyRelu(const Node &n, double x) { return x >= 0 ? x : x * attrFloat(n, "alpha", 0.01); }
double elu(const Node &n, double x) { return x >= 0 ? x : attrFloat(n, "alpha", 1.0) * (std::exp(x) - 1); }
double selu(const Node &n, double x) {
  double a = attrFloat(n, "alpha", 1.67326319217681884765625), g = attrFloat(n, "gamma", 1.05070102214813232421875);
  return x > 0 ? g * x : g * (a * std::exp(x) - a);
}
double hardSigmoid(const Node &n, double x) {
  return std::max(0.0, std::min(1.0, attrFloat(n, "alpha", 0.2) * x + attrFloat(n, "beta", 0.5)));
}
double hardSwish(const Node &, double x) { return x * std::max(0.0, std::min(1.0, x / 6.0 + 0.5)); }
double gelu(const Node &n, double x) {
  if (attrString(n, "approximate", "none") == "tanh")
    return 0.5 * x * (1 + std::tanh(std::sqrt(2 / kPi) * (x + 0.044715 * x * x * x)));
  return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
}

// Broadcasting n-ary op: out = f(a, b, ...) with the result dtype `dt`.
llvm::Error broadcastOp(const Node &n, std::vector<const HostTensor *> xs, DType dt,
                        const std::function<double(const std::vector<double> &)> &f, Outputs &out) {
  std::vector<const std::vector<int64_t> *> shapes;
  for (const HostTensor *x : xs) {
    if (!x)
      return kernelError(n, "missing input");
    shapes.push_back(&x->shape);
  }
  auto shape = broadcastShapes(shapes);
  if (!shape)
    return kernelError(n, "inputs cannot be broadcast together");
  std::vector<std::vector<int64_t>> strides;
  for (const HostTensor *x : xs)
    strides.push_back(*broadcastStrides(x->shape, *shape));
  HostTensor y(dt, *shape);
  std::vector<double> args(xs.size());
  forEachBroadcast(*shape, strides, [&](int64_t i, const std::vector<int64_t> &off) {
    for (size_t j = 0; j < xs.size(); ++j)
      args[j] = xs[j]->data[off[j]];
    y.data[i] = f(args);
  });
  return result(out, std::move(y));
}

enum class Bin { Add, Sub, Mul, Div, Pow, Mod, Equal, Less, Greater, LessEq, GreaterEq, And, Or, Xor, PRelu };

template <Bin B> llvm::Error binary(const Node &n, Inputs in, Outputs &out) {
  const HostTensor *a = input(in, 0), *b = input(in, 1);
  if (!a || !b)
    return kernelError(n, "expects two inputs");
  bool compare = B == Bin::Equal || B == Bin::Less || B == Bin::Greater || B == Bin::LessEq ||
                 B == Bin::GreaterEq || B == Bin::And || B == Bin::Or || B == Bin::Xor;
  bool intDiv = isInteger(a->dtype);
  bool fmodMode = attrInt(n, "fmod", 0) != 0;
  auto f = [&](const std::vector<double> &v) -> double {
    double x = v[0], y = v[1];
    switch (B) {
    case Bin::Add: return x + y;
    case Bin::Sub: return x - y;
    case Bin::Mul: return x * y;
    case Bin::Div: return intDiv ? (y == 0 ? 0 : std::trunc(x / y)) : x / y;
    case Bin::Pow: return std::pow(x, y);
    case Bin::Mod: {
      if (fmodMode || !intDiv)
        return std::fmod(x, y);
      if (y == 0)
        return 0;
      double r = std::fmod(x, y);
      return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
    }
    case Bin::Equal: return x == y;
    case Bin::Less: return x < y;
    case Bin::Greater: return x > y;
    case Bin::LessEq: return x <= y;
    case Bin::GreaterEq: return x >= y;
    case Bin::And: return (x != 0) && (y != 0);
    case Bin::Or: return (x != 0) || (y != 0);
    case Bin::Xor: return (x != 0) != (y != 0);
    case Bin::PRelu: return x >= 0 ? x : x * y;
    }
    return 0;
  };
  return broadcastOp(n, {a, b}, compare ? DType::Bool : a->dtype, f, out);
}

enum class Var { Sum, Min, Max, Mean };

template <Var V> llvm::Error variadic(const Node &n, Inputs in, Outputs &out) {
  std::vector<const HostTensor *> xs;
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i])
      xs.push_back(in[i]);
  if (xs.empty())
    return kernelError(n, "expects at least one input");
  auto f = [&](const std::vector<double> &v) {
    double acc = v[0];
    for (size_t i = 1; i < v.size(); ++i) {
      if (V == Var::Min)
        acc = (std::isnan(acc) || std::isnan(v[i])) ? NAN : std::min(acc, v[i]);
      else if (V == Var::Max)
        acc = (std::isnan(acc) || std::isnan(v[i])) ? NAN : std::max(acc, v[i]);
      else
        acc += v[i];
    }
    return V == Var::Mean ? acc / static_cast<double>(v.size()) : acc;
  };
  return broadcastOp(n, xs, xs[0]->dtype, f, out);
}

llvm::Error where(const Node &n, Inputs in, Outputs &out) {
  const HostTensor *c = input(in, 0), *x = input(in, 1), *y = input(in, 2);
  if (!c || !x || !y)
    return kernelError(n, "expects condition, X and Y");
  return broadcastOp(n, {c, x, y}, x->dtype, [](const std::vector<double> &v) { return v[0] != 0 ? v[1] : v[2]; },
                     out);
}

llvm::Error clip(const Node &n, Inputs in, Outputs &out) {
  const HostTensor *x = input(in, 0);
  if (!x)
    return kernelError(n, "missing input");
  double lo = -INFINITY, hi = INFINITY;
  if (n.opsetVersion < 11) {
    lo = attrFloat(n, "min", lo);
    hi = attrFloat(n, "max", hi);
  } else {
    if (const HostTensor *t = input(in, 1); t && t->numel())
      lo = t->data[0];
    if (const HostTensor *t = input(in, 2); t && t->numel())
      hi = t->data[0];
  }
  HostTensor y(x->dtype, x->shape);
  for (int64_t i = 0; i < x->numel(); ++i)
    y.data[i] = std::min(std::max(x->data[i], lo), hi);
  return result(out, std::move(y));
}

llvm::Error cast(const Node &n, Inputs in, Outputs &out) {
  const HostTensor *x = input(in, 0);
  auto to = dtypeFromCode(attrInt(n, "to", 0));
  if (!x || !to || !hostSupportsDtype(*to))
    return kernelError(n, "a Cast to this dtype is not supported");
  HostTensor y = *x;
  y.dtype = *to;
  return result(out, std::move(y));
}

// Identity, and Dropout in inference: output 0 is the input, the optional
// mask output is all true.
llvm::Error passThrough(const Node &n, Inputs in, Outputs &out) {
  const HostTensor *x = input(in, 0);
  if (!x)
    return kernelError(n, "missing input");
  if (out.empty())
    return kernelError(n, "the node has no outputs");
  if (const HostTensor *training = input(in, 2); n.opType == "Dropout" && training && training->numel() &&
                                                 training->data[0] != 0)
    return kernelError(n, "training mode is not supported (inference only)");
  out[0] = *x;
  if (out.size() > 1)
    out[1] = HostTensor(DType::Bool, x->shape), std::fill(out[1].data.begin(), out[1].data.end(), 1.0);
  return llvm::Error::success();
}

}  // namespace

void addElementwiseKernels(KernelTable &t) {
  t["Relu"] = unary<relu>;
  t["Sigmoid"] = unary<sigmoid>;
  t["Tanh"] = unary<tanhF>;
  t["Erf"] = unary<erfF>;
  t["Exp"] = unary<expF>;
  t["Log"] = unary<logF>;
  t["Sqrt"] = unary<sqrtF>;
  t["Neg"] = unary<neg>;
  t["Abs"] = unary<absF>;
  t["Not"] = unary<notF>;
  t["Reciprocal"] = unary<reciprocal>;
  t["Floor"] = unary<floorF>;
  t["Ceil"] = unary<ceilF>;
  t["Round"] = unary<roundF>;
  t["Sin"] = unary<sinF>;
  t["Cos"] = unary<cosF>;
  t["Sign"] = unary<signF>;
  t["Softplus"] = unary<softplus>;
  t["Softsign"] = unary<softsign>;
  t["LeakyRelu"] = unary<leakyRelu>;
  t["Elu"] = unary<elu>;
  t["Selu"] = unary<selu>;
  t["HardSigmoid"] = unary<hardSigmoid>;
  t["HardSwish"] = unary<hardSwish>;
  t["Gelu"] = unary<gelu>;
  t["Add"] = binary<Bin::Add>;
  t["Sub"] = binary<Bin::Sub>;
  t["Mul"] = binary<Bin::Mul>;
  t["Div"] = binary<Bin::Div>;
  t["Pow"] = binary<Bin::Pow>;
  t["Mod"] = binary<Bin::Mod>;
  t["Equal"] = binary<Bin::Equal>;
  t["Less"] = binary<Bin::Less>;
  t["Greater"] = binary<Bin::Greater>;
  t["LessOrEqual"] = binary<Bin::LessEq>;
  t["GreaterOrEqual"] = binary<Bin::GreaterEq>;
  t["And"] = binary<Bin::And>;
  t["Or"] = binary<Bin::Or>;
  t["Xor"] = binary<Bin::Xor>;
  t["PRelu"] = binary<Bin::PRelu>;
  t["Sum"] = variadic<Var::Sum>;
  t["Min"] = variadic<Var::Min>;
  t["Max"] = variadic<Var::Max>;
  t["Mean"] = variadic<Var::Mean>;
  t["Where"] = where;
  t["Clip"] = clip;
  t["Cast"] = cast;
  t["Identity"] = passThrough;
  t["Dropout"] = passThrough;
}

}  // namespace graphlint::verify::cpu
