// The step timeline: a two-stream simulation (compute, communication) of one
// training step. Compute runs the forward kernels, then the backward kernels
// in reverse; collectives run one at a time in issue order (FIFO) on the
// communication stream, each once its data is ready, and a kernel that needs
// a collective's result (ZeRO-3 parameters) waits for it.
#include "graphlint/analyses/StepTimeline.h"

#include "graphlint/analyses/MemoryPlan.h"

#include "graphlint/analyses/Float8Linears.h"

#include "graphlint/analyses/MeshSharding.h"
#include "graphlint/analyses/ShardingUnits.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>

namespace graphlint {

std::string_view strategyName(ParallelStrategy s) {
  switch (s) {
  case ParallelStrategy::Single: return "single";
  case ParallelStrategy::DDP: return "ddp";
  case ParallelStrategy::ZeRO1: return "zero1";
  case ParallelStrategy::ZeRO2: return "zero2";
  case ParallelStrategy::ZeRO3: return "zero3";
  case ParallelStrategy::FSDP2: return "fsdp2";
  }
  return "single";
}

std::vector<std::vector<unsigned>> assignBuckets(const std::vector<double> &bytes, const std::vector<int> &keys,
                                                 const std::vector<double> &limits) {
  struct Open {
    std::vector<unsigned> tensors;
    double size = 0;
    size_t limit = 0;  // index into limits
  };
  std::vector<std::vector<unsigned>> out;
  std::vector<int> keyOrder;
  std::map<int, Open> open;
  for (unsigned i = 0; i < bytes.size(); ++i) {
    int key = i < keys.size() ? keys[i] : 0;
    if (!open.count(key))
      keyOrder.push_back(key);
    Open &b = open[key];
    b.tensors.push_back(i);
    b.size += bytes[i];
    if (!limits.empty() && b.size >= limits[b.limit]) {
      out.push_back(std::move(b.tensors));
      b.tensors.clear();
      b.size = 0;
      b.limit = std::min(b.limit + 1, limits.size() - 1);
    }
  }
  for (int key : keyOrder)
    if (!open[key].tensors.empty())
      out.push_back(std::move(open[key].tensors));
  return out;
}

namespace {

struct Interval {
  double start, end;
};

// Length of the intersection of two sorted lists of disjoint intervals.
double overlapLength(const std::vector<Interval> &a, const std::vector<Interval> &b) {
  double total = 0;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    double lo = std::max(a[i].start, b[j].start), hi = std::min(a[i].end, b[j].end);
    if (hi > lo)
      total += hi - lo;
    (a[i].end < b[j].end ? i : j)++;
  }
  return total;
}

// A collective waiting to be issued: released at the start or end of compute
// segment `segment` (-1: at time 0), and, when `gates` >= 0, needed before
// that segment may start.
struct Pending {
  CollectiveCall call;
  int segment = -1;
  bool atEnd = true;
  int gates = -1;
  int bucket = -1;  // index into buckets_
};

// Optimizer state words read or written per parameter: SGD reads the weight
// and gradient and writes the weight; momentum adds its buffer (read, write);
// Adam adds two moments.
double optimizerWords(Optimizer o) {
  switch (o) {
  case Optimizer::SGD: return 3;
  case Optimizer::Momentum: return 5;
  case Optimizer::Adam:
  case Optimizer::AdamW: return 7;
  }
  return 7;
}

}  // namespace

