// `graphlint plan` (Plan.h): imports the model once per per-rank batch,
// evaluates every candidate of that batch on a thread pool against the one
// read-only Model (memory first; only what fits is timed), and ranks.
#include "graphlint/engine/Plan.h"

#include "PlanSpace.h"

#include "graphlint/analyses/Analysis.h"
#include "graphlint/analyses/MemoryPlan.h"
#include "graphlint/analyses/StepTimeline.h"
#include "graphlint/base/HardwareProfile.h"
#include "graphlint/engine/Driver.h"
#include "graphlint/import/Importer.h"
#include "graphlint/ir/Display.h"
#include "graphlint/ir/MessageText.h"
#include "graphlint/rules/Rule.h"

#include <fmt/format.h>

#include <llvm/Support/ThreadPool.h>
#include <llvm/Support/Threading.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <limits>
#include <map>
#include <mutex>
#include <thread>

namespace graphlint {

namespace {

llvm::Error planError(std::string msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), oneLine(msg));
}

double seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// GL201's allowance for what the memory plan cannot see, read as the rule
// reads it (its options, as the configuration sets them), so that a
// candidate fits exactly when lint would not report GL201 for it.
double gl201Option(const Setup &s, std::string_view option) {
  double fallback = 0;
  if (const Rule *r = findRule("GL201"))
    for (const RuleOptionInfo &o : r->info().options)
      if (o.name == option)
        fallback = o.defaultValue;
  return s.ruleOption("GL201", option, fallback) * (1 << 20);
}

// "at the backward of 'mm_12' on stage 2 (layers.40 .. layers.59); largest
// live: 'addmm_3' (saved, 4.00 GiB)".
std::string whereThePeakIs(const MemorySummary &m) {
  std::string out = fmt::format("peak at the {}{}", m.peakPhase.empty() ? "step" : m.peakPhase,
                                m.peakNode.empty() ? "" : fmt::format(" of '{}'", m.peakNode));
  if (!m.stages.empty()) {
    const MemorySummary::Stage &w = m.stages[m.worstStage];
    out += fmt::format(" on pipeline stage {} of {} ({} .. {})", w.rank, m.stages.size(), w.firstModule,
                       w.lastModule);
  }
  if (!m.topAtPeak.empty()) {
    const MemorySummary::Contributor &c = m.topAtPeak.front();
    std::string name = !c.tensor.empty() ? c.tensor : !c.node.empty() ? c.node : c.kind;
    out += fmt::format("; largest live: '{}' ({}, {})", name, c.kind, formatBytes(static_cast<double>(c.bytes)));
  }
  out += fmt::format("; states: params {}, grads {}, optimizer {}, activations {}",
                     formatBytes(static_cast<double>(m.paramsBytes)), formatBytes(static_cast<double>(m.gradsBytes)),
                     formatBytes(static_cast<double>(m.optimizerBytes)),
                     formatBytes(static_cast<double>(m.activationsBytes)));
  return out;
}

struct Context {
  const Setup *base = nullptr;
  double contextBytes = 0, ncclBytes = 0;
  uint64_t globalBatch = 0;
  double tokensPerSample = 0;
  PlanObjective objective = PlanObjective::Cost;
};

