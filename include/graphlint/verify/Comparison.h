// Predicted vs measured for `graphlint verify` (docs/verify.md). The predicted
// side plugs in through `Prediction`: seconds and kernels per fusion group and
// a peak in bytes. predictFromAnalyses fills it from the fusion plan, the
// compute model's forward time per group and the memory plan's inference
// peak, the same predictions `graphlint` reports. The measured side is a
// RunRecord; compare() joins the two per fusion group.
#pragma once

#include "graphlint/analyses/Analysis.h"
#include "graphlint/verify/Executor.h"
#include "graphlint/verify/Inputs.h"

#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

#include <optional>
#include <string>
#include <vector>

namespace graphlint::verify {

struct Prediction {
  struct Group {
    unsigned id = 0;
    std::string kind;                 // groupKindName
    std::vector<const Node *> nodes;  // in execution order
    unsigned kernels = 0;
    std::optional<double> seconds;    // nullopt: not statically known
  };
  std::vector<Group> groups;
  std::optional<uint64_t> peakBytes;
  std::string timeModel;    // what produced the seconds, for the report
  std::string memoryModel;  // what produced the peak
};

/// graphlint's predictions: FusionPlan groups of the main graph, the
/// ComputeModel's forward seconds per group on Setup::target, the MemoryPlan's
/// inference peak allocated.
Prediction predictFromAnalyses(const Model &m, AnalysisContext &ctx, const ExecPlan &plan);

struct GroupComparison {
  unsigned id = 0;
  std::string kind;
  std::string firstNode;   // name of the group's first node
  std::string ops;         // "Conv+Relu"
  unsigned predictedKernels = 0, measuredKernels = 0;
  std::optional<double> predictedSeconds;
  double measuredSeconds = 0;
  bool ran = false;        // every node of the group ran
};

struct VerifyReport {
  std::string path;
  std::string backend;     // "cpu", "cuda"
  std::string device;      // "host CPU (reference)", "NVIDIA H200"
  std::string target;      // hardware profile of the predictions
  std::string timeModel, memoryModel;
  std::vector<GroupComparison> groups;
  unsigned nodesRun = 0, nodesTotal = 0;
  unsigned predictedKernels = 0, measuredKernels = 0, memcpys = 0;
  std::optional<double> predictedSeconds;  // over the groups that ran
  double measuredSeconds = 0;
  std::optional<uint64_t> predictedPeakBytes;
  uint64_t measuredPeakBytes = 0;          // dispatcher's live-byte peak
  std::optional<uint64_t> devicePeakBytes; // the backend's own (cuda pool)
  std::string stoppedAtNode, stoppedAtOp, stopReason;
  unsigned warmupRuns = 0;
};

/// Signed relative error (predicted - measured) / measured; nullopt when
/// either side is missing or measured is 0.
std::optional<double> relativeError(std::optional<double> predicted, double measured);

VerifyReport compare(const Prediction &p, const RunRecord &r, const ExecPlan &plan);

struct VerifyOptions {
  FeedOptions feed;
  unsigned warmupRuns = 1;  // runs before the measured one
};

/// Plans, feeds, runs `warmupRuns` + 1 times on `backend`, predicts and
/// compares. Errors are one line (bad input, missing weights).
llvm::Expected<VerifyReport> verifyModel(const Model &m, const Setup &setup, Backend &backend,
                                         const VerifyOptions &opts);

llvm::json::Value verifyToJson(const VerifyReport &r);
void renderVerifyText(const VerifyReport &r, llvm::raw_ostream &os);

}  // namespace graphlint::verify
