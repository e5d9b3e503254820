// graphlint compare's alignment and figures (RunComparison.h). Ops align by
// aten op name: a measured op counts when its name is one the graph runs and
// no op enclosing it has such a name (aten::linear's aten::addmm counts
// where the graph has addmm and no linear), so each measured microsecond is
// counted once.
#include "graphlint/engine/RunComparison.h"

#include "graphlint/analyses/ComputeModel.h"
#include "graphlint/analyses/FusionPlan.h"
#include "graphlint/ir/Display.h"
#include "graphlint/ir/OpRegistry.h"
#include "graphlint/ir/ValueFacts.h"

#include <fmt/format.h>

#include <llvm/ADT/StringExtras.h>

#include <algorithm>
#include <cmath>

namespace graphlint {

namespace {

// The name an op is compared under: eager's spelling of what the capture
// records. A capture is functional (add where eager runs add_ in place), and
// make_fx records batch norm as _native_batch_norm_legit where eager calls
// native_batch_norm.
std::string canonicalOp(std::string name) {
  llvm::StringRef n(name);
  if (n.startswith("aten::") && n.endswith("_") && !n.endswith("__") && n.size() > 7)
    name.pop_back();
  if (name == "aten::_native_batch_norm_legit" || name == "aten::_native_batch_norm_legit_no_training" ||
      name == "aten::_native_batch_norm_legit_functional")
    return "aten::native_batch_norm";
  return name;
}

std::string atenName(const Node &n) {
  if (n.domain == "aten")
    return canonicalOp("aten::" + n.opType);
  return n.domain.empty() ? n.opType : n.domain + "::" + n.opType;
}

}  // namespace

std::string functionKey(llvm::StringRef path, unsigned defLine, llvm::StringRef name) {
  llvm::StringRef file = path.rsplit('/').second;
  return ((file.empty() ? path : file) + ":" + llvm::Twine(defLine) + ":" + name).str();
}

void collectPredictedOps(const Model &m, AnalysisContext &ctx, PredictedOps &out) {
  if (!m.graph)
    return;
  const ComputeModel &cm = ctx.get<ComputeModel>();
  out.joint = cm.joint();
  const std::vector<unsigned> &sched = cm.schedule();
  for (size_t i = 0; i < sched.size(); ++i) {
    const GroupCost &g = cm.groups()[sched[i]];
    if (!g.group || g.group->nodes.empty())
      continue;
    // A joint graph's backward groups are timed by their backward cost; a
    // forward graph's synthesised backward has no ops of its own to name.
    bool backwardGroup = out.joint && i >= cm.backwardStart();
    double seconds = g.known ? (backwardGroup ? g.backward.seconds : g.forward.seconds) : 0;
    // A fused group's time is split over the nodes that run a kernel
    // (kernelShares; under --backend eager a group is one op and its views).
    std::vector<double> shares = kernelShares(*g.group);
    auto groupIndex = static_cast<unsigned>(out.groups.size());
    PredictedOps::Group row{g.group->id, std::string(groupKindName(g.group->kind)), "", backwardGroup, seconds};
    for (size_t k = 0; k < g.group->nodes.size(); ++k) {
      const Node *n = g.group->nodes[k];
      std::string name = atenName(*n);
      if (shares[k] > 0) {
        out.sequence[backwardGroup].push_back({name, groupIndex});
        row.ops += (row.ops.empty() ? "" : "+") + name;
      }
      OpTimes &t = out.ops[name];
      ++t.count;
      double share = seconds * shares[k];
      t.seconds += share;
      // Per user function (where its `def` is, as a with_stack=True
      // profile names frames): the forward's (the backward runs on
      // autograd's thread, with no Python frames).
      if (!backwardGroup && n->loc.valid() && n->loc.functionLine > 0) {
        OpTimes &l = out.lines[functionKey(n->loc.file, n->loc.functionLine, n->loc.function)];
        ++l.count;
        l.seconds += share;
      }
    }
    if (!row.ops.empty())
      out.groups.push_back(std::move(row));
  }
}

MeasuredRun combineRanks(std::vector<MeasuredRun> runs) {
  if (runs.size() == 1)
    return std::move(runs.front());
  MeasuredRun all;
  all.rankCount = static_cast<unsigned>(runs.size());
  const double n = static_cast<double>(runs.size());
  std::vector<std::string> paths;
  for (MeasuredRun &r : runs) {
    paths.push_back(r.path);
    all.ranks.push_back({r.rank, r.path, r.stepSeconds, r.forwardSeconds, r.backwardSeconds, r.commSeconds,
                         r.hiddenCommSeconds, r.peakAllocated});
    all.worldSize = std::max(all.worldSize, r.worldSize);
    if (all.deviceName.empty())
      all.deviceName = r.deviceName;
    all.hasStep |= r.hasStep;
    if (all.stepName.empty())
      all.stepName = r.stepName;
    all.hasBackward |= r.hasBackward;
    all.hasOptimizer |= r.hasOptimizer;
    all.onDevice |= r.onDevice;
    all.hasComm |= r.hasComm;
    all.stepSeconds += r.stepSeconds / n;
    all.forwardSeconds += r.forwardSeconds / n;
    all.backwardSeconds += r.backwardSeconds / n;
    all.optimizerSeconds += r.optimizerSeconds / n;
    all.hostStepSeconds += r.hostStepSeconds / n;
    all.deviceBusySeconds += r.deviceBusySeconds / n;
    all.commSeconds += r.commSeconds / n;
    all.hiddenCommSeconds += r.hiddenCommSeconds / n;
    all.computeSeconds += r.computeSeconds / n;
    // Ops: every rank's, parents moved past the ranks before; compareRun
    // divides their sums by rankCount.
    const int offset = static_cast<int>(all.ops.size());
    for (MeasuredRun::Op &op : r.ops) {
      if (op.parent >= 0)
        op.parent += offset;
      op.rank = static_cast<unsigned>(all.ranks.size() - 1);
      all.ops.push_back(std::move(op));
    }
    // Memory: the rank that holds the most.
    if (r.hasMemory && (!all.hasMemory || r.peakAllocated > all.peakAllocated)) {
      all.hasMemory = true;
      all.memoryDevice = r.memoryDevice;
      all.memoryRelative = r.memoryRelative;
      all.peakAllocated = r.peakAllocated;
      all.atPeak = r.atPeak;
    }
    all.peakReserved = std::max(all.peakReserved, r.peakReserved);
  }
  all.path = llvm::join(paths, ", ");
  return all;
}

namespace {

// Per fusion group: the measured ops of each phase, in the order they ran,
// matched to the phase's kernel-running nodes in the order the timeline runs
// them: each measured op takes the next node of its name within a short
// look-ahead (an op the graph does not run in that place, or one the capture
// ordered differently, stays unmatched and the nodes skipped wait for later
// ops). A group's measured time is its matched ops'; its predicted time is
// the timeline's. Several ranks run the same ops: each rank is aligned on
// its own and the sums divided by the rank count.
void alignGroups(const PredictedOps &pred, const MeasuredRun &meas, const std::vector<size_t> &counted,
                 RunComparison &c) {
  constexpr size_t kLookAhead = 64;
  if (pred.groups.empty() || counted.empty())
    return;
  std::vector<RunComparison::GroupRow> rows(pred.groups.size());
  for (size_t g = 0; g < rows.size(); ++g)
    rows[g].group = pred.groups[g];
  for (int phase = 0; phase < 2; ++phase)
    for (const auto &[name, g] : pred.sequence[phase])
      ++rows[g].kernelOps;
  std::vector<size_t> order = counted;  // per rank, in the order the ops ran
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const MeasuredRun::Op &x = meas.ops[a], &y = meas.ops[b];
    return x.rank != y.rank ? x.rank < y.rank : x.start < y.start;
  });
  size_t next[2] = {0, 0};
  for (size_t j = 0; j < order.size(); ++j) {
    const MeasuredRun::Op &op = meas.ops[order[j]];
    if (j > 0 && op.rank != meas.ops[order[j - 1]].rank)
      next[0] = next[1] = 0;  // the next rank's step
    int phase = pred.joint && op.inBackward ? 1 : 0;
    if (op.inBackward && !pred.joint)
      continue;  // a synthesised backward has no ops to match
    const auto &seq = pred.sequence[phase];
    std::string name = canonicalOp(op.name);
    for (size_t k = next[phase]; k < seq.size() && k < next[phase] + kLookAhead; ++k)
      if (seq[k].first == name) {
        RunComparison::GroupRow &r = rows[seq[k].second];
        r.measuredSeconds += op.seconds / meas.rankCount;
        ++r.matchedOps;
        next[phase] = k + 1;
        break;
      }
  }
  for (RunComparison::GroupRow &r : rows)
    r.matchedOps = (r.matchedOps + meas.rankCount / 2) / meas.rankCount;
  std::stable_sort(rows.begin(), rows.end(), [](const RunComparison::GroupRow &a, const RunComparison::GroupRow &b) {
    return std::abs(a.group.seconds - a.measuredSeconds) > std::abs(b.group.seconds - b.measuredSeconds);
  });
  c.groups = std::move(rows);
}

}  // namespace

