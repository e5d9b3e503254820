// A plain-data copy of a model's compute model and step timeline, taken by the
// driver while the model is alive and carried in the FileReport to the
// reporters: the JSON `compute` and `communication` sections and the `--cost`
// text table render this, never the analyses (docs/output-formats.md).
#pragma once

#include "graphlint/analyses/MeshTraffic.h"
#include "graphlint/analyses/Provenance.h"

#include <optional>
#include <string>
#include <vector>

namespace graphlint {

class Model;
class AnalysisContext;

struct CostSummary {
  struct Group {
    unsigned id = 0;             // FusionGroup id
    std::string kind;            // groupKindName
    std::string node;            // its first node's label
    unsigned kernels = 0;
    bool known = false;          // every size static, every op with a formula
    double flopsForward = 0, flopsBackward = 0;
    double bytesForward = 0, bytesBackward = 0;
    double secondsForward = 0, secondsBackward = 0;
  };
  struct Collective {            // one kind of call, summed
    std::string kind;            // all_reduce, reduce_scatter, all_gather
    std::string algorithm;       // of the largest call
    std::string phase;           // forward, backward, after optimizer
    double bytes = 0;            // sum of the buffers
    unsigned count = 0;
    double seconds = 0;
  };
  struct Bucket {
    unsigned index = 0;
    unsigned params = 0;
    double bytes = 0;
    double ready = 0, start = 0, end = 0;
  };

  bool present = false;          // false for fatal files or when not requested
  std::string target;            // hardware profile ("" when unknown)
  std::string precision;         // --precision
  std::string matmulMath;        // fp32, bf16, ...
  bool train = false;
  double params = 0;             // trainable parameter elements
  double flopsForward = 0, flopsBackward = 0;
  double matmulFlopsForward = 0, matmulFlopsBackward = 0;
  double bytesForward = 0, bytesBackward = 0;
  double secondsForward = 0, secondsBackward = 0;
  unsigned kernelsForward = 0, kernelsBackward = 0;
  unsigned unknownGroups = 0;
  unsigned scheduledGroups = 0;  // main-graph kernels (and control-flow nodes) in the schedule
  /// More than a few percent of the kernels have unknown cost (Provenance.h):
  /// times and FLOPs are lower bounds.
  bool lowerBound() const { return isLowerBound(unknownGroups, scheduledGroups); }
  std::vector<Group> groups;     // main-graph kernels in execution order

  /// --float8 (Float8Linears.h): the converted linears, their fp8 GEMM FLOPs
  /// and their amax/cast kernels (included in the totals above).
  struct Float8 {
    bool present = false;
    std::string recipe;
    unsigned converted = 0;
    std::vector<std::pair<std::string, std::string>> skipped;  // module, why
    double fp8FlopsForward = 0, fp8FlopsBackward = 0;
    double castBytesForward = 0, castBytesBackward = 0;
    unsigned castKernelsForward = 0, castKernelsBackward = 0;
    double castSecondsForward = 0, castSecondsBackward = 0;
    bool allGather = false;      // converted weights all-gathered in fp8
    double weightElements = 0;   // the converted weights' elements
  } float8;

  struct Communication {
    bool present = false;        // a training step was modelled
    std::string strategy;        // single, ddp, zero1, zero2, zero3, fsdp2
    unsigned worldSize = 1, gpusPerNode = 8;
    std::string intra, inter;    // interconnect names
    double elementBytes = 4;
    double bytesPerRank = 0;
    std::vector<Collective> collectives;
    std::vector<Bucket> buckets;  // DDP and ZeRO-1/2 gradient buckets
    /// ZeRO-3/FSDP2 units (a block's module path, "(root)"), each gathered
    /// and reduce-scattered: the same fields, `bytes` what is reduced.
    struct Unit : Bucket {
      std::string name;
    };
    std::vector<Unit> units;
    double commSeconds = 0, exposedSeconds = 0, overlapRatio = 0;
    double forwardSeconds = 0, backwardSeconds = 0, optimizerSeconds = 0, stepSeconds = 0;
    double modelFlops = 0, mfu = 0;
    std::optional<double> tokensPerSecondPerGpu;  // with [batch, seq] token-id inputs
    /// The tp/cp/ep/pp collectives (MeshTraffic.h), in commSeconds and
    /// exposedSeconds; the pipeline's bubble in stepSeconds.
    MeshTraffic mesh;
    double bubbleSeconds = 0;
    std::vector<std::string> notes;
  } communication;
};

/// Copies the model's ComputeModel and StepTimeline (computing them in `ctx`
/// if no rule did) into plain data.
CostSummary summariseCost(const Model &m, AnalysisContext &ctx);

}  // namespace graphlint
