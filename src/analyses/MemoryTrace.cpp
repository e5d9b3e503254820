// Builds the memory plan's alloc/free trace (MemoryTrace.h, docs/memory.md).
#include "MemoryTraceBuilder.h"

#include "graphlint/analyses/CompiledExecution.h"
#include "graphlint/analyses/FusionPlan.h"
#include "graphlint/ir/ValueFacts.h"
#include "graphlint/ir/CheckedMath.h"

#include "graphlint/ir/OpRegistry.h"
#include "graphlint/ir/PythonLocals.h"
#include "graphlint/analyses/TrainableParams.h"

#include <fmt/format.h>

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/DenseSet.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/StringSet.h>
#include <llvm/Support/Path.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace graphlint::memory {
namespace {

// A caveat's list: the first three items, then how many more.
std::string firstFew(const std::vector<std::string> &items) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < 3; ++i)
    out += (i ? ", " : "") + items[i];
  if (items.size() > 3)
    out += fmt::format(" and {} more", items.size() - 3);
  return out;
}

}  // namespace

std::optional<uint64_t> PlanBuilder::elementsOf(const Value *v) {
  if (!v || !v->type.isTensor() || !v->type.shape.rankKnown)
    return std::nullopt;
  uint64_t n = 1;
  for (const Dim &d : v->type.shape.dims) {
    if (d.isStatic()) {
      n = saturatingMul(n, static_cast<uint64_t>(std::max<int64_t>(d.value, 0)));
    } else if (d.isSymbolic()) {
      // Symbols still unbound after import (no -D, no hint) are taken as 1.
      d.expr->collectSymbols(assumed_);
      std::optional<int64_t> e = d.evaluate([](llvm::StringRef) { return std::optional<int64_t>(1); });
      n = saturatingMul(n, static_cast<uint64_t>(std::max<int64_t>(e.value_or(1), 0)));
    } else {
      return std::nullopt;
    }
  }
  if (sharding_)  // one rank's share under tp/cp/ep (MeshSharding.h)
    n = (n + sharding_->elementDivisor(v) - 1) / sharding_->elementDivisor(v);
  return n;
}

uint64_t PlanBuilder::bytesOf(const Value *v, bool activation) {
  if (!v || !v->type.isTensor() || (v->producer && compositeInner_.count(v->producer)) || skippedMasks_.count(v))
    return 0;
  std::optional<uint64_t> n = dtypeBits(v->type.dtype) ? elementsOf(v) : std::nullopt;
  return n ? bytesOfElements(v, *n, activation) : 0;
}

uint64_t PlanBuilder::bytesOfElements(const Value *like, uint64_t elements, bool activation) const {
  if (!like)
    return 0;
  // A 16-bit policy narrows fp32 activations only where the capture did not
  // record its precision: a bf16 capture's fp32 upcasts stay fp32.
  unsigned bits = activation ? precision_.storedBits(like->type.dtype) : dtypeBits(like->type.dtype);
  // Saturated, not wrapped: 2^56 fp32 elements once counted as 0 B.
  uint64_t bytes = saturatingMul(elements, bits) / 8 + (saturatingMul(elements, bits) % 8 != 0);
  if (bytes <= kMaxTensorBytes)
    return bytes;
  saturated_.insert(like);
  return kMaxTensorBytes;
}

uint64_t PlanBuilder::logsumexpBytes(const Node &last) {
  const Value *o = last.outputs.empty() ? nullptr : last.outputs[0];
  std::optional<uint64_t> elems = o ? elementsOf(o) : std::nullopt;
  if (!elems || !o->type.shape.rankKnown || o->type.shape.dims.empty() || !o->type.shape.dims.back().isStatic() ||
      o->type.shape.dims.back().value <= 0)
    return 0;
  return *elems / static_cast<uint64_t>(o->type.shape.dims.back().value) * 4;
}

std::optional<PlanBuilder::Ints> PlanBuilder::eagerLayout(const Value *v) {
  for (unsigned hops = 0; v && hops < 16; ++hops) {
    if (auto it = strides_.find(v); it != strides_.end())
      return it->second;  // a view
    std::optional<Ints> dims = staticDims(v);
    const Node *p = v->producer;
    if (!dims)
      return std::nullopt;
    if (!p || !p->op || (p->op->kind != OpKind::Pointwise && p->op->kind != OpKind::Broadcast))
      return contiguousStrides(*dims);
    const Value *first = nullptr;
    for (const Value *in : p->inputs)
      if (in && !isFoldedConstant(in) && staticDims(in) == dims) {
        first = captureOrigin(in);
        break;
      }
    if (!first)
      return contiguousStrides(*dims);  // every operand broadcast
    v = first;
  }
  return std::nullopt;
}

PlanBuilder::Ints PlanBuilder::fusedOutputStrides(const Node &last, const Ints &dims) {
  const Value *q = fusedQuery_.lookup(&last);
  std::optional<Ints> qs = q && staticDims(q) == dims ? eagerLayout(q) : std::nullopt;
  if (qs && qs->size() == dims.size())
    return denseStrides(dims, *qs);
  return denseStrides(dims, {4, 2, 3, 1});  // the [b, s, h, d] order
}

uint64_t PlanBuilder::outputBytes(const Node &n, unsigned oi) {
  TorchStorage st = torchStorageOf(n, oi, s_.kernels);
  if (st.bytePerElement)
    return elementsOf(n.outputs[oi]).value_or(0);
  return bytesOf(st.like ? st.like : n.outputs[oi], true);
}

void PlanBuilder::classifyParams() {
  for (const Value *p : trainableParams(g_))
    if (trainable_.insert(p).second)
      trainableOrder_.push_back(p);
  for (const Value *in : g_.inputs)
    if (in->requiresGrad)
      needsGrad_.insert(in);
  // Trainable parameters no graph output depends on, only where every edge
  // is in the file: a joint graph's outputs are the gradients themselves,
  // graphlint-export leaves out an argument it could not trace (`"self":
  // null`), whose producer would look unread, and a body graph's reads of
  // outer values are not its node's inputs.
  const auto &nodes = g_.nodes();
  bool edgesComplete = (m_.format == ModelFormat::Onnx || m_.producerName == "torch.export") &&
                       llvm::none_of(nodes, [](const auto &np) { return !np->subgraphs().empty(); });
  if (!s_.train || !edgesComplete || g_.hasBackward() || trainableOrder_.empty())
    return;
  // What a graph output depends on, from the last node back.
  llvm::DenseSet<const Value *> reaches(g_.outputs.begin(), g_.outputs.end());
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    const Node &n = **it;
    // An in-place op's result is its mutated input, which later nodes read.
    bool read = llvm::any_of(n.outputs, [&](const Value *o) { return o && reaches.count(o); }) ||
                llvm::any_of(n.mutatedInputs, [&](unsigned i) { return i < n.inputs.size() && reaches.count(n.inputs[i]); });
    if (read)
      for (const Value *in : n.inputs)
        if (in)
          reaches.insert(in);
  }
  for (const Value *p : trainableOrder_)
    if (!reaches.count(p))
      gradless_.insert(p);
}

