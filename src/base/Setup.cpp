#include "graphlint/base/Setup.h"

#include "graphlint/base/EnumNames.h"
#include "graphlint/base/HardwareProfile.h"

#include <fmt/format.h>

namespace graphlint {

namespace {

const EnumName<Optimizer> kOptimizers[] = {
    {Optimizer::SGD, "sgd"}, {Optimizer::Momentum, "momentum"}, {Optimizer::Adam, "adam"}, {Optimizer::AdamW, "adamw"}};
const EnumName<Precision> kPrecisions[] = {{Precision::FP32, "fp32"},
                                           {Precision::FP16Mixed, "fp16-mixed"},
                                           {Precision::BF16Mixed, "bf16-mixed"},
                                           {Precision::BF16, "bf16"},
                                           {Precision::TF32, "tf32"}};
// `full` as Megatron's --recompute-granularity full.
const EnumName<Recompute> kRecomputes[] = {
    {Recompute::None, "none"},
    {Recompute::Layer, "layer", {"full"}},
    {Recompute::Sqrt, "sqrt"},
    {Recompute::SelectiveOp, "selective-op"},
    {Recompute::SelectiveLayer, "selective-layer"}};

const EnumName<Float8> kFloat8s[] = {{Float8::None, "none"}, {Float8::Tensorwise, "tensorwise"}, {Float8::Rowwise, "rowwise"}};

const EnumName<Kernels> kKernels[] = {{Kernels::Cuda, "cuda"}, {Kernels::Cpu, "cpu"}};

const EnumName<PipelineSchedule> kSchedules[] = {{PipelineSchedule::GPipe, "gpipe"},
                                                 {PipelineSchedule::OneFOneB, "1f1b"},
                                                 {PipelineSchedule::Interleaved1F1B, "interleaved-1f1b"},
                                                 {PipelineSchedule::ZBV, "zbv"}};
const EnumName<TpStyle> kTpStyles[] = {{TpStyle::Colwise, "colwise"},
                                       {TpStyle::Rowwise, "rowwise"},
                                       {TpStyle::Sequence, "sequence"},
                                       {TpStyle::Replicate, "replicate"}};

}  // namespace

std::string_view optimizerName(Optimizer o) { return nameOf(kOptimizers, o); }
std::optional<Optimizer> optimizerFromName(std::string_view s) { return fromName(kOptimizers, s); }
std::string_view precisionName(Precision p) { return nameOf(kPrecisions, p); }
std::optional<Precision> precisionFromName(std::string_view s) { return fromName(kPrecisions, s); }

PrecisionPolicy precisionPolicy(Precision p) {
  switch (p) {
  case Precision::FP32:
  case Precision::TF32: return {4, 4, 0, 4, false, 4, 4};
  case Precision::FP16Mixed:
  case Precision::BF16Mixed: return {2, 2, 4, 4, true, 2, 2};
  case Precision::BF16: return {2, 2, 0, 2, true, 2, 2};
  }
  return {};
}

PrecisionPolicy precisionPolicy(Precision p, DataParallel d) {
  PrecisionPolicy pp = precisionPolicy(p);
  if (d == DataParallel::FSDP2 && (p == Precision::FP16Mixed || p == Precision::BF16Mixed))
    return {4, 4, 0, 4, true, 2, 2};
  return pp;
}

std::string_view recomputeName(Recompute r) { return nameOf(kRecomputes, r); }
std::optional<Recompute> recomputeFromName(std::string_view s) { return fromName(kRecomputes, s); }

const char *recomputeChoices() { return "none, layer (alias full), sqrt, selective-op, selective-layer=N"; }

std::string Setup::recomputeLabel() const {
  if (recompute == Recompute::SelectiveLayer)
    return fmt::format("selective-layer={}", recomputeEvery);
  return std::string(recomputeName(recompute));
}

std::string_view pipelineScheduleName(PipelineSchedule p) { return nameOf(kSchedules, p); }
std::optional<PipelineSchedule> pipelineScheduleFromName(std::string_view s) { return fromName(kSchedules, s); }
std::string_view tpStyleName(TpStyle t) { return nameOf(kTpStyles, t); }
std::optional<TpStyle> tpStyleFromName(std::string_view s) { return fromName(kTpStyles, s); }

std::string_view kernelsName(Kernels k) { return nameOf(kKernels, k); }
std::optional<Kernels> kernelsFromName(std::string_view s) { return fromName(kKernels, s); }

std::string_view dataParallelName(DataParallel d) {
  switch (d) {
  case DataParallel::DDP: return "DDP";
  case DataParallel::ZeRO1: return "ZeRO-1";
  case DataParallel::ZeRO2: return "ZeRO-2";
  case DataParallel::ZeRO3: return "ZeRO-3";
  case DataParallel::FSDP2: return "FSDP2";
  }
  return "DDP";
}

std::string Mesh::describe() const {
  std::string out;
  for (auto [name, n] : {std::pair{"dp_replicate", dpReplicate}, {"dp_shard", dpShard}, {"cp", cp}, {"tp", tp},
                         {"pp", pp}, {"ep", ep}})
    if (n > 1)
      out += fmt::format("{}{} {}", out.empty() ? "" : " x ", name, n);
  return out.empty() ? "1 rank" : out;
}

std::optional<std::string> Setup::resolveMesh() {
  auto given = [](unsigned n) { return n ? n : 1u; };
  Mesh m;
  m.tp = given(tp);
  m.pp = given(pp);
  m.cp = given(cp);
  m.ep = given(ep);
  unsigned model = m.tp * m.pp * m.cp;
  bool dpStated = dpReplicate || dpShard || dpShardRest;
  if (dpShardRest) {
    if (!worldSize)
      return std::string("dp-shard -1 (the rest of the ranks) needs the world size: --world-size, or --nnodes and "
                         "--nproc-per-node");
    unsigned other = model * given(dpReplicate);
    if (worldSize % other)
      return fmt::format("dp-shard -1: world-size {} is not a multiple of dp-replicate x tp x pp x cp = {}", worldSize,
                         other);
    m.dpReplicate = given(dpReplicate);
    m.dpShard = worldSize / other;
  } else if (dpStated) {
    m.dpReplicate = given(dpReplicate);
    m.dpShard = given(dpShard);
  } else if (worldSize) {
    // --world-size alone (or with tp/pp/cp): the rest of the ranks are data
    // parallel, sharded under --zero 1..3 (DeepSpeed, FSDP1), replicated under 0.
    unsigned world = worldSize;
    if (world % model)
      return fmt::format("world-size {} is not a multiple of tp x pp x cp = {}", world, model);
    (zero ? m.dpShard : m.dpReplicate) = world / model;
  }
  if (worldSize && worldSize != m.worldSize())
    return fmt::format("world-size {} disagrees with the device mesh: {} = {} ranks", worldSize,
                       Mesh{m}.describe(), m.worldSize());
  if ((m.dpShard * m.cp) % m.ep)
    return fmt::format("ep {} must divide dp-shard x cp = {} (the experts are sharded over those ranks)", m.ep,
                       m.dpShard * m.cp);
  // --zero names DeepSpeed's stage over the dp-shard x cp ranks; dp-shard
  // > 1 or cp > 1 without it is FSDP2 (fully_shard over torchtitan's
  // dp_shard_cp mesh), HSDP with dp-replicate > 1.
  m.dataParallel = zero == 1   ? DataParallel::ZeRO1
                   : zero == 2 ? DataParallel::ZeRO2
                   : zero == 3 ? DataParallel::ZeRO3
                   : m.dpShard * m.cp > 1 ? DataParallel::FSDP2
                                          : DataParallel::DDP;
  if (ppSchedule == PipelineSchedule::Interleaved1F1B && m.pp > 1 && microbatches && microbatches % m.pp)
    return fmt::format("interleaved-1f1b needs microbatches a multiple of pp {}, got {} (Megatron-LM's rule)", m.pp,
                       microbatches);
  mesh = m;
  if (m.pp > 1 && !ppSplitPoints.empty() && ppSplitPoints.size() + 1 != m.pp * virtualStageCount())
    return fmt::format("pp-split-points names {} modules: pp x virtual stages = {} stages need {}",
                       ppSplitPoints.size(), m.pp * virtualStageCount(), m.pp * virtualStageCount() - 1);
  return std::nullopt;
}

std::string_view float8Name(Float8 f) { return nameOf(kFloat8s, f); }
std::optional<Float8> float8FromName(std::string_view s) { return fromName(kFloat8s, s); }

std::optional<std::string> Setup::checkFloat8() const {
  // torchao asserts it (Float8LinearConfig.__post_init__): the fp8
  // all-gather carries one tensorwise scale per weight.
  if (float8AllGather && float8 == Float8::Rowwise)
    return std::string("float8-all-gather needs --float8 tensorwise (torchao gathers tensorwise-scaled weights only)");
  if (float8 == Float8::None)
    return std::nullopt;
  // torchtitan refuses to convert below SM 8.9 (no fp8 tensor cores); a
  // bf16 prediction for an fp8 run would be silently wrong.
  const HardwareProfile *hw = targetProfile();
  if (hw && !hw->supports(MathPrecision::FP8))
    return fmt::format("--float8 {} needs fp8 tensor cores; {} has none (torchao's Float8Linear runs on NVIDIA SM 8.9+: "
                       "H100, H200, L4, RTX 4090)",
                       float8Name(float8), hw->name);
  return std::nullopt;
}

namespace {

// The named interconnect, else the profile's default; `unknown` gets a name
// the catalog does not hold.
const Interconnect *lookUpLink(const HardwareCatalog &c, const HardwareProfile *hw, const std::string &name,
                               bool intraNode, std::string *unknown) {
  if (!name.empty()) {
    if (const Interconnect *l = c.findInterconnect(name))
      return l;
    if (unknown)
      *unknown = name;
  }
  return hw ? c.findInterconnect(intraNode ? hw->intraNode : hw->interNode) : nullptr;
}

}  // namespace

void Setup::resolveHardware() {
  const HardwareCatalog &c = HardwareCatalog::instance();
  hardware = c.find(target);
  intraLink = lookUpLink(c, hardware, intra, true, nullptr);
  interLink = lookUpLink(c, hardware, inter, false, nullptr);
}

const HardwareProfile *Setup::targetProfile() const {
  if (hardware && hardware->name == target)
    return hardware;
  return HardwareCatalog::instance().find(target);
}

const Interconnect *Setup::nodeLink(LinkLevel level, std::string *unknown) const {
  const bool intraNode = level == LinkLevel::IntraNode;
  const Interconnect *resolved = intraNode ? intraLink : interLink;
  const std::string &name = intraNode ? intra : inter;
  const HardwareProfile *hw = targetProfile();
  // Still what the names say: the resolved link is the named one, or the
  // default of the profile that was resolved.
  if (resolved && hw == hardware &&
      (name.empty() ? resolved->name == (intraNode ? hw->intraNode : hw->interNode) : resolved->name == name))
    return resolved;
  return lookUpLink(HardwareCatalog::instance(), hw, name, intraNode, unknown);
}

double Setup::ruleOption(std::string_view code, std::string_view option, double fallback) const {
  auto r = ruleOptions.find(std::string(code));
  if (r == ruleOptions.end())
    return fallback;
  auto o = r->second.find(std::string(option));
  return o == r->second.end() ? fallback : o->second;
}

// Backend profile names and their aliases, as users write them on the command
// line and in the config (docs/fusion.md); one table for both.
std::string_view fusionBackendName(FusionBackend b) {
  switch (b) {
  case FusionBackend::Inductor: return "inductor";
  case FusionBackend::InductorCpu: return "inductor-cpu";
  case FusionBackend::TensorRT: return "tensorrt";
  case FusionBackend::OrtCpu: return "ort-cpu";
  case FusionBackend::OrtCuda: return "ort-cuda";
  case FusionBackend::Eager: return "eager";
  }
  return "inductor";
}

// The one list of backend names and aliases (docs/fusion.md#backend-profiles):
// `ort` was one profile for both execution providers; it now names the CPU
// one, the one the comparison harness validates.
std::optional<FusionBackend> fusionBackendFromName(std::string_view s) {
  if (s == "inductor" || s == "inductor-cuda") return FusionBackend::Inductor;
  if (s == "inductor-cpu") return FusionBackend::InductorCpu;
  if (s == "tensorrt" || s == "trt") return FusionBackend::TensorRT;
  if (s == "ort-cpu" || s == "ort" || s == "onnxruntime") return FusionBackend::OrtCpu;
  if (s == "ort-cuda") return FusionBackend::OrtCuda;
  if (s == "eager" || s == "none") return FusionBackend::Eager;
  return std::nullopt;
}

const char *fusionBackendChoices() { return "inductor, inductor-cpu, tensorrt, ort-cpu (ort), ort-cuda, eager"; }

}  // namespace graphlint
