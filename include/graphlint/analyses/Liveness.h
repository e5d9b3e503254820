// Liveness over one graph's schedule: the last node that reads each value.
// The schedule is the graph's topological order (or the nodes of it that run:
// a joint graph linted without --train runs only its forward nodes). A read
// inside a nested If/Loop/Scan body counts at the main-graph node that owns
// the body, outer-scope captures count as reads of the value they capture,
// and a module's forward holds its arguments until it returns (a value read
// inside a module scope it was not produced in lives to that scope's last
// node: ONNX "/blocks.0/mlp/fc/MatMul" names, FX module paths). This is the
// one liveness that the memory trace (src/analyses/MemoryTrace.cpp,
// JointTrace.cpp) and verify's execution plan (src/verify/Executor.cpp)
// share, so verify measures the schedule the memory plan predicts.
#pragma once

#include "graphlint/ir/Graph.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/STLFunctionalExtras.h>

#include <cstdint>

namespace graphlint {

class Liveness {
public:
  /// `runs` picks the nodes of `g` that execute (every node when empty).
  /// `model` (the graph's, optional) supplies the FX exporter's
  /// `module_containers`: module paths that are never a module call
  /// (nn.ModuleList), so no scope holds arguments there.
  /// `pythonHolds`: false for a compiled graph (torch.compile), whose
  /// generated code frees each buffer after its last reader: no module
  /// argument or Python local holds it longer.
  explicit Liveness(const Graph &g, llvm::function_ref<bool(const Node &)> runs = {}, const Model *model = nullptr,
                    bool pythonHolds = true);

  /// Index (in `g`) of the last running node that reads `v` or holds it as a
  /// module argument; -1 when nothing that runs reads it.
  int64_t lastRead(const Value *v) const {
    auto it = lastRead_.find(v);
    return it == lastRead_.end() ? -1 : it->second;
  }
  /// Every value read by a running node, with its last read.
  const llvm::DenseMap<const Value *, int64_t> &lastReads() const { return lastRead_; }

private:
  void holdModuleArguments(const Graph &g, const Model *model);
  void holdPythonLocals(const Graph &g);
  llvm::DenseMap<const Value *, int64_t> lastRead_;
};

}  // namespace graphlint
