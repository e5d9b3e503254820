// A plain-data copy of a model's MemoryPlan (docs/memory.md), taken by the
// driver while the model is alive and carried in the FileReport to the
// reporters: the JSON `memory` section, the `--memory` text table and the
// `--memory-plot` SVG chart render this, never the plan or the model.
#pragma once

#include "graphlint/analyses/Provenance.h"
#include "graphlint/base/Setup.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace graphlint {

struct MemorySummary {
  /// What a storage holds, in the categories of torch's memory profiler (the
  /// snapshot's `category`, the stacked --memory-plot): memoryCategoryOf
  /// (MemorySnapshot.h) maps each MemoryKind to one.
  static constexpr size_t kCategories = 6;
  static constexpr const char *kCategoryNames[kCategories] = {"parameter", "gradient", "optimizer_state",
                                                              "input",     "activation", "temporary"};
  /// One point of the timeline: the bytes allocated while a step runs (its
  /// own peak), a step being one node of the forward pass, one node's
  /// backward, or the optimizer step.
  struct Point {
    std::string node;             // node label; "optimizer.step" for the optimizer
    std::string phase;            // "forward", "backward", "optimizer"
    uint64_t liveBytes = 0;
    /// liveBytes by category (kCategoryNames), at the step's own peak.
    std::array<uint64_t, kCategories> categoryBytes{};
  };
  /// One storage live at the peak.
  struct Contributor {
    std::string tensor;           // value name ("" for synthetic buffers)
    std::string node;             // producer label, or "" for params/inputs
    std::string kind;             // memoryKindName
    unsigned category = 0;        // index into kCategoryNames
    uint64_t bytes = 0;
  };

  bool present = false;           // false for fatal files or when not requested
  std::string mode;               // "inference" or "training"
  /// The execution the figures assume (docs/memory.md "Compiled execution"):
  /// "compiled" (torch.compile with Inductor: a stated --backend inductor or
  /// inductor-cpu) or "eager"; `executionStated`: the backend was stated.
  std::string execution = "eager";
  bool executionStated = false;
  /// Compiled: tensors (and their bytes) Inductor's fused kernels never
  /// materialise, and tensors eager saves for backward that AOTAutograd's
  /// partitioner recomputes instead. Views are not counted.
  uint64_t fusedAwayTensors = 0, fusedAwayBytes = 0;
  uint64_t recomputedTensors = 0, recomputedBytes = 0;
  // The setup the prediction assumes.
  std::string optimizer, precision, recompute, target;
  std::string float8 = "none";    // --float8
  bool float8AllGather = false;   // the fp8 all-gather in effect (Setup::float8GathersFp8)
  bool float8PrecomputeScale = false;
  unsigned zero = 0, worldSize = 1;  // the effective ZeRO stage (FSDP2: 3); all ranks
  Mesh mesh;                          // the resolved device mesh

  uint64_t paramsBytes = 0;       // per rank, after ZeRO-3 sharding; registered buffers apart
  uint64_t buffersBytes = 0;      // registered buffers (norm running stats, masks): resident, never trained
  uint64_t gradsBytes = 0;        // per rank (0 in inference)
  uint64_t optimizerBytes = 0;    // per rank: moments and fp32 master weights
  uint64_t inputsBytes = 0;       // graph inputs
  uint64_t activationsBytes = 0;  // training: saved for backward at the start of
                                  // backward; inference: peak live activations
  uint64_t peakAllocatedBytes = 0;
  uint64_t peakReservedBytes = 0; // the caching-allocator replay
  uint64_t allocatorPeakAllocatedBytes = 0;  // same replay, 512 B-rounded blocks
  uint64_t segments = 0;          // segments the replay reserved at its end
  /// Free bytes cached, and the largest free block, as the replay grew to its
  /// peak reserved (AllocatorSim::freeAtPeak).
  uint64_t allocatorFreeAtPeakBytes = 0;
  uint64_t allocatorLargestFreeAtPeakBytes = 0;
  /// Segment bytes reserved only because free blocks were split too small.
  uint64_t fragmentedGrowthBytes = 0;
  std::string peakNode;
  std::string peakPhase;
  double capacityBytes = 0;       // the target's memory, 0 when unknown
  /// At most kMaxTimelinePoints points: on larger graphs consecutive steps of
  /// one phase are merged into one point, the step with the most live bytes
  /// (so the peak is always a point). timelineSteps counts the steps.
  std::vector<Point> timeline;
  uint64_t timelineSteps = 0;
  static constexpr size_t kMaxTimelinePoints = 2000;
  std::vector<Contributor> topAtPeak;  // largest first, at most 10
  /// Sizes the user did not bind: "seq=128" from the exporter's hint, then
  /// "batch=1" for symbols with neither -D nor a hint (taken as 1).
  std::vector<std::string> assumedDims;
  /// What the figures cannot include, one sentence each: helper functions
  /// whose Python locals a non-strict torch.export's traces do not show.
  std::vector<std::string> caveats;
  uint64_t unsizedTensors = 0;    // tensors whose size is unknown (counted as 0)
  uint64_t tensors = 0;           // tensors the plan sized (main graph values and params)
  /// Tensors larger than kMaxTensorBytes (CheckedMath.h), or whose size
  /// overflows 64 bits: each is counted as kMaxTensorBytes, never wrapped.
  uint64_t saturatedTensors = 0;
  /// More than a few percent of the tensors have no size (Provenance.h):
  /// every figure is a lower bound (reporters say so; GL201 says "at least").
  bool lowerBound() const { return isLowerBound(unsizedTensors, tensors); }

  /// One pipeline rank (pp > 1, training; JSON memory.stages[]): its share
  /// of the model states, the activations its chunks save per micro-batch
  /// times the schedule's in-flight micro-batches, and its peak. The worst
  /// rank's figures are the summary's (peakReservedBytes is its peak).
  struct Stage {
    unsigned rank = 0;
    std::string firstModule, lastModule;  // the first chunk's first layer, the last chunk's last
    uint64_t paramsBytes = 0, buffersBytes = 0, gradsBytes = 0, optimizerBytes = 0;
    /// FSDP2 under the schedule: parameters kept gathered and gradients kept
    /// unsharded across micro-batches (PipelineMemory.h).
    uint64_t gatheredParamsBytes = 0, unshardedGradsBytes = 0;
    uint64_t activationsPerMicrobatch = 0;
    double inFlightMicrobatches = 0;
    uint64_t activationsBytes = 0;
    uint64_t peakAllocatedBytes = 0, peakReservedBytes = 0;
  };
  std::vector<Stage> stages;
  unsigned worstStage = 0;            // index into stages
  std::string ppSchedule;             // "1f1b", ... (pp > 1)
  unsigned microbatches = 1, virtualStages = 1;
  /// The tensor-parallel plan (tp > 1): "llama (default)", "user", "none".
  std::string tpPlan;
  bool sequenceParallel = false;

  /// The usual definition: 1 - largest free block / free bytes, over the
  /// blocks the allocator held as it grew to its peak reserved. 0 when
  /// nothing was free (each segment was needed whole).
  double fragmentation() const;
  /// Reserved bytes never allocated at once: peak reserved - peak allocated
  /// in 512 B blocks (segment rounding, small-pool slack, fragmentation).
  uint64_t reservedOverheadBytes() const;
  /// reservedOverheadBytes() / peak reserved.
  double reservedOverhead() const;
};

}  // namespace graphlint
