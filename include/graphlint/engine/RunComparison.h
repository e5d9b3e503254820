// graphlint compare (docs/viewers.md#compare): a prediction held against a
// measured run. MeasuredRun reads what torch.profiler wrote (Kineto's Chrome
// trace JSON: the step, its phases, each aten op's time, the memory events of
// profile_memory=True, NCCL kernels against compute kernels); the
// comparison puts it beside the lint's own figures for the same model and
// setup -- step, phases, per-op time aligned by aten op name, peak memory, the
// allocations at the measured peak, overlap -- largest mispredictions first.
#pragma once

#include "graphlint/engine/Driver.h"

#include <llvm/Support/Error.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace graphlint {

/// Time and calls per aten op name ("aten::addmm").
struct OpTimes {
  double seconds = 0;
  unsigned count = 0;
};

/// What the lint predicts per op (the compute model's group times split
/// over each group's nodes; joint graphs' backward ops by their own names)
/// and the bytes held before the step starts (model states and inputs).
struct PredictedOps {
  std::map<std::string, OpTimes> ops;
  /// The forward's time per user function (functionKey), from the
  /// exporter's recorded locations.
  std::map<std::string, OpTimes> lines;
  uint64_t startBytes = 0;
  bool joint = false;  // the graph holds its own backward (ops named as eager runs them)
  /// The fusion groups as the timeline runs them, and the ops that launch
  /// kernels in that order (canonical aten name, index into `groups`):
  /// [0] the forward, [1] a joint graph's backward.
  struct Group {
    unsigned id = 0;
    std::string kind, ops;  // groupKindName; "aten::addmm+aten::relu"
    bool backward = false;
    double seconds = 0;
  };
  std::vector<Group> groups;
  std::vector<std::pair<std::string, unsigned>> sequence[2];
};
/// The key a user function is aligned under: "file.py:DEF_LINE:name" (its
/// file's name, the line of its `def`, its name), as a with_stack=True
/// profile names a frame ("path/file.py(DEF_LINE): name"). The file's name
/// only, since the exporter records paths relative to the user's root and the
/// profiler relative to the sys.path entry the file was imported from.
std::string functionKey(llvm::StringRef path, unsigned defLine, llvm::StringRef name);

/// LintOptions::withAnalyses for compare: fills `out` from the model's analyses.
void collectPredictedOps(const Model &m, AnalysisContext &ctx, PredictedOps &out);

/// One rank's figures in a multi-rank comparison.
struct RankFigures {
  int rank = -1;
  std::string path;
  double stepSeconds = 0, forwardSeconds = 0, backwardSeconds = 0, commSeconds = 0, hiddenCommSeconds = 0;
  uint64_t peakAllocated = 0;
};

struct MeasuredRun {
  std::string path;
  int rank = -1, worldSize = 0;  // distributedInfo, when the trace has it
  std::string deviceName;        // deviceProperties[0].name
  /// One step: the last ProfilerStep#N annotation, or the last event named
  /// TraceOptions::step (or the whole trace).
  bool hasStep = false;
  std::string stepName;
  /// On a device trace (kernels launched in the step) the step is the
  /// device's span from the first kernel's start to the last one's end, and
  /// the phases the device's busy time in each (by where the kernel was
  /// launched); on a CPU trace they are the host's spans.
  double stepSeconds = 0, forwardSeconds = 0, backwardSeconds = 0, optimizerSeconds = 0;
  bool hasBackward = false, hasOptimizer = false;
  bool onDevice = false;
  double hostStepSeconds = 0;    // the step annotation's own length
  double deviceBusySeconds = 0;  // the union of the device's non-NCCL work in the step
  /// Every cpu_op in the step: name, start, duration, the enclosing cpu_op.
  struct Op {
    std::string name;
    /// `seconds`: on a device trace the device time of the kernels it (or
    /// an op inside it) launched, else the host's duration (`hostSeconds`).
    double start = 0, seconds = 0, hostSeconds = 0;
    int parent = -1;
    bool inOptimizer = false;  // inside an Optimizer.step# or zero_grad record_function
    int frame = -1;            // the innermost Python frame enclosing it (with_stack=True), into `frames`
    bool inBackward = false;   // inside the autograd engine's evaluate_function events
    unsigned rank = 0;         // which of combineRanks' runs it came from (0 for one trace)
  };
  std::vector<Op> ops;
  /// with_stack=True: the python_function events, each with the one
  /// enclosing it; `key` is functionKey of "path(DEF_LINE): function".
  struct Frame {
    std::string key;
    int parent = -1;
  };
  std::vector<Frame> frames;
  /// profile_memory=True: the device's allocation events.
  bool hasMemory = false;
  std::string memoryDevice;      // "cpu", "cuda"
  /// On the CPU the profiler counts only what the profiled region allocated:
  /// the peak is relative to the bytes held when profiling started.
  bool memoryRelative = false;
  uint64_t peakAllocated = 0, peakReserved = 0;
  struct Allocation {
    uint64_t bytes = 0;
    std::string op;              // the outermost cpu_op that allocated it ("" when none)
  };
  std::vector<Allocation> atPeak;  // largest first, at most 10
  /// GPU kernels: NCCL ones against the rest.
  bool hasComm = false;
  double commSeconds = 0, hiddenCommSeconds = 0, computeSeconds = 0;
  /// Several ranks combined (combineRanks): how many, and each one's figures.
  unsigned rankCount = 1;
  std::vector<RankFigures> ranks;
};