void PlanBuilder::computeNeedsGrad() {
  for (const Value *p : trainableOrder_)
    needsGrad_.insert(p);
  // A value the forward computes from trained parameters (an exporter's
  // fold, Param::computed): the gradient reaches them through it.
  for (const auto &p : g_.params())
    if (p->value && p->computed && p->trained.value_or(false))
      needsGrad_.insert(p->value);
  for (const auto &n : g_.nodes()) {
    bool any = false;
    for (const Value *in : n->inputs)
      any |= in && needsGrad_.count(in);
    if (!any || n->metadataValue(kGradDisabled))
      continue;
    for (const Value *o : n->outputs)
      if (o && o->type.isTensor() && isFloating(o->type.dtype))
        needsGrad_.insert(o);
  }
}

std::optional<PlanBuilder::Ints> PlanBuilder::staticDims(const Value *v) {
  if (!v || !v->type.isTensor() || !v->type.shape.rankKnown)
    return std::nullopt;
  Ints dims;
  for (const Dim &d : v->type.shape.dims) {
    if (!d.isStatic())
      return std::nullopt;
    dims.push_back(d.value);
  }
  return dims;
}

std::optional<PlanBuilder::Ints> PlanBuilder::stridesOf(const Value *v) {
  if (auto it = strides_.find(v); it != strides_.end())
    return it->second;
  if (nonContiguous_.count(v) || permuted_.count(v))
    return std::nullopt;
  if (std::optional<Ints> dims = staticDims(v))
    return contiguousStrides(*dims);
  return std::nullopt;
}

std::optional<PlanBuilder::Ints> PlanBuilder::onnxViewStrides(const Node &n, llvm::ArrayRef<int64_t> from,
                                                                 llvm::ArrayRef<int64_t> strides,
                                                                 llvm::ArrayRef<int64_t> to) {
  auto rank = static_cast<int64_t>(from.size());
  if (n.opType == "Transpose") {
    if (to.size() != from.size())
      return std::nullopt;
    Ints out;
    const Attribute *perm = n.attr("perm");
    for (int64_t i = 0; i < rank; ++i) {
      int64_t p = perm && perm->ints.size() == from.size() ? perm->ints[static_cast<size_t>(i)] : rank - 1 - i;
      if (p < 0 || p >= rank || from[static_cast<size_t>(p)] != to[static_cast<size_t>(i)])
        return std::nullopt;
      out.push_back(strides[static_cast<size_t>(p)]);
    }
    return out;
  }
  if (n.opType == "Expand") {
    if (to.size() < from.size())
      return std::nullopt;
    size_t lead = to.size() - from.size();
    Ints out(lead, 0);
    for (size_t k = 0; k < from.size(); ++k)
      out.push_back(from[k] == to[lead + k] ? strides[k] : 0);  // a broadcast dim repeats: stride 0
    return out;
  }
  if (n.opType == "Split" || n.opType == "Slice") {
    if (to.size() != from.size())
      return std::nullopt;
    Ints out(strides.begin(), strides.end());
    if (n.opType == "Slice" && n.inputs.size() > 4 && n.inputs[4]) {
      // A step multiplies its axis's stride.
      const ConstData *steps = constantPayload(n.inputs[4]);
      const ConstData *axes = n.inputs[3] ? constantPayload(n.inputs[3]) : nullptr;
      if (!steps || !steps->known || (n.inputs[3] && (!axes || !axes->known)))
        return std::nullopt;
      for (size_t k = 0; k < steps->ints.size(); ++k) {
        int64_t axis = axes ? (k < axes->ints.size() ? axes->ints[k] : -1 - rank) : static_cast<int64_t>(k);
        if (axis < 0)
          axis += rank;
        // A negative step is no view in PyTorch (flip copies); 0 is invalid.
        if (axis < 0 || axis >= rank || steps->ints[k] < 1 ||
            __builtin_mul_overflow(out[static_cast<size_t>(axis)], steps->ints[k], &out[static_cast<size_t>(axis)]))
          return std::nullopt;
      }
    }
    return out;
  }
  if (n.opType == "Gather") {  // a select: its axis goes
    int64_t axis = n.attrInt("axis").value_or(0);
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank || to.size() + 1 != from.size())
      return std::nullopt;
    Ints out(strides.begin(), strides.end());
    out.erase(out.begin() + axis);
    return out;
  }
  // Squeeze, Unsqueeze, Identity, an identity Dropout or Cast, a bias Add
  // onto its MatMul: the same elements, at most size-1 dims in or out.
  return viewStrides(from, strides, to);
}

uint32_t PlanBuilder::viewStorage(const Node &n, unsigned oi) {
  const Value *o = n.outputs[oi];
  // A key/value head repeat eager leaves to the attention kernel.
  if (auto r = repeatedHeads_.find(&n); r != repeatedHeads_.end() && oi == 0 && o) {
    auto it = storageOf_.find(r->second);
    if (it == storageOf_.end())
      return kNone;
    strides_[o] = std::nullopt;
    return it->second;
  }
  auto [base, strided, reshape, permuted] = torchViewOf(n, oi);
  if (!base || !o)
    return kNone;
  auto it = storageOf_.find(base);
  if (it == storageOf_.end())
    return kNone;
  // ONNX records no strides: an ONNX view's are derived from its base's (a
  // storage of its own is contiguous), as PyTorch lays the same tensor out.
  // PyTorch's reshape copies a tensor whose strides cannot be regrouped into
  // the new shape: a permuted or expanded one (repeat_kv), the last-dim
  // chunks of a packed q/k/v projection (`.contiguous().view(...)`); a slice
  // along an outer dim still views. Where sizes are symbolic, a reshape of a
  // permuted or expanded tensor is taken to copy.
  std::optional<Ints> from = staticDims(base), to = staticDims(o);
  std::optional<Ints> st = isDefaultDomain(n.domain) ? stridesOf(base) : std::nullopt;
  std::optional<Ints> out;
  if (from && to && st) {
    out = reshape ? viewStrides(*from, *st, *to) : onnxViewStrides(n, *from, *st, *to);
    if (reshape && !out)
      return kNone;
  } else if (reshape && permuted_.count(base)) {
    return kNone;
  }
  strides_[o] = out;
  if (strided || nonContiguous_.count(base))
    nonContiguous_.insert(o);
  if (permuted || (!reshape && permuted_.count(base)))
    permuted_.insert(o);
  return it->second;
}

llvm::SmallVector<std::pair<unsigned, int64_t>, 2> PlanBuilder::onnxMatmulCopies(const Node &n) {
  if (n.opType != "MatMul" || !isDefaultDomain(n.domain) || n.inputs.size() != 2)
    return {};
  std::optional<Ints> dims[2], strides[2];
  for (unsigned i = 0; i < 2; ++i) {
    dims[i] = staticDims(n.inputs[i]);
    strides[i] = stridesOf(n.inputs[i]);
    if (!dims[i] || !strides[i])
      return {};
  }
  return matmulOperandCopies(*dims[0], *strides[0], *dims[1], *strides[1]);
}

