// scaled_dot_product_attention on the math path, where a `.pt2` records one
// generic op. A training step on the CPU under attention dropout cannot run
// the fused flash kernel (it takes no dropout), so eager runs the composite
// (ATen's _scaled_dot_product_attention_math), whose tensors the op hides:
//
//   q' = q * sqrt(scale); k' = k^T * sqrt(scale)   (each in its operand's layout)
//   scores = matmul(q', k')                       (a copy of q' or k' where bmm cannot view it)
//   scores += mask                                 (in place)
//   probs = _safe_softmax(scores)                  (softmax, a bool -inf test, where)
//   dropped = probs * noise                        (the CPU's dropout: an input-sized noise)
//   out = matmul(dropped, v)                       (a copy of v where bmm cannot view it)
//
// Autograd keeps what each backward reads: the bmm operands (the copies, or
// q' and k'), probs, noise, dropped and v's bmm operand; q and k themselves
// are not kept. The backward runs the chain in reverse: a gradient of
// dropped and of v, of probs, of the scores, then of q' and k' (and of q and
// k, their scaling's backward). Grouped query heads (enable_gqa) repeat k and
// v first (repeat_interleave: new tensors of the query's heads).
#include "MemoryTraceBuilder.h"

#include "graphlint/ir/ValueFacts.h"

#include <array>

