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
std::optional<double> contractionFlops(const Node &n);

/// Forward FLOPs of any node: contractionFlops for contractions, otherwise
/// the elementwise/reduction estimate above; 0 for data movement and shape
/// ops; nullopt when a size is unknown or the op has no formula.
std::optional<double> nodeFlops(const Node &n);

/// Backward FLOPs of a node whose forward costs `forward`, given which inputs
/// need a gradient: a contraction computes one product of its forward size per
/// operand (of its first two) that needs one -- dX and dW, so ~2x forward, 1x
/// for a first layer whose input is data; any other op costs ~1x forward when
/// some input needs a gradient; nothing needs none.
double backwardFlops(const Node &n, double forward, const std::function<bool(const Value *)> &needsGrad);

}  // namespace graphlint
