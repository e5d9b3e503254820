// `graphlint plan`'s outputs (docs/plan.md): the text table of the top
// setups with why the runner-up lost, the closest setups that do not fit and
// the launch line of the top pick; the JSON contract (`candidates[]`, best
// first, and `evaluated`); and the memory-vs-throughput Pareto front as an
// SVG chart in the style of --memory-plot.
#include "graphlint/report/Reporters.h"

#include "Svg.h"

#include <fmt/format.h>

#include <llvm/ADT/StringExtras.h>

#include <algorithm>
#include <cmath>

namespace graphlint {

namespace {

std::string meshText(const PlanSetup &p) {
  std::string out;
  auto add = [&](const char *k, unsigned v) {
    if (v > 1)
      out += fmt::format("{}{} {}", out.empty() ? "" : " x ", k, v);
  };
  add("rep", p.dpReplicate);
  add("shard", p.dpShard);
  add("tp", p.tp);
  add("pp", p.pp);
  add("cp", p.cp);
  add("ep", p.ep);
  return out.empty() ? "1 rank" : out;
}

std::string pipelineText(const PlanSetup &p) {
  return p.pp > 1 ? fmt::format("{}/{}", pipelineScheduleName(p.ppSchedule), p.microbatches) : "-";
}

std::string money(double v) { return v >= 100 ? fmt::format("${:.0f}", v) : fmt::format("${:.3g}", v); }

// A duration with three significant digits in s, ms or us.
std::string duration(double s) {
  if (s >= 1)
    return fmt::format("{:.3g} s", s);
  if (s >= 1e-3)
    return fmt::format("{:.3g} ms", s * 1e3);
  return fmt::format("{:.3g} us", s * 1e6);
}

std::string shellQuoted(const std::string &s) {
  bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return llvm::isAlnum(c) || llvm::StringRef("-_=.,/:+@%").contains(c);
  });
  if (plain)
    return s;
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string lintLine(const std::string &model, const std::vector<std::string> &baseFlags, const PlanSetup &p) {
  std::string out = "graphlint " + shellQuoted(model);
  for (const std::string &f : baseFlags)
    out += " " + shellQuoted(f);
  for (const std::string &f : planLintFlags(p))
    out += " " + shellQuoted(f);
  return out;
}

llvm::json::Value orNull(bool present, double v) { return present ? llvm::json::Value(v) : llvm::json::Value(nullptr); }

llvm::json::Object setupJson(const PlanSetup &p) {
  return llvm::json::Object{{"dp_replicate", p.dpReplicate},
                            {"dp_shard", p.dpShard},
                            {"tp", p.tp},
                            {"pp", p.pp},
                            {"cp", p.cp},
                            {"ep", p.ep},
                            {"batch", p.batch},
                            {"microbatches", p.microbatches},
                            {"pp_schedule", planSetupValue(p, "pp_schedule")},
                            {"recompute", planSetupValue(p, "recompute")},
                            {"float8", planSetupValue(p, "float8")},
                            {"backend", planSetupValue(p, "backend")},
                            {"target", p.target},
                            {"gpus", p.gpus}};
}

}  // namespace

