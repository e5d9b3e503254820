// Per-stage memory under pipeline parallelism (docs/memory.md "Pipeline
// stages"): the memory plan's trace of the whole graph, split by the chunk
// each storage's producer runs in. Private to src/analyses: MemoryPlan.cpp
// calls it.
#pragma once

#include "MemoryTrace.h"

#include "graphlint/analyses/PipelineSchedule.h"

#include <llvm/ADT/SmallVector.h>

namespace graphlint::memory {

/// FSDP2 under a pipeline schedule keeps a stage's parameters gathered and
/// its gradients unsharded across micro-batches: torchtitan does not reshard
/// after forward when pp > 1 (its default fsdp_reshard_after_forward), and
/// torch.distributed.pipelining runs every backward but the last with
/// set_requires_gradient_sync(False) and set_reshard_after_backward(False),
/// FSDP2 accumulating the unsharded gradient in its reduce dtype. Bytes held
/// per byte of the stage's sharded parameters / sharded gradients (0: none).
struct HeldAcrossMicrobatches {
  double paramsPerShardedByte = 0;
  double gradsPerShardedByte = 0;
};

/// What the whole graph's trace holds when its forward ends, the part of the
/// stages that no pipeline setting reads: the activations and saved tensors
/// live there, in storage order, each with the nodes whose chunks decide its
/// stage, and the graph inputs. One per trace, shared by the candidates of
/// one mesh that differ in schedule and micro-batches (MemoryPlan.cpp).
struct ForwardEndHeld {
  struct Held {
    uint64_t bytes = 0;
    /// Its producer (or owner), then its forward readers, by node index; the
    /// storage belongs to the last chunk among them (chunk 0 without any).
    llvm::SmallVector<unsigned, 3> nodes;
  };
  std::vector<Held> held;
  double inputBytes = 0;
};
ForwardEndHeld forwardEndHeld(const Trace &t);

/// The stages of `plan` from what the trace of the whole graph (one device's
/// batch) holds at the end of its forward and its summary `sum` (model
/// states, peaks): per rank, its share of the model states, the activations
/// its chunks hold at the end of the forward over the micro-batches, times
/// the schedule's in-flight micro-batches, plus one micro-batch's share of the
/// step's transient buffers, plus what `held` keeps unsharded; reserved in
/// the whole graph's reserved/allocated ratio.
std::vector<MemorySummary::Stage> pipelineStages(const ForwardEndHeld &f, const MemorySummary &sum,
                                                 const PipelinePlan &plan, HeldAcrossMicrobatches held = {});

}  // namespace graphlint::memory
