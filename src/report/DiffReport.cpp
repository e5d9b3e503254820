// graphlint diff's reports (include/graphlint/report/DiffReport.h,
// docs/diff.md "Output"): text, JSON, markdown, SARIF, GitHub.
#include "graphlint/report/DiffReport.h"

#include "graphlint/ir/MessageText.h"
#include "graphlint/report/Reporters.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace graphlint {

namespace json = llvm::json;

std::string findingSource(const Diagnostic &d) {
  const SourceLoc &s = d.location.source;
  if (!s.valid())
    return "";
  return fmt::format("{}:{}:{}", s.file, s.line, s.col ? s.col : 1);
}

namespace {

std::string percentText(const MetricDelta &m) {
  auto p = m.deltaPercent();
  return p ? fmt::format("{:+.1f}%", *p) : std::string("-");
}

std::string placeText(const DiffPlace &p) { return p.baseSide ? p.source + " (base)" : p.source; }

std::string opsText(const std::vector<std::string> &ops) {
  std::string out;
  for (size_t i = 0; i < ops.size() && i < 3; ++i)
    out += (i ? ", " : "") + ops[i];
  if (ops.size() > 3)
    out += fmt::format(", +{} more", ops.size() - 3);
  return out;
}

std::string changeText(const NodeChange &c) {
  std::string s = fmt::format("{} {} node{} ({})", nodeChangeKindName(c.kind), c.count, c.count == 1 ? "" : "s",
                              opsText(c.ops));
  if (!c.detail.empty())
    s += ": " + c.detail;
  return s;
}

std::string fusionText(const FusionChange &f) {
  std::string s = fmt::format("fusion group {} at {}", fusionChangeKindName(f.kind), f.op);
  if (!f.reason.empty())
    s += ": " + f.reason + (f.detail.empty() ? "" : " (" + f.detail + ")");
  s += fmt::format(", kernels {} -> {}", f.kernelsBase, f.kernelsHead);
  if (f.count > 1)
    s += fmt::format(" (x{})", f.count);
  return s;
}

std::string paramText(const ParamChange &p) {
  return fmt::format("parameter {} {}: {}{}", p.name, paramChangeKindName(p.kind), p.detail,
                     p.count > 1 ? fmt::format(" (x{})", p.count) : "");
}

const MetricDelta *metricNamed(const ModelDiff &d, std::string_view name) {
  for (const MetricDelta &m : d.metrics)
    if (m.name == name)
      return &m;
  return nullptr;
}

std::string attributionText(const ModelDiff &d, const Attribution &a) {
  MetricDelta shape;
  if (const MetricDelta *m = metricNamed(d, a.metric))
    shape = *m;
  shape.name = a.metric;
  shape.bytes = a.metric == "peak_allocated_bytes";
  return fmt::format("{} {} ({} -> {})", a.metric, signedMetricValue(shape, a.delta()),
                     formatMetricValue(shape, a.base), formatMetricValue(shape, a.head));
}

// The metrics every summary shows, changed or not.
bool headline(const std::string &name) {
  for (const char *h : {"peak_allocated_bytes", "peak_reserved_bytes", "step_time_s", "flops", "kernels",
                        "communication_bytes", "params", "mfu"})
    if (name == h)
      return true;
  return false;
}

json::Value optNumber(const std::optional<double> &v) { return v ? json::Value(*v) : json::Value(nullptr); }

json::Object placeToJson(const DiffPlace &p) {
  json::Object o{{"source", p.source}, {"side", p.baseSide ? "base" : "head"}};
  o["module"] = p.module.empty() ? json::Value(nullptr) : json::Value(p.module);
  return o;
}

json::Value findingToJson(const Diagnostic &d) {
  json::Value v = diagnosticToJson(d);
  json::Object &o = *v.getAsObject();
  o["source"] = findingSource(d);
  return v;
}

}  // namespace

