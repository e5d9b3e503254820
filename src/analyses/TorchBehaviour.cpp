// How PyTorch eager runs what an exporter wrote: the behaviour tables the
// memory trace reads (MemoryTrace.h), in one file. Which outputs are views
// sharing their input's storage (and which of those are strided or
// permuted, so that a later reshape copies), which activations torchvision
// runs in place, exporter-decomposed kernels (GELU, SiLU and GroupNorm from
// DecomposedKernels.h, attention, torch 1.13's traced silu_backward) that
// PyTorch runs as one, a CPU dropout's
// input-sized mask (and CUDA's one-byte mask where torch 1.x traced the CPU's
// noise), and the repeated layers
// --recompute layer checkpoints. Module scopes (a module's forward holds its
// arguments until it returns) are part of the shared Liveness
// (include/graphlint/analyses/Liveness.h).
#include "MemoryTraceBuilder.h"

#include "graphlint/analyses/Contraction.h"
#include "graphlint/ir/OpRegistry.h"
#include "graphlint/ir/ValueFacts.h"

#include <fmt/format.h>

#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/StringSet.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <string>

namespace graphlint {

namespace {

// "3", "encoder_layer_5", "layer1", "denselayer2": a component that numbers
// its module among siblings.
bool isIndexComponent(llvm::StringRef part) { return !part.empty() && llvm::isDigit(part.back()); }

// Deeper module paths are not searched for layers (their prefixes are
// hashed, so the cost grows with the square of the depth).
constexpr unsigned kMaxLayerDepth = 64;

}  // namespace

std::vector<llvm::StringRef> checkpointLayers(const Graph &g) {
  const auto &nodes = g.nodes();
  std::vector<llvm::StringRef> layer(nodes.size());
  // Module paths with a submodule: a leaf (a Conv2d at features.0) is no layer.
  llvm::StringSet<> composite;
  for (const auto &np : nodes) {
    llvm::StringRef path = np->modulePath;
    unsigned depth = 0;
    for (size_t dot = path.find('.'); dot != llvm::StringRef::npos && ++depth < kMaxLayerDepth;
         dot = path.find('.', dot + 1))
      composite.insert(path.substr(0, dot));
  }
  // Stages of repeated blocks reached through a named container (timm's
  // `stages.1.blocks.0`, Swin's `layers.0.blocks.3`): the children of
  // `P.C` that share one structure (the same module paths below them) and
  // hold modules of their own (a block's `mlp.fc1`), when together they run
  // at least half of P's nodes. A T5 block's `layer.0` (attention) and
  // `layer.1` (MLP) differ, so the block stays the layer; the conv-norm-act
  // units of an inverted residual (`features.2.0.block.0`) and the experts
  // of a mixture hold only leaves, so they are no blocks.
  llvm::StringMap<std::set<std::string>> shapeOf;  // indexed composite -> its nodes' module paths below it
  llvm::StringMap<size_t> nodesIn;
  for (const auto &np : nodes) {
    llvm::StringRef path = np->modulePath;
    unsigned depth = 0;
    for (size_t dot = path.find('.'); dot != llvm::StringRef::npos && ++depth < kMaxLayerDepth;
         dot = path.find('.', dot + 1)) {
      llvm::StringRef prefix = path.substr(0, dot);
      ++nodesIn[prefix];
      if (isIndexComponent(prefix.substr(prefix.rfind('.') + 1)))
        shapeOf[prefix].insert(path.substr(dot + 1).str());
    }
  }
  llvm::StringMap<std::vector<llvm::StringRef>> childrenOf;  // `P.C` -> its indexed composite children
  for (const auto &e : shapeOf) {
    llvm::StringRef child = e.getKey();
    size_t dot = child.rfind('.');
    if (dot != llvm::StringRef::npos)
      childrenOf[child.substr(0, dot)].push_back(child);
  }
  llvm::StringMap<bool> stageMemo;  // P.C -> its children are the repeated blocks
  auto repeatedBlocks = [&](llvm::StringRef stage, llvm::StringRef container) {
    auto [it, fresh] = stageMemo.try_emplace(container, false);
    if (!fresh)
      return it->second;
    auto kids = childrenOf.find(container);
    if (kids == childrenOf.end())
      return false;
    size_t inRepeats = 0;
    for (llvm::StringRef k : kids->second) {
      const std::set<std::string> &shape = shapeOf[k];
      bool nested = llvm::any_of(shape, [](const std::string &p) { return p.find('.') != std::string::npos; });
      if (nested && llvm::any_of(kids->second, [&](llvm::StringRef o) { return o != k && shapeOf[o] == shape; }))
        inRepeats += nodesIn.lookup(k);
    }
    return it->second = 2 * inRepeats >= nodesIn.lookup(stage);
  };
  // The first indexed composite on the path, then straight down through
  // indexed composite children (a stage `features.1` of blocks
  // `features.1.0`, `features.1.1`: the blocks are the layers), or through
  // a container of repeated blocks (above).
  for (const auto &np : nodes) {
    if (np->backwardPhase)
      continue;
    llvm::StringRef path = np->modulePath, found;
    size_t start = 0;
    for (unsigned depth = 0; start <= path.size() && depth < kMaxLayerDepth; ++depth) {
      size_t dot = path.find('.', start);
      llvm::StringRef prefix = path.substr(0, dot), part = path.slice(start, dot);
      bool layerHere = isIndexComponent(part) && composite.count(prefix);
      if (layerHere) {
        found = prefix;
      } else if (!found.empty()) {
        // `found.part.N...`: step through the container to its block.
        size_t next = dot == llvm::StringRef::npos ? dot : path.find('.', dot + 1);
        llvm::StringRef block = path.substr(0, next);
        if (dot == llvm::StringRef::npos || !isIndexComponent(path.slice(dot + 1, next)) ||
            !composite.count(block) || !repeatedBlocks(found, prefix))
          break;
        found = block;
        if (next == llvm::StringRef::npos)
          break;
        start = next + 1;
        continue;
      }
      if (dot == llvm::StringRef::npos)
        break;
      start = dot + 1;
    }
    if (np->index < layer.size())
      layer[np->index] = found;
  }
  // Repeated: a run of nodes in one layer whose neighbouring run (in
  // execution order, the next or previous one in a layer) is another layer
  // entered through the same submodule. A stem or head that only shares the
  // numbering (mobilenet's features.0 and features.12 around the inverted
  // residuals of features.1-11) is not checkpointed.
  struct Run {
    llvm::StringRef layer, entry;
    size_t begin, end;
  };
  std::vector<Run> runs;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (layer[i].empty())
      continue;
    if (!runs.empty() && runs.back().layer == layer[i] && runs.back().end == i) {
      runs.back().end = i + 1;
      continue;
    }
    llvm::StringRef rest = llvm::StringRef(nodes[i]->modulePath).drop_front(layer[i].size()).drop_while(
        [](char c) { return c == '.'; });
    runs.push_back({layer[i], rest.take_until([](char c) { return c == '.'; }), i, i + 1});
  }
  auto alike = [&](size_t a, size_t b) { return runs[a].layer != runs[b].layer && runs[a].entry == runs[b].entry; };
  for (size_t r = 0; r < runs.size(); ++r)
    if (!(r > 0 && alike(r - 1, r)) && !(r + 1 < runs.size() && alike(r, r + 1)))
      for (size_t i = runs[r].begin; i < runs[r].end; ++i)
        layer[i] = {};
  return layer;
}

