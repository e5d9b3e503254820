#include "graphlint/verify/Comparison.h"
#include "graphlint/ir/Display.h"

#include "graphlint/analyses/ComputeModel.h"
#include "graphlint/analyses/FusionPlan.h"
#include "graphlint/analyses/MemoryPlan.h"
#include "graphlint/report/Reporters.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/Support/FormatVariadic.h>

#include <fmt/format.h>

#include <cmath>

namespace graphlint::verify {

Prediction predictFromAnalyses(const Model &m, AnalysisContext &ctx, const ExecPlan &) {
  Prediction p;
  const FusionPlan &fp = ctx.get<FusionPlan>();
  const ComputeModel &cm = ctx.get<ComputeModel>();
  const HardwareProfile *profile = cm.hardware();
  // ComputeModel has one entry per FusionPlan group, same index.
  for (size_t i = 0; i < fp.groups().size(); ++i) {
    const FusionGroup &g = fp.groups()[i];
    if (g.graph != m.graph.get())
      continue;
    Prediction::Group pg{g.id, std::string(groupKindName(g.kind)), g.nodes, g.kernels, std::nullopt};
    const GroupCost &cost = cm.groups()[i];
    if (g.kernels == 0)
      pg.seconds = 0.0;
    else if (profile && cost.known)
      pg.seconds = cost.forward.seconds;
    p.groups.push_back(std::move(pg));
  }
  // The memory plan of the forward pass (verify runs inference).
  const MemorySummary &mem = ctx.get<MemoryPlan>().summary();
  if (mem.present)
    p.peakBytes = mem.peakAllocatedBytes;
  p.timeModel = fmt::format("compute model: roofline per fusion group on {} with efficiency factors and launch "
                            "overhead (docs/cost-model.md)",
                            profile ? profile->name : ctx.setup().target);
  p.memoryModel = "memory plan: inference liveness, views and in-place ops sharing storage, 512 B rounding "
                  "(docs/memory.md)";
  return p;
}

std::optional<double> relativeError(std::optional<double> predicted, double measured) {
  if (!predicted || measured <= 0)
    return std::nullopt;
  return (*predicted - measured) / measured;
}

VerifyReport compare(const Prediction &p, const RunRecord &r, const ExecPlan &plan) {
  VerifyReport v;
  v.timeModel = p.timeModel;
  v.memoryModel = p.memoryModel;
  llvm::DenseMap<const Node *, const NodeRecord *> ran;
  for (const NodeRecord &nr : r.nodes)
    ran[nr.node] = &nr;
  double predictedTotal = 0;
  bool predictedKnown = true;
  for (const Prediction::Group &g : p.groups) {
    GroupComparison c;
    c.id = g.id;
    c.kind = g.kind;
    c.firstNode = g.nodes.empty() ? "" : g.nodes.front()->name;
    c.predictedKernels = g.kernels;
    c.predictedSeconds = g.seconds;
    c.ran = !g.nodes.empty();
    for (const Node *n : g.nodes) {
      c.ops += (c.ops.empty() ? "" : "+") + n->opType;
      const NodeRecord *nr = ran.lookup(n);
      if (!nr) {
        c.ran = false;
        continue;
      }
      c.measuredSeconds += nr->seconds;
      c.measuredKernels += nr->kernels;
    }
    if (c.ran) {
      v.predictedKernels += c.predictedKernels;
      if (g.seconds)
        predictedTotal += *g.seconds;
      else
        predictedKnown = false;
    }
    v.groups.push_back(std::move(c));
  }
  for (const NodeRecord &nr : r.nodes)
    v.measuredKernels += nr.kernels;
  if (predictedKnown)
    v.predictedSeconds = predictedTotal;
  v.measuredSeconds = r.seconds;
  v.nodesRun = static_cast<unsigned>(r.nodes.size());
  v.nodesTotal = static_cast<unsigned>(plan.steps().size());
  v.predictedPeakBytes = p.peakBytes;
  v.measuredPeakBytes = r.peakBytes;
  v.devicePeakBytes = r.devicePeakBytes;
  v.memcpys = r.memcpys;
  if (r.stoppedAt) {
    v.stoppedAtNode = r.stoppedAt->name;
    v.stoppedAtOp = r.stoppedAt->qualifiedOp();
    v.stopReason = r.stopReason;
  }
  return v;
}

llvm::Expected<VerifyReport> verifyModel(const Model &m, const Setup &setup, Backend &backend,
                                         const VerifyOptions &opts) {
  ExecPlan plan(*m.graph);
  RunRecord measured;
  // Inputs and weights of absurd declared sizes must not crash the command.
  try {
    if (llvm::Error e = feedModel(m, plan, backend, opts.feed))
      return e;
    for (unsigned i = 0; i < opts.warmupRuns; ++i)
      runPlan(plan, backend, i);
    measured = runPlan(plan, backend, opts.warmupRuns);
  } catch (const std::exception &ex) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "cannot allocate the model's tensors: %s",
                                   ex.what());
  }
  // The run is one forward pass: predict inference whatever --train says.
  Setup forward = setup;
  forward.train = false;
  AnalysisContext ctx(m, forward);
  VerifyReport v = compare(predictFromAnalyses(m, ctx, plan), measured, plan);
  v.path = m.path;
  v.backend = std::string(backend.name());
  v.device = backend.name() == "cpu" ? "host CPU (reference kernels)" : std::string(backend.name());
  const HardwareProfile *hw = setup.targetProfile();
  v.target = hw ? hw->name : setup.target;
  v.warmupRuns = opts.warmupRuns;
  return v;
}

