// Reductions and normalisations of the cpu reference backend: Reduce* (axes
// as an attribute or, from their opset 13/18 versions, an input), Softmax and
// LogSoftmax (with the pre-13 flatten-to-2-D semantics), BatchNormalization
// (inference), LayerNormalization and InstanceNormalization.
#include "CpuKernels.h"

#include <fmt/format.h>

#include <cmath>
#include <set>

namespace graphlint::verify::cpu {
namespace {

enum class Red { Mean, Sum, Max, Min, Prod, L1, L2, SumSquare, LogSum, LogSumExp };

template <Red R> llvm::Error reduce(const Node &n, Inputs in, Outputs &out) {
  const HostTensor *x = input(in, 0);
  if (!x)
    return kernelError(n, "missing input");
  int64_t rank = static_cast<int64_t>(x->rank());
  bool axesAsInput = (R == Red::Sum ? n.opsetVersion >= 13 : n.opsetVersion >= 18);
  std::vector<int64_t> axes;
  if (axesAsInput) {
    if (const HostTensor *a = input(in, 1))
      axes = a->asInts();
  } else {
    axes = attrInts(n, "axes");
  }
  if (axes.empty() && attrInt(n, "noop_with_empty_axes", 0)) {
    out[0] = *x;
    return llvm::Error::success();
  }
  std::set<int64_t> reduced;
  for (int64_t a : axes) {
    auto na = normAxis(a, rank);
    if (!na)
      return kernelError(n, "axis out of range");
    reduced.insert(*na);
  }
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d)
      reduced.insert(d);
  std::vector<int64_t> keep = x->shape, dropped;
  for (int64_t d = 0; d < rank; ++d) {
    if (reduced.count(d))
      keep[d] = 1;
    else
      dropped.push_back(x->shape[d]);
  }
  bool keepdims = attrInt(n, "keepdims", 1) != 0;
  HostTensor y(x->dtype, keepdims ? keep : dropped);
  double init = R == Red::Max ? -INFINITY : R == Red::Min ? INFINITY : R == Red::Prod ? 1.0 : 0.0;
  std::fill(y.data.begin(), y.data.end(), init);
  std::vector<std::vector<int64_t>> strides = {*broadcastStrides(keep, x->shape)};
  forEachBroadcast(x->shape, strides, [&](int64_t i, const std::vector<int64_t> &off) {
    double v = x->data[i], &acc = y.data[off[0]];
    switch (R) {
    case Red::Max: acc = std::max(acc, v); break;
    case Red::Min: acc = std::min(acc, v); break;
    case Red::Prod: acc *= v; break;
    case Red::L1: acc += std::fabs(v); break;
    case Red::L2: case Red::SumSquare: acc += v * v; break;
    case Red::LogSumExp: acc += std::exp(v); break;
    default: acc += v; break;
    }
  });
  int64_t count = x->numel() / std::max<int64_t>(1, y.numel());
  for (double &v : y.data) {
    if (R == Red::Mean)
      v /= static_cast<double>(count);
    else if (R == Red::L2)
      v = std::sqrt(v);
    else if (R == Red::LogSum || R == Red::LogSumExp)
      v = std::log(v);
  }
  return result(out, std::move(y));
}

template <bool Log> llvm::Error softmax(const Node &n, Inputs in, Outputs &out) {
  const HostTensor *x = input(in, 0);
  if (!x)
    return kernelError(n, "missing input");
  int64_t rank = static_cast<int64_t>(x->rank());
  bool legacy = n.opsetVersion < 13;
  auto axis = normAxis(attrInt(n, "axis", legacy ? 1 : -1), std::max<int64_t>(rank, 1));
  if (!axis)
    return kernelError(n, "axis out of range");
  // outer x len x inner: legacy softmax normalises over everything from axis on.
  int64_t outer = 1, len = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t s = x->shape[d];
    if (d < *axis)
      outer *= s;
    else if (d == *axis || legacy)
      len *= s;
    else
      inner *= s;
  }
  HostTensor y(x->dtype, x->shape);
  if (x->numel() == 0)
    return result(out, std::move(y));  // [2^31, 1, 0] would loop 2^31 times over nothing
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const double *X = x->data.data() + o * len * inner + i;
      double *Y = y.data.data() + o * len * inner + i;
      double mx = -INFINITY, sum = 0;
      for (int64_t k = 0; k < len; ++k)
        mx = std::max(mx, X[k * inner]);
      for (int64_t k = 0; k < len; ++k)
        sum += std::exp(X[k * inner] - mx);
      for (int64_t k = 0; k < len; ++k)
        Y[k * inner] = Log ? X[k * inner] - mx - std::log(sum) : std::exp(X[k * inner] - mx) / sum;
    }
  return result(out, std::move(y));
}

