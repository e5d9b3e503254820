// Pipeline parallelism on the captured graph (docs/cost-model.md "Pipeline
// parallelism"): the repeated layers cut into pp x V chunks (balanced by
// predicted time, or at the user's --pp-split-points), the rank each chunk
// runs on, the schedule's in-flight micro-batches per rank, its bubble, and
// the activations sent between consecutive chunks. The closed forms are
// pure functions; PipelinePlan applies them to one model. The memory plan
// turns it into per-stage memory (memory.stages[]), the step timeline into
// the bubble and the point-to-point sends.
#pragma once

#include "graphlint/analyses/Analysis.h"

#include <string>
#include <vector>

namespace graphlint {

/// Micro-batches of activations rank `rank` (0 = first) holds at its peak,
/// in units of the activations its whole share of the model saves for one
/// micro-batch. GPipe: all N. 1F1B (Narayanan et al. 2021, PipeDream-Flush):
/// min(N, pp - rank). Interleaved 1F1B over V chunks (Megatron-LM's warm-up
/// of (pp - rank - 1) x 2 + (V - 1) x pp chunk-micro-batches, plus the one in
/// hand): min(N V, that + 1) / V; the first rank's pp (1 + (pp - 1)/(pp V))
/// of Korthikanti et al. 2022, section 4.2.3. ZB-V (Qi et al. 2024): min(N, pp)
/// on every rank, the memory of 1F1B's first stage.
double inFlightMicrobatches(PipelineSchedule s, unsigned pp, unsigned microbatches, unsigned virtualStages,
                           unsigned rank);

/// The bubble over the ideal time (the time with no pipeline): (pp - 1)/N
/// for GPipe and 1F1B, (pp - 1)/(V N) interleaved (Narayanan et al. 2021,
/// section 2.2); ZB-V (pp - 1)(tF + tB - 2 tW) / (N (tF + tB + tW)) with tB
/// and tW the backward's input- and weight-gradient halves (Qi et al. 2024,
/// table 2: the bubble of ZB-H2, which ZB-V reaches at 1F1B's memory), 0
/// when the weight gradients fill it.
double bubbleFraction(PipelineSchedule s, unsigned pp, unsigned microbatches, unsigned virtualStages,
                      double forwardSeconds = 1, double backwardSeconds = 2);

/// The rank chunk `chunk` of pp x V runs on: c mod pp (interleaved: rank r
/// holds chunks r, r + pp, ...), the V shape for ZB-V (r and 2pp - 1 - r).
unsigned chunkRank(PipelineSchedule s, unsigned pp, unsigned chunk);

/// Cuts `costs` (in order) into `parts` contiguous runs minimising the
/// largest run's sum; returns the index each run after the first starts at.
std::vector<unsigned> balancedCuts(const std::vector<double> &costs, unsigned parts);

struct PipelineChunk {
  std::string firstModule, lastModule;  // the layers it runs ("" outside any)
  double seconds = 0;                   // predicted forward + backward, one device's batch
  double paramElements = 0;             // trainable elements it holds
  double sendBytes = 0;                 // activation it sends to the next chunk, per step (all micro-batches)
};

class PipelinePlan {
public:
  PipelinePlan(const Model &m, AnalysisContext &ctx);

  /// pp > 1 and the graph has repeated layers to cut.
  bool active() const { return active_; }
  unsigned pp() const { return pp_; }
  unsigned microbatches() const { return microbatches_; }
  unsigned virtualStages() const { return virtual_; }
  PipelineSchedule schedule() const { return schedule_; }
  const std::vector<PipelineChunk> &chunks() const { return chunks_; }
  /// The chunk node `index` of the main graph runs in (a joint graph's
  /// backward node: the chunk of what it differentiates; else its layer's).
  unsigned chunkOfNode(unsigned index) const { return index < nodeChunk_.size() ? nodeChunk_[index] : 0; }
  unsigned rankOfChunk(unsigned c) const { return chunkRank(schedule_, pp_, c); }
  /// The rank with the most predicted compute, and its share of the total.
  unsigned slowestRank() const { return slowest_; }
  double rankShare(unsigned rank) const;
  double paramShare(unsigned rank) const;
  double bubble() const { return bubble_; }
  double inFlight(unsigned rank) const {
    return inFlightMicrobatches(schedule_, pp_, microbatches_, virtual_, rank);
  }
  /// Bytes rank `rank` sends forward per micro-batch (activations at its
  /// chunks' ends; the backward sends their gradients, as many bytes).
  double sendBytesPerMicrobatch(unsigned rank) const;
  /// Why the cut is what it is ("--pp-split-points layers.4 is no module: ...").
  const std::vector<std::string> &notes() const { return notes_; }

  /// The cut: what no schedule and no micro-batch count changes, only the
  /// number of chunks (pp x V), the split points, the predicted times and
  /// the sharding. Computed once per context, or once per SharedFacts for
  /// the candidates of one mesh (Analysis.h).
  struct Cut {
    bool active = false;
    std::vector<PipelineChunk> chunks;
    std::vector<unsigned> nodeChunk;
    std::vector<std::string> notes;
    double totalSeconds = 0, totalParams = 0, forwardSeconds = 0, backwardSeconds = 0;
  };

private:
  /// A field of the chunks rank `rank` runs, summed.
  double rankSum(unsigned rank, double PipelineChunk::*field) const;

  bool active_ = false;
  unsigned pp_ = 1, microbatches_ = 1, virtual_ = 1, slowest_ = 0;
  PipelineSchedule schedule_ = PipelineSchedule::OneFOneB;
  double bubble_ = 0, totalSeconds_ = 0, totalParams_ = 0;
  std::vector<PipelineChunk> chunks_;
  std::vector<unsigned> nodeChunk_;
  std::vector<std::string> notes_;
};

}  // namespace graphlint
