// Per-stage memory under pipeline parallelism (PipelineMemory.h).
#include "PipelineMemory.h"

#include <algorithm>

namespace graphlint::memory {

ForwardEndHeld forwardEndHeld(const Trace &t) {
  ForwardEndHeld out;
  // What is live when the forward ends: every activation saved for backward.
  size_t end = 0;
  for (size_t e = 0; e < t.events.size(); ++e)
    if (t.events[e].op == Trace::Op::Mark && t.steps[t.events[e].id].phase == MemoryPhase::Forward)
      end = e;
  // The last forward step's frees (its inputs' last use) follow its mark.
  while (end + 1 < t.events.size() && t.events[end + 1].op == Trace::Op::Free)
    ++end;
  std::vector<bool> live(t.storages.size(), false);
  for (size_t e = 0; e <= end && e < t.events.size(); ++e)
    if (t.events[e].op != Trace::Op::Mark)
      live[t.events[e].id] = t.events[e].op == Trace::Op::Alloc;
  for (size_t i = 0; i < t.storages.size(); ++i) {
    const Trace::Storage &st = t.storages[i];
    if (!live[i])
      continue;
    if (st.kind == MemoryKind::Input) {
      out.inputBytes += static_cast<double>(st.bytes);
      continue;
    }
    if (st.kind != MemoryKind::Activation && st.kind != MemoryKind::Saved)
      continue;
    // A saved value belongs to the last chunk that reads it in the forward
    // (a stage's input, received from the one before, is held by the stage).
    ForwardEndHeld::Held h;
    h.bytes = st.bytes;
    if (const Node *n = st.value && st.value->producer ? st.value->producer : st.owner)
      h.nodes.push_back(n->index);
    if (st.value)
      for (const Use &u : st.value->uses)
        if (!u.user->backwardPhase)
          h.nodes.push_back(u.user->index);
    out.held.push_back(std::move(h));
  }
  return out;
}

std::vector<MemorySummary::Stage> pipelineStages(const ForwardEndHeld &f, const MemorySummary &sum,
                                                 const PipelinePlan &plan, HeldAcrossMicrobatches held) {
  std::vector<MemorySummary::Stage> out;
  if (!plan.active())
    return out;
  const unsigned pp = plan.pp();
  std::vector<double> saved(pp, 0);
  double savedTotal = 0;
  const double inputs = f.inputBytes;
  for (const ForwardEndHeld::Held &h : f.held) {
    unsigned chunk = 0;
    for (unsigned n : h.nodes)
      chunk = std::max(chunk, plan.chunkOfNode(n));
    unsigned rank = plan.rankOfChunk(chunk);
    saved[rank] += static_cast<double>(h.bytes);
    savedTotal += static_cast<double>(h.bytes);
  }
  const double n = plan.microbatches();
  const double states = static_cast<double>(sum.paramsBytes + sum.buffersBytes + sum.gradsBytes + sum.optimizerBytes);
  const double transient = std::max(0.0, static_cast<double>(sum.peakAllocatedBytes) - states - savedTotal - inputs);
  const double reservedRatio =
      sum.peakAllocatedBytes ? static_cast<double>(sum.peakReservedBytes) / static_cast<double>(sum.peakAllocatedBytes)
                             : 1.0;
  for (unsigned r = 0; r < pp; ++r) {
    MemorySummary::Stage s;
    s.rank = r;
    for (unsigned c = 0; c < plan.chunks().size(); ++c)
      if (plan.rankOfChunk(c) == r) {
        if (s.firstModule.empty())
          s.firstModule = plan.chunks()[c].firstModule;
        s.lastModule = plan.chunks()[c].lastModule;
      }
    double share = plan.paramShare(r);
    s.paramsBytes = static_cast<uint64_t>(static_cast<double>(sum.paramsBytes) * share);
    s.buffersBytes = static_cast<uint64_t>(static_cast<double>(sum.buffersBytes) * share);
    s.gradsBytes = static_cast<uint64_t>(static_cast<double>(sum.gradsBytes) * share);
    s.optimizerBytes = static_cast<uint64_t>(static_cast<double>(sum.optimizerBytes) * share);
    s.activationsPerMicrobatch = static_cast<uint64_t>(saved[r] / n);
    s.inFlightMicrobatches = plan.inFlight(r);
    s.activationsBytes = static_cast<uint64_t>(saved[r] / n * s.inFlightMicrobatches);
    // Held from the first micro-batch's backward to the last one's
    // reduce-scatter, so at the stage's peak of activations in flight.
    s.gatheredParamsBytes = static_cast<uint64_t>(static_cast<double>(s.paramsBytes) * held.paramsPerShardedByte);
    s.unshardedGradsBytes = static_cast<uint64_t>(static_cast<double>(s.gradsBytes) * held.gradsPerShardedByte);
    double alloc = static_cast<double>(s.paramsBytes + s.buffersBytes + s.gradsBytes + s.optimizerBytes +
                                       s.gatheredParamsBytes + s.unshardedGradsBytes + s.activationsBytes) +
                   (transient + (r == 0 ? inputs : 0)) / n;
    s.peakAllocatedBytes = static_cast<uint64_t>(alloc);
    s.peakReservedBytes = static_cast<uint64_t>(alloc * reservedRatio);
    out.push_back(s);
  }
  return out;
}

}  // namespace graphlint::memory
