// `graphlint plan` (docs/plan.md): plan and lint agree on every number of a
// candidate, pruning is exactly GL201's verdict, the JSON contract, --fix,
// the launch config read back as the same setup, and bad input as one line
// with exit 2. The model is tests/fixtures/fx/tiny_llama.train.fx.json (a
// 4-layer Llama, 8 heads, 4 KV heads; tiny_llama.py).
#include "TestSupport.h"

#include "graphlint/engine/LaunchConfig.h"
#include "graphlint/engine/Plan.h"

#include <gtest/gtest.h>

#include <llvm/Support/JSON.h>

#include <set>

using namespace graphlint;
using namespace graphlint::test;

namespace {

std::string tinyLlama() { return sourcePath("tests/fixtures/fx/tiny_llama.train.fx.json"); }

// The plan's JSON; fails the test when it is not JSON.
llvm::json::Object planJson(const std::vector<std::string> &args, const std::vector<std::string> &env = {}) {
  std::vector<std::string> all{"plan", tinyLlama(), "--format", "json", "-j", "2"};
  all.insert(all.end(), args.begin(), args.end());
  CliResult r = runCliTimed(all, 300, env);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  auto v = llvm::json::parse(r.out);
  if (!v) {
    ADD_FAILURE() << llvm::toString(v.takeError()) << "\n" << r.out.substr(0, 400);
    return {};
  }
  return std::move(*v->getAsObject());
}

std::vector<std::string> strings(const llvm::json::Array *a) {
  std::vector<std::string> out;
  if (a)
    for (const llvm::json::Value &v : *a)
      out.push_back(v.getAsString()->str());
  return out;
}

// lint's JSON file entry for the same model under `flags`.
llvm::json::Object lintJson(const std::vector<std::string> &flags, const std::vector<std::string> &env = {}) {
  std::vector<std::string> all{tinyLlama(), "--format", "json", "--exit-zero"};
  all.insert(all.end(), flags.begin(), flags.end());
  CliResult r = runCliTimed(all, 120, env);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  auto v = llvm::json::parse(r.out);
  if (!v) {
    ADD_FAILURE() << llvm::toString(v.takeError());
    return {};
  }
  return std::move(*(*v->getAsObject()->getArray("files"))[0].getAsObject());
}

// A hardware file with a 1.25 GiB GPU, so that some setups of the tiny
// model do not fit.
std::string smallGpuFile() {
  std::string dir = tempDir(), hw = dir + "/hw.yaml";
  writeFile(hw, "profiles:\n"
                "  - name: TINY-1GB\n"
                "    sm_count: 8\n"
                "    memory_gib: 1.25\n"
                "    memory_bandwidth_gb_per_s: 200\n"
                "    peak_tflops: { fp32: 10, bf16: 40 }\n"
                "    usd_per_gpu_hour: 0.25\n"
                "    intra_node: pcie4\n"
                "    inter_node: hdr\n");
  return hw;
}

}  // namespace

// For candidates of every kind (the top pick, a pipeline, eager, float8,
// one that does not fit), `graphlint MODEL <base flags> <its lint_flags>`
// predicts the very same peak reserved bytes and step time.
TEST(PlanCli, AgreesWithLintOnEveryNumber) {
  llvm::json::Object plan = planJson({"--gpus", "4", "--global-batch", "8", "-D", "seq=512"});
  std::vector<std::string> base = strings(plan.getArray("base_flags"));
  EXPECT_EQ(base, (std::vector<std::string>{"--train", "--precision", "bf16-mixed", "--optimizer", "adamw", "-D",
                                            "seq=512"}));
  const llvm::json::Array &cands = *plan.getArray("candidates");
  ASSERT_GT(cands.size(), 100u);
  std::vector<const llvm::json::Object *> picked;
  auto pick = [&](auto pred) {
    for (const llvm::json::Value &v : cands)
      if (pred(*v.getAsObject())) {
        picked.push_back(v.getAsObject());
        return;
      }
  };
  pick([](const llvm::json::Object &c) { return true; });
  pick([](const llvm::json::Object &c) { return *c.getObject("setup")->getInteger("pp") > 1; });
  pick([](const llvm::json::Object &c) { return *c.getObject("setup")->getString("backend") == "eager"; });
  pick([](const llvm::json::Object &c) { return *c.getObject("setup")->getString("float8") == "rowwise"; });
  pick([](const llvm::json::Object &c) { return *c.getObject("setup")->getInteger("tp") > 1; });
  ASSERT_EQ(picked.size(), 5u);
  for (const llvm::json::Object *c : picked) {
    std::vector<std::string> flags = base, own = strings(c->getArray("lint_flags"));
    flags.insert(flags.end(), own.begin(), own.end());
    llvm::json::Object lint = lintJson(flags);
    std::string shown;
    for (const std::string &f : own)
      shown += f + " ";
    EXPECT_EQ(*lint.getObject("memory")->getInteger("peak_reserved_bytes"), *c->getInteger("peak_reserved_bytes"))
        << shown;
    ASSERT_TRUE(c->getNumber("step_time_s")) << shown;
    EXPECT_EQ(*lint.getObject("communication")->getNumber("step_time_s"), *c->getNumber("step_time_s")) << shown;
    EXPECT_EQ(*lint.getObject("communication")->getNumber("tokens_per_second_per_gpu"),
              *c->getNumber("tokens_per_second_per_gpu"))
        << shown;
  }
}

