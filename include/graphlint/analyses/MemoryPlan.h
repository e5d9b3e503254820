// The memory plan: the bytes one GPU holds over an inference pass or a
// training step (forward, backward, optimizer step), predicted from the graph
// and the Setup (train, optimizer, precision, ZeRO stage, world size,
// recompute, target). Liveness over the main graph's execution order gives an
// alloc/free trace of storages (views share their base's storage); training
// adds model states per rank, the tensors each op saves for backward (per-op
// rules that follow PyTorch autograd, or the FX frontend's
// outputSavedForBackward facts), the backward pass's gradient buffers and the
// optimizer step's temporaries. Replaying the trace through AllocatorSim gives
// the reserved bytes. GL201-GL203 read it; docs/memory.md is the model.
#pragma once

#include "graphlint/analyses/Analysis.h"
#include "graphlint/analyses/MemorySummary.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringRef.h>

#include <string>
#include <string_view>
#include <vector>

namespace graphlint {

/// The part of a training step a point of the timeline belongs to.
enum class MemoryPhase : uint8_t { Forward, Backward, Optimizer };

/// What a storage holds.
enum class MemoryKind : uint8_t { Param, Grad, OptimizerState, Input, Activation, Saved, Gradient, Temporary };
std::string_view memoryKindName(MemoryKind k);

/// What autograd keeps of one node for its backward, per PyTorch's
/// derivatives (tools/autograd/derivatives.yaml): the operands and results it
/// saves, plus buffers that are not graph values (max-pool indices, norm
/// statistics, dropout masks) in bytes. `needsGrad[i]`: input i needs a
/// gradient (it is, or depends on, a trainable parameter).
struct SavedForBackward {
  llvm::SmallVector<unsigned, 2> inputs;
  llvm::SmallVector<unsigned, 1> outputs;
  uint64_t extraBytes = 0;
  /// An activation the op's kernel makes and keeps that is no graph value,
  /// sized like this one (cross_entropy's log-probabilities, like its
  /// logits): the precision policy sizes it as it does activations.
  const Value *extraLike = nullptr;
  /// Operands saved as a copy, not as their storage: input index and the
  /// copy's element count, in the input's dtype (a batched matmul's operand
  /// whose strides bmm cannot take: matmulCopies). The precision policy sizes
  /// the copies as it does activations.
  llvm::SmallVector<std::pair<unsigned, int64_t>, 2> copies;
};
SavedForBackward savedForBackward(const Node &n, llvm::ArrayRef<bool> needsGrad);

/// The buffers the backward of `n` makes besides its input gradients and
/// frees when it returns, each sized like the returned value (the activation
/// policy applies): cross_entropy's backward is nll_loss_backward, a gradient
/// of the log-probabilities the size of the logits, then
/// log_softmax_backward; pow(x, c) of a scalar c makes x.pow(c - 1) and its
/// product with c before the gradient.
llvm::SmallVector<const Value *, 2> backwardTemporariesLike(const Node &n);

/// The output whose shape an output PyTorch's kernel for `n` allocates, and
/// the graph leaves out, has: F.max_pool2d and F.max_pool3d run
/// max_pool{2,3}d_with_indices, whose int64 indices an ONNX MaxPool or a
/// `.pt2` max_pool2d does not have. Eager frees them when the op returns
/// unless autograd saves them. nullptr for other nodes.
const Value *droppedIndicesOf(const Node &n);

/// The output of an ONNX Conv into which torch.onnx's dynamo exporter's
/// optimizer fused the batch norm after it (the Conv carries the batch norm's
/// FX node, `aten._native_batch_norm_legit*`), or nullptr. Eager runs both:
/// the convolution's own output, a buffer the file does not have, is the
/// size of this one; the batch norm reads it, and in training saves it with
/// its fp32 mean and inverse std, and its backward makes a gradient of it.
const Value *fusedBatchNormOutput(const Node &n);

/// An add of an attention mask that masks nothing (isAllPassMask):
/// transformers' attention mask helpers return None in eager
/// when nothing is masked (no padding, bidirectional attention), and build
/// the all-pass mask only while a tracer runs (torch.export, the dynamo and
/// TorchScript ONNX exporters), so eager runs neither the mask nor the add.
/// `kept`: the operand the add then is (the attention scores), of the
/// output's dtype and dims; `mask`: the zero tensor. Both null otherwise.
struct SkippedMaskAdd {
  const Value *kept = nullptr, *mask = nullptr;
};
SkippedMaskAdd skippedMaskAdd(const Node &n);

/// How the gradient of input `i` comes out of a node's backward: a view of
/// the output's gradient (Add, views, Concat's pieces) or a new buffer.
bool gradPassesThrough(const Node &n, unsigned input);

/// The repeated layer each node of `g` runs in (by node index), as
/// --recompute layer checkpoints it; "" outside any (embeddings, the head,
/// backward nodes). A layer is the first module on the node's path whose
/// name ends in a number ("blocks.3" of "blocks.3.attn.qkv", "layer2.1",
/// "encoder_layer_5", "denseblock1.denselayer2") and that has submodules,
/// taken further down while the next component is such a module too (the
/// blocks "features.2.0" of a stage "features.2"), and only when the
/// neighbouring layer in execution order is entered through the same
/// submodule (a stem "features.0" before blocks "features.1", ... is not).
std::vector<llvm::StringRef> checkpointLayers(const Graph &g);
/// checkpointLayers(g), computed once per context, or once per SharedFacts
/// (Analysis.h): the pipeline cut, the FSDP units and --recompute all read it.
const std::vector<llvm::StringRef> &checkpointLayersOf(AnalysisContext &ctx, const Graph &g);

/// torchtitan's _op_sac_save_list (torchtitan/distributed/
/// activation_checkpoint.py): whether `n` is an aten.mm (a matrix product
/// with a 2-D right operand: mm, addmm, linear, an ONNX Gemm or MatMul by a
/// weight; not bmm), a scaled_dot_product/flex attention kernel, a
/// reduce_scatter_tensor or aten.max.default.
enum class SacOp : uint8_t { None, MatMul, Saved };
SacOp sacSaveListOp(const Node &n);

/// What --recompute does to each node of `g` (by index). `segment`: the
/// checkpoint it runs in (-1: none, its saved tensors kept): one per run of
/// nodes in a repeated layer (checkpointLayers) under layer and
/// selective-op, in every N-th layer (torchtitan's `_count % ac_freq == 0`,
/// counting layers from 1) under selective-layer=N, about sqrt(n) forward
/// nodes each under sqrt. `policySaved`: under selective-op, the nodes of a
/// segment whose outputs torchtitan's policy keeps from the forward
/// (MUST_SAVE) and the recompute does not rerun: the save list's ops, of the
/// matmuls only the 1st, 3rd, ... of each layer (the policy recomputes
/// every second mm, counted per checkpointed block). A joint graph's
/// backward nodes are in no segment.
struct RecomputePlan {
  std::vector<int> segment;
  std::vector<bool> policySaved;
  /// The forward of node `i` runs again in the backward.
  bool recomputed(size_t i) const { return i < segment.size() && segment[i] >= 0 && !policySaved[i]; }
};
RecomputePlan recomputePlan(const Graph &g, const Setup &s);
/// recomputePlan(g, ctx.setup()), computed once per context, or once per
/// SharedFacts and policy (it reads --recompute alone).
const RecomputePlan &recomputePlanOf(AnalysisContext &ctx, const Graph &g);

class MemoryPlan {
public:
  MemoryPlan(const Model &m, AnalysisContext &ctx);

  const MemorySummary &summary() const { return summary_; }
  /// The node running at the peak (nullptr when the peak is the optimizer
  /// step or before any node).
  const Node *peakNode() const { return peakNode_; }

  /// One storage live at the peak, with the node that produced it.
  struct Contributor {
    const Value *value = nullptr;
    const Node *producer = nullptr;
    MemoryKind kind = MemoryKind::Activation;
    uint64_t bytes = 0;
  };
  /// Every storage live at the peak, largest first.
  const std::vector<Contributor> &atPeak() const { return atPeak_; }

private:
  MemorySummary summary_;
  const Node *peakNode_ = nullptr;
  std::vector<Contributor> atPeak_;
};

}  // namespace graphlint
