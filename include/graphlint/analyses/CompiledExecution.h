// Compiled execution: what torch.compile (TorchInductor behind AOTAutograd)
// changes in the memory of a forward pass or a training step, against eager
// PyTorch, when the setup states a compiling backend (Setup::compiledExecution).
// Two rules, each from PyTorch's own source (docs/memory.md "Compiled
// execution" states them and their limits):
//
//  1. Fused intermediates never materialise. A value whose producer and every
//     reader are in one fusion group of the planner's Inductor plan, of the
//     same phase, that is no graph output and that nothing keeps for backward,
//     lives in registers of the group's kernel (torch/_inductor/scheduler.py
//     fuses the nodes; only the group's outputs become buffers). A
//     contraction's own output is a buffer (Inductor calls mm/conv as library
//     kernels; epilogue fusion into a template needs max-autotune).
//  2. AOTAutograd's min-cut partitioner (torch/_functorch/partitioners.py,
//     min_cut_rematerialization_partition) saves fewer tensors than eager
//     autograd: a tensor eager keeps for backward is recomputed in the
//     backward instead when its op is on the partitioner's recomputable list
//     (pointwise, broadcast, data movement, views, casts; never random ops,
//     contractions, attention or reductions: its `ban_recomputation`), every
//     backward op that reads it is fusible (is_materialized_backwards: a
//     matmul or convolution reading it in backward forces it to exist, so it
//     is saved), and every tensor its op reads is kept anyway (a parameter or
//     input, another saved tensor, or one recomputed the same way): the cut
//     then costs nothing in its place. The min cut can do better (save a
//     smaller tensor eager does not keep); this rule takes only the cuts that
//     add nothing, so it never saves less than the partitioner would.
#pragma once

#include "graphlint/ir/Graph.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/DenseSet.h>
#include <llvm/ADT/STLFunctionalExtras.h>

namespace graphlint {

class FusionPlan;

/// The op of `n` is one AOTAutograd may recompute in the backward: pointwise,
/// broadcast, data movement or a view, not random (dropout, bernoulli,
/// rand*), not in place, not a reduction, contraction or attention.
bool partitionerRecomputable(const Node &n);
/// A backward that reads a tensor through op `n` fuses it into a kernel
/// (pointwise, data movement, views, reductions and the norm and softmax
/// backwards Inductor decomposes), so the tensor need not exist; false for a
/// matmul, convolution, attention, pooling or unknown op.
bool fusibleInBackward(const Node &n);
/// Views (isViewOp) followed back to the value whose storage they share.
const Value *storageBase(const Value *v);

/// Rule 2. `saved`: the storage bases eager keeps for backward, in forward
/// order; `backwardFusible(v)`: every backward read of v goes through a
/// fusible op; `resident(v)`: v is a parameter, buffer or input (kept
/// anyway). Returns the subset the partitioner recomputes.
llvm::DenseSet<const Value *> partitionerRecomputes(llvm::ArrayRef<const Value *> saved,
                                                    llvm::function_ref<bool(const Value *)> backwardFusible,
                                                    llvm::function_ref<bool(const Value *)> resident);

/// Rule 1. The values of `g` that never materialise under `plan`;
/// `keptForBackward(v)`: the compiled forward hands v (a storage base) to the
/// backward, so it is a buffer.
/// `runs`: the nodes that execute (a joint graph linted for inference runs
/// its forward only); reads by other nodes do not count.
llvm::DenseSet<const Value *> fusedAwayValues(const Graph &g, const FusionPlan &plan,
                                              llvm::function_ref<bool(const Value *)> keptForBackward,
                                              llvm::function_ref<bool(const Node &)> runs);

/// A fused group runs as one kernel: everything it reads lives until the
/// group's last node of the reader's phase (`lastRead`, extended), even
/// where the node that reads it comes earlier in the graph's order.
void holdKernelInputs(const Graph &g, const FusionPlan &plan, llvm::DenseMap<const Value *, int64_t> &lastRead,
                      llvm::function_ref<bool(const Node &)> runs);
/// Index of the last node of `n`'s fusion group that runs in `n`'s phase.
int64_t kernelEnd(const FusionPlan &plan, const Node &n);

}  // namespace graphlint
