// TorchInductor on CUDA (docs/fusion.md#backend-profiles): casts, index math
// (gather, slice, concat, pad) and transposes fuse into pointwise loop nests;
// groups export intermediates (multi-output kernels) and siblings fuse
// horizontally; a contraction takes up to 8 pointwise epilogue ops (Triton
// GEMM/conv templates, max-autotune). Pooling over windows is a pointwise
// loop, and values computed from indices are recomputed in the kernels that
// read them. Modelled from Inductor's scheduler rules; the device-independent
// ones are those validated on the CPU.
#include "InductorFusion.h"

namespace graphlint {

using namespace fusion_detail;

namespace {

// ai.onnx Resize/Upsample in nearest mode (the default): torch.onnx's
// export of F.interpolate(mode="nearest"), which Inductor decomposes into
// an index computation (aten._unsafe_index, as an FX capture records it),
// a pointwise loop that fuses with its neighbours.
bool isNearestResize(const Node &n) {
  if (!n.domain.empty() || (n.opType != "Resize" && n.opType != "Upsample"))
    return false;
  const Attribute *mode = n.attr("mode");
  return !mode || mode->s == "nearest";
}

}  // namespace

GroupKind InductorFusion::kindOf(const Node &n) const {
  if (isWindowPool(n) || isNearestResize(n))
    return GroupKind::Pointwise;  // a loop whose body reads a window, or an index
  return FusionBackendModel::kindOf(n);
}

std::optional<BreakReason> InductorFusion::refusal(const FusionJoin &j) const {
  if (j.group.kind == GroupKind::Contraction && isWindowPool(j.n))
    return BreakReason::ReductionBoundary;  // a window read is no GEMM-template epilogue
  return std::nullopt;
}

std::unique_ptr<FusionBackendModel> makeInductorModel() { return std::make_unique<InductorFusion>(); }

}  // namespace graphlint