PlanBuilder::Saved PlanBuilder::savedOf(const Node &n) {
  Saved out;
  if (compositeInner_.count(&n))
    return out;
  // The math path (MathAttention.cpp): v itself where its bmm views it; the
  // rest is the path's own tensors (mathAttentionForward holds them; under
  // --recompute the segment's rebuild allocates them).
  if (auto m = mathAttention_.find(&n); m != mathAttention_.end()) {
    const MathAttention &ma = m->second;
    if (llvm::none_of(ma.operands, [&](const Value *v) { return needsGrad_.count(v) != 0; }))
      return out;
    if (!ma.copies[2] && !ma.repeated)
      out.values.push_back(ma.operands[2]);
    out.extraBytes = ma.savedBytes();
    return out;
  }
  // The fused attention kernel's backward (CPU flash attention and CUDA's
  // alike) keeps its operands, its output and the logsumexp: the dynamo
  // exporter's decomposition, and a .pt2's one generic op.
  bool generic = n.atenName() == "scaled_dot_product_attention" && n.outputSavedForBackward.empty() &&
                 !n.outputs.empty() && n.outputs[0];
  if (auto f = fusedAttention_.find(&n); f != fusedAttention_.end() || generic) {
    llvm::SmallVector<const Value *, 4> operands;
    if (generic)
      operands.assign(n.inputs.begin(), n.inputs.end());
    else
      operands.assign(f->second.begin(), f->second.end());
    if (llvm::none_of(operands, [&](const Value *v) { return v && needsGrad_.count(v) != 0; }))
      return out;
    for (const Value *v : operands)
      if (v)
        out.values.push_back(v);
    out.values.push_back(n.outputs[0]);
    out.extraBytes = logsumexpBytes(n);
    return out;
  }
  if (auto c = compositeInput_.find(&n); c != compositeInput_.end()) {
    auto extras = compositeExtras_.find(&n);
    bool weightGrad = extras != compositeExtras_.end() &&
                      llvm::any_of(extras->second.weights, [&](const Value *w) { return needsGrad_.count(w) != 0; });
    if (needsGrad_.count(c->second) || weightGrad) {
      out.values.push_back(c->second);  // gelu keeps its input; group norm too, with its statistics
      if (extras != compositeExtras_.end())
        out.extraBytes = extras->second.savedBytes;
    }
    return out;
  }
  llvm::SmallVector<bool, 4> ng;
  bool any = false;
  for (const Value *in : n.inputs) {
    ng.push_back(in && needsGrad_.count(in));
    any |= ng.back();
  }
  if (!any)
    return out;
  SavedForBackward sv = savedForBackward(n, ng);
  // An ONNX MatMul operand eager copies for its bmm: autograd keeps the copy,
  // a new buffer, and the operand's storage may die (GPT-NeoX's value, a
  // head slice of the packed q/k/v projection). A `.pt2` records the fact.
  if (sv.copies.empty() && !sv.inputs.empty())
    for (auto c : onnxMatmulCopies(n))
      if (llvm::is_contained(sv.inputs, c.first)) {
        sv.inputs.erase(llvm::find(sv.inputs, c.first));
        sv.copies.push_back(c);
      }
  for (unsigned i : sv.inputs)
    out.values.push_back(n.inputs[i]);
  for (auto [i, numel] : sv.copies)
    sv.extraBytes += bytesOfElements(n.inputs[i], static_cast<uint64_t>(numel), true);
  for (unsigned o : sv.outputs)
    if (o < n.outputs.size())
      out.values.push_back(n.outputs[o]);
  out.extraBytes = sv.extraBytes + (sv.extraLike ? bytesOf(sv.extraLike, true) : 0);
  // aten's dropout on the CPU is `input * noise`, the noise a tensor of the
  // input's dtype that MulBackward keeps (torchStorageOf), not CUDA's
  // one-byte mask.
  if (sv.extraBytes && isCpuDropout(n) && !n.outputs.empty() && n.outputs[0])
    out.extraBytes = outputBytes(n, 0);
  return out;
}

bool PlanBuilder::isCpuDropout(const Node &n) const {
  return s_.kernels == Kernels::Cpu &&
         ((n.domain == "aten" && n.atenName() == "dropout") || isTrainingOnnxDropout(n));
}

/// Inference: an activation whose input dies here overwrites it, as the
/// inplace=True activations of torchvision's blocks do (torchRunsInPlace).
uint32_t PlanBuilder::inplaceStorage(const Node &n, int64_t idx) {
  const Value *x = nullptr;
  if (inplaceActivation_.count(&n))
    x = compositeInput_.lookup(&n);
  else if (torchRunsInPlace(n) && !n.inputs.empty())
    x = n.inputs[0];
  auto it = x ? storageOf_.find(x) : storageOf_.end();
  if (it == storageOf_.end() || n.outputs.empty() || !n.outputs[0])
    return kNone;
  uint32_t st = it->second;
  const Trace::Storage &k = t_.storages[st];
  if (k.kind != MemoryKind::Activation || st >= lastUse_.size() || lastUse_[st] != idx || nonContiguous_.count(x) ||
      k.bytes != bytesOf(n.outputs[0], true))
    return kNone;
  return st;
}

void PlanBuilder::assignSegments(bool training) {
  // Recompute segments (-1: not checkpointed, its saved tensors kept). A
  // joint graph's backward nodes are in none: they are what a segment's
  // recompute precedes.
  const auto &nodes = g_.nodes();
  segment_.assign(nodes.size(), -1);
  policySaved_.assign(nodes.size(), false);
  if (training) {
    const RecomputePlan &plan = recomputePlanOf(ctx_, g_);
    segment_ = plan.segment;
    policySaved_ = plan.policySaved;
  }
  segStart_.clear();
  for (size_t i = 0; i < nodes.size(); ++i)
    if (segment_[i] >= 0 && (i == 0 || segment_[i - 1] != segment_[i]))
      segStart_[segment_[i]] = i;
}

uint32_t PlanBuilder::compiledInPlace(const Node &n, unsigned oi) {
  const Value *o = n.outputs[oi];
  if (!compiled_ || fusedAway_.count(o) || o->isGraphOutput() || !n.op || n.op->kind == OpKind::Contraction)
    return kNone;
  const FusionGroup &grp = compiled_->groupOf(n);
  if (grp.kind != GroupKind::Pointwise && grp.kind != GroupKind::Reduction && grp.kind != GroupKind::Contraction)
    return kNone;
  uint64_t bytes = outputBytes(n, oi);
  int64_t end = kernelEnd(*compiled_, n);
  for (const Value *in : n.inputs) {
    const Value *b = storageBase(captureOrigin(in));
    auto it = b ? storageOf_.find(b) : storageOf_.end();
    if (it == storageOf_.end() || !b->producer || b->isGraphOutput() || keptForBackward_.count(b))
      continue;
    uint32_t st = it->second;
    const Trace::Storage &s = t_.storages[st];
    // Inductor's in-place reuse: a buffer of the same size, of an
    // activation that dies in this kernel and is not kept for backward.
    if (s.live && bytes > 0 && s.bytes == bytes &&
        (s.kind == MemoryKind::Activation || s.kind == MemoryKind::Gradient) && st < lastUse_.size() &&
        lastUse_[st] >= 0 && lastUse_[st] <= end && !savedUntil_.count(st) && !reusedInPlace_.count(st)) {
      reusedInPlace_.insert(st);
      return st;
    }
  }
  return kNone;
}

