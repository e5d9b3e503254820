// TensorRT (docs/fusion.md#backend-profiles, modelled: no TensorRT here):
// only pointwise chains without precision changes fuse; casts between float
// types, index math and transposes run as kernels of their own; a value read
// by another group ends its group (no multi-output kernels, no horizontal
// fusion); a contraction takes up to 3 pointwise epilogue ops.
#include "FusionBackendModel.h"

#include "graphlint/ir/OpRegistry.h"

namespace graphlint {

using namespace fusion_detail;

namespace {

class TensorRtFusion final : public FusionBackendModel {
public:
  std::optional<BreakReason> refusal(const FusionJoin &j) const override {
    if (isFloatCast(j.n) || mixesFloatDtypes(j.n, j.v))
      return BreakReason::DtypeMismatch;
    if (isDataMovement(j.n))
      return BreakReason::LayoutChange;
    return std::nullopt;
  }
  unsigned maxEpilogue() const override { return 3; }
  bool runsAlone(const Node &n) const override { return isDataMovement(n); }
};

}  // namespace

std::unique_ptr<FusionBackendModel> makeTensorRtModel() { return std::make_unique<TensorRtFusion>(); }

}  // namespace graphlint
