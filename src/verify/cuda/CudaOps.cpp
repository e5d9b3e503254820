// The cuda backend's device ops: each reads its inputs' device tensors,
// allocates its outputs with the IR's static shapes and launches cuBLAS,
// cuDNN or an own kernel on the backend's stream.
#include "CudaBackend.h"

namespace graphlint::verify::cuda {
namespace {

using cpu::attrFloat;
using cpu::attrInt;
using cpu::attrInts;
using cpu::attrString;
using cpu::normAxis;
using cpu::stridesOf;

bool isUnary(const std::string &op) {
  static const std::set<std::string> ops = {"Relu", "Sigmoid", "Tanh", "Erf", "Exp", "Log", "Sqrt", "Neg", "Abs",
                                            "Reciprocal", "Gelu", "HardSigmoid", "HardSwish", "LeakyRelu", "Clip",
                                            "Identity", "Dropout", "Cast", "Reshape", "Flatten", "Squeeze",
                                            "Unsqueeze"};
  return ops.count(op);
}

// [outer, len, inner] around the contiguous dims [first, last] of `shape`.
void splitAround(const std::vector<int64_t> &shape, int64_t first, int64_t last, int64_t &outer, int64_t &len,
                 int64_t &inner) {
  outer = len = inner = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
    (d < first ? outer : d <= last ? len : inner) *= shape[d];
}

}  // namespace

llvm::Error CudaBackend::executeOnDevice(const Node &n) {
  for (const Value *v : n.outputs) {
    DeviceTensor d;
    if (v)
      if (auto e = allocate(*v, *staticShape(v), d))
        return e;
  }
  // Pointers into dev_ only once every output is in (insertion may rehash).
  std::vector<DeviceTensor *> ys;
  for (const Value *v : n.outputs)
    ys.push_back(v ? &dev_[v] : nullptr);
  if (ys.empty() || !ys[0])
    return fail(n.opType + ": no output");
  if (n.opType == "Concat" || n.opType == "Split" || n.opType == "Transpose" || n.opType == "Slice" ||
      n.opType == "Expand" || n.opType == "Gather")
    return movement(n, ys);
  for (size_t i = 1; i < ys.size(); ++i)
    if (ys[i])
      return fail(fmt::format("{}: output {} is not supported on the cuda backend", n.opType, i));
  DeviceTensor &y = *ys[0];
  if (isUnary(n.opType))
    return unary(n, y);
  if (n.opType == "MatMul")
    return matmul(n, y);
  if (n.opType == "Gemm")
    return gemm(n, y);
  if (n.opType == "Conv")
    return conv(n, y);
  if (n.opType == "MaxPool" || n.opType == "AveragePool")
    return pool(n, y);
  if (n.opType == "GlobalAveragePool" || n.opType == "GlobalMaxPool" || n.opType == "BatchNormalization" ||
      n.opType == "LayerNormalization" || n.opType == "Softmax" || n.opType == "LogSoftmax" ||
      n.opType.rfind("Reduce", 0) == 0)
    return reduceOrNorm(n, y);
  return broadcast(n, y);
}

llvm::Error CudaBackend::unary(const Node &n, DeviceTensor &y) {
  const DeviceTensor *x = in(n, 0);
  if (!x || x->numel() != y.numel())
    return fail(n.opType + ": input missing or of another size than the output");
  UnaryOp op = UnaryOp::Copy;
  float a = 0, b = 0;
  const std::string &t = n.opType;
  if (t == "Relu") op = UnaryOp::Relu;
  else if (t == "Sigmoid") op = UnaryOp::Sigmoid;
  else if (t == "Tanh") op = UnaryOp::Tanh;
  else if (t == "Erf") op = UnaryOp::Erf;
  else if (t == "Exp") op = UnaryOp::Exp;
  else if (t == "Log") op = UnaryOp::Log;
  else if (t == "Sqrt") op = UnaryOp::Sqrt;
  else if (t == "Neg") op = UnaryOp::Neg;
  else if (t == "Abs") op = UnaryOp::Abs;
  else if (t == "Reciprocal") op = UnaryOp::Reciprocal;
  else if (t == "Gelu") op = attrString(n, "approximate", "none") == "tanh" ? UnaryOp::GeluTanh : UnaryOp::Gelu;
  else if (t == "HardSigmoid") op = UnaryOp::HardSigmoid, a = attrFloat(n, "alpha", 0.2), b = attrFloat(n, "beta", 0.5);
  else if (t == "HardSwish") op = UnaryOp::HardSwish;
  else if (t == "LeakyRelu") op = UnaryOp::LeakyRelu, a = attrFloat(n, "alpha", 0.01);
  else if (t == "Clip") {
    op = UnaryOp::Clip;
    a = -INFINITY;
    b = INFINITY;
    if (n.opsetVersion < 11) {
      a = attrFloat(n, "min", a);
      b = attrFloat(n, "max", b);
    } else {
      if (auto lo = hostValue(n.inputs.size() > 1 ? n.inputs[1] : nullptr); lo && lo->numel())
        a = lo->data[0];
      if (auto hi = hostValue(n.inputs.size() > 2 ? n.inputs[2] : nullptr); hi && hi->numel())
        b = hi->data[0];
    }
  } else if (t == "Dropout") {
    if (auto tm = hostValue(n.inputs.size() > 2 ? n.inputs[2] : nullptr); tm && tm->numel() && tm->data[0] != 0)
      return fail("Dropout: training mode is not supported (inference only)");
  }
  // Views and copies (Reshape, Identity, Cast f32->f32, ...) are a device copy,
  // as the memory plan gives each output its own buffer.
  if (op == UnaryOp::Copy) {
    GL_CUDA(cudaMemcpyAsync(y.ptr, x->ptr, y.bytes, cudaMemcpyDeviceToDevice, stream_));
    return llvm::Error::success();
  }
  GL_CUDA(launchUnary(op, x->ptr, y.ptr, y.numel(), a, b, stream_));
  return llvm::Error::success();
}

llvm::Error CudaBackend::broadcast(const Node &n, DeviceTensor &y) {
  const std::string &t = n.opType;
  BinaryOp op = t == "Add" || t == "Sum" ? BinaryOp::Add : t == "Sub" ? BinaryOp::Sub : t == "Mul" ? BinaryOp::Mul
              : t == "Div" ? BinaryOp::Div : t == "Pow" ? BinaryOp::Pow : t == "Max" ? BinaryOp::Max
              : t == "Min" ? BinaryOp::Min : BinaryOp::Where;
  size_t operands = op == BinaryOp::Where ? 3 : 2;
  if (n.inputs.size() != operands)
    return fail(fmt::format("{}: {} inputs are not supported on the cuda backend", t, n.inputs.size()));
  const float *ptr[3] = {nullptr, nullptr, nullptr};
  std::vector<int64_t> shapes[3];
  for (size_t i = 0; i < operands; ++i) {
    auto p = asDeviceFloats(n, i, shapes[i]);
    if (!p)
      return p.takeError();
    ptr[i] = *p;
    if (shapes[i].size() > y.shape.size() || y.shape.size() > static_cast<size_t>(kMaxRank))
      return fail(t + ": rank not supported");
  }
  std::vector<std::vector<int64_t>> strides;
  for (size_t i = 0; i < operands; ++i) {
    std::optional<std::vector<int64_t>> st = broadcastStrides(shapes[i], y.shape);
    if (!st)
      return fail(t + ": an input does not broadcast to the output");
    strides.push_back(std::move(*st));
  }
  StridedView v = viewOf(y.shape, strides);
  GL_CUDA(launchBroadcast(op, ptr[0], ptr[1], ptr[2], y.ptr, v, stream_));
  return llvm::Error::success();
}

// Row-major C = A x B as column-major C^T = B^T x A^T, batched over the
// leading dims (B may be shared by every batch).
llvm::Error CudaBackend::matmul(const Node &n, DeviceTensor &y) {
  const DeviceTensor *a = in(n, 0), *b = in(n, 1);
  if (!a || !b || a->shape.size() < 2 || b->shape.size() < 2)
    return fail("MatMul: 1-D operands are not supported on the cuda backend");
  int64_t M = a->shape[a->shape.size() - 2], K = a->shape.back(), N = b->shape.back();
  int64_t batchA = a->numel() / (M * K), batchB = b->numel() / (K * N), batch = y.numel() / (M * N);
  if (b->shape[b->shape.size() - 2] != K || batchA != batch || (batchB != batch && batchB != 1))
    return fail("MatMul: this batch broadcast is not supported on the cuda backend");
  float one = 1, zero = 0;
  GL_CUBLAS(cublasSgemmStridedBatched(cublas_, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(N), static_cast<int>(M),
                                      static_cast<int>(K), &one, b->ptr, static_cast<int>(N),
                                      batchB == 1 ? 0 : K * N, a->ptr, static_cast<int>(K), M * K, &zero, y.ptr,
                                      static_cast<int>(N), M * N, static_cast<int>(batch)));
  return llvm::Error::success();
}

llvm::Error CudaBackend::gemm(const Node &n, DeviceTensor &y) {
  const DeviceTensor *a = in(n, 0), *b = in(n, 1), *c = in(n, 2);
  if (!a || !b || a->shape.size() != 2 || b->shape.size() != 2)
    return fail("Gemm: expects 2-D A and B on the device");
  bool ta = attrInt(n, "transA", 0), tb = attrInt(n, "transB", 0);
  float alpha = attrFloat(n, "alpha", 1.0), beta = c ? attrFloat(n, "beta", 1.0) : 0.f;
  int64_t M = y.shape[0], N = y.shape[1], K = ta ? a->shape[0] : a->shape[1];
  if (c) {  // Y starts as C broadcast to (M, N); the GEMM accumulates with beta.
    std::optional<std::vector<int64_t>> cs = broadcastStrides(c->shape, y.shape);
    if (!cs)
      return fail("Gemm: C does not broadcast to the output");
    StridedView v = viewOf(y.shape, {*cs});
    auto ys = stridesOf(y.shape);
    GL_CUDA(launchStridedCopy(c->ptr, y.ptr, v, 0, ys.data(), stream_));
  }
  GL_CUBLAS(cublasSgemm(cublas_, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                        static_cast<int>(N), static_cast<int>(M), static_cast<int>(K), &alpha, b->ptr,
                        static_cast<int>(tb ? K : N), a->ptr, static_cast<int>(ta ? M : K), &beta, y.ptr,
                        static_cast<int>(N)));
  return llvm::Error::success();
}

llvm::Error CudaBackend::conv(const Node &n, DeviceTensor &y) {
  const DeviceTensor *x = in(n, 0), *w = in(n, 1), *bias = in(n, 2);
  if (!x || !w || x->shape.size() != 4 || w->shape.size() != 4)
    return fail("Conv: only 2-D convolution runs on the cuda backend");
  std::vector<int64_t> pads = attrInts(n, "pads", {0, 0, 0, 0}), st = attrInts(n, "strides", {1, 1}),
                       dil = attrInts(n, "dilations", {1, 1});
  std::string autoPad = attrString(n, "auto_pad", "NOTSET");
  if ((autoPad != "NOTSET" && autoPad != "VALID") || pads.size() != 4 || pads[0] != pads[2] || pads[1] != pads[3])
    return fail("Conv: auto_pad SAME and asymmetric pads are not supported on the cuda backend");
  if (autoPad == "VALID")
    pads = {0, 0, 0, 0};
  int group = static_cast<int>(attrInt(n, "group", 1));
  cudnnTensorDescriptor_t xd, yd;
  cudnnFilterDescriptor_t wd;
  cudnnConvolutionDescriptor_t cd;
  GL_CUDNN(cudnnCreateTensorDescriptor(&xd));
  GL_CUDNN(cudnnCreateTensorDescriptor(&yd));
  GL_CUDNN(cudnnCreateFilterDescriptor(&wd));
  GL_CUDNN(cudnnCreateConvolutionDescriptor(&cd));
  auto destroy = [&] {
    cudnnDestroyTensorDescriptor(xd);
    cudnnDestroyTensorDescriptor(yd);
    cudnnDestroyFilterDescriptor(wd);
    cudnnDestroyConvolutionDescriptor(cd);
  };
  auto i = [](int64_t v) { return static_cast<int>(v); };
  llvm::Error e = [&]() -> llvm::Error {
    GL_CUDNN(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, i(x->shape[0]), i(x->shape[1]),
                                        i(x->shape[2]), i(x->shape[3])));
    GL_CUDNN(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, i(y.shape[0]), i(y.shape[1]),
                                        i(y.shape[2]), i(y.shape[3])));
    GL_CUDNN(cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, i(w->shape[0]), i(w->shape[1]),
                                        i(w->shape[2]), i(w->shape[3])));
    GL_CUDNN(cudnnSetConvolution2dDescriptor(cd, i(pads[0]), i(pads[1]), i(st[0]), i(st[1]), i(dil[0]), i(dil[1]),
                                             CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    GL_CUDNN(cudnnSetConvolutionGroupCount(cd, group));
    cudnnConvolutionFwdAlgoPerf_t perf[8];
    int found = 0;
    GL_CUDNN(cudnnGetConvolutionForwardAlgorithm_v7(cudnn_, xd, wd, cd, yd, 8, &found, perf));
    int pick = 0;
    while (pick < found && perf[pick].status != CUDNN_STATUS_SUCCESS)
      ++pick;
    if (pick == found)
      return fail("Conv: cuDNN found no algorithm");
    cudnnConvolutionFwdAlgo_t algo = perf[pick].algo;
    size_t wsBytes = 0;
    GL_CUDNN(cudnnGetConvolutionForwardWorkspaceSize(cudnn_, xd, wd, cd, yd, algo, &wsBytes));
    char *ws = nullptr;
    if (wsBytes)
      if (auto err = temp(wsBytes, ws))
        return err;
    float one = 1, zero = 0;
    GL_CUDNN(cudnnConvolutionForward(cudnn_, &one, xd, x->ptr, wd, w->ptr, cd, algo, ws, wsBytes, &zero, yd, y.ptr));
    if (bias) {  // y += bias over the channel dim
      StridedView v = viewOf(y.shape, {stridesOf(y.shape), {0, 1, 0, 0}});
      GL_CUDA(launchBroadcast(BinaryOp::Add, y.ptr, bias->ptr, nullptr, y.ptr, v, stream_));
    }
    return llvm::Error::success();
  }();
  destroy();
  return e;
}