void PlanBuilder::planCompiledStep(bool training) {
  if (!compiled_)
    return;
  llvm::DenseSet<const Value *> kept;
  if (training) {
    // What eager keeps for backward (savedOf), by storage, with the nodes
    // whose backward reads it.
    std::vector<const Value *> saved;
    llvm::DenseMap<const Value *, llvm::SmallVector<const Node *, 2>> savers;
    for (const auto &np : g_.nodes())
      for (const Value *v : savedOf(*np).values) {
        const Value *b = storageBase(captureOrigin(v));
        if (!b || !b->producer)
          continue;  // parameters and inputs are resident
        auto &who = savers[b];
        if (who.empty())
          saved.push_back(b);
        who.push_back(np.get());
      }
    llvm::sort(saved, [](const Value *a, const Value *b) { return a->producer->index < b->producer->index; });
    // Under --recompute the checkpoints decide what is rebuilt; the
    // partitioner's choice is not modelled on top of them.
    if (s_.recompute == Recompute::None)
      recomputedByPartitioner_ = partitionerRecomputes(
          saved,
          [&](const Value *v) {
            return llvm::all_of(savers[v], [](const Node *n) { return fusibleInBackward(*n); });
          },
          [](const Value *v) { return v->producer == nullptr; });
    for (const Value *b : saved)
      if (!recomputedByPartitioner_.count(b))
        kept.insert(b);
  }
  fusedAway_ = fusedAwayValues(
      g_, *compiled_, [&](const Value *v) { return kept.count(v) != 0; }, [](const Node &) { return true; });
  keptForBackward_ = std::move(kept);
}

void PlanBuilder::forward(bool training) {
  const auto &nodes = g_.nodes();
  int64_t end = static_cast<int64_t>(nodes.size());
  // Last use of each value (the shared Liveness); the last piece of an
  // exporter-decomposed kernel reads the chain's input too.
  llvm::DenseMap<const Value *, int64_t> lastUse = lastReads("all", {}, compiled_ == nullptr);
  if (compiled_)
    holdKernelInputs(g_, *compiled_, lastUse, [](const Node &) { return true; });
  for (const auto &[node, in] : compositeInput_) {
    int64_t &lu = lastUse[in];
    lu = std::max(lu, static_cast<int64_t>(node->index));
  }
  for (const auto &[node, reads] : fusedAttention_)
    for (const Value *in : reads) {
      int64_t &lu = lastUse[in];
      lu = std::max(lu, static_cast<int64_t>(node->index));
    }
  for (const auto &[node, math] : mathAttention_)
    for (const Value *in : math.reads) {
      int64_t &lu = lastUse[in];
      lu = std::max(lu, static_cast<int64_t>(node->index));
    }
  assignSegments(training);
  extraSaved_.assign(nodes.size(), kNone);

  auto holdUntil = [&](uint32_t st, int64_t node) {
    auto [it, inserted] = savedUntil_.emplace(st, node);
    if (!inserted)
      it->second = std::min(it->second, node);
  };
  // Storages to look at after each node: their last use may be a node that
  // does not read them (the end of a module scope).
  std::vector<llvm::SmallVector<uint32_t, 2>> dueAt(nodes.size());
  auto extendUse = [&](uint32_t st, int64_t at) {
    if (st < lastUse_.size() && lastUse_[st] >= 0) {
      lastUse_[st] = std::max(lastUse_[st], at);
      if (lastUse_[st] < end)
        dueAt[static_cast<size_t>(lastUse_[st])].push_back(st);
    }
  };

  for (const auto &np : nodes) {
    const Node &n = *np;
    auto idx = static_cast<int64_t>(n.index);
    llvm::SmallVector<uint32_t, 2> temps;
    if (training)
      gatherBefore(n);
    auto freeIfDone = [&](const Value *v) {
      auto it = v ? storageOf_.find(v) : storageOf_.end();
      if (it == storageOf_.end())
        return;
      uint32_t st = it->second;
      if (st < lastUse_.size() && lastUse_[st] >= 0 && lastUse_[st] <= idx && !savedUntil_.count(st))
        t_.release(st);
    };
    // A batch norm the exporter fused into this Conv: in inference eager's
    // convolution writes its own output first, and an input that dies here
    // is gone before the batch norm writes the node's output. (In training
    // the convolution's input and output are saved, below.)
    const Value *convOut = fusedBatchNormOutput(n);
    if (convOut && !training) {
      temps.push_back(t_.alloc(bytesOf(convOut, true), MemoryKind::Temporary, convOut, &n));
      t_.mark(&n, MemoryPhase::Forward);
      for (const Value *in : n.inputs)
        freeIfDone(captureOrigin(in));
    }
    // An initializer the exporter folded from what eager's forward computes
    // comes to life at its first reader.
    for (const Value *in : n.inputs) {
      const Value *v = captureOrigin(in);
      if (!v || v->kind != Value::Kind::Param || !v->param || !v->param->computed || storageOf_.count(v))
        continue;
      uint32_t st = t_.alloc(bytesOf(v, true), MemoryKind::Activation, v);
      lastUse_.resize(t_.storages.size(), -1);
      lastUse_[st] = idx;
      storageOf_[v] = st;
      auto lu = lastUse.find(v);
      extendUse(st, lu == lastUse.end() ? idx : lu->second);
    }
    if (fusedAttention_.count(&n) && n.outputs.size() == 1 && n.outputs[0])
      if (std::optional<Ints> d = staticDims(n.outputs[0]); d && d->size() == 4)
        strides_[n.outputs[0]] = fusedOutputStrides(n, *d);
    if (training && mathAttention_.count(&n))
      mathAttentionForward(n, idx, temps);
    for (unsigned oi = 0; oi < n.outputs.size(); ++oi) {
      const Value *o = n.outputs[oi];
      if (!o)
        continue;
      uint32_t st = viewStorage(n, oi);
      if (st == kNone && !training && oi == 0)
        st = inplaceStorage(n, idx);
      if (st == kNone)
        st = compiledInPlace(n, oi);
      if (st == kNone) {
        st = t_.alloc(materialised(o, outputBytes(n, oi)), MemoryKind::Activation, o);
        lastUse_.resize(t_.storages.size(), -1);
        lastUse_[st] = idx;
      }
      storageOf_[o] = st;
      auto lu = lastUse.find(o);
      extendUse(st, lu == lastUse.end() ? idx : lu->second);
      if (o->isGraphOutput())
        lastUse_[st] = end + 1;  // the caller holds the outputs
    }
    if (training) {
      Saved sv = savedOf(n);
      auto save = [&](const Value *v) {
        auto it = v ? storageOf_.find(v) : storageOf_.end();
        if (it == storageOf_.end() || t_.storages[it->second].kind != MemoryKind::Activation)
          return;  // params and inputs are resident anyway
        // Compiled: the partitioner recomputes it in the backward from its
        // op's inputs, which are kept (as long as this node's backward needs them).
        if (const Value *b = storageBase(v); recomputedByPartitioner_.count(b)) {
          for (const Value *in : b->producer->inputs)
            if (auto at = in ? storageOf_.find(storageBase(captureOrigin(in))) : storageOf_.end();
                at != storageOf_.end() && t_.storages[at->second].kind == MemoryKind::Activation)
              holdUntil(at->second, idx);
          return;
        }
        const Node *prod = v->producer;
        // Under full recompute only a segment's inputs are kept; what it
        // saves inside is rebuilt before its backward.
        // Under selective-op the policy's saved outputs are kept.
        if (prod && segment_[n.index] >= 0 && segment_[prod->index] == segment_[n.index] &&
            !policySaved_[prod->index])
          return;
        holdUntil(it->second, idx);
      };
      for (const Value *v : sv.values)
        save(v);
      // selective-op: the policy keeps the op's outputs (MUST_SAVE), for the
      // recompute to read instead of rerunning it, until backward passes it.
      if (policySaved_[n.index])
        for (const Value *o : n.outputs)
          if (auto it = o ? storageOf_.find(o) : storageOf_.end();
              it != storageOf_.end() && t_.storages[it->second].kind == MemoryKind::Activation)
            holdUntil(it->second, idx);
      // A dropout module an eval() export passed through: in training it
      // allocates a bool mask and a new output, both saved for its backward
      // (Korthikanti et al. count both).
      for (unsigned oi = 0; oi < n.outputDropout.size() && oi < n.outputs.size(); ++oi)
        if (n.outputDropout[oi] > 0 && n.outputs[oi] && needsGrad_.count(n.outputs[oi]) && segment_[n.index] < 0) {
          uint64_t out = bytesOf(n.outputs[oi], true);
          uint64_t mask = bytesOf(n.outputs[oi], false) * 8 / std::max(1u, dtypeBits(n.outputs[oi]->type.dtype));
          uint32_t st = t_.alloc(out + mask, MemoryKind::Saved, nullptr, &n);
          lastUse_.resize(t_.storages.size(), -1);
          holdUntil(st, idx);
        }
      if (sv.extraBytes && (segment_[n.index] < 0 || policySaved_[n.index]) && !mathAttention_.count(&n)) {
        uint32_t st = t_.alloc(sv.extraBytes, MemoryKind::Saved, nullptr, &n);
        lastUse_.resize(t_.storages.size(), -1);
        extraSaved_[n.index] = st;
        holdUntil(st, idx);
      }
      if (segment_[n.index] >= 0)
        for (const Value *in : n.inputs) {
          auto it = in ? storageOf_.find(in) : storageOf_.end();
          if (it != storageOf_.end() && t_.storages[it->second].kind == MemoryKind::Activation && in->producer &&
              segment_[in->producer->index] != segment_[n.index])
            holdUntil(it->second, idx);
        }
    }
    // Fused attention's logsumexp, freed when the kernel returns.
    if (fusedAttention_.count(&n) && !training)
      temps.push_back(t_.alloc(logsumexpBytes(n), MemoryKind::Temporary, nullptr, &n));
    // An output eager's kernel allocates and the graph leaves out (max-pool
    // indices), freed when it returns unless the backward above saved it.
    if (const Value *like = droppedIndicesOf(n); like && extraSaved_[n.index] == kNone)
      if (unsigned bits = dtypeBits(like->type.dtype))
        temps.push_back(t_.alloc(bytesOf(like, false) * 64 / bits, MemoryKind::Temporary, nullptr, &n));
    // The convolution's output under a fused batch norm, freed when the
    // batch norm returns: a training step that saves nothing of it.
    if (convOut && training && extraSaved_[n.index] == kNone)
      temps.push_back(t_.alloc(bytesOf(convOut, true), MemoryKind::Temporary, convOut, &n));
    // --float8: the GEMM's fp8 operand copies, freed when it returns.
    if (uint64_t f8 = float8Temporaries(n, false))
      temps.push_back(t_.alloc(f8, MemoryKind::Temporary, nullptr, &n));
    t_.mark(&n, MemoryPhase::Forward);
    for (uint32_t tmp : temps)
      t_.release(tmp);
    if (training)
      reshardAfter(n);
    // Free every storage whose last reader this node was, unless saved.
    for (const Value *in : n.inputs)
      freeIfDone(captureOrigin(in));
    for (const Value *o : n.outputs)
      freeIfDone(o);
    if (auto c = compositeInput_.find(&n); c != compositeInput_.end())
      freeIfDone(c->second);
    for (uint32_t st : dueAt[n.index])
      if (lastUse_[st] >= 0 && lastUse_[st] <= idx && !savedUntil_.count(st))
        t_.release(st);
  }
}

