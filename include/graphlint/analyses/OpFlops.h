// Per-op FLOP formulas for the compute model (docs/cost-model.md): what one
// node computes in the forward pass and what its backward costs, from static
// shapes. A FLOP is one multiply or one add: a multiply-accumulate is two.
// Contractions (matmuls, convolutions, recurrent cells) are counted exactly;
// elementwise work is one FLOP per output element, reductions and
// normalisations a few per input element. Ops whose work the graph cannot
// show (control flow, unknown ops) have no formula.
#pragma once

#include "graphlint/ir/Graph.h"

#include <functional>
#include <optional>

namespace graphlint {

/// 2*M*N*K-style FLOPs of a contraction node (MatMul, Gemm, Conv,
/// ConvTranspose, Einsum, LSTM/GRU/RNN, their integer/quantized forms and the
/// aten mm/bmm/addmm/linear/convolution of FX graphs); 0 for other ops;
/// nullopt when a shape it needs is not static or the op has no formula.
std::optional<double> contractionFlops(const Node &n, bool flashKernels = true);

/// A fused attention kernel: scaled_dot_product_attention, the aten
/// _scaled_dot_product_* kernels it dispatches to and _flash_attention_*,
/// forward or backward. The cost model times their FLOPs at the target's
/// attention efficiency (HardwareProfile::attentionEfficiencyFor).
bool isAttentionKernel(const Node &n);

/// The gradients an aten::convolution_backward computes of the input and
/// the weight (its output_mask; the bias gradient is a reduction): each is a
/// convolution of its own, cuDNN's dgrad and wgrad kernels. 0 for other ops.
unsigned convolutionBackwardGradients(const Node &n);

/// FLOPs of a fused attention kernel (scaled_dot_product_attention and the
/// aten kernels it dispatches to, forward or backward), as the kernel runs
/// it (FlashAttention-2, Dao 2023): forward 2·b·h·s_q·s_k·(d + d_v) (QK^T and
/// PV; 4·b·h·s²·d for equal heads), halved for a causal mask (is_causal, or
/// a mask input isCausalMask proves causal) when `flashKernels` (the GPU's
/// kernels skip the masked tiles; the CPU's math path does not); a backward
/// kernel 2.5x its forward. No s² softmax is materialised: the bytes are the
/// operands, the output and the logsumexp. nullopt when a size is not static
/// or `n` is no attention kernel.
std::optional<double> attentionFlops(const Node &n, bool flashKernels = true);

/// Forward FLOPs of any node: contractionFlops for contractions, otherwise
/// the elementwise/reduction estimate above; 0 for data movement and shape
/// ops; nullopt when a size is unknown or the op has no formula.
std::optional<double> nodeFlops(const Node &n, bool flashKernels = true);

/// Backward FLOPs of a node whose forward costs `forward`, given which inputs
/// need a gradient: a contraction computes one product of its forward size per
/// operand (of its first two) that needs one -- dX and dW, so ~2x forward, 1x
/// for a first layer whose input is data; a fused attention kernel's backward
/// 2.5x its forward; any other op costs ~1x forward when some input needs a
/// gradient; nothing needs none.
double backwardFlops(const Node &n, double forward, const std::function<bool(const Value *)> &needsGrad);

}  // namespace graphlint
