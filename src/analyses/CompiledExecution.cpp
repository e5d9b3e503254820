// Compiled execution's two memory rules (CompiledExecution.h): fused
// intermediates, and AOTAutograd's saved set.
#include "graphlint/analyses/CompiledExecution.h"

#include "graphlint/analyses/FusionPlan.h"
#include "graphlint/ir/OpRegistry.h"
#include "graphlint/ir/ValueFacts.h"

#include <llvm/ADT/StringRef.h>

namespace graphlint {

namespace {

std::string opName(const Node &n) {
  std::string a = n.atenName();
  return a.empty() ? n.opType : a;
}

// The partitioner's random_ops (native_dropout, rand_like, randn_like) and
// the rest of the random family a graph can spell.
bool isRandom(const Node &n) {
  llvm::StringRef name = opName(n);
  return name.contains_insensitive("dropout") || name.contains_insensitive("bernoulli") ||
         name.startswith_insensitive("rand") || name.contains_insensitive("multinomial") ||
         name.contains_insensitive("normal") || name.contains_insensitive("uniform");
}

bool elementwiseOrMovement(OpKind k) {
  return k == OpKind::Pointwise || k == OpKind::Broadcast || k == OpKind::Injective;
}

}  // namespace

bool partitionerRecomputable(const Node &n) {
  if (!n.op || isRandom(n) || isInplaceOp(n) || n.hostSync)
    return false;
  return isViewOp(n) || elementwiseOrMovement(n.op->kind);
}

bool fusibleInBackward(const Node &n) {
  if (!n.op || isViewOp(n) || elementwiseOrMovement(n.op->kind) || n.op->kind == OpKind::ShapeOnly)
    return true;
  // Reductions fuse (sum, mean, amax, and the layer/batch/group norm and
  // softmax backwards Inductor decomposes into them); pooling's backward,
  // an embedding's scatter, contractions and attention are kernels of
  // their own that read the tensor from memory.
  if (n.op->kind != OpKind::Reduction)
    return false;
  llvm::StringRef name = opName(n);
  return !name.contains_insensitive("pool") && !name.contains_insensitive("embedding");
}

const Value *storageBase(const Value *v) {
  for (unsigned guard = 0; v && v->producer && isViewOp(*v->producer) && !v->producer->inputs.empty() &&
                           v->producer->inputs[0] && guard < 4096;
       ++guard)
    v = captureOrigin(v->producer->inputs[0]);
  return v;
}

llvm::DenseSet<const Value *> partitionerRecomputes(llvm::ArrayRef<const Value *> saved,
                                                    llvm::function_ref<bool(const Value *)> backwardFusible,
                                                    llvm::function_ref<bool(const Value *)> resident) {
  llvm::DenseSet<const Value *> savedSet(saved.begin(), saved.end());
  llvm::DenseSet<const Value *> out;
  // Forward order: a tensor's inputs are decided before it.
  for (const Value *v : saved) {
    const Node *p = v ? v->producer : nullptr;
    if (!p || !partitionerRecomputable(*p) || !backwardFusible(v))
      continue;
    bool free = true;
    unsigned tensors = 0;
    for (const Value *in : p->inputs) {
      const Value *b = storageBase(captureOrigin(in));
      if (!b)
        continue;
      ++tensors;
      // Kept anyway: resident, or saved and not itself recomputed (then its
      // own inputs are kept: recomputing from them adds nothing either).
      if (!(resident(b) || savedSet.count(b)))
        free = false;
    }
    if (free && tensors > 0)
      out.insert(v);
  }
  return out;
}

llvm::DenseSet<const Value *> fusedAwayValues(const Graph &g, const FusionPlan &plan,
                                              llvm::function_ref<bool(const Value *)> keptForBackward,
                                              llvm::function_ref<bool(const Node &)> runs) {
  llvm::DenseSet<const Value *> away;
  // Reverse order: a view's decision is known before its base's, and a base
  // a materialised view reads must materialise too.
  llvm::DenseSet<const Value *> mustExist;
  const auto &nodes = g.nodes();
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    const Node &n = **it;
    if (!runs(n))
      continue;
    const FusionGroup &grp = plan.groupOf(n);
    bool kernelGroup = grp.kind == GroupKind::Pointwise || grp.kind == GroupKind::Reduction ||
                       grp.kind == GroupKind::Contraction;
    bool contraction = n.op && n.op->kind == OpKind::Contraction;
    bool view = isViewOp(n);
    for (const Value *o : n.outputs) {
      if (!o)
        continue;
      bool exists = !kernelGroup || contraction || o->isGraphOutput() || mustExist.count(o) || o->uses.empty() ||
                    keptForBackward(storageBase(o));
      for (const auto &u : o->uses) {
        const Node *r = u.user;
        if (exists)
          break;
        if (r && r->graph == &g && !runs(*r))
          continue;
        // A read from a nested body, another group or the other phase
        // (the forward hands it to the backward) needs a buffer.
        if (!r || r->graph != &g || &plan.groupOf(*r) != &grp || r->backwardPhase != n.backwardPhase)
          exists = true;
      }
      if (exists) {
        if (view && !n.inputs.empty() && n.inputs[0])
          mustExist.insert(captureOrigin(n.inputs[0]));
        continue;
      }
      away.insert(o);
    }
  }
  return away;
}

int64_t kernelEnd(const FusionPlan &plan, const Node &n) {
  const FusionGroup &grp = plan.groupOf(n);
  int64_t end = static_cast<int64_t>(n.index);
  for (const Node *m : grp.nodes)
    if (m->backwardPhase == n.backwardPhase && m->graph == n.graph)
      end = std::max(end, static_cast<int64_t>(m->index));
  return end;
}

void holdKernelInputs(const Graph &g, const FusionPlan &plan, llvm::DenseMap<const Value *, int64_t> &lastRead,
                      llvm::function_ref<bool(const Node &)> runs) {
  for (const auto &np : g.nodes()) {
    const Node &n = *np;
    if (!runs(n))
      continue;
    const FusionGroup &grp = plan.groupOf(n);
    if (grp.kind != GroupKind::Pointwise && grp.kind != GroupKind::Reduction && grp.kind != GroupKind::Contraction)
      continue;
    int64_t end = kernelEnd(plan, n);
    if (end == static_cast<int64_t>(n.index))
      continue;
    for (const Value *in : n.inputs) {
      const Value *v = captureOrigin(in);
      if (!v || (v->producer && v->producer->graph == &g && &plan.groupOf(*v->producer) == &grp))
        continue;  // made inside the kernel
      auto it = lastRead.find(v);
      if (it != lastRead.end())
        it->second = std::max(it->second, end);
    }
  }
}

}  // namespace graphlint
