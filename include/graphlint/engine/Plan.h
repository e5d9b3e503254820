// `graphlint plan` (docs/plan.md): which setup to launch, found from the
// user's own graph. The space is every device mesh (dp_replicate, dp_shard,
// tp, pp, cp, ep) that divides the model (heads, layers, experts) and the
// topology (tp within a node), per-rank batch and micro-batches that keep
// the global batch, pipeline schedules, recompute policies, float8 where the
// target has fp8 tensor cores and the execution backend, on each target GPU
// and GPU count asked for. Each candidate is evaluated exactly as lint
// evaluates one setup (its settings applied through the setup-key table, an
// AnalysisContext over the model imported at its per-rank batch, the
// MemoryPlan, then the StepTimeline), so `graphlint MODEL <its flags>`
// prints the same peak and step time. Memory comes first: a candidate that
// does not fit is never timed. Candidates are evaluated in parallel; one
// imported Model is shared read-only by every candidate of its batch.
#pragma once

#include "graphlint/base/Setup.h"
#include "graphlint/base/SetupKeys.h"

#include <llvm/Support/Error.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace graphlint {

class Model;

/// What `plan` ranks by: time (largest cluster throughput, tokens/s over all
/// GPUs), cost (lowest $ per million tokens) or tokens-per-dollar (the same
/// order as cost, the score shown as tokens per dollar).
enum class PlanObjective : uint8_t { Time, Cost, TokensPerDollar };
std::string_view planObjectiveName(PlanObjective o);
std::optional<PlanObjective> planObjectiveFromName(std::string_view s);

/// One point of the space: the keys of the JSON contract's `setup`.
struct PlanSetup {
  unsigned dpReplicate = 1, dpShard = 1, tp = 1, pp = 1, cp = 1, ep = 1;
  /// Samples per data-parallel rank: what `-D batch=` binds.
  unsigned batch = 1;
  /// Micro-batches per step (1 without pipeline parallelism).
  unsigned microbatches = 1;
  PipelineSchedule ppSchedule = PipelineSchedule::OneFOneB;
  Recompute recompute = Recompute::None;
  unsigned recomputeEvery = 2;  // selective-layer=N
  Float8 float8 = Float8::None;
  FusionBackend backend = FusionBackend::Inductor;
  std::string target;  // the profile's canonical name
  unsigned gpus = 1;

  /// "dp_shard 8 x tp 2, batch 4, 1f1b x8, selective-op, rowwise, inductor".
  std::string describe() const;
};

/// The JSON contract's keys, in its order, and what `--fix KEY=VALUE` names.
const std::vector<std::string_view> &planSetupKeys();
/// `key` of `p` as the JSON contract spells its value ("1f1b", "selective-op").
std::string planSetupValue(const PlanSetup &p, std::string_view key);

/// The setup values (SetupKeys.h rows, canonical form) that make `p` out of
/// a base setup: target, world size, the mesh degrees, pipeline schedule and
/// micro-batches, recompute, float8, backend and `dims batch=N`. lint's flags
/// for the candidate are these rows' flags (planLintFlags).
std::vector<SetupSetting> planSettings(const PlanSetup &p);
/// The base setup with `p` applied, as lint resolves the same flags; the
/// one-line reason when the setup-key checks refuse it.
llvm::Expected<Setup> planSetupOver(const Setup &base, const PlanSetup &p);
/// The command-line flags lint takes for `p` ("--target H100-SXM --world-size
/// 8 --dp-shard 8 ... -D batch=4"), every enumerated key stated.
std::vector<std::string> planLintFlags(const PlanSetup &p);

/// A torchrun command line and a torchtitan job-config TOML that launch `p`
/// (the inverse of the torchtitan mapping of LaunchConfig.cpp: reading the
/// TOML back with --launch-config gives `p`'s settings).
struct PlanLaunch {
  std::string torchrun;
  std::string toml;
};
PlanLaunch planLaunch(const PlanSetup &p, const Setup &base);