namespace {

llvm::json::Value optNum(std::optional<double> v) { return v ? llvm::json::Value(*v) : llvm::json::Value(nullptr); }
llvm::json::Value optBytes(std::optional<uint64_t> v) {
  return v ? llvm::json::Value(static_cast<int64_t>(*v)) : llvm::json::Value(nullptr);
}

std::string seconds(std::optional<double> s) {
  if (!s)
    return "?";
  if (*s >= 1)
    return fmt::format("{:.3f} s", *s);
  if (*s >= 1e-3)
    return fmt::format("{:.3f} ms", *s * 1e3);
  return fmt::format("{:.1f} us", *s * 1e6);
}

std::string bytesOrUnknown(std::optional<uint64_t> b) { return b ? formatBytes(static_cast<double>(*b)) : "?"; }

std::string percent(std::optional<double> e) { return e ? fmt::format("{:+.1f}%", *e * 100) : "-"; }

}  // namespace

llvm::json::Value verifyToJson(const VerifyReport &r) {
  llvm::json::Array groups;
  for (const GroupComparison &g : r.groups)
    groups.push_back(llvm::json::Object{
        {"id", static_cast<int64_t>(g.id)},
        {"kind", g.kind},
        {"first_node", g.firstNode},
        {"ops", g.ops},
        {"ran", g.ran},
        {"predicted_kernels", static_cast<int64_t>(g.predictedKernels)},
        {"measured_kernels", static_cast<int64_t>(g.measuredKernels)},
        {"predicted_seconds", optNum(g.predictedSeconds)},
        {"measured_seconds", g.measuredSeconds},
        {"error", optNum(g.ran ? relativeError(g.predictedSeconds, g.measuredSeconds) : std::nullopt)}});
  llvm::json::Value stop = nullptr;
  if (!r.stopReason.empty())
    stop = llvm::json::Object{{"node", r.stoppedAtNode}, {"op", r.stoppedAtOp}, {"reason", r.stopReason}};
  std::optional<double> peakErr;
  if (r.predictedPeakBytes)
    peakErr = relativeError(static_cast<double>(*r.predictedPeakBytes), static_cast<double>(r.measuredPeakBytes));
  llvm::json::Object verify{
      {"backend", r.backend},
      {"device", r.device},
      {"target", r.target},
      {"warmup_runs", static_cast<int64_t>(r.warmupRuns)},
      {"complete", r.stopReason.empty()},
      {"stopped", std::move(stop)},
      {"nodes_run", static_cast<int64_t>(r.nodesRun)},
      {"nodes_total", static_cast<int64_t>(r.nodesTotal)},
      {"time_model", r.timeModel},
      {"memory_model", r.memoryModel},
      {"kernels", llvm::json::Object{{"predicted", static_cast<int64_t>(r.predictedKernels)},
                                     {"measured", static_cast<int64_t>(r.measuredKernels)},
                                     {"error", optNum(relativeError(static_cast<double>(r.predictedKernels),
                                                                    static_cast<double>(r.measuredKernels)))}}},
      {"memcpys", static_cast<int64_t>(r.memcpys)},
      {"time", llvm::json::Object{{"predicted_seconds", optNum(r.predictedSeconds)},
                                  {"measured_seconds", r.measuredSeconds},
                                  {"error", optNum(relativeError(r.predictedSeconds, r.measuredSeconds))}}},
      {"peak_memory", llvm::json::Object{{"predicted_bytes", optBytes(r.predictedPeakBytes)},
                                         {"measured_bytes", static_cast<int64_t>(r.measuredPeakBytes)},
                                         {"device_bytes", optBytes(r.devicePeakBytes)},
                                         {"error", optNum(peakErr)}}},
      {"groups", std::move(groups)}};
  return llvm::json::Object{{"version", kJsonFormatVersion},
                            {"tool", llvm::json::Object{{"name", "graphlint"}, {"version", GRAPHLINT_VERSION}}},
                            {"path", r.path},
                            {"verify", std::move(verify)}};
}