SacOp sacSaveListOp(const Node &n) {
  std::string aten = n.atenName();
  if (n.op && n.op->kind == OpKind::Collective && llvm::StringRef(aten).contains("reduce_scatter"))
    return SacOp::Saved;
  if (aten == "max" && n.inputs.size() == 1)  // aten.max.default: the whole tensor's
    return SacOp::Saved;
  auto geometry = contractionGeometry(n);
  if (!geometry)
    return SacOp::None;
  if (geometry->form == ContractionForm::Attention || llvm::StringRef(aten).contains("flex_attention"))
    return SacOp::Saved;
  if (geometry->form == ContractionForm::Gemm)
    return SacOp::MatMul;
  if (geometry->form == ContractionForm::MatMul && n.inputs.size() >= 2 && n.inputs[1] &&
      n.inputs[1]->type.shape.rank() == 2)
    return SacOp::MatMul;
  return SacOp::None;
}

const std::vector<llvm::StringRef> &checkpointLayersOf(AnalysisContext &ctx, const Graph &g) {
  return ctx.fact<std::vector<llvm::StringRef>>(fmt::format("checkpointLayers {}", static_cast<const void *>(&g)),
                                                [&] { return checkpointLayers(g); });
}

const RecomputePlan &recomputePlanOf(AnalysisContext &ctx, const Graph &g) {
  const Setup &s = ctx.setup();
  return ctx.fact<RecomputePlan>(fmt::format("recompute {} {}", s.recomputeLabel(), static_cast<const void *>(&g)),
                                 [&] { return recomputePlan(g, s); });
}