llvm::Error CudaBackend::pool(const Node &n, DeviceTensor &y) {
  const DeviceTensor *x = in(n, 0);
  std::vector<int64_t> k = attrInts(n, "kernel_shape"), pads = attrInts(n, "pads", {0, 0, 0, 0}),
                       st = attrInts(n, "strides", {1, 1}), dil = attrInts(n, "dilations", {1, 1});
  if (!x || x->shape.size() != 4 || k.size() != 2 || pads.size() != 4 || pads[0] != pads[2] ||
      pads[1] != pads[3] || dil != std::vector<int64_t>{1, 1} || attrString(n, "auto_pad", "NOTSET") != "NOTSET")
    return fail(n.opType + ": only 2-D pooling with symmetric pads and no dilation runs on the cuda backend");
  bool max = n.opType == "MaxPool";
  cudnnPoolingMode_t mode = max ? CUDNN_POOLING_MAX
                                : attrInt(n, "count_include_pad", 0) ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                                                     : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
  cudnnPoolingDescriptor_t pd;
  cudnnTensorDescriptor_t xd, yd;
  GL_CUDNN(cudnnCreatePoolingDescriptor(&pd));
  GL_CUDNN(cudnnCreateTensorDescriptor(&xd));
  GL_CUDNN(cudnnCreateTensorDescriptor(&yd));
  auto i = [](int64_t v) { return static_cast<int>(v); };
  llvm::Error e = [&]() -> llvm::Error {
    GL_CUDNN(cudnnSetPooling2dDescriptor(pd, mode, CUDNN_NOT_PROPAGATE_NAN, i(k[0]), i(k[1]), i(pads[0]),
                                         i(pads[1]), i(st[0]), i(st[1])));
    GL_CUDNN(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, i(x->shape[0]), i(x->shape[1]),
                                        i(x->shape[2]), i(x->shape[3])));
    int dims[4];
    GL_CUDNN(cudnnGetPooling2dForwardOutputDim(pd, xd, &dims[0], &dims[1], &dims[2], &dims[3]));
    if (dims[2] != y.shape[2] || dims[3] != y.shape[3])
      return fail(n.opType + ": ceil_mode output sizes are not supported on the cuda backend");
    GL_CUDNN(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, i(y.shape[0]), i(y.shape[1]),
                                        i(y.shape[2]), i(y.shape[3])));
    float one = 1, zero = 0;
    GL_CUDNN(cudnnPoolingForward(cudnn_, pd, &one, xd, x->ptr, &zero, yd, y.ptr));
    return llvm::Error::success();
  }();
  cudnnDestroyPoolingDescriptor(pd);
  cudnnDestroyTensorDescriptor(xd);
  cudnnDestroyTensorDescriptor(yd);
  return e;
}

