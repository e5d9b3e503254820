// Sharded data parallelism as the step runs (MemoryTraceBuilder.h): ZeRO-2
// reduce-scatters each gradient bucket as its last gradient is written,
// ZeRO-3 and FSDP each unit after its backward, and the whole gradients go
// (the rank keeps its 1/dp_shard shard to the optimizer step); stage 3
// all-gathers a unit's parameters around its forward and its backward,
// prefetching the next unit, and frees them after (reshard_after_forward;
// the root, entered first and left last, stays gathered). FSDP2's
// implementation (torch.distributed.fsdp, _fsdp_param_group.py) does this
// per fully_shard unit; DeepSpeed's stage 2 per reduce bucket.
#include "MemoryTraceBuilder.h"

#include "graphlint/analyses/StepTimeline.h"

#include <fmt/format.h>

#include <algorithm>

namespace graphlint::memory {

uint64_t PlanBuilder::paramGradBytes(const Value *p, bool unsharded) {
  uint64_t b = bytesOf(p, false);
  const PrecisionPolicy pp = policy();
  if (p->type.dtype == DType::Float)
    b = b / 4 * (unsharded ? pp.computeGradBytes : pp.gradBytes);
  return unsharded ? b : b / shards(s_.mesh.zeroStage() >= 2, p);
}

uint64_t PlanBuilder::gatheredBytes(unsigned unit) {
  // FSDP2 all-gathers into a new buffer in param_dtype beside the fp32
  // shard; ZeRO-3's 16-bit shard is a slice of the gathered 16-bit buffer.
  uint64_t b = 0;
  const PrecisionPolicy pp = policy();
  for (const Value *p : units_.params[unit]) {
    uint64_t full = bytesOf(p, false);
    if (p->type.dtype == DType::Float)
      full = full / 4 * pp.computeWeightBytes;
    // torchao's fp8 all-gather: the converted weights arrive, and stay
    // gathered, as fp8 (1 byte per element) with a scalar scale.
    if (s_.float8GathersFp8() && float8_.converted(p))
      full = elementsOf(p).value_or(0);
    b += s_.mesh.dataParallel == DataParallel::FSDP2 ? full : full - full / shards(true, p);
  }
  return b;
}

uint64_t PlanBuilder::float8Temporaries(const Node &n, bool synthesisedBackward) {
  Float8Gemm gemm = Float8Gemm::Output;
  const Float8Linear *l = float8_.gemmOf(n, &gemm);
  if (!l || (synthesisedBackward && gemm != Float8Gemm::Output))
    return 0;
  const double h = precision_.operandBytes(l->output);
  double bytes = synthesisedBackward ? float8_.backwardCasts(*l, h).liveBytes : float8_.casts(*l, gemm, h).liveBytes;
  if (sharding_)  // one rank's share of the GEMM under tp/cp (MeshSharding.h)
    bytes /= sharding_->computeDivisor(n);
  return static_cast<uint64_t>(bytes);
}

void PlanBuilder::gather(unsigned unit) {
  if (unit < gathered_.size() && gathered_[unit] == kNone && !unitDone_[unit])
    gathered_[unit] = t_.alloc(gatheredBytes(unit), MemoryKind::Param, nullptr);
}

void PlanBuilder::reshard(unsigned unit) {
  if (unit < gathered_.size() && gathered_[unit] != kNone) {
    t_.release(gathered_[unit]);
    gathered_[unit] = kNone;
  }
}

void PlanBuilder::planSharding() {
  if (!s_.train || !shardsGradients())
    return;
  std::vector<const Value *> trained;
  for (const Value *p : trainableOrder_)
    if (!gradless_.count(p))
      trained.push_back(p);
  auto wire = [&](const Value *p) { return static_cast<double>(paramGradBytes(p, true)); };
  if (s_.mesh.zeroStage() >= 3) {
    units_ = shardingUnits(g_, checkpointLayersOf(ctx_, g_), trained, wire, kBucketBytes);
    gradGroups_ = units_.params;
  } else {
    // ZeRO-2: the buckets DDP would build (StepTimeline.cpp), reverse order.
    std::vector<double> sizes;
    std::vector<int> keys;
    std::vector<const Value *> order(trained.rbegin(), trained.rend());
    for (const Value *p : order) {
      sizes.push_back(wire(p));
      keys.push_back(static_cast<int>(p->type.dtype));
    }
    for (const auto &members : assignBuckets(sizes, keys, {kFirstBucketBytes, kBucketBytes})) {
      gradGroups_.emplace_back();
      for (unsigned m : members)
        gradGroups_.back().push_back(order[m]);
    }
  }
  groupWaiting_.resize(gradGroups_.size());
  groupGrads_.resize(gradGroups_.size());
  if (g_.hasBackward()) {
    std::vector<const Value *> grads;
    for (const Value *o : g_.outputs)
      if (o && o->producer && o->producer->backwardPhase)
        grads.push_back(o);
    if (grads.size() >= trainableOrder_.size())
      for (size_t i = 0; i < trainableOrder_.size(); ++i)
        if (grads[i]->type.shape.numElements() == trainableOrder_[i]->type.shape.numElements())
          paramOfGrad_[grads[i]] = trainableOrder_[i];
  }
  for (unsigned k = 0; k < gradGroups_.size(); ++k) {
    groupWaiting_[k] = static_cast<unsigned>(gradGroups_[k].size());
    for (const Value *p : gradGroups_[k])
      gradGroupOf_[p] = k;
  }
  if (!gathersParameters())
    return;
  // Each unit's forward span: the forward nodes that read its parameters or
  // run inside its block.
  const size_t U = units_.params.size();
  gathered_.assign(U, kNone);
  unitDone_.assign(U, false);
  unitFirst_.assign(U, -1);
  unitLast_.assign(U, -1);
  const std::vector<llvm::StringRef> &layers = checkpointLayersOf(ctx_, g_);
  llvm::DenseMap<llvm::StringRef, unsigned> byName;
  for (unsigned u = 0; u < U; ++u)
    if (units_.perBlock && static_cast<int>(u) != units_.root)
      byName[units_.names[u]] = u;
  for (const auto &np : g_.nodes()) {
    const Node &n = *np;
    if (n.backwardPhase)
      continue;
    int unit = -1;
    if (auto it = n.index < layers.size() ? byName.find(layers[n.index]) : byName.end(); it != byName.end())
      unit = static_cast<int>(it->second);
    else if (auto mod = byName.find(indexedModule(n.modulePath)); mod != byName.end())
      unit = static_cast<int>(mod->second);
    for (const Value *in : n.inputs)
      if (auto it = in && unit < 0 ? units_.unitOf.find(in) : units_.unitOf.end(); it != units_.unitOf.end())
        unit = static_cast<int>(it->second);
    if (unit < 0)
      continue;
    nodeUnit_[&n] = static_cast<unsigned>(unit);
    auto idx = static_cast<int64_t>(n.index);
    if (unitFirst_[unit] < 0)
      unitFirst_[unit] = idx;
    unitLast_[unit] = std::max(unitLast_[unit], idx);
  }
}

void PlanBuilder::gatherBefore(const Node &n) {
  auto it = gathersParameters() ? nodeUnit_.find(&n) : nodeUnit_.end();
  if (it == nodeUnit_.end() || unitFirst_[it->second] != static_cast<int64_t>(n.index))
    return;
  gather(it->second);
  // FSDP's forward prefetch: the next unit's all-gather is issued as this
  // one's compute starts, into its own buffer.
  for (unsigned u = it->second + 1; u < units_.params.size(); ++u)
    if (static_cast<int>(u) != units_.root) {
      gather(u);
      break;
    }
}

void PlanBuilder::reshardAfter(const Node &n) {
  auto it = gathersParameters() ? nodeUnit_.find(&n) : nodeUnit_.end();
  if (it != nodeUnit_.end() && unitLast_[it->second] == static_cast<int64_t>(n.index) &&
      static_cast<int>(it->second) != units_.root)
    reshard(it->second);
}

void PlanBuilder::gatherForBackward() {
  if (!gathersParameters())
    return;
  // The root (its head runs first in backward, its embedding last) and the
  // last two blocks: the one the backward enters and the prefetched one.
  if (units_.root >= 0)
    gather(static_cast<unsigned>(units_.root));
  unsigned want = 2;
  for (size_t u = units_.params.size(); u-- > 0 && want;)
    if (static_cast<int>(u) != units_.root && !unitDone_[u]) {
      gather(static_cast<unsigned>(u));
      --want;
    }
}

void PlanBuilder::gradientReady(const Value *p, uint32_t st) {
  unsigned k = gradGroupOf_.find(p)->second;
  groupGrads_[k].push_back({p, st});
  if (groupWaiting_[k] == 0 || --groupWaiting_[k] > 0)
    return;
  // The reduce-scatter: each whole gradient gives way to the shard kept.
  // A timeline point of its own: the whole gradients are live up to it.
  for (auto &[param, whole] : groupGrads_[k]) {
    t_.release(whole);
    paramGrad_[param] = t_.alloc(paramGradBytes(param), MemoryKind::Grad, param);
  }
  groupGrads_[k].clear();
  if (gathersParameters()) {
    unitDone_[k] = true;
    reshard(k);
    // The backward prefetch: the next unit it reaches is gathered now.
    for (size_t u = k; u-- > 0;)
      if (static_cast<int>(u) != units_.root && !unitDone_[u] && gathered_[u] == kNone) {
        gather(static_cast<unsigned>(u));
        break;
      }
  }
  t_.mark(fmt::format("reduce_scatter {}", s_.mesh.zeroStage() >= 3 ? units_.names[k] : fmt::format("bucket {}", k)),
          MemoryPhase::Backward);
}

}  // namespace graphlint::memory