/// What `plan` was asked. `base` is the resolved configuration of the model
/// (its .graphlint.yaml and the command line's setup flags: --train,
/// --precision, --optimizer, -D seq=...); the enumerated keys of each
/// candidate replace its values.
struct PlanRequest {
  Setup base;
  /// Canonical profile names; empty: base.target.
  std::vector<std::string> targets;
  /// World sizes to consider; empty: base.gpusPerNode (one node).
  std::vector<unsigned> gpus;
  /// A target's own GPU counts (`--target L4:16`), instead of `gpus`.
  std::map<std::string, std::vector<unsigned>> gpusOf;
  /// The global batch in samples, or in tokens (divided by the tokens of one
  /// sample); neither: one sample per GPU at the largest GPU count.
  std::optional<uint64_t> globalBatchSamples, globalBatchTokens;
  /// --fix KEY=VALUE, checked by checkPlanFix.
  std::vector<std::pair<std::string, std::string>> fixed;
  PlanObjective objective = PlanObjective::Cost;
  /// Threads evaluating candidates (0: the hardware's).
  unsigned jobs = 0;
  /// The symbol that is the per-rank batch (`-D batch=`).
  std::string batchSymbol = "batch";
  /// Candidates of one model share its setup-independent facts (SharedFacts,
  /// Analysis.h); false: each computes its own, as a lint does (a test
  /// checks that the two give the same numbers).
  bool shareFacts = true;
  /// Called after each evaluated candidate, serialised: done, total.
  std::function<void(size_t, size_t)> progress;
};

/// `--fix KEY=VALUE`: the one-line reason it is refused (an unknown key,
/// a value the key cannot take), or nullopt; `value` is made canonical.
std::optional<std::string> checkPlanFix(const std::string &key, std::string &value);

struct PlanCandidate {
  PlanSetup setup;
  bool fits = false;
  /// Why it does not fit: the stage, the phase and node at the peak, and the
  /// largest tensor live there.
  std::string reason;
  uint64_t peakReservedBytes = 0;
  /// What the memory plan cannot see (CUDA context, cuBLAS/cuDNN workspaces,
  /// NCCL buffers: GL201's context-mib and nccl-mib), added before comparing
  /// with the capacity.
  double marginBytes = 0;
  double capacityBytes = 0;
  /// Timed (fitting candidates only).
  bool timed = false;
  double stepTimeS = 0, tokensPerSecondPerGpu = 0, mfu = 0;
  double exposedCommS = 0, commS = 0, bubbleS = 0;
  double computeS = 0;  // the rest of the step: step - exposed communication - bubble
  std::optional<double> usdPerGpuHour, usdPerMillionTokens;
  /// The objective's figure: larger is better (a negative cost for cost).
  double score = 0;
};

struct PlanModelFacts {
  unsigned layers = 0;         // repeated blocks (checkpointLayers)
  unsigned heads = 0, kvHeads = 0;  // from the attention calls; 0 unknown
  unsigned experts = 0;        // per MoE layer; 0 dense
  double tokensPerSample = 0;  // of the [batch, seq] token ids
  int64_t seq = 0;             // the token ids' second dim
};

struct PlanResult {
  /// Fitting candidates by score, best first; then those that do not fit,
  /// by peak reserved over capacity.
  std::vector<PlanCandidate> candidates;
  size_t evaluated = 0, fitting = 0, timed = 0;
  uint64_t globalBatchSamples = 0;
  PlanModelFacts facts;
  PlanObjective objective = PlanObjective::Cost;
  double contextBytes = 0, ncclBytes = 0;
  /// Why the runner-up lost, one line (empty with fewer than two fitting).
  std::string runnerUp;
  /// How to launch the top pick (when one fits).
  std::optional<PlanLaunch> launch;
  /// Assumptions and limits of the space, one line each.
  std::vector<std::string> notes;
  /// Distinct per-rank batches imported, and wall seconds spent.
  unsigned imports = 0;
  double importSeconds = 0, evaluateSeconds = 0;
};

/// Enumerates, evaluates and ranks. Errors (no such file, not a model, no
/// batch symbol, a --fix that leaves no candidate) are one line.
llvm::Expected<PlanResult> runPlan(const std::string &modelPath, const PlanRequest &req);

/// The memory-vs-throughput Pareto front of the fitting candidates: indices
/// into `r.candidates`, by increasing peak reserved, each with a higher
/// tokens/s/GPU than every one before it.
std::vector<size_t> paretoFront(const PlanResult &r);

}  // namespace graphlint
