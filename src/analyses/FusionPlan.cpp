// Greedy, topological fusion planning in the style of Inductor/TVM: each node
// either joins the group of a producer it reads (when the backend's legality
// rules allow it) or starts a new group; every producer->consumer edge between
// two kernel groups becomes a boundary with the reason the join was refused.
// One pass over the nodes and their inputs: linear in graph size. Which
// joins are legal is the backend model's answer (FusionBackendModel.h): this
// file names no backend.
#include "graphlint/analyses/FusionPlan.h"

#include "FusionBackendModel.h"
#include "graphlint/ir/OpRegistry.h"
#include "graphlint/ir/ValueFacts.h"
#include "graphlint/analyses/DataDependence.h"

#include <fmt/format.h>

#include <llvm/ADT/DenseSet.h>
#include <llvm/ADT/STLExtras.h>

namespace graphlint {

using namespace fusion_detail;

namespace {

bool isDeviceCopy(const Node &n) {
  return n.opType == "MemcpyToHost" || n.opType == "MemcpyFromHost";
}

// An in-place write nothing else can observe: a chain of in-place ops on a
// fresh intermediate read only by the chain (conv -> bn -> relu_, `out +=
// identity`). Functionalisation turns it back into out-of-place ops, which
// fuse; a write that other readers, views or the caller can see stays ordered.
bool unobservableWrite(const Value *v) {
  for (unsigned hops = 0; v && hops < 64; ++hops) {
    if (v->uses.size() != 1 || v->isGraphOutput() || v->kind != Value::Kind::NodeOutput || !v->producer)
      return false;
    const Node &p = *v->producer;
    int src = v->resultIndex < p.outputAliasesInput.size() ? p.outputAliasesInput[v->resultIndex] : -1;
    if (p.outputAliasesInput.empty() && p.outputs.size() == 1 && p.mutatedInputs.size() == 1)
      src = static_cast<int>(p.mutatedInputs[0]);  // an in-place op returns its operand
    if (src < 0)
      return true;  // fresh storage
    if (!llvm::is_contained(p.mutatedInputs, static_cast<unsigned>(src)) || static_cast<size_t>(src) >= p.inputs.size())
      return false;  // a view of storage that others may read
    v = p.inputs[src];
  }
  return false;
}

// Reductions share a kernel when they reduce the same domain (softmax,
// layer norm): equal input shapes.
bool sameReductionDomain(const Node &a, const Node &b) {
  const Value *x = a.inputs.empty() ? nullptr : a.inputs[0];
  const Value *y = b.inputs.empty() ? nullptr : b.inputs[0];
  return x && y && x->type.shape.rankKnown && x->type.shape == y->type.shape;
}

// Does a contraction, opaque or unknown op read n's output (through views)?
bool readByLibraryCall(const Node &n, const FusionBackendModel &model, int depth = 0) {
  for (const Value *out : n.outputs)
    for (const Use &u : out ? out->uses : llvm::SmallVector<Use, 2>{}) {
      GroupKind uk = model.kindOf(*u.user);
      if (uk == GroupKind::Contraction || uk == GroupKind::Opaque || uk == GroupKind::Unknown ||
          uk == GroupKind::HostSync || uk == GroupKind::Collective)
        return true;
      if (depth < 4 && isViewOp(*u.user) && !u.user->inputs.empty() &&
          u.user->inputs[0] == out && readByLibraryCall(*u.user, model, depth + 1))  // (not a view's shape operand)
        return true;
    }
  return false;
}

// Every graph of the model: the main graph with its nested bodies, then the
// bodies of model-local functions (planned too, so every node has a group).
template <typename Fn> void forEachModelGraph(const Model &m, Fn fn) {
  forEachGraph(*m.graph, fn);
  for (const auto &f : m.functions)
    if (f->body)
      forEachGraph(*f->body, fn);
}

}  // namespace

FusionPlan::FusionPlan(const Model &m, AnalysisContext &ctx) : backend_(ctx.setup().backend) { plan(m); }
std::string FusionPlan::sharedKey(const Setup &s) { return std::string(fusionBackendName(s.backend)); }
FusionPlan::FusionPlan(const Model &m, FusionBackend backend) : backend_(backend) { plan(m); }

void FusionPlan::plan(const Model &m) {
  std::unique_ptr<FusionBackendModel> model = makeFusionBackendModel(backend_);
  forEachModelGraph(m, [&](const Graph &g) { planGraph(g, *model); });
  // Groups emptied by merges disappear; ids are renumbered densely, members
  // sorted by execution order.
  std::vector<unsigned> remap(groups_.size(), 0);
  std::vector<FusionGroup> kept;
  for (FusionGroup &grp : groups_) {
    if (grp.nodes.empty())
      continue;
    remap[grp.id] = static_cast<unsigned>(kept.size());
    grp.id = remap[grp.id];
    std::sort(grp.nodes.begin(), grp.nodes.end(), [](const Node *a, const Node *b) { return a->index < b->index; });
    kept.push_back(std::move(grp));
  }
  groups_ = std::move(kept);
  for (auto &entry : groupIndex_)
    entry.second = remap[entry.second];
  for (FusionGroup &grp : groups_)
    grp.launch = grp.id;
  forEachModelGraph(m, [&](const Graph &g) { model->afterPlan(g, groups_, groupIndex_); });
  std::vector<FusionBoundary> bounds;
  boundaryIndex_.clear();
  for (FusionBoundary &b : boundaries_) {
    b.fromGroup = groupIndex_.lookup(b.producer);
    b.toGroup = groupIndex_.lookup(b.consumer);
    if (b.fromGroup == b.toGroup)
      continue;  // merged after the boundary was recorded
    boundaryIndex_[b.consumer].push_back(static_cast<unsigned>(bounds.size()));
    bounds.push_back(std::move(b));
  }
  boundaries_ = std::move(bounds);
}

void FusionPlan::planGraph(const Graph &g, FusionBackendModel &model) {
  auto kindOf = [&](const Node &n) { return model.kindOf(n); };
  model.beginGraph(g);
  std::vector<GroupState> state;  // indexed like groups_ (global ids)
  state.resize(groups_.size());

  auto newGroup = [&](const Node &n, GroupKind kind) {
    FusionGroup grp;
    grp.id = static_cast<unsigned>(groups_.size());
    grp.kind = kind;
    grp.graph = &g;
    grp.kernels = kind == GroupKind::ShapeOnly || kind == GroupKind::ControlFlow ? 0 : 1;
    groups_.push_back(std::move(grp));
    state.emplace_back();
    return groups_.back().id;
  };
  auto add = [&](unsigned gid, const Node &n) {
    groups_[gid].nodes.push_back(&n);
    groupIndex_[&n] = gid;
    groups_[gid].kernels += model.extraKernels(n);
    // Shape/Size read metadata only: no dependency on the producer's kernel.
    if (n.opType == "Shape" || n.opType == "Size")
      return;
    for (const Value *v : n.inputs)
      if (v && v->kind == Value::Kind::NodeOutput && v->producer && v->producer->graph == &g) {
        auto it = groupIndex_.find(v->producer);
        if (it != groupIndex_.end() && it->second != gid) {
          state[gid].deps.push_back(it->second);
          state[it->second].read = true;
        }
      }
  };
  // Does group `from` (transitively) read group `to`? Bounded search; when
  // the bound is hit the answer is "yes", the safe side.
  auto reaches = [&](unsigned from, unsigned to) {
    if (!state[to].read)
      return false;  // no group reads `to` yet (e.g. arithmetic on weights): nothing depends on it
    std::vector<unsigned> work{from};
    llvm::DenseSet<unsigned> seen;
    while (!work.empty()) {
      unsigned cur = work.back();
      work.pop_back();
      if (cur == to)
        return true;
      if (!seen.insert(cur).second)
        continue;
      if (seen.size() > 512)
        return true;
      for (unsigned d : state[cur].deps)
        work.push_back(d);
    }
    return false;
  };
  auto groupOfValue = [&](const Value *v) -> std::optional<unsigned> {
    if (!v || v->kind != Value::Kind::NodeOutput || !v->producer || v->producer->graph != &g)
      return std::nullopt;
    // A producer not planned yet only happens in a cyclic graph (GL001).
    auto it = groupIndex_.find(v->producer);
    if (it == groupIndex_.end())
      return std::nullopt;
    return it->second;
  };

  // Why node n (of kind k) cannot join group gid through value v; nullopt if it can.
  auto refusal = [&](unsigned gid, const Node &n, GroupKind k, const Value *v) -> std::optional<BreakReason> {
    const FusionGroup &grp = groups_[gid];
    const GroupState &st = state[gid];
    // Device facts come first: a copy between devices explains the boundary
    // better than the copy op's own kind.
    if (isDeviceCopy(n) || (v->producer && isDeviceCopy(*v->producer))) return BreakReason::CrossDevice;
    if (v->device.kind != Device::Kind::Unknown)
      for (const Value *out : n.outputs)
        if (out && out->device.kind != Device::Kind::Unknown && !(out->device == v->device))
          return BreakReason::CrossDevice;
    if (grp.kind == GroupKind::ControlFlow) return BreakReason::ControlFlow;
    if (grp.kind == GroupKind::HostSync) return BreakReason::HostSync;
    if (grp.kind == GroupKind::Unknown) return BreakReason::UnknownOp;
    if (grp.kind == GroupKind::Opaque || grp.kind == GroupKind::Collective) return BreakReason::OpaqueOp;
    if (k == GroupKind::ControlFlow) return BreakReason::ControlFlow;
    if (k == GroupKind::HostSync) return BreakReason::HostSync;
    if (k == GroupKind::Unknown) return BreakReason::UnknownOp;
    if (k == GroupKind::Opaque || k == GroupKind::Collective) return BreakReason::OpaqueOp;
    if (isDeviceCopy(n)) return BreakReason::CrossDevice;
    if (v->device.kind != Device::Kind::Unknown)
      for (const Value *in : n.inputs)
        if (in && in->device.kind != Device::Kind::Unknown && !(in->device == v->device))
          return BreakReason::CrossDevice;
    for (unsigned idx : n.mutatedInputs)
      if (idx < n.inputs.size() && n.inputs[idx] == v && !unobservableWrite(v))
        return BreakReason::InplaceAlias;
    if (k == GroupKind::Contraction) return BreakReason::ReductionBoundary;  // no prologue fusion
    if (grp.kind == GroupKind::ShapeOnly) return BreakReason::ReductionBoundary;
    if (auto why = model.refusal(FusionJoin{grp, st, n, k, v})) return why;
    if (!model.multiOutputGroups() || grp.kind == GroupKind::Contraction) {
      // The value must stay inside the group: every reader must be able to join.
      for (const Use &u : v->uses) {
        if (u.user == &n) continue;
        GroupKind uk = kindOf(*u.user);
        auto it = groupIndex_.find(u.user);
        bool elsewhere = it != groupIndex_.end() && it->second != gid;
        if (elsewhere || uk == GroupKind::Contraction || uk == GroupKind::ControlFlow || uk == GroupKind::Opaque ||
            uk == GroupKind::Unknown || uk == GroupKind::HostSync)
          return BreakReason::MultiConsumer;
      }
    }
    switch (grp.kind) {
    case GroupKind::Contraction:
      return model.epilogueRefusal(FusionJoin{grp, st, n, k, v});
    case GroupKind::Reduction:
      if (k == GroupKind::Reduction)
        return st.lastReduction && sameReductionDomain(*st.lastReduction, n) ? std::nullopt
                                                                             : std::optional(BreakReason::ReductionBoundary);
      return std::nullopt;  // pointwise epilogue
    case GroupKind::Pointwise:
      return std::nullopt;  // pointwise prologue into anything but a contraction
    default:
      return BreakReason::ReductionBoundary;
    }
  };

  // Shape arithmetic (Shape -> Gather -> Concat -> Reshape) runs on the host
  // from metadata and constants: it costs no kernel. Host-known are omitted
  // inputs, the outputs of host nodes, and weights small enough to be sizes
  // (DataDependence's small values; a capture stands for its origin).
  llvm::DenseSet<const Value *> hostValues;
  auto hostKnown = [&](const Value *v) {
    if (!v || hostValues.count(v))
      return true;
    const Value *base = captureOrigin(v);
    return base->kind == Value::Kind::Param && base->param && DataDependence::isSmallValue(base);
  };

  for (const auto &np : g.nodes()) {
    const Node &n = *np;
    GroupKind k = kindOf(n);
    bool host = n.opType == "Shape" || n.opType == "Size" || n.opType == "Constant";
    // A backend that recomputes host values in its kernels does so for a
    // value computed from indices alone (iota, full, arange: no tensor input).
    const bool recomputes = model.recomputesHostValues();
    bool derived = recomputes && n.inputs.empty() && k == GroupKind::Pointwise;
    if (!host && !derived && k != GroupKind::Contraction && k != GroupKind::ControlFlow && k != GroupKind::Unknown &&
        !(recomputes && k == GroupKind::Opaque) && !n.inputs.empty()) {
      derived = true;
      for (const Value *in : n.inputs)
        derived &= hostKnown(in);
    }
    // ... unless a library call (mm, SDPA, an aten fallback) reads it: then a
    // kernel writes it to memory first.
    if (derived && recomputes && !isViewOp(n) && readByLibraryCall(n, model))
      derived = false;
    host |= derived;
    if (host) {
      for (const Value *out : n.outputs)
        if (out)
          hostValues.insert(out);
      add(newGroup(n, GroupKind::ShapeOnly), n);
      continue;
    }

    // Views pass through: they join the group of their data input.
    if (k == GroupKind::ShapeOnly) {
      const Value *data = n.inputs.empty() ? nullptr : n.inputs[0];
      auto pg = groupOfValue(data);
      bool transparent = n.op && (isViewOp(n) || isNoopCast(n)) && pg && !state[*pg].closed &&
                         groups_[*pg].kind != GroupKind::ShapeOnly && groups_[*pg].kind != GroupKind::ControlFlow &&
                         groups_[*pg].kind != GroupKind::HostSync && groups_[*pg].kind != GroupKind::Unknown &&
                         groups_[*pg].kind != GroupKind::Opaque;
      add(transparent ? *pg : newGroup(n, GroupKind::ShapeOnly), n);
      continue;
    }

    // Try the producers' groups, most recent first.
    std::optional<unsigned> chosen;
    for (const Value *v : n.inputs) {
      auto pg = groupOfValue(v);
      if (!pg || state[*pg].closed || (chosen && *pg <= *chosen))
        continue;
      // A contraction's epilogue may win over a pointwise sibling (the fused
      // kernel takes the other operand as an input).
      if (model.epilogueFirst() && chosen && groups_[*chosen].kind == GroupKind::Contraction)
        continue;
      if (!refusal(*pg, n, k, v))
        chosen = *pg;
    }
    if (model.epilogueFirst() && chosen && groups_[*chosen].kind != GroupKind::Contraction)
      for (const Value *v : n.inputs) {
        auto pg = groupOfValue(v);
        if (pg && !state[*pg].closed && groups_[*pg].kind == GroupKind::Contraction && !refusal(*pg, n, k, v)) {
          chosen = *pg;
          break;
        }
      }
    // Horizontal fusion: join a sibling pointwise group reading the same value.
    // Only through a computed tensor (a shared weight or constant says nothing
    // about locality), only when the node's other inputs come from outside
    // the plan (graph inputs, params, host values) so joining cannot create a
    // dependency cycle between groups, and only where the join is legal.
    if (!chosen && k == GroupKind::Pointwise && model.multiOutputGroups()) {
      bool othersFree = true;
      unsigned computed = 0;
      for (const Value *v : n.inputs)
        if (groupOfValue(v) && !hostValues.count(v))
          ++computed;
      othersFree = computed <= 1;
      for (const Value *v : n.inputs) {
        if (!v || chosen || !othersFree || !groupOfValue(v) || hostValues.count(v))
          continue;
        for (const Use &u : v->uses) {
          auto it = groupIndex_.find(u.user);
          if (u.user == &n || it == groupIndex_.end())
            continue;
          const FusionGroup &sib = groups_[it->second];
          if (sib.kind == GroupKind::Pointwise && sib.graph == &g && !state[it->second].closed &&
              !refusal(it->second, n, k, v)) {
            chosen = it->second;
            break;
          }
        }
      }
    }
    // Kernel order (checked last, whichever rule chose the group): joining a group must not make it read a group that reads
    // it (e.g. a residual Add joining the residual stream's group while its
    // other operand comes from a matmul fed by that group).
    if (chosen)
      for (const Value *v : n.inputs) {
        auto pg = groupOfValue(v);
        if (pg && *pg != *chosen && reaches(*pg, *chosen)) {
          chosen.reset();
          break;
        }
      }
    unsigned gid;
    if (chosen) {
      gid = *chosen;
      // Vertical merge: another open pointwise producer group whose every
      // output is read only here folds into the chosen group (a fusing
      // compiler puts both loads in one loop nest).
      for (const Value *v : n.inputs) {
        auto pg = groupOfValue(v);
        if (!pg || *pg == gid || state[*pg].closed || groups_[*pg].kind != GroupKind::Pointwise || refusal(*pg, n, k, v))
          continue;
        bool onlyHere = true;
        for (const Node *member : groups_[*pg].nodes)
          for (const Value *out : member->outputs)
            if (out)
              for (const Use &u : out->uses)
                if (u.user != &n) {
                  // A reader not planned yet lies outside the group.
                  auto it = groupIndex_.find(u.user);
                  onlyHere &= it != groupIndex_.end() && it->second == *pg;
                }
        if (!onlyHere)
          continue;
        for (const Node *member : groups_[*pg].nodes) {
          groups_[gid].nodes.push_back(member);
          groupIndex_[member] = gid;
        }
        for (unsigned d : state[*pg].deps)
          if (d != gid)
            state[gid].deps.push_back(d);
        state[gid].read |= state[*pg].read;
        groups_[*pg].nodes.clear();
        groups_[*pg].kernels = 0;
        state[*pg].closed = true;
      }
      FusionGroup &grp = groups_[gid];
      if (grp.kind == GroupKind::Pointwise && k == GroupKind::Reduction)
        grp.kind = GroupKind::Reduction;
      if (grp.kind == GroupKind::Contraction) {
        ++state[gid].epilogue;
        const Value *via = nullptr;  // the last input read from the group
        for (const Value *v : n.inputs)
          if (groupOfValue(v) == std::optional<unsigned>(gid))
            via = v;
        model.joinedEpilogue(state[gid], n, via);
      }
      state[gid].castHead = false;
    } else {
      gid = newGroup(n, k);
      if (k == GroupKind::Contraction)
        state[gid].anchor = &n;
      state[gid].injective = n.op && n.op->kind == OpKind::Injective;
      model.started(state[gid], n);
    }
    if (n.opType == "ReduceMean" || n.opType == "LayerNormalization")
      state[gid].normalization = true;
    if (k == GroupKind::Reduction)
      state[gid].lastReduction = &n;
    if (k == GroupKind::ControlFlow || k == GroupKind::HostSync || k == GroupKind::Unknown ||
        k == GroupKind::Opaque || k == GroupKind::Collective)
      state[gid].closed = true;
    // Backends that run data movement as kernels of their own: a gather,
    // split or layout change that starts a group does not grow it either.
    if (!chosen && model.runsAlone(n))
      state[gid].closed = true;
    add(gid, n);

    // Every kernel edge into this node from another group is a boundary.
    for (const Value *v : n.inputs) {
      auto pg = groupOfValue(v);
      if (!pg || *pg == gid || groups_[*pg].kind == GroupKind::ShapeOnly)
        continue;
      auto why = refusal(*pg, n, k, v);
      FusionBoundary b;
      b.fromGroup = *pg;
      b.toGroup = gid;
      b.producer = v->producer;
      b.consumer = &n;
      b.value = v;
      b.reason = why.value_or(BreakReason::MultiConsumer);
      if (b.reason == BreakReason::DtypeMismatch) {
        const Value *out = n.outputs.empty() ? nullptr : n.outputs[0];
        b.detail = fmt::format("{} -> {}", dtypeShortName(v->type.dtype),
                               out ? dtypeShortName(out->type.dtype) : "?");
      } else if (b.reason == BreakReason::CrossDevice) {
        b.detail = v->device.str();
      }
      boundaryIndex_[&n].push_back(static_cast<unsigned>(boundaries_.size()));
      boundaries_.push_back(std::move(b));
    }
  }

  FusionDraft draft{g, groups_, groupIndex_, state};
  model.afterGraph(draft);
}

unsigned FusionPlan::kernelsPredicted() const {
  unsigned k = 0;
  for (const FusionGroup &g : groups_)
    k += g.kernels;
  return k;
}

std::map<BreakReason, unsigned> FusionPlan::boundariesByReason() const {
  std::map<BreakReason, unsigned> m;
  for (const FusionBoundary &b : boundaries_)
    ++m[b.reason];
  return m;
}

std::vector<const FusionBoundary *> FusionPlan::boundariesInto(const Node &consumer) const {
  std::vector<const FusionBoundary *> out;
  auto it = boundaryIndex_.find(&consumer);
  if (it != boundaryIndex_.end())
    for (unsigned i : it->second)
      out.push_back(&boundaries_[i]);
  return out;
}

}  // namespace graphlint