llvm::Error batchNorm(const Node &n, Inputs in, Outputs &out) {
  const HostTensor *x = input(in, 0), *scale = input(in, 1), *b = input(in, 2), *mean = input(in, 3),
                   *var = input(in, 4);
  if (!x || !scale || !b || !mean || !var || x->rank() < 2)
    return kernelError(n, "expects X, scale, B, mean and var");
  if (attrInt(n, "training_mode", 0) || (out.size() > 1 && n.outputs[1]))
    return kernelError(n, "training mode is not supported (inference only)");
  double eps = attrFloat(n, "epsilon", 1e-5);
  int64_t N = x->shape[0], C = x->shape[1], sp = x->numel() / std::max<int64_t>(1, N * C);
  for (const HostTensor *t : {scale, b, mean, var})
    if (t->numel() != C)
      return kernelError(n, fmt::format("scale, B, mean and var must hold one value per channel ({})", C));
  HostTensor y(x->dtype, x->shape);
  for (int64_t i = 0; i < N; ++i)
    for (int64_t c = 0; c < C; ++c) {
      double k = scale->data[c] / std::sqrt(var->data[c] + eps), m = mean->data[c], bb = b->data[c];
      for (int64_t s = 0; s < sp; ++s) {
        int64_t p = (i * C + c) * sp + s;
        y.data[p] = (x->data[p] - m) * k + bb;
      }
    }
  return result(out, std::move(y));
}

// Mean and 1/sqrt(variance + eps) of `len` values (two passes, in double).
double meanAndInvStd(const double *X, int64_t len, double eps, double &mean) {
  mean = 0;
  for (int64_t i = 0; i < len; ++i)
    mean += X[i];
  mean /= static_cast<double>(len);
  double var = 0;
  for (int64_t i = 0; i < len; ++i)
    var += (X[i] - mean) * (X[i] - mean);
  return 1.0 / std::sqrt(var / static_cast<double>(len) + eps);
}

llvm::Error layerNorm(const Node &n, Inputs in, Outputs &out) {
  const HostTensor *x = input(in, 0), *scale = input(in, 1), *bias = input(in, 2);
  if (!x || !scale)
    return kernelError(n, "expects X and Scale");
  int64_t rank = static_cast<int64_t>(x->rank());
  auto axis = normAxis(attrInt(n, "axis", -1), rank);
  if (!axis)
    return kernelError(n, "axis out of range");
  double eps = attrFloat(n, "epsilon", 1e-5);
  std::vector<int64_t> normShape(x->shape.begin() + *axis, x->shape.end());
  int64_t len = HostTensor::count(normShape), rows = x->numel() / std::max<int64_t>(1, len);
  // Scale and B must broadcast to the normalised shape before their strides
  // are taken: a longer or mismatched one would be read out of bounds.
  auto fits = [&](const HostTensor *t) {
    auto b = broadcastShapes({&t->shape, &normShape});
    return t->rank() <= normShape.size() && b && *b == normShape;
  };
  if (!fits(scale) || (bias && !fits(bias)))
    return kernelError(n, "Scale or B does not broadcast to the normalised shape");
  std::vector<int64_t> sStrides = *broadcastStrides(scale->shape, normShape);
  std::vector<int64_t> bStrides = bias ? *broadcastStrides(bias->shape, normShape) : std::vector<int64_t>();
  // Offsets of Scale and B for each position of the normalised block.
  std::vector<int64_t> sOff(len), bOff(len);
  forEachBroadcast(normShape, {sStrides, bias ? bStrides : sStrides}, [&](int64_t i, const std::vector<int64_t> &o) {
    sOff[i] = o[0];
    bOff[i] = o[1];
  });
  std::vector<int64_t> statShape = x->shape;
  for (int64_t d = *axis; d < rank; ++d)
    statShape[d] = 1;
  HostTensor y(x->dtype, x->shape), meanT(x->dtype, statShape), invT(x->dtype, statShape);
  for (int64_t r = 0; r < rows; ++r) {
    const double *X = x->data.data() + r * len;
    double mean, inv = meanAndInvStd(X, len, eps, mean);
    for (int64_t i = 0; i < len; ++i)
      y.data[r * len + i] = (X[i] - mean) * inv * scale->data[sOff[i]] + (bias ? bias->data[bOff[i]] : 0.0);
    meanT.data[r] = mean;
    invT.data[r] = inv;
  }
  y.roundToDtype();
  out[0] = std::move(y);
  if (out.size() > 1)
    out[1] = std::move(meanT);
  if (out.size() > 2)
    out[2] = std::move(invT);
  return llvm::Error::success();
}

