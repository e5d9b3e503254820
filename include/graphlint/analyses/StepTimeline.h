// The training-step timeline (docs/cost-model.md "Step timeline"): forward,
// backward with the data-parallel communication schedule beside it, and the
// optimizer step, for DDP, ZeRO-1/2/3 or FSDP2 over the data-parallel ranks
// of Setup::mesh.
// From it: per-rank communication volume, exposed (non-overlapped)
// communication, the overlap ratio, the predicted step time and MFU. An
// analysis over the compute model; GL301/GL302 and the reporters read it.
#pragma once

#include "graphlint/analyses/Collectives.h"
#include "graphlint/analyses/ComputeModel.h"
#include "graphlint/analyses/MeshTraffic.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace graphlint {

/// FSDP2: per-block units (ShardingUnits) with torchtitan's mixed precision
/// (bf16 gathers, fp32 reduce-scatters); HSDP when dp_replicate > 1 too.
enum class ParallelStrategy : uint8_t { Single, DDP, ZeRO1, ZeRO2, ZeRO3, FSDP2 };
std::string_view strategyName(ParallelStrategy s);  // "single", "ddp", "zero1", ..., "fsdp2"
/// Stage 3 (ZeRO-3, FSDP2): parameters gathered per unit, no gradient buckets.
inline bool gathersUnits(ParallelStrategy s) { return s == ParallelStrategy::ZeRO3 || s == ParallelStrategy::FSDP2; }

/// PyTorch DDP's bucket sizes: the first bucket closes at 1 MiB, later ones at 25 MiB.
inline constexpr double kFirstBucketBytes = 1024.0 * 1024.0;
inline constexpr double kBucketBytes = 25 * 1024.0 * 1024.0;

/// PyTorch's compute_bucket_assignment_by_size (reducer.cpp), for tensors
/// given in the order their gradients are expected: one open bucket per
/// dtype key; a tensor joins its key's bucket, which closes once its size
/// reaches the current limit (limits advance one per closed bucket of that key,
/// staying at the last); open buckets close at the end, in order of their keys'
/// first appearance. Returns tensor indices per bucket, in creation order.
std::vector<std::vector<unsigned>> assignBuckets(const std::vector<double> &bytes, const std::vector<int> &keys,
                                                 const std::vector<double> &limits);

/// One collective call on the communication stream.
struct CollectiveCall {
  CollectiveKind kind = CollectiveKind::AllReduce;
  CollectiveAlgo algo = CollectiveAlgo::None;
  double bytes = 0;          // the buffer S
  double releaseSeconds = 0; // when it may be issued (its data is ready)
  double startSeconds = 0, endSeconds = 0;
  std::string phase;         // "forward", "backward", "after optimizer"
  unsigned ranks = 1;        // the group it runs over (dp_shard, dp_replicate)
};

/// A gradient bucket (DDP, ZeRO-1/2) or a parameter unit (ZeRO-3, FSDP2:
/// gathersUnits), in the order its collective is issued.
struct ParamBucket {
  unsigned index = 0;
  std::string name;              // a unit's block ("model.layers.3", "(root)"); "" for a bucket
  std::vector<unsigned> params;  // indices into ComputeModel::params()
  double bytes = 0;              // gradient (or parameter) bytes communicated
  double readySeconds = 0;       // last gradient of the bucket computed
  double startSeconds = 0, endSeconds = 0;  // its reduction on the stream
};

/// One compute segment of the timeline: a kernel (fusion group) of the
/// forward or of the backward, when it runs on the compute stream.
struct ComputeSegment {
  int group = -1;             // index into ComputeModel::groups(); -1: a recompute-only segment
  bool backward = false;      // a backward segment (a joint graph's backward groups too)
  double startSeconds = 0, endSeconds = 0;
};

/// Tokens in one step of `m`: batch x seq of its first integer graph input of
/// rank 2 with static dims (a language model's token ids), else nullopt.
std::optional<double> tokensPerStep(const Model &m);

class StepTimeline {
public:
  StepTimeline(const Model &m, AnalysisContext &ctx);

  /// Setup::train is set and the target is known: the timeline exists.
  bool active() const { return active_; }
  ParallelStrategy strategy() const { return strategy_; }
  /// The data-parallel group's collectives: dp_shard ranks when sharded
  /// (dp_replicate under DDP); replicaTopology() is HSDP's replicate group.
  const Topology &topology() const { return topo_; }
  const Topology &replicaTopology() const { return replicas_; }
  /// Why the requested interconnect was replaced by the default (unknown name).
  const std::vector<std::string> &notes() const { return notes_; }

  double forwardSeconds() const { return forward_; }
  double backwardSeconds() const { return backward_; }
  double optimizerSeconds() const { return optimizer_; }
  double stepSeconds() const { return step_; }
  /// Busy time of the communication stream, and the part of it no compute hides.
  double commSeconds() const { return comm_; }
  double exposedSeconds() const { return exposed_; }
  /// (T_comp ∩ T_comm) / max(T_comp, T_comm); 0 without communication.
  double overlapRatio() const { return overlap_; }
  /// Sum over collectives of the bytes this rank sends (bytesPerRank).
  double bytesPerRank() const { return bytesPerRank_; }
  /// FLOPs of the step (forward + backward, recomputation excluded) and the
  /// share of the contraction peak they reach in stepSeconds().
  double modelFlops() const { return modelFlops_; }
  double mfu() const { return mfu_; }
  /// Tokens trained per second per GPU (tokensPerStep over the step time and
  /// tp x cp x pp); nullopt when the inputs have no [batch, seq] token ids.
  std::optional<double> tokensPerSecondPerGpu() const { return tokensPerSecondPerGpu_; }
  /// Bytes per element of the gradients reduced and of the parameters
  /// gathered (FSDP2 under bf16-mixed: 4 and 2; otherwise the same).
  double commElementBytes() const { return commElement_; }
  double gatherElementBytes() const { return gatherElement_; }

  const std::vector<CollectiveCall> &collectives() const { return calls_; }
  /// The compute stream in order (the predicted step trace draws it,
  /// StepTrace.h); the optimizer step runs after the last one.
  const std::vector<ComputeSegment> &computeSegments() const { return segments_; }
  double optimizerStartSeconds() const { return optimizerStart_; }
  const std::vector<ParamBucket> &buckets() const { return buckets_; }
  /// The tp/cp/ep/pp communication (MeshTraffic.h), included in commSeconds,
  /// exposedSeconds and bytesPerRank; the pipeline's bubble in stepSeconds.
  const MeshTraffic &meshTraffic() const { return mesh_; }
  double bubbleSeconds() const { return bubble_; }

private:
  /// Adds the tp/cp/ep/pp traffic and the pipeline's bubble (MeshTraffic.h).
  void applyMeshTraffic(const Model &m, AnalysisContext &ctx);

  bool active_ = false;
  ParallelStrategy strategy_ = ParallelStrategy::Single;
  Topology topo_, replicas_;
  std::vector<std::string> notes_;
  double forward_ = 0, backward_ = 0, optimizer_ = 0, step_ = 0;
  double comm_ = 0, exposed_ = 0, overlap_ = 0, bytesPerRank_ = 0;
  double modelFlops_ = 0, mfu_ = 0, commElement_ = 4, gatherElement_ = 4;
  std::optional<double> tokensPerSecondPerGpu_;
  std::vector<CollectiveCall> calls_;
  std::vector<ParamBucket> buckets_;
  std::vector<ComputeSegment> segments_;
  double optimizerStart_ = 0;
  MeshTraffic mesh_;
  double bubble_ = 0;
};

}  // namespace graphlint