// A candidate fits exactly when lint does not report GL201 for it; what does
// not fit says where the peak is, and is never timed.
TEST(PlanCli, PrunesExactlyWhatGl201Reports) {
  std::string hw = smallGpuFile();
  llvm::json::Object plan =
      planJson({"--target", "TINY-1GB", "--gpus", "1,2", "--global-batch", "8", "-D", "seq=4096"},
               {"GRAPHLINT_HARDWARE_FILE=" + hw});
  std::vector<std::string> base = strings(plan.getArray("base_flags"));
  const llvm::json::Array &cands = *plan.getArray("candidates");
  const llvm::json::Object *fits = nullptr, *misfit = nullptr;
  bool seenMisfit = false;
  for (const llvm::json::Value &v : cands) {
    const llvm::json::Object &c = *v.getAsObject();
    double need = *c.getInteger("peak_reserved_bytes") + *c.getNumber("margin_bytes");
    if (*c.getBoolean("fits")) {
      EXPECT_FALSE(seenMisfit) << "every fitting candidate comes before the first that does not fit";
      EXPECT_LE(need, *c.getNumber("capacity_bytes"));
      EXPECT_EQ(c.get("reason")->kind(), llvm::json::Value::Null);
      fits = fits ? fits : &c;
    } else {
      seenMisfit = true;
      EXPECT_GT(need, *c.getNumber("capacity_bytes"));
      EXPECT_EQ(c.get("step_time_s")->kind(), llvm::json::Value::Null);
      EXPECT_TRUE(c.getString("reason")->contains("peak at the")) << c.getString("reason")->str();
      EXPECT_TRUE(c.getString("reason")->contains("largest live:"));
      misfit = misfit ? misfit : &c;
    }
  }
  ASSERT_TRUE(fits && misfit) << "the 1.25 GiB GPU should split the space";
  auto gl201 = [&](const llvm::json::Object &c) {
    std::vector<std::string> flags = base, own = strings(c.getArray("lint_flags"));
    flags.insert(flags.end(), own.begin(), own.end());
    llvm::json::Object lint = lintJson(flags, {"GRAPHLINT_HARDWARE_FILE=" + hw});
    EXPECT_EQ(*lint.getObject("memory")->getInteger("peak_reserved_bytes"), *c.getInteger("peak_reserved_bytes"));
    for (const llvm::json::Value &d : *lint.getArray("diagnostics"))
      if (*d.getAsObject()->getString("code") == "GL201")
        return true;
    return false;
  };
  EXPECT_FALSE(gl201(*fits));
  EXPECT_TRUE(gl201(*misfit));
}

