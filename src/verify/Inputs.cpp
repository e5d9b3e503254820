#include "graphlint/verify/Inputs.h"
#include "graphlint/ir/Display.h"

#include "graphlint/ir/CheckedMath.h"
#include "graphlint/onnx/ExternalData.h"
#include "graphlint/ir/InputFile.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <fmt/format.h>

#include <cmath>
#include <sys/resource.h>
#include <unistd.h>
#include <random>

namespace graphlint::verify {
namespace {

llvm::Error err(const std::string &msg) { return llvm::createStringError(llvm::inconvertibleErrorCode(), msg); }

// The model's own bytes (inline payloads at the offsets the importer
// recorded), opened the way every input is: regular file, no blocking.
llvm::Expected<std::string> readRange(const std::string &path, uint64_t offset, uint64_t length) {
  auto file = InputFile::open(path);
  if (!file)
    return err(fmt::format("cannot read '{}': {}", path, llvm::toString(file.takeError())));
  auto bytes = file->read(offset, length);
  if (!bytes)
    return err(fmt::format("'{}' {}", path, llvm::toString(bytes.takeError())));
  return bytes;
}

std::vector<int64_t> dimsOf(const TensorLiteral &t) { return {t.dims.begin(), t.dims.end()}; }


// Host tensors hold 8 bytes an element. Elements of a value with a static
// shape; nullopt when its dims are not all known; -1 when a dim is negative or
// the count overflows.
std::optional<int64_t> hostElements(const Value &v) {
  if (!v.type.isTensor() || !v.type.shape.isFullyStatic())
    return std::nullopt;
  std::vector<int64_t> dims;
  for (const Dim &d : v.type.shape.dims)
    dims.push_back(d.value);
  return checkedProduct(dims).value_or(-1);
}

// Everything the run holds at once must fit, not just each tensor: the
// parameters and inputs (resident for the whole run) plus the largest set of
// activations alive together on the plan's schedule (sizes the IR knows).
// Refused up front rather than left to the OOM killer.
llvm::Error checkHostBudget(const ExecPlan &plan) {
  double resident = 0, params = 0, live = 0, peak = 0;
  for (const Value *v : plan.resident()) {
    std::optional<int64_t> n = hostElements(*v);
    if (n && *n < 0)
      return err(fmt::format("cannot run the model on the host: '{}' has shape {}, whose element count overflows",
                             v->name, v->type.shape.str()));
    (v->param ? params : resident) += n ? static_cast<double>(*n) * 8 : 0;
  }
  llvm::DenseMap<const Value *, double> held;
  for (const PlanStep &s : plan.steps()) {
    for (const Value *v : s.node->outputs)
      if (v)
        if (std::optional<int64_t> n = hostElements(*v); n && *n > 0)
          live += held[v] = static_cast<double>(*n) * 8;
    peak = std::max(peak, live);
    for (const Value *v : s.freeAfter)
      live -= held.lookup(v);
  }
  double total = params + resident + peak, avail = hostMemoryBytes();
  if (avail > 0 && total > avail)
    return err(fmt::format("cannot allocate the model's tensors on the host: its parameters ({}), inputs ({}) and "
                           "planned activations ({}) need {}, more than the {} available (8 bytes an element)",
                           formatBytes(params), formatBytes(resident), formatBytes(peak), formatBytes(total),
                           formatBytes(avail)));
  return llvm::Error::success();
}

// Random values that keep activations finite: Kaiming-uniform-like for
// weights (bound 1/sqrt(fan_in)); positive for 1-D tensors, since those are
// biases, norm scales and running variances.
HostTensor randomParam(DType dt, std::vector<int64_t> shape, std::mt19937_64 &rng) {
  HostTensor t(dt, std::move(shape));
  int64_t fanIn = t.rank() >= 2 && t.shape[0] ? t.numel() / t.shape[0] : 1;
  double bound = 1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(fanIn, 1)));
  std::uniform_real_distribution<double> weight(-bound, bound), positive(0.5, 1.0);
  std::uniform_int_distribution<int> bit(0, 1);
  for (double &v : t.data)
    v = !isFloating(dt) ? bit(rng) : t.rank() <= 1 ? positive(rng) : weight(rng);
  t.roundToDtype();
  return t;
}

