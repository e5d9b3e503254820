// The inductor-cpu profile's launch model (docs/fusion.md#inductor-cpu-launches):
// Inductor's C++ backend emits every fused loop nest scheduled between two
// extern (library) calls as one C++ function, so what runs as one kernel call
// depends on the order the scheduler picks. This file rebuilds that schedule
// from the plan's groups: the layout copies the CPU lowering adds in front of
// 2-D convolutions, the four orders of Inductor's peak-memory pass (baseline,
// LPMF, BFS, DFS) and its choice among them, and the runs of C++ groups
// between library calls. Planner-internal; not a public header.
#pragma once

#include "graphlint/analyses/FusionPlan.h"

#include <llvm/ADT/DenseMap.h>

#include <string>
#include <vector>

namespace graphlint::fusion_detail {

struct InductorCpuLaunches {
  /// Kernel group id -> the id of the first group of the C++ function (or
  /// library call) it runs in.
  llvm::DenseMap<unsigned, unsigned> launchOf;
  /// Library-call group id -> the channels-last copies the lowering adds for
  /// its operands (a copy shared by several convolutions counts at the first).
  llvm::DenseMap<unsigned, unsigned> layoutCopiesOf;
  /// Library-call group id -> C++ functions that hold only layout copies for
  /// it (its operands' before it, its graph output's back to contiguous
  /// strides after it) and no other loop nest.
  llvm::DenseMap<unsigned, unsigned> copyOnlyLaunchesOf;
  std::string order;  // the order the peak-memory pass picks: baseline, lpmf, bfs, dfs
};

/// Rebuilds Inductor-CPU's schedule of graph `g` from its kernel groups.
InductorCpuLaunches scheduleInductorCpu(const Graph &g, const std::vector<FusionGroup> &groups,
                                        const llvm::DenseMap<const Node *, unsigned> &groupIndex);

/// Applies that schedule to the plan: each kernel group's `launch`, the
/// `layoutCopies` of library calls, and `kernels` so that they add up to the
/// launches (a group sharing another's C++ function counts 0, a convolution
/// with a copies-only function counts 2).
void assignInductorCpuLaunches(const Graph &g, std::vector<FusionGroup> &groups,
                               const llvm::DenseMap<const Node *, unsigned> &groupIndex);

/// The conditions under which Inductor's CPU lowering copies a convolution
/// operand to channels-last: a rank-4 tensor whose contiguous (NCHW) strides
/// are not already channels-last ordered once size-1 dims are ignored (so 1x1
/// kernels, depthwise weights and single-channel inputs need none).
bool contiguousIsChannelsLast(const Shape &s);

}  // namespace graphlint::fusion_detail