json::Value diffToJson(const ModelDiff &d) {
  json::Array added, fixed;
  for (const Diagnostic &x : d.newFindings)
    added.push_back(findingToJson(x));
  for (const Diagnostic &x : d.fixedFindings)
    fixed.push_back(findingToJson(x));
  json::Object metrics;
  for (const MetricDelta &m : d.metrics) {
    json::Object o{{"base", optNumber(m.base)}, {"head", optNumber(m.head)}};
    o["delta"] = m.base && m.head ? json::Value(m.delta()) : json::Value(nullptr);
    o["delta_pct"] = optNumber(m.deltaPercent());
    metrics[m.name] = std::move(o);
  }
  json::Array changes;
  for (const NodeChange &c : d.changes) {
    json::Object o = placeToJson(c.place);
    o["kind"] = std::string(nodeChangeKindName(c.kind));
    o["count"] = static_cast<int64_t>(c.count);
    json::Array ops;
    for (const std::string &op : c.ops)
      ops.push_back(op);
    o["ops"] = std::move(ops);
    o["detail"] = c.detail;
    changes.push_back(std::move(o));
  }
  json::Array params;
  for (const ParamChange &p : d.params) {
    json::Object o = placeToJson(p.place);
    o["kind"] = std::string(paramChangeKindName(p.kind));
    o["name"] = p.name;
    o["detail"] = p.detail;
    o["count"] = static_cast<int64_t>(p.count);
    params.push_back(std::move(o));
  }
  json::Array fusion;
  for (const FusionChange &f : d.fusion) {
    json::Object o = placeToJson(f.place);
    o["kind"] = std::string(fusionChangeKindName(f.kind));
    o["op"] = f.op;
    o["reason"] = f.reason.empty() ? json::Value(nullptr) : json::Value(f.reason);
    o["detail"] = f.detail;
    o["kernels_base"] = static_cast<int64_t>(f.kernelsBase);
    o["kernels_head"] = static_cast<int64_t>(f.kernelsHead);
    o["count"] = static_cast<int64_t>(f.count);
    fusion.push_back(std::move(o));
  }
  json::Array attribution;
  for (const Attribution &a : d.attribution) {
    json::Object o = placeToJson(a.place);
    o["metric"] = a.metric;
    o["base"] = a.base;
    o["head"] = a.head;
    o["delta"] = a.delta();
    attribution.push_back(std::move(o));
  }
  auto side = [](const FileReport &r, unsigned nodes) {
    return json::Object{{"path", r.path}, {"nodes", static_cast<int64_t>(nodes)}};
  };
  return json::Object{
      {"version", kJsonFormatVersion},
      {"tool", json::Object{{"name", "graphlint"}, {"version", GRAPHLINT_VERSION}}},
      {"base", side(d.base, d.baseNodes)},
      {"head", side(d.head, d.headNodes)},
      {"empty", d.empty()},
      {"findings", json::Object{{"new", std::move(added)},
                                {"fixed", std::move(fixed)},
                                {"unchanged", static_cast<int64_t>(d.unchangedFindings)}}},
      {"metrics", std::move(metrics)},
      {"changes", std::move(changes)},
      {"propagated_changes", static_cast<int64_t>(d.propagatedChanges)},
      {"params", std::move(params)},
      {"fusion", std::move(fusion)},
      {"attribution", std::move(attribution)},
      {"alignment", json::Object{{"matched", static_cast<int64_t>(d.matched)},
                                 {"by_structure", static_cast<int64_t>(d.byStructure)}}}};
}

void renderDiffJson(const ModelDiff &d, llvm::raw_ostream &os) {
  os << llvm::formatv("{0:2}", diffToJson(d)) << "\n";
}