RecomputePlan recomputePlan(const Graph &g, const Setup &s) {
  const auto &nodes = g.nodes();
  RecomputePlan plan;
  plan.segment.assign(nodes.size(), -1);
  plan.policySaved.assign(nodes.size(), false);
  size_t forwardNodes = 0;
  for (const auto &np : nodes)
    forwardNodes += np->backwardPhase ? 0 : 1;
  if (s.recompute == Recompute::Sqrt && forwardNodes > 0) {
    // ~sqrt(n) nodes each (Chen et al.'s checkpointing).
    size_t len = static_cast<size_t>(std::max(1.0, std::ceil(std::sqrt(static_cast<double>(forwardNodes)))));
    size_t k = 0;
    for (size_t i = 0; i < nodes.size(); ++i)
      if (!nodes[i]->backwardPhase)
        plan.segment[i] = static_cast<int>(k++ / len);
    return plan;
  }
  if (s.recompute == Recompute::None || s.recompute == Recompute::Sqrt)
    return plan;
  std::vector<llvm::StringRef> layers = checkpointLayers(g);
  // selective-layer=N: torchtitan counts the blocks it wraps from 1 and
  // checkpoints those with count % N == 0.
  llvm::StringMap<unsigned> ordinal;
  for (llvm::StringRef l : layers)
    if (!l.empty())
      ordinal.try_emplace(l, static_cast<unsigned>(ordinal.size() + 1));
  auto checkpointed = [&](llvm::StringRef l) {
    if (l.empty())
      return false;
    return s.recompute != Recompute::SelectiveLayer || ordinal.lookup(l) % std::max(1u, s.recomputeEvery) == 0;
  };
  llvm::StringRef prev;
  int seg = -1;
  llvm::StringMap<unsigned> matmuls;  // per layer, in forward order
  for (size_t i = 0; i < nodes.size(); ++i) {
    llvm::StringRef layer = layers[i];
    bool in = checkpointed(layer);
    if (in && (seg < 0 || layer != prev || plan.segment[i - 1] < 0))
      ++seg;
    plan.segment[i] = in ? seg : -1;
    prev = layer;
    if (in && s.recompute == Recompute::SelectiveOp) {
      SacOp op = sacSaveListOp(*nodes[i]);
      plan.policySaved[i] = op == SacOp::Saved || (op == SacOp::MatMul && ++matmuls[layer] % 2 == 1);
    }
  }
  return plan;
}

SkippedMaskAdd skippedMaskAdd(const Node &n) {
  bool onnxAdd = isDefaultDomain(n.domain) && n.opType == "Add";
  bool atenAdd = n.domain == "aten" && n.atenName() == "add" && !n.attr("other") &&
                 (!n.attr("alpha") || n.attrInt("alpha") == 1);
  if ((!onnxAdd && !atenAdd) || n.inputs.size() != 2 || n.outputs.empty() || !n.outputs[0])
    return {};
  const Value *out = n.outputs[0];
  std::optional<memory::PlanBuilder::Ints> outDims = memory::PlanBuilder::staticDims(out);
  for (unsigned k = 0; k < 2; ++k) {
    const Value *mask = captureOrigin(n.inputs[k]), *kept = n.inputs[1 - k];
    if (!mask || !kept || kept->type.dtype != out->type.dtype || !outDims ||
        memory::PlanBuilder::staticDims(kept) != outDims)
      continue;
    if (isAllPassMask(mask))
      return {kept, mask};
  }
  return {};
}

}  // namespace graphlint

