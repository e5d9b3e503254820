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
//
// --recompute (layer, sqrt, selective-*) on a joint graph models what
// torch.utils.checkpoint(use_reentrant=False) around each segment does to
// this schedule: in forward a segment keeps only its inputs and what leaves
// it, its own saved tensors die at their last forward reader; just before
// the first backward node that reads one of them, the segment's forward runs
// again (torch 2.x stops after its last saved tensor, 1.x runs all of it)
// and rebuilds them, and each is freed after its last backward reader.
#include "MemoryTraceBuilder.h"

#include "graphlint/analyses/CompiledExecution.h"
#include "graphlint/analyses/FusionPlan.h"
#include "graphlint/ir/ValueFacts.h"

#include <algorithm>
#include <map>

namespace graphlint::memory {

void PlanBuilder::joint() {
  const bool training = s_.train;
  const auto &nodes = g_.nodes();
  const auto end = static_cast<int64_t>(nodes.size());
  auto runs = [&](const Node &n) { return training || !n.backwardPhase; };
  // The last node that reads each value, among the nodes that run.
  llvm::DenseMap<const Value *, int64_t> lastRead =
      lastReads(training ? "all" : "forward", runs, compiled_ == nullptr);
  if (compiled_) {
    planCompiledJoint(lastRead);
    holdKernelInputs(g_, *compiled_, lastRead, runs);
  }

  // The autograd engine holds what an apply reads (its incoming gradients,
  // the saved tensors it unpacked, its own temporaries) until it returns:
  // the exporter's `apply_rest` counts the nodes after this one in the apply.
  for (const auto &np : nodes) {
    // A compiled backward is one generated function, no autograd applies.
    if (!np->backwardPhase || !runs(*np) || compiled_)
      continue;
    const std::string *rest = np->metadataValue("apply_rest");
    if (!rest)
      continue;
    int64_t end = static_cast<int64_t>(np->index) + std::stoll(*rest);
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

  std::vector<Checkpoint> segments;
  llvm::DenseMap<const Value *, int64_t> backwardRead;
  if (training && s_.recompute != Recompute::None)
    segments = checkpoints(lastRead, backwardRead);
  std::map<int64_t, std::vector<int>> recomputeAt;  // backward node -> segments recomputed before it
  for (int seg = static_cast<int>(segments.size()) - 1; seg >= 0; --seg)
    if (segments[static_cast<size_t>(seg)].recomputeAt >= 0)
      recomputeAt[segments[static_cast<size_t>(seg)].recomputeAt].push_back(seg);

  // The trace ran under graphlint-export's dispatch mode, so its gradient
  // sums are out of place; eager on torch 2.x adds into a buffer it alone
  // holds, torch 1.x always sums into a new one.
  const bool inPlaceSums = training && !tracedByTorch1();

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
      gatherForBackward();
    }
    if (auto r = recomputeAt.find(idx); r != recomputeAt.end())
      for (int seg : r->second)
        recompute(seg, segments[static_cast<size_t>(seg)], idx, lastRead, backwardRead, dueAt);
    llvm::SmallVector<uint32_t, 2> temps;
    if (training && !n.backwardPhase)
      gatherBefore(n);
    // --float8: the GEMM's fp8 operand copies, freed when it returns.
    if (uint64_t f8 = float8Temporaries(n, false))
      temps.push_back(t_.alloc(f8, MemoryKind::Temporary, nullptr, &n));
    // Gradients reduce-scattered with their group once this node has run.
    llvm::SmallVector<std::pair<const Value *, uint32_t>, 2> reduced;
    for (unsigned oi = 0; oi < n.outputs.size(); ++oi) {
      const Value *o = n.outputs[oi];
      if (!o)
        continue;
      bool paramGrad = n.backwardPhase && o->isGraphOutput();
      uint32_t st = viewStorage(n, oi);
      if (st == kNone && oi == 0 && inPlaceSums)
        st = accumulatedInto(n, idx);
      if (st == kNone && !(n.backwardPhase && o->isGraphOutput()))
        st = compiledInPlace(n, oi);
      if (st == kNone) {
        MemoryKind kind = paramGrad ? MemoryKind::Grad : n.backwardPhase ? MemoryKind::Gradient : MemoryKind::Activation;
        // An activation's gradient is that activation's (as in a synthesised
        // backward): reports name it, and GL202 adds it to its producer.
        const Value *owner = kind == MemoryKind::Gradient && oi < n.outputGradientOf.size() && n.outputGradientOf[oi]
                                 ? n.outputGradientOf[oi]
                                 : o;
        const Value *param = paramGrad ? paramOfGrad_.lookup(o) : nullptr;
        st = t_.alloc(!paramGrad ? materialised(o, outputBytes(n, oi)) : paramGradBytes(o, param && reducedInGroup(param)),
                      kind, owner);
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
      if (const Value *param = paramGrad ? paramOfGrad_.lookup(o) : nullptr; param && reducedInGroup(param))
        reduced.push_back({param, st});
      else if (paramGrad)
        paramGrad_[o] = st;
      if (lastUse_[st] > idx && lastUse_[st] < end)
        dueAt[static_cast<size_t>(lastUse_[st])].push_back(st);
    }
    t_.mark(&n, n.backwardPhase ? MemoryPhase::Backward : MemoryPhase::Forward);
    for (uint32_t tmp : temps)
      t_.release(tmp);
    if (training && !n.backwardPhase)
      reshardAfter(n);
    for (auto &[param, st] : reduced)
      gradientReady(param, st);
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

void PlanBuilder::planCompiledJoint(llvm::DenseMap<const Value *, int64_t> &lastRead) {
  const bool training = s_.train;
  auto runs = [&](const Node &n) { return training || !n.backwardPhase; };
  llvm::DenseSet<const Value *> kept;
  if (training) {
    // What the forward hands to the backward: forward storages a backward
    // node reads (directly or through a view), in forward order.
    llvm::DenseSet<const Value *> seen;
    std::vector<const Value *> saved;
    for (const auto &np : g_.nodes())
      if (np->backwardPhase)
        for (const Value *in : np->inputs) {
          const Value *b = storageBase(captureOrigin(in));
          if (b && b->producer && !b->producer->backwardPhase && seen.insert(b).second)
            saved.push_back(b);
        }
    llvm::sort(saved, [](const Value *a, const Value *b) { return a->producer->index < b->producer->index; });
    // Every backward read of v, through views, is by a fusible op.
    auto backwardFusible = [&](const Value *v) {
      llvm::SmallVector<const Value *, 8> work{v};
      for (unsigned guard = 0; !work.empty() && guard < 4096; ++guard) {
        const Value *x = work.pop_back_val();
        for (const Use &u : x->uses) {
          const Node *r = u.user;
          if (!r)
            continue;
          if (isViewOp(*r)) {
            for (const Value *o : r->outputs)
              if (o)
                work.push_back(o);
          } else if (r->backwardPhase && !fusibleInBackward(*r)) {
            return false;
          }
        }
      }
      return true;
    };
    if (s_.recompute == Recompute::None)
      recomputedByPartitioner_ = partitionerRecomputes(saved, backwardFusible,
                                                       [](const Value *v) { return v->producer == nullptr; });
    // A recomputed tensor lives to its last forward reader; the tensors its
    // op reads live until its last backward reader instead.
    const llvm::DenseMap<const Value *, int64_t> &forwardRead =
        lastReads("forward", [](const Node &n) { return !n.backwardPhase; }, false);
    for (const Value *b : saved) {
      if (!recomputedByPartitioner_.count(b)) {
        kept.insert(b);
        continue;
      }
      int64_t backwardEnd = -1;
      llvm::SmallVector<const Value *, 8> work{b};
      for (unsigned guard = 0; !work.empty() && guard < 4096; ++guard) {
        const Value *x = work.pop_back_val();
        if (auto it = lastRead.find(x); it != lastRead.end()) {
          backwardEnd = std::max(backwardEnd, it->second);
          auto f = forwardRead.find(x);
          if (f != forwardRead.end())
            it->second = f->second;
          else
            lastRead.erase(it);
        }
        for (const Use &u : x->uses)
          if (u.user && isViewOp(*u.user))
            for (const Value *o : u.user->outputs)
              if (o)
                work.push_back(o);
      }
      for (const Value *in : b->producer->inputs)
        if (const Value *base = storageBase(captureOrigin(in)); base && base->producer) {
          int64_t &lr = lastRead[base];
          lr = std::max(lr, backwardEnd);
        }
    }
  }
  fusedAway_ = fusedAwayValues(g_, *compiled_, [&](const Value *v) { return kept.count(v) != 0; }, runs);
  keptForBackward_ = std::move(kept);
}

std::vector<PlanBuilder::Checkpoint> PlanBuilder::checkpoints(llvm::DenseMap<const Value *, int64_t> &lastRead,
                                                              llvm::DenseMap<const Value *, int64_t> &backwardRead) {
  const auto &nodes = g_.nodes();
  assignSegments(true);
  std::vector<Checkpoint> out(segStart_.empty() ? 0 : static_cast<size_t>(segStart_.rbegin()->first) + 1);
  if (out.empty())
    return out;
  auto segmentOf = [&](const Value *v) {
    const Node *p = v && v->kind == Value::Kind::NodeOutput ? v->producer : nullptr;
    return p && p->graph == &g_ && !p->backwardPhase && !policySaved_[p->index] ? segment_[p->index] : -1;
  };
  // What another segment or an unsegmented node reads in forward leaves its
  // segment (a block's output): the checkpoint returns it, it is not dropped.
  llvm::DenseSet<const Value *> leaves;
  for (const auto &np : nodes)
    if (!np->backwardPhase)
      for (const Value *in : np->inputs)
        if (const Value *v = captureOrigin(in); segmentOf(v) >= 0 && segmentOf(v) != segment_[np->index])
          leaves.insert(v);
  const llvm::DenseMap<const Value *, int64_t> &forwardRead =
      lastReads("forward", [](const Node &n) { return !n.backwardPhase; }, true);
  for (const auto &np : nodes) {
    int seg = np->backwardPhase || policySaved_[np->index] ? -1 : segment_[np->index];
    if (seg < 0)
      continue;
    Checkpoint &c = out[static_cast<size_t>(seg)];
    for (const Value *o : np->outputs) {
      auto it = o && !o->isGraphOutput() && !leaves.count(o) ? lastRead.find(o) : lastRead.end();
      if (it == lastRead.end())
        continue;
      auto fr = forwardRead.find(o);
      int64_t inForward = fr == forwardRead.end() ? static_cast<int64_t>(np->index) : fr->second;
      // Saved: a backward node reads it. A later forward last read is a
      // compiled kernel holding its inputs to its end (holdKernelInputs),
      // which the checkpoint does not change.
      const int64_t last = it->second;
      if (last > inForward && (last >= static_cast<int64_t>(nodes.size()) ||
                               nodes[static_cast<size_t>(last)]->backwardPhase)) {
        backwardRead[o] = last;
        c.replayEnd = std::max(c.replayEnd, static_cast<int64_t>(np->index));
        c.backwardEnd = std::max(c.backwardEnd, last);
        it->second = inForward;
      }
    }
  }
  // torch 1.x reruns the whole segment; 2.x stops after its last saved
  // tensor (checkpoint's early stop).
  if (tracedByTorch1())
    for (size_t i = 0; i < nodes.size(); ++i)
      if (int seg = segment_[i]; seg >= 0 && out[static_cast<size_t>(seg)].backwardEnd >= 0)
        out[static_cast<size_t>(seg)].replayEnd = static_cast<int64_t>(i);
  // The recompute runs when backward first unpacks one of them.
  for (const auto &np : nodes)
    if (np->backwardPhase)
      for (const Value *in : np->inputs)
        if (const Value *v = captureOrigin(in); backwardRead.count(v)) {
          Checkpoint &c = out[static_cast<size_t>(segmentOf(v))];
          if (c.recomputeAt < 0)
            c.recomputeAt = static_cast<int64_t>(np->index);
        }
  // The checkpoint saves the segment's inputs for the recompute; they live
  // until its last saved tensor has been read.
  for (const auto &np : nodes) {
    int seg = np->backwardPhase ? -1 : segment_[np->index];
    if (seg < 0 || out[static_cast<size_t>(seg)].backwardEnd < 0)
      continue;
    for (const Value *in : np->inputs)
      if (const Value *v = captureOrigin(in); v && v->kind == Value::Kind::NodeOutput && segmentOf(v) != seg) {
        int64_t &lr = lastRead[v];
        lr = std::max(lr, out[static_cast<size_t>(seg)].backwardEnd);
      }
  }
  return out;
}

bool PlanBuilder::tracedByTorch1() const {
  // An ONNX file torch.onnx.export wrote names the torch that exported it.
  if (m_.producerName == "pytorch" && llvm::StringRef(m_.producerVersion).startswith("1."))
    return true;
  for (const auto &kv : m_.metadata)
    if (kv.first == "torch" && llvm::StringRef(kv.second).startswith("1."))
      return true;
  return false;
}

uint32_t PlanBuilder::accumulatedInto(const Node &n, int64_t idx) {
  if (n.inputs.size() < 2 || n.outputs.empty() || !n.outputs[0] || !n.metadataValue("accumulates"))
    return kNone;
  uint32_t operand[2] = {kNone, kNone};
  for (unsigned k = 0; k < 2; ++k)
    if (auto it = n.inputs[k] ? storageOf_.find(captureOrigin(n.inputs[k])) : storageOf_.end(); it != storageOf_.end())
      operand[k] = it->second;
  // InputBuffer::accumulate tries the buffer it already held first.
  for (unsigned k = 0; k < 2; ++k) {
    uint32_t st = operand[k];
    if (st == kNone || st == operand[1 - k] || st >= lastUse_.size())
      continue;
    const Trace::Storage &buf = t_.storages[st];
    if (buf.live && buf.kind == MemoryKind::Gradient && lastUse_[st] == idx && buf.bytes == outputBytes(n, 0))
      return st;
  }
  return kNone;
}

void PlanBuilder::recompute(int seg, const Checkpoint &c, int64_t at,
                           const llvm::DenseMap<const Value *, int64_t> &lastRead,
                           const llvm::DenseMap<const Value *, int64_t> &backwardRead,
                           std::vector<std::vector<uint32_t>> &dueAt) {
  const auto &nodes = g_.nodes();
  llvm::DenseSet<uint32_t> saved;                                 // rebuilt storages a backward node reads
  llvm::SmallVector<std::pair<uint32_t, int64_t>, 16> passing;   // the others, with their last forward reader
  for (size_t i = segStart_[seg]; i < nodes.size() && segment_[i] == seg && static_cast<int64_t>(i) <= c.replayEnd;
       ++i) {
    const Node &r = *nodes[i];
    if (policySaved_[i])
      continue;  // selective-op keeps what it made: not rerun
    llvm::SmallVector<uint32_t, 2> temps;
    for (unsigned oi = 0; oi < r.outputs.size(); ++oi) {
      const Value *o = r.outputs[oi];
      auto cur = o ? storageOf_.find(o) : storageOf_.end();
      if (!o || (cur != storageOf_.end() && t_.storages[cur->second].live))
        continue;  // still held: what the segment returned, a view of its input, a parameter
      auto b = backwardRead.find(o);
      uint32_t st = viewStorage(r, oi);
      if (st == kNone || !t_.storages[st].live) {
        // A compiled recompute fuses as the forward did: what never
        // materialised there is not allocated here either.
        st = t_.alloc(materialised(o, outputBytes(r, oi)),
                      b != backwardRead.end() ? MemoryKind::Saved : MemoryKind::Activation, o);
        lastUse_.resize(t_.storages.size(), -1);
        lastUse_[st] = at;
      }
      storageOf_[o] = st;
      if (b != backwardRead.end()) {
        saved.insert(st);
        t_.storages[st].kind = MemoryKind::Saved;
        lastUse_[st] = std::max(lastUse_[st], b->second);
        dueAt[static_cast<size_t>(b->second)].push_back(st);
      } else {
        auto lr = lastRead.find(o);
        passing.push_back({st, lr == lastRead.end() ? static_cast<int64_t>(i) : lr->second});
      }
    }
    t_.mark(&r, MemoryPhase::Backward, /*recompute=*/true);
    for (uint32_t tmp : temps)
      t_.release(tmp);
    for (auto &[st, last] : passing)
      if (last <= static_cast<int64_t>(i) && !saved.count(st))
        t_.release(st);
  }
  for (auto &[st, last] : passing)
    if (!saved.count(st))
      t_.release(st);
}

}  // namespace graphlint::memory
