// The compute model: FLOPs and bytes of every fusion group (a kernel, or a few),
// forward and backward, and the time each takes on the target GPU -- a
// roofline with efficiency factors plus launch overhead (docs/cost-model.md).
// It also lists the trainable parameters and where in the schedule each is
// first read, for the communication model. GL142 reads the kernel times,
// the step timeline (StepTimeline.h) the totals.
#pragma once

#include "graphlint/analyses/FusionPlan.h"
#include "graphlint/base/HardwareProfile.h"
#include "graphlint/analyses/Provenance.h"

#include <optional>
#include <string>
#include <vector>

namespace graphlint {

/// One fusion group in one direction (forward or backward).
struct KernelTime {
  double flops = 0;        // every FLOP
  double matmulFlops = 0;  // the contractions' share (tensor-core work)
  /// The share of `matmulFlops` fused attention kernels run (isAttentionKernel),
  /// timed at the profile's attention efficiency instead of the GEMMs'.
  double attentionFlops = 0;
  double bytes = 0;        // inputs read + outputs written once each
  /// The share of `bytes` that NCHW <-> NHWC transforms around a tensor-core
  /// convolution move: kernels of their own, run before and after it.
  double layoutBytes = 0;
  /// The share of `bytes` other memory-bound kernels of their own move, run
  /// after the group's: the training batch norm the dynamo ONNX exporter
  /// fused into a Conv (eager still runs it: fusedBatchNormOutput).
  double serialBytes = 0;
  unsigned kernels = 0;    // launches
  /// The GPU's time: max((matmul - attention) / (peak * eta_c) + attention /
  /// (peak * eta_attn) + rest / (fp32 peak * eta_c),
  /// (bytes - layoutBytes - serialBytes) / (bandwidth * eta_m)) +
  /// (layoutBytes + serialBytes) / (bandwidth * eta_m).
  double gpuSeconds = 0;
  /// What the stream spends: the GPU time, or the launches when the host
  /// cannot issue kernels faster than they finish.
  double seconds = 0;
};

struct GroupCost {
  const FusionGroup *group = nullptr;
  /// Every tensor it touches has a static size and every op a FLOP formula.
  bool known = false;
  MathPrecision precision = MathPrecision::FP32;  // its contractions' math
  KernelTime forward, backward;  // backward is zero unless training
  double recomputedFlops = 0;     // --recompute: the forward FLOPs backward runs again
  /// --recompute: the forward run again, included in `backward` (its time
  /// added to the backward's own, as kernels of their own); zero otherwise.
  KernelTime recompute;
  /// --float8: the amax and cast kernels around the group's fp8 GEMMs
  /// (Float8Linears.h), timed as memory-bound kernels of their own and
  /// included in `forward` and `backward`.
  KernelTime float8Forward, float8Backward;
};

/// A parameter the optimizer updates: a floating-point initializer read by
/// a differentiable operand (not BatchNormalization's running statistics).
struct TrainableParam {
  const Value *value = nullptr;
  double elements = 0;
  unsigned order = 0;        // position among the trainable parameters (initializer order)
  int firstGroup = -1;       // index into schedule() of its first reader; -1 when none
  /// Joint graphs: index into schedule() of the backward group that produces
  /// its gradient (a graph output of the backward phase); -1 when unknown.
  int gradGroup = -1;
};

class ComputeModel {
public:
  ComputeModel(const Model &m, AnalysisContext &ctx);
  /// The setup values it reads, with the fusion plan's, float8's and the
  /// recompute segments' (Analysis.h, SharedFacts): not the mesh.
  static std::string sharedKey(const Setup &s);

  /// The target's profile; null when Setup::target names no profile (then
  /// every time is zero and only FLOPs and bytes are meaningful).
  const HardwareProfile *hardware() const { return hw_; }
  /// The math most of the contraction FLOPs run in (CapturePrecision: the
  /// graph's dtypes, --precision where the capture recorded none; fp32
  /// convolutions in TF32 by PyTorch's default).
  MathPrecision matmulPrecision() const { return matmulPrecision_; }
  /// MFU's denominator over the step time: the model FLOPs (recomputation
  /// excluded) each at the dense peak of the math it runs in -- the
  /// contractions at their precision's (the fp32 peak where the target
  /// lacks it, as timeKernel runs them), everything else at the fastest of
  /// those. No group is timed faster than this, so MFU <= 100%.
  double peakSeconds() const { return peakSeconds_; }
  /// One entry per FusionPlan group, same index.
  const std::vector<GroupCost> &groups() const { return groups_; }
  /// Indices into groups() of the main graph's kernels (and control-flow
  /// nodes, of unknown cost) in execution order; backward runs them in reverse.
  const std::vector<unsigned> &schedule() const { return schedule_; }
  /// A joint graph (graphlint-export --train) under --train: its backward
  /// nodes are costed as the backward (GroupCost::backward) and nothing is
  /// synthesised. schedule() then lists the forward groups, then from
  /// backwardStart() on the backward groups, both in execution order.
  bool joint() const { return joint_; }
  size_t backwardStart() const { return backwardStart_; }
  const std::vector<TrainableParam> &params() const { return params_; }
  double paramElements() const { return paramElements_; }

  /// Main-graph totals over the known groups (control-flow bodies excluded).
  KernelTime forwardTotal() const { return forward_; }
  KernelTime backwardTotal() const { return backward_; }
  /// --recompute: the forward FLOPs the backward total includes again.
  double recomputedFlops() const { return recomputedFlops_; }
  /// --float8: the converted linears' GEMM FLOPs (run at the fp8 peak) and
  /// their cast kernels, forward and backward (included in the totals).
  double fp8MatmulFlopsForward() const { return fp8Forward_; }
  double fp8MatmulFlopsBackward() const { return fp8Backward_; }
  KernelTime float8CastsForward() const { return float8CastsForward_; }
  KernelTime float8CastsBackward() const { return float8CastsBackward_; }
  /// Main-graph kernels whose cost is unknown (left out of the totals).
  unsigned unknownGroups() const { return unknownGroups_; }
  /// Too many unknown kernels (Provenance.h): the totals are lower bounds.
  bool lowerBound() const { return isLowerBound(unknownGroups_, schedule_.size()); }

private:
  const HardwareProfile *hw_ = nullptr;
  MathPrecision matmulPrecision_ = MathPrecision::FP32;
  double peakSeconds_ = 0;
  std::vector<GroupCost> groups_;
  std::vector<unsigned> schedule_;
  std::vector<TrainableParam> params_;
  double paramElements_ = 0;
  KernelTime forward_, backward_;
  unsigned unknownGroups_ = 0;
  double recomputedFlops_ = 0;
  double fp8Forward_ = 0, fp8Backward_ = 0;
  KernelTime float8CastsForward_, float8CastsBackward_;
  bool joint_ = false;
  size_t backwardStart_ = 0;
};

/// The roofline of one kernel on `hw` (efficiency factors applied); fills
/// gpuSeconds and seconds from flops, matmulFlops, bytes and kernels.
void timeKernel(KernelTime &k, const HardwareProfile &hw, MathPrecision matmul);

/// How a fusion group's predicted time is split over its nodes, one share
/// per node of `g.nodes` (same order): evenly over the nodes that run a
/// kernel, none for the views and shape ops in it; evenly over all of them
/// when none runs a kernel. `graphlint compare` (per aten op) and
/// `--emit-model-explorer` (per node) split a fused group's time this way.
std::vector<double> kernelShares(const FusionGroup &g);

}  // namespace graphlint
