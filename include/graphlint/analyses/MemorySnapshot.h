// The predicted memory snapshot: the memory plan's alloc/free trace replayed
// through AllocatorSim, recorded as torch.cuda.memory._snapshot() records a
// real run (segments with their blocks at the end of the step, and the
// device trace of segment_alloc / alloc / free_requested / free_completed
// entries), each allocation with its category and the user's source line.
// Plain data, taken by the driver while the model is alive and written by
// `--emit-memory-snapshot` (src/report/MemorySnapshotPickle.cpp). Since it is
// the plan's own replay, replaying its trace gives the plan's peak allocated
// and its segments the peak reserved (docs/viewers.md).
#pragma once

#include "graphlint/analyses/MemoryPlan.h"

#include <cstdint>
#include <string>
#include <vector>

namespace graphlint {

struct MemorySnapshot {
  /// A Python frame as torch records it (innermost first in a stack).
  struct Frame {
    std::string filename;
    unsigned line = 0;
    std::string name;
  };
  /// One storage of the plan: what torch's memory profiler would call it
  /// (parameter, gradient, optimizer_state, input, activation, temporary)
  /// and the frames of the code that allocated it.
  struct Storage {
    std::string category;
    std::vector<Frame> frames;
  };
  enum class Action : uint8_t { SegmentAlloc, Alloc, FreeRequested, FreeCompleted };
  struct TraceEntry {
    Action action;
    uint64_t addr = 0;
    uint64_t size = 0;       // alloc/free: the bytes asked for; segment_alloc: the segment's
    uint32_t storage = 0;    // index into storages (segment_alloc: the request that made it)
    uint64_t timeUs = 0;     // the step's ordinal: the plan has no clock
  };
  struct Block {
    uint64_t address = 0, size = 0, requestedSize = 0;
    bool allocated = false;
    int64_t storage = -1;    // allocated blocks: index into storages
  };
  struct Segment {
    uint64_t address = 0, totalSize = 0;
    bool small = false;
    uint32_t storage = 0;    // the request that made it (index into storages)
    std::vector<Block> blocks;
  };

  bool present = false;
  /// The first segment's address: a made-up device address, so that the
  /// numbers look like pointers and never collide with 0.
  static constexpr uint64_t kBaseAddress = 0x7f0000000000ULL;
  std::vector<Storage> storages;
  std::vector<TraceEntry> trace;
  std::vector<Segment> segments;
  /// The replay's figures (MemorySummary::peakAllocatedBytes / peakReservedBytes
  /// unless the summary is a pipeline stage's).
  uint64_t peakAllocatedBytes = 0, peakReservedBytes = 0;
  /// What the snapshot cannot show, one sentence each.
  std::vector<std::string> caveats;
};

/// torch's memory-profiler category of a MemoryKind, as an index into
/// MemorySummary::kCategoryNames: saved tensors are activations, activation
/// gradients and op temporaries temporaries.
unsigned memoryCategoryOf(MemoryKind k);
/// Its name ("parameter", ..., "temporary").
std::string_view snapshotCategory(MemoryKind k);

/// The snapshot of the context's model under its setup (not present for a
/// model without a graph).
MemorySnapshot memorySnapshotOf(AnalysisContext &ctx);

}  // namespace graphlint
