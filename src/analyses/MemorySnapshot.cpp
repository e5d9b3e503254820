// The predicted memory snapshot (MemorySnapshot.h): the plan's trace
// (memory::planTrace) through the same AllocatorSim the plan replays, with
// its event log on.
#include "graphlint/analyses/MemorySnapshot.h"

#include "MemoryTrace.h"

#include "graphlint/analyses/CachingAllocator.h"

#include <map>

namespace graphlint {

unsigned memoryCategoryOf(MemoryKind k) {
  switch (k) {
  case MemoryKind::Param: return 0;
  case MemoryKind::Grad: return 1;
  case MemoryKind::OptimizerState: return 2;
  case MemoryKind::Input: return 3;
  case MemoryKind::Activation:
  case MemoryKind::Saved: return 4;
  case MemoryKind::Gradient:
  case MemoryKind::Temporary: return 5;
  }
  return 5;
}

std::string_view snapshotCategory(MemoryKind k) { return MemorySummary::kCategoryNames[memoryCategoryOf(k)]; }

namespace {

using memory::Trace;

// The frames of one storage: the op that made it (innermost), then the
// user's line that called the op, as a real stack has the Python line above
// the aten call. Parameters, inputs and model states have no op: one frame
// names the tensor.
std::vector<MemorySnapshot::Frame> framesOf(const Trace::Storage &st) {
  std::vector<MemorySnapshot::Frame> frames;
  const Node *n = st.value ? st.value->producer : st.owner;
  if (!n) {
    std::string what(snapshotCategory(st.kind));
    frames.push_back({"<graphlint>", 0, st.value ? what + " " + st.value->name : what});
    return frames;
  }
  std::string op = n->domain.empty() ? n->opType : n->domain + "::" + n->opType;
  frames.push_back({"<graphlint>", 0, op + " " + nodeLabel(*n)});
  if (n->loc.valid())
    frames.push_back({n->loc.file, n->loc.line, n->loc.function.empty() ? "<module>" : n->loc.function});
  return frames;
}

}  // namespace

MemorySnapshot memorySnapshotOf(AnalysisContext &ctx) {
  MemorySnapshot snap;
  if (!ctx.model().graph)
    return snap;
  snap.present = true;
  MemorySummary scratch;
  Trace t = memory::planTrace(ctx, scratch);
  const Setup &s = ctx.setup();
  if (s.train && s.mesh.pp > 1)
    snap.caveats.push_back("pipeline: the snapshot replays the whole graph on one device; the memory report's "
                           "figures are the worst stage's");

  snap.storages.reserve(t.storages.size());
  for (const Trace::Storage &st : t.storages)
    snap.storages.push_back({std::string(snapshotCategory(st.kind)), framesOf(st)});

  AllocatorSim alloc;
  std::vector<AllocatorSim::Event> log;
  alloc.recordEvents(&log);
  uint64_t step = 0, live = 0;
  std::vector<uint64_t> segmentBase;
  std::vector<uint32_t> segmentRequest;
  uint64_t next = MemorySnapshot::kBaseAddress;
  auto address = [&](uint64_t segment, uint64_t offset) { return segmentBase[segment] + offset; };
  for (const Trace::Event &ev : t.events) {
    if (ev.op == Trace::Op::Mark) {
      ++step;
      continue;
    }
    log.clear();
    if (ev.op == Trace::Op::Alloc) {
      live += t.storages[ev.id].bytes;
      alloc.allocate(ev.id, t.storages[ev.id].bytes);
    } else {
      live -= t.storages[ev.id].bytes;
      alloc.release(ev.id);
    }
    snap.peakAllocatedBytes = std::max(snap.peakAllocatedBytes, live);
    for (const AllocatorSim::Event &e : log) {
      auto storage = static_cast<uint32_t>(e.id);
      switch (e.kind) {
      case AllocatorSim::Event::SegmentAlloc:
        segmentBase.push_back(next);
        segmentRequest.push_back(storage);
        next += e.size;
        snap.trace.push_back({MemorySnapshot::Action::SegmentAlloc, address(e.segment, 0), e.size, storage, step});
        break;
      case AllocatorSim::Event::Alloc:
        snap.trace.push_back(
            {MemorySnapshot::Action::Alloc, address(e.segment, e.offset), e.requested, storage, step});
        break;
      case AllocatorSim::Event::Free:
        for (auto a : {MemorySnapshot::Action::FreeRequested, MemorySnapshot::Action::FreeCompleted})
          snap.trace.push_back({a, address(e.segment, e.offset), e.requested, storage, step});
        break;
      }
    }
  }
  snap.peakReservedBytes = alloc.peakReserved();
  std::vector<AllocatorSim::SegmentState> segs = alloc.segmentStates();
  for (size_t i = 0; i < segs.size(); ++i) {
    MemorySnapshot::Segment seg;
    seg.address = segmentBase[i];
    seg.totalSize = segs[i].size;
    seg.small = segs[i].small;
    seg.storage = segmentRequest[i];
    for (const AllocatorSim::BlockState &b : segs[i].blocks)
      seg.blocks.push_back({seg.address + b.offset, b.size, b.used ? b.requested : 0, b.used,
                            b.used ? static_cast<int64_t>(b.id) : -1});
    snap.segments.push_back(std::move(seg));
  }
  return snap;
}

}  // namespace graphlint