PlanCandidate evaluate(const Model &m, SharedFacts &facts, const Context &cx, const PlanSetup &p) {
  PlanCandidate c;
  c.setup = p;
  auto s = planSetupOver(*cx.base, p);
  if (!s) {
    c.reason = "refused: " + llvm::toString(s.takeError());
    return c;
  }
  // What lint does for the same flags (Driver.cpp lintModel): one context,
  // the memory plan's summary, then the step timeline; the context shares
  // the model's setup-independent facts with the other candidates.
  AnalysisContext ctx(m, *s, &facts);
  const MemorySummary &mem = ctx.get<MemoryPlan>().summary();
  c.peakReservedBytes = mem.peakReservedBytes;
  c.capacityBytes = mem.capacityBytes;
  c.marginBytes = cx.contextBytes + (s->mesh.worldSize() > 1 ? cx.ncclBytes : 0);
  double need = static_cast<double>(c.peakReservedBytes) + c.marginBytes;
  if (c.capacityBytes <= 0) {
    c.reason = fmt::format("{} states no memory capacity", p.target);
    return c;
  }
  if (need > c.capacityBytes) {
    c.reason = fmt::format("needs {} ({} reserved + {} context/NCCL), {} more than the {} of {}: {}",
                           formatBytes(need), formatBytes(static_cast<double>(c.peakReservedBytes)),
                           formatBytes(c.marginBytes), formatBytes(need - c.capacityBytes),
                           formatBytes(c.capacityBytes), p.target, whereThePeakIs(mem));
    return c;
  }
  c.fits = true;
  const StepTimeline &st = ctx.get<StepTimeline>();
  if (!st.active() || !(st.stepSeconds() > 0)) {
    c.reason = "no step time (needs --train and a known target)";
    return c;
  }
  c.timed = true;
  c.stepTimeS = st.stepSeconds();
  c.mfu = st.mfu();
  c.commS = st.commSeconds();
  c.exposedCommS = st.exposedSeconds();
  c.bubbleS = st.bubbleSeconds();
  // The rest of the step: this rank's forward, backward and optimizer as
  // the step timeline lays them out (a pipeline stage's share under pp).
  c.computeS = std::max(0.0, c.stepTimeS - c.exposedCommS - c.bubbleS);
  c.tokensPerSecondPerGpu = st.tokensPerSecondPerGpu().value_or(0);
  const HardwareProfile *hw = s->targetProfile();
  if (hw && hw->usdPerGpuHour) {
    c.usdPerGpuHour = *hw->usdPerGpuHour;
    if (c.tokensPerSecondPerGpu > 0)
      c.usdPerMillionTokens = *c.usdPerGpuHour / 3600.0 / c.tokensPerSecondPerGpu * 1e6;
  }
  // Every candidate steps the same global batch: samples per second over
  // all GPUs ranks by time, dollars per step by cost.
  double perSecond = static_cast<double>(cx.globalBatch) / c.stepTimeS;
  if (cx.objective == PlanObjective::Time)
    c.score = perSecond;
  else
    c.score = c.usdPerGpuHour ? -(*c.usdPerGpuHour * p.gpus * c.stepTimeS) : -std::numeric_limits<double>::infinity();
  return c;
}

std::string usd(double v) { return v >= 100 ? fmt::format("${:.0f}", v) : fmt::format("${:.4g}", v); }

// The keys in which two setups differ: "tp 2 (best 1), recompute layer (best none)".
std::string differences(const PlanSetup &a, const PlanSetup &best) {
  std::string out;
  for (std::string_view k : planSetupKeys()) {
    std::string x = planSetupValue(a, k), y = planSetupValue(best, k);
    if (x != y)
      out += fmt::format("{}{} {} (top: {})", out.empty() ? "" : ", ", k, x, y);
  }
  return out;
}

std::string runnerUpLine(const PlanCandidate &top, const PlanCandidate &next, PlanObjective o, uint64_t globalBatch) {
  std::string by;
  if (o == PlanObjective::Time) {
    by = fmt::format("{:.4g} vs {:.4g} samples/s overall ({:.2f}% slower)", globalBatch / next.stepTimeS,
                     globalBatch / top.stepTimeS, 100.0 * (top.score - next.score) / top.score);
  } else if (next.usdPerMillionTokens && top.usdPerMillionTokens) {
    double a = *next.usdPerMillionTokens, b = *top.usdPerMillionTokens;
    by = fmt::format("{} vs {} per million tokens ({:.2f}% dearer)", usd(a), usd(b), 100.0 * (a - b) / b);
  } else if (next.usdPerGpuHour && top.usdPerGpuHour) {
    // Dollars per step: every candidate steps the same global batch.
    double a = *next.usdPerGpuHour / 3600 * next.setup.gpus * next.stepTimeS,
           b = *top.usdPerGpuHour / 3600 * top.setup.gpus * top.stepTimeS;
    by = fmt::format("{} vs {} per step ({:.2f}% dearer)", usd(a), usd(b), 100.0 * (a - b) / b);
  } else {
    by = "no price for its target";
  }
  auto ms = [](double s) { return s >= 1e-3 || s == 0 ? fmt::format("{:.0f} ms", s * 1e3) : fmt::format("{:.3g} us", s * 1e6); };
  return fmt::format("runner-up loses by {}: step {} vs {} (compute {} vs {}, exposed communication {} vs {}, "
                     "pipeline bubble {} vs {}); it differs from the top pick in {}",
                     by, ms(next.stepTimeS), ms(top.stepTimeS), ms(next.computeS), ms(top.computeS),
                     ms(next.exposedCommS), ms(top.exposedCommS), ms(next.bubbleS), ms(top.bubbleS),
                     differences(next.setup, top.setup));
}

}  // namespace

