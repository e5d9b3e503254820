// The α-β model of NCCL collectives (docs/cost-model.md "Collectives"): the
// time of an all-reduce, reduce-scatter or all-gather of S bytes over a
// topology of N ranks, G per node, joined by an intra-node and an inter-node
// interconnect. Ring, tree and hierarchical (intra-node, then inter-node)
// algorithms are modelled; like NCCL's tuner, the fastest one for the size
// is chosen. Pure functions: the step timeline (StepTimeline.h) calls them.
#pragma once

#include "graphlint/base/HardwareProfile.h"

#include <string_view>

namespace graphlint {

enum class CollectiveKind : uint8_t { AllReduce, ReduceScatter, AllGather };
std::string_view collectiveKindName(CollectiveKind k);  // "all_reduce", ...

enum class CollectiveAlgo : uint8_t { None, Ring, Tree, Hierarchical };
std::string_view collectiveAlgoName(CollectiveAlgo a);  // "ring", ...

struct Topology {
  unsigned ranks = 1;
  unsigned perNode = 8;
  Interconnect intra, inter;
  unsigned nodes() const { return perNode ? (ranks + perNode - 1) / perNode : 1; }
  /// Ranks sharing a node: all of them when the job fits in one.
  unsigned localRanks() const { return ranks < perNode ? ranks : perNode; }
};

struct CollectiveTime {
  double seconds = 0;
  CollectiveAlgo algo = CollectiveAlgo::None;
};

/// Ring over n ranks on one link: all-reduce 2(n-1) steps of S/n bytes,
/// t = 2(n-1)·α + 2(n-1)/n · S / busBW(S/n); reduce-scatter and all-gather
/// half of that. S is the full buffer (all-gather: the gathered result).
double ringSeconds(CollectiveKind k, double bytes, unsigned n, const Interconnect &link);

/// The time of one collective on `topo`, by the fastest algorithm that applies:
/// one node: ring on the intra-node link; several: a flat ring bounded by the
/// inter-node link, a tree (all-reduce only; 2⌈log2 N⌉ inter-node and 2(G-1)
/// intra-node latencies, 2S over the slower link), or hierarchical (ring
/// inside each node, then a ring across nodes on the 1/G shard each GPU holds).
CollectiveTime collectiveSeconds(CollectiveKind k, double bytes, const Topology &topo);

/// Bytes one rank sends for a collective of S bytes over n ranks (the
/// per-rank volume): all-reduce 2(n-1)/n·S, reduce-scatter and all-gather (n-1)/n·S.
double bytesPerRank(CollectiveKind k, double bytes, unsigned n);

}  // namespace graphlint
