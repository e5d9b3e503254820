// How the model-parallel dimensions of the device mesh (Setup::mesh: tp, cp,
// ep) split the one-device graph the exporter captured, analytically: nothing
// is run and the graph is not rewritten. Tensor parallelism follows DTensor's
// parallelize_module plans (ColwiseParallel, RowwiseParallel,
// SequenceParallel): a default plan per model family recognised from module
// paths, or the user's --tp-plan globs; each value gets its layout on one
// rank (replicated, sharded on heads/features, or sequence-sharded under
// Megatron's sequence parallelism) and from it the divisor of its elements.
// Context parallelism (ring attention) divides every activation of the batch
// by cp; expert parallelism divides the experts' parameters by ep. The memory
// plan sizes values through elementDivisor(), the step timeline divides
// kernels' time by computeDivisor(), and MeshTraffic (the tp/cp/ep/pp
// collectives) reads the blocks, attention layers and MoE layers found here.
// docs/cost-model.md "Tensor, pipeline, context and expert parallelism".
#pragma once

#include "graphlint/analyses/Analysis.h"

#include <llvm/ADT/DenseMap.h>

#include <optional>
#include <string>
#include <vector>

namespace graphlint {

/// A value's tensor-parallel layout on one rank.
enum class TpLayout : uint8_t { Replicated, Sharded, SequenceSharded };

/// A module of the tensor-parallel plan: a trainable weight's module and
/// the style the plan gave it.
struct TpModule {
  std::string path;   // "layers.0.attention.wq"
  TpStyle style = TpStyle::Replicate;
  std::string rule;   // the glob that matched ("*.wq")
};

/// The end of one tensor-parallel region: a rowwise module's output, where
/// the partial sums are all-reduced (or reduce-scattered onto the sequence
/// shards with sequence parallelism); one per attention and one per MLP.
struct TpRegion {
  std::string module;             // the rowwise linear ("layers.0.attention.wo")
  std::string block;              // its parent, the region ("layers.0.attention")
  const Value *output = nullptr;  // the rowwise matmul's output (one device's size)
  const Node *node = nullptr;
};

/// One attention layer: the scores' matmul, with the K and V it reads (the
/// blocks ring attention rotates under cp).
struct AttentionLayer {
  const Node *node = nullptr;  // SDPA, or the Q·K^T matmul of a written-out attention
  const Value *key = nullptr, *value = nullptr;
  std::vector<const Node *> nodes;  // the nodes whose kernels run the attention
};

/// One mixture-of-experts layer: its experts' parameters and the tokens the
/// router dispatches.
struct MoeLayer {
  std::string module;            // "layers.1.block_sparse_moe"
  unsigned experts = 0;
  unsigned topK = 1;
  bool topKFromGraph = false;    // false: assumed 1 (no topk node found)
  double expertElements = 0;     // trainable elements of the experts
  double tokens = 0;             // tokens into the router (one device's graph)
  double hidden = 0;             // the model dim of a token
  const Value *input = nullptr;  // the router's input
};

class MeshSharding {
public:
  MeshSharding(const Model &m, AnalysisContext &ctx);
  /// The setup values build() reads (Analysis.h, SharedFacts): tp, cp, ep,
  /// sequence parallelism, 16-bit activations, the tp plan, the capacity factor.
  static std::string sharedKey(const Setup &s);
  /// The sharding under another setup (GL201's what-if: "tp 8 fits").
  MeshSharding(const Model &m, const Setup &s);

  /// tp, cp or ep above 1: some value or kernel is divided.
  bool active() const { return tp_ * cp_ * ep_ > 1; }
  unsigned tp() const { return tp_; }
  unsigned cp() const { return cp_; }
  unsigned ep() const { return ep_; }
  bool sequenceParallel() const { return sequenceParallel_; }

  /// What one rank holds of `v`'s elements: ceil(elements / divisor).
  unsigned elementDivisor(const Value *v) const;
  TpLayout layout(const Value *v) const;
  /// What one rank computes of node `n`'s work: 1/divisor.
  unsigned computeDivisor(const Node &n) const;
  /// A matmul by a colwise- or rowwise-sharded weight: the block whose tp
  /// region it belongs to ("layers.0.attention": the linear's parent module)
  /// and the weight's style. Async TP overlaps a region's all-gather with its
  /// colwise matmuls and its reduce-scatter with its rowwise one.
  struct ShardedMatmul {
    std::string block;
    TpStyle style;
  };
  std::optional<ShardedMatmul> shardedMatmul(const Node &n) const;

  /// "llama (default)", "user", "user + gpt2 (default)", or "none" (no
  /// module matched: tensor parallelism shards nothing).
  const std::string &planName() const { return planName_; }
  const std::vector<TpModule> &tpModules() const { return tpModules_; }
  const std::vector<TpRegion> &tpRegions() const { return tpRegions_; }
  const std::vector<AttentionLayer> &attentionLayers() const { return attention_; }
  const std::vector<MoeLayer> &moeLayers() const { return moe_; }
  /// `v` is an experts' parameter, split over the ep ranks (ExpertParallel.cpp).
  bool isExpertParam(const Value *v) const { return expertParam_.count(v) != 0; }
  /// Bytes of one element of activation `v` under the precision policy
  /// (16-bit activations for fp32 values under a 16-bit policy).
  double activationElementBytes(const Value *v) const;
  /// Elements of `v` on one device's graph (unbound symbols as 1); 0 unknown.
  static double elements(const Value *v);
  /// Notes the figures rest on ("tokens per expert: an even share x capacity
  /// factor 1.0", "no module matched the tp plan").
  const std::vector<std::string> &assumptions() const { return assumptions_; }

private:
  void build(const Model &m, const Setup &s);
  void planTensorParallel(const Graph &g, const Setup &s);
  void propagate(const Graph &g);
  void findAttention(const Graph &g);
  void findExperts(const Graph &g, const Setup &s);
  unsigned divisorOf(const Node &n) const;

  unsigned tp_ = 1, cp_ = 1, ep_ = 1;
  bool sequenceParallel_ = false;
  bool narrowsFp32_ = false;  // CapturePrecision::policyNarrowsFp32
  std::string planName_ = "none";
  std::vector<TpModule> tpModules_;
  std::vector<TpRegion> tpRegions_;
  std::vector<AttentionLayer> attention_;
  std::vector<MoeLayer> moe_;
  std::vector<std::string> assumptions_;
  llvm::DenseMap<const Value *, TpStyle> paramStyle_;  // trainable weights the plan names
  llvm::DenseMap<const Value *, bool> expertParam_;
  llvm::DenseMap<const Value *, TpLayout> layout_;
  llvm::DenseMap<const Value *, bool> batchDerived_;  // carries the batch (cp divides it)
  llvm::DenseMap<const Value *, const Value *> paramOrigin_;  // a param-only view -> its param
  // computeDivisor of each main-graph node, by index (the memory trace, the
  // step timeline and the mesh traffic ask for every node, once per setup).
  const Graph *main_ = nullptr;
  std::vector<unsigned> divisors_;
};

/// The default plan for a model family: (glob on a module path, style)
/// rows, first match wins, as torchtitan and transformers' base_model_tp_plan
/// write them. Families: llama (Llama, Mistral, Qwen, Mixtral), torchtitan,
/// gpt2, neox, t5, bert, vit, gpt (graphlint's own GPT fixtures).
struct TpFamilyPlan {
  const char *family;
  std::vector<std::pair<const char *, TpStyle>> rows;
};
const std::vector<TpFamilyPlan> &defaultTpPlans();

}  // namespace graphlint
