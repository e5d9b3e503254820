// graphlint plan MODEL: the setup to launch, searched over targets, GPU
// counts, meshes, micro-batches, schedules, recompute, float8 and backends
// by the engine (src/engine/Plan.cpp), rendered as text, JSON and a Pareto
// SVG (src/report/PlanReport.cpp); docs/plan.md.
#include "Command.h"
#include "SetupFlags.h"
#include "Shared.h"

#include "graphlint/base/HardwareProfile.h"
#include "graphlint/engine/OutputFiles.h"
#include "graphlint/engine/Plan.h"
#include "graphlint/ir/MessageText.h"
#include "graphlint/report/Reporters.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/Process.h>

#include <fmt/format.h>

#include <chrono>

namespace graphlint::cli {

namespace {

constexpr const char *kPlanSection = "PLAN OPTIONS (docs/plan.md)";

// The setup keys plan searches (or takes as its own --target list): no
// setup flag of theirs; --fix KEY=VALUE pins one.
const std::vector<std::string> kSearched = {"target",     "world-size",   "zero",          "dp-replicate",
                                            "dp-shard",   "tp",           "pp",            "cp",
                                            "ep",         "pp-schedule",  "microbatches",  "virtual-stages",
                                            "pp-split-points", "recompute", "float8",      "backend"};

OptionEntry planOption(std::string valueHelp, std::string help, bool file = false) {
  return {nullptr, nullptr, "", std::move(valueHelp), std::move(help), file, false};
}

std::optional<std::string> parseCount(const char *flag, llvm::StringRef text, unsigned &out) {
  unsigned v = 0;
  if (text.trim().getAsInteger(10, v) || v < 1 || v > (1u << 20))
    return fmt::format("{} expects an integer from 1 to {}, got '{}'", flag, 1 << 20, escapedForMessage(text.str()));
  out = v;
  return std::nullopt;
}

// --gpus 8 | 8,16,64 | 8..512 (8, 16, 32, ... 512: doubling).
std::optional<std::string> parseGpus(llvm::StringRef spec, std::vector<unsigned> &out) {
  if (spec.contains("..")) {
    auto [lo, hi] = spec.split("..");
    unsigned a = 0, b = 0;
    if (auto e = parseCount("--gpus", lo, a))
      return e;
    if (auto e = parseCount("--gpus", hi, b))
      return e;
    if (a > b)
      return fmt::format("--gpus {}..{}: the range is empty", a, b);
    for (uint64_t n = a; n <= b; n *= 2)
      out.push_back(static_cast<unsigned>(n));
    return std::nullopt;
  }
  llvm::SmallVector<llvm::StringRef, 8> parts;
  spec.split(parts, ',', -1, false);
  if (parts.empty())
    return std::string("--gpus needs a GPU count, a list (8,16) or a range (8..512)");
  for (llvm::StringRef p : parts) {
    unsigned n = 0;
    if (auto e = parseCount("--gpus", p, n))
      return e;
    out.push_back(n);
  }
  return std::nullopt;
}

// --global-batch 256 (samples) | 256samples | 4Mtokens | 1048576tokens;
// K and M are 1024 and 1024^2 (batch sizes are powers of two).
std::optional<std::string> parseGlobalBatch(llvm::StringRef text, PlanRequest &req) {
  llvm::StringRef t = text.trim();
  bool tokens = t.consume_back("tokens") || t.consume_back("tok");
  if (!tokens)
    t.consume_back("samples");
  uint64_t scale = 1;
  if (t.consume_back("K") || t.consume_back("k"))
    scale = 1024;
  else if (t.consume_back("M") || t.consume_back("m"))
    scale = 1024 * 1024;
  uint64_t v = 0;
  if (t.getAsInteger(10, v) || v < 1 || v > (uint64_t(1) << 40))
    return fmt::format("--global-batch expects a number of samples (256) or tokens (4Mtokens), got '{}'",
                       escapedForMessage(text.str()));
  (tokens ? req.globalBatchTokens : req.globalBatchSamples) = v * scale;
  return std::nullopt;
}

// The command line's setup values as flags, for the lint line of each
// candidate: `--train`, `--precision bf16-mixed`, `-D seq=8192`.
std::vector<std::string> flagsOf(const std::vector<SetupSetting> &settings) {
  std::vector<std::string> out;
  for (const SetupSetting &s : settings) {
    if (s.key->isDims()) {
      out.push_back("-D");
      out.push_back(s.value);
    } else if (s.key->isSwitch()) {
      out.push_back(std::string("--") + s.key->flagName() + (s.value == "true" ? "" : "=false"));
    } else {
      out.push_back(std::string("--") + s.key->flagName());
      out.push_back(s.value);
    }
  }
  return out;
}

/// "[412/1200] evaluating setups" on stderr, rewritten in place while stderr
/// is a terminal; erased at the end.
class PlanProgress {
public:
  PlanProgress() : on_(llvm::errs().is_displayed()) {}
  ~PlanProgress() {
    if (on_ && shown_)
      llvm::errs() << "\r\x1b[K";
    llvm::errs().flush();
  }
  std::function<void(size_t, size_t)> callback() {
    if (!on_)
      return {};
    return [this](size_t done, size_t total) {
      auto now = std::chrono::steady_clock::now();
      if (done != total && now - last_ < std::chrono::milliseconds(100))
        return;
      last_ = now;
      unsigned width = 30, filled = static_cast<unsigned>(width * done / std::max<size_t>(1, total));
      llvm::errs() << "\r\x1b[K[" << std::string(filled, '#') << std::string(width - filled, '.') << "] " << done
                   << "/" << total << " setups";
      llvm::errs().flush();
      shown_ = true;
    };
  }

private:
  bool on_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_{};
};

class Plan : public Command {
public:
  Plan()
      : Command("plan", "[OPTIONS] MODEL", "the cheapest setup that fits: mesh, batch, recompute, GPUs", kPlanSection) {
    alias(output_, "o", false);
    alias(jobs_, "j", true);
  }

