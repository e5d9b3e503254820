// Launchers for graphlint verify's own CUDA kernels (CudaKernels.cu): the
// pointwise, broadcast, data-movement, reduction, softmax and normalisation
// ops that cuBLAS and cuDNN do not cover. Plain C++ declarations, so that the
// backend (CudaBackend.cpp) compiles with the host compiler. float32 only.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace graphlint::verify::cuda {

inline constexpr int kMaxRank = 8;

/// A tensor view for the broadcast and strided kernels: output shape, and per
/// operand the element strides into it (0 on broadcast dims).
struct StridedView {
  int rank = 0;
  int64_t shape[kMaxRank] = {};
  int64_t strides[3][kMaxRank] = {};
  int64_t base[3] = {};
};

enum class UnaryOp : int {
  Relu, Sigmoid, Tanh, Erf, Exp, Log, Sqrt, Neg, Abs, Reciprocal, Gelu, GeluTanh, HardSigmoid, HardSwish,
  LeakyRelu, Clip, Copy
};
enum class BinaryOp : int { Add, Sub, Mul, Div, Pow, Max, Min, Where };
enum class ReduceOp : int { Sum, Mean, Max };

cudaError_t launchUnary(UnaryOp op, const float *x, float *y, int64_t n, float a, float b, cudaStream_t s);
/// y = op(x0, x1[, x2]) over `v` (operands 0..2; Where reads x0 as the condition).
cudaError_t launchBroadcast(BinaryOp op, const float *x0, const float *x1, const float *x2, float *y,
                            const StridedView &v, cudaStream_t s);
/// y[i] = x[v.base[0] + offset of i under v.strides[0]] (transpose, slice, expand, concat/split parts).
cudaError_t launchStridedCopy(const float *x, float *y, const StridedView &v, int64_t yOffset,
                              const int64_t *yStrides, cudaStream_t s);
cudaError_t launchGather(const float *x, const int64_t *idx, float *y, int64_t outer, int64_t dim, int64_t inner,
                         int64_t k, cudaStream_t s);
/// Reduces the middle dim of [outer, len, inner].
cudaError_t launchReduce(ReduceOp op, const float *x, float *y, int64_t outer, int64_t len, int64_t inner,
                         cudaStream_t s);
cudaError_t launchSoftmax(const float *x, float *y, int64_t outer, int64_t len, int64_t inner, bool log,
                          cudaStream_t s);
/// Rows of `len` elements normalised, then scaled and shifted (bias may be null).
cudaError_t launchLayerNorm(const float *x, const float *scale, const float *bias, float *y, int64_t rows,
                            int64_t len, float eps, cudaStream_t s);
/// Per-channel affine of inference batch norm: y = (x - mean) * scale / sqrt(var + eps) + b.
cudaError_t launchBatchNorm(const float *x, const float *scale, const float *b, const float *mean, const float *var,
                            float *y, int64_t n, int64_t c, int64_t spatial, float eps, cudaStream_t s);
/// Widens host-built masks and indices: y[i] = (float)x[i].
cudaError_t launchInt64ToFloat(const int64_t *x, float *y, int64_t n, cudaStream_t s);

}  // namespace graphlint::verify::cuda
