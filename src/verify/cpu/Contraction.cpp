// Contractions and windowed ops of the cpu reference backend: MatMul (numpy
// batching), Gemm, Conv, ConvTranspose, MaxPool, AveragePool and the global
// pools. 1-D and 2-D windows are computed as 3-D ones with unit dims, so one
// loop nest serves every rank.
#include "CpuKernels.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace graphlint::verify::cpu {
namespace {

llvm::Error matmul(const Node &n, Inputs in, Outputs &out) {
  const HostTensor *a = input(in, 0), *b = input(in, 1);
  if (!a || !b || a->rank() == 0 || b->rank() == 0)
    return kernelError(n, "expects two tensors of rank >= 1");
  std::vector<int64_t> as = a->shape, bs = b->shape;
  bool aVec = as.size() == 1, bVec = bs.size() == 1;
  if (aVec)
    as.insert(as.begin(), 1);
  if (bVec)
    bs.push_back(1);
  int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  if (bs[bs.size() - 2] != K)
    return kernelError(n, "inner dimensions differ");
  std::vector<int64_t> aBatch(as.begin(), as.end() - 2), bBatch(bs.begin(), bs.end() - 2);
  auto batch = broadcastShapes({&aBatch, &bBatch});
  if (!batch)
    return kernelError(n, "batch dimensions cannot be broadcast");
  std::vector<int64_t> outShape = *batch;
  if (!aVec)
    outShape.push_back(M);
  if (!bVec)
    outShape.push_back(N);
  HostTensor y(a->dtype, outShape);
  std::vector<std::vector<int64_t>> strides = {*broadcastStrides(aBatch, *batch), *broadcastStrides(bBatch, *batch)};
  forEachBroadcast(*batch, strides, [&](int64_t bi, const std::vector<int64_t> &off) {
    const double *A = a->data.data() + off[0] * M * K, *B = b->data.data() + off[1] * K * N;
    double *C = y.data.data() + bi * M * N;
    for (int64_t i = 0; i < M; ++i)
      for (int64_t k = 0; k < K; ++k) {
        double av = A[i * K + k];
        for (int64_t j = 0; j < N; ++j)
          C[i * N + j] += av * B[k * N + j];
      }
  });
  return result(out, std::move(y));
}

llvm::Error gemm(const Node &n, Inputs in, Outputs &out) {
  const HostTensor *a = input(in, 0), *b = input(in, 1), *c = input(in, 2);
  if (!a || !b || a->rank() != 2 || b->rank() != 2)
    return kernelError(n, "expects 2-D A and B");
  bool ta = attrInt(n, "transA", 0), tb = attrInt(n, "transB", 0);
  double alpha = attrFloat(n, "alpha", 1.0), beta = attrFloat(n, "beta", 1.0);
  int64_t M = ta ? a->shape[1] : a->shape[0], K = ta ? a->shape[0] : a->shape[1];
  int64_t N = tb ? b->shape[0] : b->shape[1];
  if ((tb ? b->shape[1] : b->shape[0]) != K)
    return kernelError(n, "inner dimensions differ");
  HostTensor y(a->dtype, {M, N});
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < K; ++k) {
      double av = alpha * (ta ? a->data[k * M + i] : a->data[i * K + k]);
      for (int64_t j = 0; j < N; ++j)
        y.data[i * N + j] += av * (tb ? b->data[j * K + k] : b->data[k * N + j]);
    }
  if (c) {
    std::vector<int64_t> cs = c->shape;
    if (!broadcastShapes({&cs, &y.shape}) || *broadcastShapes({&cs, &y.shape}) != y.shape)
      return kernelError(n, "C cannot be broadcast to (M, N)");
    std::vector<std::vector<int64_t>> strides = {*broadcastStrides(cs, y.shape)};
    forEachBroadcast(y.shape, strides,
                     [&](int64_t i, const std::vector<int64_t> &off) { y.data[i] += beta * c->data[off[0]]; });
  }
  return result(out, std::move(y));
}

