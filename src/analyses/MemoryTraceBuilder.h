// The builder of the memory plan's trace (MemoryTrace.h): one model under one
// Setup. Private to src/analyses; MemoryTrace.cpp writes the synthetic
// training step of a forward graph, JointTrace.cpp the walk over a joint
// (forward + backward) graph.
#pragma once

#include "MemoryTrace.h"

#include "graphlint/analyses/CapturePrecision.h"
#include "graphlint/analyses/DecomposedKernels.h"
#include "graphlint/analyses/Float8Linears.h"
#include "graphlint/analyses/Liveness.h"
#include "graphlint/analyses/MeshSharding.h"
#include "graphlint/analyses/ShardingUnits.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/DenseSet.h>
#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/SmallVector.h>

#include <array>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace graphlint::memory {

constexpr uint32_t kNone = ~0u;

// PyTorch's behaviour tables (TorchBehaviour.cpp).
/// What output `oi` of `n` views in PyTorch eager, if anything: its base, and
/// whether the view is strided, a reshape, or permuted (transpose, expand).
struct TorchView {
  const Value *base = nullptr;
  bool strided = false, reshape = false, permuted = false;
};
TorchView torchViewOf(const Node &n, unsigned oi);
/// The MatMul output a bias Add (an exported nn.Linear on a 3-d input)
/// updates in place, or nullptr.
const Value *biasedMatMul(const Node &n);
/// An activation torchvision runs in place (inplace=True) in inference.
bool torchRunsInPlace(const Node &n);
/// The storage eager allocates for output `oi` of `n` when it is not the
/// output's own: the value whose dtype and shape it has (a CPU dropout's
/// mask under --kernels cpu), or a byte per element of the output (CUDA's
/// bool mask where torch 1.x traced the CPU's float noise). Neither: the
/// output's own.
struct TorchStorage {
  const Value *like = nullptr;
  bool bytePerElement = false;
};
TorchStorage torchStorageOf(const Node &n, unsigned oi, Kernels kernels);
/// The value whose size the storage of a reduced MSE or smooth-L1 loss is
/// on the CPU (aten mse_loss, smooth_l1_loss; torch.onnx's Sub -> Mul ->
/// ReduceMean): the unreduced buffer its 0-d result keeps. Null otherwise.
const Value *cpuLossStorage(const Node &n);
/// `n` is the empty_like of torch 1.x's traced CPU dropout (at::dropout's
/// unfused path: noise = empty_like(x).bernoulli_(1 - p).div_(1 - p);
/// x * noise), which CUDA runs as one native_dropout.
bool isTracedDropoutNoise(const Node &n);

/// Builds the trace of one model under one Setup.
class PlanBuilder {
public:
  /// `sharding`: what one rank of the mesh's tp/cp/ep holds of each value
  /// (MeshSharding.h); null when they are all 1.
  PlanBuilder(AnalysisContext &ctx, const MeshSharding *sharding = nullptr, const FusionPlan *compiled = nullptr)
      : ctx_(ctx), m_(ctx.model()), s_(ctx.setup()), g_(*m_.graph), sharding_(sharding), compiled_(compiled),
        float8_(ctx.get<Float8Linears>()), precision_(ctx.get<CapturePrecision>()),
        decomposed_(ctx.get<DecomposedKernels>()) {}

  using Ints = llvm::SmallVector<int64_t, 4>;  // dims or strides
  /// A value's dims when every one is static.
  static std::optional<Ints> staticDims(const Value *v);