llvm::Error CudaBackend::reduceOrNorm(const Node &n, DeviceTensor &y) {
  const DeviceTensor *x = in(n, 0);
  if (!x)
    return fail(n.opType + ": input is not on the device");
  const std::string &t = n.opType;
  int64_t rank = static_cast<int64_t>(x->shape.size()), outer, len, inner;
  if (t == "GlobalAveragePool" || t == "GlobalMaxPool") {
    splitAround(x->shape, 2, rank - 1, outer, len, inner);
    GL_CUDA(launchReduce(t == "GlobalMaxPool" ? ReduceOp::Max : ReduceOp::Mean, x->ptr, y.ptr, outer, len, inner,
                         stream_));
  } else if (t == "BatchNormalization") {
    const DeviceTensor *s = in(n, 1), *b = in(n, 2), *m = in(n, 3), *v = in(n, 4);
    if (!s || !b || !m || !v || rank < 2)
      return fail("BatchNormalization: parameters are not on the device");
    GL_CUDA(launchBatchNorm(x->ptr, s->ptr, b->ptr, m->ptr, v->ptr, y.ptr, x->shape[0], x->shape[1],
                            x->numel() / (x->shape[0] * x->shape[1]), attrFloat(n, "epsilon", 1e-5), stream_));
  } else if (t == "LayerNormalization") {
    auto axis = normAxis(attrInt(n, "axis", -1), rank);
    const DeviceTensor *s = in(n, 1), *b = in(n, 2);
    if (!axis || !s)
      return fail("LayerNormalization: bad axis or no scale on the device");
    splitAround(x->shape, *axis, rank - 1, outer, len, inner);
    if (s->numel() != len || (b && b->numel() != len))
      return fail("LayerNormalization: broadcast scale or bias is not supported on the cuda backend");
    GL_CUDA(launchLayerNorm(x->ptr, s->ptr, b ? b->ptr : nullptr, y.ptr, outer, len, attrFloat(n, "epsilon", 1e-5),
                            stream_));
  } else if (t == "Softmax" || t == "LogSoftmax") {
    bool legacy = n.opsetVersion < 13;
    auto axis = normAxis(attrInt(n, "axis", legacy ? 1 : -1), std::max<int64_t>(rank, 1));
    if (!axis)
      return fail(t + ": bad axis");
    splitAround(x->shape, *axis, legacy ? rank - 1 : *axis, outer, len, inner);
    GL_CUDA(launchSoftmax(x->ptr, y.ptr, outer, len, inner, t == "LogSoftmax", stream_));
  } else {  // ReduceMean / ReduceSum / ReduceMax over contiguous axes
    bool axesAsInput = t == "ReduceSum" ? n.opsetVersion >= 13 : n.opsetVersion >= 18;
    std::vector<int64_t> axes = attrInts(n, "axes");
    if (axesAsInput)
      if (auto a = hostValue(n.inputs.size() > 1 ? n.inputs[1] : nullptr))
        axes = a->asInts();
    std::set<int64_t> norm;
    for (int64_t a : axes)
      if (auto na = normAxis(a, rank))
        norm.insert(*na);
    if (axes.empty())
      for (int64_t d = 0; d < rank; ++d)
        norm.insert(d);
    if (norm.empty() || *norm.rbegin() - *norm.begin() + 1 != static_cast<int64_t>(norm.size()))
      return fail(t + ": non-contiguous axes are not supported on the cuda backend");
    splitAround(x->shape, *norm.begin(), *norm.rbegin(), outer, len, inner);
    ReduceOp op = t == "ReduceMax" ? ReduceOp::Max : t == "ReduceMean" ? ReduceOp::Mean : ReduceOp::Sum;
    GL_CUDA(launchReduce(op, x->ptr, y.ptr, outer, len, inner, stream_));
  }
  return llvm::Error::success();
}