struct TraceOptions {
  /// The step: the last host event whose name contains this ("" = the last
  /// ProfilerStep#N).
  std::string step;
};

/// Reads a torch.profiler Chrome trace (one rank's, `.json` or gzipped).
/// Errors name the file and the problem.
llvm::Expected<MeasuredRun> readMeasuredTrace(const std::string &path, const TraceOptions &opts = {});
/// A trace file, or a folder of them (HTA's layout: one per rank, `.json`
/// and `.json.gz`), in rank order.
llvm::Expected<std::vector<MeasuredRun>> readMeasuredTraces(const std::string &path, const TraceOptions &opts = {});
/// Several ranks' runs as one: times (per op too) are the ranks' mean,
/// memory the largest rank's; `ranks` keeps each rank's own figures.
MeasuredRun combineRanks(std::vector<MeasuredRun> runs);
/// Reads a torch memory snapshot (torch.cuda.memory._dump_snapshot's pickle)
/// into `run`'s memory figures, replacing the trace's: its device trace
/// replayed from the bytes held when recording began.
llvm::Error readMeasuredSnapshot(const std::string &path, MeasuredRun &run);

struct RunComparison {
  struct Metric {
    std::string name;            // "step", "forward", "peak_allocated", ...
    std::string unit;            // "s", "bytes", "%"
    std::optional<double> predicted, measured;
    /// (predicted - measured) / measured when both are known and measured != 0.
    std::optional<double> relativeError() const;
  };
  struct OpRow {
    std::string op;
    OpTimes predicted, measured;
  };
  std::string model, trace;
  std::vector<Metric> metrics;
  std::vector<OpRow> ops;        // largest |predicted - measured| seconds first
  std::vector<OpRow> lines;      // the forward per user function, the same order (op = its key)
  /// Per fusion group: the measured ops aligned to the group's nodes in
  /// execution order; largest |predicted - measured| first.
  struct GroupRow {
    PredictedOps::Group group;
    double measuredSeconds = 0;
    unsigned kernelOps = 0, matchedOps = 0;
  };
  std::vector<GroupRow> groups;
  /// The memory figures behind peak_allocated: the measured device, whether
  /// its count is relative to the profiled region's start, the region's own
  /// peak, and the bytes the plan holds when the step starts.
  std::string memoryDevice;
  bool memoryRelative = false;
  uint64_t measuredRegionPeak = 0, predictedStartBytes = 0;
  std::vector<MeasuredRun::Allocation> measuredAtPeak;
  std::vector<MemorySummary::Contributor> predictedAtPeak;
  std::vector<RankFigures> ranks;  // a multi-rank measurement's ranks
  std::vector<std::string> notes;
};

RunComparison compareRun(const FileReport &predicted, const PredictedOps &ops, const MeasuredRun &measured);

}  // namespace graphlint