  Trace build(MemorySummary &sum);

private:
  // The dp-shard ranks a sharded model state is split over (Setup::mesh). An
  // experts' parameter under ep is split over the ep ranks already
  // (MeshSharding::elementDivisor); its data-parallel shards are the rest of
  // dp-shard x cp, ep being carved from it: torchtitan's dp_shard_mod_ep
  // mesh, Megatron's expert data parallel group.
  unsigned shards(bool sharded, const Value *p = nullptr) const {
    if (!sharded)
      return 1u;
    unsigned group = std::max(1u, s_.mesh.shardGroup());
    unsigned ep = std::max(1u, s_.mesh.ep);
    if (p && ep > 1 && sharding_ && sharding_->isExpertParam(p) && group % ep == 0)
      return std::max(1u, group / ep);
    return group;
  }
  /// Elements of one tensor value: symbolic dims left unbound count as 1;
  /// nullopt when its shape is unknown.
  std::optional<uint64_t> elementsOf(const Value *v);
  /// Bytes of one tensor value (elementsOf; 0 when unknown).
  uint64_t bytesOf(const Value *v, bool activation);
  /// Bytes of `elements` elements of `like`'s dtype; an activation is held
  /// as the run holds it (CapturePrecision: fp32 in 16 bits only under a
  /// 16-bit policy on a capture that did not record its precision).
  uint64_t bytesOfElements(const Value *like, uint64_t elements, bool activation) const;
  /// Bytes of the storage eager allocates for output `oi` of `n`.
  uint64_t outputBytes(const Node &n, unsigned oi);
  void classifyParams();
  void computeNeedsGrad();
  /// Fills segment_ and segStart_ under --recompute (forward nodes only).
  void assignSegments(bool training);
  void forward(bool training);
  void backward();
  /// A joint graph (JointTrace.cpp): one liveness walk over its own forward
  /// and backward nodes.
  void joint();
  /// --recompute on a joint graph (JointTrace.cpp): torch.utils.checkpoint
  /// (use_reentrant=False) around each segment of its forward nodes.
  struct Checkpoint {
    int64_t recomputeAt = -1;  // the first backward node that reads what the segment saved
    int64_t replayEnd = -1;    // where the recompute stops: after the last saved tensor (torch 2.x), the end (1.x)
    int64_t backwardEnd = -1;  // the last such read: the checkpoint holds the segment's inputs until then
  };
  /// Reads of a segment's own saved tensors by backward nodes: the forward
  /// drops them at their last forward reader (`lastRead` is rewritten to
  /// it) and the recompute rebuilds them. Returns one Checkpoint per segment
  /// and fills `backwardRead` (value -> its last backward reader).
  std::vector<Checkpoint> checkpoints(llvm::DenseMap<const Value *, int64_t> &lastRead,
                                      llvm::DenseMap<const Value *, int64_t> &backwardRead);
  /// Before backward node `at`: segment `seg`'s forward runs again up to
  /// its replayEnd; what backward reads stays until its reader, the rest is
  /// freed as the replay passes its last reader.
  void recompute(int seg, const Checkpoint &c, int64_t at, const llvm::DenseMap<const Value *, int64_t> &lastRead,
                 const llvm::DenseMap<const Value *, int64_t> &backwardRead,
                 std::vector<std::vector<uint32_t>> &dueAt);
  /// Bytes of a parameter's gradient under the precision policy: the shard
  /// a rank keeps (ZeRO-2/3, FSDP: 1/dp_shard, in the reduce dtype), or
  /// `unsharded`, the whole gradient the backward writes before its
  /// reduction.
  uint64_t paramGradBytes(const Value *p, bool unsharded = false);
  /// The model-state policy (precisionPolicy(precision, data parallel)).
  PrecisionPolicy policy() const { return precisionPolicy(s_.precision, s_.mesh.dataParallel); }