void PlanBuilder::backward() {
  const auto &nodes = g_.nodes();
  sum_->activationsBytes = t_.liveBytes({MemoryKind::Activation, MemoryKind::Saved});
  // Gradients pending per value; a buffer may be shared (pass-through).
  llvm::DenseMap<const Value *, uint32_t> pending;
  std::vector<unsigned> refs;
  auto newGrad = [&](uint64_t bytes, const Value *v) {
    // Compiled: the gradient of a fused intermediate stays inside the
    // backward's fused kernel too.
    uint32_t st = t_.alloc(materialised(v, bytes), MemoryKind::Gradient, v);
    refs.resize(t_.storages.size(), 0);
    refs[st] = 1;
    return st;
  };
  auto unref = [&](uint32_t st) {
    if (st < refs.size() && refs[st] > 0 && --refs[st] == 0)
      t_.release(st);
  };
  const bool torch1 = tracedByTorch1();
  auto deliver = [&](const Value *v, uint32_t incoming) {
    if (trainable_.count(v)) {
      auto it = paramGrad_.find(v);
      if (it == paramGrad_.end()) {
        // AccumulateGrad steals a buffer nobody else holds, else clones it.
        bool steal = refs[incoming] == 1;
        if (steal)
          unref(incoming);
        // Sharded: the whole gradient waits for its group's reduce-scatter.
        if (reducedInGroup(v))
          gradientReady(v, t_.alloc(paramGradBytes(v, true), MemoryKind::Grad, v));
        else
          paramGrad_[v] = t_.alloc(paramGradBytes(v), MemoryKind::Grad, v);
        if (!steal)
          unref(incoming);
      } else {
        unref(incoming);  // accumulated in place
      }
      return;
    }
    auto it = pending.find(v);
    if (it == pending.end()) {
      pending[v] = incoming;
      return;
    }
    uint32_t old = it->second;
    // InputBuffer::accumulate adds into whichever buffer it alone holds
    // (torch 2.x; torch 1.x always sums into a new one).
    if (!torch1 && old != incoming) {
      if (refs[old] == 1) {
        unref(incoming);
        return;
      }
      if (refs[incoming] == 1) {
        unref(old);
        it->second = incoming;
        return;
      }
    }
    uint32_t sum = newGrad(bytesOf(v, true), v);  // the value's size: incoming may be a view of a larger gradient
    unref(old);
    unref(incoming);
    it->second = sum;
  };

  // Saved tensors by the node whose backward frees them.
  std::vector<llvm::SmallVector<uint32_t, 2>> releaseAt(nodes.size());
  for (const auto &[st, node] : savedUntil_)
    releaseAt[static_cast<size_t>(node)].push_back(st);

  // The loss gradient: one buffer per graph output. The caller holds it
  // until backward returns (`out.backward(grad)`'s argument, or the ones
  // torch.autograd.backward makes for a scalar loss), as it holds the output.
  for (const Value *o : g_.outputs)
    if (o && needsGrad_.count(o)) {
      uint32_t seed = newGrad(bytesOf(o, true), o);
      ++refs[seed];
      pending[o] = seed;
    }

  gatherForBackward();
  // Recomputed saved tensors per segment, rebuilt before its backward.
  int currentSegment = -1;
  std::map<int64_t, std::vector<uint32_t>> rebuilt;  // node -> storages to free at its backward
  // The recompute runs the segment's forward again, as
  // torch.utils.checkpoint(use_reentrant=False) does before the backward of
  // its last node: each node's output is allocated in order; what the
  // backward saves is kept until the backward of its first saver in forward
  // order (a storage several nodes save, as the normed input the q, k and v
  // projections all read, once), the rest freed after its last reader; it
  // stops after the last node that saves something (checkpoint's early stop).
  auto rebuildSegment = [&](int seg) {
    llvm::DenseMap<uint32_t, int64_t> firstSaver;  // forward storage -> node
    int64_t lastSaver = -1;
    size_t first = segStart_[seg];
    std::vector<Saved> savedBy;  // by node, from `first`
    for (size_t i = first; i < nodes.size() && segment_[i] == seg; ++i) {
      // A node selective-op's policy saved is not rerun: what it made is kept.
      const Saved &sv = savedBy.emplace_back(policySaved_[i] ? Saved{} : savedOf(*nodes[i]));
      if (sv.extraBytes)
        lastSaver = static_cast<int64_t>(i);
      for (const Value *v : sv.values) {
        auto it = v && v->producer && segment_[v->producer->index] == seg && !policySaved_[v->producer->index]
                      ? storageOf_.find(v)
                      : storageOf_.end();
        if (it == storageOf_.end() || t_.storages[it->second].kind != MemoryKind::Activation)
          continue;
        // A view of what the segment reads (Llama's `x.to(float32)` of the
        // layer's input, the rotary table's unsqueeze) is that tensor, kept
        // as the checkpoint's input: the recompute allocates nothing for it.
        const Value *base = t_.storages[it->second].value;
        if (base && base->producer && segment_[base->producer->index] != seg)
          continue;
        firstSaver.try_emplace(it->second, static_cast<int64_t>(i));
        lastSaver = static_cast<int64_t>(i);
      }
    }
    std::map<int64_t, std::vector<uint32_t>> transient;  // node -> recomputed outputs freed after it
    for (int64_t i = static_cast<int64_t>(first); i <= lastSaver; ++i) {
      const Node &n = *nodes[i];
      // Autograd saves an op's inputs before its kernel runs and its outputs
      // after: the early stop, raised as the last saved tensor is packed,
      // leaves the outputs of a last node that keeps only inputs unmade (a
      // linear keeping its input; the CPU dropout's `input * noise`, whose
      // noise exists before the multiply).
      const Saved &sv = savedBy[static_cast<size_t>(i) - first];
      bool keepsOutput = llvm::any_of(sv.values, [&](const Value *v) { return llvm::is_contained(n.outputs, v); }) ||
                         (sv.extraBytes && !isCpuDropout(n));
      bool stopsBeforeKernel = (i == lastSaver && !keepsOutput) || policySaved_[static_cast<size_t>(i)];
      for (const Value *o : stopsBeforeKernel ? llvm::ArrayRef<Value *>() : llvm::ArrayRef<Value *>(n.outputs)) {
        auto it = o ? storageOf_.find(o) : storageOf_.end();
        if (it == storageOf_.end() || t_.storages[it->second].value != o ||
            t_.storages[it->second].kind != MemoryKind::Activation || t_.storages[it->second].bytes == 0)
          continue;  // a view, or not the forward's own
        auto saver = firstSaver.find(it->second);
        bool saved = saver != firstSaver.end();
        uint32_t st = t_.alloc(t_.storages[it->second].bytes, saved ? MemoryKind::Saved : MemoryKind::Activation, o);
        if (saved) {
          rebuilt[saver->second].push_back(st);
        } else {
          // Freed after its last reader, or when the recompute stops.
          int64_t lastRead = it->second < lastUse_.size() ? std::max(lastUse_[it->second], i) : i;
          transient[std::min(lastRead, lastSaver)].push_back(st);
        }
      }
      if (sv.extraBytes)
        rebuilt[n.index].push_back(t_.alloc(sv.extraBytes, MemoryKind::Saved, nullptr, &n));
      if (!policySaved_[static_cast<size_t>(i)])
        t_.mark(&n, MemoryPhase::Backward, /*recompute=*/true);
      if (auto tr = transient.find(i); tr != transient.end()) {
        for (uint32_t st : tr->second)
          t_.release(st);
        transient.erase(tr);
      }
    }
  };

  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    const Node &n = **it;
    auto idx = static_cast<int64_t>(n.index);
    if (segment_[n.index] >= 0 && segment_[n.index] != currentSegment) {
      currentSegment = segment_[n.index];
      rebuildSegment(currentSegment);
    }
    bool hasGrad = false;
    for (const Value *o : n.outputs)
      hasGrad |= o && pending.count(o);
    // The apply's outputs: the engine accumulates them into their
    // consumers' buffers after the apply returns (below).
    llvm::SmallVector<std::pair<const Value *, uint32_t>, 4> arrivals;
    auto arrive = [&](const Value *v, uint32_t g) { arrivals.push_back({v, g}); };
    if (hasGrad) {
      llvm::SmallVector<uint32_t, 2> temps;
      for (const Value *like : backwardTemporariesLike(n))
        temps.push_back(t_.alloc(bytesOf(like, true), MemoryKind::Temporary, like, &n));
      // A batch norm the dynamo exporter fused into this Conv runs its
      // backward first and returns: autograd frees what it saved (the
      // convolution's output, mean and rstd) before the convolution's
      // backward makes its gradients.
      if (fusedBatchNormOutput(n) && extraSaved_[n.index] != kNone)
        t_.release(extraSaved_[n.index]);
      if (uint64_t f8 = float8Temporaries(n, true))
        temps.push_back(t_.alloc(f8, MemoryKind::Temporary, nullptr, &n));
      uint32_t outGrad = n.outputs.empty() || !n.outputs[0] || !pending.count(n.outputs[0])
                             ? kNone
                             : pending[n.outputs[0]];
      auto composite = compositeInput_.find(&n);
      // The fused attention's backward: a gradient for each operand.
      if (auto f = fusedAttention_.find(&n); f != fusedAttention_.end()) {
        for (const Value *in : f->second)
          if (needsGrad_.count(in))
            arrive(in, newGrad(bytesOf(in, true), in));
      }
      if (mathAttention_.count(&n))
        mathAttentionBackward(n, [&](const Value *in) {
          if (needsGrad_.count(in))
            arrive(in, newGrad(bytesOf(in, true), in));
        });
      for (unsigned i = 0; i < n.inputs.size() && !compositeInner_.count(&n) && !fusedAttention_.count(&n) &&
                           !mathAttention_.count(&n);
           ++i) {
        const Value *in = n.inputs[i];
        if (composite != compositeInput_.end()) {
          if (needsGrad_.count(composite->second))
            arrive(composite->second, newGrad(bytesOf(composite->second, true), composite->second));
          if (auto extras = compositeExtras_.find(&n); extras != compositeExtras_.end())
            for (const Value *w : extras->second.weights)
              if (needsGrad_.count(w))
                arrive(w, newGrad(bytesOf(w, true), w));
          break;
        }
        if (!in || !needsGrad_.count(in))
          continue;
        uint32_t g;
        if (outGrad != kNone && gradPassesThrough(n, i)) {
          g = outGrad;
          ++refs[g];
        } else {
          g = newGrad(bytesOf(in, true), in);
        }
        arrive(in, g);
      }
      // AccumulateGrad of a fused batch norm's weight and bias.
      if (uint64_t elems = fusedNormStates(n).trainedElements)
        fusedNormGrads_.push_back(t_.alloc(elems * policy().gradBytes / shards(s_.mesh.zeroStage() >= 2),
                                           MemoryKind::Grad, nullptr, &n));
      t_.mark(&n, MemoryPhase::Backward);
      for (uint32_t tmp : temps)
        t_.release(tmp);
    }
    for (const Value *o : n.outputs)
      if (auto p = o ? pending.find(o) : pending.end(); p != pending.end()) {
        unref(p->second);
        pending.erase(p);
      }
    for (uint32_t st : releaseAt[n.index])
      if (lastUse_[st] <= static_cast<int64_t>(nodes.size()))
        t_.release(st);
    if (auto r = rebuilt.find(idx); r != rebuilt.end()) {
      for (uint32_t st : r->second)
        t_.release(st);
      rebuilt.erase(r);
    }
    // After the apply has released its incoming gradient and saved tensors.
    for (auto &[v, g] : arrivals)
      deliver(v, g);
  }
  // The step is over: the caller drops the outputs; leftovers go.
  for (auto &[v, st] : pending)
    unref(st);
  for (uint32_t st = 0; st < t_.storages.size(); ++st) {
    MemoryKind k = t_.storages[st].kind;
    if (k == MemoryKind::Activation || k == MemoryKind::Saved || k == MemoryKind::Gradient)
      t_.release(st);
  }
}