// Integer inputs are usually indices: keep them below the smallest dim of
// the tensors they index (Gather data, embedding tables), else 0..1.
int64_t indexBound(const Value &v) {
  int64_t bound = 0;
  for (const Use &u : v.uses) {
    if (u.user->opType != "Gather" || u.operand != 1 || !u.user->inputs[0])
      continue;
    int64_t axis = u.user->attrInt("axis").value_or(0);
    if (auto d = u.user->inputs[0]->type.staticDim(static_cast<int>(axis)); d && *d > 0)
      bound = bound ? std::min(bound, *d) : *d;
  }
  return bound ? bound : 2;
}

}  // namespace

llvm::Expected<HostTensor> loadParam(const Model &m, const Param &p) {
  const TensorLiteral &t = p.tensor;
  std::vector<int64_t> shape = dimsOf(t);
  if (auto small = tensorFromLiteral(t))
    return std::move(*small);
  if (t.storage == TensorLiteral::Storage::External) {
    // The importer's resolver, again: the same paths are refused here.
    auto bytes = readExternalData(m.path, t.externalPath, t.externalOffset, t.externalLength.value_or(t.byteSize));
    if (!bytes)
      return bytes.takeError();
    return tensorFromBytes(t.dtype, shape, *bytes);
  }
  if (t.storage == TensorLiteral::Storage::Inline && t.storedBytes == t.byteSize && t.byteSize) {
    auto bytes = readRange(m.path, t.inlineOffset, t.storedBytes);
    if (!bytes)
      return bytes.takeError();
    return tensorFromBytes(t.dtype, shape, *bytes);
  }
  if (t.storage == TensorLiteral::Storage::Inline)
    return err(fmt::format("parameter '{}': its {} payload is not stored as raw little-endian data", t.name,
                           dtypeName(t.dtype)));
  return err(fmt::format("parameter '{}' has no data in the model", t.name));
}

llvm::Error feedModel(const Model &m, const ExecPlan &plan, Backend &backend, const FeedOptions &opts) {
  std::mt19937_64 rng(opts.seed);
  if (auto e = checkHostBudget(plan))
    return e;
  for (const auto &p : plan.graph().params()) {
    if (!p->value)
      continue;
    const TensorLiteral &t = p->tensor;
    if (HostTensor::count(dimsOf(t)) < 0)
      return err(fmt::format("parameter '{}' has a negative dim or an element count that overflows", t.name));
    llvm::Expected<HostTensor> value = opts.randomWeights && !t.data.known
                                           ? llvm::Expected<HostTensor>(randomParam(t.dtype, dimsOf(t), rng))
                                           : loadParam(m, *p);
    if (!value)
      return err(llvm::toString(value.takeError()) + " (run with --random-weights to use random values)");
    if (auto e = backend.bind(*p->value, *value))
      return e;
  }
  for (const Value *v : plan.graph().inputs) {
    if (v->param)
      continue;
    if (!v->type.isTensor() || !v->type.shape.isFullyStatic() || v->type.dtype == DType::Undefined)
      return err(fmt::format("input '{}' has type {}: bind its symbolic dims with --dim NAME=SIZE", v->name,
                             v->type.str()));
    std::vector<int64_t> shape;
    for (const Dim &d : v->type.shape.dims)
      shape.push_back(d.value);
    if (HostTensor::count(shape) < 0)
      return err(fmt::format("input '{}' has shape {}, whose element count overflows", v->name, v->type.str()));
    HostTensor t(v->type.dtype, shape);
    if (isFloating(t.dtype)) {
      std::uniform_real_distribution<double> u(-1.0, 1.0);
      for (double &x : t.data)
        x = u(rng);
    } else {
      std::uniform_int_distribution<int64_t> u(0, indexBound(*v) - 1);
      for (double &x : t.data)
        x = static_cast<double>(u(rng));
    }
    t.roundToDtype();
    if (auto e = backend.bind(*v, t))
      return e;
  }
  return llvm::Error::success();
}

}  // namespace graphlint::verify
