// `graphlint plan`'s space (Plan.h): a candidate's keys and the lint
// settings and flags they are, --fix, what the model allows (heads, layers,
// experts, tokens per sample) and the enumeration itself.
#include "PlanSpace.h"

#include "graphlint/analyses/MemoryPlan.h"
#include "graphlint/analyses/MeshSharding.h"
#include "graphlint/analyses/StepTimeline.h"
#include "graphlint/base/HardwareProfile.h"
#include "graphlint/ir/MessageText.h"

#include <fmt/format.h>

#include <llvm/ADT/StringExtras.h>

#include <algorithm>
#include <set>

namespace graphlint {

namespace {

constexpr std::string_view kObjectives[] = {"time", "cost", "tokens-per-dollar"};

// The setup-key row of a plan key whose values are a lint setting's.
const SetupKey &row(const char *key) { return *findSetupKey(key); }

std::string setupLabel(Recompute r, unsigned every) {
  Setup s;
  s.recompute = r;
  s.recomputeEvery = every;
  return s.recomputeLabel();
}

}  // namespace

std::string_view planObjectiveName(PlanObjective o) { return kObjectives[static_cast<unsigned>(o)]; }

std::optional<PlanObjective> planObjectiveFromName(std::string_view s) {
  for (unsigned i = 0; i < std::size(kObjectives); ++i)
    if (s == kObjectives[i])
      return static_cast<PlanObjective>(i);
  return std::nullopt;
}

const std::vector<std::string_view> &planSetupKeys() {
  static const std::vector<std::string_view> keys = {"dp_replicate", "dp_shard",    "tp",        "pp",
                                                      "cp",           "ep",          "batch",     "microbatches",
                                                      "pp_schedule",  "recompute",   "float8",    "backend",
                                                      "target",       "gpus"};
  return keys;
}

std::string planSetupValue(const PlanSetup &p, std::string_view key) {
  if (key == "dp_replicate") return std::to_string(p.dpReplicate);
  if (key == "dp_shard") return std::to_string(p.dpShard);
  if (key == "tp") return std::to_string(p.tp);
  if (key == "pp") return std::to_string(p.pp);
  if (key == "cp") return std::to_string(p.cp);
  if (key == "ep") return std::to_string(p.ep);
  if (key == "batch") return std::to_string(p.batch);
  if (key == "microbatches") return std::to_string(p.microbatches);
  if (key == "pp_schedule") return std::string(pipelineScheduleName(p.ppSchedule));
  if (key == "recompute") return setupLabel(p.recompute, p.recomputeEvery);
  if (key == "float8") return std::string(float8Name(p.float8));
  if (key == "backend") return std::string(fusionBackendName(p.backend));
  if (key == "target") return p.target;
  if (key == "gpus") return std::to_string(p.gpus);
  return "";
}

std::string PlanSetup::describe() const {
  Mesh m;
  m.dpReplicate = dpReplicate, m.dpShard = dpShard, m.tp = tp, m.pp = pp, m.cp = cp, m.ep = ep;
  std::string out = fmt::format("{} x {}: {}, batch {}", gpus, target, m.describe(), batch);
  if (pp > 1)
    out += fmt::format(", {} x{} micro-batches", pipelineScheduleName(ppSchedule), microbatches);
  out += fmt::format(", recompute {}", setupLabel(recompute, recomputeEvery));
  if (float8 != Float8::None)
    out += fmt::format(", float8 {}", float8Name(float8));
  out += fmt::format(", {}", fusionBackendName(backend));
  return out;
}

std::vector<SetupSetting> planSettings(const PlanSetup &p) {
  auto set = [](const char *key, std::string v) { return SetupSetting{&row(key), std::move(v)}; };
  return {set("target", p.target),
          set("world-size", std::to_string(p.gpus)),
          set("zero", "0"),
          set("dp-replicate", std::to_string(p.dpReplicate)),
          set("dp-shard", std::to_string(p.dpShard)),
          set("tp", std::to_string(p.tp)),
          set("pp", std::to_string(p.pp)),
          set("cp", std::to_string(p.cp)),
          set("ep", std::to_string(p.ep)),
          set("pp-schedule", std::string(pipelineScheduleName(p.ppSchedule))),
          set("microbatches", std::to_string(p.microbatches)),
          set("recompute", setupLabel(p.recompute, p.recomputeEvery)),
          set("float8", std::string(float8Name(p.float8))),
          set("backend", std::string(fusionBackendName(p.backend))),
          set("dims", fmt::format("batch={}", p.batch))};
}

llvm::Expected<Setup> planSetupOver(const Setup &base, const PlanSetup &p) {
  Setup s = base;
  s.ppSplitPoints.clear();  // they name the stages of one pp degree
  if (auto err = applySetup(s, planSettings(p)))
    return llvm::createStringError(llvm::inconvertibleErrorCode(), *err);
  return s;
}

std::vector<std::string> planLintFlags(const PlanSetup &p) {
  std::vector<std::string> out;
  for (const SetupSetting &s : planSettings(p)) {
    if (s.key->isDims()) {
      out.push_back("-D");
      out.push_back(s.value);
      continue;
    }
    out.push_back(std::string("--") + s.key->flagName());
    out.push_back(s.value);
  }
  return out;
}

std::optional<std::string> checkPlanFix(const std::string &key, std::string &value) {
  const auto &keys = planSetupKeys();
  if (std::find(keys.begin(), keys.end(), key) == keys.end())
    return fmt::format("--fix: unknown key '{}' (one of {})", escapedForMessage(key), llvm::join(keys, ", "));
  auto viaRow = [&](const char *setupKey) -> std::optional<std::string> {
    SetupKey::Checked c = row(setupKey).check(value, SetupSyntax::CommandLine);
    if (!c.value)
      return fmt::format("--fix {}: {}", key, c.error);
    value = *c.value;
    return std::nullopt;
  };
  if (key == "pp_schedule") return viaRow("pp-schedule");
  if (key == "recompute") return viaRow("recompute");
  if (key == "float8") return viaRow("float8");
  if (key == "backend") return viaRow("backend");
  if (key == "target") return viaRow("target");
  int64_t n = 0;
  if (llvm::StringRef(value).getAsInteger(10, n) || n < 1 || n > (1 << 20))
    return fmt::format("--fix {} expects an integer from 1 to {}, got '{}'", key, 1 << 20, escapedForMessage(value));
  value = std::to_string(n);
  return std::nullopt;
}

PlanModelFacts planModelFacts(const Model &m, int64_t batch) {
  PlanModelFacts f;
  if (!m.graph)
    return f;
  // The repeated layers a pipeline can cut between, counted as
  // PipelineSchedule counts its units: runs of forward nodes in one layer
  // (checkpointLayers names each node's layer; its size is the node count).
  {
    const std::vector<llvm::StringRef> layer = checkpointLayers(*m.graph);
    llvm::StringRef current;
    for (const auto &np : m.graph->nodes())
      if (!np->backwardPhase && np->index < layer.size() && !layer[np->index].empty() &&
          layer[np->index] != current) {
        current = layer[np->index];
        ++f.layers;
      }
  }
  Setup plain;
  plain.train = true;
  plain.resolveHardware();
  (void)plain.resolveMesh();
  MeshSharding sharding(m, plain);
  // scaled_dot_product_attention(query [b, h, s, d], key [b, kv_h, s, d], ...):
  // tp shards the heads, so it must divide both (torchtitan asserts it).
  for (const AttentionLayer &a : sharding.attentionLayers()) {
    if (!a.node || a.node->inputs.empty() || !a.node->inputs[0] || !a.key)
      continue;
    auto heads = [](const Value *v) -> unsigned {
      const Shape &s = v->type.shape;
      return s.rankKnown && s.rank() == 4 && s.dims[1].isStatic() ? static_cast<unsigned>(s.dims[1].value) : 0;
    };
    unsigned h = heads(a.node->inputs[0]), kv = heads(a.key);
    if (h && kv) {
      f.heads = h;
      f.kvHeads = kv;
      break;
    }
  }
  for (const MoeLayer &moe : sharding.moeLayers())
    f.experts = std::max(f.experts, moe.experts);
  if (std::optional<double> tokens = tokensPerStep(m); tokens && batch > 0) {
    f.tokensPerSample = *tokens / static_cast<double>(batch);
    f.seq = static_cast<int64_t>(f.tokensPerSample);
  }
  return f;
}

namespace {

std::vector<unsigned> powersOfTwoUpTo(unsigned hi) {
  std::vector<unsigned> out;
  for (unsigned v = 1; v <= hi; v *= 2)
    out.push_back(v);
  return out;
}

std::vector<unsigned> divisorsOf(unsigned n) {
  std::vector<unsigned> out;
  for (unsigned d = 1; d <= n; ++d)
    if (n % d == 0)
      out.push_back(d);
  return out;
}

// The fixed value of an integer key, or the default choices.
std::vector<unsigned> choices(const PlanFixes &fix, const char *key, std::vector<unsigned> dflt) {
  if (auto it = fix.find(key); it != fix.end())
    return {static_cast<unsigned>(std::stoul(it->second))};
  return dflt;
}

}  // namespace

PlanSpace enumeratePlanSpace(const PlanRequest &req, const PlanModelFacts &f, uint64_t globalBatch,
                             const PlanFixes &fix) {
  PlanSpace space;
  const Setup &base = req.base;
  const unsigned perNode = std::max(1u, base.gpusPerNode);
  const unsigned maxPp = 32, maxCp = 16;

  std::vector<PipelineSchedule> schedules{PipelineSchedule::OneFOneB, PipelineSchedule::Interleaved1F1B,
                                          PipelineSchedule::GPipe, PipelineSchedule::ZBV};
  if (auto it = fix.find("pp_schedule"); it != fix.end())
    schedules = {*pipelineScheduleFromName(it->second)};
  std::vector<std::pair<Recompute, unsigned>> recomputes{
      {Recompute::None, 2}, {Recompute::SelectiveOp, 2}, {Recompute::Layer, 2}};
  if (auto it = fix.find("recompute"); it != fix.end()) {
    Setup s;
    row("recompute").apply(s, it->second);
    recomputes = {{s.recompute, s.recomputeEvery}};
  }
  std::vector<FusionBackend> backends{FusionBackend::Inductor, FusionBackend::Eager};
  if (auto it = fix.find("backend"); it != fix.end())
    backends = {*fusionBackendFromName(it->second)};
  std::optional<Float8> fixedFloat8;
  if (auto it = fix.find("float8"); it != fix.end())
    fixedFloat8 = *float8FromName(it->second);

  auto note = [&](std::string n) {
    if (std::find(space.notes.begin(), space.notes.end(), n) == space.notes.end())
      space.notes.push_back(std::move(n));
  };
  if (!f.heads)
    note("attention heads unknown (no scaled_dot_product_attention call with static head dims): tp is limited by "
         "the GPUs of a node only");
  if (f.layers < 2)
    note("fewer than two repeated layers: no pipeline parallelism");
  note("no gradient accumulation: each data-parallel rank steps its whole per-rank batch at once (graphlint "
       "predicts one step of the graph)");

  for (const std::string &target : req.targets) {
    const HardwareProfile *hw = HardwareCatalog::instance().find(target);
    bool fp8 = hw && hw->supports(MathPrecision::FP8);
    std::vector<Float8> float8s = fp8 ? std::vector<Float8>{Float8::None, Float8::Tensorwise, Float8::Rowwise}
                                      : std::vector<Float8>{Float8::None};
    if (fixedFloat8)
      float8s = {*fixedFloat8};
    else if (base.float8AllGather)  // torchao gathers tensorwise-scaled weights only
      float8s.erase(std::remove(float8s.begin(), float8s.end(), Float8::Rowwise), float8s.end());
    if (!fp8 && !fixedFloat8)
      note(fmt::format("{}: no fp8 tensor cores, no float8 candidates", target));
    auto own = req.gpusOf.find(target);
    for (unsigned gpus : own != req.gpusOf.end() ? own->second : req.gpus) {
      for (unsigned tp : choices(fix, "tp", powersOfTwoUpTo(std::min(perNode, gpus)))) {
        if (gpus % tp || (f.heads && (f.heads % tp || f.kvHeads % tp)))
          continue;
        for (unsigned cp : choices(fix, "cp", powersOfTwoUpTo(maxCp))) {
          if (gpus % (tp * cp))
            continue;
          // Ring attention splits each sequence into 2 x cp chunks (load balancing).
          if (cp > 1 && (!f.seq || f.seq % (2 * cp) || !f.heads))
            continue;
          for (unsigned pp : choices(fix, "pp", powersOfTwoUpTo(maxPp))) {
            if (gpus % (tp * cp * pp) || (pp > 1 && pp > f.layers))
              continue;
            unsigned dp = gpus / (tp * cp * pp);
            if (globalBatch % dp)
              continue;
            uint64_t batch = globalBatch / dp;
            if (batch > (1u << 20))
              continue;
            for (unsigned rep : choices(fix, "dp_replicate", divisorsOf(dp))) {
              if (dp % rep)
                continue;
              unsigned shard = dp / rep;
              std::vector<unsigned> eps{1};
              if (f.experts)
                eps = powersOfTwoUpTo(std::min(f.experts, shard * cp));
              for (unsigned ep : choices(fix, "ep", eps)) {
                if ((shard * cp) % ep || (f.experts ? f.experts % ep != 0 : ep != 1))
                  continue;
                // (schedule, micro-batches): one entry without a pipeline.
                std::vector<std::pair<PipelineSchedule, unsigned>> pipes;
                if (pp == 1) {
                  pipes.push_back({PipelineSchedule::OneFOneB, 1});
                } else {
                  for (PipelineSchedule sch : schedules) {
                    unsigned chunks = sch == PipelineSchedule::Interleaved1F1B || sch == PipelineSchedule::ZBV ? 2 : 1;
                    if (pp * chunks > f.layers)
                      continue;
                    for (unsigned mb = pp; mb <= batch; mb *= 2)
                      if (batch % mb == 0)
                        pipes.push_back({sch, mb});
                  }
                }
                for (auto [sch, mb] : pipes)
                  for (auto [rc, every] : recomputes)
                    for (Float8 f8 : float8s)
                      for (FusionBackend be : backends) {
                        PlanSetup p;
                        p.dpReplicate = rep, p.dpShard = shard, p.tp = tp, p.pp = pp, p.cp = cp, p.ep = ep;
                        p.batch = static_cast<unsigned>(batch);
                        p.microbatches = mb;
                        p.ppSchedule = sch;
                        p.recompute = rc;
                        p.recomputeEvery = every;
                        p.float8 = f8;
                        p.backend = be;
                        p.target = target;
                        p.gpus = gpus;
                        bool kept = true;
                        for (const auto &[key, value] : fix)
                          kept = kept && planSetupValue(p, key) == value;
                        if (kept)
                          space.setups.push_back(std::move(p));
                      }
              }
            }
          }
        }
      }
    }
  }
  return space;
}

}  // namespace graphlint
