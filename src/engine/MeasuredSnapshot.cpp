// Reads a measured torch memory snapshot (torch.cuda.memory._dump_snapshot's
// pickle, or graphlint's --emit-memory-snapshot) into a MeasuredRun's memory
// figures: the device trace replayed from the bytes held when recording
// began (the final blocks and segments less what the trace added) gives the
// peak allocated and reserved, and what was live at that peak with the
// frame that allocated it.
#include "graphlint/engine/RunComparison.h"

#include "PickleReader.h"

#include <llvm/Support/MemoryBuffer.h>

#include <algorithm>
#include <map>

namespace graphlint {

namespace {

// "file.py:12:forward": the first frame with a source line, else the first
// frame's name.
std::string frameText(const PyValue *frames) {
  if (!frames || frames->items.empty())
    return "";
  for (const auto &f : frames->items) {
    const PyValue *file = f->get("filename"), *line = f->get("line"), *name = f->get("name");
    if (file && line && line->asInt() > 0 && file->s.find(".py") != std::string::npos) {
      std::string base = llvm::StringRef(file->s).rsplit('/').second.str();
      return (base.empty() ? file->s : base) + ":" + std::to_string(line->asInt()) + ":" + (name ? name->s : "");
    }
  }
  const PyValue *name = frames->items.front()->get("name");
  return name ? name->s : "";
}

}  // namespace

llvm::Error readMeasuredSnapshot(const std::string &path, MeasuredRun &run) {
  auto fail = [&](const std::string &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s: %s", path.c_str(), why.c_str());
  };
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buf)
    return fail(buf.getError().message());
  auto root = readPickle((*buf)->getBuffer());
  if (!root)
    return fail(llvm::toString(root.takeError()));
  const PyValue *segments = (*root)->get("segments"), *traces = (*root)->get("device_traces");
  if (!segments || !traces || segments->kind != PyValue::Kind::List || traces->kind != PyValue::Kind::List)
    return fail("no segments and device_traces: not a torch memory snapshot");
  // The device with the longest trace.
  const PyValue *trace = nullptr;
  for (const auto &t : traces->items)
    if (!trace || t->items.size() > trace->items.size())
      trace = t.get();
  int64_t allocated = 0, reserved = 0;
  for (const auto &seg : segments->items) {
    if (const PyValue *size = seg->get("total_size"))
      reserved += size->asInt();
    if (const PyValue *blocks = seg->get("blocks"))
      for (const auto &b : blocks->items) {
        const PyValue *state = b->get("state"), *req = b->get("requested_size"), *size = b->get("size");
        if (state && state->s == "active_allocated")
          allocated += (req ? req : size) ? (req ? req : size)->asInt() : 0;
      }
  }
  // Back to the start of the recording.
  if (trace)
    for (const auto &e : trace->items) {
      const PyValue *action = e->get("action"), *size = e->get("size");
      if (!action || !size)
        continue;
      if (action->s == "alloc")
        allocated -= size->asInt();
      else if (action->s == "free_completed")
        allocated += size->asInt();
      else if (action->s == "segment_alloc")
        reserved -= size->asInt();
      else if (action->s == "segment_free")
        reserved += size->asInt();
    }
  allocated = std::max<int64_t>(allocated, 0);
  reserved = std::max<int64_t>(reserved, 0);
  int64_t peakAllocated = allocated, peakReserved = reserved;
  std::map<int64_t, std::pair<int64_t, const PyValue *>> live, liveAtPeak;
  if (trace)
    for (const auto &e : trace->items) {
      const PyValue *action = e->get("action"), *size = e->get("size"), *addr = e->get("addr");
      if (!action || !size)
        continue;
      if (action->s == "alloc") {
        allocated += size->asInt();
        if (addr)
          live[addr->asInt()] = {size->asInt(), e->get("frames")};
        if (allocated > peakAllocated) {
          peakAllocated = allocated;
          liveAtPeak = live;
        }
      } else if (action->s == "free_completed") {
        allocated -= size->asInt();
        if (addr)
          live.erase(addr->asInt());
      } else if (action->s == "segment_alloc") {
        reserved += size->asInt();
        peakReserved = std::max(peakReserved, reserved);
      } else if (action->s == "segment_free") {
        reserved -= size->asInt();
      }
    }
  run.hasMemory = true;
  run.memoryDevice = "cuda (snapshot)";
  run.memoryRelative = false;
  run.peakAllocated = static_cast<uint64_t>(peakAllocated);
  run.peakReserved = static_cast<uint64_t>(peakReserved);
  run.atPeak.clear();
  for (const auto &[addr, a] : liveAtPeak)
    run.atPeak.push_back({static_cast<uint64_t>(a.first), frameText(a.second)});
  std::sort(run.atPeak.begin(), run.atPeak.end(), [](const MeasuredRun::Allocation &a, const MeasuredRun::Allocation &b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.op < b.op;
  });
  if (run.atPeak.size() > 10)
    run.atPeak.resize(10);
  return llvm::Error::success();
}

}  // namespace graphlint
