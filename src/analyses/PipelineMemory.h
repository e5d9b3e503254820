// Per-stage memory under pipeline parallelism (docs/memory.md "Pipeline
// stages"): the memory plan's trace of the whole graph, split by the chunk
// each storage's producer runs in. Private to src/analyses: MemoryPlan.cpp
// calls it.
#pragma once

#include "MemoryTrace.h"

#include "graphlint/analyses/PipelineSchedule.h"

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

/// The stages of `plan` from the trace `t` of the whole graph (one device's
/// batch) and its summary `sum` (model states, peaks): per rank, its share of
/// the model states, the activations its chunks hold at the end of the
/// forward over the micro-batches, times the schedule's in-flight
/// micro-batches, plus one micro-batch's share of the step's transient
/// buffers, plus what `held` keeps unsharded; reserved in the whole graph's
/// reserved/allocated ratio.
std::vector<MemorySummary::Stage> pipelineStages(const Trace &t, const MemorySummary &sum, const PipelinePlan &plan,
                                                 HeldAcrossMicrobatches held = {});

}  // namespace graphlint::memory
