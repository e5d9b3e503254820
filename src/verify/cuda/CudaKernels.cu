// graphlint verify's own CUDA kernels; launchers declared in CudaKernels.h.
// Grid-stride loops keep every launcher to one simple kernel.
#include "CudaKernels.h"

#include <cmath>

namespace graphlint::verify::cuda {
namespace {

constexpr int kBlock = 256;

int blocksFor(int64_t n) {
  int64_t b = (n + kBlock - 1) / kBlock;
  return static_cast<int>(b < 1 ? 1 : (b > 65535 * 8 ? 65535 * 8 : b));
}

__device__ float applyUnary(UnaryOp op, float x, float a, float b) {
  switch (op) {
  case UnaryOp::Relu: return x > 0.f ? x : 0.f;
  case UnaryOp::Sigmoid: return 1.f / (1.f + expf(-x));
  case UnaryOp::Tanh: return tanhf(x);
  case UnaryOp::Erf: return erff(x);
  case UnaryOp::Exp: return expf(x);
  case UnaryOp::Log: return logf(x);
  case UnaryOp::Sqrt: return sqrtf(x);
  case UnaryOp::Neg: return -x;
  case UnaryOp::Abs: return fabsf(x);
  case UnaryOp::Reciprocal: return 1.f / x;
  case UnaryOp::Gelu: return 0.5f * x * (1.f + erff(x * 0.70710678118654752f));
  case UnaryOp::GeluTanh: return 0.5f * x * (1.f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
  case UnaryOp::HardSigmoid: return fminf(1.f, fmaxf(0.f, a * x + b));
  case UnaryOp::HardSwish: return x * fminf(1.f, fmaxf(0.f, x / 6.f + 0.5f));
  case UnaryOp::LeakyRelu: return x >= 0.f ? x : a * x;
  case UnaryOp::Clip: return fminf(fmaxf(x, a), b);
  case UnaryOp::Copy: return x;
  }
  return x;
}

__global__ void unaryKernel(UnaryOp op, const float *x, float *y, int64_t n, float a, float b) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = applyUnary(op, x[i], a, b);
}

__device__ void offsetsOf(const StridedView &v, int64_t i, int operands, int64_t *off) {
  for (int j = 0; j < operands; ++j)
    off[j] = v.base[j];
  for (int d = v.rank - 1; d >= 0; --d) {
    int64_t q = i % v.shape[d];
    i /= v.shape[d];
    for (int j = 0; j < operands; ++j)
      off[j] += q * v.strides[j][d];
  }
}

__global__ void broadcastKernel(BinaryOp op, const float *x0, const float *x1, const float *x2, float *y,
                                StridedView v, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t off[3];
    offsetsOf(v, i, op == BinaryOp::Where ? 3 : 2, off);
    float a = x0[off[0]], b = x1[off[1]], r;
    switch (op) {
    case BinaryOp::Add: r = a + b; break;
    case BinaryOp::Sub: r = a - b; break;
    case BinaryOp::Mul: r = a * b; break;
    case BinaryOp::Div: r = a / b; break;
    case BinaryOp::Pow: r = powf(a, b); break;
    case BinaryOp::Max: r = fmaxf(a, b); break;
    case BinaryOp::Min: r = fminf(a, b); break;
    case BinaryOp::Where: r = a != 0.f ? b : x2[off[2]]; break;
    }
    y[i] = r;
  }
}

__global__ void stridedCopyKernel(const float *x, float *y, StridedView v, int64_t n, int64_t yOffset,
                                  StridedView out) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t off[3];
    offsetsOf(v, i, 1, off);
    int64_t dst[3];
    offsetsOf(out, i, 1, dst);
    y[yOffset + dst[0]] = x[off[0]];
  }
}

__global__ void gatherKernel(const float *x, const int64_t *idx, float *y, int64_t outer, int64_t dim,
                             int64_t inner, int64_t k) {
  int64_t n = outer * k * inner;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t in = i % inner, j = (i / inner) % k, o = i / (inner * k);
    int64_t g = idx[j] < 0 ? idx[j] + dim : idx[j];
    y[i] = (g >= 0 && g < dim) ? x[(o * dim + g) * inner + in] : 0.f;
  }
}

// One thread per output element; enough for the verify sizes, and simple.
__global__ void reduceKernel(ReduceOp op, const float *x, float *y, int64_t outer, int64_t len, int64_t inner) {
  int64_t n = outer * inner;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t o = i / inner, in = i % inner;
    const float *p = x + o * len * inner + in;
    float acc = op == ReduceOp::Max ? -INFINITY : 0.f;
    for (int64_t k = 0; k < len; ++k)
      acc = op == ReduceOp::Max ? fmaxf(acc, p[k * inner]) : acc + p[k * inner];
    y[i] = op == ReduceOp::Mean ? acc / float(len) : acc;
  }
}

__global__ void softmaxKernel(const float *x, float *y, int64_t outer, int64_t len, int64_t inner, bool log) {
  int64_t n = outer * inner;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t o = i / inner, in = i % inner;
    const float *p = x + o * len * inner + in;
    float *q = y + o * len * inner + in;
    float mx = -INFINITY, sum = 0.f;
    for (int64_t k = 0; k < len; ++k)
      mx = fmaxf(mx, p[k * inner]);
    for (int64_t k = 0; k < len; ++k)
      sum += expf(p[k * inner] - mx);
    for (int64_t k = 0; k < len; ++k)
      q[k * inner] = log ? p[k * inner] - mx - logf(sum) : expf(p[k * inner] - mx) / sum;
  }
}