llvm::json::Value planToJson(const PlanResult &r, const std::string &model, const std::vector<std::string> &baseFlags) {
  llvm::json::Array candidates;
  for (const PlanCandidate &c : r.candidates) {
    llvm::json::Array flags;
    for (const std::string &f : planLintFlags(c.setup))
      flags.push_back(f);
    candidates.push_back(llvm::json::Object{
        {"setup", setupJson(c.setup)},
        {"fits", c.fits},
        {"reason", c.reason.empty() ? llvm::json::Value(nullptr) : llvm::json::Value(c.reason)},
        {"peak_reserved_bytes", c.peakReservedBytes},
        {"margin_bytes", c.marginBytes},
        {"capacity_bytes", c.capacityBytes},
        {"step_time_s", orNull(c.timed, c.stepTimeS)},
        {"tokens_per_second_per_gpu", orNull(c.timed && c.tokensPerSecondPerGpu > 0, c.tokensPerSecondPerGpu)},
        {"mfu", orNull(c.timed, c.mfu)},
        {"exposed_communication_s", orNull(c.timed, c.exposedCommS)},
        {"communication_s", orNull(c.timed, c.commS)},
        {"bubble_s", orNull(c.timed, c.bubbleS)},
        {"usd_per_gpu_hour", orNull(c.usdPerGpuHour.has_value(), c.usdPerGpuHour.value_or(0))},
        {"usd_per_million_tokens", orNull(c.usdPerMillionTokens.has_value(), c.usdPerMillionTokens.value_or(0))},
        {"lint_flags", std::move(flags)},
    });
  }
  llvm::json::Array notes;
  for (const std::string &n : r.notes)
    notes.push_back(n);
  llvm::json::Array front;
  for (size_t i : paretoFront(r))
    front.push_back(static_cast<int64_t>(i));
  llvm::json::Array base;
  for (const std::string &f : baseFlags)
    base.push_back(f);
  llvm::json::Object o{
      {"version", 1},
      {"model", model},
      {"objective", std::string(planObjectiveName(r.objective))},
      {"global_batch_samples", static_cast<int64_t>(r.globalBatchSamples)},
      {"global_batch_tokens", orNull(r.facts.tokensPerSample > 0, r.facts.tokensPerSample * r.globalBatchSamples)},
      {"evaluated", static_cast<int64_t>(r.evaluated)},
      {"fitting", static_cast<int64_t>(r.fitting)},
      {"margin", llvm::json::Object{{"cuda_context_bytes", r.contextBytes}, {"nccl_bytes", r.ncclBytes}}},
      {"model_facts", llvm::json::Object{{"layers", r.facts.layers},
                                         {"heads", r.facts.heads},
                                         {"kv_heads", r.facts.kvHeads},
                                         {"experts", r.facts.experts},
                                         {"tokens_per_sample", r.facts.tokensPerSample}}},
      {"base_flags", std::move(base)},
      {"runner_up", r.runnerUp.empty() ? llvm::json::Value(nullptr) : llvm::json::Value(r.runnerUp)},
      {"notes", std::move(notes)},
      {"pareto", std::move(front)},
      {"candidates", std::move(candidates)},
  };
  if (r.launch)
    o["launch"] = llvm::json::Object{{"torchrun", r.launch->torchrun},
                                     {"torchtitan_toml", r.launch->toml},
                                     {"lint", lintLine(model, baseFlags, r.candidates.front().setup)}};
  return o;
}

