// The tp/cp/ep/pp communication of one training step (MeshTraffic.h).
#include "graphlint/analyses/MeshTraffic.h"

#include "graphlint/analyses/MemoryPlan.h"
#include "graphlint/analyses/MeshSharding.h"
#include "graphlint/analyses/PipelineSchedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace graphlint {

double MeshTraffic::seconds() const {
  double t = 0;
  for (const MeshCollective &c : collectives)
    t += c.seconds;
  return t;
}

double MeshTraffic::hiddenSeconds() const {
  double t = 0;
  for (const MeshCollective &c : collectives)
    t += c.hiddenSeconds;
  return t;
}

double MeshTraffic::bytesPerRank() const {
  double b = 0;
  for (const MeshCollective &c : collectives)
    b += c.bytesPerRank;
  return b;
}

double sendSeconds(double bytes, const Interconnect &link) {
  double bw = link.bandwidth * link.efficiency;
  return link.latency + (bw > 0 ? bytes / bw : 0);
}

double allToAllSeconds(double bytes, unsigned n, const Interconnect &link) {
  if (n <= 1)
    return 0;
  double bw = link.bandwidth * link.efficiency;
  return (n - 1) * link.latency + (bw > 0 ? (n - 1.0) / n * bytes / bw : 0);
}

namespace {

// Compute seconds of the groups whose nodes satisfy `pick`, one rank's share.
template <typename Pick>
double groupSeconds(const ComputeModel &cm, const MeshSharding &sh, bool backward, Pick pick) {
  double t = 0;
  for (const GroupCost &gc : cm.groups()) {
    if (!gc.known || !gc.group)
      continue;
    unsigned divisor = 1;
    bool any = false;
    for (const Node *n : gc.group->nodes) {
      any |= pick(*n);
      divisor = std::max(divisor, sh.computeDivisor(*n));
    }
    if (any)
      t += (backward ? gc.backward.seconds : gc.forward.seconds) / divisor;
  }
  return t;
}

// One line of the table: dimension, collective, phase and link.
MeshCollective collectiveOn(const char *dim, std::string kind, int phase, const Interconnect &link, bool interNode,
                            unsigned ranks) {
  MeshCollective c;
  c.dim = dim;
  c.collective = std::move(kind);
  c.phase = phase ? "backward" : "forward";
  c.link = link.name;
  c.interNode = interNode;
  c.ranks = ranks;
  return c;
}

}  // namespace

