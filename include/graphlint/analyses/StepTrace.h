// The predicted step trace: the step timeline (StepTimeline.h) as the events
// a profiler would record on one rank -- each fusion group a kernel on the
// compute stream, each collective a kernel on the communication stream, the
// optimizer step, and the memory plan's allocated and reserved bytes over
// time -- in plain data, taken by the driver while the model is alive and
// written by `--emit-trace` as torch.profiler's Chrome trace JSON
// (src/report/StepTraceJson.cpp, docs/viewers.md). Its durations and overlap
// are the timeline's, so a trace viewer's figures are the report's.
#pragma once

#include "graphlint/analyses/Analysis.h"

#include <cstdint>
#include <string>
#include <vector>

namespace graphlint {

struct StepTrace {
  /// One fusion group's kernel (forward, backward or recompute).
  struct Kernel {
    std::string name;         // "aten::addmm addmm_3" (the group's first node)
    unsigned groupId = 0;     // FusionGroup id
    std::string groupKind;    // groupKindName
    std::string ops;          // the group's ops, comma-separated
    std::string source;       // the first node's "file:line", or ""
    std::string module;       // its module path
    std::string phase;        // "forward", "backward"
    double startSeconds = 0, seconds = 0;
    double flops = 0, bytes = 0;
  };
  struct Collective {
    std::string kind, algorithm, phase;  // "all_reduce", "ring", "backward"
    std::string group;                   // the process group: "dp", "dp_replicate"
    double bytes = 0;
    unsigned ranks = 1;
    double startSeconds = 0, endSeconds = 0;
  };
  /// Allocated and reserved bytes from `seconds` on (the memory plan's
  /// replay; each step's own peak at the start of the kernel running it).
  struct Counter {
    double seconds = 0;
    uint64_t allocated = 0, reserved = 0;
  };

  bool present = false;
  bool train = false;
  std::string target;
  unsigned rank = 0, worldSize = 1;
  std::vector<Kernel> kernels;          // in start order, never overlapping
  std::vector<Collective> collectives;  // in start order, never overlapping
  std::vector<Counter> memory;
  double forwardSeconds = 0, backwardSeconds = 0;
  double optimizerStartSeconds = 0, optimizerSeconds = 0, stepSeconds = 0;
  /// The timeline's figures (StepTimeline): communication busy and exposed
  /// seconds, and the overlap ratio as the report defines it.
  double commSeconds = 0, exposedSeconds = 0, overlapRatio = 0;
  std::vector<std::string> caveats;
};

/// The trace of the context's model under its setup: a training step when
/// the setup trains and the target is known, else the forward pass alone.
/// Not present without a graph or a target.
StepTrace stepTraceOf(AnalysisContext &ctx);

}  // namespace graphlint