std::vector<size_t> paretoFront(const PlanResult &r) {
  std::vector<size_t> fit;
  for (size_t i = 0; i < r.candidates.size(); ++i)
    if (r.candidates[i].timed)
      fit.push_back(i);
  std::stable_sort(fit.begin(), fit.end(), [&](size_t a, size_t b) {
    const PlanCandidate &x = r.candidates[a], &y = r.candidates[b];
    if (x.peakReservedBytes != y.peakReservedBytes)
      return x.peakReservedBytes < y.peakReservedBytes;
    return x.tokensPerSecondPerGpu > y.tokensPerSecondPerGpu;
  });
  std::vector<size_t> front;
  double best = -1;
  for (size_t i : fit)
    if (r.candidates[i].tokensPerSecondPerGpu > best) {
      best = r.candidates[i].tokensPerSecondPerGpu;
      front.push_back(i);
    }
  return front;
}

llvm::Expected<PlanResult> runPlan(const std::string &modelPath, const PlanRequest &reqIn) {
  PlanRequest req = reqIn;
  PlanResult r;
  r.objective = req.objective;
  PlanFixes fix;
  for (const auto &[key, value] : req.fixed) {
    std::string v = value;
    if (auto err = checkPlanFix(key, v))
      return planError(*err);
    if (auto it = fix.find(key); it != fix.end() && it->second != v)
      return planError(fmt::format("--fix {} is given twice ({} and {})", key, it->second, v));
    fix[key] = v;
  }
  if (auto it = fix.find("target"); it != fix.end())
    req.targets = {it->second};
  if (req.targets.empty()) {
    const HardwareProfile *hw = req.base.targetProfile();
    req.targets = {hw ? hw->name : req.base.target};
  }
  if (auto it = fix.find("gpus"); it != fix.end()) {
    req.gpus = {static_cast<unsigned>(std::stoul(it->second))};
    req.gpusOf.clear();
  }
  if (req.gpus.empty())
    req.gpus = {std::max(1u, req.base.gpusPerNode)};
  std::sort(req.gpus.begin(), req.gpus.end());
  req.gpus.erase(std::unique(req.gpus.begin(), req.gpus.end()), req.gpus.end());
  unsigned largest = req.gpus.back();
  for (auto &[target, counts] : req.gpusOf) {
    std::sort(counts.begin(), counts.end());
    counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
    if (!counts.empty() && llvm::is_contained(req.targets, target))
      largest = std::max(largest, counts.back());
  }
  if (!req.base.train)
    return planError("plan predicts training steps: give --train (and the --precision and --optimizer of the run)");

  // The first import, at one sample per rank: the facts that bound the space.
  auto started = std::chrono::steady_clock::now();
  ImportOptions io;
  io.dims = req.base.dims;
  io.dims[req.batchSymbol] = 1;
  auto first = importModelFile(modelPath, io);
  if (!first)
    return planError(llvm::toString(first.takeError()));
  r.importSeconds += seconds(started);
  ++r.imports;
  const Model &m1 = **first;
  bool hasBatch = std::any_of(m1.symbols.begin(), m1.symbols.end(),
                              [&](const SymbolInfo &s) { return s.name == req.batchSymbol; });
  if (!hasBatch)
    return planError(fmt::format("the model has no size symbol '{}' to set the per-rank batch with (export it with "
                                 "a symbolic batch, e.g. graphlint-export --input ids:int64[batch,seq])",
                                 req.batchSymbol));
  // A size left symbolic (an ONNX file's seq without -D) sizes nothing: the
  // kernels that depend on it have unknown cost, so every step time, tokens/s
  // and price of the ranking is a lower bound.
  std::string unbound;
  for (const SymbolInfo &s : m1.symbols)
    if (s.name != req.batchSymbol && s.kind == SymbolInfo::Kind::Input && s.origin == SymbolInfo::Origin::Unbound)
      unbound += (unbound.empty() ? "" : ", ") + s.name;
  if (!unbound.empty())
    r.notes.push_back(fmt::format("size symbol(s) {} not bound: the kernels that depend on them have unknown cost, "
                                  "so every step time and price below is a lower bound; bind them with -D NAME=SIZE",
                                  unbound));
  r.facts = planModelFacts(m1, 1);
  if (req.globalBatchTokens) {
    double perSample = r.facts.tokensPerSample;
    if (!(perSample > 0))
      return planError("--global-batch in tokens needs [batch, seq] token-id inputs to count the tokens of a sample");
    uint64_t t = static_cast<uint64_t>(perSample);
    if (*req.globalBatchTokens % t)
      return planError(fmt::format("--global-batch {} tokens is not a whole number of {}-token samples",
                                   *req.globalBatchTokens, t));
    r.globalBatchSamples = *req.globalBatchTokens / t;
  } else if (req.globalBatchSamples) {
    r.globalBatchSamples = *req.globalBatchSamples;
  } else {
    r.globalBatchSamples = largest;
    r.notes.push_back(fmt::format("global batch {} samples (one per GPU at {} GPUs; --global-batch sets it)",
                                  r.globalBatchSamples, largest));
  }
  if (r.globalBatchSamples == 0)
    return planError("--global-batch must be at least one sample");

  PlanSpace space = enumeratePlanSpace(req, r.facts, r.globalBatchSamples, fix);
  for (std::string &n : space.notes)
    r.notes.push_back(std::move(n));
  if (space.setups.empty()) {
    std::string fixes;
    for (const auto &[k, v] : fix)
      fixes += fmt::format(" {}={}", k, v);
    return planError(fmt::format("no candidate setup: the GPU counts, a global batch of {} samples{}{} leave "
                                 "none that divides the model and the topology",
                                 r.globalBatchSamples,
                                 fixes.empty() ? "" : " and --fix", fixes));
  }

  Context cx;
  cx.base = &req.base;
  cx.contextBytes = gl201Option(req.base, "context-mib");
  cx.ncclBytes = gl201Option(req.base, "nccl-mib");
  cx.globalBatch = r.globalBatchSamples;
  cx.tokensPerSample = r.facts.tokensPerSample;
  cx.objective = req.objective;
  r.contextBytes = cx.contextBytes;
  r.ncclBytes = cx.ncclBytes;

  // One import per per-rank batch, each with the facts its candidates share
  // (Analysis.h); the next batch is imported on a thread of its own while the
  // pool evaluates this one's candidates, at most two models alive at once.
  struct Group {
    unsigned batch = 1;
    std::vector<size_t> indices;
    std::unique_ptr<Model> model;
    std::unique_ptr<SharedFacts> facts;
    std::string error;
    bool ready = false;
    size_t left = 0;  // candidates not evaluated yet
  };
  std::map<unsigned, std::vector<size_t>> byBatch;
  for (size_t i = 0; i < space.setups.size(); ++i)
    byBatch[space.setups[i].batch].push_back(i);
  std::vector<Group> groups;
  for (auto &[batch, indices] : byBatch) {
    Group g;
    g.batch = batch;
    g.left = indices.size();
    g.indices = std::move(indices);
    groups.push_back(std::move(g));
  }
  std::vector<PlanCandidate> out(space.setups.size());
  unsigned jobs = req.jobs ? req.jobs : llvm::hardware_concurrency().compute_thread_count();
  std::mutex mu;
  std::condition_variable changed;
  size_t done = 0;
  auto evalStart = std::chrono::steady_clock::now();
  std::unique_ptr<Model> owned = std::move(*first);
  std::thread importer([&] {
    for (size_t k = 0; k < groups.size(); ++k) {
      {
        // Import k once group k-2 is done: its model is freed by then.
        std::unique_lock<std::mutex> lock(mu);
        changed.wait(lock, [&] { return k < 2 || groups[k - 2].left == 0; });
      }
      Group &g = groups[k];
      std::unique_ptr<Model> model;
      std::string error;
      double took = 0;
      if (g.batch == 1 && owned) {
        model = std::move(owned);
      } else {
        auto t0 = std::chrono::steady_clock::now();
        ImportOptions bio;
        bio.dims = req.base.dims;
        bio.dims[req.batchSymbol] = g.batch;
        auto imported = importModelFile(modelPath, bio);
        if (imported)
          model = std::move(*imported);
        else
          error = llvm::toString(imported.takeError());
        took = seconds(t0);
      }
      std::lock_guard<std::mutex> lock(mu);
      g.model = std::move(model);
      g.facts = std::make_unique<SharedFacts>();
      g.error = std::move(error);
      g.ready = true;
      r.importSeconds += took;
      r.imports += took > 0;
      changed.notify_all();
    }
  });
  auto one = [&](size_t k, size_t i) {
    Group &g = groups[k];
    {
      std::unique_lock<std::mutex> lock(mu);
      changed.wait(lock, [&] { return g.ready; });
    }
    if (g.model) {
      SharedFacts own;  // unshared: this candidate's alone
      out[i] = evaluate(*g.model, req.shareFacts ? *g.facts : own, cx, space.setups[i]);
    }
    std::unique_ptr<Model> finished;
    std::unique_ptr<SharedFacts> facts;
    {
      std::lock_guard<std::mutex> lock(mu);
      ++done;
      if (req.progress)
        req.progress(done, space.setups.size());
      if (--g.left == 0) {
        finished = std::move(g.model);  // freed outside the lock
        facts = std::move(g.facts);
        changed.notify_all();
      }
    }
  };
  {
    llvm::ThreadPool pool(llvm::hardware_concurrency(std::max(1u, jobs)));
    for (size_t k = 0; k < groups.size(); ++k)
      for (size_t i : groups[k].indices)
        pool.async([&, k, i] { one(k, i); });
    pool.wait();
  }
  importer.join();
  for (const Group &g : groups)
    if (!g.error.empty())
      return planError(g.error);
  r.evaluateSeconds = seconds(evalStart);

  // Rank: what fits by the objective (ties: faster, fewer GPUs, then the
  // enumeration order), then what does not fit, closest to fitting first.
  std::vector<size_t> order(out.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  auto overBy = [](const PlanCandidate &c) {
    return c.capacityBytes > 0 ? (static_cast<double>(c.peakReservedBytes) + c.marginBytes) / c.capacityBytes
                               : std::numeric_limits<double>::infinity();
  };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const PlanCandidate &x = out[a], &y = out[b];
    if (x.timed != y.timed)
      return x.timed;
    if (x.timed) {
      if (x.score != y.score)
        return x.score > y.score;
      if (x.stepTimeS != y.stepTimeS)
        return x.stepTimeS < y.stepTimeS;
      return x.setup.gpus < y.setup.gpus;
    }
    if (x.fits != y.fits)
      return x.fits;
    return overBy(x) < overBy(y);
  });
  r.candidates.reserve(out.size());
  for (size_t i : order)
    r.candidates.push_back(std::move(out[i]));
  r.evaluated = r.candidates.size();
  for (const PlanCandidate &c : r.candidates) {
    r.fitting += c.fits;
    r.timed += c.timed;
  }
  if (r.timed)
    r.launch = planLaunch(r.candidates.front().setup, req.base);
  if (r.timed >= 2)
    r.runnerUp = runnerUpLine(r.candidates[0], r.candidates[1], r.objective, r.globalBatchSamples);
  if (r.objective != PlanObjective::Time)
    for (const std::string &t : req.targets)
      if (const HardwareProfile *hw = HardwareCatalog::instance().find(t); hw && !hw->usdPerGpuHour)
        r.notes.push_back(fmt::format("{} has no usd_per_gpu_hour: its candidates rank after every priced one "
                                      "(docs/hardware.md)",
                                      hw->name));
  return r;
}

}  // namespace graphlint
