// The compute roofline per fusion group (docs/cost-model.md "Compute"). Only
// static shapes are used: a group touching a tensor of unknown size, or an op
// without a FLOP formula, has an unknown cost and is left out of the totals.
#include "graphlint/analyses/ComputeModel.h"

#include "graphlint/ir/OpRegistry.h"
#include "graphlint/ir/ValueFacts.h"
#include "graphlint/analyses/CapturePrecision.h"
#include "graphlint/analyses/Contraction.h"
#include "graphlint/analyses/DecomposedKernels.h"
#include "graphlint/analyses/Float8Linears.h"
#include "graphlint/analyses/MemoryPlan.h"
#include "graphlint/analyses/OpFlops.h"
#include "graphlint/analyses/TrainableParams.h"

#include <fmt/format.h>

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/DenseSet.h>

#include <algorithm>
#include <map>

namespace graphlint {
namespace {

// Bytes of a tensor as the run stores it (CapturePrecision): under
// --precision *-mixed or bf16 an fp32 capture's activations and weights are
// moved as 16-bit values; a capture that recorded its precision moves its own.
std::optional<double> storedBytes(const Value &v, const CapturePrecision &cp) {
  auto b = v.type.byteSize();
  if (!b)
    return std::nullopt;
  unsigned bits = dtypeBits(v.type.dtype);
  return bits ? static_cast<double>(*b) * cp.storedBits(v.type.dtype) / bits : static_cast<double>(*b);
}

bool isConvolution(const Node &n) {
  std::string aten = n.atenName();
  if (!aten.empty())
    return aten == "convolution" || aten == "_convolution" || aten == "convolution_backward" ||
           aten == "cudnn_convolution" || aten == "conv2d";
  return n.domain.empty() && (n.opType == "Conv" || n.opType == "ConvTranspose");
}

MathPrecision contractionPrecision(const Node &n, Precision p, const CapturePrecision &cp) {
  // The activation operand's dtype, as the run holds it (CapturePrecision).
  std::optional<ContractionGeometry> g = contractionGeometry(n);
  const Value *a = n.inputs.empty() ? nullptr : n.inputs[0];
  DType t = g ? g->dtype : a ? a->type.dtype : DType::Undefined;
  auto m = cp.contractionMath(t == DType::Undefined ? DType::Float : t);
  // fp32 matmuls count at the CUDA-core rate (PyTorch's default since 1.12:
  // torch.backends.cuda.matmul.allow_tf32 = False), fp32 convolutions at the
  // TF32 rate (torch.backends.cudnn.allow_tf32 = True by default); --precision
  // tf32 runs both on TF32 tensor cores. Hardware without TF32 falls back to
  // the fp32 peak (timeKernel).
  if (m == MathPrecision::FP32 && (p == Precision::TF32 || isConvolution(n)))
    return MathPrecision::TF32;
  return m.value_or(MathPrecision::FP32);
}


// Batch norm in training reduces over N x H x W, far more than one block
// holds: cuDNN's and PyTorch's kernels read the input once for the
// statistics and again to normalise; the backward reads x and dy once for
// the two reductions and again for dx. Inputs read twice: forward x; backward
// dy and x.
unsigned readPasses(const Node &n, unsigned input, bool train) {
  std::string aten = n.atenName();
  if (aten == "native_batch_norm_backward" || aten == "cudnn_batch_norm_backward")
    return input <= 1 ? 2 : 1;
  bool forward = aten == "_native_batch_norm_legit" || aten == "native_batch_norm" || aten == "cudnn_batch_norm" ||
                 aten == "_native_batch_norm_legit_functional" ||
                 (aten.empty() && n.domain.empty() && n.opType == "BatchNormalization" && train);
  return forward && input == 0 ? 2 : 1;
}

// cuDNN runs tensor-core convolutions in NHWC: an NCHW (contiguous) operand
// or result is transformed by a kernel of its own, which reads and writes it
// once (cuDNN developer guide, "Tensor Transformations"). The graph knows the
// layout only where the exporter recorded strides (FX); elsewhere none.
unsigned nchwTensors(const Node &n, llvm::SmallVectorImpl<const Value *> &out) {
  unsigned count = 0;
  auto note = [&](const Value *v) {
    if (v && v->memoryFormat == Value::MemoryFormat::Contiguous && isFloating(v->type.dtype)) {
      out.push_back(v);
      ++count;
    }
  };
  for (const Value *v : n.inputs)
    note(v);
  for (const Value *v : n.outputs)
    note(v);
  return count;
}

// The bias operand of a contraction (ONNX Gemm C, Conv B; aten addmm's
// input, linear's and convolution's bias), or null. Its gradient is a
// reduction over the output gradient, a kernel of its own after dX and dW
// (a joint graph records it as a `sum`, or convolution_backward's third
// output).
const Value *biasOperand(const Node &n) {
  if (!n.op || n.op->kind != OpKind::Contraction)
    return nullptr;
  std::string aten = n.atenName();
  unsigned i = aten == "addmm" ? 0
               : aten == "linear" || aten == "convolution" || aten == "conv2d" || aten == "conv1d" ||
                       aten == "conv3d" || (aten.empty() && (n.opType == "Gemm" || n.opType == "Conv" ||
                                                              n.opType == "ConvTranspose"))
                   ? 2
                   : ~0u;
  return i < n.inputs.size() ? n.inputs[i] : nullptr;
}

bool onTensorCores(MathPrecision p, const HardwareProfile *hw) {
  return hw && hw->supports(p) && p != MathPrecision::FP32 && p != MathPrecision::FP64;
}

void add(KernelTime &into, const KernelTime &k) {
  into.flops += k.flops;
  into.matmulFlops += k.matmulFlops;
  into.attentionFlops += k.attentionFlops;
  into.bytes += k.bytes;
  into.layoutBytes += k.layoutBytes;
  into.serialBytes += k.serialBytes;
  into.kernels += k.kernels;
  into.gpuSeconds += k.gpuSeconds;
  into.seconds += k.seconds;
}

}  // namespace

// The precision a contraction of math `p` runs at on `hw`: its own, or fp32
// on CUDA cores where the target lacks it.
MathPrecision runsAt(const HardwareProfile &hw, MathPrecision p) { return hw.supports(p) ? p : MathPrecision::FP32; }

void timeKernel(KernelTime &k, const HardwareProfile &hw, MathPrecision matmul) {
  MathPrecision run = runsAt(hw, matmul);
  double matmulPeak = hw.peakFor(run) * hw.efficiencyFor(run);
  double attentionPeak = hw.peakFor(run) * hw.attentionEfficiencyFor(run);
  double scalarPeak = hw.peakFor(MathPrecision::FP32) * hw.computeEfficiency;
  double math = (matmulPeak > 0 ? (k.matmulFlops - k.attentionFlops) / matmulPeak : 0) +
                (attentionPeak > 0 ? k.attentionFlops / attentionPeak : 0) +
                (scalarPeak > 0 ? (k.flops - k.matmulFlops) / scalarPeak : 0);
  double bw = hw.memoryBandwidth * hw.memoryEfficiency;
  double serial = k.layoutBytes + k.serialBytes;
  double memory = bw > 0 ? (k.bytes - serial) / bw : 0;
  double transforms = bw > 0 ? serial / bw : 0;  // serial to the kernel they serve
  k.gpuSeconds = std::max(math, memory) + transforms;
  // Launches are asynchronous: the host queues kernel i+1 while kernel i runs,
  // so the stream is held up by launches only when kernels are shorter.
  k.seconds = std::max(k.gpuSeconds, hw.launchOverhead * k.kernels);
}

std::string ComputeModel::sharedKey(const Setup &s) {
  const HardwareProfile *hw = s.targetProfile();
  return fmt::format("{} {} {} {} {} [{}] {}", hw ? hw->name : "-", precisionName(s.precision), s.train,
                     kernelsName(s.kernels), FusionPlan::sharedKey(s), Float8Linears::sharedKey(s), s.recomputeLabel());
}

ComputeModel::ComputeModel(const Model &m, AnalysisContext &ctx) {
  const Setup &setup = ctx.setup();
  hw_ = setup.targetProfile();  // resolved with the configuration
  const FusionPlan &plan = ctx.get<FusionPlan>();
  const Graph &main = *m.graph;
  const CapturePrecision &capture = ctx.get<CapturePrecision>();
  const DecomposedKernels &decomposed = ctx.get<DecomposedKernels>();
  // A joint graph carries its backward: cost those nodes as they are.
  const bool hasBackward = main.hasBackward();
  joint_ = hasBackward && setup.train;

  // Trainable parameters: the memory plan's (TrainableParams.h).
  llvm::DenseSet<const Value *> needsGrad;
  for (const Value *v : trainableParams(main)) {
    auto elements = v->type.shape.numElements();
    if (!elements)
      continue;
    needsGrad.insert(v);
    params_.push_back({v, static_cast<double>(*elements), static_cast<unsigned>(params_.size()), -1});
    paramElements_ += static_cast<double>(*elements);
  }
  // Gradients flow back through every floating value computed from a parameter.
  if (setup.train && !hasBackward)
    for (const auto &n : main.nodes()) {
      bool any = std::any_of(n->inputs.begin(), n->inputs.end(), [&](const Value *v) { return needsGrad.count(v); });
      for (const Value *o : n->outputs)
        if (any && o && isFloating(o->type.dtype))
          needsGrad.insert(o);
    }
  auto grad = [&](const Value *v) { return v && needsGrad.count(v) > 0; };

  // --float8: the converted linears' GEMMs and their casts (Float8Linears.h);
  // the casts read the high-precision tensors at the activations' size.
  const Float8Linears &float8 = ctx.get<Float8Linears>();

  // The nodes --recompute runs again in the backward (MemoryPlan.h).
  static const RecomputePlan none;
  const RecomputePlan &recompute = setup.train ? recomputePlanOf(ctx, main) : none;
  groups_.resize(plan.groups().size());
  for (size_t gi = 0; gi < plan.groups().size(); ++gi) {
    const FusionGroup &g = plan.groups()[gi];
    GroupCost &c = groups_[gi];
    c.group = &g;
    c.known = true;
    llvm::DenseSet<const Node *> members(g.nodes.begin(), g.nodes.end());
    llvm::DenseSet<const Value *> counted, written;
    // The storage a member's output lives in: a view's is what it views.
    // At most one step per member: a cyclic graph (GL001, a node reading
    // its own output) must not loop.
    auto storageOf = [&](const Value *v) {
      for (size_t steps = 0; steps <= members.size() && v && v->producer && members.count(v->producer) &&
                             v->producer->op && v->producer->op->viewOfInput0 && !v->producer->inputs.empty();
           ++steps)
        v = v->producer->inputs[0];
      return v;
    };
    auto addBytes = [&](const Value *v, unsigned passes = 1, bool fp8 = false) {
      auto b = storedBytes(*v, capture);
      auto n = v->type.shape.numElements();
      if (fp8 && n)  // an fp8 GEMM reads its operands' fp8 copies
        b = static_cast<double>(*n);
      c.known &= b.has_value();
      c.forward.bytes += passes * b.value_or(0);
    };
    Float8CastTraffic castsForward, castsBackward;
    bool fp8Group = false;
    std::optional<MathPrecision> precision;
    bool backward = false;
    unsigned gradOperands = 1;
    double layoutBytes = 0;
    unsigned layoutKernels = 0;
    // A synthesised backward (a graph without its own): what the group's
    // nodes keep for it (savedForBackward), its NCHW layout transforms, and
    // whether a batch norm reads its dy and x twice.
    const bool synthesised = setup.train && !hasBackward;
    llvm::SmallVector<std::pair<const Value *, unsigned>, 8> saved;  // value, read passes
    double backwardLayoutBytes = 0;
    unsigned backwardLayoutKernels = 0;
    bool twoPassBackward = false;
    // Inputs whose gradient a member's backward writes as a new buffer; a
    // pass-through gradient (Add, Concat, views) is a view of the output's,
    // written by whoever makes the gradient it views.
    llvm::DenseSet<const Value *> gradWritten;
    // What member n's synthesised backward keeps and which input gradients
    // it writes. A piece of an exporter-decomposed kernel does neither; the
    // kernel's last piece keeps the kernel's input (GroupNorm: and its
    // weight; mean and rstd are bytes per group) and writes their gradients.
    auto noteBackward = [&](const Node &n) {
      if (decomposed.isInner(n))
        return;
      if (const DecomposedKernel *k = decomposed.endingAt(n)) {
        llvm::SmallVector<const Value *, 3> kept{k->input};
        kept.append(k->weights.begin(), k->weights.end());
        for (const Value *v : kept) {
          saved.push_back({v, 1});
          if (grad(v))
            gradWritten.insert(v);
        }
        return;
      }
      llvm::SmallVector<bool, 4> needs;
      for (unsigned i = 0; i < n.inputs.size(); ++i) {
        const Value *v = n.inputs[i];
        needs.push_back(grad(v));
        if (!needs.back() || gradPassesThrough(n, i))
          continue;
        // The buffer it writes is the gradient of what v views through
        // pass-through members: a reshape's input, an add's operand.
        for (unsigned hops = 0; hops < 8 && v && v->kind == Value::Kind::NodeOutput && members.count(v->producer) &&
                                !v->producer->inputs.empty() && gradPassesThrough(*v->producer, 0);
             ++hops)
          v = v->producer->inputs[0];
        gradWritten.insert(v);
      }
      SavedForBackward sv = savedForBackward(n, needs);
      for (unsigned i : sv.inputs)
        saved.push_back({n.inputs[i], readPasses(n, i, true)});
      for (unsigned o : sv.outputs)
        if (o < n.outputs.size())
          saved.push_back({n.outputs[o], 1});
      c.backward.bytes += static_cast<double>(sv.extraBytes);
      if (sv.extraLike)
        c.backward.bytes += storedBytes(*sv.extraLike, capture).value_or(0);
      twoPassBackward |= !n.inputs.empty() && readPasses(n, 0, true) > 1;
    };
    // A joint graph's convolution_backward is one node but a kernel per
    // gradient it computes (dX, dW), as a synthesised backward counts them.
    unsigned gradientLaunches = 0;
    unsigned biasGradients = 0;  // a synthesised backward's bias-gradient reductions
    // The training batch norms the dynamo ONNX exporter fused into Convs
    // (fusedBatchNormOutput): eager runs each after its convolution, a
    // reduction kernel of its own that reads the convolution's output twice
    // (statistics, then normalisation) and writes it; its backward reads dy
    // and that output twice each and writes their gradient.
    double fusedNormBytes = 0;
    unsigned fusedNorms = 0;
    for (const Node *n : g.nodes) {
      if (const Value *y = setup.train ? fusedBatchNormOutput(*n) : nullptr;
          y && !dynamoFxTarget(*n).contains("no_training")) {
        fusedNormBytes += storedBytes(*y, capture).value_or(0);
        ++fusedNorms;
      }
      if (unsigned grads = convolutionBackwardGradients(*n); grads > 1)
        gradientLaunches += grads - 1;
      if (const Attribute *mask = n->atenName() == "convolution_backward" ? n->attr("output_mask") : nullptr;
          mask && mask->ints.size() > 2 && mask->ints[2])
        ++gradientLaunches;  // the bias gradient
      if (const Value *bias = synthesised ? biasOperand(*n) : nullptr; bias && grad(bias))
        ++biasGradients;
      if (isConvolution(*n)) {
        llvm::SmallVector<const Value *, 4> nchw;
        layoutKernels += nchwTensors(*n, nchw);
        for (const Value *v : nchw) {
          double b = 2 * storedBytes(*v, capture).value_or(0);
          layoutBytes += b;
          // The backward transforms dy, x and w again, and dx and dw.
          bool gradOut = v->kind == Value::Kind::NodeOutput && v->producer == n;
          backwardLayoutBytes += b * (grad(v) && !gradOut ? 2 : 1);
          backwardLayoutKernels += grad(v) && !gradOut ? 2 : 1;
        }
      }
      if (synthesised)
        noteBackward(*n);
      Float8Gemm role = Float8Gemm::Output;
      const Float8Linear *f8 = float8.gemmOf(*n, &role);
      auto f8ops = f8 ? float8GemmOperands(*n) : std::nullopt;
      if (f8) {
        fp8Group = true;
        const double hpBytes = capture.operandBytes(f8->output);
        Float8CastTraffic t = float8.casts(*f8, role, hpBytes);
        Float8CastTraffic &into = role == Float8Gemm::Output && !n->backwardPhase ? castsForward : castsBackward;
        into.bytes += t.bytes;
        into.kernels += t.kernels;
        if (role == Float8Gemm::Output && setup.train && !hasBackward) {  // the synthesised backward's casts
          Float8CastTraffic b = float8.backwardCasts(*f8, hpBytes);
          castsBackward.bytes += b.bytes;
          castsBackward.kernels += b.kernels;
        }
      }
      for (unsigned i = 0; i < n->inputs.size(); ++i) {
        const Value *v = n->inputs[i];
        bool fp8 = f8ops && (i == f8ops->first || i == f8ops->second);
        if (v && !(v->kind == Value::Kind::NodeOutput && members.count(v->producer)) && counted.insert(v).second)
          addBytes(v, readPasses(*n, i, setup.train), fp8);
      }
      for (const Value *v : n->outputs) {
        if (!v)
          continue;
        bool leaves = v->isGraphOutput();
        for (const Use &u : v->uses)
          leaves |= !members.count(u.user);
        // A view writes nothing: what leaves through it is the storage it
        // views, written once by the group's kernel (or not at all, when the
        // viewed tensor comes from outside the group).
        const Value *stored = storageOf(v);
        bool inside = stored && stored->kind == Value::Kind::NodeOutput && members.count(stored->producer);
        if (leaves && inside && written.insert(stored).second)
          addBytes(stored);
      }
      // Attention as the target's fused kernel: FlashAttention skips a causal
      // mask's tiles on the GPU; --kernels cpu compares with the CPU's path.
      auto f = nodeFlops(*n, setup.kernels == Kernels::Cuda);
      c.known &= f.has_value();
      double fwd = f.value_or(0);
      // A joint graph's backward nodes are backward work, whichever group
      // (a fusion may cross the phase boundary) they are in.
      KernelTime &phase = hasBackward && n->backwardPhase ? c.backward : c.forward;
      phase.flops += fwd;
      const bool attention = isAttentionKernel(*n);
      if (n->op && n->op->kind == OpKind::Contraction) {
        phase.matmulFlops += fwd;
        if (attention)
          phase.attentionFlops += fwd;
        if (!precision)
          precision = contractionPrecision(*n, setup.precision, capture);
      }
      if (setup.train && !hasBackward) {
        double bwd = backwardFlops(*n, fwd, grad);
        c.backward.flops += bwd;
        if (n->op && n->op->kind == OpKind::Contraction && fwd > 0) {
          c.backward.matmulFlops += bwd;
          if (attention)
            c.backward.attentionFlops += bwd;
          gradOperands = std::max(gradOperands, static_cast<unsigned>(bwd / fwd + 0.5));
        }
        // Data movement (transposes, gathers, concats) has no FLOPs but its
        // backward still moves the gradients.
        backward |= bwd > 0 || std::any_of(n->inputs.begin(), n->inputs.end(), grad);
      }
    }
    // What a member keeps for the synthesised backward from inside the
    // group leaves it all the same: the forward kernel writes it, the
    // backward reads it (as a joint graph's forward group writes what its
    // backward nodes read).
    llvm::DenseSet<const Value *> keptInside;
    for (auto &[v, passes] : saved) {
      v = v ? storageOf(v) : nullptr;
      if (v && !counted.count(v) && !written.count(v) && v->kind == Value::Kind::NodeOutput &&
          members.count(v->producer) && keptInside.insert(v).second)
        addBytes(v);
    }
    c.precision = precision.value_or(MathPrecision::FP32);
    if (fp8Group)
      c.precision = MathPrecision::FP8;  // checkFloat8: the target has fp8 tensor cores
    if (!onTensorCores(c.precision, hw_)) {  // CUDA-core kernels read NCHW as it is
      layoutBytes = backwardLayoutBytes = 0;
      layoutKernels = backwardLayoutKernels = 0;
    }
    c.forward.bytes += layoutBytes + 3 * fusedNormBytes;
    c.forward.layoutBytes = layoutBytes;
    c.forward.serialBytes = 3 * fusedNormBytes;
    c.forward.kernels = g.kernels + layoutKernels + gradientLaunches + fusedNorms;
    if (backward && !fp8Group) {
      // Backward reads each output's gradient and the saved tensors and
      // writes each input's gradient, each once. A contraction launches one
      // kernel per operand gradient (dX, dW).
      llvm::DenseSet<const Value *> seen;
      for (auto [v, passes] : saved)
        if (v && seen.insert(v).second)
          c.backward.bytes += passes * storedBytes(*v, capture).value_or(0);
      for (const Value *v : written)
        c.backward.bytes += (twoPassBackward ? 2 : 1) * (grad(v) ? storedBytes(*v, capture).value_or(0) : 0);
      for (const Value *v : counted)
        c.backward.bytes += gradWritten.count(v) ? storedBytes(*v, capture).value_or(0) : 0;
      c.backward.bytes += backwardLayoutBytes + 5 * fusedNormBytes;
      c.backward.layoutBytes = backwardLayoutBytes;
      c.backward.serialBytes = 5 * fusedNormBytes;
      c.backward.kernels = g.kernels * gradOperands + backwardLayoutKernels + fusedNorms + biasGradients;
    } else if (backward) {
      // The fp8 GEMMs' operands: about twice the forward traffic.
      c.backward.bytes = 2 * c.forward.bytes;
      c.backward.layoutBytes = 2 * c.forward.layoutBytes;
      c.backward.kernels = g.kernels * gradOperands + 2 * layoutKernels;
    } else {
      c.backward.bytes = 0;  // no gradient flows through it
    }
    bool backwardGroup = hasBackward && !g.nodes.empty() && g.nodes.front()->backwardPhase;
    if (backwardGroup) {  // led by a backward node: its traffic and launches are the backward's
      std::swap(c.forward.bytes, c.backward.bytes);
      std::swap(c.forward.layoutBytes, c.backward.layoutBytes);
      std::swap(c.forward.serialBytes, c.backward.serialBytes);
      std::swap(c.forward.kernels, c.backward.kernels);
    }
    if (hw_) {
      timeKernel(c.forward, *hw_, c.precision);
      timeKernel(c.backward, *hw_, c.precision);
    }
    // The casts: memory-bound kernels of their own, serial to the GEMM they feed.
    auto castKernels = [&](const Float8CastTraffic &t, KernelTime &k, KernelTime &phase) {
      k.bytes = t.bytes;
      k.kernels = t.kernels;
      if (hw_)
        timeKernel(k, *hw_, MathPrecision::FP32);
      phase.bytes += k.bytes;
      phase.kernels += k.kernels;
      phase.gpuSeconds += k.gpuSeconds;
      phase.seconds += k.seconds;
    };
    if (castsForward.kernels)
      castKernels(castsForward, c.float8Forward, c.forward);
    if (castsBackward.kernels)
      castKernels(castsBackward, c.float8Backward, c.backward);
    // A checkpointed forward group runs again, as its own kernels, before
    // its backward: its forward work and time are added to the group's
    // backward (a joint graph's forward group has none of its own; the step
    // timeline places it among the graph's backward groups).
    const Node *lead = g.nodes.empty() ? nullptr : g.nodes.front();
    bool recomputed = lead && lead->graph == &main && !lead->backwardPhase && (backward || joint_) &&
                      recompute.recomputed(lead->index);
    if (recomputed) {
      c.recompute = c.forward;
      c.recomputedFlops = c.forward.flops;
      c.backward.flops += c.forward.flops;
      c.backward.matmulFlops += c.forward.matmulFlops;
      c.backward.attentionFlops += c.forward.attentionFlops;
      c.backward.bytes += c.forward.bytes;
      c.backward.layoutBytes += c.forward.layoutBytes;
      c.backward.serialBytes += c.forward.serialBytes;
      c.backward.kernels += c.forward.kernels;
      c.backward.gpuSeconds += c.forward.gpuSeconds;
      c.backward.seconds += c.forward.seconds;
    }
    // Control-flow nodes stay in the schedule (as unknown cost) so the totals
    // say that something was left out.
    // Without --train a joint graph's backward does not run.
    if (g.graph == &main && !g.nodes.empty() && (g.kernels > 0 || g.kind == GroupKind::ControlFlow) &&
        (setup.train || !backwardGroup))
      schedule_.push_back(static_cast<unsigned>(gi));
  }
  std::stable_sort(schedule_.begin(), schedule_.end(), [&](unsigned a, unsigned b) {
    const Node *x = plan.groups()[a].nodes.front(), *y = plan.groups()[b].nodes.front();
    if (joint_ && x->backwardPhase != y->backwardPhase)
      return !x->backwardPhase;  // forward groups first (a fused group may start earlier)
    return x->index < y->index;
  });
  backwardStart_ = schedule_.size();
  if (joint_)
    for (size_t i = 0; i < schedule_.size(); ++i)
      if (plan.groups()[schedule_[i]].nodes.front()->backwardPhase) {
        backwardStart_ = i;
        break;
      }

  llvm::DenseMap<unsigned, int> position;  // group index -> place in the schedule
  // The model FLOPs (recomputation excluded) per contraction precision, and
  // the rest: MFU's denominator and the precision most contractions run in.
  std::map<MathPrecision, double> contractionFlops;
  double otherFlops = 0;
  std::optional<MathPrecision> firstContraction;
  for (size_t i = 0; i < schedule_.size(); ++i) {
    position[schedule_[i]] = static_cast<int>(i);
    const GroupCost &c = groups_[schedule_[i]];
    if (!firstContraction && c.forward.matmulFlops > 0)
      firstContraction = c.precision;
    if (!c.known) {
      ++unknownGroups_;
      continue;
    }
    double mm = c.forward.matmulFlops + c.backward.matmulFlops - (c.recomputedFlops > 0 ? c.recompute.matmulFlops : 0);
    if (mm > 0)
      contractionFlops[c.precision] += mm;
    otherFlops += c.forward.flops + c.backward.flops - c.recomputedFlops - mm;
    add(forward_, c.forward);
    add(backward_, c.backward);
    recomputedFlops_ += c.recomputedFlops;
    add(float8CastsForward_, c.float8Forward);
    add(float8CastsBackward_, c.float8Backward);
    if (c.precision == MathPrecision::FP8) {
      fp8Forward_ += c.forward.matmulFlops;
      fp8Backward_ += c.backward.matmulFlops;
    }
  }
  // The precision most contraction FLOPs run in; the float8 GEMMs are
  // reported apart (the others are "left in" this one). With no costed
  // contraction: the first one seen, or the policy's.
  double most = 0;
  for (const auto &[p, flops] : contractionFlops)
    if (p != MathPrecision::FP8 && flops > most) {
      most = flops;
      matmulPrecision_ = p;
    }
  if (most == 0)
    matmulPrecision_ = firstContraction && *firstContraction != MathPrecision::FP8
                           ? *firstContraction
                           : capture.contractionMath(DType::Float).value_or(MathPrecision::FP32);
  // MFU's denominator: each FLOP at the dense peak of the math it runs in
  // (timeKernel's, efficiencies aside), the non-contraction FLOPs at the
  // fastest of them, so that no kernel is timed faster than its ideal.
  if (hw_) {
    double fastest = hw_->peakFor(MathPrecision::FP32);
    for (const auto &[p, flops] : contractionFlops) {
      double peak = hw_->peakFor(runsAt(*hw_, p));
      fastest = std::max(fastest, peak);
      peakSeconds_ += peak > 0 ? flops / peak : 0;
    }
    peakSeconds_ += fastest > 0 ? std::max(0.0, otherFlops) / fastest : 0;
  }
  // A joint graph's parameter gradients: the backward graph outputs, in the
  // exporter's order (the forward outputs, then one gradient per trainable
  // parameter in parameter order).
  if (joint_) {
    std::vector<const Value *> grads;
    for (const Value *o : main.outputs)
      if (o && o->producer && o->producer->backwardPhase)
        grads.push_back(o);
    if (grads.size() >= params_.size())
      for (size_t i = 0; i < params_.size(); ++i) {
        // A gradient the graph returns through a view (`t` of the mm that
        // computed it) is ready when that kernel is: walk back through
        // kernel-less producers to one in the schedule.
        const Node *producer = grads[i]->producer;
        auto it = position.end();
        for (unsigned steps = 0; producer && steps < 8; ++steps) {
          it = position.find(static_cast<unsigned>(&plan.groupOf(*producer) - plan.groups().data()));
          if (it != position.end() || producer->inputs.empty() || !producer->inputs[0])
            break;
          producer = producer->inputs[0]->producer;
        }
        auto n = grads[i]->type.shape.numElements();
        if (it != position.end() && n && static_cast<double>(*n) == params_[i].elements)
          params_[i].gradGroup = it->second;
      }
  }
  // The first forward kernel that reads each parameter, looking through
  // kernel-less readers (a joint graph's `t` view of a weight) to theirs;
  // backward readers never count (they would put its use after the forward).
  for (TrainableParam &p : params_) {
    llvm::SmallVector<std::pair<const Value *, unsigned>, 8> work{{p.value, 0}};
    while (!work.empty()) {
      auto [v, depth] = work.pop_back_val();
      for (const Use &u : v->uses) {
        if (u.user->backwardPhase)
          continue;
        auto it = position.find(static_cast<unsigned>(&plan.groupOf(*u.user) - plan.groups().data()));
        if (it != position.end()) {
          if (p.firstGroup < 0 || it->second < p.firstGroup)
            p.firstGroup = it->second;
        } else if (depth < 4) {
          for (const Value *o : u.user->outputs)
            if (o)
              work.push_back({o, depth + 1});
        }
      }
    }
  }
}

std::vector<double> kernelShares(const FusionGroup &g) {
  auto runsKernel = [](const Node &n) { return n.op && n.op->kind != OpKind::ShapeOnly && !isViewOp(n); };
  size_t kernels = 0;
  for (const Node *n : g.nodes)
    kernels += runsKernel(*n);
  std::vector<double> shares;
  shares.reserve(g.nodes.size());
  for (const Node *n : g.nodes)
    shares.push_back(kernels == 0 ? 1.0 / static_cast<double>(g.nodes.size())
                     : runsKernel(*n) ? 1.0 / static_cast<double>(kernels)
                                      : 0.0);
  return shares;
}

}  // namespace graphlint