void PlanBuilder::optimizerStep() {
  // torch.optim.Adam(W), single-tensor path: denom = exp_avg_sq.sqrt() / c
  // allocates two state-sized temporaries per parameter, one after another.
  if (s_.optimizer == Optimizer::Adam || s_.optimizer == Optimizer::AdamW) {
    unsigned width = policy().momentBytes;
    for (const Value *p : trainableOrder_) {
      if (gradless_.count(p))
        continue;
      auto numel = bytesOf(p, false) * 8 / std::max(1u, dtypeBits(p->type.dtype));
      uint64_t b = numel * width / shards(s_.mesh.zeroStage() >= 1, p);
      uint32_t sq = t_.alloc(b, MemoryKind::Temporary, p);
      uint32_t dn = t_.alloc(b, MemoryKind::Temporary, p);
      t_.release(sq);
      t_.release(dn);
    }
  }
  t_.mark(nullptr, MemoryPhase::Optimizer);
  for (auto &[p, st] : paramGrad_)
    t_.release(st);  // zero_grad(set_to_none=True)
  // Whole gradients of a group that never completed, and gathered units.
  for (const auto &group : groupGrads_)
    for (const auto &[p, st] : group)
      t_.release(st);
  for (uint32_t st : gathered_)
    if (st != kNone)
      t_.release(st);
  for (uint32_t st : fusedNormGrads_)
    t_.release(st);
}