  int run() override;

private:
  std::optional<std::string> checkFlags(SessionOptions &so, PlanRequest &req, unsigned &top) const;

  cl::opt<std::string> &targets_ = add<cl::opt<std::string>>(
      planOption("GPU[:N][,GPU...]",
                 "target GPUs to compare (default H100-SXM, or the\n"
                 "config's target), e.g. H100-SXM,A100-80GB,L4;\n"
                 "names as --target takes them (docs/hardware.md);\n"
                 "GPU:N (L4:16, L4:8|16) gives a target its own GPU\n"
                 "counts instead of --gpus"),
      "target");
  cl::opt<std::string> &gpus_ = add<cl::opt<std::string>>(
      planOption("N|N,M|A..B",
                 "GPU counts to consider: one, a list, or a range\n"
                 "doubling from A to B (8..512: 8, 16, ..., 512);\n"
                 "default one node (--gpus-per-node, 8)"),
      "gpus");
  cl::opt<std::string> &maxGpus_ = add<cl::opt<std::string>>(
      planOption("N", "GPU counts 1, 2, 4, ... up to N (instead of --gpus)"), "max-gpus");
  cl::opt<std::string> &globalBatch_ = add<cl::opt<std::string>>(
      planOption("SAMPLES|Ntokens",
                 "the global batch every setup keeps: samples (256)\n"
                 "or tokens (4Mtokens, 1048576tokens; K, M = 1024,\n"
                 "1024^2); default one sample per GPU at the largest\n"
                 "GPU count"),
      "global-batch");
  cl::opt<std::string> &objective_ = add<cl::opt<std::string>>(
      planOption("time|cost|tokens-per-dollar",
                 "rank by time (most tokens/s over all GPUs), cost\n"
                 "(least $ per million tokens, the default) or\n"
                 "tokens-per-dollar (cost's order)"),
      "objective", cl::init("cost"));
  cl::list<std::string> &fix_ = add<cl::list<std::string>>(
      planOption("KEY=VALUE",
                 "pin one key of the setup (repeatable): dp_replicate,\n"
                 "dp_shard, tp, pp, cp, ep, batch, microbatches,\n"
                 "pp_schedule, recompute, float8, backend, target,\n"
                 "gpus; e.g. --fix tp=8 --fix recompute=selective-op"),
      "fix");
  cl::opt<std::string> &top_ = add<cl::opt<std::string>>(
      planOption("K", "show the best K setups, and the K closest that do\nnot fit (default 5)"), "top");
  cl::opt<std::string> &format_ = add<cl::opt<std::string>>(
      planOption("text|json", "text (default) or the JSON contract: candidates[],\nbest first, and evaluated"),
      "format", cl::init("text"));
  cl::opt<std::string> &output_ = add<cl::opt<std::string>>(
      planOption("FILE", "write the report to FILE instead of stdout", true), "output");
  cl::opt<std::string> &pareto_ = add<cl::opt<std::string>>(
      planOption("FILE.svg", "draw peak memory vs tokens/s/GPU of every setup\nthat fits, the Pareto front marked", true),
      "pareto");
  cl::opt<std::string> &jobs_ = add<cl::opt<std::string>>(
      planOption("N", "evaluate N setups in parallel (default: number of\ncores); a progress bar shows on a terminal"),
      "jobs");
  SetupFlags setup_{*this, kSearched};
  cl::list<std::string> &files_ = positional("MODEL");
};

std::optional<std::string> Plan::checkFlags(SessionOptions &so, PlanRequest &req, unsigned &top) const {
  if (auto err = readSetup(*this, setup_, so))
    return err;
  if (files_.size() != 1)
    return std::string("plan expects exactly one MODEL");
  for (const SetupSetting &s : so.commandLine.setup)
    if (s.key->isDims() && llvm::StringRef(s.value).startswith("batch="))
      return std::string("plan searches the per-rank batch: give --global-batch, or --fix batch=N, not -D batch");
  // torchtitan's defaults for what the command line does not say: a
  // training step, bf16 mixed precision, AdamW (docs/plan.md).
  auto given = [&](const char *key) {
    return llvm::any_of(so.commandLine.setup, [&](const SetupSetting &s) { return llvm::StringRef(s.key->key) == key; });
  };
  std::vector<SetupSetting> defaults;
  for (auto [key, value] : {std::pair{"train", "true"}, {"precision", "bf16-mixed"}, {"optimizer", "adamw"}})
    if (!given(key))
      defaults.push_back({findSetupKey(key), value});
  so.commandLine.setup.insert(so.commandLine.setup.begin(), defaults.begin(), defaults.end());
  if (targets_.getNumOccurrences()) {
    llvm::SmallVector<llvm::StringRef, 8> parts;
    llvm::StringRef(targets_).split(parts, ',', -1, false);
    if (parts.empty())
      return std::string("--target needs a GPU name or a list, e.g. H100-SXM,A100-80GB");
    for (llvm::StringRef p : parts) {
      // TARGET or TARGET:GPUS (L4:16, L4:8|16: that target's own counts).
      auto [name, counts] = p.trim().split(':');
      auto hw = resolveHardwareTarget(std::string_view(name.data(), name.size()));
      if (!hw)
        return "--target: " + oneLine(llvm::toString(hw.takeError()));
      if (!llvm::is_contained(req.targets, hw->name))
        req.targets.push_back(hw->name);
      if (p.contains(':')) {
        llvm::SmallVector<llvm::StringRef, 4> each;
        counts.split(each, '|', -1, false);
        if (each.empty())
          return fmt::format("--target {}: expects GPU counts after ':', e.g. {}:16", escapedForMessage(p.str()),
                             hw->name);
        for (llvm::StringRef c : each) {
          unsigned n = 0;
          if (auto err = parseCount("--target GPU:N", c, n))
            return err;
          req.gpusOf[hw->name].push_back(n);
        }
      }
    }
  }
  if (gpus_.getNumOccurrences() && maxGpus_.getNumOccurrences())
    return std::string("--gpus and --max-gpus cannot be combined");
  if (gpus_.getNumOccurrences())
    if (auto err = parseGpus(gpus_, req.gpus))
      return err;
  if (maxGpus_.getNumOccurrences()) {
    unsigned n = 0;
    if (auto err = parseCount("--max-gpus", maxGpus_, n))
      return err;
    for (uint64_t g = 1; g <= n; g *= 2)
      req.gpus.push_back(static_cast<unsigned>(g));
  }
  if (globalBatch_.getNumOccurrences())
    if (auto err = parseGlobalBatch(globalBatch_, req))
      return err;
  auto objective = planObjectiveFromName(std::string_view(objective_.getValue()));
  if (!objective)
    return fmt::format("--objective must be one of time, cost, tokens-per-dollar, got '{}'",
                       escapedForMessage(objective_.getValue()));
  req.objective = *objective;
  for (const std::string &f : fix_) {
    auto [key, value] = llvm::StringRef(f).split('=');
    if (key.size() == f.size() || key.empty())
      return fmt::format("--fix expects KEY=VALUE, got '{}'", escapedForMessage(f));
    std::string v = value.str();
    if (auto err = checkPlanFix(key.str(), v))
      return err;
    req.fixed.push_back({key.str(), v});
  }
  top = 5;
  if (top_.getNumOccurrences())
    if (auto err = parseCount("--top", top_, top))
      return err;
  if (jobs_.getNumOccurrences())
    if (auto err = parseCount("--jobs", jobs_, req.jobs))
      return err;
  if (format_ != "text" && format_ != "json")
    return std::string("plan: --format must be text or json");
  return std::nullopt;
}

int Plan::run() {
  SessionOptions so;
  PlanRequest req;
  unsigned top = 5;
  if (auto err = checkFlags(so, req, top))
    return usage(*err);
  std::vector<std::string> baseFlags = flagsOf(so.commandLine.setup);
  const std::string &file = files_[0];
  LintSession session(std::move(so));
  auto config = session.configFor(file);
  if (!config)
    return fail(llvm::toString(config.takeError()));
  req.base = config->setup;
  const std::string &output = output_, &pareto = pareto_;
  if (!outputsAllowed(session.inputs({file}), {{output, "--output"}, {pareto, "--pareto"}}))
    return 2;
  auto opened = openReportFile(output);
  if (!opened)
    return fail(llvm::toString(opened.takeError()));
  std::unique_ptr<AtomicOutput> out = std::move(*opened);
  auto started = std::chrono::steady_clock::now();
  llvm::Expected<PlanResult> result = [&] {
    PlanProgress progress;
    req.progress = progress.callback();
    return runPlan(file, req);
  }();
  if (!result) {
    llvm::errs() << oneLine(file) << ": error: " << oneLine(llvm::toString(result.takeError())) << "\n";
    return 2;
  }
  if (llvm::errs().is_displayed()) {
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    llvm::errs() << fmt::format("graphlint plan: {} setups in {:.1f} s ({:.0f}/s; {} imports)\n", result->evaluated, s,
                                result->evaluated / std::max(s, 1e-9), result->imports);
  }
  llvm::raw_ostream &os = out ? out->os() : llvm::outs();
  std::string shown = oneLine(file);
  if (format_ == "json")
    os << llvm::formatv("{0:2}", planToJson(*result, shown, baseFlags)) << "\n";
  else
    renderPlanText(*result, shown, top, baseFlags, os);
  os.flush();
  if (out)
    if (llvm::Error e = out->commit())
      return fail(llvm::toString(std::move(e)));
  if (!pareto.empty() &&
      !writeOutputFile(pareto, [&](llvm::raw_ostream &svg) { renderParetoSvg(*result, shown, svg); }))
    return 2;
  return 0;
}

}  // namespace

Command &planCommand() {
  static Plan c;
  return c;
}

}  // namespace graphlint::cli
