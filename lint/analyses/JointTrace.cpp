// The memory trace of a joint training graph (graphlint-export --train: the
// forward and the backward nodes autograd ran, docs/memory.md "Joint
// graphs"). The graph is the step's real schedule, so nothing is synthesised:
// one liveness walk over all its nodes. A forward value lives until its last
// reader, forward or backward -- which keeps exactly the tensors autograd
// saved (the export's saved marks are the forward values backward nodes read)
// until the backward node that unpacks them; activation gradients live from
// the backward node that makes them to their last reader; a gradient that is
// a graph output of the backward phase is a parameter's .grad, held until the
// optimizer step. Without --train only the forward nodes run.
#include "MemoryTraceBuilder.h"
#include "graphlint/ir/ValueFacts.h"

#include <algorithm>

namespace graphlint::memory {

void PlanBuilder::joint() {
  const bool training = s_.train;
  const auto &nodes = g_.nodes();
  const auto end = static_cast<int64_t>(nodes.size());
  auto runs = [&](const Node &n) { return training || !n.backwardPhase; };
  // The last node that reads each value, among the nodes that run.
  llvm::DenseMap<const Value *, int64_t> lastRead = Liveness(g_, runs, &m_).lastReads();

  // The autograd engine holds what an apply reads (its incoming gradients,
  // the saved tensors it unpacked, its own temporaries) until it returns:
  // the exporter's `apply_rest` counts the nodes after this one in the apply.
  for (const auto &np : nodes) {
    if (!np->backwardPhase || !runs(*np))
      continue;
    auto rest = std::find_if(np->metadata.begin(), np->metadata.end(),
                             [](const auto &kv) { return kv.first == "apply_rest"; });
    if (rest == np->metadata.end())
      continue;
    int64_t end = static_cast<int64_t>(np->index) + std::stoll(rest->second);
    for (const Value *in : np->inputs)
      if (auto it = in ? lastRead.find(in) : lastRead.end(); it != lastRead.end())
        it->second = std::max(it->second, end);
  }

  // The exporter seeds backward with ones_like(out) per output, as
  // `out.backward(torch.ones_like(out))`: the caller's argument holds that
  // buffer until backward returns, not only until its first reader.
  int64_t lastBackward = -1;
  for (const auto &np : nodes)
    if (np->backwardPhase && runs(*np))
      lastBackward = static_cast<int64_t>(np->index);
  for (const auto &np : nodes)
    if (np->backwardPhase && training && np->atenName() == "ones_like" && np->inputs.size() >= 1 &&
        np->inputs[0] && np->inputs[0]->isGraphOutput())
      for (const Value *o : np->outputs)
        if (o)
          lastRead[o] = std::max(lastRead[o], lastBackward);

  // A lifetime extended past the value's last reader (module arguments,
  // Python locals) ends at a node that does not read it: free it there.
  std::vector<std::vector<uint32_t>> dueAt(static_cast<size_t>(end) + 1);
  bool inBackward = false;
  auto release = [&](const Value *v, int64_t idx) {
    auto it = v ? storageOf_.find(v) : storageOf_.end();
    if (it == storageOf_.end())
      return;
    uint32_t st = it->second;
    // Resident storages (parameters, inputs) have no last use (-1).
    if (st < lastUse_.size() && lastUse_[st] >= 0 && lastUse_[st] <= idx)
      t_.release(st);
  };
  for (const auto &np : nodes) {
    const Node &n = *np;
    if (!runs(n))
      continue;
    auto idx = static_cast<int64_t>(n.index);
    if (n.backwardPhase && !inBackward) {
      // What the forward left for backward: the saved tensors (and the outputs).
      inBackward = true;
      sum_->activationsBytes = t_.liveBytes({MemoryKind::Activation});
    }
    llvm::SmallVector<uint32_t, 2> temps;
    gatherZero3(n, temps);
    for (unsigned oi = 0; oi < n.outputs.size(); ++oi) {
      const Value *o = n.outputs[oi];
      if (!o)
        continue;
      bool paramGrad = n.backwardPhase && o->isGraphOutput();
      uint32_t st = viewStorage(n, oi);
      if (st == kNone) {
        MemoryKind kind = paramGrad ? MemoryKind::Grad : n.backwardPhase ? MemoryKind::Gradient : MemoryKind::Activation;
        // An activation's gradient is that activation's (as in a synthesised
        // backward): reports name it, and GL202 adds it to its producer.
        const Value *owner = kind == MemoryKind::Gradient && oi < n.outputGradientOf.size() && n.outputGradientOf[oi]
                                 ? n.outputGradientOf[oi]
                                 : o;
        st = t_.alloc(paramGrad ? paramGradBytes(o) : outputBytes(n, oi), kind, owner);
        lastUse_.resize(t_.storages.size(), -1);
        lastUse_[st] = idx;
      } else if (paramGrad && t_.storages[st].kind == MemoryKind::Gradient) {
        t_.storages[st].kind = MemoryKind::Grad;  // .grad is a view of a backward buffer
      }
      storageOf_[o] = st;
      if (lastUse_[st] >= 0) {
        auto lr = lastRead.find(o);
        lastUse_[st] = std::max(lastUse_[st], lr == lastRead.end() ? idx : lr->second);
        if (o->isGraphOutput())
          lastUse_[st] = end + 1;  // the caller holds the outputs; .grad waits for the optimizer
      }
      if (paramGrad)
        paramGrad_[o] = st;
      if (lastUse_[st] > idx && lastUse_[st] < end)
        dueAt[static_cast<size_t>(lastUse_[st])].push_back(st);
    }
    t_.mark(&n, nodeLabel(n), n.backwardPhase ? MemoryPhase::Backward : MemoryPhase::Forward);
    for (uint32_t tmp : temps)
      t_.release(tmp);
    for (const Value *in : n.inputs)
      release(captureOrigin(in), idx);
    for (const Value *o : n.outputs)
      release(o, idx);
    for (uint32_t st : dueAt[static_cast<size_t>(idx)])
      if (lastUse_[st] >= 0 && lastUse_[st] <= idx)
        t_.release(st);
  }
  // The step is over: the caller drops the forward outputs.
  for (uint32_t st = 0; st < t_.storages.size(); ++st) {
    MemoryKind k = t_.storages[st].kind;
    if (k == MemoryKind::Activation || k == MemoryKind::Saved || k == MemoryKind::Gradient)
      t_.release(st);
  }
}

}  // namespace graphlint::memory
