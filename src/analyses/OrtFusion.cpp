// ONNX Runtime (docs/fusion.md#ort-onnx-runtimes-fusion-patterns): outside
// its graph transformers' patterns (OrtPatterns.cpp) data movement, casts and
// graph outputs end a group and contractions take only the epilogues the
// patterns fold. ort-cpu (the CPU EP, validated on 22 models) has no general
// elementwise fusion: every op outside a pattern is a kernel of its own, and
// a HardSwish is two. ort-cuda (the union of the CPU and CUDA EPs' patterns)
// chains elementwise ops and lets a Conv take a residual Add (FusedConv's Z).
#include "OrtPatterns.h"

#include "graphlint/ir/OpRegistry.h"
#include "graphlint/ir/ValueFacts.h"

#include <llvm/ADT/STLExtras.h>

namespace graphlint {

using namespace fusion_detail;

namespace {

// ORT's prologue folds, applied after the greedy pass: a single-use Pad into
// Conv/MaxPool/AveragePool (PadFusion), a Transpose (optionally followed by a
// precision Cast) into MatMul/Gemm (MatmulTransposeFusion, GemmTransposeFusion),
// a scalar scale into MatMul (MatMulScaleFusion). One pass over the nodes.
void ortPatternPass(FusionDraft &d) {
  const Graph &g = d.graph;
  auto &groupIndex = d.groupIndex;
  auto merge = [&](unsigned into, unsigned from) { d.merge(into, from); };
  auto alone = [&](const Node &p) { return d.groups[groupIndex.lookup(&p)].nodes.size() == 1; };
  auto singleUse = [&](const Value *v) {
    return v && v->kind == Value::Kind::NodeOutput && v->producer && v->producer->graph == &g && v->uses.size() == 1 &&
           !v->isGraphOutput();
  };
  // GatherToSplitFusion / GatherSliceToSplitFusion: Gathers of one tensor by
  // scalar constants (q, k, v = qkv[0], qkv[1], qkv[2]), or Slices of one
  // tensor (x.chunk(2)), become one Split.
  for (const auto &np : g.nodes())
    for (const Value *out : np->outputs) {
      if (!out)
        continue;
      std::optional<unsigned> first;
      for (const Use &u : out->uses) {
        const Node &gth = *u.user;
        bool gather = gth.opType == "Gather" && gth.inputs.size() == 2 && constantElements(gth.inputs[1]).value_or(0) == 1;
        bool slice = gth.opType == "Slice" && llvm::count_if(out->uses, [](const Use &w) {
                       return w.user->opType == "Slice";
                     }) >= 2 && llvm::all_of(out->uses, [](const Use &w) {
                       return w.user->opType == "Slice" || w.user->opType == "Shape";  // (sizes from its shape)
                     });
        if (!(gather || slice) || gth.inputs.empty() || gth.inputs[0] != out || !alone(gth) ||
            d.groups[groupIndex.lookup(&gth)].kind == GroupKind::ShapeOnly)
          continue;
        if (!first)
          first = groupIndex.lookup(&gth);
        else
          merge(*first, groupIndex.lookup(&gth));
      }
    }
  for (const auto &np : g.nodes()) {
    const Node &n = *np;
    for (const Value *v : n.inputs) {
      if (!singleUse(v))
        continue;
      const Node &p = *v->producer;
      unsigned gn = groupIndex.lookup(&n), gp = groupIndex.lookup(&p);
      if (gn == gp || !alone(p) || d.groups[gn].kind == GroupKind::ShapeOnly)
        continue;
      if (p.opType == "Pad" && ortPadFolds(p, n)) {
        merge(gn, gp);
      } else if (p.opType == "Transpose" && ortTransposeFolds(p, n)) {
        merge(gn, gp);
      } else if ((p.opType == "Mul" || p.opType == "Div") && ortScaleFolds(p, v, n)) {
        merge(gn, gp);
      } else if (p.opType == "Mul" && d.state[gn].anchor && d.state[gn].anchor->opType == "MatMulInteger" &&
                 d.groups[gp].kind == GroupKind::Pointwise) {
        merge(gn, gp);  // MatMulIntegerToFloat: the product of the input scales
      } else if (p.opType == "DynamicQuantizeLinear" && n.opType == "MatMulInteger") {
        merge(gn, gp);  // DynamicQuantizeMatMulFusion, with the scale product feeding the epilogue
        for (const Value *o : p.outputs)
          for (const Use &u : o ? o->uses : llvm::SmallVector<Use, 2>{}) {
            unsigned gu = groupIndex.lookup(u.user);
            if (gu == gn || !alone(*u.user) || d.groups[gu].kind != GroupKind::Pointwise || u.user->outputs.empty() ||
                !u.user->outputs[0])
              continue;
            bool intoGn = true;
            for (const Use &w : u.user->outputs[0]->uses)
              intoGn &= groupIndex.lookup(w.user) == gn;
            if (intoGn)
              merge(gn, gu);
          }
      } else if (isFloatCast(p) && isGemmLike(n) && singleUse(p.inputs[0])) {
        const Node &t = *p.inputs[0]->producer;
        if (t.opType == "Transpose" && alone(t) && ortTransposeFolds(t, n)) {
          merge(gn, gp);
          merge(gn, groupIndex.lookup(&t));
        }
      }
    }
    // TransposeOptimizer: a Transpose of a single-use Transpose is one Transpose.
    if (n.opType == "Transpose" && !n.inputs.empty() && singleUse(n.inputs[0]) &&
        n.inputs[0]->producer->opType == "Transpose" && alone(*n.inputs[0]->producer) && alone(n))
      merge(groupIndex.lookup(&n), groupIndex.lookup(n.inputs[0]->producer));
    // FusedMatMul also takes transposes behind a Reshape, a folded scale or
    // another folded transpose (the head split of a decomposed attention:
    // Transpose -> Reshape -> Mul(scale) -> MatMul).
    if (n.opType != "MatMul")
      continue;
    unsigned gn = groupIndex.lookup(&n);
    for (const Value *v : n.inputs) {
      const Value *cur = v;
      for (unsigned hops = 0; hops < 6 && singleUse(cur); ++hops) {
        const Node &p = *cur->producer;
        unsigned gp = groupIndex.lookup(&p);
        bool view = isViewOp(p);
        if (p.opType == "Transpose" && gp != gn && alone(p) && ortTransposeFolds(p, n, hops > 0))
          merge(gn, gp);
        else if (!(view || gp == gn))
          break;
        cur = p.inputs.empty() ? nullptr : p.inputs[0];
      }
    }
  }
}


class OrtFusion final : public FusionBackendModel {
public:
  explicit OrtFusion(bool cudaEp) : cudaEp_(cudaEp) {}