// Window geometry over up to three spatial dims (unit dims fill the rest).
// Kernel taps (batch x channels x windows x kernel size) one conv or pool
// node may visit: about a minute of the reference kernels.
constexpr double kMaxWindowTaps = 68719476736.0;  // 2^36

struct Window {
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, dil[3] = {1, 1, 1}, padBegin[3] = {0, 0, 0}, padEnd[3] = {0, 0, 0};
  size_t spatial = 0;
};

// Spatial output sizes per ONNX's conv/pool formulas (pads, auto_pad,
// ceil_mode); `transposed` uses ConvTranspose's.
llvm::Error windowOf(const Node &n, const std::vector<int64_t> &xShape, std::vector<int64_t> kernel, bool ceilMode,
                     Window &w, bool transposed = false) {
  size_t s = xShape.size() - 2;
  if (s < 1 || s > 3 || kernel.size() != s)
    return kernelError(n, "supports 1 to 3 spatial dims with a kernel of the same rank");
  w.spatial = s;
  std::vector<int64_t> strides = attrInts(n, "strides", std::vector<int64_t>(s, 1));
  std::vector<int64_t> dil = attrInts(n, "dilations", std::vector<int64_t>(s, 1));
  std::vector<int64_t> pads = attrInts(n, "pads", std::vector<int64_t>(2 * s, 0));
  std::vector<int64_t> outPad = attrInts(n, "output_padding", std::vector<int64_t>(s, 0));
  std::string autoPad = attrString(n, "auto_pad", "NOTSET");
  if (strides.size() != s || dil.size() != s || pads.size() != 2 * s || outPad.size() != s)
    return kernelError(n, "strides, dilations or pads do not match the spatial rank");
  // Ranges first: a zero stride divides by zero below, and no product of
  // values within 2^31 overflows int64.
  constexpr int64_t kMaxWindowValue = int64_t(1) << 31;
  auto within = [](const std::vector<int64_t> &v, int64_t min) {
    return std::all_of(v.begin(), v.end(), [&](int64_t x) { return x >= min && x <= kMaxWindowValue; });
  };
  if (!within(kernel, 1) || !within(strides, 1) || !within(dil, 1) || !within(pads, 0) || !within(outPad, 0))
    return kernelError(n, "kernel_shape, strides and dilations must be between 1 and 2^31, pads between 0 and 2^31");
  for (size_t i = 0; i < s; ++i)
    if (xShape[2 + i] > kMaxWindowValue)
      return kernelError(n, "spatial dims above 2^31 are not supported");
  size_t off = 3 - s;
  for (size_t i = 0; i < s; ++i) {
    int64_t in = xShape[2 + i], k = kernel[i], st = strides[i], d = dil[i];
    int64_t eff = d * (k - 1) + 1, pb = pads[i], pe = pads[s + i], o;
    if (transposed) {
      if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
        o = in * st;
        int64_t total = std::max<int64_t>(0, st * (in - 1) + outPad[i] + eff - o);
        pb = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
        pe = total - pb;
      } else {
        o = st * (in - 1) + outPad[i] + eff - pb - pe;
      }
    } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      o = (in + st - 1) / st;
      int64_t total = std::max<int64_t>(0, (o - 1) * st + eff - in);
      pb = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pe = total - pb;
    } else {
      if (autoPad == "VALID")
        pb = pe = 0;
      int64_t span = in + pb + pe - eff;
      o = (ceilMode ? (span + st - 1) / st : span / st) + 1;
      if (ceilMode && (o - 1) * st >= in + pb)
        --o;
    }
    if (o <= 0)
      return kernelError(n, "window larger than its padded input");
    w.in[off + i] = in;
    w.out[off + i] = o;
    w.k[off + i] = k;
    w.stride[off + i] = st;
    w.dil[off + i] = d;
    w.padBegin[off + i] = pb;
    w.padEnd[off + i] = pe;
  }
  // The reference kernels visit every tap of every window: a 2^40-wide
  // kernel over a 32-pixel input (SAME padding) would loop for hours.
  double taps = static_cast<double>(xShape[0]) * static_cast<double>(xShape[1]);
  for (size_t i = 0; i < 3; ++i)
    taps *= static_cast<double>(w.k[i]) * static_cast<double>(std::max(w.out[i], w.in[i]));
  if (taps > kMaxWindowTaps)
    return kernelError(n, fmt::format("its windows visit {:.3g} kernel taps, more than the cpu reference kernels run "
                                      "({:.3g})",
                                      taps, kMaxWindowTaps));
  return llvm::Error::success();
}