namespace graphlint::memory {

/// The MatMul output a bias Add (an exported nn.Linear on a 3-d input)
/// updates in place, or nullptr.
const Value *biasedMatMul(const Node &n) {
  if (n.opType != "Add" || n.inputs.size() != 2)
    return nullptr;
  for (unsigned k = 0; k < 2; ++k) {
    const Value *a = n.inputs[k], *b = n.inputs[1 - k];
    if (a && b && a->producer && a->producer->opType == "MatMul" && a->uses.size() == 1 && !a->isGraphOutput() &&
        b->kind == Value::Kind::Param && b->type.shape.rankKnown && b->type.shape.dims.size() == 1)
      return a;
  }
  return nullptr;
}

TorchView torchViewOf(const Node &n, unsigned oi) {
  auto from = [&](unsigned i) -> const Value * { return i < n.inputs.size() ? n.inputs[i] : nullptr; };
  TorchView v;
  if (reshapeCopies(n))
    return v;  // a reshape the input's strides cannot view: a new tensor
  if (oi < n.outputAliasesInput.size() && n.outputAliasesInput[oi] >= 0) {
    v.base = from(static_cast<unsigned>(n.outputAliasesInput[oi]));  // the FX exporter's alias fact
  } else if (oi == 0 && (n.opType == "Squeeze" || n.opType == "Unsqueeze" || n.opType == "Identity" ||
                         (n.opType == "Dropout" && (n.outputs.size() < 2 || !n.outputs[1]) && !isTrainingOnnxDropout(n)) ||
                         isIdentityDropout(n) || isNoopConversion(n) || isPromotionCast(n))) {
    v.base = from(0);
  } else if (oi == 0 && isViewOp(n)) {
    v.base = from(0);
    v.reshape = true;
  } else if (const Value *kept = skippedMaskAdd(n).kept; kept && oi == 0) {
    v.base = kept;  // eager never builds the mask nor runs the add
  } else if (const Value *mm = biasedMatMul(n); mm && oi == 0) {
    v.base = mm;  // linear(): addmm, or matmul then add_ of the bias
  } else if (n.opType == "Transpose" || n.opType == "Expand") {
    v.base = from(0);
    v.strided = true;
    v.permuted = true;
  } else if (n.opType == "Slice" || n.opType == "Split") {
    v.base = from(0);
    v.strided = true;
  } else if (n.opType == "Gather" && from(1) && from(1)->type.shape.rankKnown && from(1)->type.shape.dims.empty() &&
             from(0) && from(0)->kind != Value::Kind::Param) {
    v.base = from(0);  // x[:, i]: a select, a view
    v.strided = true;
  }
  return v;
}

bool isTracedDropoutNoise(const Node &n) {
  auto soleUser = [](const Value *v, llvm::StringRef op) -> const Node * {
    return v && v->uses.size() == 1 && v->uses[0].user && v->uses[0].user->atenName() == op ? v->uses[0].user
                                                                                           : nullptr;
  };
  if (n.atenName() != "empty_like" || n.inputs.empty() || !n.inputs[0] || n.outputs.empty())
    return false;
  const Value *x = n.inputs[0];
  const Node *bern = soleUser(n.outputs[0], "bernoulli_");
  const Node *div = bern && !bern->outputs.empty() ? soleUser(bern->outputs[0], "div_") : nullptr;
  if (!div || div->outputs.empty() || !div->outputs[0])
    return false;
  // The noise scales x: x * noise (the forward's; a recompute's is its own
  // copy of the pattern).
  for (const Use &u : div->outputs[0]->uses)
    if (u.user && u.user->atenName() == "mul" && u.user->inputs.size() == 2 &&
        (u.user->inputs[0] == x || u.user->inputs[1] == x))
      return true;
  return false;
}

TorchStorage torchStorageOf(const Node &n, unsigned oi, Kernels kernels) {
  // On the CPU, at::dropout is not the fused native_dropout that the trace
  // records (make_fx's decomposition) but `input * noise`, the noise a
  // bernoulli tensor of the input's dtype that MulBackward keeps: the "mask"
  // takes the input's size. CUDA's native_dropout keeps a bool mask.
  if (oi == 1 && n.atenName() == "native_dropout" && n.outputs.size() > 1 && n.outputs[1] &&
      kernels == Kernels::Cpu && !n.inputs.empty() && n.inputs[0])
    return {n.inputs[0], false};
  // torch 1.x traces that CPU path itself (its fake tensors are CPU
  // tensors): on CUDA the noise is native_dropout's bool mask.
  if (oi == 0 && kernels == Kernels::Cuda && isTracedDropoutNoise(n))
    return {nullptr, true};
  // On the CPU, mse_loss and smooth_l1_loss reduce into a 0-d tensor that
  // keeps the unreduced buffer as its storage (measured: torch 2.13,
  // F.mse_loss(a, b).untyped_storage().nbytes() == a.nbytes()), held as
  // long as the loss is: through the whole backward of a training step.
  if (oi == 0 && kernels == Kernels::Cpu)
    if (const Value *unreduced = cpuLossStorage(n))
      return {unreduced, false};
  return {};
}

const Value *cpuLossStorage(const Node &n) {
  const Value *y = n.outputs.empty() ? nullptr : n.outputs[0];
  if (!y || !y->type.shape.rankKnown || y->type.shape.rank() != 0 || n.inputs.empty() || !n.inputs[0])
    return nullptr;
  std::string aten = n.atenName();
  if (aten == "mse_loss" || aten == "smooth_l1_loss")
    return n.attrInt("reduction").value_or(1) != 0 ? n.inputs[0] : nullptr;
  // torch.onnx's mse_loss: ReduceMean(Mul(d, d)) or ReduceMean(Pow(d, 2)),
  // d = Sub(input, target) (the TorchScript exporter writes the Sub twice).
  if (!isDefaultDomain(n.domain) || (n.opType != "ReduceMean" && n.opType != "ReduceSum"))
    return nullptr;
  auto sub = [](const Value *v) -> const Node * {
    const Node *d = v ? v->producer : nullptr;
    return d && isDefaultDomain(d->domain) && d->opType == "Sub" && d->inputs.size() == 2 ? d : nullptr;
  };
  const Value *sq = n.inputs[0];
  const Node *m = sq->producer;
  if (!m || !isDefaultDomain(m->domain) || m->inputs.size() != 2 || !sub(m->inputs[0]))
    return nullptr;
  const Node *a = sub(m->inputs[0]), *b = m->opType == "Mul" ? sub(m->inputs[1]) : nullptr;
  bool square = m->opType == "Pow" || (b && (a == b || a->inputs == b->inputs));
  return square ? sq : nullptr;
}

bool torchRunsInPlace(const Node &n) {
  // torchvision's blocks build these with inplace=True (ReLU, ReLU6 as Clip,
  // Hardswish, Hardsigmoid, LeakyReLU).
  static const llvm::StringSet<> kInplace = {"Relu", "Clip", "HardSwish", "HardSigmoid", "LeakyRelu"};
  return kInplace.count(n.opType) != 0;
}

void PlanBuilder::findSkippedMasks() {
  // A fact of the graph alone: computed once per context (or SharedFacts).
  using Masks = llvm::DenseSet<const Value *>;
  const Masks &masks = ctx_.fact<Masks>(fmt::format("skippedMasks {}", static_cast<const void *>(&g_)), [&] {
    Masks found;
    skippedMasksOf(g_, found);
    return found;
  });
  skippedMasks_.insert(masks.begin(), masks.end());
}

void PlanBuilder::skippedMasksOf(const Graph &g, llvm::DenseSet<const Value *> &skippedMasks) {
  // Whether eager never builds `v`: each reader is an add that skips it, or
  // a view of it that is itself never built. Memoized; a bounded depth.
  llvm::DenseMap<const Value *, bool> memo;
  std::function<bool(const Value *, unsigned)> unbuilt = [&](const Value *v, unsigned depth) {
    if (!v || v->uses.empty() || v->isGraphOutput() || depth > 16)
      return false;
    if (auto it = memo.find(v); it != memo.end())
      return it->second;
    bool all = true;
    for (const Use &u : v->uses) {
      const Node *r = u.user;
      bool skips = r && skippedMaskAdd(*r).mask == captureOrigin(v);
      bool viewOfIt = r && r->outputs.size() == 1 && torchViewOf(*r, 0).base == v &&
                      unbuilt(r->outputs[0], depth + 1);
      if (!skips && !viewOfIt) {
        all = false;
        break;
      }
    }
    return memo[v] = all;
  };
  for (const auto &np : g.nodes()) {
    const Value *mask = skippedMaskAdd(*np).mask;
    // The mask and the views it was read through, up to what eager builds.
    for (unsigned depth = 0; mask && depth < 16 && unbuilt(mask, 0); ++depth) {
      skippedMasks.insert(mask);
      const Node *p = mask->producer;
      mask = p && !p->inputs.empty() && torchViewOf(*p, 0).base == p->inputs[0] ? p->inputs[0] : nullptr;
    }
  }
}

namespace {

// scaled_dot_product_attention and the kernels it dispatches to that take
// the mask as their fourth tensor (an importer keeps tensor arguments only).
bool attentionWithMask(const Node &n) {
  static const llvm::StringSet<> kOps = {"scaled_dot_product_attention",
                                         "_scaled_dot_product_flash_attention_for_cpu",
                                         "_scaled_dot_product_efficient_attention",
                                         "_scaled_dot_product_cudnn_attention"};
  return n.inputs.size() >= 4 && n.inputs[3] && kOps.count(n.atenName()) != 0 && !n.attrInt("is_causal").value_or(0);
}

// A joint graph's attention backward, which reads the forward's operands.
bool attentionBackward(const Node &n) {
  llvm::StringRef a = n.atenName();
  return n.backwardPhase && a.contains("attention") && a.endswith("_backward");
}

// The producer of `v` if it is one of `ops` and nothing reads `v` but the
// next node of the chain (and, in a joint graph, the backward, which reads
// what the forward saved).
const Node *soleProducer(const Value *v, std::initializer_list<llvm::StringRef> ops) {
  const Node *p = v && v->kind == Value::Kind::NodeOutput ? v->producer : nullptr;
  if (!p || p->inputs.empty() || !p->inputs[0] || v->isGraphOutput() ||
      llvm::count_if(v->uses, [](const Use &u) { return !u.user || !u.user->backwardPhase; }) != 1)
    return nullptr;
  std::string a = isDefaultDomain(p->domain) ? p->opType : p->atenName();
  return llvm::is_contained(ops, llvm::StringRef(a)) ? p : nullptr;
}

// repeat_kv(x, g) as a tracer records it: unsqueeze(x, 2), expand(b, kv, g,
// s, d), then a contiguous copy viewed as [b, kv * g, s, d] (FX: clone and
// _unsafe_view; torch.export: a reshape that copies). The copy node and x,
// or {nullptr, nullptr}.
std::pair<const Node *, const Value *> headRepeat(const Value *kv) {
  const Node *copy = nullptr, *expand = nullptr;
  if (const Node *view = soleProducer(kv, {"_unsafe_view", "view", "reshape", "Reshape"})) {
    const Value *in = view->inputs[0];
    if (const Node *c = soleProducer(in, {"clone", "contiguous"})) {
      copy = c;
      expand = soleProducer(c->inputs[0], {"expand"});
    } else if (view->atenName() == "reshape" || view->opType == "Reshape") {
      copy = view;  // a reshape of the broadcast copies
      expand = soleProducer(in, {"expand", "Expand"});
    }
  }
  const Node *unsq = expand ? soleProducer(expand->inputs[0], {"unsqueeze", "Unsqueeze"}) : nullptr;
  if (!unsq)
    return {nullptr, nullptr};
  const Value *x = unsq->inputs[0];
  std::optional<PlanBuilder::Ints> from = PlanBuilder::staticDims(x), to = PlanBuilder::staticDims(kv),
                                   mid = PlanBuilder::staticDims(unsq->outputs[0]);
  // [b, kv, s, d] -> [b, kv, 1, s, d] -> [b, kv * g, s, d]: the heads grow by
  // a whole factor; every other dim is kept.
  if (!from || !to || !mid || from->size() != 4 || to->size() != 4 || (*from)[1] <= 0 || (*to)[1] % (*from)[1] != 0 ||
      (*from)[0] != (*to)[0] || (*from)[2] != (*to)[2] || (*from)[3] != (*to)[3] ||
      *mid != PlanBuilder::Ints{(*from)[0], (*from)[1], 1, (*from)[2], (*from)[3]})
    return {nullptr, nullptr};
  return {copy, x};
}

}  // namespace

void PlanBuilder::findCausalAttention() {
  llvm::DenseSet<const Node *> calls;
  llvm::DenseMap<const Value *, bool> causal;
  for (const auto &np : g_.nodes()) {
    const Node &n = *np;
    if (!attentionWithMask(n))
      continue;
    const Value *mask = captureOrigin(n.inputs[3]);
    auto [it, fresh] = causal.try_emplace(mask, false);
    if (fresh)
      it->second = isCausalMask(mask);
    if (it->second)
      calls.insert(&n);
  }
  // The dynamo exporter's decomposition, a fused group (findComposites):
  // its mask is the read the plan proves causal.
  llvm::DenseMap<const Node *, const Value *> groupMask;  // kernel node -> the group's mask
  for (const auto &entry : fusedKernel_) {
    const Node *last = entry.first;
    const Value *found = nullptr;
    for (const Node *k : entry.second)
      for (const Value *in : k->inputs) {
        const Value *r = captureOrigin(in);
        if (!r || found || (r->producer && llvm::is_contained(entry.second, r->producer)))
          continue;  // the kernel's own values are no operand
        auto [it, fresh] = causal.try_emplace(r, false);
        if (fresh)
          it->second = isCausalMask(r);
        if (it->second)
          found = r;
      }
    if (!found)
      continue;
    calls.insert(last);
    for (const Node *k : entry.second)
      groupMask[k] = found;
  }
  if (calls.empty())
    return;
  // What only those masks read, back to the positions: every reader of the
  // value is such a call's mask operand or a node whose outputs are all
  // unbuilt. Users come after producers, so one reverse pass decides.
  const auto &nodes = g_.nodes();
  auto consider = [&](const Value *o) {
    if (!o || o->uses.empty() || o->isGraphOutput())
      return;
    bool unbuilt = llvm::all_of(o->uses, [&](const Use &u) {
      if (!u.user)
        return false;
      if (auto g = groupMask.find(u.user); g != groupMask.end())
        return g->second == captureOrigin(o);
      if (calls.count(u.user))
        return u.operand == 3;
      if (attentionBackward(*u.user))
        return true;  // the call's backward: eager passes it no mask either
      return llvm::all_of(u.user->outputs, [&](const Value *r) {
        return !r || (r->uses.empty() && !r->isGraphOutput()) || skippedMasks_.count(r);
      });
    });
    if (unbuilt)
      skippedMasks_.insert(o);
  };
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it)
    for (const Value *o : (*it)->outputs)
      consider(o);
  // The dynamo exporter's fold of the mask: a computed initializer.
  for (const auto &p : g_.params())
    if (p->computed && !p->trained.value_or(false))
      consider(p->value);
  // With no mask transformers passes enable_gqa=True: the kernel reads the
  // key and value heads as they are (use_gqa_in_sdpa: equal head dims, at
  // most 256).
  for (const Node *n : calls) {
    auto f = fusedAttention_.find(n);
    llvm::SmallVector<const Value *, 4> operands;
    if (f != fusedAttention_.end())
      operands.assign(f->second.begin(), f->second.end());  // q, k, v in some order: a repeat is k or v
    else
      operands = {n->inputs[1], n->inputs[2]};
    for (const Value *kv : operands) {
      auto [copy, heads] = headRepeat(kv);
      std::optional<Ints> d = staticDims(kv);
      if (copy && d && d->back() <= 256)
        repeatedHeads_[copy] = heads;
    }
  }
}

