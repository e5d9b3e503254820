// Per-stage memory under pipeline parallelism (docs/memory.md "Pipeline
// stages"): the memory plan's trace of the whole graph, split by the chunk
// each storage's producer runs in. Private to src/analyses: MemoryPlan.cpp
// calls it.
#pragma once

#include "MemoryTrace.h"

#include "graphlint/analyses/PipelineSchedule.h"

namespace graphlint::memory {

/// The stages of `plan` from the trace `t` of the whole graph (one device's
/// batch) and its summary `sum` (model states, peaks): per rank, its share of
/// the model states, the activations its chunks hold at the end of the
/// forward over the micro-batches, times the schedule's in-flight
/// micro-batches, plus one micro-batch's share of the step's transient
/// buffers; reserved in the whole graph's reserved/allocated ratio.
std::vector<MemorySummary::Stage> pipelineStages(const Trace &t, const MemorySummary &sum, const PipelinePlan &plan);

}  // namespace graphlint::memory
