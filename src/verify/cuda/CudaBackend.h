// The cuda backend of graphlint verify: float32 tensors in device memory from
// a stream-ordered cudaMallocAsync pool (release threshold at maximum, so
// freed blocks stay cached as in a caching allocator), cuBLAS for MatMul and
// Gemm, cuDNN for 2-D convolution and pooling, own kernels (CudaKernels.cu)
// for the rest. Integer and bool tensors (shape arithmetic, masks, indices)
// stay on the host and run through the cpu reference kernels, as runtimes do
// with shape subgraphs; a host result consumed by a device op is uploaded.
// Output shapes come from the IR's static types (verify binds every dim).
#pragma once

#include "CudaKernels.h"
#include "CuptiTrace.h"

#include "../cpu/CpuKernels.h"
#include "graphlint/verify/Executor.h"

#include <cublas_v2.h>
#include <cudnn.h>

#include <llvm/ADT/DenseMap.h>

#include <fmt/format.h>

#include <cmath>
#include <set>

namespace graphlint::verify::cuda {

inline llvm::Error fail(const std::string &msg) { return llvm::createStringError(llvm::inconvertibleErrorCode(), msg); }

inline std::string statusText(cudaError_t e) { return cudaGetErrorString(e); }
inline std::string statusText(cublasStatus_t e) { return fmt::format("cuBLAS status {}", static_cast<int>(e)); }
inline std::string statusText(cudnnStatus_t e) { return cudnnGetErrorString(e); }

// Returns an llvm::Error naming the call when a CUDA, cuBLAS or cuDNN call fails.
#define GL_CHECK(call, ok)                                                                                     \
  do {                                                                                                         \
    auto e_ = (call);                                                                                          \
    if (e_ != (ok))                                                                                            \
      return fail(fmt::format("{} failed: {}", #call, statusText(e_)));                                        \
  } while (0)
#define GL_CUDA(call) GL_CHECK(call, cudaSuccess)
#define GL_CUBLAS(call) GL_CHECK(call, CUBLAS_STATUS_SUCCESS)
#define GL_CUDNN(call) GL_CHECK(call, CUDNN_STATUS_SUCCESS)

struct DeviceTensor {
  std::vector<int64_t> shape;
  float *ptr = nullptr;
  uint64_t bytes = 0;
  int64_t numel() const { return HostTensor::count(shape); }
};

inline std::optional<std::vector<int64_t>> staticShape(const Value *v) {
  if (!v || !v->type.isTensor() || !v->type.shape.isFullyStatic())
    return std::nullopt;
  std::vector<int64_t> s;
  for (const Dim &d : v->type.shape.dims)
    s.push_back(d.value);
  return s;
}

// Ops with a device implementation below (float32 in, float32 out).
inline const std::set<std::string> &deviceOps() {
  static const std::set<std::string> ops = {
      "Relu", "Sigmoid", "Tanh", "Erf", "Exp", "Log", "Sqrt", "Neg", "Abs", "Reciprocal", "Gelu", "HardSigmoid",
      "HardSwish", "LeakyRelu", "Clip", "Identity", "Dropout", "Cast", "Add", "Sub", "Mul", "Div", "Pow", "Max",
      "Min", "Sum", "Where", "MatMul", "Gemm", "Conv", "MaxPool", "AveragePool", "GlobalAveragePool",
      "GlobalMaxPool", "BatchNormalization", "LayerNormalization", "Softmax", "LogSoftmax", "ReduceMean",
      "ReduceSum", "ReduceMax", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Slice", "Expand",
      "Concat", "Split", "Gather"};
  return ops;
}

inline StridedView viewOf(const std::vector<int64_t> &out, llvm::ArrayRef<std::vector<int64_t>> strides) {
  StridedView v;
  v.rank = static_cast<int>(out.size());
  for (size_t d = 0; d < out.size(); ++d)
    v.shape[d] = out[d];
  int j = 0;
  for (const auto &s : strides) {
    for (size_t d = 0; d < s.size(); ++d)
      v.strides[j][d] = s[d];
    ++j;
  }
  return v;
}

class CudaBackend final : public Backend {
public:
  ~CudaBackend() override {
    for (auto &e : dev_)
      cudaFreeAsync(e.second.ptr, stream_);
    if (stream_)
      cudaStreamSynchronize(stream_);
    trace_.reset();
    if (cudnn_)
      cudnnDestroy(cudnn_);
    if (cublas_)
      cublasDestroy(cublas_);
    if (stream_)
      cudaStreamDestroy(stream_);
  }

  llvm::Error init() {
    int device = 0;
    GL_CUDA(cudaGetDevice(&device));
    cudaDeviceProp prop{};
    GL_CUDA(cudaGetDeviceProperties(&prop, device));
    name_ = prop.name;
    GL_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    GL_CUDA(cudaDeviceGetDefaultMemPool(&pool_, device));
    uint64_t keep = UINT64_MAX;
    GL_CUDA(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep));
    GL_CUBLAS(cublasCreate(&cublas_));
    GL_CUBLAS(cublasSetStream(cublas_, stream_));
    GL_CUDNN(cudnnCreate(&cudnn_));
    GL_CUDNN(cudnnSetStream(cudnn_, stream_));
    auto trace = cuda::CuptiTrace::start();
    if (!trace)
      return trace.takeError();
    trace_ = std::move(*trace);
    return llvm::Error::success();
  }

  std::string_view name() const override { return "cuda"; }
  const std::string &deviceName() const { return name_; }

  std::optional<std::string> unsupported(const Node &n) const override {
    if (!n.domain.empty() && n.domain != "ai.onnx")
      return "no kernel for domain '" + n.domain + "'";
    bool host = runsOnHost(n);
    if (host && !host_->unsupported(n) && !deviceInputs(n))
      return std::nullopt;
    if (host && n.opType == "Shape")
      return std::nullopt;
    if (host)
      return std::string("a host (integer) op reads a device tensor");
    if (!deviceOps().count(n.opType))
      return std::string("no cuda kernel for this op");
    for (const Value *v : n.outputs)
      if (v && !staticShape(v))
        return "output '" + v->name + "' has no static shape (" + v->type.str() + ")";
    return std::nullopt;
  }

  llvm::Error bind(const Value &v, const HostTensor &t) override {
    if (t.dtype != DType::Float)
      return host_->bind(v, t);
    return upload(v, t);
  }

  llvm::Error execute(const Node &n) override {
    trace_->pushNode(n.index + 1, n.name.empty() ? n.opType : n.name);
    llvm::Error e = runsOnHost(n) ? executeOnHost(n) : executeOnDevice(n);
    trace_->popNode();
    // Temporaries (uploaded masks and indices, workspaces) die with the node.
    for (void *p : temps_)
      cudaFreeAsync(p, stream_);
    temps_.clear();
    return e;
  }

  uint64_t bytesOf(const Value &v) const override {
    if (auto it = dev_.find(&v); it != dev_.end())
      return it->second.bytes;
    return host_->bytesOf(v);
  }

  void release(const Value &v) override {
    if (auto it = dev_.find(&v); it != dev_.end()) {
      cudaFreeAsync(it->second.ptr, stream_);
      dev_.erase(it);
      return;
    }
    host_->release(v);
  }

  std::optional<HostTensor> fetch(const Value &v) const override {
    auto it = dev_.find(&v);
    if (it == dev_.end())
      return host_->fetch(v);
    std::vector<float> buf(it->second.numel());
    if (cudaStreamSynchronize(stream_) != cudaSuccess ||
        cudaMemcpy(buf.data(), it->second.ptr, it->second.bytes, cudaMemcpyDeviceToHost) != cudaSuccess)
      return std::nullopt;
    HostTensor t(DType::Float, it->second.shape);
    for (size_t i = 0; i < buf.size(); ++i)
      t.data[i] = buf[i];
    return t;
  }

  void beginRun(unsigned) override {
    cudaStreamSynchronize(stream_);
    trace_->clear();
    uint64_t zero = 0;
    cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrUsedMemHigh, &zero);
    cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReservedMemHigh, &zero);
  }

