// The cpu reference backend: host tensors in a map from IR value, one kernel
// per op from the tables in this directory, and the helpers they share.
#include "CpuKernels.h"

#include "graphlint/verify/Executor.h"

#include <llvm/ADT/DenseMap.h>

#include <fmt/format.h>

namespace graphlint::verify {
namespace cpu {

llvm::Error kernelError(const Node &n, const std::string &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s '%s': %s", n.opType.c_str(), n.name.c_str(),
                                 msg.c_str());
}

llvm::Error result(Outputs &out, HostTensor y) {
  if (out.empty())  // runPlan refuses such nodes first; kernels never index past it
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "the node has no outputs");
  y.roundToDtype();
  out[0] = std::move(y);
  return llvm::Error::success();
}

int64_t attrInt(const Node &n, llvm::StringRef name, int64_t fallback) {
  const Attribute *a = n.attr(name);
  return a && a->kind == AttrKind::Int ? a->i : fallback;
}

double attrFloat(const Node &n, llvm::StringRef name, double fallback) {
  const Attribute *a = n.attr(name);
  return a && a->kind == AttrKind::Float ? a->f : fallback;
}

std::string attrString(const Node &n, llvm::StringRef name, const std::string &fallback) {
  const Attribute *a = n.attr(name);
  return a && a->kind == AttrKind::String ? a->s : fallback;
}

std::vector<int64_t> attrInts(const Node &n, llvm::StringRef name, std::vector<int64_t> fallback) {
  const Attribute *a = n.attr(name);
  return a && a->kind == AttrKind::Ints ? a->ints : fallback;
}

const HostTensor *input(Inputs in, size_t i) { return i < in.size() ? in[i] : nullptr; }

std::optional<int64_t> normAxis(int64_t axis, int64_t rank) {
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return std::nullopt;
  return axis;
}

std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    s[i - 1] = s[i] * shape[i];
  return s;
}

}  // namespace cpu

namespace {

const cpu::KernelTable &kernels() {
  static const cpu::KernelTable table = [] {
    cpu::KernelTable t;
    cpu::addElementwiseKernels(t);
    cpu::addContractionKernels(t);
    cpu::addNormalizationKernels(t);
    cpu::addLayoutKernels(t);
    return t;
  }();
  return table;
}

}  // namespace

cpu::Kernel cpu::kernelForOp(llvm::StringRef op) { return kernels().lookup(op); }

namespace {

class CpuBackend final : public Backend {
public:
  std::string_view name() const override { return "cpu"; }

  std::optional<std::string> unsupported(const Node &n) const override {
    if (!n.domain.empty() && n.domain != "ai.onnx")
      return "no kernel for domain '" + n.domain + "'";
    if (!cpu::kernelForOp(n.opType))
      return std::string("no cpu kernel for this op");
    for (const Value *v : n.inputs)
      if (v && !tensors_.count(v))
        return "input '" + v->name + "' holds no tensor";
    for (const Value *v : n.outputs)
      if (v && v->type.dtype != DType::Undefined && !hostSupportsDtype(v->type.dtype))
        return "output '" + v->name + "' has dtype " + std::string(dtypeName(v->type.dtype)) +
               ", which the cpu backend does not compute";
    return std::nullopt;
  }

  llvm::Error bind(const Value &v, const HostTensor &t) override {
    tensors_[&v] = t;
    return llvm::Error::success();
  }

  llvm::Error execute(const Node &n) override {
    std::vector<const HostTensor *> in;
    for (const Value *v : n.inputs) {
      auto it = v ? tensors_.find(v) : tensors_.end();
      in.push_back(it == tensors_.end() ? nullptr : &it->second);
    }
    cpu::Outputs out(n.outputs.size());
    // A shape from bad data (negative or enormous dims) must not crash the
    // run: allocation failures become the node's error.
    try {
      if (llvm::Error e = cpu::kernelForOp(n.opType)(n, in, out))
        return e;
    } catch (const std::exception &ex) {
      return cpu::kernelError(n, std::string("cannot allocate the result: ") + ex.what());
    }
    for (size_t i = 0; i < n.outputs.size(); ++i)
      if (n.outputs[i])
        tensors_[n.outputs[i]] = std::move(out[i]);
    return llvm::Error::success();
  }

  uint64_t bytesOf(const Value &v) const override {
    auto it = tensors_.find(&v);
    return it == tensors_.end() ? 0 : it->second.deviceBytes();
  }

  void release(const Value &v) override { tensors_.erase(&v); }

  std::optional<HostTensor> fetch(const Value &v) const override {
    auto it = tensors_.find(&v);
    if (it == tensors_.end())
      return std::nullopt;
    return it->second;
  }

private:
  llvm::DenseMap<const Value *, HostTensor> tensors_;
};

}  // namespace

std::unique_ptr<Backend> makeCpuBackend() { return std::make_unique<CpuBackend>(); }

std::vector<std::string> cpuSupportedOps() {
  std::vector<std::string> ops;
  for (const auto &e : kernels())
    ops.push_back(e.getKey().str());
  std::sort(ops.begin(), ops.end());
  return ops;
}

}  // namespace graphlint::verify
