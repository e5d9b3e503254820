// The α-β collective model (docs/cost-model.md "Collectives").
#include "graphlint/analyses/Collectives.h"

#include <algorithm>
#include <cmath>

namespace graphlint {

std::string_view collectiveKindName(CollectiveKind k) {
  switch (k) {
  case CollectiveKind::AllReduce: return "all_reduce";
  case CollectiveKind::ReduceScatter: return "reduce_scatter";
  case CollectiveKind::AllGather: return "all_gather";
  }
  return "all_reduce";
}

std::string_view collectiveAlgoName(CollectiveAlgo a) {
  switch (a) {
  case CollectiveAlgo::None: return "none";
  case CollectiveAlgo::Ring: return "ring";
  case CollectiveAlgo::Tree: return "tree";
  case CollectiveAlgo::Hierarchical: return "hierarchical";
  }
  return "none";
}

namespace {

// Passes over the ring: an all-reduce is a reduce-scatter then an all-gather.
double passes(CollectiveKind k) { return k == CollectiveKind::AllReduce ? 2 : 1; }

}  // namespace

double bytesPerRank(CollectiveKind k, double bytes, unsigned n) {
  if (n <= 1)
    return 0;
  return passes(k) * (n - 1) / n * bytes;
}

double ringSeconds(CollectiveKind k, double bytes, unsigned n, const Interconnect &link) {
  if (n <= 1 || !(bytes > 0))
    return 0;
  double steps = passes(k) * (n - 1);
  double chunk = bytes / n;
  return steps * link.latency + steps * chunk / link.busBandwidth(chunk);
}

CollectiveTime collectiveSeconds(CollectiveKind k, double bytes, const Topology &topo) {
  if (topo.ranks <= 1 || !(bytes > 0))
    return {};
  unsigned nodes = topo.nodes();
  if (nodes <= 1)
    return {ringSeconds(k, bytes, topo.ranks, topo.intra), CollectiveAlgo::Ring};

  // A flat ring crosses nodes: every step is paced by the slower link.
  const Interconnect &slow = topo.inter.busBandwidth(bytes / topo.ranks) < topo.intra.busBandwidth(bytes / topo.ranks)
                                 ? topo.inter
                                 : topo.intra;
  Interconnect ringLink = slow;
  ringLink.latency = std::max(topo.intra.latency, topo.inter.latency);
  CollectiveTime best{ringSeconds(k, bytes, topo.ranks, ringLink), CollectiveAlgo::Ring};

  unsigned local = topo.localRanks();
  // Hierarchical: reduce-scatter inside the node, the collective across nodes
  // on each GPU's 1/G shard (one NIC per GPU, all in parallel), all-gather
  // inside the node. Reduce-scatter / all-gather do one of the two intra passes.
  double shard = bytes / local;
  double intra = ringSeconds(CollectiveKind::ReduceScatter, bytes, local, topo.intra);
  double hier = ringSeconds(k, shard, nodes, topo.inter) + (k == CollectiveKind::AllReduce ? 2 * intra : intra);
  if (hier < best.seconds)
    best = {hier, CollectiveAlgo::Hierarchical};

  if (k == CollectiveKind::AllReduce) {
    // NCCL's double binary tree: a chain inside each node, a tree across nodes;
    // reduce then broadcast, pipelined, so each rank moves about 2S.
    double depth = std::ceil(std::log2(static_cast<double>(nodes)));
    double latency = 2 * (depth * topo.inter.latency + (local - 1) * topo.intra.latency);
    double bw = std::min(topo.inter.busBandwidth(bytes), topo.intra.busBandwidth(bytes));
    double tree = latency + 2 * bytes / bw;
    if (tree < best.seconds)
      best = {tree, CollectiveAlgo::Tree};
  }
  return best;
}

}  // namespace graphlint
