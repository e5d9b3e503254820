// The headline numbers of one lint (memory, compute, communication), by the
// names `graphlint diff`'s `metrics`, its --fail-on limits and the
// expected-values file (`--expect`, `--write-expected`) all use: one table,
// so that a name means the same figure everywhere (docs/diff.md "Metrics").
// Read from the FileReport's summaries, never recomputed.
#pragma once

#include "graphlint/engine/Driver.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace graphlint {

/// Which way a metric gets worse.
enum class MetricSense : uint8_t { HigherIsWorse, LowerIsWorse };

struct MetricValue {
  std::string name;         // "peak_allocated_bytes", "collective.all_reduce.bytes"
  double value = 0;
  MetricSense sense = MetricSense::HigherIsWorse;
  bool bytes = false;       // printed with formatBytes
};

/// The metrics of one report, in a fixed order: memory (when the memory plan
/// was summarised), compute, step and communication (when the cost was),
/// then one bytes and one seconds entry per collective kind. Empty for a
/// fatal report.
std::vector<MetricValue> reportMetrics(const FileReport &r);

/// The full name of a short one a user types in a limit: peak ->
/// peak_allocated_bytes, reserved -> peak_reserved_bytes, step ->
/// step_time_s, comm -> communication_bytes, activations ->
/// activations_bytes; other names are returned unchanged.
std::string metricAlias(std::string_view name);

/// The sense of a metric by name (mfu and tokens are better higher).
MetricSense metricSense(std::string_view name);

}  // namespace graphlint
