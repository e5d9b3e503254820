// TorchInductor's C++ backend (docs/fusion.md#backend-profiles, validated on
// 22 models): Inductor's rules, except that mm/addmm/bmm/convolution and SDPA
// are extern library calls (mkldnn, MKL) that take no epilogue, cumsum and
// cumprod call aten (no scan codegen), and what runs as one kernel call is
// the C++ function Inductor emits between two library calls, which depends on
// its schedule (InductorCpuLaunches.cpp).
#include "InductorCpuLaunches.h"
#include "InductorFusion.h"

namespace graphlint {

namespace {

class InductorCpuFusion final : public InductorFusion {
public:
  GroupKind kindOf(const Node &n) const override {
    if (n.opType == "cumsum" || n.opType == "cumprod" || n.opType == "CumSum")
      return GroupKind::Opaque;
    return InductorFusion::kindOf(n);
  }
  std::optional<BreakReason> refusal(const FusionJoin &j) const override {
    if (auto why = InductorFusion::refusal(j))
      return why;
    if (j.group.kind == GroupKind::Contraction)
      return BreakReason::ReductionBoundary;  // a library call takes no epilogue, however many read it
    return std::nullopt;
  }
  unsigned maxEpilogue() const override { return 0; }
  void afterPlan(const Graph &g, std::vector<FusionGroup> &groups,
                 const llvm::DenseMap<const Node *, unsigned> &groupIndex) const override {
    fusion_detail::assignInductorCpuLaunches(g, groups, groupIndex);
  }
};

}  // namespace

std::unique_ptr<FusionBackendModel> makeInductorCpuModel() { return std::make_unique<InductorCpuFusion>(); }

}  // namespace graphlint
