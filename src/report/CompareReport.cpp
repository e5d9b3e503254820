// graphlint compare's text table and JSON (docs/viewers.md#compare): the
// step, its phases, peak memory and overlap predicted vs measured, then the
// ops with the largest time error first, then what was live at the measured
// peak beside what the plan has at its own.
#include "graphlint/report/Reporters.h"

#include <fmt/format.h>

#include <cmath>

namespace graphlint {

namespace {

std::string valueText(const std::optional<double> &v, const std::string &unit) {
  if (!v)
    return "-";
  if (unit == "bytes")
    return formatBytes(*v);
  if (unit == "%")
    return fmt::format("{:.1f}%", *v);
  return formatSeconds(*v);
}

std::string errorText(const RunComparison::Metric &m) {
  if (m.unit == "%" && m.predicted && m.measured)
    return fmt::format("{:+.1f} pt", *m.predicted - *m.measured);
  auto e = m.relativeError();
  return e ? fmt::format("{:+.1f}%", *e * 100) : "-";
}

}  // namespace

void renderCompareText(const RunComparison &c, unsigned top, llvm::raw_ostream &os) {
  os << fmt::format("{}: predicted vs measured ({})\n", c.model, c.trace);
  os << fmt::format("  {:<16} {:>14} {:>14} {:>10}\n", "", "predicted", "measured", "error");
  for (const RunComparison::Metric &m : c.metrics)
    os << fmt::format("  {:<16} {:>14} {:>14} {:>10}\n", m.name, valueText(m.predicted, m.unit),
                      valueText(m.measured, m.unit), errorText(m));
  auto table = [&](const std::vector<RunComparison::OpRow> &rows, const char *title, const char *column) {
    if (rows.empty())
      return;
    os << fmt::format("  largest mispredictions by {} (of {}):\n", title, rows.size());
    os << fmt::format("    {:<40} {:>7} {:>12} {:>7} {:>12} {:>10}\n", column, "calls", "predicted", "calls", "measured",
                      "error");
    for (size_t i = 0; i < rows.size() && i < top; ++i) {
      const RunComparison::OpRow &o = rows[i];
      os << fmt::format("    {:<40} {:>7} {:>12} {:>7} {:>12} {:>10}\n", o.op, o.predicted.count,
                        valueText(o.predicted.seconds, "s"), o.measured.count, valueText(o.measured.seconds, "s"),
                        valueText(o.predicted.seconds - o.measured.seconds, "s"));
    }
  };
  table(c.ops, "op", "op");
  if (!c.groups.empty()) {
    os << fmt::format("  largest mispredictions by fusion group (of {}; measured: the ops aligned to it in order):\n",
                      c.groups.size());
    os << fmt::format("    {:>6} {:<9} {:<34} {:>7} {:>12} {:>12} {:>10}\n", "group", "phase", "ops", "matched",
                      "predicted", "measured", "error");
    for (size_t i = 0; i < c.groups.size() && i < top; ++i) {
      const RunComparison::GroupRow &g = c.groups[i];
      std::string ops = g.group.ops.size() > 34 ? g.group.ops.substr(0, 31) + "..." : g.group.ops;
      os << fmt::format("    {:>6} {:<9} {:<34} {:>7} {:>12} {:>12} {:>10}\n", g.group.id,
                        g.group.backward ? "backward" : "forward", ops,
                        fmt::format("{}/{}", g.matchedOps, g.kernelOps), valueText(g.group.seconds, "s"),
                        valueText(g.measuredSeconds, "s"), valueText(g.group.seconds - g.measuredSeconds, "s"));
    }
  }
  table(c.lines, "function (forward; file:def line:name)", "function");
  if (!c.measuredAtPeak.empty() || !c.predictedAtPeak.empty()) {
    os << (c.memoryRelative ? "  at the peak: measured (allocated in the profiled region) | predicted\n"
                            : "  at the peak: measured | predicted\n");
    size_t n = std::max(c.measuredAtPeak.size(), c.predictedAtPeak.size());
    for (size_t i = 0; i < n && i < 10; ++i) {
      std::string left, right;
      if (i < c.measuredAtPeak.size())
        left = fmt::format("{:>11}  {}", formatBytes(static_cast<double>(c.measuredAtPeak[i].bytes)),
                           c.measuredAtPeak[i].op.empty() ? "(no op)" : c.measuredAtPeak[i].op);
      if (i < c.predictedAtPeak.size()) {
        const MemorySummary::Contributor &p = c.predictedAtPeak[i];
        right = fmt::format("{:>11}  {} {}", formatBytes(static_cast<double>(p.bytes)), p.kind,
                            p.node.empty() ? p.tensor : p.node);
      }
      os << fmt::format("    {:<48} | {}\n", left, right);
    }
  }
  if (c.ranks.size() > 1) {
    os << fmt::format("  per rank (measured):\n    {:>5} {:>12} {:>12} {:>12} {:>12} {:>8} {:>11}\n", "rank", "step",
                      "forward", "backward", "comm", "hidden", "peak");
    for (const RankFigures &r : c.ranks)
      os << fmt::format("    {:>5} {:>12} {:>12} {:>12} {:>12} {:>8} {:>11}\n", r.rank, formatSeconds(r.stepSeconds),
                        formatSeconds(r.forwardSeconds), formatSeconds(r.backwardSeconds),
                        formatSeconds(r.commSeconds),
                        r.commSeconds > 0 ? fmt::format("{:.1f}%", 100 * r.hiddenCommSeconds / r.commSeconds) : "-",
                        formatBytes(static_cast<double>(r.peakAllocated)));
  }
  for (const std::string &n : c.notes)
    os << "  note: " << n << "\n";
}

llvm::json::Value compareToJson(const RunComparison &c) {
  namespace json = llvm::json;
  auto opt = [](const std::optional<double> &v) { return v ? json::Value(*v) : json::Value(nullptr); };
  json::Array metrics, ops, lines, groups, measuredPeak, predictedPeak, ranks, notes;
  for (const RunComparison::GroupRow &g : c.groups)
    groups.push_back(json::Object{{"group", static_cast<int64_t>(g.group.id)},
                                  {"kind", g.group.kind},
                                  {"phase", g.group.backward ? "backward" : "forward"},
                                  {"ops", g.group.ops},
                                  {"kernel_ops", static_cast<int64_t>(g.kernelOps)},
                                  {"matched_ops", static_cast<int64_t>(g.matchedOps)},
                                  {"predicted_s", g.group.seconds},
                                  {"measured_s", g.measuredSeconds}});
  for (const RankFigures &r : c.ranks)
    ranks.push_back(json::Object{{"rank", r.rank},
                                 {"trace", r.path},
                                 {"step_s", r.stepSeconds},
                                 {"forward_s", r.forwardSeconds},
                                 {"backward_s", r.backwardSeconds},
                                 {"comm_s", r.commSeconds},
                                 {"comm_hidden_s", r.hiddenCommSeconds},
                                 {"peak_allocated_bytes", static_cast<int64_t>(r.peakAllocated)}});
  for (const RunComparison::Metric &m : c.metrics)
    metrics.push_back(json::Object{{"name", m.name},
                                   {"unit", m.unit},
                                   {"predicted", opt(m.predicted)},
                                   {"measured", opt(m.measured)},
                                   {"relative_error", opt(m.relativeError())}});
  auto row = [](const char *key, const RunComparison::OpRow &o) {
    return json::Object{{key, o.op},
                        {"predicted_s", o.predicted.seconds},
                        {"predicted_count", static_cast<int64_t>(o.predicted.count)},
                        {"measured_s", o.measured.seconds},
                        {"measured_count", static_cast<int64_t>(o.measured.count)}};
  };
  for (const RunComparison::OpRow &o : c.ops)
    ops.push_back(row("op", o));
  for (const RunComparison::OpRow &o : c.lines)
    lines.push_back(row("function", o));
  for (const MeasuredRun::Allocation &a : c.measuredAtPeak)
    measuredPeak.push_back(json::Object{{"bytes", static_cast<int64_t>(a.bytes)}, {"op", a.op}});
  for (const MemorySummary::Contributor &p : c.predictedAtPeak)
    predictedPeak.push_back(json::Object{
        {"bytes", static_cast<int64_t>(p.bytes)}, {"kind", p.kind}, {"tensor", p.tensor}, {"node", p.node}});
  for (const std::string &n : c.notes)
    notes.push_back(n);
  return json::Object{{"model", c.model},
                      {"trace", c.trace},
                      {"metrics", std::move(metrics)},
                      {"ops", std::move(ops)},
                      {"functions", std::move(lines)},
                      {"groups", std::move(groups)},
                      {"memory", json::Object{{"measured_device", c.memoryDevice},
                                              {"measured_relative", c.memoryRelative},
                                              {"measured_region_peak_bytes", static_cast<int64_t>(c.measuredRegionPeak)},
                                              {"predicted_start_bytes", static_cast<int64_t>(c.predictedStartBytes)}}},
                      {"measured_top_at_peak", std::move(measuredPeak)},
                      {"predicted_top_at_peak", std::move(predictedPeak)},
                      {"ranks", std::move(ranks)},
                      {"notes", std::move(notes)}};
}

}  // namespace graphlint