// Calls fn(tap, p0, p1, p2) for every kernel tap of the window at (a0, a1,
// a2): p = a * stride - pad + k * dilation, taps numbered row-major.
template <typename Fn> void forEachTap(const Window &w, int64_t a0, int64_t a1, int64_t a2, Fn &&fn) {
  int64_t tap = 0;
  for (int64_t k0 = 0; k0 < w.k[0]; ++k0)
    for (int64_t k1 = 0; k1 < w.k[1]; ++k1)
      for (int64_t k2 = 0; k2 < w.k[2]; ++k2)
        fn(tap++, a0 * w.stride[0] - w.padBegin[0] + k0 * w.dil[0], a1 * w.stride[1] - w.padBegin[1] + k1 * w.dil[1],
           a2 * w.stride[2] - w.padBegin[2] + k2 * w.dil[2]);
}

std::vector<int64_t> outShapeOf(const Window &w, int64_t batch, int64_t channels) {
  std::vector<int64_t> s = {batch, channels};
  for (size_t i = 3 - w.spatial; i < 3; ++i)
    s.push_back(w.out[i]);
  return s;
}

llvm::Error conv(const Node &n, Inputs in, Outputs &out) {
  const HostTensor *x = input(in, 0), *wt = input(in, 1), *bias = input(in, 2);
  if (!x || !wt || x->rank() < 3 || wt->rank() != x->rank())
    return kernelError(n, "expects X and W of the same rank >= 3");
  int64_t group = attrInt(n, "group", 1), N = x->shape[0], C = x->shape[1], M = wt->shape[0];
  int64_t cg = wt->shape[1];
  if (group <= 0 || C != cg * group || M % group)
    return kernelError(n, "channels do not match the weight and group");
  Window w;
  std::vector<int64_t> kernel(wt->shape.begin() + 2, wt->shape.end());
  if (auto e = windowOf(n, x->shape, attrInts(n, "kernel_shape", kernel), false, w))
    return e;
  HostTensor y(x->dtype, outShapeOf(w, N, M));
  int64_t inSp = w.in[0] * w.in[1] * w.in[2], outSp = w.out[0] * w.out[1] * w.out[2];
  int64_t kSp = w.k[0] * w.k[1] * w.k[2], mg = M / group;
  for (int64_t b = 0; b < N; ++b)
    for (int64_t m = 0; m < M; ++m) {
      int64_t g = m / mg;
      double *Y = y.data.data() + (b * M + m) * outSp;
      if (bias)
        std::fill(Y, Y + outSp, bias->data[m]);
      for (int64_t c = 0; c < cg; ++c) {
        const double *X = x->data.data() + (b * C + g * cg + c) * inSp;
        const double *W = wt->data.data() + (m * cg + c) * kSp;
        for (int64_t kd = 0; kd < w.k[0]; ++kd)
          for (int64_t kh = 0; kh < w.k[1]; ++kh)
            for (int64_t kw = 0; kw < w.k[2]; ++kw) {
              double wv = W[(kd * w.k[1] + kh) * w.k[2] + kw];
              for (int64_t od = 0; od < w.out[0]; ++od) {
                int64_t id = od * w.stride[0] - w.padBegin[0] + kd * w.dil[0];
                if (id < 0 || id >= w.in[0])
                  continue;
                for (int64_t oh = 0; oh < w.out[1]; ++oh) {
                  int64_t ih = oh * w.stride[1] - w.padBegin[1] + kh * w.dil[1];
                  if (ih < 0 || ih >= w.in[1])
                    continue;
                  const double *Xr = X + (id * w.in[1] + ih) * w.in[2];
                  double *Yr = Y + (od * w.out[1] + oh) * w.out[2];
                  for (int64_t ow = 0; ow < w.out[2]; ++ow) {
                    int64_t iw = ow * w.stride[2] - w.padBegin[2] + kw * w.dil[2];
                    if (iw >= 0 && iw < w.in[2])
                      Yr[ow] += wv * Xr[iw];
                  }
                }
              }
            }
      }
    }
  return result(out, std::move(y));
}

