// `--emit-memory-snapshot FILE.pickle` (docs/viewers.md): the predicted
// memory snapshot as the dict torch.cuda.memory._snapshot() returns, pickled
// (protocol 2) with plain Python types, so that pytorch.org/memory_viz and
// torch.cuda._memory_viz read it as they read a real run's.
#include "graphlint/report/Pickle.h"
#include "graphlint/report/Reporters.h"

namespace graphlint {

namespace {

std::string_view actionName(MemorySnapshot::Action a) {
  switch (a) {
  case MemorySnapshot::Action::SegmentAlloc: return "segment_alloc";
  case MemorySnapshot::Action::Alloc: return "alloc";
  case MemorySnapshot::Action::FreeRequested: return "free_requested";
  case MemorySnapshot::Action::FreeCompleted: return "free_completed";
  }
  return "?";
}

void writeFrames(PickleWriter &w, const std::vector<MemorySnapshot::Frame> &frames) {
  w.beginList();
  for (const MemorySnapshot::Frame &f : frames) {
    w.beginDict();
    w.key("filename");
    w.str(f.filename);
    w.key("line");
    w.integer(f.line);
    w.key("name");
    w.str(f.name);
    w.end();
  }
  w.end();
}

void writeSegment(PickleWriter &w, const MemorySnapshot &s, const MemorySnapshot::Segment &seg) {
  uint64_t allocated = 0, requested = 0;
  for (const MemorySnapshot::Block &b : seg.blocks)
    if (b.allocated) {
      allocated += b.size;
      requested += b.requestedSize;
    }
  w.beginDict();
  w.key("device");
  w.integer(0);
  w.key("address");
  w.unsignedInteger(seg.address);
  w.key("total_size");
  w.unsignedInteger(seg.totalSize);
  w.key("allocated_size");
  w.unsignedInteger(allocated);
  w.key("active_size");
  w.unsignedInteger(allocated);
  w.key("requested_size");
  w.unsignedInteger(requested);
  w.key("stream");
  w.integer(0);
  w.key("segment_type");
  w.str(seg.small ? "small" : "large");
  w.key("segment_pool_id");
  w.beginTuple();
  w.integer(0);
  w.integer(0);
  w.end();
  w.key("is_expandable");
  w.boolean(false);
  w.key("frames");
  writeFrames(w, s.storages[seg.storage].frames);
  w.key("blocks");
  w.beginList();
  for (const MemorySnapshot::Block &b : seg.blocks) {
    w.beginDict();
    w.key("address");
    w.unsignedInteger(b.address);
    w.key("size");
    w.unsignedInteger(b.size);
    w.key("requested_size");
    w.unsignedInteger(b.requestedSize);
    w.key("state");
    w.str(b.allocated ? "active_allocated" : "inactive");
    w.key("frames");
    if (b.allocated)
      writeFrames(w, s.storages[b.storage].frames);
    else
      writeFrames(w, {});
    if (b.allocated) {
      w.key("category");
      w.str(s.storages[b.storage].category);
    }
    w.end();
  }
  w.end();
  w.end();
}

}  // namespace

void renderMemorySnapshot(const MemorySnapshot &s, llvm::raw_ostream &os) {
  PickleWriter w(os);
  w.beginDict();
  w.key("segments");
  w.beginList();
  for (const MemorySnapshot::Segment &seg : s.segments)
    writeSegment(w, s, seg);
  w.end();
  w.key("device_traces");
  w.beginList();
  w.beginList();
  for (const MemorySnapshot::TraceEntry &e : s.trace) {
    const MemorySnapshot::Storage &st = s.storages[e.storage];
    w.beginDict();
    w.key("action");
    w.str(actionName(e.action));
    w.key("addr");
    w.unsignedInteger(e.addr);
    w.key("size");
    w.unsignedInteger(e.size);
    w.key("stream");
    w.integer(0);
    w.key("time_us");
    w.unsignedInteger(e.timeUs);
    w.key("frames");
    writeFrames(w, st.frames);
    // A segment holds no one tensor: "unknown". MemoryViz.js (pytorch.org/memory_viz)
    // needs that name among a snapshot's categories: its annotate_snapshot adds it
    // otherwise through a misspelt field (snapshot.categores) and throws, drawing
    // nothing (tests/viewers/memory_viz_chromium_test.py).
    w.key("category");
    w.str(e.action == MemorySnapshot::Action::SegmentAlloc ? "unknown" : st.category);
    w.end();
  }
  w.end();
  w.end();
  w.key("allocator_settings");
  w.beginDict();
  w.key("PYTORCH_CUDA_ALLOC_CONF");
  w.str("");
  w.end();
  // Not torch's: where the numbers come from, for a reader of the pickle.
  w.key("graphlint");
  w.beginDict();
  w.key("predicted");
  w.boolean(true);
  w.key("peak_allocated_bytes");
  w.unsignedInteger(s.peakAllocatedBytes);
  w.key("peak_reserved_bytes");
  w.unsignedInteger(s.peakReservedBytes);
  w.key("caveats");
  w.beginList();
  for (const std::string &c : s.caveats)
    w.str(c);
  w.end();
  w.end();
  w.end();
  w.finish();
}

}  // namespace graphlint