double PlanBuilder::optimizerBytesPerElement() const {
  // fp32 master weights (mixed precision) and the optimizer's moments.
  const PrecisionPolicy pp = policy();
  double perElem = pp.masterBytes;
  if (s_.optimizer == Optimizer::Momentum)
    perElem += pp.momentBytes;
  else if (s_.optimizer == Optimizer::Adam || s_.optimizer == Optimizer::AdamW)
    perElem += 2.0 * pp.momentBytes;
  return perElem;
}

PlanBuilder::FusedNormStates PlanBuilder::fusedNormStates(const Node &n) {
  FusedNormStates out;
  const Value *y = fusedBatchNormOutput(n);
  std::optional<int64_t> c = y ? y->type.staticDim(1) : std::nullopt;
  if (!c || *c <= 0)
    return out;
  auto channels = static_cast<uint64_t>(*c);
  out.residentBytes = 4 * channels * 4 + 8;
  out.trainedElements = 2 * channels;
  const Value *bias = n.inputs.size() > 2 ? n.inputs[2] : nullptr;
  if (bias && bias->kind == Value::Kind::Param) {
    out.residentBytes -= std::min(out.residentBytes, bytesOf(bias, false));
    if (trainable_.count(bias))
      out.trainedElements -= std::min<uint64_t>(out.trainedElements, channels);
  }
  return out;
}