StepTimeline::StepTimeline(const Model &m, AnalysisContext &ctx) {
  const Setup &setup = ctx.setup();
  const ComputeModel &cm = ctx.get<ComputeModel>();
  const HardwareProfile *hw = cm.hardware();
  if (!setup.train || !hw)
    return;
  active_ = true;

  // Topology: the named interconnects, or the target's defaults, as the
  // configuration resolved them (Setup::nodeLink).
  auto linkFor = [&](Setup::LinkLevel level, const std::string &fallback, const char *what) {
    std::string unknown;
    const Interconnect *l = setup.nodeLink(level, &unknown);
    if (!unknown.empty())
      notes_.push_back(fmt::format("unknown {} interconnect '{}': using {}'s default '{}'", what, unknown, hw->name, fallback));
    Interconnect none;
    none.name = fallback;
    none.bandwidth = 1e9;  // a profile naming a missing link: 1 GB/s, visibly slow
    return l ? *l : none;
  };
  // The data-parallel group's collectives: dp_replicate x dp_shard ranks.
  // torchtitan's mesh puts tp and cp innermost, so a node holds
  // gpus-per-node / (tp x cp) ranks of one data-parallel group.
  // torchtitan's mesh order [pp, dp_replicate, dp_shard, cp, tp]: a node
  // holds gpus-per-node / (tp x cp) ranks of one dp_shard group, and
  // gpus-per-node / (dp_shard x cp x tp) of one replicate group.
  const Mesh &mesh = setup.mesh;
  const unsigned G = std::max(1u, setup.gpusPerNode);
  // The sharded group is dp_shard x cp (Mesh::shardGroup): cp is next to
  // tp in the mesh, so a node holds gpus-per-node / tp of its ranks.
  const bool sharded = mesh.zeroStage() > 0 && mesh.shardGroup() > 1;
  topo_.ranks = sharded ? mesh.shardGroup() : std::max(1u, mesh.dataParallelRanks());
  topo_.perNode = std::max(1u, G / std::max(1u, sharded ? mesh.tp : mesh.tp * mesh.cp));
  topo_.intra = linkFor(Setup::LinkLevel::IntraNode, hw->intraNode, "intra-node");
  topo_.inter = linkFor(Setup::LinkLevel::InterNode, hw->interNode, "inter-node");
  replicas_ = topo_;
  replicas_.ranks = sharded ? mesh.dpReplicate : 1;
  replicas_.perNode = std::max(1u, G / std::max(1u, mesh.dpShard * mesh.tp * mesh.cp));
  unsigned n = topo_.ranks;
  if (n > 1)
    strategy_ = !sharded                                   ? ParallelStrategy::DDP
                : mesh.dataParallel == DataParallel::FSDP2 ? ParallelStrategy::FSDP2
                : mesh.zeroStage() == 1                    ? ParallelStrategy::ZeRO1
                : mesh.zeroStage() == 2                    ? ParallelStrategy::ZeRO2
                                                           : ParallelStrategy::ZeRO3;
  // The precision policy the memory plan uses too: mixed precision keeps and
  // communicates 16-bit gradients (and, under ZeRO-3, gathers 16-bit
  // weights); FSDP2 gathers param_dtype and reduce-scatters fp32.
  const PrecisionPolicy pp = precisionPolicy(setup.precision, mesh.dataParallel);
  commElement_ = pp.gradBytes;
  gatherElement_ = pp.computeWeightBytes;

  // Compute segments: forward kernels, then backward kernels in reverse.
  // A joint graph's backward groups are its own, in their execution order.
  const std::vector<unsigned> &sched = cm.schedule();
  const bool joint = cm.joint();
  const int F = static_cast<int>(joint ? cm.backwardStart() : sched.size());
  // One rank's share of each kernel under tp and cp (MeshSharding.h).
  const MeshSharding *sharding = mesh.tp * mesh.cp * mesh.ep > 1 ? &ctx.get<MeshSharding>() : nullptr;
  auto share = [&](unsigned group) {
    unsigned d = 1;
    if (sharding && cm.groups()[group].group)
      for (const Node *node : cm.groups()[group].group->nodes)
        d = std::max(d, sharding->computeDivisor(*node));
    return 1.0 / d;
  };
  std::vector<double> duration;
  for (int i = 0; i < F; ++i)
    duration.push_back(cm.groups()[sched[i]].known ? cm.groups()[sched[i]].forward.seconds * share(sched[i]) : 0);
  if (joint)
    for (size_t i = cm.backwardStart(); i < sched.size(); ++i)
      duration.push_back(cm.groups()[sched[i]].known ? cm.groups()[sched[i]].backward.seconds * share(sched[i]) : 0);
  else
    for (int i = F - 1; i >= 0; --i)
      duration.push_back(cm.groups()[sched[i]].known ? cm.groups()[sched[i]].backward.seconds * share(sched[i]) : 0);
  // A joint graph's checkpointed forward groups run again in the backward
  // (--recompute): each before the backward segment that differentiates it
  // (below), in a segment of its own when the graph's backward has none (a
  // step fused into its forward groups).
  bool recomputes = false;
  for (int i = 0; i < F; ++i)
    recomputes |= cm.groups()[sched[i]].known && cm.groups()[sched[i]].recompute.seconds > 0;
  if (joint && recomputes && duration.size() == static_cast<size_t>(F))
    duration.push_back(0);
  const int S = static_cast<int>(duration.size());
  // The backward segment that differentiates the forward group at forwardPos:
  // the mirror image, or for a joint graph its proportional place in the
  // graph's own backward.
  auto backwardSegment = [&](int forwardPos) {
    if (forwardPos < 0 || S == F)
      return S - 1;
    if (!joint)
      return 2 * F - 1 - forwardPos;
    long mirrored = static_cast<long>(F - 1 - forwardPos) * (S - F) / std::max(F, 1);
    return F + static_cast<int>(std::min<long>(mirrored, S - F - 1));
  };
  if (joint && S > F)
    for (int i = 0; i < F; ++i)
      if (const GroupCost &c = cm.groups()[sched[i]]; c.known && c.recompute.seconds > 0)
        duration[static_cast<size_t>(backwardSegment(i))] += c.recompute.seconds * share(sched[i]);
  // When a parameter's gradient is ready: the backward group producing it.
  auto gradReady = [&](const TrainableParam &p) { return p.gradGroup >= 0 ? p.gradGroup : backwardSegment(p.firstGroup); };

  const std::vector<TrainableParam> &params = cm.params();
  // A parameter's elements on this rank: tp and ep shard some.
  auto elements = [&](unsigned p) {
    return params[p].elements / (sharding ? sharding->elementDivisor(params[p].value) : 1);
  };
  std::vector<Pending> pending;
  auto bucketBytes = [&](const std::vector<unsigned> &ps) {
    double b = 0;
    for (unsigned p : ps)
      b += elements(p) * commElement_;
    return b;
  };
  auto newBucket = [&](std::vector<unsigned> ps) {
    ParamBucket b;
    b.index = static_cast<unsigned>(buckets_.size());
    b.bytes = bucketBytes(ps);
    b.params = std::move(ps);
    buckets_.push_back(std::move(b));
    return static_cast<int>(buckets_.size() - 1);
  };
  auto collective = [&](CollectiveKind k, double bytes, const char *phase, const Topology *over = nullptr) {
    const Topology &topo = over ? *over : topo_;
    CollectiveCall c;
    c.kind = k;
    c.bytes = bytes;
    c.phase = phase;
    c.ranks = topo.ranks;
    CollectiveTime t = collectiveSeconds(k, bytes, topo);
    c.algo = t.algo;
    c.endSeconds = t.seconds;  // the duration until scheduled
    return c;
  };
  // HSDP and hybrid ZeRO: each reduce-scattered shard is then all-reduced
  // across the replicas, issued as the shard is ready.
  auto replicate = [&](double shardBytes, int segment) {
    if (replicas_.ranks > 1)
      pending.push_back({collective(CollectiveKind::AllReduce, shardBytes, "backward", &replicas_), segment, true, -1, -1});
  };

  if (strategy_ == ParallelStrategy::DDP || strategy_ == ParallelStrategy::ZeRO1 ||
      strategy_ == ParallelStrategy::ZeRO2) {
    // Gradient buckets over the parameters in reverse model.parameters()
    // (initializer) order, as DDP builds them after its first iteration.
    std::vector<double> sizes;
    std::vector<int> keys;
    std::vector<unsigned> order;
    for (size_t i = params.size(); i-- > 0;) {
      order.push_back(static_cast<unsigned>(i));
      sizes.push_back(elements(static_cast<unsigned>(i)) * commElement_);
      keys.push_back(static_cast<int>(params[i].value->type.dtype));
    }
    CollectiveKind kind = strategy_ == ParallelStrategy::DDP ? CollectiveKind::AllReduce : CollectiveKind::ReduceScatter;
    for (const auto &members : assignBuckets(sizes, keys, {kFirstBucketBytes, kBucketBytes})) {
      std::vector<unsigned> ps;
      int ready = -1;
      for (unsigned m : members) {
        ps.push_back(order[m]);
        ready = std::max(ready, gradReady(params[order[m]]));
      }
      int b = newBucket(std::move(ps));
      pending.push_back({collective(kind, buckets_[b].bytes, "backward"), ready, true, -1, b});
      replicate(buckets_[b].bytes / n, ready);
    }
  } else if (gathersUnits(strategy_)) {
    // Units (ShardingUnits.h): fully_shard on each repeated block plus the
    // root, or a size-based wrap where the graph has no block. Each unit is
    // all-gathered before its forward and its backward, the next unit
    // prefetched when one starts, and its gradients reduce-scattered when
    // its backward is done.
    std::vector<const Value *> values;
    for (const TrainableParam &p : params)
      values.push_back(p.value);
    llvm::DenseMap<const Value *, unsigned> indexOf;
    for (unsigned i = 0; i < params.size(); ++i)
      indexOf[params[i].value] = i;
    ShardingUnits su = shardingUnits(
        *m.graph, checkpointLayersOf(ctx, *m.graph), values, [&](const Value *v) { return elements(indexOf[v]) * commElement_; }, kBucketBytes);
    auto useKey = [&](unsigned p) { return params[p].firstGroup < 0 ? F : params[p].firstGroup; };
    std::vector<int> units, first, last;
    for (size_t k = 0; k < su.params.size(); ++k) {
      std::vector<unsigned> ps;
      int lo = std::numeric_limits<int>::max(), hi = -1;
      for (const Value *v : su.params[k]) {
        unsigned p = indexOf[v];
        ps.push_back(p);
        lo = std::min(lo, useKey(p));
        hi = std::max(hi, useKey(p));
      }
      first.push_back(std::min(lo, std::max(F - 1, 0)));
      last.push_back(std::min(hi, std::max(F - 1, 0)));
      int b = newBucket(std::move(ps));
      buckets_[b].name = su.names[k];
      units.push_back(b);
    }
    const int U = static_cast<int>(units.size());
    // Forward: units in the order the forward enters them, each gathered
    // (param_dtype) as the previous one starts.
    std::vector<int> fwd(U), bwd(U);
    for (int u = 0; u < U; ++u)
      fwd[u] = bwd[u] = u;
    std::stable_sort(fwd.begin(), fwd.end(), [&](int a, int b) { return first[a] < first[b]; });
    // Backward: the order it reaches the units, by their last forward use
    // (the root, whose head runs last in forward, first).
    std::stable_sort(bwd.begin(), bwd.end(), [&](int a, int b) { return last[a] > last[b]; });
    // torchao's fp8 all-gather (--float8-all-gather, Float8Linears.h): the
    // converted weights move as fp8, 1 byte per element. Each gather's
    // fsdp_pre_all_gather casts the rank's fp32 shard first (eager, on the
    // copy-in stream: * scale, clamp, to fp8 = 21 bytes per element), after
    // its amax (abs, max: 12 bytes per element) and a 4-byte MAX all-reduce
    // per weight, unless the scales were precomputed after the optimizer.
    const Float8Linears &float8 = ctx.get<Float8Linears>();
    const bool fp8Gather = setup.float8GathersFp8();
    const double memoryBw = hw->memoryBandwidth * hw->memoryEfficiency;
    auto fp8Weight = [&](unsigned p) { return fp8Gather && float8.converted(params[p].value); };
    auto gatherBytes = [&](int u) {
      double b = 0;
      for (unsigned p : buckets_[units[u]].params)
        b += elements(p) * (fp8Weight(p) ? 1.0 : gatherElement_);
      return b;
    };
    auto gatherCall = [&](int u, const char *phase, int release, bool atEnd, int gates) {
      CollectiveCall call = collective(CollectiveKind::AllGather, gatherBytes(u), phase);
      double castBytes = 0;
      for (unsigned p : buckets_[units[u]].params)
        if (fp8Weight(p)) {
          castBytes += elements(p) / n * (setup.float8PrecomputeScale ? 21 : 33);
          if (!setup.float8PrecomputeScale)
            pending.push_back({collective(CollectiveKind::AllReduce, 4, phase), release, atEnd, gates, -1});
        }
      call.endSeconds += memoryBw > 0 ? castBytes / memoryBw : 0;
      pending.push_back({call, release, atEnd, gates, -1});
    };
    for (int k = 0; k < U; ++k)  // forward all-gathers, prefetching one ahead
      gatherCall(fwd[k], "forward", k == 0 ? -1 : first[fwd[k - 1]], false, first[fwd[k]]);
    // The next unit's gather is issued before this unit's reduce-scatter
    // (FSDP's backward prefetch), so it hides behind this unit's backward.
    auto backwardGather = [&](int k, int release, bool atEnd) {
      int u = bwd[k];
      gatherCall(u, "backward", release, atEnd, backwardSegment(last[u]));
    };
    if (U > 0)
      backwardGather(0, F - 1, true);
    for (int k = 0; k < U; ++k) {
      int u = bwd[k];
      if (k + 1 < U)
        backwardGather(k + 1, backwardSegment(last[u]), false);
      int done = -1;  // the unit's last gradient written
      for (unsigned p : buckets_[units[u]].params)
        done = std::max(done, gradReady(params[p]));
      pending.push_back({collective(CollectiveKind::ReduceScatter, buckets_[units[u]].bytes, "backward"), done, true,
                         -1, units[u]});
      replicate(buckets_[units[u]].bytes / n, done);
    }
  }

  // The simulation. Release times become known as segments start and end.
  std::vector<double> segStart(S, 0), segEnd(S, 0);
  std::vector<bool> started(S, false), ended(S, false);
  double t = 0, commFree = 0;
  size_t next = 0;
  auto releaseTime = [&](const Pending &p) -> std::optional<double> {
    if (p.segment < 0)
      return 0.0;
    if (p.atEnd ? ended[p.segment] : started[p.segment])
      return p.atEnd ? segEnd[p.segment] : segStart[p.segment];
    return std::nullopt;
  };
  auto issue = [&](Pending &p, double release) {
    double d = p.call.endSeconds;
    p.call.releaseSeconds = release;
    p.call.startSeconds = std::max(commFree, release);
    p.call.endSeconds = p.call.startSeconds + d;
    commFree = p.call.endSeconds;
  };
  auto issueReleased = [&] {
    for (; next < pending.size(); ++next) {
      auto r = releaseTime(pending[next]);
      if (!r)
        break;
      issue(pending[next], *r);
    }
  };
  std::vector<std::vector<size_t>> gatedBy(S);  // segment -> the collectives it waits for
  for (size_t c = 0; c < pending.size(); ++c)
    if (pending[c].gates >= 0 && pending[c].gates < S)
      gatedBy[pending[c].gates].push_back(c);
  for (int j = 0; j < S; ++j) {
    issueReleased();
    double ready = t;
    for (size_t c : gatedBy[j]) {
      while (next <= c)  // a gating collective stuck behind unreleased ones: issue now
        issue(pending[next++], t);
      ready = std::max(ready, pending[c].call.endSeconds);
    }
    segStart[j] = ready;
    started[j] = true;
    issueReleased();
    segEnd[j] = ready + duration[j];
    ended[j] = true;
    t = segEnd[j];
  }
  issueReleased();
  while (next < pending.size())
    issue(pending[next++], t);

  for (int j = 0; j < S; ++j) {
    ComputeSegment c;
    if (j < F)
      c.group = static_cast<int>(sched[j]);
    else if (joint && cm.backwardStart() + (j - F) < sched.size())
      c.group = static_cast<int>(sched[cm.backwardStart() + (j - F)]);
    else if (!joint && 2 * F - 1 - j >= 0)
      c.group = static_cast<int>(sched[2 * F - 1 - j]);
    c.backward = j >= F;
    c.startSeconds = segStart[j];
    c.endSeconds = segEnd[j];
    segments_.push_back(c);
  }
  forward_ = F > 0 ? segEnd[F - 1] : 0;
  backward_ = S > F ? segEnd[S - 1] - segEnd[F - 1] : 0;
  double states = cm.paramElements() / mesh.shardsAt(1);
  double element = precisionPolicy(setup.precision).momentBytes;
  optimizer_ = states * optimizerWords(setup.optimizer) * element / (hw->memoryBandwidth * hw->memoryEfficiency);
  double optStart = std::max(t, commFree);
  double optEnd = optStart + optimizer_;
  optimizerStart_ = optStart;
  step_ = optEnd;
  for (Pending &p : pending)
    calls_.push_back(p.call);
  if (strategy_ == ParallelStrategy::ZeRO1 || strategy_ == ParallelStrategy::ZeRO2) {
    // Each rank updated its shard; the new parameters are all-gathered before
    // the next forward, nothing left to hide them behind.
    commFree = optEnd;
    for (const ParamBucket &b : buckets_) {
      Pending p{collective(CollectiveKind::AllGather, b.bytes, "after optimizer")};
      issue(p, optEnd);
      calls_.push_back(p.call);
    }
    step_ = std::max(step_, commFree);
  }
  // precompute_float8_dynamic_scale_for_fsdp after optimizer.step(): one
  // _foreach_norm over the converted fp32 shards, then one MAX all-reduce of
  // their stacked amaxes before the next forward.
  if (gathersUnits(strategy_) && setup.float8GathersFp8() && setup.float8PrecomputeScale) {
    const Float8Linears &float8 = ctx.get<Float8Linears>();
    double shardElements = 0, weights = 0;
    for (unsigned p = 0; p < params.size(); ++p)
      if (float8.converted(params[p].value)) {
        shardElements += elements(p) / n;
        weights += 1;
      }
    double amaxSeconds = shardElements * 4 / (hw->memoryBandwidth * hw->memoryEfficiency);
    optimizer_ += amaxSeconds;
    optEnd += amaxSeconds;
    commFree = std::max(commFree, optEnd);
    Pending p{collective(CollectiveKind::AllReduce, 4 * weights, "after optimizer")};
    issue(p, optEnd);
    calls_.push_back(p.call);
    step_ = std::max(optEnd, commFree);
  }
  for (const Pending &p : pending)
    if (p.bucket >= 0) {
      ParamBucket &b = buckets_[p.bucket];
      b.readySeconds = p.call.releaseSeconds;
      b.startSeconds = p.call.startSeconds;
      b.endSeconds = p.call.endSeconds;
    }

  // Overlap: compute busy intervals against the communication stream's.
  std::vector<Interval> compute, comm;
  for (int j = 0; j < S; ++j)
    if (segEnd[j] > segStart[j])
      compute.push_back({segStart[j], segEnd[j]});
  if (optEnd > optStart)
    compute.push_back({optStart, optEnd});
  double computeBusy = 0;
  for (const Interval &i : compute)
    computeBusy += i.end - i.start;
  for (const CollectiveCall &c : calls_) {
    if (c.endSeconds > c.startSeconds)
      comm.push_back({c.startSeconds, c.endSeconds});
    comm_ += c.endSeconds - c.startSeconds;
    bytesPerRank_ += graphlint::bytesPerRank(c.kind, c.bytes, c.ranks);
  }
  double both = overlapLength(compute, comm);
  exposed_ = comm_ - both;
  double longer = std::max(computeBusy, comm_);
  overlap_ = longer > 0 && comm_ > 0 ? both / longer : 0;

  applyMeshTraffic(m, ctx);

  KernelTime fwd = cm.forwardTotal(), bwd = cm.backwardTotal();
  modelFlops_ = fwd.flops + bwd.flops - cm.recomputedFlops();
  // The model FLOPs' time at the peak of the math each runs in
  // (ComputeModel::peakSeconds), so a mix of fp32, TF32 and 16-bit
  // contractions is held to the peaks it runs at. One GPU's share of the
  // replica's FLOPs: tp x cp x pp ranks run it.
  mfu_ = step_ > 0 ? cm.peakSeconds() / (mesh.tp * mesh.cp * mesh.pp) / step_ : 0;

  // Throughput as torchtitan logs it: the tokens one data-parallel rank
  // trains per step, over the step time and the ranks that share them
  // (tp x cp x pp, its non-data-parallel size).
  if (std::optional<double> tokens = tokensPerStep(m); tokens && step_ > 0)
    tokensPerSecondPerGpu_ = *tokens / (step_ * mesh.tp * mesh.cp * mesh.pp);
}

