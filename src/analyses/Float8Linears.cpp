// Float8 training (Float8Linears.h). What torchao does, read from its source
// (pytorch/ao torchao/float8: float8_linear.py, config.py, float8_ops.py,
// fsdp_utils.py) and torchtitan's converter (components/quantization/
// float8.py, utils.py module_filter_fn):
//   - convert_to_float8_training swaps nn.Linear for Float8Linear where the
//     filter allows: torchtitan skips the output layer (`output`; `lm_head`
//     is the same layer in transformers' models) and any linear with a dim
//     not divisible by 16 (fp8 tensor-core requirement).
//   - matmul_with_hp_or_float8_args casts each GEMM's two operands to fp8
//     (amax, scale, saturated cast) and saves the high-precision input and
//     weight for backward (ctx.save_for_backward(input_hp, weight_hp_t)), so
//     the saved tensors are a bf16 linear's; the backward casts dy, W and x
//     again. torch._scaled_mm wants a row-major and a column-major operand:
//     grad_input's W and grad_weight's dy^T and x are transposed copies.
//   - tensorwise: one scale per tensor, so dy's two casts are one (torch.compile
//     dedupes the identical amax and cast and writes both layouts in one
//     kernel); rowwise: a scale along each GEMM's reduction axis, so every one
//     of the six operand uses is an amax and a cast of its own.
//   - with enable_fsdp_float8_all_gather the weight arrives from the gather
//     already in fp8 (tensor_already_casted_to_fp8): no weight casts.
#include "graphlint/analyses/Float8Linears.h"

#include "graphlint/ir/OpRegistry.h"
#include "graphlint/analyses/TrainableParams.h"

#include <fmt/format.h>

#include <llvm/ADT/StringRef.h>

#include <algorithm>

