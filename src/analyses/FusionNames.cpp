// The fusion planner's vocabulary: boundary reasons and group kinds, as users
// read them (docs/fusion.md). One table each, so the CLI and the reporters
// print the same names. The backend profile names live with the setup that
// holds them (src/base/Setup.cpp).
#include "graphlint/analyses/FusionPlan.h"

namespace graphlint {

std::string_view breakReasonName(BreakReason r) {
  switch (r) {
  case BreakReason::DtypeMismatch: return "dtype_mismatch";
  case BreakReason::CrossDevice: return "cross_device";
  case BreakReason::HostSync: return "host_sync";
  case BreakReason::ControlFlow: return "control_flow";
  case BreakReason::DataDependentShape: return "data_dependent_shape";
  case BreakReason::InplaceAlias: return "inplace_alias";
  case BreakReason::OpaqueOp: return "opaque_op";
  case BreakReason::UnknownOp: return "unknown_op";
  case BreakReason::MultiConsumer: return "multi_consumer";
  case BreakReason::GraphOutput: return "graph_output";
  case BreakReason::ReductionBoundary: return "reduction_boundary";
  case BreakReason::LayoutChange: return "layout_change";
  }
  return "reduction_boundary";
}

bool isFusionBreaker(BreakReason r) {
  switch (r) {
  case BreakReason::DtypeMismatch: case BreakReason::CrossDevice: case BreakReason::HostSync:
  case BreakReason::ControlFlow: case BreakReason::DataDependentShape: case BreakReason::InplaceAlias:
  case BreakReason::OpaqueOp: case BreakReason::UnknownOp:
    return true;
  default:
    return false;
  }
}

std::string_view groupKindName(GroupKind k) {
  switch (k) {
  case GroupKind::Pointwise: return "pointwise";
  case GroupKind::Reduction: return "reduction";
  case GroupKind::Contraction: return "contraction";
  case GroupKind::ShapeOnly: return "shape-only";
  case GroupKind::ControlFlow: return "control-flow";
  case GroupKind::HostSync: return "host-sync";
  case GroupKind::Opaque: return "opaque";
  case GroupKind::Unknown: return "unknown";
  case GroupKind::Collective: return "collective";
  }
  return "pointwise";
}

}  // namespace graphlint