  // Sharded data parallelism during the step (ShardedStates.cpp). Under
  // ZeRO-2/3 and FSDP each gradient is written whole by the backward, then
  // reduce-scattered with its group (a ZeRO-2 bucket, a stage-3 unit) and
  // freed, the rank keeping its shard; under stage 3 each unit's parameters
  // are all-gathered around its forward and its backward (the next unit
  // prefetched) and freed after (reshard_after_forward).
  bool shardsGradients() const { return s_.mesh.zeroStage() >= 2 && s_.mesh.shardGroup() > 1; }
  bool gathersParameters() const { return s_.mesh.zeroStage() >= 3 && s_.mesh.shardGroup() > 1; }
  /// Groups the trainable parameters (stage 3: ShardingUnits; stage 2: DDP's
  /// bucket assignment) and finds each unit's forward span.
  void planSharding();
  /// Forward node `n` is about to run: gather its unit and prefetch the next.
  void gatherBefore(const Node &n);
  /// Forward node `n` has run: reshard a unit whose forward it ends.
  void reshardAfter(const Node &n);
  /// The backward begins: gather the first units it reaches.
  void gatherForBackward();
  /// `p`'s gradient is reduce-scattered with a group (planSharding).
  bool reducedInGroup(const Value *p) const { return gradGroupOf_.count(p) > 0; }
  /// Parameter `p`'s whole gradient (reducedInGroup) is in storage `st`; the
  /// last of its group reduce-scatters the group: the whole gradients go,
  /// the shards stay (to the optimizer step), a stage-3 unit is resharded
  /// and the next prefetched.
  void gradientReady(const Value *p, uint32_t st);
  uint64_t gatheredBytes(unsigned unit);
  void gather(unsigned unit);
  void reshard(unsigned unit);
  ShardingUnits units_;
  std::vector<std::vector<const Value *>> gradGroups_;   // the reduce-scatter groups
  llvm::DenseMap<const Value *, unsigned> gradGroupOf_;
  std::vector<unsigned> groupWaiting_;                    // gradients each group still waits for
  std::vector<std::vector<std::pair<const Value *, uint32_t>>> groupGrads_;  // whole gradients arrived
  std::vector<uint32_t> gathered_;                        // per unit: its gathered storage, or kNone
  std::vector<int64_t> unitFirst_, unitLast_;             // per unit: its forward span (node indices)
  std::vector<bool> unitDone_;                            // per unit: reduced in this backward
  llvm::DenseMap<const Node *, unsigned> nodeUnit_;       // forward node -> its unit
  // A joint graph's parameter gradients (its backward outputs, one per
  // trainable parameter in order, as ComputeModel pairs them) -> the parameter.
  llvm::DenseMap<const Value *, const Value *> paramOfGrad_;
  /// Optimizer state per trained element (before ZeRO sharding): fp32
  /// master weights under mixed precision, and the optimizer's moments.
  double optimizerBytesPerElement() const;
  /// The states of a batch norm the exporter fused into Conv `n`
  /// (fusedBatchNormOutput) that the file does not hold: its fp32 weight,
  /// bias, running mean and variance (C each) and int64 batch count, less
  /// the fused bias the Conv reads in their place; and how many of its
  /// trained values (weight and bias) no trained initializer stands for.
  struct FusedNormStates {
    uint64_t residentBytes = 0;
    uint64_t trainedElements = 0;
  };
  FusedNormStates fusedNormStates(const Node &n);
  void optimizerStep();
  /// The storage `o` (output `oi` of `n`) shares, or kNone when it is new.
  uint32_t viewStorage(const Node &n, unsigned oi);
  /// A joint graph's gradient accumulation (graphlint-export's
  /// `accumulates`: autograd's InputBuffer summing two gradients of one
  /// tensor, node `idx`): the operand's storage eager adds the other into,
  /// one the buffer alone holds (a backward buffer nothing reads after the
  /// sum, as large as it); kNone when neither is, and the sum is new.
  uint32_t accumulatedInto(const Node &n, int64_t idx);
  /// The graph was traced or exported by torch 1.x (an FX file's `torch`,
  /// an ONNX file's producer), whose autograd sums gradients into new buffers.
  bool tracedByTorch1() const;
  /// The strides PyTorch's tensor for `v` has: a view's as tracked, a
  /// storage of its own contiguous; nullopt when not known.
  std::optional<Ints> stridesOf(const Value *v);
  /// The strides of ONNX view `n`'s output (Transpose, Slice, Split, Expand,
  /// Squeeze, a select...) from its base's; nullopt for any other op.
  static std::optional<Ints> onnxViewStrides(const Node &n, llvm::ArrayRef<int64_t> from,
                                             llvm::ArrayRef<int64_t> strides, llvm::ArrayRef<int64_t> to);
  /// The operands of ONNX MatMul `n` eager copies for its bmm (their strides
  /// cannot view [batch, rows, cols]: matmulOperandCopies), with the copies'
  /// element counts.
  llvm::SmallVector<std::pair<unsigned, int64_t>, 2> onnxMatmulCopies(const Node &n);
  void findComposites();
  /// The all-pass masks eager never builds (skippedMaskAdd): every reader is
  /// such an add, or a view read only by such adds.
  void findSkippedMasks();
  /// findSkippedMasks' walk over `g` alone (a fact of the graph).
  static void skippedMasksOf(const Graph &g, llvm::DenseSet<const Value *> &skippedMasks);
  /// scaled_dot_product_attention given a causal mask over equal lengths
  /// (isCausalMask): transformers builds it only under a tracer, and
  /// without a mask it lets the kernel group the query heads over the key
  /// and value heads (`enable_gqa=True`) instead of repeating them. What
  /// only the mask reads is never built (skippedMasks_), and a contiguous
  /// copy of key or value heads broadcast along a new dim that only such a
  /// call reads is the heads before the repeat (repeatedHeads_).
  void findCausalAttention();
  /// scaled_dot_product_attention in a CPU training step under attention
  /// dropout, where eager runs the math path whose tensors the export hides
  /// (MathAttention.cpp): a `.pt2`'s one op (attentionDropsOut).
  void findMathAttention();
  /// Registers node `n` as the math path over query, key and value `qkv`
  /// (a `.pt2` op, or the last node of the dynamo exporter's decomposition,
  /// whose other nodes are then compositeInner_), reading `reads` up to
  /// `n`; false when their sizes are not static.
  bool addMathAttention(const Node &n, std::array<const Value *, 3> qkv, llvm::ArrayRef<const Value *> reads);
  struct MathAttention;
  /// The bmm copies of an ONNX graph's math path, from the strides the plan
  /// derives for the operands' views (a `.pt2` records them).
  void mathAttentionLayout(MathAttention &m);
  /// Its forward, before the op's output: the scaled operands and their
  /// bmm copies, the scores, softmax and dropout; what the backward keeps
  /// is held, the rest freed by the op (`temps`).
  void mathAttentionForward(const Node &n, int64_t idx, llvm::SmallVectorImpl<uint32_t> &temps);
  /// Its backward: the chain's gradients in turn, each saved tensor freed
  /// as its backward passes; `gradient(x)` delivers operand x's gradient.
  void mathAttentionBackward(const Node &n, llvm::function_ref<void(const Value *)> gradient);
  /// What `n`'s backward keeps (composites included), as values.
  struct Saved {
    llvm::SmallVector<const Value *, 3> values;
    uint64_t extraBytes = 0;
  };
  Saved savedOf(const Node &n);
  /// Liveness(g_, runs, &m_, pythonHolds).lastReads(), computed once per
  /// context (or SharedFacts) for each `which` (the nodes `runs` picks,
  /// named: "all", "forward", "training").
  const llvm::DenseMap<const Value *, int64_t> &lastReads(const char *which,
                                                          llvm::function_ref<bool(const Node &)> runs,
                                                          bool pythonHolds);
  /// aten's dropout, or a training ai.onnx Dropout, run by the CPU's kernel
  /// (`input * noise`; --kernels cpu).
  bool isCpuDropout(const Node &n) const;

