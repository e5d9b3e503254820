// The verify executor (docs/verify.md): runs a model's main graph once on a
// backend so that predictions can be compared with measurements. One planner
// (ExecPlan: node order, and which tensors die after each node) and one
// dispatcher (runPlan: binds, executes, frees, counts live bytes) serve every
// backend; a backend only knows how to hold tensors and run single nodes. The
// `cpu` backend is the plain C++ reference that CI checks against the ONNX
// backend node tests; the `cuda` backend (built with the CUDA toolkit) runs on
// a GPU under CUPTI.
#pragma once

#include "graphlint/verify/HostTensor.h"

#include <llvm/Support/Error.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace graphlint::verify {

/// One step of the schedule: run `node`, then free the values it used last.
struct PlanStep {
  const Node *node = nullptr;
  std::vector<const Value *> freeAfter;
};

/// The alloc/free schedule of the main graph: tensors are allocated when
/// produced and freed right after their last use; parameters, graph inputs
/// and graph outputs live for the whole run. The liveness peak the comparison
/// uses as its placeholder prediction is computed from this same schedule.
class ExecPlan {
public:
  explicit ExecPlan(const Graph &g);
  const Graph &graph() const { return *graph_; }
  const std::vector<PlanStep> &steps() const { return steps_; }
  /// Params and graph inputs: bound before the first step, never freed.
  const std::vector<const Value *> &resident() const { return resident_; }
  /// The first node the plan cannot run whatever the backend (control flow,
  /// nested graphs, sequences), with the reason; nullopt when there is none.
  std::optional<std::pair<const Node *, std::string>> firstUnplannable() const;

private:
  const Graph *graph_;
  std::vector<PlanStep> steps_;
  std::vector<const Value *> resident_;
};

/// Why `n` cannot be run at all, whatever the backend: no output, or fewer
/// (or more) inputs and outputs than its schema allows, or a required input
/// omitted. Kernels index their operands by position and rely on this.
std::optional<std::string> arityProblem(const Node &n);

/// The rounding of the allocation policy both sides assume: PyTorch's
/// caching allocator rounds every block to 512 bytes (BRIEF "Cost model").
uint64_t allocatorRound(uint64_t bytes);

/// Liveness peak predicted from static IR types over `plan`'s schedule:
/// resident bytes + the largest sum of live activations, each rounded by
/// allocatorRound. nullopt when some tensor has no static size.
std::optional<uint64_t> plannedPeakBytes(const ExecPlan &plan);

/// What runs nodes. The dispatcher owns order, lifetime and accounting; a
/// backend holds tensors for values and executes one node at a time.
class Backend {
public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  /// Why this backend cannot run `n`, or nullopt when it can.
  virtual std::optional<std::string> unsupported(const Node &n) const = 0;
  /// Makes `v` hold `t` (graph inputs and parameters).
  virtual llvm::Error bind(const Value &v, const HostTensor &t) = 0;
  /// Runs `n`: reads its inputs' tensors and defines its outputs'.
  virtual llvm::Error execute(const Node &n) = 0;
  /// Device bytes held for `v` (0 when it holds nothing).
  virtual uint64_t bytesOf(const Value &v) const = 0;
  virtual void release(const Value &v) = 0;
  /// Copies `v` to the host; nullopt when it holds nothing.
  virtual std::optional<HostTensor> fetch(const Value &v) const = 0;
  /// Brackets one run (the cuda backend synchronises and flushes CUPTI).
  virtual void beginRun(unsigned index) {}
  virtual void endRun() {}
  /// Measurements only the backend has: per-node kernel times and counts
  /// from the trace, the device's own peak. The cpu backend has none; the
  /// dispatcher's wall clock and byte count stand.
  virtual void annotate(struct RunRecord &r) const {}
};

struct NodeRecord {
  const Node *node = nullptr;
  double seconds = 0;    // kernel time (cuda: CUPTI), or host wall time (cpu)
  unsigned kernels = 0;  // kernels launched (cpu: 1 per node that computes)
};

struct RunRecord {
  std::vector<NodeRecord> nodes;   // the nodes that ran, in order
  uint64_t residentBytes = 0;      // params + graph inputs
  uint64_t peakBytes = 0;          // max of resident + live activations (rounded)
  std::optional<uint64_t> devicePeakBytes;  // the backend's own measurement
  unsigned memcpys = 0;
  double seconds = 0;              // sum of node seconds
  /// The run stopped before this node (unsupported op or kernel error).
  const Node *stoppedAt = nullptr;
  std::string stopReason;
  bool complete() const { return stoppedAt == nullptr; }
};

/// Runs `plan` on `backend` (whose inputs and params are already bound):
/// checks support before each node, frees after last use, counts bytes.
RunRecord runPlan(const ExecPlan &plan, Backend &backend, unsigned runIndex = 0);

/// The cpu reference backend (plain C++, double arithmetic).
std::unique_ptr<Backend> makeCpuBackend();
/// The ops the cpu backend runs, sorted (docs/verify.md lists them).
std::vector<std::string> cpuSupportedOps();

/// The cuda backend, or an error saying why there is none: built without the
/// CUDA toolkit, or no CUDA device is available. The message is one line.
llvm::Expected<std::unique_ptr<Backend>> makeCudaBackend();

}  // namespace graphlint::verify
