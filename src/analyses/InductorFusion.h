// TorchInductor's fusion legality on CUDA (Triton), the model the inductor-cpu
// profile refines (InductorCpuFusion.cpp). Planner-internal, not a public header.
#pragma once

#include "FusionBackendModel.h"

namespace graphlint {

class InductorFusion : public FusionBackendModel {
public:
  GroupKind kindOf(const Node &n) const override;
  bool recomputesHostValues() const override { return true; }
  std::optional<BreakReason> refusal(const FusionJoin &j) const override;
  bool multiOutputGroups() const override { return true; }
  unsigned maxEpilogue() const override { return 8; }
};

}  // namespace graphlint