  AnalysisContext &ctx_;
  const Model &m_;
  const Setup &s_;
  const Graph &g_;
  const MeshSharding *sharding_ = nullptr;
  // Compiled execution (CompiledExecution.h): the Inductor plan, the values
  // its kernels never materialise, and the tensors eager saves that
  // AOTAutograd's partitioner recomputes in the backward instead.
  const FusionPlan *compiled_ = nullptr;
  llvm::DenseSet<const Value *> fusedAway_;
  llvm::DenseSet<const Value *> recomputedByPartitioner_;
  /// Synthesised step under compiled execution: decides fusedAway_ and
  /// recomputedByPartitioner_ from what savedOf keeps (before forward()).
  void planCompiledStep(bool training);
  /// Compiled: the storage of an input that dies in `n`'s kernel, of output
  /// `oi`'s size, which Inductor writes the output into (its in-place
  /// buffer reuse), or kNone.
  uint32_t compiledInPlace(const Node &n, unsigned oi);
  llvm::DenseSet<uint32_t> reusedInPlace_;
  llvm::DenseSet<const Value *> keptForBackward_;  // compiled: storage bases the forward hands to the backward
  /// The same for a joint graph (JointTrace.cpp): also moves the last reads
  /// of what the partitioner recomputes (`lastRead`, rewritten).
  void planCompiledJoint(llvm::DenseMap<const Value *, int64_t> &lastRead);
  /// Bytes a new storage for `v` takes: 0 when a fused kernel keeps it in registers.
  uint64_t materialised(const Value *v, uint64_t bytes) const { return fusedAway_.count(v) ? 0 : bytes; }
  /// --float8: the converted linears (their GEMMs' fp8 operand copies, the
  /// fp8-gathered weights).
  const Float8Linears &float8_;
  const CapturePrecision &precision_;  // the capture's dtypes, or the policy's where it recorded none
  const DecomposedKernels &decomposed_;  // SiLU, GELU, GroupNorm as exporters write them (findComposites)
  /// Bytes of the fp8 copies that live while `n` runs as a converted
  /// linear's GEMM (its backward's when `synthesisedBackward`); 0 otherwise.
  uint64_t float8Temporaries(const Node &n, bool synthesisedBackward);
  Trace t_;
  MemorySummary *sum_ = nullptr;
  std::set<std::string> assumed_;
  mutable llvm::DenseSet<const Value *> saturated_;  // tensors counted as kMaxTensorBytes