// ConvTranspose scatters each input element through the kernel.
llvm::Error convTranspose(const Node &n, Inputs in, Outputs &out) {
  const HostTensor *x = input(in, 0), *wt = input(in, 1), *bias = input(in, 2);
  if (!x || !wt || x->rank() < 3 || wt->rank() != x->rank())
    return kernelError(n, "expects X and W of the same rank >= 3");
  if (n.attr("output_shape"))
    return kernelError(n, "the output_shape attribute is not supported");
  int64_t group = attrInt(n, "group", 1), N = x->shape[0], C = x->shape[1];
  if (group <= 0 || wt->shape[0] != C || C % group)
    return kernelError(n, "channels do not match the weight and group");
  int64_t mg = wt->shape[1], M = mg * group, cg = C / group;
  Window w;
  std::vector<int64_t> kernel(wt->shape.begin() + 2, wt->shape.end());
  if (auto e = windowOf(n, x->shape, attrInts(n, "kernel_shape", kernel), false, w, /*transposed=*/true))
    return e;
  HostTensor y(x->dtype, outShapeOf(w, N, M));
  int64_t inSp = w.in[0] * w.in[1] * w.in[2], outSp = w.out[0] * w.out[1] * w.out[2];
  int64_t kSp = w.k[0] * w.k[1] * w.k[2];
  for (int64_t b = 0; b < N; ++b)
    for (int64_t c = 0; c < C; ++c) {
      int64_t g = c / cg;
      const double *X = x->data.data() + (b * C + c) * inSp;
      for (int64_t mo = 0; mo < mg; ++mo) {
        int64_t m = g * mg + mo;
        const double *W = wt->data.data() + (c * mg + mo) * kSp;
        double *Y = y.data.data() + (b * M + m) * outSp;
        for (int64_t i0 = 0; i0 < w.in[0]; ++i0)
          for (int64_t i1 = 0; i1 < w.in[1]; ++i1)
            for (int64_t i2 = 0; i2 < w.in[2]; ++i2) {
              double xv = X[(i0 * w.in[1] + i1) * w.in[2] + i2];
              forEachTap(w, i0, i1, i2, [&](int64_t k, int64_t o0, int64_t o1, int64_t o2) {
                if (o0 >= 0 && o0 < w.out[0] && o1 >= 0 && o1 < w.out[1] && o2 >= 0 && o2 < w.out[2])
                  Y[(o0 * w.out[1] + o1) * w.out[2] + o2] += xv * W[k];
              });
            }
      }
    }
  for (int64_t b = 0; bias && b < N; ++b)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t i = 0; i < outSp; ++i)
        y.data[(b * M + m) * outSp + i] += bias->data[m];
  return result(out, std::move(y));
}