// The contract other tools read: candidates[] best first, each with the
// launch-scale setup keys and the figures; evaluated counts them all.
TEST(PlanCli, JsonContract) {
  llvm::json::Object plan = planJson({"--target", "H100-SXM,L4", "--gpus", "2", "--global-batch", "4"});
  const llvm::json::Array &cands = *plan.getArray("candidates");
  EXPECT_EQ(*plan.getInteger("evaluated"), static_cast<int64_t>(cands.size()));
  std::set<std::string> keys;
  for (const auto &kv : *cands[0].getAsObject()->getObject("setup"))
    keys.insert(kv.first.str());
  EXPECT_EQ(keys, (std::set<std::string>{"dp_replicate", "dp_shard", "tp", "pp", "cp", "ep", "batch", "microbatches",
                                         "pp_schedule", "recompute", "float8", "backend", "target", "gpus"}));
  for (const char *k : {"fits", "reason", "peak_reserved_bytes", "step_time_s", "tokens_per_second_per_gpu",
                        "usd_per_million_tokens"})
    EXPECT_TRUE(cands[0].getAsObject()->get(k)) << k;
  // Best first: the cost objective's $ per million tokens never decreases.
  double last = 0;
  std::set<std::string> targets;
  for (const llvm::json::Value &v : cands) {
    const llvm::json::Object &c = *v.getAsObject();
    targets.insert(c.getObject("setup")->getString("target")->str());
    if (!*c.getBoolean("fits"))
      continue;
    double usd = *c.getNumber("usd_per_million_tokens");
    EXPECT_GE(usd, last * (1 - 1e-12));
    last = usd;
    const llvm::json::Object &s = *c.getObject("setup");
    EXPECT_EQ(*s.getInteger("dp_replicate") * *s.getInteger("dp_shard") * *s.getInteger("tp") * *s.getInteger("pp") *
                  *s.getInteger("cp"),
              *s.getInteger("gpus"));
    EXPECT_EQ(*s.getInteger("batch") * *s.getInteger("dp_replicate") * *s.getInteger("dp_shard"), 4);
  }
  EXPECT_EQ(targets, (std::set<std::string>{"H100-SXM", "L4"}));
  const llvm::json::Object *launch = plan.getObject("launch");
  ASSERT_TRUE(launch);
  EXPECT_TRUE(launch->getString("torchrun")->contains("torchrun --nnodes 1 --nproc-per-node 2"));
}

// --target GPU:N gives one target its own GPU counts (8 H100 vs 16 L4).
TEST(PlanCli, TargetsWithTheirOwnGpuCounts) {
  llvm::json::Object plan = planJson({"--target", "H100-SXM:2,L4:4", "--gpus", "8", "--global-batch", "4", "--fix",
                                      "recompute=none", "--fix", "backend=eager"});
  std::set<std::pair<std::string, int64_t>> seen;
  for (const llvm::json::Value &v : *plan.getArray("candidates")) {
    const llvm::json::Object &s = *v.getAsObject()->getObject("setup");
    seen.insert({s.getString("target")->str(), *s.getInteger("gpus")});
  }
  EXPECT_EQ(seen, (std::set<std::pair<std::string, int64_t>>{{"H100-SXM", 2}, {"L4", 4}}));
}

TEST(PlanCli, FixPinsKeys) {
  llvm::json::Object plan = planJson({"--gpus", "4", "--global-batch", "8", "--fix", "tp=2", "--fix", "recompute=full",
                                      "--fix", "backend=eager"});
  const llvm::json::Array &cands = *plan.getArray("candidates");
  ASSERT_FALSE(cands.empty());
  for (const llvm::json::Value &v : cands) {
    const llvm::json::Object &s = *v.getAsObject()->getObject("setup");
    EXPECT_EQ(*s.getInteger("tp"), 2);
    EXPECT_EQ(*s.getString("recompute"), "layer");  // full is layer's alias
    EXPECT_EQ(*s.getString("backend"), "eager");
  }
}

// A pipeline cuts between repeated layers: the 4-layer model gets at most 4
// stages on 8 GPUs (the space once counted the graph's nodes as its layers
// and offered pp 8 to a 2-layer GPT).
TEST(PlanCli, NoMorePipelineStagesThanLayers) {
  llvm::json::Object plan = planJson({"--gpus", "8", "--global-batch", "8", "--fix", "recompute=none", "--fix",
                                      "backend=eager", "--fix", "float8=none"});
  const llvm::json::Array &cands = *plan.getArray("candidates");
  ASSERT_FALSE(cands.empty());
  int64_t most = 0;
  for (const llvm::json::Value &v : cands)
    most = std::max(most, *v.getAsObject()->getObject("setup")->getInteger("pp"));
  EXPECT_EQ(most, 4);
}

// An ONNX file whose seq stays symbolic costs nothing that depends on it:
// the plan says its numbers are lower bounds and names the symbol.
TEST(PlanCli, UnboundSizesAreNamed) {
  const std::vector<std::string> base{"plan", sourcePath("models/gpt_tiny.onnx"), "--gpus", "2", "--global-batch",
                                      "2", "--fix", "recompute=none", "--fix", "backend=eager", "--fix",
                                      "float8=none", "--fix", "tp=1", "--top", "1"};
  CliResult unbound = runCliTimed(base, 300);
  EXPECT_EQ(unbound.exitCode, 0) << unbound.err;
  EXPECT_NE(unbound.out.find("size symbol(s) seq not bound"), std::string::npos) << unbound.out;
  std::vector<std::string> bound = base;
  bound.insert(bound.end(), {"-D", "seq=32"});
  CliResult r = runCliTimed(bound, 300);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out.find("not bound"), std::string::npos) << r.out;
}

