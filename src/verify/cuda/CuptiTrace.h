// CUPTI activity tracing for the cuda backend: every kernel (name, start,
// end, grid), memcpy and memory allocation record of a run, each tied back to
// the IR node that launched it through an external correlation id pushed
// around the node's launches (plus an NVTX range with the node's name, for
// Nsight Systems). CUPTI is process-global, so there is one trace at a time.
#pragma once

#include <llvm/Support/Error.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace graphlint::verify::cuda {

struct KernelRecord {
  std::string name;
  uint64_t start = 0, end = 0;  // ns
  int32_t grid[3] = {0, 0, 0};
  uint64_t node = 0;            // external correlation id: node index + 1, 0 = none
};

struct MemcpyRecord {
  uint64_t bytes = 0, start = 0, end = 0;
  uint8_t kind = 0;             // CUpti_ActivityMemcpyKind
  uint64_t node = 0;
};

struct MemoryRecord {
  bool allocation = true;       // false: release
  uint64_t bytes = 0, address = 0, timestamp = 0;
};

class CuptiTrace {
public:
  /// Registers the buffer callbacks and enables the activity kinds.
  static llvm::Expected<std::unique_ptr<CuptiTrace>> start();
  ~CuptiTrace();

  /// Brackets the launches of IR node `id` (> 0) named `name`.
  void pushNode(uint64_t id, const std::string &name);
  void popNode();
  /// Drops what was recorded so far (after the warm-up run).
  void clear();
  /// Flushes CUPTI's buffers and resolves correlation ids to nodes.
  void flush();

  const std::vector<KernelRecord> &kernels() const { return kernels_; }
  const std::vector<MemcpyRecord> &memcpys() const { return memcpys_; }
  const std::vector<MemoryRecord> &memory() const { return memory_; }
  /// Peak of allocations minus releases over the memory records.
  uint64_t peakAllocatedBytes() const;

  // Called from CUPTI's buffer-completed callback.
  void consume(uint8_t *buffer, size_t validSize);

private:
  CuptiTrace() = default;
  std::vector<KernelRecord> kernels_;
  std::vector<MemcpyRecord> memcpys_;
  std::vector<MemoryRecord> memory_;
  std::map<uint32_t, uint64_t> externalOf_;  // correlation id -> node id
  std::vector<uint32_t> kernelCorrelation_, memcpyCorrelation_;
};

}  // namespace graphlint::verify::cuda
