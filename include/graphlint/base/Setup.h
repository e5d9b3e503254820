// What the user states about the run: symbolic dim bindings, the fusion
// backend, the training setup and the target hardware, plus per-rule options.
// One struct, filled from the defaults, then the nearest .graphlint.yaml, then
// the command line (docs/configuration.md); read by importers, analyses and
// rules through AnalysisContext::setup().
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace graphlint {

struct HardwareProfile;
struct Interconnect;

/// Which compiler's fusion legality the planner applies (docs/fusion.md#backend-profiles):
/// TorchInductor on CUDA (`inductor`) or on the CPU (`inductor-cpu`), TensorRT,
/// ONNX Runtime's CPU or CUDA execution provider. `ort` names OrtCpu. `eager`
/// is PyTorch without a compiler: every aten op but a view is its own kernel.
enum class FusionBackend : uint8_t { Inductor, InductorCpu, TensorRT, OrtCpu, OrtCuda, Eager };
std::string_view fusionBackendName(FusionBackend b);
std::optional<FusionBackend> fusionBackendFromName(std::string_view s);
/// The accepted names, for error messages ("inductor, inductor-cpu, ...").
const char *fusionBackendChoices();

/// --optimizer: what the optimizer keeps per parameter (docs/configuration.md).
enum class Optimizer : uint8_t { SGD, Momentum, Adam, AdamW };
std::string_view optimizerName(Optimizer o);
std::optional<Optimizer> optimizerFromName(std::string_view s);

enum class DataParallel : uint8_t;

/// --precision: fp32 everywhere; fp16/bf16 mixed (16-bit compute, fp32 master
/// weights in the optimizer); pure bf16 (no fp32 copy). tf32: fp32 storage,
/// every contraction on TF32 tensor cores (allow_tf32 for cuBLAS and cuDNN,
/// NGC containers' default); plain fp32 runs convolutions in TF32 only
/// (PyTorch's defaults: cudnn.allow_tf32 True, cuda.matmul.allow_tf32 False).
enum class Precision : uint8_t { FP32, FP16Mixed, BF16Mixed, BF16, TF32 };
std::string_view precisionName(Precision p);
std::optional<Precision> precisionFromName(std::string_view s);

/// What each precision stores, per element: the one policy the memory plan
/// and the communication model both read (ZeRO paper, Rajbhandari et al.
/// 2020: mixed precision keeps 16-bit weights and gradients for compute and
/// communication, plus an fp32 master copy and fp32 moments in the
/// optimizer). fp32: 4/4/0/4; fp16-mixed, bf16-mixed: 2/2/4/4; bf16: 2/2/0/2.
struct PrecisionPolicy {
  unsigned weightBytes = 4;   // a trainable fp32 parameter as the model holds it
  unsigned gradBytes = 4;     // its gradient, in memory and on the wire (DDP, ZeRO)
  unsigned masterBytes = 0;   // the optimizer's fp32 master copy
  unsigned momentBytes = 4;   // each optimizer moment (Adam's m and v)
  bool sixteenBitActivations = false;
  /// A parameter as the forward computes with it (FSDP's param_dtype; what a
  /// stage-3 all-gather moves) and its gradient before the reduction (what
  /// the backward writes). Under ZeRO these are weightBytes and gradBytes.
  unsigned computeWeightBytes = 4;
  unsigned computeGradBytes = 4;
};
PrecisionPolicy precisionPolicy(Precision p);
/// The policy under a data-parallel strategy: FSDP2's MixedPrecisionPolicy
/// as torchtitan configures it (param_dtype bf16/fp16, reduce_dtype fp32)
/// keeps the sharded parameters in fp32 (they are the optimizer's master
/// copy: no separate one) and reduce-scatters fp32 gradients into fp32
/// shards: 4/4/0/4 per element with 16-bit compute copies. Every other
/// strategy keeps precisionPolicy(p).
PrecisionPolicy precisionPolicy(Precision p, DataParallel d);

/// --recompute: activation checkpointing. `layer` (alias `full`, as
/// Megatron's --recompute-granularity full) checkpoints each repeated layer
/// (a module path ending in an index: blocks.3, layer2.1), as wrapping each
/// block in torch.utils.checkpoint does; `sqrt` cuts the graph into about
/// sqrt(n) segments of n nodes (Chen et al. 2016). `selective-op` is
/// torchtitan's per-op selective checkpointing (every layer checkpointed,
/// the outputs of its save list kept: every other matmul, attention,
/// reduce-scatter, max); `selective-layer=N` torchtitan's layer-selective
/// one (every N-th layer checkpointed whole, the others keep everything;
/// Setup::recomputeEvery).
enum class Recompute : uint8_t { None, Layer, Sqrt, SelectiveOp, SelectiveLayer };
std::string_view recomputeName(Recompute r);
std::optional<Recompute> recomputeFromName(std::string_view s);
/// The accepted names, for error messages.
const char *recomputeChoices();

/// --float8: torchao's float8 training (Float8Linear, convert_to_float8_training)
/// with one of its recipes (torchao/float8/config.py, Float8LinearRecipeName):
/// `tensorwise` (one dynamic scale per tensor, cuBLAS's fp8 GEMM) or
/// `rowwise` (a scale per row along each GEMM's reduction axis, CUTLASS's
/// rowwise GEMM, power-of-two scales). The converted linears' three GEMMs run
/// at the fp8 peak; their operands are cast (amax + scaled cast) per GEMM
/// (docs/cost-model.md "Float8 training").
enum class Float8 : uint8_t { None, Tensorwise, Rowwise };
std::string_view float8Name(Float8 f);
std::optional<Float8> float8FromName(std::string_view s);

/// --kernels: whose PyTorch kernels the memory plan assumes where the CPU's
/// and CUDA's keep different tensors (dropout: CUDA's fused kernel a bool
/// mask, the CPU's an input-sized noise tensor).
enum class Kernels : uint8_t { Cuda, Cpu };
std::string_view kernelsName(Kernels k);
std::optional<Kernels> kernelsFromName(std::string_view s);

/// How the data-parallel ranks hold the model states, resolved once from
/// --zero/--fsdp (DeepSpeed's and FSDP1's spellings) and --dp-shard/
/// --dp-replicate (FSDP2/HSDP): plain replication (DDP), ZeRO stage 1, 2 or
/// 3 (DeepSpeed; --fsdp), or FSDP2's per-unit sharding (`fully_shard` on each
/// repeated block plus the root; HSDP when dp-replicate is also > 1).
enum class DataParallel : uint8_t { DDP, ZeRO1, ZeRO2, ZeRO3, FSDP2 };
std::string_view dataParallelName(DataParallel d);

/// The device mesh the job runs on, as torchtitan's ParallelDims states it:
/// world = dp_replicate x dp_shard x cp x tp x pp. Expert parallelism does
/// not multiply the world: as in torchtitan and Megatron-LM, the experts are
/// sharded over ranks of the dp_shard x cp group (ep divides it).
/// Resolved once by resolveMesh(); analyses read it, never the keys.
struct Mesh {
  unsigned dpReplicate = 1, dpShard = 1, tp = 1, pp = 1, cp = 1, ep = 1;
  DataParallel dataParallel = DataParallel::DDP;
  unsigned worldSize() const { return dpReplicate * dpShard * cp * tp * pp; }
  /// Ranks that hold one replica's data-parallel share (dp_replicate x dp_shard).
  unsigned dataParallelRanks() const { return dpReplicate * dpShard; }
  /// The ZeRO stage the model states are sharded at over dp_shard ranks
  /// (FSDP2 shards parameters, gradients and optimizer state: 3).
  unsigned zeroStage() const {
    switch (dataParallel) {
    case DataParallel::DDP: return 0;
    case DataParallel::ZeRO1: return 1;
    case DataParallel::ZeRO2: return 2;
    default: return 3;
    }
  }
  /// The ranks sharded model states are split over: dp_shard x cp, as
  /// torchtitan applies fully_shard over its flattened dp_shard_cp mesh
  /// (ParallelDims.fsdp_enabled: dp_shard > 1 or cp > 1): the cp ranks hold
  /// one replica's states between them too.
  unsigned shardGroup() const { return zeroStage() > 0 ? dpShard * cp : 1; }
  /// Ranks each sharded model state is split over (1 when not sharded at `stage`).
  unsigned shardsAt(unsigned stage) const { return zeroStage() >= stage && stage > 0 ? shardGroup() : 1; }
  /// "dp_shard 8 x tp 8", the degrees above 1 (or "1 rank").
  std::string describe() const;
};

/// --pp-schedule: the pipeline schedule (docs/cost-model.md "Pipeline
/// parallelism"): GPipe (all forwards, then all backwards), 1F1B
/// (PipeDream-Flush), Megatron's interleaved 1F1B over --virtual-stages
/// chunks per rank, and the zero-bubble V schedule (ZB-V, two chunks per rank).
enum class PipelineSchedule : uint8_t { GPipe, OneFOneB, Interleaved1F1B, ZBV };
std::string_view pipelineScheduleName(PipelineSchedule p);
std::optional<PipelineSchedule> pipelineScheduleFromName(std::string_view s);

/// A module's tensor-parallel style, as DTensor's parallelize_module plans
/// name them: ColwiseParallel (weight split on its output features),
/// RowwiseParallel (on its input features; the output reduced),
/// SequenceParallel (the module runs on a sequence shard: norms, dropout),
/// or replicated.
enum class TpStyle : uint8_t { Colwise, Rowwise, Sequence, Replicate };
std::string_view tpStyleName(TpStyle t);
std::optional<TpStyle> tpStyleFromName(std::string_view s);

/// Options a rule reads (thresholds), keyed by rule code then option name; the
/// values were checked against the rule's RuleInfo::options when loaded.
using RuleOptionValues = std::map<std::string, std::map<std::string, double>>;

struct Setup {
  /// --dim NAME=SIZE: binds named symbolic dims before shape completion.
  std::map<std::string, int64_t> dims;
  /// --backend: inductor (default), inductor-cpu, tensorrt, ort-cpu (alias ort), ort-cuda.
  FusionBackend backend = FusionBackend::Inductor;
  /// The backend was stated (command line, .graphlint.yaml, a launch config,
  /// check(backend=)), not defaulted: set once, where the key is applied.
  /// The fusion plan follows `backend` either way; memory and time follow
  /// the execution the user stated (compiledExecution).
  bool backendStated = false;
  /// The memory plan and the step time assume torch.compile's execution
  /// (Inductor's fused kernels, AOTAutograd's partitioner): a compiling
  /// backend was stated. Unstated, they stay eager (docs/memory.md,
  /// "Compiled execution").
  bool compiledExecution() const {
    return backendStated && (backend == FusionBackend::Inductor || backend == FusionBackend::InductorCpu);
  }
  /// --target: a hardware profile name (docs/hardware.md).
  std::string target = "H100-SXM";
  /// --kernels: cuda, the GPU the prediction is for, unless a CPU
  /// measurement is compared.
  Kernels kernels = Kernels::Cuda;

  // The training setup the memory and communication analyses assume.
  /// --train: a training step (forward, backward, optimizer) instead of inference.
  bool train = false;
  Optimizer optimizer = Optimizer::Adam;
  Precision precision = Precision::FP32;
  /// --zero 0|1|2|3 (--fsdp = 3): how model states are sharded across ranks.
  unsigned zero = 0;
  /// --world-size N as stated (0: not stated, the mesh's product). Without
  /// mesh degrees it is the data-parallel degree (dp-replicate under
  /// --zero 0, dp-shard under --zero 1..3), as before the mesh existed.
  unsigned worldSize = 0;
  /// --dp-replicate, --dp-shard, --tp, --pp, --cp, --ep as stated (0: not
  /// stated). Read through `mesh`, never directly, outside resolveMesh.
  unsigned dpReplicate = 0, dpShard = 0, tp = 0, pp = 0, cp = 0, ep = 0;
  /// dp-shard -1 (torchtitan's data_parallel_shard_degree default): the
  /// ranks the world size leaves after dp-replicate x cp x tp x pp.
  bool dpShardRest = false;
  /// The mesh the stated degrees resolve to (resolveMesh, at applySetup).
  Mesh mesh;
  /// Resolves `mesh` from the stated degrees, --world-size and --zero; the
  /// one-line reason when they disagree (a world size that is not the
  /// product, an ep that does not divide dp_shard x cp).
  std::optional<std::string> resolveMesh();
  Recompute recompute = Recompute::None;
  /// --recompute selective-layer=N: N (torchtitan's ac_freq; 2 when not stated).
  unsigned recomputeEvery = 2;
  /// --recompute as stated: "selective-layer=2", "layer", ...
  std::string recomputeLabel() const;
  /// --sequence-parallel: Megatron's sequence parallelism with tp > 1
  /// (nullopt: not stated, on when tp > 1).
  std::optional<bool> sequenceParallel;
  /// Sequence parallelism in effect: stated, else on whenever tp > 1.
  bool sequenceParallelOn() const { return mesh.tp > 1 && sequenceParallel.value_or(true); }
  /// --async-tp: the tensor-parallel collectives overlap the matmuls they feed.
  bool asyncTp = false;
  /// --float8: torchao's Float8Linear recipe (None: bf16 linears).
  Float8 float8 = Float8::None;
  /// --float8-all-gather: torchao's enable_fsdp_float8_all_gather (FSDP2
  /// gathers the converted weights cast to fp8, tensorwise only);
  /// --float8-precompute-scale: precompute_float8_dynamic_scale_for_fsdp
  /// (one amax all-reduce per step after the optimizer instead of one per
  /// weight per gather).
  bool float8AllGather = false;
  bool float8PrecomputeScale = false;
  /// The fp8 all-gather in effect: tensorwise, asked for, and FSDP2 sharding
  /// over dp-shard > 1 (torchtitan turns it off without dp_shard, as here,
  /// even where cp > 1 shards the states: its dp_shard_enabled test).
  bool float8GathersFp8() const {
    return float8 == Float8::Tensorwise && float8AllGather && mesh.dataParallel == DataParallel::FSDP2 &&
           mesh.dpShard > 1;
  }
  /// Why the float8 keys cannot run on this setup (rowwise with the fp8
  /// all-gather, a target without fp8 tensor cores), or nullopt.
  std::optional<std::string> checkFloat8() const;
  /// --tp-plan GLOB=STYLE (tp-plan: mapping in YAML): module-path globs, in
  /// the order given, before the default plan of the model's family.
  std::vector<std::pair<std::string, TpStyle>> tpPlan;
  /// --pp-schedule, --microbatches (0: not stated, pp), --virtual-stages
  /// (0: not stated; interleaved 2, zbv 2, others 1).
  PipelineSchedule ppSchedule = PipelineSchedule::OneFOneB;
  unsigned microbatches = 0, virtualStages = 0;
  unsigned microbatchCount() const { return microbatches ? microbatches : mesh.pp; }
  unsigned virtualStageCount() const {
    if (ppSchedule == PipelineSchedule::ZBV)
      return 2;
    if (ppSchedule != PipelineSchedule::Interleaved1F1B)
      return 1;
    return virtualStages ? virtualStages : 2;
  }
  /// --pp-split-points: the module each stage after the first starts at
  /// ("layers.8,layers.16"); empty: balanced by predicted time.
  std::vector<std::string> ppSplitPoints;
  /// --capacity-factor: tokens an expert takes, over an even share (MoE).
  double capacityFactor = 1.0;
  /// --gpus-per-node G: ranks that share the intra-node interconnect.
  unsigned gpusPerNode = 8;
  /// --intra / --inter: interconnect names (docs/hardware.md); empty = the
  /// target's default.
  std::string intra;
  std::string inter;

  /// What `target`, `intra` and `inter` name, resolved once when the
  /// configuration is resolved (applySetup): the profile, and the link each
  /// level of the topology runs on (the named interconnect, else the
  /// profile's default). Analyses and rules read these through
  /// targetProfile() and nodeLink(), never the names. Null: not resolved
  /// yet, or nothing to resolve to.
  const HardwareProfile *hardware = nullptr;
  const Interconnect *intraLink = nullptr;
  const Interconnect *interLink = nullptr;
  /// Fills the three pointers from the names (HardwareCatalog::instance()).
  void resolveHardware();
  /// The resolved profile; a Setup built in code and never resolved (a test,
  /// a changed target) resolves `target` here. nullptr: unknown target.
  const HardwareProfile *targetProfile() const;
  /// Which level of the topology a collective crosses.
  enum class LinkLevel : uint8_t { IntraNode, InterNode };
  /// The link of `level`: the resolved one, or (a Setup built or changed in
  /// code) the named interconnect, else the target's default. When a name
  /// is not in the catalog (the configuration refuses such names; code can
  /// set one) it sets `unknown` to it and returns the default. nullptr: no
  /// target profile, or its default link is not in the catalog either.
  const Interconnect *nodeLink(LinkLevel level, std::string *unknown = nullptr) const;

  /// Per-rule options (thresholds) as the merged configuration states them,
  /// by name: merged layer by layer and printed by `config --dump`. A rule
  /// reads its own typed, through ruleOptions<R>(ctx) (Rule.h), which fills
  /// the rule's options struct from here once per model.
  RuleOptionValues ruleOptions;
  /// The value of a rule's option, or `fallback` (the rule's documented
  /// default) when the configuration does not set it.
  double ruleOption(std::string_view code, std::string_view option, double fallback) const;
};

}  // namespace graphlint