void renderDiffText(const ModelDiff &d, llvm::raw_ostream &os) {
  os << fmt::format("graphlint diff {} -> {}\n", oneLine(d.base.path), oneLine(d.head.path));
  unsigned added = 0, removed = 0, changed = 0;
  for (const NodeChange &c : d.changes)
    (c.kind == NodeChange::Kind::Added ? added : c.kind == NodeChange::Kind::Removed ? removed : changed) += c.count;
  os << fmt::format("nodes: {} -> {}: {} matched, {} added, {} removed, {} changed", d.baseNodes, d.headNodes,
                    d.matched, added, removed, changed);
  if (d.propagatedChanges)
    os << fmt::format(" (+{} changed only by an upstream type)", d.propagatedChanges);
  os << "\n";
  if (d.empty()) {
    os << "no changes: same findings, nodes, fusion groups and metrics\n";
    return;
  }
  os << fmt::format("findings: {} new, {} fixed, {} unchanged\n", d.newFindings.size(), d.fixedFindings.size(),
                    d.unchangedFindings);
  for (const auto &[label, list] : {std::pair{"new", &d.newFindings}, std::pair{"fixed", &d.fixedFindings}})
    for (const Diagnostic &x : *list) {
      std::string at = findingSource(x);
      os << fmt::format("  {:<5} {} {} {}: {}{}\n", label, severityName(x.severity), x.code,
                        at.empty() ? primaryPositionText(x.location) : at, x.message,
                        x.count() > 1 ? fmt::format(" (x{})", x.count()) : "");
    }
  os << "metrics:\n";
  os << fmt::format("  {:<34} {:>14} {:>14} {:>14} {:>8}\n", "name", "base", "head", "delta", "%");
  unsigned same = 0;
  for (const MetricDelta &m : d.metrics) {
    if (!m.changed() && !headline(m.name)) {
      ++same;
      continue;
    }
    os << fmt::format("  {:<34} {:>14} {:>14} {:>14} {:>8}\n", m.name, m.base ? formatMetricValue(m, *m.base) : "-",
                      m.head ? formatMetricValue(m, *m.head) : "-",
                      m.base && m.head ? signedMetricValue(m, m.delta()) : "-", percentText(m));
  }
  if (same)
    os << fmt::format("  ({} more metrics unchanged)\n", same);
  auto section = [&](const char *title, size_t n) {
    if (n)
      os << title << ":\n";
  };
  section("changes", d.changes.size() + d.params.size());
  for (const NodeChange &c : d.changes)
    os << fmt::format("  {}: {}{}\n", placeText(c.place), changeText(c),
                      c.place.module.empty() ? "" : " [" + c.place.module + "]");
  for (const ParamChange &p : d.params)
    os << fmt::format("  {}: {}\n", placeText(p.place), paramText(p));
  section("fusion", d.fusion.size());
  for (const FusionChange &f : d.fusion)
    os << fmt::format("  {}: {}\n", placeText(f.place), fusionText(f));
  section("attribution (the source lines each change comes from)", d.attribution.size());
  for (const Attribution &a : d.attribution)
    os << fmt::format("  {}: {}\n", placeText(a.place), attributionText(d, a));
}

