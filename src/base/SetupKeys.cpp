// The setup-key table (SetupKeys.h): each row says how one setup value is
// written, checked, stored, dumped and explained.
#include "graphlint/base/SetupKeys.h"

#include "graphlint/ir/MessageText.h"
#include "graphlint/base/HardwareProfile.h"

#include <fmt/format.h>

#include <llvm/ADT/StringExtras.h>

#include <cstdint>

namespace graphlint {

namespace {

using Checked = SetupKey::Checked;

// `--zero` on the command line, `'zero'` in a config file.
std::string named(const SetupKey &k, SetupSyntax syntax) {
  return syntax == SetupSyntax::CommandLine ? std::string("--") + k.flagName() : fmt::format("'{}'", k.key);
}

Checked ok(std::string v) { return {std::move(v), {}}; }
Checked refused(std::string why) { return {std::nullopt, oneLine(why)}; }

const SetupKey &row(llvm::StringRef key);

template <typename E, std::optional<E> (*FromName)(std::string_view), std::string_view (*Name)(E)>
Checked choice(const char *key, llvm::StringRef text, SetupSyntax syntax, const char *allowed) {
  if (auto e = FromName(std::string_view(text.data(), text.size())))
    return ok(std::string(Name(*e)));
  return refused(fmt::format("{} must be one of {}, got '{}'", named(row(key), syntax), allowed,
                             escapedForMessage(text.str())));
}

Checked integer(const char *key, llvm::StringRef text, SetupSyntax syntax, int64_t lo, int64_t hi) {
  int64_t x = 0;
  if (text.getAsInteger(10, x) || x < lo || x > hi)
    return refused(fmt::format("{} expects an integer from {} to {}, got '{}'", named(row(key), syntax), lo, hi,
                               escapedForMessage(text.str())));
  return ok(std::to_string(x));
}

Checked boolean(const char *key, llvm::StringRef text, SetupSyntax syntax) {
  std::string s = text.lower();
  if (s == "true" || s == "yes" || s == "on")
    return ok("true");
  if (s == "false" || s == "no" || s == "off")
    return ok("false");
  return refused(fmt::format("{} expects true or false, got '{}'", named(row(key), syntax), escapedForMessage(text.str())));
}

// An interconnect name; empty means the target's default.
Checked link(const char *key, llvm::StringRef text, SetupSyntax syntax) {
  if (text.empty())
    return ok("");
  auto l = resolveInterconnect(std::string_view(text.data(), text.size()));
  if (!l)
    return refused(named(row(key), syntax) + ": " + llvm::toString(l.takeError()));
  return ok(l->name);  // canonical, as the target: "NVLink-4" reports as nvlink4
}

unsigned asUnsigned(const std::string &v) { return static_cast<unsigned>(std::stoul(v)); }

std::string linkDump(const std::string &name) {
  return " " + yamlQuoted(name) + (name.empty() ? "  # the target's default" : "");
}

// A device-mesh degree (Setup::Mesh): the stated value is kept (0: not
// stated) and --dump prints the resolved degree, so a dump read back as a
// config file resolves to the same mesh.
#define MESH_KEY(KEY, FIELD, VALUE_HELP, HELP, EXAMPLE)                                                            \
  SetupKey {                                                                                                       \
    KEY, nullptr, VALUE_HELP, HELP, nullptr, nullptr, nullptr, false, EXAMPLE, " " EXAMPLE,                         \
        [](llvm::StringRef t, SetupSyntax syntax) { return integer(KEY, t, syntax, 1, 1 << 20); },                   \
        [](Setup &s, const std::string &v) { s.FIELD = asUnsigned(v); },                                           \
        [](const Setup &s) { return " " + std::to_string(s.mesh.FIELD); }                                          \
  }

const std::vector<SetupKey> &table() {
  static const std::vector<SetupKey> keys = {
      {"target", nullptr, "GPU",
       "hardware profile for GL141/GL142 and the memory\n"
       "capacity of GL201 (default H100-SXM):\n"
       "V100, A100-40GB, A100-80GB, H100-SXM, H100-PCIe,\n"
       "H100-96GB-HBM2e, H200, B200, MI300X, L4, RTX-4090,\n"
       "or one from hardware.yaml (docs/hardware.md)",
       nullptr, nullptr, nullptr, true, "a100-80g", " A100-80GB",
       [](llvm::StringRef t, SetupSyntax syntax) {
         auto hw = resolveHardwareTarget(std::string_view(t.data(), t.size()));
         if (!hw)
           return refused(named(row("target"), syntax) + ": " + llvm::toString(hw.takeError()));
         return ok(hw->name);  // canonical: "a100-80g" reports as A100-80GB everywhere
       },
       [](Setup &s, const std::string &v) { s.target = v; }, [](const Setup &s) { return " " + s.target; }},
      {"kernels", nullptr, "cuda|cpu",
       "whose PyTorch kernels the memory plan assumes where the\n"
       "CPU's keep other tensors than CUDA's (dropout: a bool mask\n"
       "on CUDA, an input-sized noise tensor on the CPU); default\n"
       "cuda, the GPU the prediction is for; cpu compares with a\n"
       "measurement on the CPU (docs/memory.md)",
       nullptr, nullptr, nullptr, true, "cpu", " cpu",
       [](llvm::StringRef t, SetupSyntax syntax) {
         return choice<Kernels, kernelsFromName, kernelsName>("kernels", t, syntax, "cuda, cpu");
       },
       [](Setup &s, const std::string &v) { s.kernels = *kernelsFromName(v); },
       [](const Setup &s) { return " " + std::string(kernelsName(s.kernels)); }},
      {"backend", nullptr, "inductor|inductor-cpu|tensorrt|ort-cpu|ort-cuda|eager",
       "fusion legality the planner applies (default inductor;\n"
       "ort = ort-cpu); docs/fusion.md describes each backend",
       nullptr, nullptr, nullptr, true, "ort", " ort-cpu",
       [](llvm::StringRef t, SetupSyntax syntax) {
         return choice<FusionBackend, fusionBackendFromName, fusionBackendName>("backend", t, syntax,
                                                                                 fusionBackendChoices());
       },
       [](Setup &s, const std::string &v) {
         s.backend = *fusionBackendFromName(v);
         s.backendStated = true;
       },
       [](const Setup &s) { return " " + std::string(fusionBackendName(s.backend)); }},
      {"dims", "dim", "NAME=SIZE",
       "bind a symbolic dimension (repeatable), e.g. -D batch=8;\n"
       "size expressions over it (batch*seq) are rescaled. A NAME\n"
       "that binds nothing in a file is a warning on stderr\n"
       "(`FILE: warning: -D NAME=N binds nothing: ...`) naming the\n"
       "file's size symbols and inputs; the lint goes on",
       "D", nullptr, nullptr, true, "batch=8", "\n    \"batch\": 8",
       [](llvm::StringRef spec, SetupSyntax syntax) {
         auto [name, val] = spec.split('=');
         if (syntax == SetupSyntax::CommandLine) {
           if (name.size() == spec.size() || name.empty())
             return refused(fmt::format("--dim expects NAME=SIZE, got '{}'", escapedForMessage(spec.str())));
           int64_t v = 0;
           if (val.getAsInteger(10, v) || v < 0)
             return refused(fmt::format("--dim {}: '{}' is not a non-negative integer", escapedForMessage(name.str()),
                                        escapedForMessage(val.str())));
           return ok(fmt::format("{}={}", name.str(), v));
         }
         int64_t v = 0;
         if (val.getAsInteger(10, v) || v < 0)
           return refused(fmt::format("'dims: {}' expects an integer from 0 to {}, got '{}'",
                                      escapedForMessage(name.str()), INT64_MAX, escapedForMessage(val.str())));
         return ok(fmt::format("{}={}", name.str(), v));
       },
       [](Setup &s, const std::string &v) {
         auto [name, size] = llvm::StringRef(v).rsplit('=');
         int64_t n = 0;
         size.getAsInteger(10, n);
         s.dims[name.str()] = n;  // merged name by name
       },
       [](const Setup &s) {
         std::string out = s.dims.empty() ? " {}" : "";
         for (const auto &[name, v] : s.dims)
           out += fmt::format("\n    {}: {}", yamlQuoted(name), v);
         return out;
       }},
      {"train", nullptr, "", "a training step (forward, backward, optimizer)", nullptr, nullptr, nullptr, false,
       "true", " true", [](llvm::StringRef t, SetupSyntax syntax) { return boolean("train", t, syntax); },
       [](Setup &s, const std::string &v) { s.train = v == "true"; },
       [](const Setup &s) { return std::string(s.train ? " true" : " false"); }},
      {"optimizer", nullptr, "sgd|momentum|adam|adamw", "(default adam)", nullptr, nullptr, nullptr, false, "sgd",
       " sgd",
       [](llvm::StringRef t, SetupSyntax syntax) {
         return choice<Optimizer, optimizerFromName, optimizerName>("optimizer", t, syntax,
                                                                    "sgd, momentum, adam, adamw");
       },
       [](Setup &s, const std::string &v) { s.optimizer = *optimizerFromName(v); },
       [](const Setup &s) { return " " + std::string(optimizerName(s.optimizer)); }},
      {"precision", nullptr, "fp32|tf32|fp16-mixed|bf16-mixed|bf16", "(default fp32)", nullptr, nullptr, nullptr, false,
       "bf16-mixed", " bf16-mixed",
       [](llvm::StringRef t, SetupSyntax syntax) {
         return choice<Precision, precisionFromName, precisionName>("precision", t, syntax,
                                                                    "fp32, tf32, fp16-mixed, bf16-mixed, bf16");
       },
       [](Setup &s, const std::string &v) { s.precision = *precisionFromName(v); },
       [](const Setup &s) { return " " + std::string(precisionName(s.precision)); }},
      {"zero", nullptr, "0|1|2|3", "ZeRO stage (default 0); --fsdp is --zero 3", nullptr, "fsdp", "3", false, "2",
       " 2", [](llvm::StringRef t, SetupSyntax syntax) { return integer("zero", t, syntax, 0, 3); },
       [](Setup &s, const std::string &v) { s.zero = asUnsigned(v); },
       [](const Setup &s) { return " " + std::to_string(s.zero); }},
      {"world-size", nullptr, "N",
       "ranks in all (default: the mesh's product, 1); alone,\n"
       "the data-parallel degree (dp-shard under --zero 1..3,\n"
       "dp-replicate under --zero 0); with mesh degrees that\n"
       "multiply to another number, exit 2",
       nullptr, nullptr, nullptr, false, "64", " 64",
       [](llvm::StringRef t, SetupSyntax syntax) { return integer("world-size", t, syntax, 1, 1 << 20); },
       [](Setup &s, const std::string &v) { s.worldSize = asUnsigned(v); },
       [](const Setup &s) { return " " + std::to_string(s.mesh.worldSize()); }},
      MESH_KEY("dp-replicate", dpReplicate, "N",
               "data-parallel replicas (DDP; HSDP's replicate\n"
               "dimension with --dp-shard): gradients all-reduced\n"
               "across them (default 1)",
               "4"),
      {"dp-shard", nullptr, "N",
       "data-parallel ranks the model states are sharded\n"
       "over: FSDP2's fully_shard on each repeated block plus\n"
       "the root (default 1); with --zero K, DeepSpeed's\n"
       "ZeRO-K over these ranks; -1: the ranks the world size\n"
       "leaves (torchtitan's data_parallel_shard_degree -1)",
       nullptr, nullptr, nullptr, false, "8", " 8",
       [](llvm::StringRef t, SetupSyntax syntax) {
         return t.trim() == "-1" ? ok("-1") : integer("dp-shard", t, syntax, 1, 1 << 20);
       },
       [](Setup &s, const std::string &v) {
         s.dpShardRest = v == "-1";
         s.dpShard = s.dpShardRest ? 0 : asUnsigned(v);
       },
       [](const Setup &s) { return " " + std::to_string(s.mesh.dpShard); }},
      MESH_KEY("tp", tp, "N",
               "tensor-parallel degree (default 1): DTensor's colwise/\n"
               "rowwise plan of the model's family (or --tp-plan)\n"
               "shards weights, activations and matmuls",
               "8"),
      MESH_KEY("pp", pp, "N", "pipeline-parallel stages (default 1); see\n--pp-schedule, --microbatches", "4"),
      MESH_KEY("cp", cp, "N", "context-parallel degree: the sequence sharded\n(ring attention; default 1)", "2"),
      MESH_KEY("ep", ep, "N",
               "expert-parallel degree (default 1): experts sharded\n"
               "over ep ranks of dp-shard x cp, as torchtitan does;\n"
               "it does not multiply the world size",
               "2"),
      {"sequence-parallel", nullptr, "",
       "Megatron's sequence parallelism with --tp (default\n"
       "auto: on when tp > 1; --sequence-parallel=false off):\n"
       "norms and dropout on a sequence shard, all-gather +\n"
       "reduce-scatter per block instead of an all-reduce",
       nullptr, nullptr, nullptr, false, "true", " true",
       [](llvm::StringRef t, SetupSyntax syntax) {
         return t.lower() == "auto" ? ok("auto") : boolean("sequence-parallel", t, syntax);
       },
       [](Setup &s, const std::string &v) {
         s.sequenceParallel = v == "auto" ? std::nullopt : std::optional<bool>(v == "true");
       },
       [](const Setup &s) {
         return std::string(!s.sequenceParallel ? " auto" : *s.sequenceParallel ? " true" : " false");
       }},
      {"async-tp", nullptr, "",
       "async tensor parallelism (torchtitan's async_tp): each tp\n"
       "region's all-gather / reduce-scatter overlaps its own matmuls\n"
       "in tp chunks (needs sequence parallelism)",
       nullptr, nullptr, nullptr, false, "true", " true",
       [](llvm::StringRef t, SetupSyntax syntax) { return boolean("async-tp", t, syntax); },
       [](Setup &s, const std::string &v) { s.asyncTp = v == "true"; },
       [](const Setup &s) { return std::string(s.asyncTp ? " true" : " false"); }},
      {"float8", nullptr, "none|tensorwise|rowwise",
       "torchao's float8 training (Float8Linear; default none):\n"
       "linears with both dims divisible by 16, but the output\n"
       "layer (output, lm_head), run their three GEMMs at the\n"
       "fp8 peak; each GEMM's operands are cast (amax + scaled\n"
       "cast kernels) per the recipe; needs an fp8 target",
       nullptr, nullptr, nullptr, false, "rowwise", " rowwise",
       [](llvm::StringRef t, SetupSyntax syntax) {
         return choice<Float8, float8FromName, float8Name>("float8", t, syntax, "none, tensorwise, rowwise");
       },
       [](Setup &s, const std::string &v) { s.float8 = *float8FromName(v); },
       [](const Setup &s) { return " " + std::string(float8Name(s.float8)); }},
      {"float8-all-gather", nullptr, "",
       "with --float8 tensorwise and FSDP2 (dp-shard > 1): the\n"
       "converted weights are all-gathered in fp8, 1 byte per\n"
       "element (torchao's enable_fsdp_float8_all_gather)",
       nullptr, nullptr, nullptr, false, "true", " true",
       [](llvm::StringRef t, SetupSyntax syntax) { return boolean("float8-all-gather", t, syntax); },
       [](Setup &s, const std::string &v) { s.float8AllGather = v == "true"; },
       [](const Setup &s) { return std::string(s.float8AllGather ? " true" : " false"); }},
      {"float8-precompute-scale", nullptr, "",
       "with --float8-all-gather: the weights' scales from one\n"
       "amax all-reduce per step after the optimizer (torchao's\n"
       "precompute_float8_dynamic_scale_for_fsdp), not one per\n"
       "weight per all-gather",
       nullptr, nullptr, nullptr, false, "true", " true",
       [](llvm::StringRef t, SetupSyntax syntax) { return boolean("float8-precompute-scale", t, syntax); },
       [](Setup &s, const std::string &v) { s.float8PrecomputeScale = v == "true"; },
       [](const Setup &s) { return std::string(s.float8PrecomputeScale ? " true" : " false"); }},
      {"tp-plan", nullptr, "GLOB=STYLE",
       "a module-path glob's tensor-parallel style (repeatable;\n"
       "colwise, rowwise, sequence, replicate), e.g.\n"
       "--tp-plan '*.attn.qkv=colwise'; tried in order before\n"
       "the default plan of the model's family",
       nullptr, nullptr, nullptr, false, "*.wq=colwise", "\n    \"*.wq\": colwise",
       [](llvm::StringRef spec, SetupSyntax syntax) {
         auto [glob, style] = spec.rsplit('=');
         if (glob.size() == spec.size() || glob.empty())
           return refused(fmt::format("{} expects GLOB=STYLE, got '{}'", named(row("tp-plan"), syntax),
                                      escapedForMessage(spec.str())));
         if (!tpStyleFromName(std::string_view(style.data(), style.size())))
           return refused(fmt::format("{} {}: the style must be one of colwise, rowwise, sequence, replicate, got '{}'",
                                      named(row("tp-plan"), syntax), escapedForMessage(glob.str()),
                                      escapedForMessage(style.str())));
         return ok(spec.str());
       },
       [](Setup &s, const std::string &v) {
         auto [glob, style] = llvm::StringRef(v).rsplit('=');
         TpStyle t = *tpStyleFromName(std::string_view(style.data(), style.size()));
         for (auto &entry : s.tpPlan)
           if (entry.first == glob) {
             entry.second = t;  // merged glob by glob
             return;
           }
         s.tpPlan.emplace_back(glob.str(), t);
       },
       [](const Setup &s) {
         std::string out = s.tpPlan.empty() ? " {}" : "";
         for (const auto &[glob, style] : s.tpPlan)
           out += fmt::format("\n    {}: {}", yamlQuoted(glob), tpStyleName(style));
         return out;
       }},
      {"pp-schedule", nullptr, "gpipe|1f1b|interleaved-1f1b|zbv",
       "pipeline schedule with --pp (default 1f1b)", nullptr, nullptr, nullptr, false, "interleaved-1f1b",
       " interleaved-1f1b",
       [](llvm::StringRef t, SetupSyntax syntax) {
         return choice<PipelineSchedule, pipelineScheduleFromName, pipelineScheduleName>(
             "pp-schedule", t, syntax, "gpipe, 1f1b, interleaved-1f1b, zbv");
       },
       [](Setup &s, const std::string &v) { s.ppSchedule = *pipelineScheduleFromName(v); },
       [](const Setup &s) { return " " + std::string(pipelineScheduleName(s.ppSchedule)); }},
      {"microbatches", nullptr, "N",
       "micro-batches per step with --pp (default pp); the\n"
       "graph's batch is the local batch they split",
       nullptr, nullptr, nullptr, false, "16", " 16",
       [](llvm::StringRef t, SetupSyntax syntax) { return integer("microbatches", t, syntax, 1, 1 << 20); },
       [](Setup &s, const std::string &v) { s.microbatches = asUnsigned(v); },
       [](const Setup &s) { return " " + std::to_string(s.microbatchCount()); }},
      {"virtual-stages", nullptr, "V",
       "model chunks per pipeline rank for interleaved-1f1b\n"
       "(default 2; zbv always 2, gpipe and 1f1b 1)",
       nullptr, nullptr, nullptr, false, "4", " 4",
       [](llvm::StringRef t, SetupSyntax syntax) { return integer("virtual-stages", t, syntax, 1, 64); },
       [](Setup &s, const std::string &v) { s.virtualStages = asUnsigned(v); },
       [](const Setup &s) { return " " + std::to_string(s.virtualStages ? s.virtualStages : s.virtualStageCount()); }},
      {"pp-split-points", nullptr, "M1,M2,...",
       "the module each pipeline stage after the first starts\n"
       "at (torchtitan's pipeline_parallel_split_points);\n"
       "default: stages balanced by predicted time",
       nullptr, nullptr, nullptr, false, "layers.4", " \"layers.4\"",
       [](llvm::StringRef t, SetupSyntax) { return ok(t.str()); },
       [](Setup &s, const std::string &v) {
         s.ppSplitPoints.clear();
         llvm::SmallVector<llvm::StringRef, 8> parts;
         llvm::StringRef(v).split(parts, ',', -1, false);
         for (llvm::StringRef p : parts)
           s.ppSplitPoints.push_back(p.trim().str());
       },
       [](const Setup &s) { return " " + yamlQuoted(llvm::join(s.ppSplitPoints, ",")); }},
      {"capacity-factor", nullptr, "C",
       "MoE expert capacity over an even share of the tokens\n"
       "(default 1.0): sizes the expert-parallel all-to-all",
       nullptr, nullptr, nullptr, false, "1.25", " 1.25",
       [](llvm::StringRef t, SetupSyntax syntax) {
         double x = 0;
         if (t.getAsDouble(x) || !(x > 0) || x > 64)
           return refused(fmt::format("{} expects a number above 0 (at most 64), got '{}'",
                                      named(row("capacity-factor"), syntax), escapedForMessage(t.str())));
         return ok(fmt::format("{}", x));
       },
       [](Setup &s, const std::string &v) { s.capacityFactor = std::stod(v); },
       [](const Setup &s) { return fmt::format(" {}", s.capacityFactor); }},
      {"recompute", nullptr, "none|layer|sqrt|selective-op|selective-layer=N",
       "activation checkpointing (default none): layer\n"
       "(alias full) checkpoints each repeated layer, as\n"
       "torch.utils.checkpoint around every block; sqrt\n"
       "cuts the graph into ~sqrt(n) segments; selective-op\n"
       "keeps torchtitan's save list (every other matmul,\n"
       "attention, reduce-scatter, max) in each layer and\n"
       "recomputes the rest; selective-layer=N checkpoints\n"
       "every N-th layer (torchtitan's ac_freq, default 2);\n"
       "the recomputed forward is added to the backward",
       nullptr, nullptr, nullptr, false, "full", " layer",
       [](llvm::StringRef t, SetupSyntax syntax) {
         if (t.consume_front("selective-layer=")) {
           unsigned n = 0;
           if (t.getAsInteger(10, n) || n < 1 || n > 1024)
             return refused(fmt::format("{} selective-layer=N expects N from 1 to 1024, got '{}'",
                                        named(row("recompute"), syntax), escapedForMessage(t.str())));
           return ok(fmt::format("selective-layer={}", n));
         }
         if (t == "selective-layer")
           return ok("selective-layer=2");  // torchtitan's default selective_ac_option
         return choice<Recompute, recomputeFromName, recomputeName>("recompute", t, syntax, recomputeChoices());
       },
       [](Setup &s, const std::string &v) {
         llvm::StringRef t(v);
         if (t.consume_front("selective-layer=")) {
           s.recompute = Recompute::SelectiveLayer;
           s.recomputeEvery = asUnsigned(t.str());
         } else {
           s.recompute = *recomputeFromName(v);
         }
       },
       [](const Setup &s) { return " " + s.recomputeLabel(); }},
      {"gpus-per-node", nullptr, "G", "ranks per node (default 8)", nullptr, nullptr, nullptr, false, "4", " 4",
       [](llvm::StringRef t, SetupSyntax syntax) { return integer("gpus-per-node", t, syntax, 1, 1024); },
       [](Setup &s, const std::string &v) { s.gpusPerNode = asUnsigned(v); },
       [](const Setup &s) { return " " + std::to_string(s.gpusPerNode); }},
      {"intra", nullptr, "NAME", "interconnect inside a node (default: the target's; docs/hardware.md)", nullptr,
       nullptr, nullptr, false, "pcie5", " \"pcie5\"",
       [](llvm::StringRef t, SetupSyntax syntax) { return link("intra", t, syntax); },
       [](Setup &s, const std::string &v) { s.intra = v; }, [](const Setup &s) { return linkDump(s.intra); }},
      {"inter", nullptr, "NAME", "interconnect between nodes (default: the target's; docs/hardware.md)", nullptr,
       nullptr, nullptr, false, "ndr", " \"ndr\"",
       [](llvm::StringRef t, SetupSyntax syntax) { return link("inter", t, syntax); },
       [](Setup &s, const std::string &v) { s.inter = v; }, [](const Setup &s) { return linkDump(s.inter); }},
  };
  return keys;
}

const SetupKey &row(llvm::StringRef key) { return *findSetupKey(key); }

}  // namespace

const std::vector<SetupKey> &setupKeys() { return table(); }

const SetupKey *findSetupKey(llvm::StringRef key) {
  for (const SetupKey &k : table())
    if (key == k.key || key == k.flagName())
      return &k;
  return nullptr;
}

std::string yamlQuoted(const std::string &s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\')
      out += '\\';
    out += ch;
  }
  return out + "\"";
}

std::string setupKeyNames() {
  std::string out;
  for (const SetupKey &k : table())
    out += (out.empty() ? "" : ", ") + std::string(k.key);
  return out;
}

std::optional<std::string> applySetup(Setup &s, const std::vector<SetupSetting> &settings) {
  for (const SetupSetting &x : settings)
    x.key->apply(s, x.value);
  s.resolveHardware();
  if (auto e = s.resolveMesh())
    return e;
  return s.checkFloat8();
}

}  // namespace graphlint