  GroupKind kindOf(const Node &n) const override {
    if (isNoopCast(n))
      return GroupKind::ShapeOnly;  // CastElimination / EliminateDropout remove it: a view of its input
    return FusionBackendModel::kindOf(n);
  }
  unsigned extraKernels(const Node &n) const override {
    return !cudaEp_ && n.opType == "HardSwish" ? 1 : 0;  // the CPU EP expands it: HardSigmoid, then Mul
  }
  void beginGraph(const Graph &g) override {
    patternOf_.clear();
    if (!cudaEp_)
      patternOf_ = ortElementwisePatterns(g);
  }
  std::optional<BreakReason> refusal(const FusionJoin &j) const override;
  unsigned maxEpilogue() const override { return 2; }  // (unused: every contraction group has its anchor)
  std::optional<BreakReason> epilogueRefusal(const FusionJoin &j) const override {
    if (!j.state.anchor)
      return FusionBackendModel::epilogueRefusal(j);
    unsigned next = 0;
    if (j.state.anchor->opType == "MatMulInteger")
      return ortIntegerEpilogueRefusal(j.state.stage, j.n, &next);
    return ortEpilogueRefusal(*j.state.anchor, j.state.stage, j.n, j.v, &next, /*residualSum=*/cudaEp_);
  }
  bool epilogueFirst() const override { return true; }
  bool runsAlone(const Node &n) const override { return isDataMovement(n); }
  void started(GroupState &st, const Node &n) const override { st.castHead = isFloatCast(n); }
  void joinedEpilogue(GroupState &st, const Node &n, const Value *via) const override {
    if (!st.anchor)
      return;
    unsigned next = st.stage;
    if (st.anchor->opType == "MatMulInteger")
      ortIntegerEpilogueRefusal(st.stage, n, &next);
    else
      ortEpilogueRefusal(*st.anchor, st.stage, n, via, &next, /*residualSum=*/cudaEp_);
    st.stage = next;
  }
  void afterGraph(FusionDraft &d) const override { ortPatternPass(d); }

private:
  // ort-cpu: which elementwise pattern (Gelu, FastGelu, QuickGelu, the
  // normalizations) each node of the graph being planned is part of.
  bool samePattern(const FusionGroup &grp, const Node &n) const {
    unsigned p = patternOf_.lookup(&n);
    return p && llvm::any_of(grp.nodes, [&](const Node *m) { return patternOf_.lookup(m) == p; });
  }