namespace graphlint {
namespace {

// The value `v` views (through t, transpose, view, detach, ...), at most 8 steps back.
const Value *viewedBase(const Value *v) {
  for (unsigned steps = 0; v && v->producer && v->producer->op && v->producer->op->viewOfInput0 &&
                           !v->producer->inputs.empty() && steps < 8;
       ++steps)
    v = v->producer->inputs[0];
  return v;
}

}  // namespace

std::optional<std::pair<unsigned, unsigned>> float8GemmOperands(const Node &n) {
  std::string aten = n.atenName();
  if (!aten.empty()) {
    if (aten == "mm" || aten == "matmul" || aten == "linear")
      return std::make_pair(0u, 1u);
    if (aten == "addmm")
      return std::make_pair(1u, 2u);
    return std::nullopt;
  }
  if (n.domain.empty() && (n.opType == "MatMul" || n.opType == "Gemm"))
    return std::make_pair(0u, 1u);
  return std::nullopt;
}

namespace {

double elementsOf(const Value *v) {
  if (!v)
    return 0;
  auto n = v->type.shape.numElements();
  return n ? static_cast<double>(*n) : 0;
}

// One amax reduction and one scaled cast under torch.compile: each reads the
// high-precision tensor once; the cast writes `layouts` fp8 copies.
Float8CastTraffic fusedCast(double e, double h, unsigned layouts) {
  return {2 * h * e + layouts * e, 2, layouts * e};
}

// The same in eager (tensor_to_amax, hp_tensor_and_scale_to_float8):
// abs (read, write), max (read); to(float32), * scale, clamp, to(fp8):
// 4h·e + 25·e bytes in six kernels; while it runs an fp32 copy and its
// scaled product live together (8·e) beside the fp8 result (counted per
// GEMM, for its largest cast, by the caller).
Float8CastTraffic eagerCast(double e, double h) { return {4 * h * e + 25 * e, 6, e}; }

// float8_ops.py preprocess_addmm's .contiguous() of an fp8 operand in the
// wrong layout: a copy (read, write) beside the original.
Float8CastTraffic layoutCopy(double e) { return {2 * e, 1, 2 * e}; }

void add(Float8CastTraffic &into, const Float8CastTraffic &t) {
  into.bytes += t.bytes;
  into.kernels += t.kernels;
  into.liveBytes += t.liveBytes;
}

}  // namespace

std::string_view float8GemmName(Float8Gemm g) {
  switch (g) {
  case Float8Gemm::Output: return "output";
  case Float8Gemm::GradInput: return "grad_input";
  case Float8Gemm::GradWeight: return "grad_weight";
  }
  return "output";
}

Float8Linears::Float8Linears(const Model &m, AnalysisContext &ctx) : Float8Linears(m, ctx.setup()) {}

std::string Float8Linears::sharedKey(const Setup &s) {
  return fmt::format("{} {} {}", float8Name(s.float8), s.backend == FusionBackend::Inductor, s.float8GathersFp8());
}

Float8Linears::Float8Linears(const Model &m, const Setup &s) {
  recipe_ = s.float8;
  fused_ = s.backend == FusionBackend::Inductor;
  gathersFp8_ = s.float8GathersFp8();
  if (recipe_ != Float8::None && m.graph)
    find(m);
}

void Float8Linears::find(const Model &m) {
  const Graph &g = *m.graph;
  std::vector<const Value *> trainable = trainableParams(g);
  llvm::DenseMap<const Value *, unsigned> trainableIndex;
  for (unsigned i = 0; i < trainable.size(); ++i)
    trainableIndex[trainable[i]] = i;
  llvm::DenseMap<const Value *, bool> decided;
  auto weightOf = [&](const Value *v) -> const Value * {
    const Value *base = viewedBase(v);
    return base && base->kind == Value::Kind::Param && trainableIndex.count(base) && base->type.shape.rankKnown &&
                   base->type.shape.dims.size() == 2
               ? base
               : nullptr;
  };
  for (const auto &np : g.nodes()) {
    const Node &n = *np;
    if (n.backwardPhase)
      continue;
    auto ops = float8GemmOperands(n);
    if (!ops || ops->second >= n.inputs.size() || n.outputs.empty())
      continue;
    const Value *w = weightOf(n.inputs[ops->second]);
    if (!w || weightOf(n.inputs[ops->first]) || decided.count(w))
      continue;
    decided[w] = true;
    llvm::StringRef name(w->name);
    name.consume_back(".weight");
    llvm::StringRef leaf = name.rsplit('.').second.empty() ? name : name.rsplit('.').second;
    const auto &d = w->type.shape.dims;
    // torchtitan: filter_fqns ["output"] (9dec370's `fqn != "output"`), and
    // module_filter_fn's dims-divisible-by-16 rule.
    if (leaf == "output" || leaf == "lm_head") {
      skipped_.push_back({w, name.str(), "the output layer (torchtitan's filter_fqns)"});
      continue;
    }
    if (!d[0].isStatic() || !d[1].isStatic() || d[0].value % 16 || d[1].value % 16) {
      skipped_.push_back({w, name.str(),
                          fmt::format("a dim not divisible by 16 ({} x {})", d[0].isStatic() ? d[0].value : -1,
                                      d[1].isStatic() ? d[1].value : -1)});
      continue;
    }
    Float8Linear l;
    l.weight = w;
    l.name = name.str();
    l.inputElements = elementsOf(n.inputs[ops->first]);
    l.weightElements = elementsOf(w);
    l.outputElements = elementsOf(n.outputs[0]);
    l.output = &n;
    byWeight_[w] = static_cast<unsigned>(linears_.size());
    byNode_[&n] = {static_cast<unsigned>(linears_.size()), Float8Gemm::Output};
    convertedElements_ += l.weightElements;
    linears_.push_back(std::move(l));
  }
  if (!g.hasBackward())
    return;
  // A joint graph: grad_input reads the weight (through t and detach views);
  // grad_weight produces its gradient, the backward graph output in the
  // trainable parameters' order (as the compute model maps them).
  for (const auto &np : g.nodes()) {
    const Node &n = *np;
    auto ops = n.backwardPhase ? float8GemmOperands(n) : std::nullopt;
    if (!ops)
      continue;
    for (unsigned i : {ops->first, ops->second}) {
      const Value *w = i < n.inputs.size() ? weightOf(n.inputs[i]) : nullptr;
      auto it = w ? byWeight_.find(w) : byWeight_.end();
      if (it != byWeight_.end() && !linears_[it->second].gradInput) {
        linears_[it->second].gradInput = &n;
        byNode_[&n] = {it->second, Float8Gemm::GradInput};
      }
    }
  }
  std::vector<const Value *> grads;
  for (const Value *o : g.outputs)
    if (o && o->producer && o->producer->backwardPhase)
      grads.push_back(o);
  if (grads.size() < trainable.size())
    return;
  for (unsigned i = 0; i < trainable.size(); ++i) {
    auto it = byWeight_.find(trainable[i]);
    if (it == byWeight_.end())
      continue;
    const Value *v = grads[i];
    for (unsigned steps = 0; v && v->producer && steps < 8; ++steps) {
      const Node &p = *v->producer;
      if (float8GemmOperands(p)) {
        if (!byNode_.count(&p) && !linears_[it->second].gradWeight) {
          linears_[it->second].gradWeight = &p;
          byNode_[&p] = {it->second, Float8Gemm::GradWeight};
        }
        break;
      }
      if (!p.op || !p.op->viewOfInput0 || p.inputs.empty())
        break;
      v = p.inputs[0];
    }
  }
}

const Float8Linear *Float8Linears::gemmOf(const Node &n, Float8Gemm *which) const {
  auto it = byNode_.find(&n);
  if (it == byNode_.end())
    return nullptr;
  if (which)
    *which = it->second.second;
  return &linears_[it->second.first];
}

Float8CastTraffic Float8Linears::casts(const Float8Linear &l, Float8Gemm gemm, double h) const {
  const double ex = l.inputElements, ew = l.weightElements, ey = l.outputElements;
  const bool rowwise = recipe_ == Float8::Rowwise;
  Float8CastTraffic t;
  double largest = 0;  // eager: the largest tensor cast
  auto cast = [&](double e, unsigned layouts) {
    add(t, fused_ ? fusedCast(e, h, layouts) : eagerCast(e, h));
    if (!fused_)
      largest = std::max(largest, e);
  };
  switch (gemm) {
  case Float8Gemm::Output:
    // x is row-major, W^T column-major: _scaled_mm takes both as they are.
    cast(ex, 1);
    if (!gathersFp8_)
      cast(ew, 1);
    break;
  case Float8Gemm::GradInput:
    // dy (row-major) times W, which _scaled_mm wants column-major.
    cast(ey, fused_ && !rowwise ? 2 : 1);  // tensorwise + compile: dy^T for grad_weight written here too
    if (gathersFp8_) {
      add(t, layoutCopy(ew));
    } else {
      cast(ew, 1);
      if (!fused_)
        add(t, layoutCopy(ew));
    }
    break;
  case Float8Gemm::GradWeight:
    // dy^T (must be row-major) times x (must be column-major).
    cast(ex, 1);
    if (!fused_)
      add(t, layoutCopy(ex));
    if (rowwise || !fused_) {
      cast(ey, 1);
      if (!fused_)
        add(t, layoutCopy(ey));
    } else {
      t.liveBytes += ey;  // dy^T, written by grad_input's cast, is read here
    }
    break;
  }
  // Eager's casts run one after another: one cast's fp32 intermediates
  // (8 bytes per element) live at a time, beside every fp8 result.
  t.liveBytes += 8 * largest;
  return t;
}

Float8CastTraffic Float8Linears::backwardCasts(const Float8Linear &l, double h) const {
  Float8CastTraffic t = casts(l, Float8Gemm::GradInput, h);
  Float8CastTraffic w = casts(l, Float8Gemm::GradWeight, h);
  t.bytes += w.bytes;
  t.kernels += w.kernels;
  t.liveBytes = std::max(t.liveBytes, w.liveBytes);
  return t;
}

}  // namespace graphlint
