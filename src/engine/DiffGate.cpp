#include "graphlint/engine/DiffGate.h"

#include "graphlint/ir/MessageText.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringRef.h>

#include <fmt/format.h>

#include <cmath>

namespace graphlint {

namespace {

llvm::Error bad(const std::string &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

constexpr const char *kAccepted =
    "expected new-errors, new-warnings, new-findings, or METRIC+N% / METRIC-N% / METRIC+N (peak, reserved, step, "
    "comm, activations, exposed, or a metric name of docs/diff.md)";

// "1.5GiB" -> bytes; "10" -> 10.
std::optional<double> parseAmount(llvm::StringRef text) {
  static const std::pair<const char *, double> kUnits[] = {
      {"KiB", 1024.0}, {"MiB", 1024.0 * 1024}, {"GiB", 1024.0 * 1024 * 1024}, {"TiB", 1024.0 * 1024 * 1024 * 1024}};
  double scale = 1;
  for (const auto &[unit, s] : kUnits)
    if (text.consume_back(unit)) {
      scale = s;
      break;
    }
  double v = 0;
  if (text.empty() || text.getAsDouble(v) || !std::isfinite(v) || v < 0)
    return std::nullopt;
  return v * scale;
}

bool knownMetric(const std::string &name) {
  static const char *kNames[] = {"peak_allocated_bytes", "peak_reserved_bytes", "activations_bytes", "params_bytes",
                                 "grads_bytes", "optimizer_bytes", "params", "flops", "flops_forward",
                                 "flops_backward", "kernels", "step_time_s", "forward_s", "backward_s",
                                 "optimizer_s", "mfu", "communication_bytes", "comm_s", "exposed_comm_s"};
  for (const char *n : kNames)
    if (name == n)
      return true;
  return llvm::StringRef(name).startswith("collective.");
}

}  // namespace

llvm::Expected<std::vector<DiffLimit>> parseDiffLimits(std::string_view spec) {
  std::vector<DiffLimit> out;
  llvm::SmallVector<llvm::StringRef, 8> items;
  llvm::StringRef(spec).split(items, ',', -1, /*KeepEmpty=*/false);
  if (items.empty())
    return bad(std::string("--fail-on needs a list of limits: ") + kAccepted);
  for (llvm::StringRef raw : items) {
    llvm::StringRef item = raw.trim();
    DiffLimit l;
    l.spec = item.str();
    if (item == "new-errors" || item == "new-warnings" || item == "new-findings" || item == "new-notes") {
      l.kind = DiffLimit::Kind::NewFindings;
      l.severity = item == "new-errors" ? Severity::Error : item == "new-warnings" ? Severity::Warning : Severity::Note;
      out.push_back(l);
      continue;
    }
    size_t at = item.find_first_of("+-");
    if (at == llvm::StringRef::npos || at == 0)
      return bad(fmt::format("--fail-on: '{}' is not a limit; {}", escapedForMessage(l.spec), kAccepted));
    l.metric = metricAlias(item.substr(0, at));
    l.rise = item[at] == '+';
    llvm::StringRef amount = item.substr(at + 1);
    l.percent = amount.consume_back("%");
    std::optional<double> v = parseAmount(amount);
    if (!knownMetric(l.metric))
      return bad(fmt::format("--fail-on: unknown metric '{}' in '{}'; {}", escapedForMessage(l.metric),
                             escapedForMessage(l.spec), kAccepted));
    if (!v)
      return bad(fmt::format("--fail-on: '{}' needs a non-negative amount after {} (5%, 10, 1GiB)",
                             escapedForMessage(l.spec), item[at]));
    l.amount = *v;
    out.push_back(l);
  }
  return out;
}

std::vector<std::string> brokenLimits(const ModelDiff &d, const std::vector<DiffLimit> &limits) {
  std::vector<std::string> out;
  for (const DiffLimit &l : limits) {
    if (l.kind == DiffLimit::Kind::NewFindings) {
      unsigned n = 0;
      std::string first;
      for (const Diagnostic &x : d.newFindings)
        if (x.severity >= l.severity) {
          n += x.count();
          if (first.empty())
            first = x.code + " " + x.name;
        }
      if (n)
        out.push_back(fmt::format("{}: {} new finding{} at or above {} (first: {})", l.spec, n, n == 1 ? "" : "s",
                                  severityName(l.severity), first));
      continue;
    }
    for (const MetricDelta &m : d.metrics) {
      if (m.name != l.metric || !m.base || !m.head)
        continue;
      double delta = l.rise ? m.delta() : -m.delta();
      bool broken;
      std::string by;
      if (l.percent) {
        std::optional<double> pct = m.deltaPercent();
        broken = pct ? (l.rise ? *pct : -*pct) > l.amount : delta > 0;
        by = pct ? fmt::format("{:+.1f}%", *pct) : "from 0";
      } else {
        broken = delta > l.amount;
        by = signedMetricValue(m, m.delta());
      }
      if (broken)
        out.push_back(fmt::format("{}: {} {} {} ({} -> {})", l.spec, m.name, l.rise ? "grew" : "fell", by,
                                  formatMetricValue(m, *m.base), formatMetricValue(m, *m.head)));
    }
  }
  return out;
}

}  // namespace graphlint