MeshTraffic meshTraffic(const Model &m, AnalysisContext &ctx, const Topology &dataParallel) {
  MeshTraffic out;
  const Setup &s = ctx.setup();
  const Mesh &mesh = s.mesh;
  if (!m.graph || mesh.tp * mesh.cp * mesh.ep * mesh.pp <= 1)
    return out;
  const MeshSharding &sh = ctx.get<MeshSharding>();
  const ComputeModel &cm = ctx.get<ComputeModel>();
  const PipelinePlan *plan = nullptr;
  if (mesh.pp > 1) {
    plan = &ctx.get<PipelinePlan>();
    out.notes = plan->notes();
    if (plan->active()) {
      out.pipeline = true;
      out.schedule = std::string(pipelineScheduleName(plan->schedule()));
      out.microbatches = plan->microbatches();
      out.virtualStages = plan->virtualStages();
      out.slowestRank = plan->slowestRank();
      out.bubbleFraction = plan->bubble();
      out.rankShare = plan->rankShare(out.slowestRank);
      out.paramShare = plan->paramShare(out.slowestRank);
    } else {
      plan = nullptr;
    }
  }
  // The slowest pipeline rank's nodes (all of them without a pipeline).
  auto onRank = [&](const Node &n) {
    return !plan || plan->rankOfChunk(plan->chunkOfNode(n.index)) == out.slowestRank;
  };
  const unsigned G = std::max(1u, s.gpusPerNode);
  auto linkOf = [&](unsigned span) { return span > G ? dataParallel.inter : dataParallel.intra; };
  // What the backward runs again (--recompute): its collectives run again too.
  static const RecomputePlan none;
  const RecomputePlan &replay = s.train ? recomputePlanOf(ctx, *m.graph) : none;
  auto recomputed = [&](const Node *n) { return n && n->graph == m.graph.get() && replay.recomputed(n->index); };

  // Tensor parallelism: tp ranks are innermost (torchtitan's mesh), on one node when tp <= G.
  if (mesh.tp > 1 && !sh.tpRegions().empty()) {
    unsigned regions = 0, replayed = 0;
    double bytes = 0;
    for (const TpRegion &r : sh.tpRegions())
      if (onRank(*r.node)) {
        ++regions;
        replayed += recomputed(r.node);
        bytes += MeshSharding::elements(r.output) * sh.activationElementBytes(r.output) / mesh.cp;
      }
    if (regions) {
      double S = bytes / regions;
      Topology t;
      t.ranks = mesh.tp;
      t.perNode = G;
      t.intra = dataParallel.intra;
      t.inter = dataParallel.inter;
      const Interconnect &link = linkOf(mesh.tp);
      // Each region's colwise and rowwise matmul seconds per phase (async TP
      // overlaps a collective with the matmuls of its own region only).
      struct RegionMatmuls {
        double colwise[2] = {0, 0}, rowwise[2] = {0, 0};
      };
      std::map<std::string, RegionMatmuls> perBlock;
      for (const GroupCost &gc : cm.groups()) {
        if (!gc.known || !gc.group)
          continue;
        unsigned divisor = 1;
        std::optional<MeshSharding::ShardedMatmul> mm;
        for (const Node *n : gc.group->nodes) {
          divisor = std::max(divisor, sh.computeDivisor(*n));
          if (!mm && onRank(*n))
            mm = sh.shardedMatmul(*n);
        }
        if (!mm)
          continue;
        RegionMatmuls &r = perBlock[mm->block];
        double *into = mm->style == TpStyle::Colwise ? r.colwise : r.rowwise;
        into[0] += gc.forward.seconds / divisor;
        into[1] += gc.backward.seconds / divisor;
      }
      std::vector<CollectiveKind> kinds = sh.sequenceParallel()
                                              ? std::vector{CollectiveKind::AllGather, CollectiveKind::ReduceScatter}
                                              : std::vector{CollectiveKind::AllReduce};
      for (int phase = 0; phase < 2; ++phase) {
        // The backward runs each region's collectives again, and the
        // recomputed forward (its regions) its forward ones.
        unsigned calls = phase == 1 ? regions + replayed : regions;
        size_t first = out.collectives.size();
        for (CollectiveKind k : kinds) {
          MeshCollective c =
              collectiveOn("tp", std::string(collectiveKindName(k)), phase, link, mesh.tp > G, mesh.tp);
          c.calls = calls;
          c.bytesPerCall = S;
          c.bytesPerRank = calls * graphlint::bytesPerRank(k, S, mesh.tp);
          c.seconds = calls * collectiveSeconds(k, S, t).seconds;
          c.what = fmt::format("{} the activation of {} tensor-parallel regions (attention, MLP), {}",
                               sh.sequenceParallel() ? "sequence-parallel:" : "no sequence parallelism:", regions,
                               sh.planName());
          out.collectives.push_back(c);
        }
        // Async TP (PyTorch's micro-pipelined all-gather-matmul and
        // matmul-reduce-scatter): a region's all-gather runs in tp chunks
        // beside its colwise matmuls, its reduce-scatter beside its rowwise
        // matmul (the backward the other way round); one chunk of the
        // shorter side cannot overlap, so a pair hides min(comm, matmul)
        // x (1 - 1/tp). An all-reduce (no sequence parallelism) has no
        // such pattern and stays exposed.
        if (!s.asyncTp || !sh.sequenceParallel())
          continue;
        MeshCollective &gather = out.collectives[first], &scatter = out.collectives[first + 1];
        const double perGather = gather.seconds / calls, perScatter = scatter.seconds / calls;
        auto pair = [&](double comm, double matmul) { return std::min(comm, matmul) * (1.0 - 1.0 / mesh.tp); };
        for (const TpRegion &r : sh.tpRegions()) {
          if (!onRank(*r.node))
            continue;
          auto it = perBlock.find(r.block);
          const RegionMatmuls mm = it == perBlock.end() ? RegionMatmuls{} : it->second;
          if (phase == 0) {
            gather.hiddenSeconds += pair(perGather, mm.colwise[0]);
            scatter.hiddenSeconds += pair(perScatter, mm.rowwise[0]);
            continue;
          }
          gather.hiddenSeconds += pair(perGather, mm.rowwise[1]);
          scatter.hiddenSeconds += pair(perScatter, mm.colwise[1]);
          if (recomputed(r.node)) {  // the replayed forward, beside the recomputed matmuls
            gather.hiddenSeconds += pair(perGather, mm.colwise[0]);
            scatter.hiddenSeconds += pair(perScatter, mm.rowwise[0]);
          }
        }
      }
    }
  }

  // Context parallelism: cp ranks next to tp's.
  if (mesh.cp > 1 && !sh.attentionLayers().empty()) {
    unsigned layers = 0, replayed = 0;
    double kv = 0;
    std::map<const Node *, bool> attentionNode;
    for (const AttentionLayer &a : sh.attentionLayers())
      if (onRank(*a.node)) {
        ++layers;
        replayed += recomputed(a.node);  // selective-op saves attention's output: no replay
        for (const Value *v : {a.key, a.value})
          kv += MeshSharding::elements(v) / sh.elementDivisor(v) * sh.activationElementBytes(v);
        for (const Node *n : a.nodes)
          attentionNode[n] = true;
      }
    if (layers) {
      double block = kv / layers;
      const Interconnect &link = linkOf(mesh.tp * mesh.cp);
      double attention = groupSeconds(cm, sh, false, [&](const Node &n) { return attentionNode.count(&n) > 0; });
      for (int phase = 0; phase < 2; ++phase) {
        MeshCollective c = collectiveOn("cp", "send_recv", phase, link, mesh.tp * mesh.cp > G, mesh.cp);
        c.calls = (phase == 1 ? layers + replayed : layers) * (mesh.cp - 1);
        // Backward rotates K, V and their gradients: twice the bytes.
        c.bytesPerCall = phase ? 2 * block : block;
        c.bytesPerRank = c.calls * c.bytesPerCall;
        c.seconds = c.calls * sendSeconds(c.bytesPerCall, link);
        // Each step's transfer runs beside the attention of the block in
        // hand; the backward's attention takes about twice the forward's.
        c.hiddenSeconds = std::min(c.seconds, phase ? 2 * attention : attention);
        c.what = fmt::format("ring attention: the K,V block of {} attention layers, cp - 1 = {} steps each",
                             layers, mesh.cp - 1);
        out.collectives.push_back(c);
      }
    }
  }

  // Expert parallelism: ep ranks spaced by tp (carved from dp_shard x cp).
  if (mesh.ep > 1 && !sh.moeLayers().empty()) {
    unsigned layers = 0, replayed = 0;
    double bytes = 0;
    for (const MoeLayer &l : sh.moeLayers()) {
      if (!l.input || (l.input->producer && !onRank(*l.input->producer)))
        continue;
      ++layers;
      replayed += recomputed(l.input->producer);
      bytes += s.capacityFactor * l.tokens / mesh.cp * l.topK * l.hidden * sh.activationElementBytes(l.input);
    }
    if (layers) {
      double S = bytes / layers;
      const Interconnect &link = linkOf(mesh.ep * mesh.tp);
      for (int phase = 0; phase < 2; ++phase) {
        MeshCollective c = collectiveOn("ep", "all_to_all", phase, link, mesh.ep * mesh.tp > G, mesh.ep);
        c.calls = (phase == 1 ? layers + replayed : layers) * 2;  // dispatch and combine
        c.bytesPerCall = S;
        c.bytesPerRank = c.calls * (mesh.ep - 1.0) / mesh.ep * S;
        c.seconds = c.calls * allToAllSeconds(S, mesh.ep, link);
        c.what = fmt::format("dispatch and combine of {} MoE layers: tokens x top-k x capacity factor {}", layers,
                             s.capacityFactor);
        out.collectives.push_back(c);
      }
    }
  }

  // Pipeline: the slowest rank's sends, one per micro-batch per chunk end.
  if (out.pipeline) {
    double perMicrobatch = 0;
    for (unsigned r = 0; r < mesh.pp; ++r)
      perMicrobatch = std::max(perMicrobatch, plan->sendBytesPerMicrobatch(r));
    unsigned world = mesh.worldSize();
    const Interconnect &link = linkOf(world);
    for (int phase = 0; phase < 2; ++phase) {
      MeshCollective c = collectiveOn("pp", "send_recv", phase, link, world > G, mesh.pp);
      c.calls = out.microbatches;
      c.bytesPerCall = perMicrobatch;
      c.bytesPerRank = c.calls * perMicrobatch;
      c.seconds = c.calls * sendSeconds(perMicrobatch, link);
      // Steady-state sends overlap the next micro-batch's compute; the
      // fill (forward) and the drain (backward) wait for pp - 1 of them.
      c.hiddenSeconds = std::max(0.0, c.seconds - (mesh.pp - 1) * sendSeconds(perMicrobatch, link));
      c.what = fmt::format("{} per micro-batch between stages, {} micro-batches",
                           phase ? "the activation gradient" : "the activation", out.microbatches);
      out.collectives.push_back(c);
    }
  }
  return out;
}

}  // namespace graphlint