Trace PlanBuilder::build(MemorySummary &sum) {
  sum_ = &sum;
  bool training = s_.train;
  classifyParams();
  findComposites();
  findSkippedMasks();
  findCausalAttention();
  findMathAttention();
  // Model states per rank (ZeRO paper, Rajbhandari et al. 2020, sec. 3).
  for (const auto &p : g_.params()) {
    const Value *v = p->value;
    if (!v || p->computed)
      continue;  // a folded value the forward computes: an activation (forward())
    bool train = trainable_.count(v) > 0;
    uint64_t b = bytesOf(v, false);
    uint64_t numel = dtypeBits(v->type.dtype) ? b * 8 / dtypeBits(v->type.dtype) : 0;
    const PrecisionPolicy pp = policy();
    // A mixed policy holds every trainable weight as it says (FSDP2's fp32
    // shards, DDP's 16-bit copy beside an fp32 master), also one a 16-bit
    // capture recorded in 16 bits (the run's compute copy, not its storage).
    const bool mixed = s_.precision == Precision::BF16Mixed || s_.precision == Precision::FP16Mixed;
    const bool sized = v->type.dtype == DType::Float ||
                       (mixed && (v->type.dtype == DType::BFloat16 || v->type.dtype == DType::Float16));
    if (train && sized)
      b = numel * pp.weightBytes;
    if (training && train)
      b /= shards(s_.mesh.zeroStage() >= 3, v);
    storageOf_[v] = t_.alloc(b, MemoryKind::Param, v);
    (p->buffer ? sum.buffersBytes : sum.paramsBytes) += b;
    if (!training || !train || gradless_.count(v))
      continue;
    auto state = static_cast<uint64_t>(static_cast<double>(numel) * optimizerBytesPerElement()) /
                 shards(s_.mesh.zeroStage() >= 1, v);
    if (state)
      t_.alloc(state, MemoryKind::OptimizerState, v);
    sum.optimizerBytes += state;
    // Gradients of the weights the policy sizes follow it; others keep their dtype.
    uint64_t grad = (sized ? numel * pp.gradBytes : bytesOf(v, false)) / shards(s_.mesh.zeroStage() >= 2, v);
    sum.gradsBytes += grad;
  }
  // The states of batch norms the exporter fused into Convs (fp32 weights,
  // gradients and moments under the policy, as for the parameters above).
  for (const auto &np : g_.nodes()) {
    FusedNormStates st = fusedNormStates(*np);
    if (!st.residentBytes)
      continue;
    const PrecisionPolicy pp = policy();
    uint64_t trained = st.trainedElements * 4;
    uint64_t b = st.residentBytes - trained + st.trainedElements * pp.weightBytes / shards(training && s_.mesh.zeroStage() >= 3);
    t_.alloc(b, MemoryKind::Param, nullptr, np.get());
    sum.paramsBytes += b;
    if (!training || !st.trainedElements)
      continue;
    auto state = static_cast<uint64_t>(static_cast<double>(st.trainedElements) * optimizerBytesPerElement()) /
                 shards(s_.mesh.zeroStage() >= 1);
    if (state)
      t_.alloc(state, MemoryKind::OptimizerState, nullptr, np.get());
    sum.optimizerBytes += state;
    sum.gradsBytes += st.trainedElements * pp.gradBytes / shards(s_.mesh.zeroStage() >= 2);
  }
  for (const Value *in : g_.inputs) {
    uint64_t b = bytesOf(in, false);
    storageOf_[in] = t_.alloc(b, MemoryKind::Input, in);
    sum.inputsBytes += b;
  }
  lastUse_.assign(t_.storages.size(), -1);  // resident: never freed in forward
  planSharding();
  if (g_.hasBackward()) {
    joint();  // the graph's own backward, never a synthetic one on top
    if (training)
      optimizerStep();
  } else if (training) {
    computeNeedsGrad();
    planCompiledStep(true);
    forward(true);
    backward();
    optimizerStep();
  } else {
    planCompiledStep(false);
    forward(false);
  }
  // Sizes the user did not give: hints the exporter recorded, then the 1s.
  for (const SymbolInfo &sym : m_.symbols)
    if (sym.origin == SymbolInfo::Origin::Hint && sym.value)
      sum.assumedDims.push_back(fmt::format("{}={}", sym.name, *sym.value));
    else if (sym.origin == SymbolInfo::Origin::Default && sym.value)
      sum.assumedDims.push_back(fmt::format("{}={} ({})", sym.name, *sym.value,
                                            sym.assumption.empty() ? sym.defaultExpr->str() : sym.assumption));
  for (const std::string &d : assumed_)
    sum.assumedDims.push_back(d + "=1");
  // Python locals the file's stack traces cannot show (PythonLocals.h), each
  // "FILE:LINE: CODE", named by the file's base name.
  std::vector<std::string> unseen, folded;
  std::string unscoped;
  for (const auto &[key, value] : m_.metadata)
    if (key == kUnscopedNodes) {
      unscoped = value;
    } else if (key == kUnseenHelperCall) {
      auto [where, code] = llvm::StringRef(value).split(": ");
      unseen.push_back(fmt::format("{} `{}`", llvm::sys::path::filename(where), code));
    } else if (key == kFoldedParameter) {
      folded.push_back(value);
    }
  if (!unseen.empty())
    sum.caveats.push_back(fmt::format(
        "the Python locals of helper functions are not in this file's stack traces (a non-strict torch.export "
        "records `forward` frames only): {}; eager holds a helper's locals until it returns, so the peak can be "
        "higher than shown; export under graphlint.record_python_frames() or with strict=True to record them "
        "(docs/pt2.md)",
        firstFew(unseen)));
  if (!unscoped.empty())
    sum.caveats.push_back(fmt::format(
        "{} node{} of this file carry neither a frame of the model's Python nor a module scope (torch.onnx's dynamo "
        "exporter drops both for the ops of a torch.autocast or torch.no_grad region in forward): eager's Python "
        "locals and module arguments "
        "there are not held, so the peak can be higher than shown; a .pt2 export (torch.export.save) keeps them "
        "(docs/memory.md)",
        unscoped, unscoped == "1" ? "" : "s"));
  // Parameters the exporter's optimizer folded away (DynamoFacts.h).
  if (!folded.empty())
    sum.caveats.push_back(fmt::format(
        "{} parameter{} of the exported model {} no initializer in this file (torch.onnx's optimizer folded {} into "
        "constants): {}; {} weights, gradients and optimizer state are not counted, so the peak can be higher than "
        "shown; export with torch.onnx.export(..., optimize=False) to keep them (docs/memory.md)",
        folded.size(), folded.size() == 1 ? "" : "s", folded.size() == 1 ? "has" : "have",
        folded.size() == 1 ? "it" : "them", firstFew(folded), folded.size() == 1 ? "its" : "their"));
  // scaled_dot_product_attention as an export writes it: one generic op
  // (.pt2), or the dynamo ONNX exporter's decomposition, whose nodes carry
  // its FX node. Not the kernel eager dispatches (an FX capture records that).
  // A fact of the graph alone (computed once per context or SharedFacts).
  using Calls = std::pair<std::set<std::string>, bool>;  // the calls; decomposed by the exporter
  const auto &[sdpa, decomposed] = ctx_.fact<Calls>(fmt::format("sdpaCalls {}", static_cast<const void *>(&g_)), [&] {
    Calls found;
    for (const auto &np : g_.nodes()) {
      if (np->atenName() == "scaled_dot_product_attention") {
        found.first.insert(np->name);
      } else if (const std::string *call = decomposedAttentionCall(*np)) {
        found.first.insert(*call);
        found.second = true;
      }
    }
    return found;
  });
  if (!sdpa.empty())
    sum.caveats.push_back(fmt::format(
        "{} scaled_dot_product_attention call{} (transformers' default attention): {}; a causal mask built where "
        "eager passes is_causal=True, and the key/value head copies it implies, are left out where the plan proves "
        "the mask causal; lint an FX export (graphlint-export), which records the kernels eager ran, or export with "
        "attn_implementation=\"eager\" (docs/memory.md)",
        sdpa.size(), sdpa.size() == 1 ? "" : "s",
        decomposed ? "the exporter decomposed each into MatMul and Softmax, costed as the fused kernel eager runs "
                     "(flash attention: its output and logsumexp, kept with the operands for its backward), or, in a "
                     "CPU training step under attention dropout, as the math path"
                   : "costed as one op writing its output, the fused kernel eager runs (flash attention: its output "
                     "and logsumexp, kept with the operands for its backward), or, in a CPU training step under "
                     "attention dropout, as the math path (an eval() export records dropout_p 0, taken as eval's "
                     "where a dropout module of the model has p > 0)"));
  // Compiled execution: what the fused kernels and the partitioner spared.
  for (const Value *v : fusedAway_)
    if (v->producer && !isViewOp(*v->producer)) {
      ++sum.fusedAwayTensors;
      sum.fusedAwayBytes += bytesOf(v, true);
    }
  for (const Value *v : recomputedByPartitioner_) {
    ++sum.recomputedTensors;
    sum.recomputedBytes += bytesOf(v, true);
  }
  // Provenance: of the main graph's tensors (params, inputs, node outputs),
  // how many have no size (they count as 0 bytes above).
  sum.unsizedTensors = 0;
  sum.tensors = 0;
  for (const auto &v : g_.values()) {
    if (!v->type.isTensor() || (v->kind != Value::Kind::Param && v->kind != Value::Kind::GraphInput &&
                                v->kind != Value::Kind::NodeOutput))
      continue;
    ++sum.tensors;
    const Shape &sh = v->type.shape;
    bool sized = sh.rankKnown && dtypeBits(v->type.dtype) > 0 &&
                 std::all_of(sh.dims.begin(), sh.dims.end(), [](const Dim &d) { return !d.isUnknown(); });
    sum.unsizedTensors += sized ? 0 : 1;
  }
  sum.saturatedTensors = saturated_.size();
  return std::move(t_);
}

const llvm::DenseMap<const Value *, int64_t> &PlanBuilder::lastReads(const char *which,
                                                                     llvm::function_ref<bool(const Node &)> runs,
                                                                     bool pythonHolds) {
  using Reads = llvm::DenseMap<const Value *, int64_t>;
  return ctx_.fact<Reads>(fmt::format("liveness {} {} {}", which, pythonHolds, static_cast<const void *>(&g_)),
                          [&] { return Liveness(g_, runs, &m_, pythonHolds).lastReads(); });
}

Trace buildTrace(AnalysisContext &ctx, MemorySummary &sum, const MeshSharding *sharding, const FusionPlan *compiled) {
  return PlanBuilder(ctx, sharding, compiled).build(sum);
}

}  // namespace graphlint::memory
