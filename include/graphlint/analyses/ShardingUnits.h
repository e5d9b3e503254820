// The units a stage-3 data-parallel strategy gathers and reduces together,
// as FSDP wraps a transformer: `fully_shard` on each repeated block plus the
// root for what is left (embeddings, final norm, head), torchtitan's and
// the FSDP docs' recipe (DeepSpeed ZeRO-3 fetches per module, prefetching
// by block, which this also approximates). The memory trace and the step
// timeline both read this one assignment, so the bytes a unit holds and the
// collectives it issues are the same units.
#pragma once

#include "graphlint/ir/Graph.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/STLFunctionalExtras.h>

#include <string>
#include <vector>

namespace graphlint {

struct ShardingUnits {
  /// Each unit's parameters, in `trainable`'s order; units in the order the
  /// forward first reads them (the root where its first parameter is read).
  std::vector<std::vector<const Value *>> params;
  /// The block's module path ("model.layers.3"); "(root)" for the root.
  std::vector<std::string> names;
  llvm::DenseMap<const Value *, unsigned> unitOf;
  /// The root unit's index; -1 when every parameter is in a block (or the
  /// units were cut by size).
  int root = -1;
  /// True: units are the graph's repeated blocks plus the root; false: the
  /// graph has none, and the units are cut by size.
  bool perBlock = false;
};

/// "model.layers.3" of "model.layers.3.mlp.experts.5.w1.weight" (a parameter
/// or a node's module path): up to the first index, the ModuleList entry
/// FSDP wraps (a leaf Linear of `layers` too, which checkpointLayers does
/// not count as a layer); "" when there is none ("onnx::MatMul_12").
llvm::StringRef indexedModule(llvm::StringRef name);

/// Assigns each of `trainable` (the trainable parameters) to its indexed
/// module (its name up to the first index: "model.layers.3"), else to the
/// repeated layer of its first forward reader (checkpointLayers,
/// MemoryPlan.h), else to the root. A graph without repeated blocks is
/// cut by size instead, as a size-based auto-wrap policy does: parameters
/// in first-read order, a unit closing once it holds `cutBytes` (of
/// `bytes(p)`).
ShardingUnits shardingUnits(const Graph &g, llvm::ArrayRef<const Value *> trainable,
                            llvm::function_ref<double(const Value *)> bytes, double cutBytes);
/// The same with the graph's checkpointLayers(g) given (computed once per
/// context: checkpointLayersOf, MemoryPlan.h).
ShardingUnits shardingUnits(const Graph &g, llvm::ArrayRef<llvm::StringRef> layers,
                            llvm::ArrayRef<const Value *> trainable, llvm::function_ref<double(const Value *)> bytes,
                            double cutBytes);

}  // namespace graphlint