  bool cudaEp_;
  llvm::DenseMap<const Node *, unsigned> patternOf_;
};

std::optional<BreakReason> OrtFusion::refusal(const FusionJoin &j) const {
  const FusionGroup &grp = j.group;
  const GroupState &st = j.state;
  const Node &n = j.n;
  const GroupKind k = j.k;
  // Gathers, pads and transposes are kernels of their own (their folds into
  // a consumer are the post-pass's); a precision Cast fuses only inside a
  // decomposed normalization (LayerNormFusion with casts).
  if (st.injective) return isLayoutChange(*grp.nodes.front()) ? BreakReason::LayoutChange : BreakReason::ReductionBoundary;
  if (isFloatCast(n) && !st.normalization && !feedsNormalization(n)) return BreakReason::DtypeMismatch;
  if (st.castHead && !isNormalizationEntry(n)) return BreakReason::DtypeMismatch;
  if (grp.kind == GroupKind::Reduction && k == GroupKind::Reduction && n.opType != "ReduceMean" &&
      n.opType != "LayerNormalization" && n.opType != "Softmax")
    return BreakReason::ReductionBoundary;
  if (grp.kind == GroupKind::Reduction && st.lastReduction && !st.normalization &&
      st.lastReduction->opType != "ReduceMean" && k != GroupKind::Reduction)
    return BreakReason::ReductionBoundary;  // ORT has no reduction epilogues beyond normalizations
  if (!cudaEp_) {
    if (grp.kind == GroupKind::Contraction && patternOf_.lookup(&n))
      return BreakReason::ReductionBoundary;  // the op starts its own pattern kernel (QuickGelu, Gelu)
    // No kernel takes two ops outside a pattern, but SkipLayerNormalization
    // (session level) takes residual Adds read only by it.
    bool skipLayerNorm = k == GroupKind::Reduction && isLayerNormOp(n) && j.v->uses.size() == 1 &&
                         llvm::all_of(grp.nodes, [](const Node *m) { return m->opType == "Add"; });
    if ((grp.kind == GroupKind::Pointwise || grp.kind == GroupKind::Reduction) && !samePattern(grp, n) && !skipLayerNorm)
      return BreakReason::ReductionBoundary;
    if (grp.kind == GroupKind::Reduction && k != GroupKind::Reduction && st.lastReduction &&
        isLayerNormOp(*st.lastReduction))
      return BreakReason::ReductionBoundary;  // a LayerNormalization kernel takes no epilogue
  }
  if (!isNormalizationEntry(n) && mixesFloatDtypes(n, j.v))
    return BreakReason::DtypeMismatch;
  if (isDataMovement(n) && grp.kind != GroupKind::Contraction)
    return BreakReason::LayoutChange;  // (a contraction's epilogue patterns decide for themselves)
  // SkipLayerNormalization emits its input sum as an extra output.
  const Node *p = j.v->producer;
  if (j.v->isGraphOutput() && !(p && p->opType == "Add" && (isNormalizationEntry(n) || n.opType == "Add" || isFloatCast(n))))
    return BreakReason::GraphOutput;
  return std::nullopt;
}

}  // namespace

std::unique_ptr<FusionBackendModel> makeOrtModel(bool cudaEp) { return std::make_unique<OrtFusion>(cudaEp); }

}  // namespace graphlint
