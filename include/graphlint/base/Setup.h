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
};
PrecisionPolicy precisionPolicy(Precision p);

/// --recompute: activation checkpointing. `layer` (alias `full`, as
/// Megatron's --recompute-granularity full) checkpoints each repeated layer
/// (a module path ending in an index: blocks.3, layer2.1), as wrapping each
/// block in torch.utils.checkpoint does; `sqrt` cuts the graph into about
/// sqrt(n) segments of n nodes (Chen et al. 2016).
enum class Recompute : uint8_t { None, Layer, Sqrt };
std::string_view recomputeName(Recompute r);
std::optional<Recompute> recomputeFromName(std::string_view s);
/// The accepted names, for error messages.
const char *recomputeChoices();

/// --kernels: whose PyTorch kernels the memory plan assumes where the CPU's
/// and CUDA's keep different tensors (dropout: CUDA's fused kernel a bool
/// mask, the CPU's an input-sized noise tensor).
enum class Kernels : uint8_t { Cuda, Cpu };
std::string_view kernelsName(Kernels k);
std::optional<Kernels> kernelsFromName(std::string_view s);

/// Options a rule reads (thresholds), keyed by rule code then option name; the
/// values were checked against the rule's RuleInfo::options when loaded.
using RuleOptionValues = std::map<std::string, std::map<std::string, double>>;

struct Setup {
  /// --dim NAME=SIZE: binds named symbolic dims before shape completion.
  std::map<std::string, int64_t> dims;
  /// --backend: inductor (default), inductor-cpu, tensorrt, ort-cpu (alias ort), ort-cuda.
  FusionBackend backend = FusionBackend::Inductor;
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
  /// --world-size N: data-parallel ranks.
  unsigned worldSize = 1;
  Recompute recompute = Recompute::None;
  /// --gpus-per-node G: ranks that share the intra-node interconnect.
  unsigned gpusPerNode = 8;
  /// --intra / --inter: interconnect names (docs/hardware.md); empty = the
  /// target's default.
  std::string intra;
  std::string inter;

  /// What `target`, `intra` and `inter` name, resolved once when the
  /// configuration is resolved (applySetup); analyses read these, never the
  /// names. Null: not resolved yet, or an empty/unknown interconnect name (the
  /// target's default link then applies).
  const HardwareProfile *hardware = nullptr;
  const Interconnect *intraLink = nullptr;
  const Interconnect *interLink = nullptr;
  /// Fills the three pointers from the names (HardwareCatalog::instance()).
  void resolveHardware();
  /// The resolved profile; a Setup built in code and never resolved (a test,
  /// a changed target) resolves `target` here. nullptr: unknown target.
  const HardwareProfile *targetProfile() const;

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