void renderPlanText(const PlanResult &r, const std::string &model, unsigned top,
                    const std::vector<std::string> &baseFlags, llvm::raw_ostream &os) {
  std::vector<std::string> where;
  {
    std::vector<std::pair<std::string, std::vector<unsigned>>> seen;
    for (const PlanCandidate &c : r.candidates) {
      auto it = std::find_if(seen.begin(), seen.end(), [&](const auto &s) { return s.first == c.setup.target; });
      if (it == seen.end())
        it = seen.insert(seen.end(), {c.setup.target, {}});
      if (!llvm::is_contained(it->second, c.setup.gpus))
        it->second.push_back(c.setup.gpus);
    }
    for (auto &[t, g] : seen) {
      std::sort(g.begin(), g.end());
      std::vector<std::string> counts;
      for (unsigned n : g)
        counts.push_back(std::to_string(n));
      where.push_back(fmt::format("{} x {}", t, llvm::join(counts, "|")));
    }
  }
  std::string tokens = r.facts.tokensPerSample > 0
                           ? fmt::format(" ({:.0f} tokens)", r.facts.tokensPerSample * r.globalBatchSamples)
                           : "";
  os << fmt::format("plan for {}: {} candidates evaluated on {}, {} fit; global batch {} samples{}; ranked by {}\n",
                    model, r.evaluated, llvm::join(where, ", "), r.fitting, r.globalBatchSamples, tokens,
                    planObjectiveName(r.objective));
  os << fmt::format("memory margin beyond the predicted peak reserved: {} for the CUDA context and cuBLAS/cuDNN "
                    "workspaces, {} of NCCL buffers with several ranks (GL201's context-mib, nccl-mib)\n",
                    formatBytes(r.contextBytes), formatBytes(r.ncclBytes));
  size_t shown = std::min<size_t>(top, r.timed);
  if (shown) {
    os << fmt::format("\n  {:>2}  {:<16} {:<26} {:>5} {:<19} {:<16} {:<10} {:<8} {:>10} {:>9} {:>9} {:>5} {:>9} {:>8}\n",
                      "#", "gpus", "mesh", "batch", "pipeline", "recompute", "float8", "backend", "peak/GPU", "step",
                      "tok/s/GPU", "MFU", "exposed", "$/Mtok");
    for (size_t i = 0; i < shown; ++i) {
      const PlanCandidate &c = r.candidates[i];
      const PlanSetup &p = c.setup;
      os << fmt::format("  {:>2}  {:<16} {:<26} {:>5} {:<19} {:<16} {:<10} {:<8} {:>10} {:>9} {:>9.0f} {:>4.0f}% "
                        "{:>9} {:>8}\n",
                        i + 1, fmt::format("{} x {}", p.gpus, p.target), meshText(p), p.batch, pipelineText(p),
                        planSetupValue(p, "recompute"), planSetupValue(p, "float8"), planSetupValue(p, "backend"),
                        formatBytes(static_cast<double>(c.peakReservedBytes)), duration(c.stepTimeS),
                        c.tokensPerSecondPerGpu, c.mfu * 100, duration(c.exposedCommS),
                        c.usdPerMillionTokens ? money(*c.usdPerMillionTokens) : std::string("-"));
    }
    if (!r.runnerUp.empty())
      os << "\n" << r.runnerUp << "\n";
    const PlanSetup &best = r.candidates.front().setup;
    os << "\ntop pick, as lint predicts it (the same numbers):\n  " << lintLine(model, baseFlags, best) << "\n";
    if (r.launch) {
      os << "launch it with torchtitan (plan.toml below):\n  " << r.launch->torchrun << "\n";
      for (llvm::StringRef line : llvm::split(llvm::StringRef(r.launch->toml).rtrim('\n'), '\n'))
        os << (line.empty() ? "" : "    ") << line << "\n";
    }
  } else {
    os << "\nno candidate fits\n";
  }
  size_t misfits = r.evaluated - r.fitting;
  if (misfits) {
    os << fmt::format("\n{} candidates do not fit; the closest{}:\n", misfits,
                      misfits > top ? fmt::format(" {} (--format json lists every one)", std::min<size_t>(top, misfits))
                                    : "");
    size_t listed = 0;
    for (const PlanCandidate &c : r.candidates) {
      if (c.fits)
        continue;
      if (listed++ == top)
        break;
      os << fmt::format("  {}\n    {}\n", c.setup.describe(), c.reason);
    }
  }
  if (!r.notes.empty()) {
    os << "\nassumptions:\n";
    for (const std::string &n : r.notes)
      os << "  - " << n << "\n";
  }
}

