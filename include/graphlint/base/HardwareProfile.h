// Hardware profiles: what the cost analyses need to know about a target GPU
// (memory capacity and bandwidth, dense peak throughput per math precision,
// kernel launch overhead, SM count). The built-in table is data/hardware.yaml,
// embedded in the binary at build time (one source: the binary works anywhere
// and says what the shipped file says); users point GRAPHLINT_HARDWARE_FILE at
// their own file (same schema) to override entries and add new ones.
// docs/hardware.md lists the values and their datasheet sources. Interconnects
// (NVLink, PCIe, InfiniBand) are a second table in the same catalog and file,
// read by the communication model (docs/cost-model.md). Add fields with
// defaults, never repurpose one.
#pragma once

#include "graphlint/ir/DType.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace graphlint {

/// The math a kernel runs in, as datasheets list peak throughput. TF32 is the
/// tensor-core mode fp32 matmuls and convolutions use on Ampere and later.
enum class MathPrecision : uint8_t { FP64, FP32, TF32, FP16, BF16, FP8, INT8 };
inline constexpr unsigned kNumMathPrecisions = 7;
std::string_view mathPrecisionName(MathPrecision p);  // "fp32", "tf32", ...
std::optional<MathPrecision> mathPrecisionFromName(std::string_view s);

/// The precision a contraction on tensors of dtype `t` runs in, ignoring TF32
/// (fp32 maps to FP32: TF32 use is a framework setting). nullopt for types no
/// GPU math unit consumes directly (strings, bools, 4-bit types).
std::optional<MathPrecision> mathPrecisionOf(DType t);

struct HardwareProfile {
  std::string name;                   // canonical: "H100-SXM"
  std::vector<std::string> aliases;   // case-insensitive: "h100", "h100-sxm5"
  std::string description;            // "NVIDIA H100 SXM5 80GB"
  std::string architecture;           // "hopper"
  unsigned computeCapability = 0;     // 90 for sm_90
  unsigned smCount = 0;
  double memoryBytes = 0;             // device memory (datasheet capacity, GiB-based)
  double memoryBandwidth = 0;         // bytes/s (datasheet peak, 1e9-based GB/s)
  double launchOverhead = 4e-6;       // seconds per kernel launch from the host
  /// Dense (no structured sparsity) peak FLOP/s (OP/s for int8); 0 = the
  /// precision has no hardware support worth using (e.g. bf16/tf32 on V100).
  std::array<double, kNumMathPrecisions> peak{};
  std::string source;                 // where the numbers come from
  /// Share of the datasheet peaks real kernels reach (docs/cost-model.md):
  /// contractions (cuBLAS/cuDNN at training sizes) and memory-bound kernels.
  /// computeEfficiency: CUDA-core math (fp32, fp64); tensorCoreEfficiency:
  /// tensor-core contractions (tf32, fp16, bf16, fp8, int8), calibrated on
  /// published training throughput (docs/validation.md "Step time").
  double computeEfficiency = 0.7;
  double tensorCoreEfficiency = 0.5;
  double memoryEfficiency = 0.8;
  /// Share of the tensor-core peak fused attention kernels (FlashAttention-
  /// style SDPA, forward and backward) reach: they sustain less of it than a
  /// GEMM (softmax and rescaling between the two matmuls). Set only where a
  /// published kernel benchmark measured it (docs/hardware.md); unset, the
  /// profile's tensorCoreEfficiency.
  std::optional<double> attentionEfficiency;
  /// The efficiency a contraction in precision p reaches.
  double efficiencyFor(MathPrecision p) const {
    return p == MathPrecision::FP32 || p == MathPrecision::FP64 ? computeEfficiency : tensorCoreEfficiency;
  }
  /// The efficiency a fused attention kernel in precision p reaches: the
  /// measured attention share on tensor cores, computeEfficiency on CUDA cores
  /// (the measurements are of tensor-core kernels).
  double attentionEfficiencyFor(MathPrecision p) const {
    return p == MathPrecision::FP32 || p == MathPrecision::FP64 ? computeEfficiency
                                                                 : attentionEfficiency.value_or(tensorCoreEfficiency);
  }
  /// The interconnects a multi-GPU job on this part uses by default (names in
  /// the interconnect table): inside a node, and between nodes per GPU.
  std::string intraNode = "pcie4";
  std::string interNode = "hdr";
  /// What one GPU costs per hour on demand, in US dollars (`graphlint plan`'s
  /// cost objective; docs/hardware.md names the public price list each
  /// built-in value is from). Unset: no price known, the cost is not ranked.
  std::optional<double> usdPerGpuHour;