// LRN across channels: y = x / (bias + alpha / size * sum of x^2 over the
// channel window [c - floor((size-1)/2), c + ceil((size-1)/2)])^beta.
llvm::Error lrn(const Node &n, Inputs in, Outputs &out) {
  const HostTensor *x = input(in, 0);
  int64_t size = attrInt(n, "size", 0);
  if (!x || x->rank() < 3 || size <= 0)
    return kernelError(n, "expects an input of rank >= 3 and a positive size");
  double alpha = attrFloat(n, "alpha", 1e-4), beta = attrFloat(n, "beta", 0.75), bias = attrFloat(n, "bias", 1.0);
  int64_t N = x->shape[0], C = x->shape[1], sp = x->numel() / std::max<int64_t>(1, N * C);
  int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
  HostTensor y(x->dtype, x->shape);
  for (int64_t b = 0; b < N; ++b)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t s = 0; s < sp; ++s) {
        double sum = 0;
        for (int64_t k = std::max<int64_t>(0, c - lo); k <= std::min<int64_t>(C - 1, c + hi); ++k) {
          double v = x->data[(b * C + k) * sp + s];
          sum += v * v;
        }
        int64_t p = (b * C + c) * sp + s;
        y.data[p] = x->data[p] / std::pow(bias + alpha / static_cast<double>(size) * sum, beta);
      }
  return result(out, std::move(y));
}

llvm::Error instanceNorm(const Node &n, Inputs in, Outputs &out) {
  const HostTensor *x = input(in, 0), *scale = input(in, 1), *b = input(in, 2);
  if (!x || !scale || !b || x->rank() < 3)
    return kernelError(n, "expects X, scale and B");
  double eps = attrFloat(n, "epsilon", 1e-5);
  int64_t C = x->shape[1], sp = x->numel() / std::max<int64_t>(1, x->shape[0] * C);
  if (scale->numel() != C || b->numel() != C)
    return kernelError(n, fmt::format("scale and B must hold one value per channel ({})", C));
  HostTensor y(x->dtype, x->shape);
  for (int64_t p = 0; p < x->shape[0] * C; ++p) {
    const double *X = x->data.data() + p * sp;
    double mean, inv = meanAndInvStd(X, sp, eps, mean);
    for (int64_t i = 0; i < sp; ++i)
      y.data[p * sp + i] = (X[i] - mean) * inv * scale->data[p % C] + b->data[p % C];
  }
  return result(out, std::move(y));
}

}  // namespace

void addNormalizationKernels(KernelTable &t) {
  t["ReduceMean"] = reduce<Red::Mean>;
  t["ReduceSum"] = reduce<Red::Sum>;
  t["ReduceMax"] = reduce<Red::Max>;
  t["ReduceMin"] = reduce<Red::Min>;
  t["ReduceProd"] = reduce<Red::Prod>;
  t["ReduceL1"] = reduce<Red::L1>;
  t["ReduceL2"] = reduce<Red::L2>;
  t["ReduceSumSquare"] = reduce<Red::SumSquare>;
  t["ReduceLogSum"] = reduce<Red::LogSum>;
  t["ReduceLogSumExp"] = reduce<Red::LogSumExp>;
  t["Softmax"] = softmax<false>;
  t["LogSoftmax"] = softmax<true>;
  t["BatchNormalization"] = batchNorm;
  t["LayerNormalization"] = layerNorm;
  t["InstanceNormalization"] = instanceNorm;
  t["LRN"] = lrn;
}

}  // namespace graphlint::verify::cpu