void renderParetoSvg(const PlanResult &r, const std::string &title, llvm::raw_ostream &os) {
  std::vector<size_t> front = paretoFront(r);
  std::vector<std::string> legend;
  for (size_t k = 0; k < front.size(); ++k) {
    const PlanCandidate &c = r.candidates[front[k]];
    legend.push_back(fmt::format("{:>10} {:>7.0f} tok/s/GPU  {}", formatBytes(static_cast<double>(c.peakReservedBytes)),
                                 c.tokensPerSecondPerGpu, c.setup.describe()));
  }
  const double lineHeight = 16;
  const double W = 900, chartH = 460, left = 90, right = 20, top = 40, bottom = 50;
  const double H = chartH + (legend.empty() ? 0 : lineHeight * static_cast<double>(legend.size() + 1) + 10);
  const double pw = W - left - right, ph = chartH - top - bottom;
  double xmax = 1, ymax = 1;
  for (const PlanCandidate &c : r.candidates)
    if (c.timed) {
      xmax = std::max(xmax, static_cast<double>(c.peakReservedBytes));
      ymax = std::max(ymax, c.tokensPerSecondPerGpu);
    }
  std::vector<std::pair<std::string, double>> capacities;
  for (const PlanCandidate &c : r.candidates)
    if (c.timed && !llvm::any_of(capacities, [&](const auto &x) { return x.first == c.setup.target; }))
      capacities.push_back({c.setup.target, c.capacityBytes});
  for (const auto &[t, cap] : capacities)
    xmax = std::max(xmax, cap);
  xmax *= 1.05;
  ymax *= 1.1;
  auto x = [&](double b) { return left + pw * b / xmax; };
  auto y = [&](double v) { return top + ph - ph * v / ymax; };

  svgBegin(os, W, H, title);
  os << fmt::format("<text x=\"{:.0f}\" y=\"20\" font-size=\"14\">{} - memory vs throughput ({} setups that fit, "
                    "Pareto front in blue)</text>\n",
                    left, xmlEscape(title), r.timed);
  os << fmt::format("<line x1=\"{0:.0f}\" y1=\"{1:.0f}\" x2=\"{0:.0f}\" y2=\"{2:.0f}\" stroke=\"black\"/>\n", left, top,
                    top + ph);
  os << fmt::format("<line x1=\"{0:.0f}\" y1=\"{1:.0f}\" x2=\"{2:.0f}\" y2=\"{1:.0f}\" stroke=\"black\"/>\n", left,
                    top + ph, left + pw);
  for (int t = 0; t <= 4; ++t) {
    double b = xmax * t / 4, v = ymax * t / 4;
    os << fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.0f}\" x2=\"{0:.1f}\" y2=\"{2:.0f}\" stroke=\"#eee\"/>\n", x(b), top,
                      top + ph);
    os << fmt::format("<text x=\"{:.1f}\" y=\"{:.0f}\" text-anchor=\"middle\">{}</text>\n", x(b), top + ph + 16,
                      formatBytes(b));
    os << fmt::format("<line x1=\"{0:.0f}\" y1=\"{1:.1f}\" x2=\"{2:.0f}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>\n", left,
                      y(v), left + pw);
    os << fmt::format("<text x=\"{:.0f}\" y=\"{:.1f}\" text-anchor=\"end\">{:.0f}</text>\n", left - 6, y(v) + 4, v);
  }
  os << fmt::format("<text x=\"{:.0f}\" y=\"{:.0f}\" text-anchor=\"middle\">peak reserved per GPU</text>\n",
                    left + pw / 2, chartH - 12);
  os << fmt::format("<text x=\"16\" y=\"{:.0f}\" transform=\"rotate(-90 16 {:.0f})\" text-anchor=\"middle\">tokens/s "
                    "per GPU</text>\n",
                    top + ph / 2, top + ph / 2);
  for (const auto &[t, cap] : capacities)
    if (cap > 0) {
      os << fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.0f}\" x2=\"{0:.1f}\" y2=\"{2:.0f}\" stroke=\"#d93025\" "
                        "stroke-dasharray=\"6,4\"/>\n",
                        x(cap), top, top + ph);
      os << fmt::format("<text x=\"{:.1f}\" y=\"{:.0f}\" fill=\"#d93025\" text-anchor=\"end\">{} {}</text>\n",
                        x(cap) - 4, top + 12, xmlEscape(t), formatBytes(cap));
    }
  for (const PlanCandidate &c : r.candidates)
    if (c.timed)
      os << fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2\" fill=\"#9aa0a6\"/>\n",
                        x(static_cast<double>(c.peakReservedBytes)), y(c.tokensPerSecondPerGpu));
  if (!front.empty()) {
    os << "<polyline fill=\"none\" stroke=\"#1a73e8\" stroke-width=\"1.5\" points=\"";
    for (size_t k = 0; k < front.size(); ++k) {
      const PlanCandidate &c = r.candidates[front[k]];
      os << fmt::format("{}{:.1f},{:.1f}", k ? " " : "", x(static_cast<double>(c.peakReservedBytes)),
                        y(c.tokensPerSecondPerGpu));
    }
    os << "\"/>\n";
    for (size_t i : front) {
      const PlanCandidate &c = r.candidates[i];
      os << fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"#1a73e8\"><title>{}</title></circle>\n",
                        x(static_cast<double>(c.peakReservedBytes)), y(c.tokensPerSecondPerGpu),
                        xmlEscape(c.setup.describe()));
    }
  }
  if (r.timed) {
    const PlanCandidate &c = r.candidates.front();
    double px = x(static_cast<double>(c.peakReservedBytes)), py = y(c.tokensPerSecondPerGpu);
    os << fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\" fill=\"none\" stroke=\"#d93025\" "
                      "stroke-width=\"2\"/>\n",
                      px, py);
    os << fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#d93025\" text-anchor=\"{}\">top pick ({})</text>\n", px,
                      std::max(py - 9, top + 24), px > left + pw / 2 ? "end" : "start",
                      xmlEscape(std::string(planObjectiveName(r.objective))));
  }
  if (!legend.empty()) {
    os << fmt::format("<text x=\"20\" y=\"{:.0f}\">Pareto front (less memory, more throughput):</text>\n",
                      chartH + lineHeight);
    svgTextLines(os, legend, 20, chartH + 2 * lineHeight, lineHeight);
  }
  os << "</svg>\n";
}

}  // namespace graphlint