void renderDiffMarkdown(const ModelDiff &d, const std::string &linkBase, llvm::raw_ostream &os) {
  auto at = [&](const DiffPlace &p) {
    if (p.file.empty() || p.baseSide || linkBase.empty())
      return "`" + placeText(p) + "`";
    return fmt::format("[`{}`]({}/{}#L{})", p.source, linkBase, p.file, p.line);
  };
  os << fmt::format("### graphlint diff: `{}` → `{}`\n\n", oneLine(d.base.path), oneLine(d.head.path));
  if (d.empty()) {
    os << "No changes: same findings, nodes, fusion groups and predicted metrics.\n";
    return;
  }
  os << "| metric | base | head | Δ | Δ% |\n|---|---:|---:|---:|---:|\n";
  for (const MetricDelta &m : d.metrics)
    if (m.changed() || headline(m.name))
      os << fmt::format("| {}{}{} | {} | {} | {} | {} |\n", m.changed() ? "**" : "", m.name, m.changed() ? "**" : "",
                        m.base ? formatMetricValue(m, *m.base) : "-", m.head ? formatMetricValue(m, *m.head) : "-",
                        m.base && m.head ? signedMetricValue(m, m.delta()) : "-", percentText(m));
  os << fmt::format("\n**Findings**: {} new, {} fixed, {} unchanged\n", d.newFindings.size(), d.fixedFindings.size(),
                    d.unchangedFindings);
  auto finding = [&](const char *label, const Diagnostic &x) {
    DiffPlace p;
    if (x.location.source.valid()) {
      p.file = x.location.source.file;
      p.line = x.location.source.line;
      p.source = fmt::format("{}:{}", p.file, p.line);
    } else {
      p.source = primaryPositionText(x.location);
    }
    os << fmt::format("- {} {} **{}** {} at {}: {}\n", label, severityName(x.severity), x.code, x.name, at(p),
                      x.message);
  };
  size_t shown = 0;
  for (const Diagnostic &x : d.newFindings)
    if (shown++ < kDiffTopChanges)
      finding("new", x);
  shown = 0;
  for (const Diagnostic &x : d.fixedFindings)
    if (shown++ < kDiffTopChanges)
      finding("fixed", x);
  if (!d.changes.empty() || !d.params.empty() || !d.fusion.empty()) {
    os << "\n**Top changes**\n";
    // Added and removed nodes before changed ones, most nodes first.
    std::vector<const NodeChange *> top;
    for (const NodeChange &c : d.changes)
      top.push_back(&c);
    std::stable_sort(top.begin(), top.end(), [](const NodeChange *a, const NodeChange *b) {
      bool ca = a->kind == NodeChange::Kind::Changed, cb = b->kind == NodeChange::Kind::Changed;
      return ca != cb ? cb : a->count > b->count;
    });
    shown = 0;
    for (const NodeChange *c : top)
      if (shown++ < kDiffTopChanges)
        os << fmt::format("- {}: {}\n", at(c->place), changeText(*c));
    for (const ParamChange &p : d.params)
      if (shown++ < kDiffTopChanges)
        os << fmt::format("- {}: {}\n", at(p.place), paramText(p));
    for (const FusionChange &f : d.fusion)
      if (shown++ < 2 * kDiffTopChanges)
        os << fmt::format("- {}: {}\n", at(f.place), fusionText(f));
    size_t total = d.changes.size() + d.params.size() + d.fusion.size();
    if (shown < total)
      os << fmt::format("- … {} more (`--format json` lists all)\n", total - shown);
  }
  if (!d.attribution.empty()) {
    os << "\n**Where the numbers move**\n\n| source | metric | Δ |\n|---|---|---:|\n";
    shown = 0;
    for (const Attribution &a : d.attribution)
      if (shown++ < 2 * kDiffTopChanges) {
        MetricDelta shape;
        shape.name = a.metric;
        shape.bytes = a.metric == "peak_allocated_bytes";
        os << fmt::format("| {} | {} | {} |\n", at(a.place), a.metric, signedMetricValue(shape, a.delta()));
      }
  }
}

void renderDiffSarif(const ModelDiff &d, llvm::raw_ostream &os) {
  // Code scanning shows what a pull request introduces: the new findings.
  FileReport r;
  r.path = d.head.path;
  r.diagnostics = d.newFindings;
  renderSarif({r}, os);
}

void renderDiffGithub(const ModelDiff &d, llvm::raw_ostream &os) {
  FileReport r;
  r.path = d.head.path;
  r.diagnostics = d.newFindings;
  renderGithub({r}, os);
  // A notice at each changed line of the head (base-only lines have no
  // place in the pull request's files).
  auto notice = [&](const DiffPlace &p, const std::string &msg) {
    if (p.file.empty() || p.baseSide)
      return;
    os << fmt::format("::notice file={},line={},title={}::{}\n", githubEscapeProperty(p.file), p.line,
                      githubEscapeProperty("graphlint diff"), githubEscapeData(msg));
  };
  for (const NodeChange &c : d.changes)
    notice(c.place, changeText(c));
  for (const FusionChange &f : d.fusion)
    notice(f.place, fusionText(f));
  for (const Attribution &a : d.attribution)
    if (a.metric == "peak_allocated_bytes")
      notice(a.place, attributionText(d, a));
}

}  // namespace graphlint