  double peakFor(MathPrecision p) const { return peak[static_cast<unsigned>(p)]; }
  bool supports(MathPrecision p) const { return peakFor(p) > 0; }
  /// fp32 matmuls/convs may run on tensor cores in TF32 (Ampere and later).
  bool supportsTf32() const { return supports(MathPrecision::TF32); }
};

/// A link between GPUs as the α-β collective model sees it (docs/hardware.md):
/// per GPU and per direction. The bus bandwidth a transfer reaches grows with
/// its size, busBW(c) = bandwidth * efficiency * c / (c + halfBandwidthBytes),
/// for c the bytes one step of the collective moves; every step also pays
/// `latency` (α).
struct Interconnect {
  std::string name;                   // canonical: "nvlink4"
  std::vector<std::string> aliases;   // "nvlink-4", "h100-nvlink"
  std::string description;
  double bandwidth = 0;               // bytes/s per GPU per direction (datasheet)
  double efficiency = 0.8;            // share of `bandwidth` large messages reach
  double latency = 5e-6;              // seconds per step (α)
  double halfBandwidthBytes = 65536;  // step size reaching half the bus bandwidth
  std::string source;

  /// Bus bandwidth (bytes/s) for a step moving `chunkBytes`.
  double busBandwidth(double chunkBytes) const;
};

/// The set of known profiles: built-ins, then the data file overriding them by
/// name and adding new ones. Immutable once built.
class HardwareCatalog {
public:
  /// Built-ins only: the embedded data/hardware.yaml.
  static HardwareCatalog builtin();
  /// Built-ins plus the file GRAPHLINT_HARDWARE_FILE names, if any
  /// (docs/hardware.md). Loaded once.
  static const HardwareCatalog &instance();
  /// Makes instance() ignore GRAPHLINT_HARDWARE_FILE (graphlint --isolated);
  /// only effective before instance()'s first call.
  static void ignoreEnvironment();

  /// Case-insensitive lookup by name or alias; nullptr when unknown.
  const HardwareProfile *find(std::string_view nameOrAlias) const;
  const std::vector<HardwareProfile> &profiles() const { return profiles_; }
  /// Adds or replaces (by canonical name, case-insensitive) profiles.
  void merge(std::vector<HardwareProfile> more);
  /// Interconnects (NVLink, PCIe, InfiniBand): case-insensitive name or alias.
  const Interconnect *findInterconnect(std::string_view nameOrAlias) const;
  const std::vector<Interconnect> &interconnects() const { return interconnects_; }
  void mergeInterconnects(std::vector<Interconnect> more);
  /// The file that was merged into instance(), empty if none.
  const std::string &dataFile() const { return dataFile_; }
  /// Why the data file was ignored (unreadable, malformed), empty if it was not.
  const std::string &loadError() const { return loadError_; }

private:
  std::vector<HardwareProfile> profiles_;
  std::vector<Interconnect> interconnects_;
  std::string dataFile_;
  std::string loadError_;
};

/// Parses the hardware.yaml schema (docs/hardware.md). `bufferName` names the
/// file in error messages.
llvm::Expected<std::vector<HardwareProfile>> parseHardwareYaml(llvm::StringRef text, llvm::StringRef bufferName);
/// The `interconnects:` list of the same file (empty when it has none).
llvm::Expected<std::vector<Interconnect>> parseInterconnectYaml(llvm::StringRef text, llvm::StringRef bufferName);

/// The profile Setup::target names (looked up in HardwareCatalog::instance()),
/// or an error listing the known names.
llvm::Expected<const HardwareProfile &> resolveHardwareTarget(std::string_view target);
/// The interconnect a --intra/--inter name (or alias) names, or an error
/// listing the known names.
llvm::Expected<const Interconnect &> resolveInterconnect(std::string_view name);

/// Roofline-lite kernel time (seconds), the placeholder until the cost model
/// lands: max(flops / peak, bytes / bandwidth) at the datasheet peaks, no
/// efficiency factors and no launch overhead. A precision the target lacks
/// falls back to its FP32 rate.
double rooflineSeconds(const HardwareProfile &hw, double flops, MathPrecision p, double bytes);

}  // namespace graphlint