  llvm::DenseMap<const Value *, uint32_t> storageOf_;
  llvm::DenseSet<const Value *> nonContiguous_;
  llvm::DenseSet<const Value *> permuted_;
  // The strides of the views an ONNX graph makes, which ONNX does not
  // record (stridesOf): nullopt where not known (a symbolic size).
  llvm::DenseMap<const Value *, std::optional<Ints>> strides_;
  // Exporters decompose some single PyTorch kernels (GELU into Div, Erf, Add,
  // Mul, Mul): the pieces' outputs never exist in PyTorch; the last piece
  // stands for the kernel and reads the chain's input.
  llvm::DenseSet<const Node *> compositeInner_;
  llvm::DenseMap<const Node *, const Value *> compositeInput_;
  // A composite's trained operands besides its input (a group norm's
  // weight and bias: their gradients arrive from the last piece's
  // backward) and what its kernel keeps beyond the input (mean and rstd).
  struct CompositeExtras {
    llvm::SmallVector<const Value *, 2> weights;
    uint64_t savedBytes = 0;
  };
  llvm::DenseMap<const Node *, CompositeExtras> compositeExtras_;
  llvm::DenseSet<const Value *> skippedMasks_;
  // The copy node of a key/value head repeat eager does not make -> the
  // heads before it, whose storage the copy's output takes.
  llvm::DenseMap<const Node *, const Value *> repeatedHeads_;
  // scaled_dot_product_attention as the dynamo ONNX exporter decomposes it,
  // run by eager in inference as one fused kernel: the decomposition's last
  // node -> the tensors the call reads (query, key, value, mask), held to
  // it; the other nodes are compositeInner_ (findComposites).
  llvm::DenseMap<const Node *, llvm::SmallVector<const Value *, 4>> fusedAttention_;
  // The math path's pieces, in bytes (findMathAttention), and the storages
  // its forward keeps for the backward.
  struct MathAttention {
    std::array<const Value *, 3> operands = {};  // query, key, value
    llvm::SmallVector<const Value *, 4> reads;   // held up to the node (the mask too)
    uint64_t batch = 1;                          // the scores' batch elements (b * h)
    uint64_t query = 0, key = 0, value = 0, scores = 0, flags = 0, causalMask = 0;
    bool repeated = false;                   // grouped query heads: k and v repeated to q's
    bool layoutKnown = false;                // copies decided
    bool copies[3] = {false, false, false};  // q', k' and v copied for their bmm
    struct {
      uint32_t query = kNone, key = kNone, probs = kNone, noise = kNone, dropped = kNone, value = kNone;
    } saved;
    /// What its backward keeps beyond v itself.
    uint64_t savedBytes() const;
  };
  llvm::DenseMap<const Node *, MathAttention> mathAttention_;
  // Its nodes that run inside the kernel (the last one included).
  llvm::DenseMap<const Node *, std::vector<const Node *>> fusedKernel_;
  // Its query, whose layout the kernel's output takes (fusedOutputStrides).
  llvm::DenseMap<const Node *, const Value *> fusedQuery_;
  /// The fused kernel's output strides: CPU flash attention allocates its
  /// output in the query's dim order (its strides sorted), so
  /// MultiheadAttention's [L, B*H, D] query view gives an [L, B, H, D]
  /// layout, transformers' rotary q (elementwise ops on a
  /// `view(b, s, h, d).transpose(1, 2)`) [b, s, h, d], and a partial rotary
  /// that ends in a cat (GPT-NeoX, Phi-2) a contiguous one (eagerLayout);
  /// [b, s, h, d] where the query's layout is not known.
  Ints fusedOutputStrides(const Node &last, const Ints &dims);
  /// The strides eager gives `v`: a view's as derived; an elementwise op's
  /// output its first operand's of the same dims (TensorIterator orders the
  /// dims by its operands' strides, the first first); any other new tensor
  /// (a cat, a matmul) contiguous. nullopt where a view's are not known.
  std::optional<Ints> eagerLayout(const Value *v);
  /// The fused kernel's logsumexp, [b, h, s] fp32 (the output's elements
  /// over its last dim), a temporary of the kernel.
  uint64_t logsumexpBytes(const Node &last);
  // Activations torchvision-style modules run in place (inplace=True).
  llvm::DenseSet<const Node *> inplaceActivation_;
  uint32_t inplaceStorage(const Node &n, int64_t idx);
  llvm::DenseSet<const Value *> trainable_;
  llvm::DenseSet<const Value *> needsGrad_;
  std::vector<const Value *> trainableOrder_;
  // Trainable parameters no graph output depends on (a pooler whose output
  // nothing reads): no gradient reaches them, so Adam keeps no state for
  // them and steps over them (its `if p.grad is None: continue`).
  llvm::DenseSet<const Value *> gradless_;
  // Forward release points: node index after which a storage is freed.
  std::vector<int64_t> lastUse_;
  // Training: storages held for backward, released at that node's backward.
  std::map<uint32_t, int64_t> savedUntil_;
  std::vector<uint32_t> extraSaved_;      // per node: synthetic saved buffer or kNone
  std::vector<int> segment_;              // recompute segment per node, -1: not checkpointed
  std::vector<bool> policySaved_;         // selective-op: outputs the policy keeps (RecomputePlan)
  std::map<int, size_t> segStart_;        // segment -> its first node
  llvm::DenseMap<const Value *, uint32_t> paramGrad_;
  std::vector<uint32_t> fusedNormGrads_;  // gradients of fused batch norms' weights and biases
};

}  // namespace graphlint::memory