template <bool Max> llvm::Error pool(const Node &n, Inputs in, Outputs &out) {
  const HostTensor *x = input(in, 0);
  if (!x || x->rank() < 3)
    return kernelError(n, "expects an input of rank >= 3");
  if (out.size() > 1 && n.outputs[1])
    return kernelError(n, "the Indices output is not supported");
  if (attrInt(n, "storage_order", 0))
    return kernelError(n, "storage_order 1 is not supported");
  Window w;
  if (auto e = windowOf(n, x->shape, attrInts(n, "kernel_shape"), attrInt(n, "ceil_mode", 0) != 0, w))
    return e;
  bool includePad = attrInt(n, "count_include_pad", 0) != 0;
  int64_t NC = x->shape[0] * x->shape[1];
  HostTensor y(x->dtype, outShapeOf(w, x->shape[0], x->shape[1]));
  int64_t inSp = w.in[0] * w.in[1] * w.in[2], outSp = w.out[0] * w.out[1] * w.out[2];
  for (int64_t p = 0; p < NC; ++p) {
    const double *X = x->data.data() + p * inSp;
    for (int64_t o0 = 0; o0 < w.out[0]; ++o0)
      for (int64_t o1 = 0; o1 < w.out[1]; ++o1)
        for (int64_t o2 = 0; o2 < w.out[2]; ++o2) {
          double acc = Max ? -INFINITY : 0;
          int64_t count = 0, padded = 0;
          forEachTap(w, o0, o1, o2, [&](int64_t, int64_t i0, int64_t i1, int64_t i2) {
            if (i0 >= 0 && i0 < w.in[0] && i1 >= 0 && i1 < w.in[1] && i2 >= 0 && i2 < w.in[2]) {
              double v = X[(i0 * w.in[1] + i1) * w.in[2] + i2];
              acc = Max ? std::max(acc, v) : acc + v;
              ++count;
            } else if (i0 >= -w.padBegin[0] && i1 >= -w.padBegin[1] && i2 >= -w.padBegin[2] &&
                       i0 < w.in[0] + w.padEnd[0] && i1 < w.in[1] + w.padEnd[1] && i2 < w.in[2] + w.padEnd[2]) {
              // Positions in the explicit padding count toward the average
              // with count_include_pad; those past it (ceil_mode) never do.
              ++padded;
            }
          });
          if (!Max)
            acc /= static_cast<double>(includePad ? count + padded : std::max<int64_t>(count, 1));
          y.data[p * outSp + (o0 * w.out[1] + o1) * w.out[2] + o2] = acc;
        }
  }
  return result(out, std::move(y));
}

template <bool Max> llvm::Error globalPool(const Node &n, Inputs in, Outputs &out) {
  const HostTensor *x = input(in, 0);
  if (!x || x->rank() < 3)
    return kernelError(n, "expects an input of rank >= 3");
  std::vector<int64_t> shape = {x->shape[0], x->shape[1]};
  shape.resize(x->rank(), 1);
  HostTensor y(x->dtype, shape);
  int64_t sp = x->numel() / std::max<int64_t>(1, x->shape[0] * x->shape[1]);
  for (int64_t p = 0; p < y.numel(); ++p) {
    double acc = Max ? -INFINITY : 0;
    for (int64_t i = 0; i < sp; ++i)
      acc = Max ? std::max(acc, x->data[p * sp + i]) : acc + x->data[p * sp + i];
    y.data[p] = Max ? acc : acc / static_cast<double>(sp);
  }
  return result(out, std::move(y));
}

}  // namespace

void addContractionKernels(KernelTable &t) {
  t["MatMul"] = matmul;
  t["Gemm"] = gemm;
  t["Conv"] = conv;
  t["ConvTranspose"] = convTranspose;
  t["MaxPool"] = pool<true>;
  t["AveragePool"] = pool<false>;
  t["GlobalAveragePool"] = globalPool<false>;
  t["GlobalMaxPool"] = globalPool<true>;
}

}  // namespace graphlint::verify::cpu