namespace graphlint::memory {

void PlanBuilder::findMathAttention() {
  if (!s_.train || s_.kernels != Kernels::Cpu)
    return;  // CUDA's flash and efficient kernels draw the dropout themselves
  for (const auto &np : g_.nodes()) {
    const Node &n = *np;
    if (n.domain != "aten" || n.atenName() != "scaled_dot_product_attention" || !attentionDropsOut(n) ||
        n.inputs.size() < 3)
      continue;  // the dynamo exporter's decomposition: findComposites
    if (!addMathAttention(n, {n.inputs[0], n.inputs[1], n.inputs[2]}, n.inputs))
      continue;
    MathAttention &m = mathAttention_[&n];
    m.layoutKnown = true;  // the importer's fact, from the recorded strides
    for (auto [i, numel] : attentionMathCopies(n))
      m.copies[i] = true;
    // is_causal with no mask: a [L, S] bool tril, then a float mask.
    if (numericAttr(n, "is_causal").value_or(0) != 0 && (n.inputs.size() < 4 || !n.inputs[3]))
      m.causalMask = m.scores / m.batch + m.flags / m.batch;
  }
}

bool PlanBuilder::addMathAttention(const Node &n, std::array<const Value *, 3> qkv,
                                   llvm::ArrayRef<const Value *> reads) {
  if (n.outputs.empty() || !n.outputs[0] || llvm::is_contained(qkv, nullptr))
    return false;
  std::optional<Ints> q = staticDims(qkv[0]), k = staticDims(qkv[1]), v = staticDims(qkv[2]);
  if (!q || !k || !v || q->size() < 3 || k->size() != q->size() || v->size() != q->size() ||
      llvm::any_of(*q, [](int64_t d) { return d <= 0; }) || llvm::any_of(*k, [](int64_t d) { return d <= 0; }) ||
      llvm::any_of(*v, [](int64_t d) { return d <= 0; }))
    return false;
  size_t r = q->size();
  uint64_t batch = 1;
  for (size_t d = 0; d + 2 < r; ++d)
    batch *= static_cast<uint64_t>(std::max((*q)[d], (*k)[d]));
  auto L = static_cast<uint64_t>((*q)[r - 2]), E = static_cast<uint64_t>((*q)[r - 1]);
  auto S = static_cast<uint64_t>((*k)[r - 2]), Ev = static_cast<uint64_t>((*v)[r - 1]);
  MathAttention m;
  m.operands = qkv;
  for (const Value *r : reads)
    if (r)  // an omitted mask
      m.reads.push_back(r);
  m.batch = batch;
  m.query = bytesOf(qkv[0], true);
  m.key = bytesOfElements(qkv[0], batch * S * E, true);
  m.value = bytesOfElements(qkv[0], batch * S * Ev, true);
  m.scores = bytesOfElements(qkv[0], batch * L * S, true);
  m.flags = batch * L * S;  // a bool per score
  m.repeated = (*k)[r - 3] != (*q)[r - 3];
  mathAttention_[&n] = std::move(m);
  return true;
}

void PlanBuilder::mathAttentionLayout(MathAttention &m) {
  // An ONNX graph's: the strides the plan derives for its views.
  m.layoutKnown = true;
  std::optional<Ints> dims[3], strides[3];
  for (int i = 0; i < 3; ++i) {
    dims[i] = staticDims(m.operands[i]);
    strides[i] = stridesOf(m.operands[i]);
    if (!dims[i] || !strides[i])
      return;  // not known: no copies
  }
  for (auto [i, numel] :
       attentionMathOperandCopies(*dims[0], *strides[0], *dims[1], *strides[1], *dims[2], *strides[2]))
    m.copies[i] = true;
}

uint64_t PlanBuilder::MathAttention::savedBytes() const {
  uint64_t b = query + key + 3 * scores;
  if (copies[2] || repeated)
    b += value;
  return b;
}

void PlanBuilder::mathAttentionForward(const Node &n, int64_t idx, llvm::SmallVectorImpl<uint32_t> &temps) {
  MathAttention &m = mathAttention_[&n];
  if (!m.layoutKnown)
    mathAttentionLayout(m);
  bool grad = llvm::any_of(m.operands, [&](const Value *v) { return needsGrad_.count(v) != 0; });
  // Under --recompute what the segment saves inside is rebuilt before its
  // backward (savedOf's extraBytes): in the forward it is a temporary.
  bool keep = grad && segment_[n.index] < 0;
  auto temp = [&](uint64_t bytes) { return t_.alloc(bytes, MemoryKind::Temporary, nullptr, &n); };
  auto local = [&](uint64_t bytes) {  // freed when the op returns
    uint32_t st = temp(bytes);
    temps.push_back(st);
    return st;
  };
  auto saved = [&](uint64_t bytes) {
    if (!keep)
      return local(bytes);
    uint32_t st = t_.alloc(bytes, MemoryKind::Saved, nullptr, &n);
    lastUse_.resize(t_.storages.size(), -1);
    auto [it, inserted] = savedUntil_.emplace(st, idx);
    if (!inserted)
      it->second = std::min(it->second, idx);
    return st;
  };
  if (m.causalMask)
    local(m.causalMask);
  uint32_t q = m.copies[0] ? local(m.query) : saved(m.query);
  m.saved.query = m.copies[0] ? saved(m.query) : q;
  if (m.repeated)
    local(m.key);
  uint32_t k = m.copies[1] ? local(m.key) : saved(m.key);
  m.saved.key = m.copies[1] ? saved(m.key) : k;
  uint32_t scores = temp(m.scores);
  uint32_t softmax = temp(m.scores), flags = temp(m.flags);
  m.saved.probs = saved(m.scores);
  t_.release(flags);
  t_.release(softmax);
  t_.release(scores);
  m.saved.noise = saved(m.scores);
  m.saved.dropped = saved(m.scores);
  m.saved.value = m.copies[2] || m.repeated ? saved(m.value) : kNone;  // else v itself (savedOf)
}

void PlanBuilder::mathAttentionBackward(const Node &n, llvm::function_ref<void(const Value *)> gradient) {
  const MathAttention &m = mathAttention_[&n];
  auto temp = [&](uint64_t bytes) { return t_.alloc(bytes, MemoryKind::Temporary, nullptr, &n); };
  // out = matmul(dropped, v): the gradients of dropped and of v.
  uint32_t dropped = temp(m.scores);
  gradient(m.operands[2]);
  t_.release(m.saved.dropped);
  t_.release(m.saved.value);
  // dropped = probs * noise.
  uint32_t probs = temp(m.scores);
  t_.release(dropped);
  t_.release(m.saved.noise);
  // probs = _safe_softmax(scores).
  uint32_t scores = temp(m.scores);
  t_.release(probs);
  t_.release(m.saved.probs);
  // scores = matmul(q', k'), then the scalings.
  uint32_t q = temp(m.query), k = temp(m.key);
  t_.release(scores);
  t_.release(m.saved.query);
  t_.release(m.saved.key);
  gradient(m.operands[0]);
  t_.release(q);
  gradient(m.operands[1]);
  t_.release(k);
}

}  // namespace graphlint::memory
