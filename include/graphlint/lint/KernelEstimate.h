// Roofline-lite kernel estimates: the bytes a fusion group moves, the FLOPs its
// contractions perform, and the time that takes on a hardware profile at
// datasheet peaks. A deliberately small placeholder for the cost model (BRIEF
// "Compute"), which will replace estimateGroup with efficiencies and
// per-op formulas; GL142 is its only reader until then.
#pragma once

#include "graphlint/lint/FusionPlan.h"
#include "graphlint/lint/HardwareProfile.h"

#include <optional>

namespace graphlint {

/// 2*M*N*K-style FLOPs of a contraction node (MatMul, Gemm, Conv,
/// ConvTranspose and their integer/quantized forms) from static shapes;
/// 0 for other ops; nullopt when a shape it needs is not static.
std::optional<double> contractionFlops(const Node &n);

struct KernelEstimate {
  double bytes = 0;      // group inputs read + outputs written once
  double flops = 0;      // contractions only (pointwise work is bandwidth-bound)
  MathPrecision precision = MathPrecision::FP32;
  double seconds = 0;    // rooflineSeconds(hw, flops, precision, bytes)
};

/// The estimate for one fusion group, or nullopt when a tensor it reads or
/// writes has no static size (the group's cost is unknown).
std::optional<KernelEstimate> estimateGroup(const FusionGroup &g, const HardwareProfile &hw);

}  // namespace graphlint
