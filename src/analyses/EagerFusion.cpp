// PyTorch eager, no torch.compile (docs/fusion.md#backend-profiles): every
// aten op but a view launches a kernel of its own, which reads its inputs
// from and writes its outputs to memory. Calibrated by the step-time model's
// eager rows (docs/validation.md).
#include "FusionBackendModel.h"

namespace graphlint {

namespace {

class EagerFusion final : public FusionBackendModel {
public:
  std::optional<BreakReason> refusal(const FusionJoin &) const override {
    return BreakReason::ReductionBoundary;  // one kernel per op
  }
  unsigned maxEpilogue() const override { return 0; }
  // Data movement closes its group as on every non-fusing backend: a view of
  // a gather's output is a shape-only group of its own, not part of the gather.
  bool runsAlone(const Node &n) const override { return fusion_detail::isDataMovement(n); }
};

}  // namespace

std::unique_ptr<FusionBackendModel> makeEagerModel() { return std::make_unique<EagerFusion>(); }

}  // namespace graphlint
