// The fusion planner's vocabulary: backend profile names and their aliases,
// boundary reasons and group kinds, as users write and read them
// (docs/fusion.md). One table each, so the CLI, the config and the reporters
// print the same names.
#include "graphlint/lint/FusionPlan.h"

namespace graphlint {

std::string_view fusionBackendName(FusionBackend b) {
  switch (b) {
  case FusionBackend::Inductor: return "inductor";
  case FusionBackend::InductorCpu: return "inductor-cpu";
  case FusionBackend::TensorRT: return "tensorrt";
  case FusionBackend::OrtCpu: return "ort-cpu";
  case FusionBackend::OrtCuda: return "ort-cuda";
  case FusionBackend::Eager: return "eager";
  }
  return "inductor";
}

// The one list of backend names and aliases (docs/fusion.md#backend-profiles):
// `ort` was one profile for both execution providers; it now names the CPU
// one, the one the comparison harness validates.
std::optional<FusionBackend> fusionBackendFromName(std::string_view s) {
  if (s == "inductor" || s == "inductor-cuda") return FusionBackend::Inductor;
  if (s == "inductor-cpu") return FusionBackend::InductorCpu;
  if (s == "tensorrt" || s == "trt") return FusionBackend::TensorRT;
  if (s == "ort-cpu" || s == "ort" || s == "onnxruntime") return FusionBackend::OrtCpu;
  if (s == "ort-cuda") return FusionBackend::OrtCuda;
  if (s == "eager" || s == "none") return FusionBackend::Eager;
  return std::nullopt;
}

const char *fusionBackendChoices() { return "inductor, inductor-cpu, tensorrt, ort-cpu (ort), ort-cuda, eager"; }

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
