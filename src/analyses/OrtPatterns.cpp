// ONNX Runtime's fusion patterns for the ort profiles (OrtPatterns.h): which
// epilogues, prologues and normalizations ORT's graph transformers rewrite
// into one kernel (onnxruntime/core/optimizer). OrtFusion.cpp asks them.
#include "OrtPatterns.h"

#include "graphlint/ir/OpRegistry.h"
#include "graphlint/ir/ValueFacts.h"
#include "graphlint/analyses/DataDependence.h"

#include <llvm/ADT/StringSwitch.h>

namespace graphlint {
namespace fusion_detail {

// --- ONNX Runtime's fusion patterns (onnxruntime/core/optimizer) -----------
// The ort profile fuses what ORT's graph transformers rewrite into one kernel
// (union of the CPU and CUDA EPs): Conv/MatMul/Gemm with folded affine
// epilogues (BN, constant Mul/Add), one residual sum and one activation;
// Pad/Transpose/scalar-scale prologues; decomposed normalizations with their
// Casts; attention and embedding+LayerNorm blocks (OrtFusion.cpp's post-pass).

std::optional<int64_t> constantElements(const Value *v) {
  if (!isFoldedConstant(v, /*throughCasts=*/true))
    return std::nullopt;
  const Value *base = captureOrigin(v);
  if (base->kind == Value::Kind::Param)
    return base->param->tensor.numElements();
  return base->type.shape.numElements();
}

bool isOrtActivation(const Node &n) {
  return llvm::StringSwitch<bool>(n.opType)
      .Cases("Relu", "Clip", "Sigmoid", "Tanh", "LeakyRelu", "HardSigmoid", true)
      .Default(false);
}

bool isConvLike(const Node &n) { return n.opType == "Conv" || n.opType == "ConvTranspose"; }
bool isGemmLike(const Node &n) { return n.opType == "MatMul" || n.opType == "Gemm"; }

// Right-aligned unidirectional broadcast of `b` onto `out`, all dims known.
bool broadcastsOnto(const Shape &b, const Shape &out) {
  if (!b.rankKnown || !out.rankKnown || b.rank() > out.rank())
    return false;
  for (size_t i = 0; i < b.rank(); ++i) {
    const Dim &bd = b.dims[b.rank() - 1 - i];
    const Dim &od = out.dims[out.rank() - 1 - i];
    if (bd.isStatic() && bd.value == 1)
      continue;
    if (bd.isUnknown() || od.isUnknown() || !(bd == od))
      return false;
  }
  return true;
}

const Value *otherOperand(const Node &n, const Value *v) {
  for (const Value *in : n.inputs)
    if (in != v)
      return in;
  return nullptr;
}


// Why `n` (reading `v`, the contraction group's current output) cannot join
// an ORT contraction group anchored at `anchor` at epilogue stage `stage`.
std::optional<BreakReason> ortEpilogueRefusal(const Node &anchor, unsigned stage, const Node &n, const Value *v,
                                              unsigned *nextStage, bool residualSum) {
  *nextStage = stage;
  const Value *out = n.outputs.empty() ? nullptr : n.outputs[0];
  if (n.opType == "BatchNormalization") {
    // ConvBNFusion / MatmulBNFusion fold inference BN into the weights.
    if (stage != kFold || !onlyFirstOutputUsed(n) || n.inputs.empty() || n.inputs[0] != v)
      return BreakReason::ReductionBoundary;
    for (size_t i = 1; i < n.inputs.size(); ++i)
      if (!isFoldedConstant(n.inputs[i], /*throughCasts=*/true))
        return BreakReason::ReductionBoundary;
    return std::nullopt;
  }
  bool binary = n.opType == "Add" || n.opType == "Mul" || n.opType == "Sub" || n.opType == "Div" || n.opType == "Sum";
  if (binary) {
    if (n.inputs.size() != 2 || n.inputs[0] == n.inputs[1])
      return BreakReason::ReductionBoundary;
    const Value *o = otherOperand(n, v);
    if (!o)
      return BreakReason::ReductionBoundary;
    bool scalar = constantElements(o).value_or(0) == 1;
    if (n.opType == "Mul" || (n.opType == "Div" && n.inputs[1] == o)) {
      // ConvMulFusion folds per-channel/scalar constants; MatMulScaleFusion
      // only scalars (FusedMatMul alpha).
      if (stage != kFold || !isFoldedConstant(o, /*throughCasts=*/true) || (!isConvLike(anchor) && !scalar))
        return BreakReason::ReductionBoundary;
      if (isConvLike(anchor) && !scalar && (!out || !broadcastsOnto(o->type.shape, out->type.shape)))
        return BreakReason::ReductionBoundary;
      return std::nullopt;
    }
    if (n.opType == "Div" || n.opType == "Sub")
      return BreakReason::ReductionBoundary;
    // Add / Sum: a bias (ConvAddFusion, MatMulAddFusion, GemmSumFusion) or a
    // residual sum (ConvAddActivationFusion's FusedConv Z input).
    if (!out || !out->type.shape.rankKnown || !o->type.shape.rankKnown)
      return BreakReason::ReductionBoundary;
    if (isConvLike(anchor)) {
      if (isFoldedConstant(o, /*throughCasts=*/true) && stage == kFold)
        return broadcastsOnto(o->type.shape, out->type.shape) ? std::nullopt
                                                               : std::optional(BreakReason::ReductionBoundary);
      if (!residualSum || stage != kFold || !(o->type.shape == out->type.shape))
        return BreakReason::ReductionBoundary;
      *nextStage = kSummed;
      return std::nullopt;
    }
    // MatMul/Gemm: the addend becomes Gemm's C, once.
    bool hasC = anchor.opType == "Gemm" && anchor.inputs.size() > 2 && anchor.inputs[2];
    if (stage != kFold || hasC)
      return BreakReason::ReductionBoundary;
    const Shape &os = v->type.shape;  // C must broadcast onto the product, not onto the sum
    bool fits = os.rank() == 2 ? broadcastsOnto(o->type.shape, os)
                               : o->type.shape.rank() == 1 && broadcastsOnto(o->type.shape, os);
    if (!fits)
      return BreakReason::ReductionBoundary;
    *nextStage = kSummed;
    return std::nullopt;
  }
  if (isOrtActivation(n) && stage != kActivated && !(anchor.opType == "MatMul" && stage == kFold)) {
    // (FusedGemm takes the activation; a MatMul has one only once its bias
    // Add turned it into a Gemm: MatMulAddFusion.)
    // FusedConv / FusedGemm activation (Clip needs constant bounds).
    if (n.opType == "Clip")
      for (size_t i = 1; i < n.inputs.size(); ++i)
        if (n.inputs[i] && !isFoldedConstant(n.inputs[i], /*throughCasts=*/true))
          return BreakReason::ReductionBoundary;
    *nextStage = kActivated;
    return std::nullopt;
  }
  if (n.opType == "Transpose" && stage == kFold && out) {
    // MatmulBNFusion looks through Reshape/Transpose to the BN;
    // GemmTransposeFusion folds a 2-D output transpose into Gemm.
    bool toBN = out->uses.size() == 1 && out->uses[0].user->opType == "BatchNormalization";
    bool gemm2d = anchor.opType == "Gemm" && out->type.shape.rankKnown && out->type.shape.rank() == 2;
    if ((anchor.opType == "MatMul" && toBN) || gemm2d)
      return std::nullopt;
  }
  if (isLayoutChange(n))
    return BreakReason::LayoutChange;
  return BreakReason::ReductionBoundary;
}

// MatMulIntegerToFloatFusion: MatMulInteger -> Cast(to float) -> Mul(scales) [-> Add(bias)].
std::optional<BreakReason> ortIntegerEpilogueRefusal(unsigned stage, const Node &n, unsigned *nextStage) {
  *nextStage = stage;
  const Value *out = n.outputs.empty() ? nullptr : n.outputs[0];
  if (n.opType == "Cast" && stage == 0 && out && isFloating(out->type.dtype)) {
    *nextStage = 1;
    return std::nullopt;
  }
  if (n.opType == "Mul" && stage >= 1 && stage <= 2) {
    *nextStage = stage + 1;
    return std::nullopt;
  }
  if (n.opType == "Add" && stage >= 2 && stage <= 3) {
    *nextStage = 4;
    return std::nullopt;
  }
  return BreakReason::ReductionBoundary;
}

bool isFloatingValue(const Value *v) { return v && isFloating(v->type.dtype); }

// First ops of ORT's normalization/IsAllFinite patterns, which accept (and
// absorb) a precision Cast on their input.
bool isNormalizationEntry(const Node &n) {
  return llvm::StringSwitch<bool>(n.opType)
      .Cases("ReduceMean", "Sub", "Pow", "Mul", "Div", true)
      .Cases("LayerNormalization", "SimplifiedLayerNormalization", "IsInf", true)
      .Default(false);
}
bool isNormalizationHead(const Node &n) {
  return n.opType == "ReduceMean" || n.opType == "LayerNormalization" || n.opType == "SimplifiedLayerNormalization" ||
         n.opType == "Pow";
}
// A precision Cast whose readers all start a normalization (LayerNormFusion,
// SkipLayerNormFusion and SimplifiedLayerNormFusion absorb it).
bool feedsNormalization(const Node &cast) {
  const Value *out = cast.outputs.empty() ? nullptr : cast.outputs[0];
  if (!out || out->uses.empty())
    return false;
  bool head = false;
  for (const Use &u : out->uses) {
    if (!isNormalizationEntry(*u.user))
      return false;
    head |= isNormalizationHead(*u.user);
  }
  return head;
}

// PadFusion: a constant zero Pad on spatial dims folds into Conv/MaxPool/AveragePool.
bool ortPadFolds(const Node &pad, const Node &consumer) {
  if (!(consumer.opType == "Conv" || consumer.opType == "MaxPool" || consumer.opType == "AveragePool"))
    return false;
  if (const Attribute *mode = pad.attr("mode"); mode && mode->s != "constant")
    return false;
  if (consumer.opType == "AveragePool" && consumer.attrInt("count_include_pad").value_or(0) == 0)
    if (const Attribute *cp = consumer.attr("pads"))
      for (int64_t x : cp->ints)
        if (x != 0)
          return false;  // explicit pool padding excluded from the average: a Pad cannot merge
  if (pad.inputs.size() > 2 && pad.inputs[2] && !isFoldedConstant(pad.inputs[2], /*throughCasts=*/true))
    return false;
  std::vector<int64_t> pads;
  if (const Attribute *a = pad.attr("pads"))
    pads = a->ints;
  else if (pad.inputs.size() > 1)
    DataDependence::constantValue(pad.inputs[1], &pads);  // a weight's or a Constant node's contents
  if (pads.size() < 4 || pads.size() % 2)
    return false;
  size_t r = pads.size() / 2;
  for (size_t i = 0; i < pads.size(); ++i)
    if (pads[i] < 0 || ((i % r) < 2 && pads[i] != 0))
      return false;  // only non-negative spatial padding folds
  return true;
}

// MatmulTransposeFusion / GemmTransposeFusion: a float Transpose that swaps
// the last two dims (or moves the batch dim, FusedMatMul's transBatch) folds
// into MatMul/Gemm.
bool ortTransposeFolds(const Node &tr, const Node &mm, bool throughReshape) {
  if (!isGemmLike(mm) || tr.inputs.empty() || !isFloatingValue(tr.inputs[0]))
    return false;
  const Value *in = tr.inputs[0];
  if (!in->type.shape.rankKnown)
    return false;
  size_t r = in->type.shape.rank();
  if (r < 2)
    return false;
  std::vector<int64_t> perm;
  if (const Attribute *a = tr.attr("perm"))
    perm = a->ints;
  else
    for (size_t i = 0; i < r; ++i)
      perm.push_back(static_cast<int64_t>(r - 1 - i));
  if (perm.size() != r)
    return false;
  if (mm.opType == "Gemm")
    return r == 2;
  bool swapLast = perm[r - 1] == static_cast<int64_t>(r - 2) && perm[r - 2] == static_cast<int64_t>(r - 1);
  for (size_t i = 0; i + 2 < r && swapLast; ++i)
    swapLast = perm[i] == static_cast<int64_t>(i);
  if (swapLast)
    return true;
  // transBatch: [1, .., r-2, 0, r-1] or [1, .., r-1, 0]; both MatMul inputs of
  // one rank (unless a Reshape in between regroups the batch dims).
  for (const Value *o : mm.inputs)
    if (!throughReshape && (!o || !o->type.shape.rankKnown || o->type.shape.rank() != r))
      return false;
  bool rotA = true, rotB = true;
  for (size_t i = 0; i + 2 < r; ++i)
    rotA &= perm[i] == static_cast<int64_t>(i + 1);
  rotA &= perm[r - 2] == 0 && perm[r - 1] == static_cast<int64_t>(r - 1);
  for (size_t i = 0; i + 1 < r; ++i)
    rotB &= perm[i] == static_cast<int64_t>(i + 1);
  rotB &= perm[r - 1] == 0;
  return r >= 3 && (rotA || rotB);
}

// MatMulScaleFusion: x * c or x / c with a constant scalar c feeding MatMul.
bool ortScaleFolds(const Node &s, const Value *v, const Node &mm) {
  if (!(mm.opType == "MatMul") || s.inputs.size() != 2 || !isFloatingValue(v))
    return false;
  const Value *scale = s.opType == "Mul" ? (isFoldedConstant(s.inputs[1], /*throughCasts=*/true) ? s.inputs[1] : s.inputs[0])
                       : s.opType == "Div" ? s.inputs[1]
                                           : nullptr;
  if (!scale || constantElements(scale).value_or(0) != 1)
    return false;
  const Value *x = otherOperand(s, scale);
  return x && !isFoldedConstant(x, /*throughCasts=*/true) && x->type.shape == v->type.shape;
}


bool isLayerNormOp(const Node &n) {
  return n.opType == "LayerNormalization" || n.opType == "SimplifiedLayerNormalization" ||
         n.opType == "SkipLayerNormalization" || n.opType == "native_layer_norm" || n.opType == "layer_norm";
}

namespace {

bool isPatternOp(const Node &n) {
  return llvm::StringSwitch<bool>(n.opType)
      .Cases("Div", "Mul", "Add", "Pow", "Erf", "Tanh", "Sigmoid", true)
      .Default(false);
}

const Node *soleReader(const Value *v) {
  return v && v->uses.size() == 1 && !v->isGraphOutput() ? v->uses[0].user : nullptr;
}

}  // namespace

// One match per Erf (GeluFusion: x * 0.5 * (1 + erf(x / sqrt 2))), Tanh
// (FastGeluFusion: the tanh approximation) or Sigmoid (QuickGeluFusion:
// x * sigmoid(a * x)): the tail Mul that multiplies by x again names x; the
// match is every pattern op on a path from x to the anchor, the anchor and its
// tail, plus a bias Add producing x from a constant (BiasGeluFusion).
llvm::DenseMap<const Node *, unsigned> ortElementwisePatterns(const Graph &g) {
  llvm::DenseMap<const Node *, unsigned> label;
  unsigned next = 0;
  for (const auto &np : g.nodes()) {
    const Node &a = *np;
    if (!(a.opType == "Erf" || a.opType == "Tanh" || a.opType == "Sigmoid") || a.outputs.empty())
      continue;
    // Forward tail: at most three single-reader pattern ops (Add 1, Mul, Mul 0.5).
    llvm::SmallVector<const Node *, 4> tail;
    const Value *cur = a.outputs[0];
    const Value *x = nullptr;
    for (int i = 0; i < 3 && !x; ++i) {
      const Node *r = soleReader(cur);
      if (!r || !isPatternOp(*r) || r->inputs.size() != 2 || r->outputs.empty())
        break;
      tail.push_back(r);
      const Value *o = otherOperand(*r, cur);
      if (r->opType == "Mul" && o && !isFoldedConstant(o, /*throughCasts=*/true))
        x = o;
      else if (r->opType == "Mul" && a.opType == "Erf")
        break;  // x * (0.5 * (1 + erf)): GeluFusion wants x * (1 + erf) first
      cur = r->outputs[0];
    }
    if (!x)
      continue;
    // (0.5 * x) * (1 + tanh(..)): x is the operand of that Mul.
    if (const Node *h = x->kind == Value::Kind::NodeOutput ? x->producer : nullptr;
        h && h->opType == "Mul" && a.opType != "Sigmoid" && x->uses.size() == 1 && h->inputs.size() == 2 &&
        isFoldedConstant(h->inputs[0], /*throughCasts=*/true) != isFoldedConstant(h->inputs[1], /*throughCasts=*/true)) {
      tail.push_back(h);
      x = isFoldedConstant(h->inputs[0], /*throughCasts=*/true) ? h->inputs[1] : h->inputs[0];
    }
    // A trailing Mul by a constant (the 0.5 of x * 0.5 * (...)).
    if (const Node *r = soleReader(cur); r && r->opType == "Mul" && isFoldedConstant(otherOperand(*r, cur), /*throughCasts=*/true))
      tail.push_back(r);
    // Backward: pattern ops between x and the anchor.
    llvm::SmallVector<const Node *, 8> body;
    llvm::SmallVector<const Value *, 8> work{a.inputs.empty() ? nullptr : a.inputs[0]};
    bool ok = true;
    for (unsigned steps = 0; !work.empty() && ok && steps < 16; ++steps) {
      const Value *v = work.pop_back_val();
      if (!v || v == x || isFoldedConstant(v, /*throughCasts=*/true))
        continue;
      const Node *p = v->kind == Value::Kind::NodeOutput ? v->producer : nullptr;
      if (!p || !isPatternOp(*p) || p->graph != &g) {
        ok = false;
        break;
      }
      if (!llvm::is_contained(body, p))
        body.push_back(p);
      for (const Value *in : p->inputs)
        work.push_back(in);
    }
    if (!ok || (a.opType != "Sigmoid" && body.empty()))
      continue;
    ++next;
    for (const Node *n : body) label[n] = next;
    for (const Node *n : tail) label[n] = next;
    label[&a] = next;
    // BiasGelu / FastGelu with bias: x = Add(y, constant bias) read only by the match.
    const Node *b = x->kind == Value::Kind::NodeOutput ? x->producer : nullptr;
    auto fromContraction = [](const Value *v) {
      return v && v->kind == Value::Kind::NodeOutput && v->producer && isGemmLike(*v->producer);
    };
    // (After a MatMul the bias goes to the Gemm first: MatMulAddFusion runs at the basic level.)
    if (b && b->opType == "Add" && b->inputs.size() == 2 && a.opType != "Sigmoid" &&
        !fromContraction(b->inputs[0]) && !fromContraction(b->inputs[1]) &&
        (isFoldedConstant(b->inputs[0], /*throughCasts=*/true) || isFoldedConstant(b->inputs[1], /*throughCasts=*/true)) &&
        llvm::all_of(x->uses, [&](const Use &u) { return label.lookup(u.user) == next; }))
      label[b] = next;
  }
  // Normalizations: SimplifiedLayerNormFusion (RMSNorm: [Cast] -> Pow -> ReduceMean
  // -> Add -> Sqrt -> Div -> Mul) and LayerNormFusion (ReduceMean -> Sub -> Pow ->
  // ReduceMean -> Add -> Sqrt -> Div -> Mul -> Add), each op the sole reader's
  // of the previous one (the Sub's result, x, is read twice).
  auto reader = [](const Value *v, llvm::StringRef op, bool sole) -> const Node * {
    if (!v)
      return nullptr;
    for (const Use &u : v->uses)
      if (u.user->opType == op && !u.user->outputs.empty() && (!sole || v->uses.size() == 1))
        return u.user;
    return nullptr;
  };
  auto out0 = [](const Node *n) -> const Value * { return n && !n->outputs.empty() ? n->outputs[0] : nullptr; };
  for (const auto &np : g.nodes()) {
    const Node &r = *np;
    if (r.opType != "ReduceMean" || r.inputs.empty() || !r.inputs[0] || label.count(&r))
      continue;
    const Node *src = r.inputs[0]->kind == Value::Kind::NodeOutput ? r.inputs[0]->producer : nullptr;
    llvm::SmallVector<const Node *, 10> m;
    if (src && src->opType == "Pow" && r.inputs[0]->uses.size() == 1) {
      const Node *add = reader(out0(&r), "Add", true), *sq = reader(out0(add), "Sqrt", true);
      const Node *div = reader(out0(sq), "Div", true), *mul = reader(out0(div), "Mul", true);
      if (!div)
        continue;
      m = {src, &r, add, sq, div};
      if (mul) {  // x * (1 / sqrt(..)), then the weight
        m.push_back(mul);
        if (const Node *w = reader(out0(mul), "Mul", true))
          m.push_back(w);
      }
      const Value *x = src->inputs.empty() ? nullptr : src->inputs[0];
      if (x && x->kind == Value::Kind::NodeOutput && x->producer && x->producer->opType == "Cast" &&
          feedsNormalization(*x->producer))
        m.push_back(x->producer);
    } else {
      const Node *sub = reader(out0(&r), "Sub", true), *pw = reader(out0(sub), "Pow", false);
      const Node *r2 = reader(out0(pw), "ReduceMean", true), *add = reader(out0(r2), "Add", true);
      const Node *sq = reader(out0(add), "Sqrt", true), *div = reader(out0(sq), "Div", true);
      const Node *mul = reader(out0(div), "Mul", true), *bias = reader(out0(mul), "Add", true);
      if (!div)
        continue;
      m = {&r, sub, pw, r2, add, sq, div};
      for (const Node *n : {mul, bias})
        if (n)
          m.push_back(n);
    }
    ++next;
    for (const Node *n : m)
      label[n] = next;
  }
  return label;
}

}  // namespace fusion_detail
}  // namespace graphlint
