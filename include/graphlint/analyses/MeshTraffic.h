// The communication of the model-parallel mesh dimensions in one training
// step (docs/cost-model.md "Tensor, pipeline, context and expert
// parallelism"): per dimension, which collective, on which link, how many
// bytes, how long, how much of it compute hides. tp: per tensor-parallel
// region (attention, MLP) an all-gather and a reduce-scatter of the
// sequence-sharded activation forward and backward with sequence
// parallelism, an all-reduce each way without (Korthikanti et al. 2022,
// section 4.2.2), hidden behind the matmuls only with --async-tp. cp: ring
// attention's K,V rotation, cp - 1 steps per attention layer forward, K, V
// and their gradients backward, hidden behind the attention. ep: all-to-all
// dispatch and combine per MoE layer each way. pp: one activation (forward)
// and one gradient (backward) per micro-batch per stage boundary, exposed on
// the pipeline's fill and drain. The step timeline adds the exposed part and
// the pipeline's bubble to its step time.
#pragma once

#include "graphlint/analyses/Collectives.h"
#include "graphlint/analyses/ComputeModel.h"

#include <string>
#include <vector>

namespace graphlint {

struct MeshCollective {
  std::string dim;         // "tp", "cp", "ep", "pp"
  std::string collective;  // "all_gather", "reduce_scatter", "all_reduce", "all_to_all", "send_recv"
  std::string phase;       // "forward", "backward"
  std::string link;        // the interconnect's name
  bool interNode = false;
  unsigned ranks = 1;      // the group's size
  unsigned calls = 0;
  double bytesPerCall = 0;   // the buffer S of one call (all-gather: the gathered tensor)
  double bytesPerRank = 0;   // what this rank sends, all calls
  double seconds = 0;        // all calls
  double hiddenSeconds = 0;  // the part compute hides
  std::string what;          // "the sequence-sharded activation of 64 tp regions"
};

struct MeshTraffic {
  std::vector<MeshCollective> collectives;
  /// Pipeline parallelism (pp > 1 and the graph cut into stages).
  bool pipeline = false;
  std::string schedule;
  unsigned microbatches = 1, virtualStages = 1, slowestRank = 0;
  double bubbleFraction = 0;
  double rankShare = 1;       // the slowest rank's share of the compute
  double paramShare = 1;      // its share of the trainable parameters
  std::vector<std::string> notes;

  double seconds() const;
  double hiddenSeconds() const;
  double exposedSeconds() const { return seconds() - hiddenSeconds(); }
  double bytesPerRank() const;
};

/// The mesh's tp/cp/ep/pp communication of one training step of `m`, on the
/// links of `dataParallel` (the intra- and inter-node interconnects resolved
/// by the step timeline). Empty when tp, cp, ep and pp are 1.
MeshTraffic meshTraffic(const Model &m, AnalysisContext &ctx, const Topology &dataParallel);

/// One point-to-point send of `bytes` on `link`: α + S / (bandwidth x efficiency).
double sendSeconds(double bytes, const Interconnect &link);
/// One all-to-all of a `bytes` buffer over n ranks on `link`: each rank
/// sends (n-1)/n of it in n - 1 messages: (n-1) α + (n-1)/n S / (bandwidth x efficiency).
double allToAllSeconds(double bytes, unsigned n, const Interconnect &link);

}  // namespace graphlint
