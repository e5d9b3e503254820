// `graphlint diff BASE HEAD`: what a change to a model does, as plain data
// the reporters render (text, JSON, markdown, SARIF, GitHub annotations).
// Both models are linted with their own configuration (the driver, with the
// memory, cost and fusion summaries); while each model is alive the diff
// keeps, per main-graph node, what it accounts for (bytes live at the peak,
// FLOPs, kernels and kernel time of its fusion group, its group); then the
// nodes are aligned (NodeAlignment.h: by op, module path, source file and
// function, order and structure, never by name or line) and compared:
// findings by their baseline fingerprint, nodes added, removed and changed
// (types, attributes, inputs), fusion groups split, merged, added and
// removed with the boundary's reason, the headline metrics (ReportMetrics.h),
// and the attribution of each metric's change to the user's source lines.
// docs/diff.md.
#pragma once

#include "graphlint/engine/Driver.h"
#include "graphlint/engine/NodeAlignment.h"
#include "graphlint/engine/ReportMetrics.h"

#include <llvm/Support/Error.h>

#include <optional>
#include <string>
#include <vector>

namespace graphlint {

struct MetricDelta {
  std::string name;
  std::optional<double> base, head;  // absent where one side has no such figure
  MetricSense sense = MetricSense::HigherIsWorse;
  bool bytes = false;
  double delta() const { return head.value_or(0) - base.value_or(0); }
  /// (head - base) / |base| in percent; nullopt when base is 0 or absent.
  std::optional<double> deltaPercent() const;
  bool changed() const;
};

/// Where a change is, in the user's terms. `source` is "file:line" when the
/// exporter recorded the line (in the head's numbering; a line only the base
/// has is marked `baseSide`), else the module path, else the node label.
struct DiffPlace {
  std::string source;
  std::string file;
  unsigned line = 0;
  bool baseSide = false;
  std::string module;
  bool operator<(const DiffPlace &o) const;
};

/// Nodes added, removed or changed at one place.
struct NodeChange {
  enum class Kind : uint8_t { Added, Removed, Changed };
  Kind kind = Kind::Added;
  DiffPlace place;
  std::vector<std::string> ops;  // distinct ops, first seen first
  unsigned count = 0;
  std::string detail;            // the first change: "f32[8,64] -> bf16[8,64]", "inputs", "attribute p"
};
std::string_view nodeChangeKindName(NodeChange::Kind k);

/// A fusion group that the change split, merged, added or removed, or whose
/// kernel count changed.
struct FusionChange {
  enum class Kind : uint8_t { Split, Merged, Added, Removed, Kernels };
  Kind kind = Kind::Split;
  DiffPlace place;               // split/merged: where the new/lost boundary is
  std::string op;                // the node there
  unsigned kernelsBase = 0, kernelsHead = 0;
  std::string reason;            // split: the new boundary's reason; merged: the lost one's
  std::string detail;            // the boundary's detail ("f32 -> bf16")
  unsigned count = 0;            // groups with this change at this place (one per layer)
};
std::string_view fusionChangeKindName(FusionChange::Kind k);

/// A parameter (by name) the head has and the base has not, or the other
/// way, or whose shape or dtype changed; placed at its first reader.
struct ParamChange {
  enum class Kind : uint8_t { Added, Removed, Changed };
  Kind kind = Kind::Added;
  std::string name;
  std::string detail;            // its type, or "f32[64,128] -> f32[64,256]"
  DiffPlace place;
  unsigned count = 0;            // parameters folded into this entry (layer indices as {N} in `name`)
};
std::string_view paramChangeKindName(ParamChange::Kind k);

/// How much of one metric's change one source line accounts for.
struct Attribution {
  DiffPlace place;
  std::string metric;            // peak_allocated_bytes, flops, kernels, kernel_time_s
  double base = 0, head = 0;
  double delta() const { return head - base; }
};

struct ModelDiff {
  FileReport base, head;          // the two lints (diagnostics ungrouped)
  /// Findings whose fingerprint the base has fewer of (new) or the head has
  /// fewer of (fixed); `unchanged`: findings in both.
  std::vector<Diagnostic> newFindings, fixedFindings;
  unsigned unchangedFindings = 0;
  std::vector<MetricDelta> metrics;
  std::vector<NodeChange> changes;
  /// Matched nodes whose only difference is a type their changed inputs
  /// carried in (a cast's dtype flowing downstream): counted, not listed.
  unsigned propagatedChanges = 0;
  std::vector<FusionChange> fusion;
  std::vector<Attribution> attribution;
  /// Alignment: nodes of each side and how they matched.
  unsigned baseNodes = 0, headNodes = 0, matched = 0, byStructure = 0;
  std::vector<ParamChange> params;

  /// Nothing changed: no finding, node, parameter, fusion group or metric.
  bool empty() const;
};

/// Lints BASE and HEAD (in parallel) and compares them. An error when either
/// cannot be imported (the message names the file).
llvm::Expected<ModelDiff> diffModelFiles(const std::string &base, const std::string &head,
                                         const LintOptions &baseOpts, const LintOptions &headOpts);

/// Formats a metric's value as the reports print it (bytes with
/// formatBytes, seconds with 3 significant digits, counts in full).
std::string formatMetricValue(const MetricDelta &m, double v);
/// "+1.25 GiB", "-12": a signed change as the reports print it.
std::string signedMetricValue(const MetricDelta &m, double delta);

}  // namespace graphlint