  void endRun() override {
    cudaStreamSynchronize(stream_);
    trace_->flush();
  }

  void annotate(RunRecord &r) const override {
    llvm::DenseMap<uint64_t, NodeRecord *> byId;
    for (NodeRecord &nr : r.nodes) {
      nr.seconds = 0;
      nr.kernels = 0;
      byId[nr.node->index + 1] = &nr;
    }
    for (const cuda::KernelRecord &k : trace_->kernels())
      if (NodeRecord *nr = byId.lookup(k.node)) {
        nr->seconds += static_cast<double>(k.end - k.start) * 1e-9;
        ++nr->kernels;
      }
    r.memcpys = static_cast<unsigned>(trace_->memcpys().size());
    uint64_t used = 0;
    if (cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrUsedMemHigh, &used) == cudaSuccess)
      r.devicePeakBytes = used;
  }

private:
  // Integer/bool results (shape arithmetic, masks, indices) run on the host.
  bool runsOnHost(const Node &n) const {
    bool anyOutput = false;
    for (const Value *v : n.outputs) {
      if (!v)
        continue;
      anyOutput = true;
      if (v->type.dtype == DType::Float)
        return !deviceOps().count(n.opType) || !deviceInputs(n);
    }
    return anyOutput;
  }

  bool deviceInputs(const Node &n) const {
    for (const Value *v : n.inputs)
      if (v && dev_.count(v))
        return true;
    return false;
  }

  llvm::Error upload(const Value &v, const HostTensor &t) {
    std::vector<float> buf(t.data.begin(), t.data.end());
    DeviceTensor d;
    if (auto e = allocate(v, t.shape, d))
      return e;
    GL_CUDA(cudaMemcpyAsync(d.ptr, buf.data(), d.bytes, cudaMemcpyHostToDevice, stream_));
    GL_CUDA(cudaStreamSynchronize(stream_));  // buf dies here
    return llvm::Error::success();
  }

  llvm::Error allocate(const Value &v, const std::vector<int64_t> &shape, DeviceTensor &out) {
    release(v);  // a warm-up run left the graph outputs behind
    out.shape = shape;
    out.bytes = static_cast<uint64_t>(out.numel()) * sizeof(float);
    if (out.bytes)
      GL_CUDA(cudaMallocAsync(reinterpret_cast<void **>(&out.ptr), out.bytes, pool_, stream_));
    dev_[&v] = out;
    return llvm::Error::success();
  }

  template <typename T> llvm::Error temp(size_t count, T *&p) {
    GL_CUDA(cudaMallocAsync(reinterpret_cast<void **>(&p), std::max<size_t>(count, 1) * sizeof(T), pool_, stream_));
    temps_.push_back(p);
    return llvm::Error::success();
  }

  llvm::Error executeOnHost(const Node &n) {
    if (n.opType == "Shape" && deviceInputs(n)) {
      const DeviceTensor &x = dev_[n.inputs[0]];
      HostTensor meta(DType::Float, {});
      meta.shape = x.shape;  // the Shape kernel reads only the shape
      meta.data.clear();
      std::vector<const HostTensor *> in = {&meta};
      cpu::Outputs out(1);
      if (auto e = cpu::kernelForOp("Shape")(n, in, out))
        return e;
      return host_->bind(*n.outputs[0], out[0]);
    }
    if (auto e = host_->execute(n))
      return e;
    for (const Value *v : n.outputs) {
      if (!v || v->type.dtype != DType::Float)
        continue;
      auto t = host_->fetch(*v);
      host_->release(*v);
      if (!t)
        return fail("host result missing");
      if (auto e = upload(*v, *t))
        return e;
    }
    return llvm::Error::success();
  }

  // A host-held value (shape vector, axes, scalars) or a small device one, read on the host.
  std::optional<HostTensor> hostValue(const Value *v) const {
    if (!v)
      return std::nullopt;
    return fetch(*v);
  }

  const DeviceTensor *in(const Node &n, size_t i) const {
    if (i >= n.inputs.size() || !n.inputs[i])
      return nullptr;
    auto it = dev_.find(n.inputs[i]);
    return it == dev_.end() ? nullptr : &it->second;
  }

  // A host-held float input a device kernel reads (a Where mask, say): uploaded as a temporary.
  llvm::Expected<const float *> asDeviceFloats(const Node &n, size_t i, std::vector<int64_t> &shape) {
    if (const DeviceTensor *d = in(n, i)) {
      shape = d->shape;
      return d->ptr;
    }
    auto t = hostValue(i < n.inputs.size() ? n.inputs[i] : nullptr);
    if (!t)
      return fail(fmt::format("{}: input {} is missing", n.opType, i));
    shape = t->shape;
    std::vector<float> buf(t->data.begin(), t->data.end());
    float *p = nullptr;
    if (auto e = temp(buf.size(), p))
      return e;
    GL_CUDA(cudaMemcpyAsync(p, buf.data(), buf.size() * sizeof(float), cudaMemcpyHostToDevice, stream_));
    GL_CUDA(cudaStreamSynchronize(stream_));
    return p;
  }

  llvm::Error executeOnDevice(const Node &n);
  llvm::Error unary(const Node &n, DeviceTensor &y);
  llvm::Error broadcast(const Node &n, DeviceTensor &y);
  llvm::Error matmul(const Node &n, DeviceTensor &y);
  llvm::Error gemm(const Node &n, DeviceTensor &y);
  llvm::Error conv(const Node &n, DeviceTensor &y);
  llvm::Error pool(const Node &n, DeviceTensor &y);
  llvm::Error reduceOrNorm(const Node &n, DeviceTensor &y);
  llvm::Error movement(const Node &n, std::vector<DeviceTensor *> &ys);

  std::string name_;
  cudaStream_t stream_ = nullptr;
  cudaMemPool_t pool_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  cudnnHandle_t cudnn_ = nullptr;
  std::unique_ptr<cuda::CuptiTrace> trace_;
  std::unique_ptr<Backend> host_ = makeCpuBackend();
  llvm::DenseMap<const Value *, DeviceTensor> dev_;
  std::vector<void *> temps_;

};

}  // namespace graphlint::verify::cuda