void StepTimeline::applyMeshTraffic(const Model &m, AnalysisContext &ctx) {
  mesh_ = graphlint::meshTraffic(m, ctx, topo_);
  if (mesh_.pipeline) {
    // The slowest rank's stages over all micro-batches, plus the bubble.
    double compute = (step_ - optimizer_) * mesh_.rankShare;
    bubble_ = compute * mesh_.bubbleFraction;
    optimizer_ *= mesh_.paramShare;
    step_ = compute + bubble_ + optimizer_;
  }
  step_ += mesh_.exposedSeconds();
  comm_ += mesh_.seconds();
  exposed_ += mesh_.exposedSeconds();
  bytesPerRank_ += mesh_.bytesPerRank();
  double computeBusy = step_ - exposed_;
  double longer = std::max(computeBusy, comm_);
  if (mesh_.seconds() > 0)
    overlap_ = longer > 0 && comm_ > 0 ? (comm_ - exposed_) / longer : 0;
}

std::optional<double> tokensPerStep(const Model &m) {
  if (!m.graph)
    return std::nullopt;
  for (const Value *in : m.graph->inputs) {
    if (!in || !in->type.isTensor() || !isInteger(in->type.dtype) || !in->type.shape.rankKnown ||
        in->type.shape.dims.size() != 2)
      continue;
    double n = 1;
    for (const Dim &d : in->type.shape.dims) {
      if (!d.isStatic())
        return std::nullopt;
      n *= static_cast<double>(d.value);
    }
    return n;
  }
  return std::nullopt;
}

}  // namespace graphlint