void renderVerifyText(const VerifyReport &r, llvm::raw_ostream &os) {
  os << fmt::format("{}: verify on {} ({}), predictions for {}\n", r.path, r.backend, r.device, r.target);
  os << fmt::format("  {:>4}  {:<12} {:<28} {:>9} {:>7} {:>12} {:>12} {:>8}\n", "grp", "kind", "ops", "kernels",
                    "meas", "predicted", "measured", "error");
  for (const GroupComparison &g : r.groups) {
    std::string ops = g.ops.size() > 28 ? g.ops.substr(0, 25) + "..." : g.ops;
    os << fmt::format("  {:>4}  {:<12} {:<28} {:>9} {:>7} {:>12} {:>12} {:>8}\n", g.id, g.kind, ops,
                      g.predictedKernels, g.ran ? std::to_string(g.measuredKernels) : "-", seconds(g.predictedSeconds),
                      g.ran ? seconds(g.measuredSeconds) : "not run",
                      g.ran ? percent(relativeError(g.predictedSeconds, g.measuredSeconds)) : "-");
  }
  std::optional<double> peakErr;
  if (r.predictedPeakBytes)
    peakErr = relativeError(static_cast<double>(*r.predictedPeakBytes), static_cast<double>(r.measuredPeakBytes));
  os << fmt::format("  nodes:   {} of {} ran\n", r.nodesRun, r.nodesTotal);
  os << fmt::format("  kernels: predicted {}, measured {} ({})\n", r.predictedKernels, r.measuredKernels,
                    percent(relativeError(static_cast<double>(r.predictedKernels),
                                          static_cast<double>(r.measuredKernels))));
  os << fmt::format("  time:    predicted {}, measured {} ({})\n", seconds(r.predictedSeconds),
                    seconds(r.measuredSeconds), percent(relativeError(r.predictedSeconds, r.measuredSeconds)));
  os << fmt::format("  peak:    predicted {}, measured {} ({})", bytesOrUnknown(r.predictedPeakBytes), bytesOrUnknown(r.measuredPeakBytes),
                    percent(peakErr));
  if (r.devicePeakBytes)
    os << fmt::format(", device pool {}", bytesOrUnknown(r.devicePeakBytes));
  os << "\n";
  if (r.backend == "cpu")
    os << "  note: cpu backend times are host wall-clock of the reference kernels, not GPU kernel times\n";
  if (!r.stopReason.empty())
    os << fmt::format("  stopped before node '{}' ({}): {}\n", r.stoppedAtNode, r.stoppedAtOp, r.stopReason);
}

}  // namespace graphlint::verify