llvm::Error CudaBackend::movement(const Node &n, std::vector<DeviceTensor *> &ys) {
  const std::string &t = n.opType;
  const DeviceTensor *x = in(n, 0);
  if (t == "Concat") {
    DeviceTensor &y = *ys[0];
    auto axis = normAxis(attrInt(n, "axis", 0), static_cast<int64_t>(y.shape.size()));
    if (!axis)
      return fail("Concat: bad axis");
    std::vector<int64_t> yStrides = stridesOf(y.shape);
    int64_t pos = 0;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      std::vector<int64_t> shape;
      auto p = asDeviceFloats(n, i, shape);
      if (!p)
        return p.takeError();
      StridedView v = viewOf(shape, {stridesOf(shape)});
      GL_CUDA(launchStridedCopy(*p, y.ptr, v, pos * yStrides[*axis], yStrides.data(), stream_));
      pos += shape[*axis];
    }
    return llvm::Error::success();
  }
  if (!x)
    return fail(t + ": input is not on the device");
  std::vector<int64_t> xs = stridesOf(x->shape);
  if (t == "Split") {
    auto axis = normAxis(attrInt(n, "axis", 0), static_cast<int64_t>(x->shape.size()));
    if (!axis)
      return fail("Split: bad axis");
    int64_t pos = 0;
    for (DeviceTensor *y : ys) {
      if (!y)
        continue;
      StridedView v = viewOf(y->shape, {xs});
      v.base[0] = pos * xs[*axis];
      std::vector<int64_t> own = stridesOf(y->shape);
      GL_CUDA(launchStridedCopy(x->ptr, y->ptr, v, 0, own.data(), stream_));
      pos += y->shape[*axis];
    }
    return llvm::Error::success();
  }
  DeviceTensor &y = *ys[0];
  std::vector<int64_t> ys0 = stridesOf(y.shape);
  if (t == "Transpose") {
    std::vector<int64_t> perm = attrInts(n, "perm");
    if (perm.empty())
      for (size_t i = x->shape.size(); i-- > 0;)
        perm.push_back(static_cast<int64_t>(i));
    std::vector<int64_t> strides;
    for (int64_t p : perm)
      strides.push_back(xs[p]);
    GL_CUDA(launchStridedCopy(x->ptr, y.ptr, viewOf(y.shape, {strides}), 0, ys0.data(), stream_));
  } else if (t == "Expand") {
    std::optional<std::vector<int64_t>> bs = broadcastStrides(x->shape, y.shape);
    if (!bs)
      return fail("Expand: the input does not broadcast to the output");
    GL_CUDA(launchStridedCopy(x->ptr, y.ptr, viewOf(y.shape, {*bs}), 0, ys0.data(), stream_));
  } else if (t == "Slice") {
    auto starts = hostValue(n.inputs.size() > 1 ? n.inputs[1] : nullptr);
    auto axesT = hostValue(n.inputs.size() > 3 ? n.inputs[3] : nullptr);
    auto stepsT = hostValue(n.inputs.size() > 4 ? n.inputs[4] : nullptr);
    if (n.opsetVersion < 10 || !starts)
      return fail("Slice: attribute form (opset < 10) is not supported on the cuda backend");
    int64_t rank = static_cast<int64_t>(x->shape.size());
    std::vector<int64_t> st = starts->asInts(), axes = axesT ? axesT->asInts() : std::vector<int64_t>(),
                         steps = stepsT ? stepsT->asInts() : std::vector<int64_t>(st.size(), 1);
    if (axes.empty())
      for (size_t i = 0; i < st.size(); ++i)
        axes.push_back(static_cast<int64_t>(i));
    std::vector<int64_t> strides = xs;
    StridedView v = viewOf(y.shape, {});
    for (size_t i = 0; i < st.size() && i < axes.size() && i < steps.size(); ++i) {
      auto a = normAxis(axes[i], rank);
      if (!a)
        return fail("Slice: bad axis");
      int64_t dim = x->shape[*a], s = st[i] < 0 ? st[i] + dim : st[i];
      s = steps[i] > 0 ? std::clamp<int64_t>(s, 0, dim) : std::clamp<int64_t>(s, 0, dim - 1);
      v.base[0] += s * xs[*a];
      strides[*a] = xs[*a] * steps[i];
    }
    for (size_t d = 0; d < strides.size(); ++d)
      v.strides[0][d] = strides[d];
    GL_CUDA(launchStridedCopy(x->ptr, y.ptr, v, 0, ys0.data(), stream_));
  } else {  // Gather: indices are host-held integers, uploaded for the kernel
    auto idx = hostValue(n.inputs.size() > 1 ? n.inputs[1] : nullptr);
    auto axis = normAxis(attrInt(n, "axis", 0), static_cast<int64_t>(x->shape.size()));
    if (!idx || !axis)
      return fail("Gather: indices missing or bad axis");
    int64_t outer, dim, inner;
    splitAround(x->shape, *axis, *axis, outer, dim, inner);
    std::vector<int64_t> host = idx->asInts();
    int64_t *dIdx = nullptr;
    if (auto e = temp(host.size(), dIdx))
      return e;
    GL_CUDA(cudaMemcpyAsync(dIdx, host.data(), host.size() * sizeof(int64_t), cudaMemcpyHostToDevice, stream_));
    GL_CUDA(launchGather(x->ptr, dIdx, y.ptr, outer, dim, inner, static_cast<int64_t>(host.size()), stream_));
    GL_CUDA(cudaStreamSynchronize(stream_));  // `host` dies here
  }
  return llvm::Error::success();
}

}  // namespace graphlint::verify::cuda