TEST(PlanCli, TextReportAndParetoChart) {
  std::string dir = tempDir(), svg = dir + "/front.svg";
  CliResult r = runCliTimed({"plan", tinyLlama(), "--gpus", "2", "--global-batch", "4", "--top", "3", "-j", "2",
                             "--pareto", svg},
                            300);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("candidates evaluated on H100-SXM x 2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("runner-up loses by"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("top pick, as lint predicts it"), std::string::npos);
  EXPECT_NE(r.out.find("torchrun --nnodes 1 --nproc-per-node 2 -m torchtitan.train"), std::string::npos);
  EXPECT_NE(r.out.find("data_parallel_shard_degree = "), std::string::npos);
  std::string chart = readFile(svg);
  EXPECT_EQ(chart.rfind("<svg", 0), 0u);
  EXPECT_NE(chart.find("Pareto front"), std::string::npos);
  // The output guard: the chart may not overwrite the model.
  std::string model = dir + "/m.fx.json";
  writeFile(model, readFile(tinyLlama()));
  CliResult guarded = runCliTimed({"plan", model, "--gpus", "1", "--pareto", model}, 120);
  EXPECT_EQ(guarded.exitCode, 2);
  EXPECT_NE(guarded.err.find("refusing to write --pareto"), std::string::npos) << guarded.err;
  EXPECT_EQ(readFile(model), readFile(tinyLlama()));
}

// Every mistake is one line on stderr (and the usual hint after a usage
// error) and exit 2, before any work.
TEST(PlanCli, BadInputIsOneLineAndExit2) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  std::string model = tinyLlama();
  std::vector<Case> cases = {
      {{"plan", model, "--fix", "tpp=2"}, "graphlint: --fix: unknown key 'tpp'"},
      {{"plan", model, "--fix", "tp=two"}, "graphlint: --fix tp expects an integer from 1 to"},
      {{"plan", model, "--fix", "recompute=most"}, "graphlint: --fix recompute: --recompute must be one of"},
      {{"plan", model, "--fix", "tp"}, "graphlint: --fix expects KEY=VALUE, got 'tp'"},
      {{"plan", model, "--gpus", "0"}, "graphlint: --gpus expects an integer from 1 to"},
      {{"plan", model, "--gpus", "16..8"}, "graphlint: --gpus 16..8: the range is empty"},
      {{"plan", model, "--gpus", "8", "--max-gpus", "8"}, "graphlint: --gpus and --max-gpus cannot be combined"},
      {{"plan", model, "--objective", "fast"}, "graphlint: --objective must be one of time, cost, tokens-per-dollar"},
      {{"plan", model, "--global-batch", "lots"}, "graphlint: --global-batch expects a number of samples"},
      {{"plan", model, "--target", "H100-SXM,Z9"}, "graphlint: --target: "},
      {{"plan", model, "-D", "batch=4"}, "graphlint: plan searches the per-rank batch"},
      {{"plan", model, "--tp", "2"}, "graphlint: --tp is not an option of 'graphlint plan' (it takes --target,"},
      {{"plan", model, model}, "graphlint: plan expects exactly one MODEL"},
      {{"plan", model, "--gpus", "3", "--global-batch", "2"}, ": error: no candidate setup:"},
      {{"plan", model, "--global-batch", "100tokens", "-D", "seq=64"}, ": error: --global-batch 100 tokens is not a"},
      {{"plan", sourcePath("tests/fixtures/fx/joint_mlp.train.fx.json")}, ": error: the model has no size symbol 'batch'"},
      {{"plan", "/nonexistent/model.fx.json"}, "/nonexistent/model.fx.json: error: "},
  };
  for (const Case &c : cases) {
    CliResult r = runCliTimed(c.args, 120);
    EXPECT_EQ(r.exitCode, 2) << c.message << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    std::string first = r.err.substr(0, r.err.find('\n'));
    EXPECT_TRUE(r.err.size() == first.size() + 1 || r.err.substr(first.size() + 1) == "Try 'graphlint --help'.\n")
        << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

// planLaunch's TOML, read back by --launch-config's torchtitan mapping,
// resolves to the setup it was written for.
TEST(PlanLaunch, TorchtitanTomlReadsBackAsTheSameSetup) {
  graphlint::Setup base;
  base.train = true;
  base.precision = Precision::BF16Mixed;
  base.optimizer = Optimizer::AdamW;
  base.dims["seq"] = 8192;
  std::vector<PlanSetup> setups(4);
  setups[0].dpShard = 8, setups[0].batch = 2, setups[0].recompute = Recompute::SelectiveOp, setups[0].gpus = 8;
  setups[1].dpReplicate = 2, setups[1].dpShard = 4, setups[1].tp = 2, setups[1].pp = 2, setups[1].batch = 8,
  setups[1].microbatches = 4, setups[1].ppSchedule = PipelineSchedule::Interleaved1F1B, setups[1].gpus = 32;
  setups[1].float8 = Float8::Rowwise, setups[1].backend = FusionBackend::Eager;
  setups[2].cp = 4, setups[2].dpShard = 2, setups[2].batch = 1, setups[2].recompute = Recompute::Layer,
  setups[2].gpus = 8;
  setups[3].pp = 4, setups[3].dpShard = 2, setups[3].batch = 16, setups[3].microbatches = 8,
  setups[3].ppSchedule = PipelineSchedule::ZBV, setups[3].recompute = Recompute::SelectiveLayer,
  setups[3].recomputeEvery = 3, setups[3].gpus = 8;
  for (PlanSetup &p : setups) {
    p.target = "H100-SXM";
    PlanLaunch l = planLaunch(p, base);
    auto lc = parseLaunchConfig(l.toml, "plan.toml");
    ASSERT_TRUE(bool(lc)) << llvm::toString(lc.takeError()) << "\n" << l.toml;
    EXPECT_TRUE(lc->warnings.empty()) << lc->warnings.front() << "\n" << l.toml;
    graphlint::Setup read;
    read.target = "H100-SXM";
    ASSERT_FALSE(applySetup(read, lc->layer.setup).has_value()) << l.toml;
    auto want = planSetupOver(base, p);
    ASSERT_TRUE(bool(want)) << llvm::toString(want.takeError());
    EXPECT_EQ(read.mesh.describe(), want->mesh.describe()) << l.toml;
    EXPECT_EQ(read.mesh.worldSize(), p.gpus);
    EXPECT_EQ(read.microbatchCount(), want->microbatchCount()) << l.toml;
    EXPECT_EQ(read.ppSchedule, want->ppSchedule);
    EXPECT_EQ(read.recomputeLabel(), want->recomputeLabel());
    EXPECT_EQ(read.float8, want->float8);
    EXPECT_EQ(read.backend, want->backend);
    EXPECT_EQ(read.precision, want->precision);
    EXPECT_EQ(read.optimizer, want->optimizer);
    EXPECT_EQ(read.dims, want->dims);
  }
}

// Candidates share the model's setup-independent facts (SharedFacts,
// Analysis.h: the fusion plan of a backend, the cost of each kernel on a
// target, the tp sharding, the repeated layers, the recompute segments).
// That changes where they are computed, never a number: every candidate of
// two targets, evaluated on two threads, equals its unshared evaluation.
TEST(PlanEngine, SharedFactsChangeNoNumber) {
  PlanRequest req;
  req.base.train = true;
  req.base.precision = Precision::BF16Mixed;
  req.base.optimizer = Optimizer::AdamW;
  req.base.resolveHardware();
  ASSERT_FALSE(req.base.resolveMesh().has_value());
  req.targets = {"H100-SXM", "L4"};
  req.gpus = {2};
  req.globalBatchSamples = 4;
  req.jobs = 2;
  auto shared = runPlan(tinyLlama(), req);
  ASSERT_TRUE(bool(shared)) << llvm::toString(shared.takeError());
  req.shareFacts = false;
  auto alone = runPlan(tinyLlama(), req);
  ASSERT_TRUE(bool(alone)) << llvm::toString(alone.takeError());
  ASSERT_EQ(shared->candidates.size(), alone->candidates.size());
  ASSERT_GT(shared->candidates.size(), 400u);
  for (size_t i = 0; i < shared->candidates.size(); ++i) {
    const PlanCandidate &a = shared->candidates[i], &b = alone->candidates[i];
    ASSERT_EQ(a.setup.describe(), b.setup.describe()) << i;
    EXPECT_EQ(a.peakReservedBytes, b.peakReservedBytes) << a.setup.describe();
    EXPECT_EQ(a.stepTimeS, b.stepTimeS) << a.setup.describe();
    EXPECT_EQ(a.tokensPerSecondPerGpu, b.tokensPerSecondPerGpu) << a.setup.describe();
    EXPECT_EQ(a.exposedCommS, b.exposedCommS) << a.setup.describe();
    EXPECT_EQ(a.reason, b.reason);
  }
}