// One block per row: block-wide sums of x and x^2 in shared memory.
__global__ void layerNormKernel(const float *x, const float *scale, const float *bias, float *y, int64_t len,
                                float eps) {
  __shared__ float s1[kBlock], s2[kBlock];
  const float *p = x + blockIdx.x * len;
  float *q = y + blockIdx.x * len;
  float a = 0.f, b = 0.f;
  for (int64_t k = threadIdx.x; k < len; k += blockDim.x) {
    a += p[k];
    b += p[k] * p[k];
  }
  s1[threadIdx.x] = a;
  s2[threadIdx.x] = b;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) {
      s1[threadIdx.x] += s1[threadIdx.x + w];
      s2[threadIdx.x] += s2[threadIdx.x + w];
    }
    __syncthreads();
  }
  float mean = s1[0] / float(len), var = fmaxf(s2[0] / float(len) - mean * mean, 0.f);
  float inv = rsqrtf(var + eps);
  for (int64_t k = threadIdx.x; k < len; k += blockDim.x)
    q[k] = (p[k] - mean) * inv * scale[k] + (bias ? bias[k] : 0.f);
}

__global__ void batchNormKernel(const float *x, const float *scale, const float *b, const float *mean,
                                const float *var, float *y, int64_t n, int64_t c, int64_t spatial, float eps) {
  int64_t total = n * c * spatial;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t ch = (i / spatial) % c;
    y[i] = (x[i] - mean[ch]) * scale[ch] * rsqrtf(var[ch] + eps) + b[ch];
  }
}

__global__ void int64ToFloatKernel(const int64_t *x, float *y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = float(x[i]);
}

}  // namespace

cudaError_t launchUnary(UnaryOp op, const float *x, float *y, int64_t n, float a, float b, cudaStream_t s) {
  unaryKernel<<<blocksFor(n), kBlock, 0, s>>>(op, x, y, n, a, b);
  return cudaGetLastError();
}

cudaError_t launchBroadcast(BinaryOp op, const float *x0, const float *x1, const float *x2, float *y,
                            const StridedView &v, cudaStream_t s) {
  int64_t n = 1;
  for (int d = 0; d < v.rank; ++d)
    n *= v.shape[d];
  broadcastKernel<<<blocksFor(n), kBlock, 0, s>>>(op, x0, x1, x2, y, v, n);
  return cudaGetLastError();
}

cudaError_t launchStridedCopy(const float *x, float *y, const StridedView &v, int64_t yOffset,
                              const int64_t *yStrides, cudaStream_t s) {
  int64_t n = 1;
  for (int d = 0; d < v.rank; ++d)
    n *= v.shape[d];
  StridedView out = v;
  out.base[0] = 0;
  for (int d = 0; d < v.rank; ++d)
    out.strides[0][d] = yStrides[d];
  stridedCopyKernel<<<blocksFor(n), kBlock, 0, s>>>(x, y, v, n, yOffset, out);
  return cudaGetLastError();
}

cudaError_t launchGather(const float *x, const int64_t *idx, float *y, int64_t outer, int64_t dim, int64_t inner,
                         int64_t k, cudaStream_t s) {
  gatherKernel<<<blocksFor(outer * k * inner), kBlock, 0, s>>>(x, idx, y, outer, dim, inner, k);
  return cudaGetLastError();
}

cudaError_t launchReduce(ReduceOp op, const float *x, float *y, int64_t outer, int64_t len, int64_t inner,
                         cudaStream_t s) {
  reduceKernel<<<blocksFor(outer * inner), kBlock, 0, s>>>(op, x, y, outer, len, inner);
  return cudaGetLastError();
}

cudaError_t launchSoftmax(const float *x, float *y, int64_t outer, int64_t len, int64_t inner, bool log,
                          cudaStream_t s) {
  softmaxKernel<<<blocksFor(outer * inner), kBlock, 0, s>>>(x, y, outer, len, inner, log);
  return cudaGetLastError();
}

cudaError_t launchLayerNorm(const float *x, const float *scale, const float *bias, float *y, int64_t rows,
                            int64_t len, float eps, cudaStream_t s) {
  if (rows > 0)
    layerNormKernel<<<static_cast<unsigned>(rows), kBlock, 0, s>>>(x, scale, bias, y, len, eps);
  return cudaGetLastError();
}

cudaError_t launchBatchNorm(const float *x, const float *scale, const float *b, const float *mean, const float *var,
                            float *y, int64_t n, int64_t c, int64_t spatial, float eps, cudaStream_t s) {
  batchNormKernel<<<blocksFor(n * c * spatial), kBlock, 0, s>>>(x, scale, b, mean, var, y, n, c, spatial, eps);
  return cudaGetLastError();
}

cudaError_t launchInt64ToFloat(const int64_t *x, float *y, int64_t n, cudaStream_t s) {
  int64ToFloatKernel<<<blocksFor(n), kBlock, 0, s>>>(x, y, n);
  return cudaGetLastError();
}

}  // namespace graphlint::verify::cuda