void PlanBuilder::findComposites() {
  // torch.onnx's dynamo exporter writes scaled_dot_product_attention as its
  // math decomposition (Mul of q and of k by sqrt(scale), MatMul, the mask's
  // Add, Softmax, IsNaN and Where, MatMul), each node carrying the call's FX
  // node. In inference eager runs one fused kernel (flash attention, on the
  // CPU too), whose scores and probabilities never exist: the call is that
  // kernel, its output and a logsumexp temporary. A training step keeps the
  // decomposition (what the fused kernel's backward keeps is not modelled
  // yet: docs/memory.md, Limitations).
  llvm::StringMap<std::vector<const Node *>> calls;
  std::vector<std::string> order;
  for (const auto &np : g_.nodes()) {
    const std::string *call = decomposedAttentionCall(*np);
    if (!call)
      continue;
    auto [it, fresh] = calls.try_emplace(*call);
    if (fresh)
      order.push_back(*call);
    it->second.push_back(np.get());
  }
  for (const std::string &key : order) {
    const std::vector<const Node *> &group = calls[key];
    // Attention dropout in a training step (the call's dropout_p, which the
    // exporter's decomposition drops): the CPU's flash kernel takes none, so
    // eager runs the math path (MathAttention.cpp), not the decomposition
    // as written. CUDA's flash kernel draws the dropout itself.
    bool math = s_.train && s_.kernels == Kernels::Cpu && attentionDropsOut(*group.front());
    llvm::DenseSet<const Node *> in(group.begin(), group.end());
    // The call's result: the last node whose output leaves the call. Another
    // node whose output leaves (the exporter shares one call's float mask
    // with the next call's) runs as written, outside the kernel.
    auto leaves = [&](const Node *n) {
      return llvm::any_of(n->outputs, [&](const Value *o) {
        return o && (o->isGraphOutput() || llvm::any_of(o->uses, [&](const Use &u) { return !in.count(u.user); }));
      });
    };
    const Node *last = nullptr;
    for (const Node *n : group)
      if (leaves(n))
        last = n;
    if (!last || last->outputs.size() != 1)
      continue;
    llvm::DenseSet<const Node *> kernel;
    for (const Node *n : group)
      if (n == last || !leaves(n))
        kernel.insert(n);
    if (kernel.size() < 3)
      continue;
    llvm::SmallVector<const Value *, 4> reads;
    for (const Node *n : group) {
      if (!kernel.count(n))
        continue;
      for (const Value *x : n->inputs) {
        const Value *v = captureOrigin(x);
        if (v && v->type.isTensor() && (!v->producer || !kernel.count(v->producer)) &&
            v->kind != Value::Kind::Param && !llvm::is_contained(reads, v))
          reads.push_back(v);
      }
    }
    // The first MatMul's operands back through the scaling (and, for the
    // key, the transpose the decomposition writes as reshapes): the query
    // keeps its dims on the way, the key does not.
    auto operand = [&](const Value *x, bool sameDims) -> const Value * {
      x = captureOrigin(x);
      for (unsigned hops = 0; x && x->producer && kernel.count(x->producer) && hops < 8; ++hops) {
        const Value *next = nullptr;
        for (const Value *from : x->producer->inputs)
          if (from && !isFoldedConstant(from) && (!sameDims || staticDims(from) == staticDims(x)))
            next = captureOrigin(from);
        x = next;
      }
      return x && !kernel.count(x->producer) ? x : nullptr;
    };
    const Node *scores = nullptr;
    for (const Node *n : group)
      if (n->opType == "MatMul" && kernel.count(n) && n->inputs.size() == 2) {
        scores = n;
        break;
      }
    const Value *q = scores ? operand(scores->inputs[0], true) : nullptr;
    if (math) {
      const Value *k = scores ? operand(scores->inputs[1], false) : nullptr;
      const Value *v = last->opType == "MatMul" && last->inputs.size() == 2 ? captureOrigin(last->inputs[1]) : nullptr;
      if (!q || !k || !v || !addMathAttention(*last, {q, k, v}, reads))
        continue;  // the decomposition as written
    } else {
      fusedAttention_[last] = reads;
      fusedKernel_[last].assign(kernel.begin(), kernel.end());
      if (q)
        fusedQuery_[last] = q;
    }
    for (const Node *n : group)
      if (n != last && kernel.count(n))
        compositeInner_.insert(n);
  }

  // SiLU, GELU and GroupNorm as the exporters write them
  // (DecomposedKernels.h): the last piece stands for the kernel.
  for (const DecomposedKernel &k : decomposed_.kernels()) {
    for (const Node *n : k.inner)
      compositeInner_.insert(n);
    compositeInput_[k.last] = k.input;
    if (k.kind == DecomposedKernel::Kind::Silu)
      inplaceActivation_.insert(k.last);
    if (k.weights.empty() && !k.statisticsRows)
      continue;
    CompositeExtras &e = compositeExtras_[k.last];
    e.weights.assign(k.weights.begin(), k.weights.end());
    // mean and rstd: an fp32 pair per (sample, group), the [N, G, -1] rows.
    std::optional<uint64_t> elements = k.statisticsRows ? elementsOf(k.statisticsRows) : std::nullopt;
    std::optional<int64_t> perRow = k.statisticsRows ? k.statisticsRows->type.staticDim(2) : std::nullopt;
    if (elements && perRow && *perRow > 0)
      e.savedBytes = *elements / static_cast<uint64_t>(*perRow) * 8;
  }
  auto soleUser = [](const Value *v) -> const Node * {
    return v && v->uses.size() == 1 && !v->isGraphOutput() ? v->uses[0].user : nullptr;
  };
  auto other = [](const Node *n, const Value *v) -> const Value * {
    return n->inputs.size() == 2 ? (n->inputs[0] == v ? n->inputs[1] : n->inputs[0]) : nullptr;
  };
  // silu_backward as torch 1.13's fake capture traces it, its
  // CompositeImplicit formula grad * s * (1 + x * (1 - s)), s = sigmoid(x):
  // s = sigmoid(x); o = fill_(empty_like(s), 1); t = sub_(o, s);
  // u = mul(x, t); v = add(u, 1); w = mul(s, v); g = mul(grad, w). Eager's
  // fused kernel allocates only g.
  auto userOf = [](const Value *v, llvm::StringRef op) -> const Node * {
    for (const Use &u : v->uses)
      if (u.user && u.user->atenName() == op)
        return u.user;
    return nullptr;
  };
  auto is = [](const Node *n, llvm::StringRef op) { return n && n->backwardPhase && n->atenName() == op; };
  for (const auto &np : g_.nodes()) {
    const Node &sig = *np;
    if (!is(&sig, "sigmoid") || sig.inputs.size() != 1 || !sig.inputs[0] || sig.outputs.empty() || !sig.outputs[0])
      continue;
    const Value *x = sig.inputs[0], *sv = sig.outputs[0];
    const Node *empty = userOf(sv, "empty_like");
    const Node *fill = is(empty, "empty_like") ? soleUser(empty->outputs[0]) : nullptr;
    const Node *sub = is(fill, "fill_") ? soleUser(fill->outputs[0]) : nullptr;
    if (!is(sub, "sub_") || sub->inputs.size() != 2 || sub->inputs[1] != sv)
      continue;
    const Node *mulX = soleUser(sub->outputs[0]);
    if (!is(mulX, "mul") || other(mulX, sub->outputs[0]) != x)
      continue;
    const Node *add = soleUser(mulX->outputs[0]);
    const Node *mulS = is(add, "add") ? soleUser(add->outputs[0]) : nullptr;
    if (!is(mulS, "mul") || other(mulS, add->outputs[0]) != sv)
      continue;
    const Node *last = soleUser(mulS->outputs[0]);
    if (!is(last, "mul"))
      continue;
    for (const Node *inner : {&sig, empty, fill, sub, mulX, add, mulS})
      compositeInner_.insert(inner);
    compositeInput_[last] = x;
  }
}

}  // namespace graphlint::memory