std::optional<double> RunComparison::Metric::relativeError() const {
  if (!predicted || !measured || *measured == 0)
    return std::nullopt;
  return (*predicted - *measured) / *measured;
}

RunComparison compareRun(const FileReport &r, const PredictedOps &pred, const MeasuredRun &meas) {
  RunComparison c;
  c.model = r.path;
  c.trace = meas.path;
  const CostSummary &cost = r.cost;
  const MemorySummary &mem = r.memory;
  auto metric = [&](std::string name, std::string unit, std::optional<double> p, std::optional<double> m) {
    c.metrics.push_back({std::move(name), std::move(unit), p, m});
  };
  auto some = [](bool known, double v) { return known ? std::optional<double>(v) : std::nullopt; };
  const bool train = cost.present && cost.communication.present;
  if (cost.present) {
    double step = train ? cost.communication.stepSeconds : cost.secondsForward;
    const bool timed = meas.hasStep || !meas.ops.empty();  // a trace, not a snapshot alone
    metric("step", "s", step, some(timed, meas.stepSeconds));
    // The device's busy time: the step less the waits on the host, which
    // graphlint does not predict (its device is never starved).
    if (meas.onDevice)
      metric("device_busy", "s",
             train ? cost.communication.forwardSeconds + cost.communication.backwardSeconds +
                         cost.communication.optimizerSeconds
                   : cost.secondsForward,
             meas.deviceBusySeconds);
    metric("forward", "s", train ? cost.communication.forwardSeconds : cost.secondsForward,
           some(timed, meas.forwardSeconds));
    if (train) {
      metric("backward", "s", cost.communication.backwardSeconds, some(meas.hasBackward, meas.backwardSeconds));
      metric("optimizer", "s", cost.communication.optimizerSeconds, some(meas.hasOptimizer, meas.optimizerSeconds));
    }
  }
  if (mem.present && meas.hasMemory) {
    uint64_t start = meas.memoryRelative ? pred.startBytes : 0;
    c.memoryDevice = meas.memoryDevice;
    c.memoryRelative = meas.memoryRelative;
    c.measuredRegionPeak = meas.peakAllocated;
    c.predictedStartBytes = pred.startBytes;
    metric("peak_allocated", "bytes", static_cast<double>(mem.peakAllocatedBytes),
           static_cast<double>(meas.peakAllocated + start));
    if (meas.memoryRelative)
      c.notes.push_back(fmt::format(
          "measured memory: {} counts only what the profiled region allocated; the bytes held before it "
          "(parameters, buffers, optimizer state, inputs: {} predicted) are added to its peak",
          meas.memoryDevice, formatBytes(static_cast<double>(start))));
    if (meas.peakReserved > 0)
      metric("peak_reserved", "bytes", static_cast<double>(mem.peakReservedBytes), static_cast<double>(meas.peakReserved));
  } else if (mem.present) {
    metric("peak_allocated", "bytes", static_cast<double>(mem.peakAllocatedBytes), std::nullopt);
  }
  if (train && (cost.communication.commSeconds > 0 || meas.hasComm)) {
    const auto &cm = cost.communication;
    double hidden = cm.commSeconds > 0 ? 100 * (1 - cm.exposedSeconds / cm.commSeconds) : 0;
    metric("comm", "s", cm.commSeconds, some(meas.hasComm, meas.commSeconds));
    metric("comm_hidden", "%", hidden,
           some(meas.hasComm, meas.commSeconds > 0 ? 100 * meas.hiddenCommSeconds / meas.commSeconds : 0));
  }

  // Per op, by name: each measured op counted once, at the outermost level
  // the graph names.
  std::map<std::string, OpTimes> measured, measuredLines;
  std::vector<size_t> counted;  // the ops the per-op rows count, in trace order
  for (size_t i = 0; i < meas.ops.size(); ++i) {
    const MeasuredRun::Op &op = meas.ops[i];
    std::string name = canonicalOp(op.name);
    if (op.inOptimizer || !pred.ops.count(name))
      continue;
    bool nested = false;
    for (int p = op.parent; p >= 0 && !nested; p = meas.ops[static_cast<size_t>(p)].parent)
      nested = pred.ops.count(canonicalOp(meas.ops[static_cast<size_t>(p)].name)) > 0;
    if (nested)
      continue;
    OpTimes &t = measured[name];
    t.seconds += op.seconds;
    ++t.count;
    counted.push_back(i);
    // Its function: the innermost enclosing frame the graph has ops of.
    for (int f = op.frame; f >= 0; f = meas.frames[static_cast<size_t>(f)].parent)
      if (pred.lines.count(meas.frames[static_cast<size_t>(f)].key)) {
        OpTimes &l = measuredLines[meas.frames[static_cast<size_t>(f)].key];
        l.seconds += op.seconds;
        ++l.count;
        break;
      }
  }
  // Several ranks: the mean rank's.
  for (auto *table : {&measured, &measuredLines})
    for (auto &[n, t] : *table) {
      t.seconds /= meas.rankCount;
      t.count = (t.count + meas.rankCount / 2) / meas.rankCount;
    }
  auto rows = [&](const std::map<std::string, OpTimes> &predicted, std::map<std::string, OpTimes> &got,
                  std::vector<RunComparison::OpRow> &out) {
    for (const auto &[n, t] : predicted)
      if (!meas.ops.empty() && (t.seconds > 0 || got.count(n)))
        out.push_back({n, t, got.count(n) ? got[n] : OpTimes{}});
    std::stable_sort(out.begin(), out.end(), [](const RunComparison::OpRow &a, const RunComparison::OpRow &b) {
      return std::abs(a.predicted.seconds - a.measured.seconds) > std::abs(b.predicted.seconds - b.measured.seconds);
    });
  };
  rows(pred.ops, measured, c.ops);
  alignGroups(pred, meas, counted, c);
  if (!meas.frames.empty())
    rows(pred.lines, measuredLines, c.lines);
  else if (!meas.ops.empty() && !pred.lines.empty())
    c.notes.push_back("the trace has no Python frames: profile with with_stack=True for the time per function");
  if (!pred.joint && train)
    c.notes.push_back("per-op times are the forward's: this graph's backward is synthesised per fusion group, "
                      "so its ops have no aten names (export with graphlint-export --train for both passes)");
  if (meas.ops.empty())
    c.notes.push_back("the measurement has no cpu_op events: no per-op times");
  if (meas.onDevice) {
    double idle = meas.stepSeconds > 0 ? 1 - meas.deviceBusySeconds / meas.stepSeconds : 0;
    c.notes.push_back(fmt::format(
        "measured on the device{}: the step is the device's span from its first kernel to its last ({} busy, {:.0f}% "
        "idle), per-op times the kernels each op launched; the host's step annotation lasted {}",
        meas.deviceName.empty() ? "" : " (" + meas.deviceName + ")", formatSeconds(meas.deviceBusySeconds),
        100 * idle, formatSeconds(meas.hostStepSeconds)));
    if (idle > 0.2)
      c.notes.push_back(fmt::format("the device was idle {:.0f}% of the measured step: the run waited on the host "
                                    "(launches, Python, data); graphlint predicts a device that is never starved",
                                    100 * idle));
  }
  c.ranks = meas.ranks;
  if (meas.ranks.size() > 1) {
    auto slowest = std::max_element(meas.ranks.begin(), meas.ranks.end(), [](const RankFigures &a, const RankFigures &b) {
      return a.stepSeconds < b.stepSeconds;
    });
    auto fastest = std::min_element(meas.ranks.begin(), meas.ranks.end(), [](const RankFigures &a, const RankFigures &b) {
      return a.stepSeconds < b.stepSeconds;
    });
    c.notes.push_back(fmt::format("{} ranks: measured times are their mean; steps from {} (rank {}) to {} (rank {}, "
                                  "{:+.1f}% over the mean); memory is the fullest rank's",
                                  meas.ranks.size(), formatSeconds(fastest->stepSeconds), fastest->rank,
                                  formatSeconds(slowest->stepSeconds), slowest->rank,
                                  meas.stepSeconds > 0 ? 100 * (slowest->stepSeconds / meas.stepSeconds - 1) : 0.0));
  }
  c.measuredAtPeak = meas.atPeak;
  c.predictedAtPeak = mem.topAtPeak;
  return c;
}

}  // namespace graphlint
