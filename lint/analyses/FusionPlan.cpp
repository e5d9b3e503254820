// Greedy, topological fusion planning in the style of Inductor/TVM: each node
// either joins the group of a producer it reads (when the backend's legality
// rules allow it) or starts a new group; every producer->consumer edge between
// two kernel groups becomes a boundary with the reason the join was refused.
// One pass over the nodes and their inputs: linear in graph size.
#include "graphlint/lint/FusionPlan.h"

#include "graphlint/ir/OpRegistry.h"

#include <fmt/format.h>

#include <llvm/ADT/DenseSet.h>
#include <llvm/ADT/StringSwitch.h>

namespace graphlint {

std::string_view fusionBackendName(FusionBackend b) {
  switch (b) {
  case FusionBackend::Inductor: return "inductor";
  case FusionBackend::TensorRT: return "tensorrt";
  case FusionBackend::Ort: return "ort";
  }
  return "inductor";
}

std::optional<FusionBackend> fusionBackendFromName(std::string_view s) {
  if (s == "inductor") return FusionBackend::Inductor;
  if (s == "tensorrt" || s == "trt") return FusionBackend::TensorRT;
  if (s == "ort" || s == "onnxruntime") return FusionBackend::Ort;
  return std::nullopt;
}

std::string_view breakReasonName(BreakReason r) {
  switch (r) {
  case BreakReason::DtypeMismatch: return "dtype_mismatch";
  case BreakReason::CrossDevice: return "cross_device";
  case BreakReason::HostSync: return "host_sync";
  case BreakReason::ControlFlow: return "control_flow";
  case BreakReason::DataDependentShape: return "data_dependent_shape";
  case BreakReason::InplaceAlias: return "inplace_alias";
  case BreakReason::OpaqueOp: return "opaque_op";
  case BreakReason::UnknownOp: return "unknown_op";
  case BreakReason::MultiConsumer: return "multi_consumer";
  case BreakReason::GraphOutput: return "graph_output";
  case BreakReason::ReductionBoundary: return "reduction_boundary";
  case BreakReason::LayoutChange: return "layout_change";
  }
  return "reduction_boundary";
}

bool isFusionBreaker(BreakReason r) {
  switch (r) {
  case BreakReason::DtypeMismatch: case BreakReason::CrossDevice: case BreakReason::HostSync:
  case BreakReason::ControlFlow: case BreakReason::DataDependentShape: case BreakReason::InplaceAlias:
  case BreakReason::OpaqueOp: case BreakReason::UnknownOp:
    return true;
  default:
    return false;
  }
}

std::string_view groupKindName(GroupKind k) {
  switch (k) {
  case GroupKind::Pointwise: return "pointwise";
  case GroupKind::Reduction: return "reduction";
  case GroupKind::Contraction: return "contraction";
  case GroupKind::ShapeOnly: return "shape-only";
  case GroupKind::ControlFlow: return "control-flow";
  case GroupKind::HostSync: return "host-sync";
  case GroupKind::Opaque: return "opaque";
  case GroupKind::Unknown: return "unknown";
  case GroupKind::Collective: return "collective";
  }
  return "pointwise";
}

namespace {

// The legality knobs that differ between compilers (docs/fusion.md).
struct BackendRules {
  bool castFuses;          // a precision-changing Cast stays inside a pointwise group
  bool injectiveFuses;     // gather/slice/concat/pad fuse as index math
  bool transposeFuses;     // a layout change fuses (else layout_change)
  bool multiOutputGroups;  // a group may export an intermediate value read elsewhere
  bool graphOutputFuses;   // a graph output may be an intermediate of a group
  bool reductionEpilogue;  // pointwise consumers of a reduction share its kernel
  unsigned maxEpilogue;    // pointwise ops a contraction absorbs
  bool patternFusion;      // contractions/pools fuse only ORT's transformer patterns
};

BackendRules rulesFor(FusionBackend b) {
  switch (b) {
  case FusionBackend::Inductor: return {true, true, true, true, true, true, 8, false};
  case FusionBackend::TensorRT: return {false, false, false, false, true, true, 3, false};
  case FusionBackend::Ort: return {false, false, false, false, false, true, 2, true};
  }
  return {true, true, true, true, true, true, 8, false};
}

bool isFloatCast(const Node &n) {
  if (n.opType != "Cast" && n.opType != "CastLike")
    return false;
  const Value *in = n.inputs.empty() ? nullptr : n.inputs[0];
  const Value *out = n.outputs.empty() ? nullptr : n.outputs[0];
  return in && out && isFloating(in->type.dtype) && isFloating(out->type.dtype) && in->type.dtype != out->type.dtype;
}

bool isLayoutChange(const Node &n) {
  return llvm::StringSwitch<bool>(n.opType)
      .Cases("Transpose", "DepthToSpace", "SpaceToDepth", true)
      .Default(false);
}

// Ops that are kernels of their own for every backend we model.
bool isOpaque(const Node &n) {
  return llvm::StringSwitch<bool>(n.opType)
      .Cases("TopK", "LSTM", "GRU", "RNN", "Multinomial", "RandomNormal", "RandomUniform", true)
      .Cases("RandomNormalLike", "RandomUniformLike", "Bernoulli", "MemcpyToHost", "MemcpyFromHost", true)
      .Cases("Scatter", "ScatterElements", "ScatterND", "TensorScatter", true)
      .Cases("RoiAlign", "MaxRoiPool", "Resize", "Upsample", true)
      .Default(false);
}

bool isDeviceCopy(const Node &n) {
  return n.opType == "MemcpyToHost" || n.opType == "MemcpyFromHost";
}

// Reductions share a kernel when they reduce the same domain (softmax,
// layer norm): equal input shapes.
bool sameReductionDomain(const Node &a, const Node &b) {
  const Value *x = a.inputs.empty() ? nullptr : a.inputs[0];
  const Value *y = b.inputs.empty() ? nullptr : b.inputs[0];
  return x && y && x->type.shape.rankKnown && x->type.shape == y->type.shape;
}


// --- ONNX Runtime's fusion patterns (onnxruntime/core/optimizer) -----------
// The ort profile fuses what ORT's graph transformers rewrite into one kernel
// (union of the CPU and CUDA EPs): Conv/MatMul/Gemm with folded affine
// epilogues (BN, constant Mul/Add), one residual sum and one activation;
// Pad/Transpose/scalar-scale prologues; decomposed normalizations with their
// Casts; attention and embedding+LayerNorm blocks (see ortPatternPass).

// A value ORT folds at session init: an initializer, a Constant, or a view /
// cast of one (Unsqueeze of a bias, ...).
bool isConstantValue(const Value *v, int depth = 0) {
  if (!v || depth > 4)
    return false;
  const Value *base = v->kind == Value::Kind::OuterScope && v->outer ? v->outer : v;
  if (base->kind == Value::Kind::Param && base->param)
    return true;
  if (base->kind != Value::Kind::NodeOutput || !base->producer)
    return false;
  const Node &p = *base->producer;
  if (p.opType == "Constant")
    return true;
  if (p.opType == "Unsqueeze" || p.opType == "Squeeze" || p.opType == "Reshape" || p.opType == "Cast" ||
      p.opType == "Identity" || p.opType == "Flatten") {
    for (const Value *in : p.inputs)
      if (in && !isConstantValue(in, depth + 1))
        return false;
    return true;
  }
  return false;
}

std::optional<int64_t> constantElements(const Value *v) {
  if (!isConstantValue(v))
    return std::nullopt;
  const Value *base = v->kind == Value::Kind::OuterScope && v->outer ? v->outer : v;
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

bool onlyFirstOutputUsed(const Node &n) {
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (n.outputs[i] && (!n.outputs[i]->uses.empty() || n.outputs[i]->isGraphOutput()))
      return false;
  return true;
}

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

// Stages of a contraction's epilogue under the ort profile.
enum : unsigned { kFold = 0, kSummed = 1, kActivated = 2 };

// Why `n` (reading `v`, the contraction group's current output) cannot join
// an ORT contraction group anchored at `anchor` at epilogue stage `stage`.
std::optional<BreakReason> ortEpilogueRefusal(const Node &anchor, unsigned stage, const Node &n, const Value *v,
                                              unsigned *nextStage) {
  *nextStage = stage;
  const Value *out = n.outputs.empty() ? nullptr : n.outputs[0];
  if (n.opType == "BatchNormalization") {
    // ConvBNFusion / MatmulBNFusion fold inference BN into the weights.
    if (stage != kFold || !onlyFirstOutputUsed(n) || n.inputs.empty() || n.inputs[0] != v)
      return BreakReason::ReductionBoundary;
    for (size_t i = 1; i < n.inputs.size(); ++i)
      if (!isConstantValue(n.inputs[i]))
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
      if (stage != kFold || !isConstantValue(o) || (!isConvLike(anchor) && !scalar))
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
      if (isConstantValue(o) && stage == kFold)
        return broadcastsOnto(o->type.shape, out->type.shape) ? std::nullopt
                                                               : std::optional(BreakReason::ReductionBoundary);
      if (stage != kFold || !(o->type.shape == out->type.shape))
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
  if (isOrtActivation(n) && stage != kActivated) {
    // FusedConv / FusedGemm activation (Clip needs constant bounds).
    if (n.opType == "Clip")
      for (size_t i = 1; i < n.inputs.size(); ++i)
        if (n.inputs[i] && !isConstantValue(n.inputs[i]))
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
  if (pad.inputs.size() > 2 && pad.inputs[2] && !isConstantValue(pad.inputs[2]))
    return false;
  std::vector<int64_t> pads;
  if (const Attribute *a = pad.attr("pads"))
    pads = a->ints;
  else if (pad.inputs.size() > 1 && isConstantValue(pad.inputs[1])) {
    const Value *p = pad.inputs[1];
    if (p->param->tensor.data.known)
      pads = p->param->tensor.data.ints;
  }
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
bool ortTransposeFolds(const Node &tr, const Node &mm) {
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
  // transBatch: [1, .., r-2, 0, r-1] or [1, .., r-1, 0]; both MatMul inputs of one rank.
  for (const Value *o : mm.inputs)
    if (!o || !o->type.shape.rankKnown || o->type.shape.rank() != r)
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
  const Value *scale = s.opType == "Mul" ? (isConstantValue(s.inputs[1]) ? s.inputs[1] : s.inputs[0])
                       : s.opType == "Div" ? s.inputs[1]
                                           : nullptr;
  if (!scale || constantElements(scale).value_or(0) != 1)
    return false;
  const Value *x = otherOperand(s, scale);
  return x && !isConstantValue(x) && x->type.shape == v->type.shape;
}

}  // namespace

FusionPlan::FusionPlan(const Model &m, AnalysisContext &ctx) : backend_(ctx.setup().backend) { plan(m); }
FusionPlan::FusionPlan(const Model &m, FusionBackend backend) : backend_(backend) { plan(m); }

void FusionPlan::plan(const Model &m) {
  forEachGraph(*m.graph, [&](const Graph &g) { planGraph(g); });
  // Model-local function bodies are planned too, so every node has a group.
  for (const auto &f : m.functions)
    if (f->body)
      forEachGraph(*f->body, [&](const Graph &g) { planGraph(g); });
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

// Per-group planning state (internal; declared in the header for ortPatternPass).
struct FusionGroupState {
  llvm::SmallVector<unsigned, 4> deps;  // kernel groups this group reads
  const Node *lastReduction = nullptr;
  unsigned epilogue = 0;
  bool closed = false;
  // ort profile
  const Node *anchor = nullptr;  // the contraction a group grew from
  unsigned stage = 0;            // its epilogue stage (kFold, kSummed, kActivated)
  bool injective = false;        // started by a gather/slice/pad/transpose
  bool castHead = false;         // a lone precision Cast so far
  bool normalization = false;    // holds a ReduceMean (decomposed LayerNorm)
};
using GroupState = FusionGroupState;

namespace {

GroupKind kindOf(const Node &n) {
  if (!n.op || !n.op->known)
    return GroupKind::Unknown;
  if (isOpaque(n))
    return GroupKind::Opaque;
  switch (n.op->kind) {
  case OpKind::Pointwise: case OpKind::Broadcast: case OpKind::Injective: return GroupKind::Pointwise;
  case OpKind::Reduction: return GroupKind::Reduction;
  case OpKind::Contraction: return GroupKind::Contraction;
  case OpKind::ShapeOnly: return GroupKind::ShapeOnly;
  case OpKind::ControlFlow: return GroupKind::ControlFlow;
  case OpKind::DataDependentOutput: return GroupKind::HostSync;
  case OpKind::Collective: return GroupKind::Collective;
  case OpKind::Unknown: return GroupKind::Unknown;
  }
  return GroupKind::Unknown;
}

}  // namespace

void FusionPlan::planGraph(const Graph &g) {
  const BackendRules rules = rulesFor(backend_);
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
    // Shape/Size read metadata only: no dependency on the producer's kernel.
    if (n.opType == "Shape" || n.opType == "Size")
      return;
    for (const Value *v : n.inputs)
      if (v && v->kind == Value::Kind::NodeOutput && v->producer && v->producer->graph == &g) {
        auto it = groupIndex_.find(v->producer);
        if (it != groupIndex_.end() && it->second != gid)
          state[gid].deps.push_back(it->second);
      }
  };
  // Does group `from` (transitively) read group `to`? Bounded search; when
  // the bound is hit the answer is "yes", the safe side.
  auto reaches = [&](unsigned from, unsigned to) {
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
      if (idx < n.inputs.size() && n.inputs[idx] == v)
        return BreakReason::InplaceAlias;
    if (k == GroupKind::Contraction) return BreakReason::ReductionBoundary;  // no prologue fusion
    if (grp.kind == GroupKind::ShapeOnly) return BreakReason::ReductionBoundary;
    if (rules.patternFusion) {
      // ORT: gathers, pads and transposes are kernels of their own (their
      // folds into a consumer are ortPatternPass's); a precision Cast fuses
      // only inside a decomposed normalization (LayerNormFusion with casts).
      if (st.injective) return isLayoutChange(*grp.nodes.front()) ? BreakReason::LayoutChange : BreakReason::ReductionBoundary;
      if (isFloatCast(n) && !st.normalization && !feedsNormalization(n)) return BreakReason::DtypeMismatch;
      if (st.castHead && !isNormalizationEntry(n)) return BreakReason::DtypeMismatch;
      if (grp.kind == GroupKind::Reduction && k == GroupKind::Reduction && n.opType != "ReduceMean" &&
          n.opType != "LayerNormalization" && n.opType != "Softmax")
        return BreakReason::ReductionBoundary;
      if (grp.kind == GroupKind::Reduction && st.lastReduction && !st.normalization &&
          st.lastReduction->opType != "ReduceMean" && k != GroupKind::Reduction)
        return BreakReason::ReductionBoundary;  // ORT has no reduction epilogues beyond normalizations
    }
    if (!rules.castFuses && isFloatCast(n) && !(rules.patternFusion && (st.normalization || feedsNormalization(n))))
      return BreakReason::DtypeMismatch;
    if (!rules.castFuses && v->type.isTensor() && n.op && n.op->kind != OpKind::ShapeOnly &&
        !(rules.patternFusion && isNormalizationEntry(n)))
      for (const Value *in : n.inputs)
        if (in && in != v && isFloating(in->type.dtype) && isFloating(v->type.dtype) && in->type.dtype != v->type.dtype)
          return BreakReason::DtypeMismatch;
    if (!rules.transposeFuses && isLayoutChange(n) && !(rules.patternFusion && grp.kind == GroupKind::Contraction))
      return BreakReason::LayoutChange;  // (ort: the contraction epilogue rules decide)
    if (!rules.injectiveFuses && n.op && n.op->kind == OpKind::Injective &&
        !(rules.patternFusion && grp.kind == GroupKind::Contraction))
      return BreakReason::LayoutChange;
    if (!rules.graphOutputFuses && v->isGraphOutput() &&
        !(rules.patternFusion && v->producer && v->producer->opType == "Add" &&
          (isNormalizationEntry(n) || n.opType == "Add" || isFloatCast(n))))
      return BreakReason::GraphOutput;  // (SkipLayerNormalization emits its input sum as an extra output)
    if (!rules.multiOutputGroups || grp.kind == GroupKind::Contraction) {
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
      if (rules.patternFusion && st.anchor) {
        unsigned next = 0;
        if (st.anchor->opType == "MatMulInteger")
          return ortIntegerEpilogueRefusal(st.stage, n, &next);
        return ortEpilogueRefusal(*st.anchor, st.stage, n, v, &next);
      }
      if (k != GroupKind::Pointwise || st.epilogue >= rules.maxEpilogue) return BreakReason::ReductionBoundary;
      if (n.op && n.op->kind == OpKind::Injective && !isLayoutChange(n)) return BreakReason::ReductionBoundary;
      if (isLayoutChange(n)) return BreakReason::LayoutChange;
      return std::nullopt;
    case GroupKind::Reduction:
      if (k == GroupKind::Reduction)
        return st.lastReduction && sameReductionDomain(*st.lastReduction, n) ? std::nullopt
                                                                             : std::optional(BreakReason::ReductionBoundary);
      if (!rules.reductionEpilogue) return BreakReason::ReductionBoundary;
      return std::nullopt;
    case GroupKind::Pointwise:
      return std::nullopt;  // pointwise prologue into anything but a contraction
    default:
      return BreakReason::ReductionBoundary;
    }
  };

  // Shape arithmetic (Shape -> Gather -> Concat -> Reshape) runs on the host
  // from metadata and constants: it costs no kernel.
  llvm::DenseSet<const Value *> hostValues;
  auto hostKnown = [&](const Value *v) {
    if (!v)
      return true;
    if (hostValues.count(v))
      return true;
    const Value *base = v->kind == Value::Kind::OuterScope && v->outer ? v->outer : v;
    if (base->kind == Value::Kind::Param && base->param)
      return base->param->tensor.numElements().value_or(INT64_MAX) <= 64;
    return false;
  };

  for (const auto &np : g.nodes()) {
    const Node &n = *np;
    GroupKind k = kindOf(n);
    bool host = n.opType == "Shape" || n.opType == "Size" || n.opType == "Constant";
    if (!host && k != GroupKind::Contraction && k != GroupKind::ControlFlow && k != GroupKind::Unknown &&
        !n.inputs.empty()) {
      host = true;
      for (const Value *in : n.inputs)
        host &= hostKnown(in);
    }
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
      bool transparent = n.op && n.op->viewOfInput0 && pg && !state[*pg].closed &&
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
      // ort: a contraction's epilogue wins over a pointwise sibling (the
      // fused kernel takes the other operand as an input).
      if (rules.patternFusion && chosen && groups_[*chosen].kind == GroupKind::Contraction)
        continue;
      if (!refusal(*pg, n, k, v))
        chosen = *pg;
    }
    if (rules.patternFusion && chosen && groups_[*chosen].kind != GroupKind::Contraction)
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
    if (!chosen && k == GroupKind::Pointwise && rules.multiOutputGroups) {
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
      // output is read only here folds into the chosen group (Inductor fuses
      // both loads into one loop nest).
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
        groups_[*pg].nodes.clear();
        groups_[*pg].kernels = 0;
        state[*pg].closed = true;
      }
      FusionGroup &grp = groups_[gid];
      if (grp.kind == GroupKind::Pointwise && k == GroupKind::Reduction)
        grp.kind = GroupKind::Reduction;
      if (grp.kind == GroupKind::Contraction) {
        ++state[gid].epilogue;
        if (rules.patternFusion && state[gid].anchor) {
          const Value *via = nullptr;
          for (const Value *v : n.inputs)
            if (groupOfValue(v) == std::optional<unsigned>(gid))
              via = v;
          unsigned next = state[gid].stage;
          if (state[gid].anchor->opType == "MatMulInteger")
            ortIntegerEpilogueRefusal(state[gid].stage, n, &next);
          else
            ortEpilogueRefusal(*state[gid].anchor, state[gid].stage, n, via, &next);
          state[gid].stage = next;
        }
      }
      state[gid].castHead = false;
    } else {
      gid = newGroup(n, k);
      if (k == GroupKind::Contraction)
        state[gid].anchor = &n;
      state[gid].injective = n.op && n.op->kind == OpKind::Injective;
      state[gid].castHead = rules.patternFusion && isFloatCast(n);
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
    if (!chosen && ((!rules.injectiveFuses && n.op && n.op->kind == OpKind::Injective) ||
                    (!rules.transposeFuses && isLayoutChange(n))))
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

  if (rules.patternFusion)
    ortPatternPass(g, state);
}

// ORT's prologue folds, applied after the greedy pass: a single-use Pad into
// Conv/MaxPool/AveragePool (PadFusion), a Transpose (optionally followed by a
// precision Cast) into MatMul/Gemm (MatmulTransposeFusion, GemmTransposeFusion),
// a scalar scale into MatMul (MatMulScaleFusion). One pass over the nodes.
void FusionPlan::ortPatternPass(const Graph &g, std::vector<GroupState> &state) {
  auto merge = [&](unsigned into, unsigned from) {
    if (into == from)
      return;
    for (const Node *member : groups_[from].nodes) {
      groups_[into].nodes.push_back(member);
      groupIndex_[member] = into;
    }
    groups_[from].nodes.clear();
    groups_[from].kernels = 0;
    state[from].closed = true;
  };
  auto alone = [&](const Node &p) { return groups_[groupIndex_.lookup(&p)].nodes.size() == 1; };
  auto singleUse = [&](const Value *v) {
    return v && v->kind == Value::Kind::NodeOutput && v->producer && v->producer->graph == &g && v->uses.size() == 1 &&
           !v->isGraphOutput();
  };
  for (const auto &np : g.nodes()) {
    const Node &n = *np;
    for (const Value *v : n.inputs) {
      if (!singleUse(v))
        continue;
      const Node &p = *v->producer;
      unsigned gn = groupIndex_.lookup(&n), gp = groupIndex_.lookup(&p);
      if (gn == gp || !alone(p) || groups_[gn].kind == GroupKind::ShapeOnly)
        continue;
      if (p.opType == "Pad" && ortPadFolds(p, n)) {
        merge(gn, gp);
      } else if (p.opType == "Transpose" && ortTransposeFolds(p, n)) {
        merge(gn, gp);
      } else if ((p.opType == "Mul" || p.opType == "Div") && ortScaleFolds(p, v, n)) {
        merge(gn, gp);
      } else if (p.opType == "Mul" && state[gn].anchor && state[gn].anchor->opType == "MatMulInteger" &&
                 groups_[gp].kind == GroupKind::Pointwise) {
        merge(gn, gp);  // MatMulIntegerToFloat: the product of the input scales
      } else if (p.opType == "DynamicQuantizeLinear" && n.opType == "MatMulInteger") {
        merge(gn, gp);  // DynamicQuantizeMatMulFusion, with the scale product feeding the epilogue
        for (const Value *o : p.outputs)
          for (const Use &u : o ? o->uses : llvm::SmallVector<Use, 2>{}) {
            unsigned gu = groupIndex_.lookup(u.user);
            if (gu == gn || !alone(*u.user) || groups_[gu].kind != GroupKind::Pointwise || u.user->outputs.empty() ||
                !u.user->outputs[0])
              continue;
            bool intoGn = true;
            for (const Use &w : u.user->outputs[0]->uses)
              intoGn &= groupIndex_.lookup(w.user) == gn;
            if (intoGn)
              merge(gn, gu);
          }
      } else if (isFloatCast(p) && isGemmLike(n) && singleUse(p.inputs[0])) {
        const Node &t = *p.inputs[0]->producer;
        if (t.opType == "Transpose" && alone(t) && ortTransposeFolds(t, n)) {
          merge(gn, gp);
          merge(gn, groupIndex_.lookup(&t));
        }
      }
    }
  }
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
