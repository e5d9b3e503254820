// Context parallelism on the captured graph (MeshSharding.h): the attention
// layers whose K and V ring attention rotates. Under cp every activation of
// the batch is split along the sequence (MeshSharding::elementDivisor); each
// attention layer's forward passes its K and V block to the next rank cp - 1
// times, its backward the K, V blocks and their gradients (Liu et al. 2023,
// "Ring Attention with Blockwise Transformers"; torchtitan's
// context_parallel), overlapped with the attention of the block in hand.
#include "graphlint/analyses/MeshSharding.h"

#include "graphlint/ir/OpRegistry.h"

#include <algorithm>

namespace graphlint {

namespace {

bool isSdpa(const Node &n) {
  std::string a = n.atenName();
  return a == "scaled_dot_product_attention" || a == "_scaled_dot_product_flash_attention" ||
         a == "_scaled_dot_product_efficient_attention" || a == "_scaled_dot_product_cudnn_attention" ||
         a == "_scaled_dot_product_flash_attention_for_cpu" || (n.domain.empty() && n.opType == "Attention");
}

bool isSoftmax(const Node &n) {
  std::string a = n.atenName();
  return a == "_softmax" || a == "softmax" || (n.domain.empty() && n.opType == "Softmax");
}

bool isContraction(const Node &n) { return n.op && n.op->kind == OpKind::Contraction; }

}  // namespace

void MeshSharding::findAttention(const Graph &g) {
  for (const auto &np : g.nodes()) {
    const Node &n = *np;
    if (n.backwardPhase)
      continue;
    if (isSdpa(n) && n.inputs.size() >= 3) {
      attention_.push_back({&n, n.inputs[1], n.inputs[2], {&n}});
      continue;
    }
    if (!isSoftmax(n) || n.inputs.empty() || !n.inputs[0] || !batchDerived_.lookup(n.inputs[0]))
      continue;
    // A written-out attention: softmax(Q K^T ...) V. Walk back through the
    // scale and the mask to the Q·K^T matmul, forward through dropout to the
    // matmul with V.
    const Node *scores = nullptr;
    const Value *v = n.inputs[0];
    for (int hop = 0; hop < 8 && v && v->producer && !scores; ++hop) {
      const Node *p = v->producer;
      if (isContraction(*p))
        scores = p;
      else
        v = p->inputs.empty() ? nullptr : p->inputs[0];
    }
    const Node *mixes = nullptr;
    const Value *w = n.outputs.empty() ? nullptr : n.outputs[0];
    for (int hop = 0; hop < 8 && w && !mixes; ++hop) {
      auto use = std::find_if(w->uses.begin(), w->uses.end(), [](const Use &x) { return !x.user->backwardPhase; });
      if (use == w->uses.end())
        break;
      const Node *u = use->user;
      if (isContraction(*u))
        mixes = u;
      else
        w = u->outputs.empty() ? nullptr : u->outputs[0];
    }
    if (!scores || !mixes || scores->inputs.size() < 2 || mixes->inputs.size() < 2)
      continue;
    attention_.push_back({scores, scores->inputs[1], mixes->inputs[1], {scores, &n, mixes}});
  }
}

}  // namespace graphlint
