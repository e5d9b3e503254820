// Tensor parallelism on the captured graph (MeshSharding.h): the plan (the
// user's --tp-plan globs, then the default plan of the model's family), the
// layout of every value on one rank, and the divisors the memory plan and
// the step timeline read. Megatron-LM's layer (Shoeybi et al. 2019), with
// sequence parallelism as Korthikanti et al. 2022 section 4.2.2 has it:
// between a colwise and a rowwise matmul every activation is split over the
// heads or the hidden features (/t); outside those regions (norms, dropout,
// residual) an activation is replicated, or split along the sequence (/t)
// with sequence parallelism. Per layer that is 10sbh + 24sbh/t + 5as^2b/t
// bytes without and 34sbh/t + 5as^2b/t with sequence parallelism.
#include "graphlint/analyses/MeshSharding.h"
#include "graphlint/analyses/CapturePrecision.h"

#include "graphlint/ir/OpRegistry.h"

#include <fmt/format.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/GlobPattern.h>

#include <algorithm>
#include <map>

namespace graphlint {

const std::vector<TpFamilyPlan> &defaultTpPlans() {
  using S = TpStyle;
  // Rows as torchtitan's parallelize_llama and transformers' base_model_tp_plan
  // write them; a family is recognised by the module names it matches.
  static const std::vector<TpFamilyPlan> plans = {
      {"llama",  // Llama, Mistral, Qwen2, Mixtral (transformers)
       {{"*.q_proj", S::Colwise}, {"*.k_proj", S::Colwise}, {"*.v_proj", S::Colwise}, {"*.o_proj", S::Rowwise},
        {"*.gate_proj", S::Colwise}, {"*.up_proj", S::Colwise}, {"*.down_proj", S::Rowwise},
        {"*.experts.*.w1", S::Colwise}, {"*.experts.*.w3", S::Colwise}, {"*.experts.*.w2", S::Rowwise},
        {"*embed_tokens", S::Rowwise}, {"lm_head", S::Colwise}, {"*norm", S::Sequence}}},
      {"torchtitan",  // torchtitan's Llama 3 / 4 and DeepSeek modules
       {{"*.attention.wq", S::Colwise}, {"*.attention.wk", S::Colwise}, {"*.attention.wv", S::Colwise},
        {"*.attention.wo", S::Rowwise}, {"*.feed_forward.w1", S::Colwise}, {"*.feed_forward.w3", S::Colwise},
        {"*.feed_forward.w2", S::Rowwise}, {"tok_embeddings", S::Rowwise}, {"output", S::Colwise},
        {"*norm", S::Sequence}}},
      {"gpt2",  // transformers' GPT-2 (Conv1D modules)
       {{"*.attn.c_attn", S::Colwise}, {"*.attn.c_proj", S::Rowwise}, {"*.mlp.c_fc", S::Colwise},
        {"*.mlp.c_proj", S::Rowwise}, {"*wte", S::Rowwise}, {"lm_head", S::Colwise}, {"*.ln_*", S::Sequence},
        {"*ln_f", S::Sequence}}},
      {"neox",  // GPT-NeoX, Pythia
       {{"*.attention.query_key_value", S::Colwise}, {"*.attention.dense", S::Rowwise},
        {"*.mlp.dense_h_to_4h", S::Colwise}, {"*.mlp.dense_4h_to_h", S::Rowwise}, {"*embed_in", S::Rowwise},
        {"embed_out", S::Colwise}, {"*layernorm", S::Sequence}, {"*layer_norm", S::Sequence}}},
      {"t5",
       {{"*.SelfAttention.q", S::Colwise}, {"*.SelfAttention.k", S::Colwise}, {"*.SelfAttention.v", S::Colwise},
        {"*.SelfAttention.o", S::Rowwise}, {"*.EncDecAttention.q", S::Colwise},
        {"*.EncDecAttention.k", S::Colwise}, {"*.EncDecAttention.v", S::Colwise},
        {"*.EncDecAttention.o", S::Rowwise}, {"*.DenseReluDense.wi*", S::Colwise},
        {"*.DenseReluDense.wo", S::Rowwise}, {"*layer_norm", S::Sequence}}},
      {"bert",  // BERT, RoBERTa, transformers' ViT (the same module names)
       {{"*.attention.self.query", S::Colwise}, {"*.attention.self.key", S::Colwise},
        {"*.attention.self.value", S::Colwise}, {"*.attention.attention.query", S::Colwise},
        {"*.attention.attention.key", S::Colwise}, {"*.attention.attention.value", S::Colwise},
        {"*.attention.output.dense", S::Rowwise}, {"*.intermediate.dense", S::Colwise},
        {"*.output.dense", S::Rowwise}, {"*LayerNorm", S::Sequence}, {"*layernorm*", S::Sequence}}},
      {"vit",  // torchvision's ViT (nn.MultiheadAttention's packed in_proj)
       {{"*.self_attention", S::Colwise}, {"*.self_attention.out_proj", S::Rowwise}, {"*.mlp.0", S::Colwise},
        {"*.mlp.3", S::Rowwise}, {"*.ln_1", S::Sequence}, {"*.ln_2", S::Sequence}}},
      {"gpt",  // graphlint's GPT fixtures (models/fx/gpt_*.py)
       {{"*.qkv", S::Colwise}, {"*.proj", S::Rowwise}, {"*.fc", S::Colwise}, {"*.out", S::Rowwise},
        {"*.ln1", S::Sequence}, {"*.ln2", S::Sequence}}},
  };
  return plans;
}

namespace {

// The module a parameter belongs to: its name up to the last '.'.
std::string moduleOf(const std::string &param) {
  size_t dot = param.rfind('.');
  return dot == std::string::npos ? std::string() : param.substr(0, dot);
}

struct PlanRow {
  llvm::GlobPattern glob;
  TpStyle style;
  std::string text;
};

std::vector<PlanRow> compileRows(const std::vector<std::pair<std::string, TpStyle>> &rows) {
  std::vector<PlanRow> out;
  for (const auto &[glob, style] : rows) {
    llvm::Expected<llvm::GlobPattern> p = llvm::GlobPattern::create(glob);
    if (!p) {
      llvm::consumeError(p.takeError());  // a glob GlobPattern refuses matches nothing
      continue;
    }
    out.push_back({std::move(*p), style, glob});
  }
  return out;
}

// The first row matching the parameter's name or its module's path.
const PlanRow *matchRows(const std::vector<PlanRow> &rows, const std::string &param) {
  std::string module = moduleOf(param);
  for (const PlanRow &r : rows)
    if (r.glob.match(param) || (!module.empty() && r.glob.match(module)))
      return &r;
  return nullptr;
}

// `path` is `module` or a submodule of it ("layers.3.attn_norm" of
// "layers.3"), without building `module + "."` for each of the graph's nodes.
bool inModule(llvm::StringRef path, llvm::StringRef module) {
  return path.startswith(module) && (path.size() == module.size() || path[module.size()] == '.');
}

bool isWeight(const Value *p) { return p->type.shape.rankKnown && p->type.shape.dims.size() >= 2; }

}  // namespace

double MeshSharding::elements(const Value *v) {
  if (!v || !v->type.isTensor() || !v->type.shape.rankKnown)
    return 0;
  double n = 1;
  for (const Dim &d : v->type.shape.dims) {
    if (d.isStatic())
      n *= static_cast<double>(std::max<int64_t>(d.value, 0));
    else if (d.isSymbolic())
      n *= static_cast<double>(d.evaluate([](llvm::StringRef) { return std::optional<int64_t>(1); }).value_or(1));
    else
      return 0;
  }
  return n;
}

double MeshSharding::activationElementBytes(const Value *v) const {
  unsigned bits = v ? dtypeBits(v->type.dtype) : 0;
  if (narrowsFp32_ && v && v->type.dtype == DType::Float)
    bits = 16;
  return bits / 8.0;
}

MeshSharding::MeshSharding(const Model &m, AnalysisContext &ctx) { build(m, ctx.setup()); }
MeshSharding::MeshSharding(const Model &m, const Setup &s) { build(m, s); }

std::string MeshSharding::sharedKey(const Setup &s) {
  std::string plan;
  for (const auto &[glob, style] : s.tpPlan)
    plan += fmt::format(" {}={}", glob, tpStyleName(style));
  return fmt::format("tp {} cp {} ep {} sp {} 16bit {} capacity {}{}", s.mesh.tp, s.mesh.cp, s.mesh.ep,
                     s.sequenceParallelOn(), precisionPolicy(s.precision).sixteenBitActivations, s.capacityFactor,
                     plan);
}

void MeshSharding::build(const Model &m, const Setup &s) {
  tp_ = std::max(1u, s.mesh.tp);
  cp_ = std::max(1u, s.mesh.cp);
  ep_ = std::max(1u, s.mesh.ep);
  sequenceParallel_ = s.sequenceParallelOn();
  narrowsFp32_ = CapturePrecision(m, s).policyNarrowsFp32();
  if (!m.graph)
    return;
  const Graph &g = *m.graph;
  planTensorParallel(g, s);
  propagate(g);
  findExperts(g, s);
  findAttention(g);
  main_ = &g;
  divisors_.reserve(g.nodes().size());
  for (const auto &n : g.nodes())
    divisors_.push_back(divisorOf(*n));
}

void MeshSharding::planTensorParallel(const Graph &g, const Setup &s) {
  std::vector<std::pair<std::string, TpStyle>> user(s.tpPlan.begin(), s.tpPlan.end());
  // The family whose plan names the most weights.
  const TpFamilyPlan *family = nullptr;
  size_t best = 0;
  for (const TpFamilyPlan &f : defaultTpPlans()) {
    std::vector<std::pair<std::string, TpStyle>> text;
    for (const auto &[glob, style] : f.rows)
      text.emplace_back(glob, style);
    std::vector<PlanRow> rows = compileRows(text);
    size_t n = 0;
    for (const auto &p : g.params())
      if (p->value && isWeight(p->value) && !p->buffer) {
        auto hit = matchRows(rows, p->value->name);
        n += hit && hit->style != TpStyle::Sequence;
      }
    if (n > best) {
      best = n;
      family = &f;
    }
  }
  std::vector<std::pair<std::string, TpStyle>> text = user;
  if (family)
    for (const auto &[glob, style] : family->rows)
      text.emplace_back(glob, style);
  std::vector<PlanRow> rows = compileRows(text);
  planName_ = !user.empty() && family ? fmt::format("user + {} (default)", family->family)
              : !user.empty()         ? std::string("user")
              : family                ? fmt::format("{} (default)", family->family)
                                      : std::string("none");
  std::map<std::string, TpModule> modules;
  for (const auto &p : g.params()) {
    if (!p->value || p->buffer)
      continue;
    auto hit = matchRows(rows, p->value->name);
    if (!hit)
      continue;
    paramStyle_[p->value] = hit->style;
    modules.emplace(moduleOf(p->value->name), TpModule{moduleOf(p->value->name), hit->style, hit->text});
  }
  for (auto &[path, mod] : modules)
    tpModules_.push_back(mod);
  if (tp_ > 1 && planName_ == "none")
    assumptions_.push_back("no module path matched a tensor-parallel plan: tp shards nothing (give --tp-plan)");
}

unsigned MeshSharding::elementDivisor(const Value *v) const {
  if (!v)
    return 1;
  unsigned d = 1;
  if (v->kind == Value::Kind::Param) {
    auto s = paramStyle_.find(v);
    // A colwise module splits its weight and bias on the output features, a
    // rowwise one its weight on the input features (the bias is replicated).
    if (tp_ > 1 && s != paramStyle_.end() &&
        (s->second == TpStyle::Colwise || (s->second == TpStyle::Rowwise && isWeight(v))))
      d *= tp_;
    if (expertParam_.count(v))
      d *= ep_;
    return d;
  }
  auto origin = paramOrigin_.find(v);
  if (origin != paramOrigin_.end())
    return elementDivisor(origin->second);
  auto l = layout_.find(v);
  if (tp_ > 1 && l != layout_.end() && l->second != TpLayout::Replicated)
    d *= tp_;
  if (cp_ > 1 && batchDerived_.lookup(v))
    d *= cp_;
  return d;
}

TpLayout MeshSharding::layout(const Value *v) const {
  auto l = layout_.find(v);
  return l == layout_.end() ? TpLayout::Replicated : l->second;
}

unsigned MeshSharding::computeDivisor(const Node &n) const {
  if (n.graph == main_ && n.index < divisors_.size())
    return divisors_[n.index];
  return divisorOf(n);
}

unsigned MeshSharding::divisorOf(const Node &n) const {
  // Experts are not in it: each rank runs its experts on the tokens every
  // rank of the ep group routes to them, as many as all experts get on one.
  unsigned tp = 1, cp = 1;
  auto visit = [&](const Value *v) {
    if (!v)
      return;
    const Value *p = v->kind == Value::Kind::Param ? v : paramOrigin_.lookup(v);
    if (p) {
      auto s = paramStyle_.find(p);
      if (s != paramStyle_.end() && (s->second == TpStyle::Colwise || s->second == TpStyle::Rowwise) && isWeight(p))
        tp = tp_;
      return;
    }
    if (layout(v) != TpLayout::Replicated)
      tp = tp_;
    if (batchDerived_.lookup(v))
      cp = cp_;
  };
  for (const Value *v : n.inputs)
    visit(v);
  for (const Value *v : n.outputs)
    visit(v);
  return tp * cp;
}

std::optional<MeshSharding::ShardedMatmul> MeshSharding::shardedMatmul(const Node &n) const {
  for (const Value *v : n.inputs) {
    const Value *p = !v ? nullptr : v->kind == Value::Kind::Param ? v : paramOrigin_.lookup(v);
    auto s = p ? paramStyle_.find(p) : paramStyle_.end();
    if (s != paramStyle_.end() && isWeight(p) && (s->second == TpStyle::Colwise || s->second == TpStyle::Rowwise))
      return ShardedMatmul{moduleOf(moduleOf(p->name)), s->second};
  }
  return std::nullopt;
}

void MeshSharding::propagate(const Graph &g) {
  for (const Value *in : g.inputs)
    if (in)
      batchDerived_[in] = true;
  const bool sp = sequenceParallel_;
  for (const auto &np : g.nodes()) {
    const Node &n = *np;
    // A node reading parameters only (a weight's transpose, a cast of it):
    // its outputs are views of the weight, sharded as it is.
    const Value *param = nullptr;
    bool data = false, sharded = false, sequence = false, carriesBatch = false;
    std::optional<TpStyle> weightStyle;
    for (const Value *in : n.inputs) {
      if (!in)
        continue;
      const Value *p = in->kind == Value::Kind::Param ? in : paramOrigin_.lookup(in);
      if (p) {
        param = param ? param : p;
        auto s = paramStyle_.find(p);
        if (s != paramStyle_.end() && isWeight(p) && (s->second == TpStyle::Colwise || s->second == TpStyle::Rowwise))
          weightStyle = s->second;
        continue;
      }
      data = true;
      TpLayout l = layout(in);
      sharded |= l == TpLayout::Sharded;
      sequence |= l == TpLayout::SequenceSharded;
      carriesBatch |= batchDerived_.lookup(in);
    }
    if (!data && param && !n.backwardPhase) {
      for (const Value *o : n.outputs)
        if (o)
          paramOrigin_[o] = param;
      continue;
    }
    TpLayout out = sharded ? TpLayout::Sharded : sequence ? TpLayout::SequenceSharded : TpLayout::Replicated;
    if (!n.backwardPhase && carriesBatch && weightStyle) {
      // Colwise: the output features are split. Rowwise: partial sums reduced
      // onto every rank (all-reduce), or onto the sequence shards (reduce-scatter).
      out = *weightStyle == TpStyle::Colwise ? TpLayout::Sharded
            : sp                             ? TpLayout::SequenceSharded
                                             : TpLayout::Replicated;
      if (*weightStyle == TpStyle::Rowwise && !n.outputs.empty() && n.outputs[0])
        tpRegions_.push_back({moduleOf(param->name), moduleOf(moduleOf(param->name)), n.outputs[0], &n});
    } else if (!n.backwardPhase && !sharded && carriesBatch) {
      // A SequenceParallel module (a norm) runs on the sequence shard.
      for (const TpModule &mod : tpModules_)
        if (mod.style == TpStyle::Sequence && !n.modulePath.empty() && inModule(n.modulePath, mod.path)) {
          out = sp ? TpLayout::SequenceSharded : TpLayout::Replicated;
          break;
        }
    }
    for (unsigned oi = 0; oi < n.outputs.size(); ++oi) {
      const Value *o = n.outputs[oi];
      if (!o)
        continue;
      // A joint graph's gradient is laid out as the value it differentiates.
      const Value *of = oi < n.outputGradientOf.size() ? n.outputGradientOf[oi] : nullptr;
      if (of) {
        if (of->kind == Value::Kind::Param || paramOrigin_.count(of)) {
          paramOrigin_[o] = of->kind == Value::Kind::Param ? of : paramOrigin_.lookup(of);
          continue;
        }
        layout_[o] = layout(of);
        batchDerived_[o] = batchDerived_.lookup(of);
        continue;
      }
      layout_[o] = out;
      batchDerived_[o] = carriesBatch;
    }
  }
  if (tp_ > 1 && tpRegions_.empty() && planName_ != "none")
    assumptions_.push_back("the tensor-parallel plan matched modules but no rowwise matmul: no tp collectives");
}

}  // namespace graphlint
