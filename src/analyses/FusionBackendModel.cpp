// What the backend models share (FusionBackendModel.h): the profile -> model
// table, the default answers, and the op facts more than one model reads.
#include "FusionBackendModel.h"

#include "graphlint/ir/OpRegistry.h"
#include "graphlint/ir/ValueFacts.h"

#include <llvm/ADT/StringSwitch.h>

namespace graphlint {

using namespace fusion_detail;

std::unique_ptr<FusionBackendModel> makeFusionBackendModel(FusionBackend b) {
  switch (b) {
  case FusionBackend::Inductor: return makeInductorModel();
  case FusionBackend::InductorCpu: return makeInductorCpuModel();
  case FusionBackend::TensorRT: return makeTensorRtModel();
  case FusionBackend::OrtCpu: return makeOrtModel(/*cudaEp=*/false);
  case FusionBackend::OrtCuda: return makeOrtModel(/*cudaEp=*/true);
  case FusionBackend::Eager: return makeEagerModel();
  }
  return makeInductorModel();
}

void FusionDraft::merge(unsigned into, unsigned from) {
  if (into == from)
    return;
  for (const Node *member : groups[from].nodes) {
    groups[into].nodes.push_back(member);
    groupIndex[member] = into;
  }
  groups[from].nodes.clear();
  groups[from].kernels = 0;
  state[from].closed = true;
}

GroupKind FusionBackendModel::kindOf(const Node &n) const { return registryGroupKind(n); }

std::optional<BreakReason> FusionBackendModel::epilogueRefusal(const FusionJoin &j) const {
  if (j.k != GroupKind::Pointwise || j.state.epilogue >= maxEpilogue())
    return BreakReason::ReductionBoundary;
  if (j.n.op && j.n.op->kind == OpKind::Injective && !isLayoutChange(j.n))
    return BreakReason::ReductionBoundary;
  if (isLayoutChange(j.n))
    return BreakReason::LayoutChange;
  return std::nullopt;
}

namespace fusion_detail {

namespace {

// Ops that are kernels of their own for every backend we model.
bool isOpaque(const Node &n) {
  return llvm::StringSwitch<bool>(n.opType)
      .Cases("TopK", "LSTM", "GRU", "RNN", "Multinomial", "RandomNormal", "RandomUniform", true)
      .Cases("RandomNormalLike", "RandomUniformLike", "Bernoulli", "MemcpyToHost", "MemcpyFromHost", true)
      .Cases("Scatter", "ScatterElements", "ScatterND", "TensorScatter", true)
      .Cases("RoiAlign", "MaxRoiPool", "Resize", "Upsample", true)
      .Default(false);
}

}  // namespace

GroupKind registryGroupKind(const Node &n) {
  if (!n.op || !n.op->known)
    return GroupKind::Unknown;
  if (isOpaque(n))
    return GroupKind::Opaque;
  if (isTrainingOnnxBatchNorm(n))
    return GroupKind::Reduction;  // batch statistics, not an epilogue's affine
  switch (n.op->kind) {
  case OpKind::Pointwise: case OpKind::Broadcast: case OpKind::Injective: return GroupKind::Pointwise;
  case OpKind::Reduction: return GroupKind::Reduction;
  case OpKind::Contraction: return GroupKind::Contraction;
  case OpKind::ShapeOnly: return GroupKind::ShapeOnly;
  case OpKind::ControlFlow: return GroupKind::ControlFlow;
  case OpKind::DataDependentOutput: return GroupKind::HostSync;
  case OpKind::Collective: return GroupKind::Collective;
  case OpKind::Unknown: return GroupKind::Unknown;
  }
  return GroupKind::Unknown;
}

bool isLayoutChange(const Node &n) {
  return llvm::StringSwitch<bool>(n.opType)
      .Cases("Transpose", "DepthToSpace", "SpaceToDepth", true)
      .Default(false);
}

bool isDataMovement(const Node &n) { return (n.op && n.op->kind == OpKind::Injective) || isLayoutChange(n); }

bool onlyFirstOutputUsed(const Node &n) {
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (n.outputs[i] && (!n.outputs[i]->uses.empty() || n.outputs[i]->isGraphOutput()))
      return false;
  return true;
}

bool isNoopCast(const Node &n) {
  if (n.opType == "Dropout")  // inference Dropout: EliminateDropout
    return onlyFirstOutputUsed(n) && !isTrainingOnnxDropout(n) &&
           (n.inputs.size() < 3 || !n.inputs[2] || isFoldedConstant(n.inputs[2], /*throughCasts=*/true));
  const Value *in = n.inputs.empty() ? nullptr : n.inputs[0];
  const Value *out = n.outputs.empty() ? nullptr : n.outputs[0];
  return n.opType == "Cast" && in && out && in->type.dtype == out->type.dtype && in->type.dtype != DType::Undefined;
}

bool isFloatCast(const Node &n) {
  if (!isOnnxCast(n))
    return false;
  const Value *in = n.inputs.empty() ? nullptr : n.inputs[0];
  const Value *out = n.outputs.empty() ? nullptr : n.outputs[0];
  return in && out && isFloating(in->type.dtype) && isFloating(out->type.dtype) && in->type.dtype != out->type.dtype;
}

// Max/average pooling over windows (not the global or adaptive kind, a true
// reduction): Inductor lowers it to a pointwise loop whose body reads a window.
bool isWindowPool(const Node &n) {
  return llvm::StringSwitch<bool>(n.opType)
      .Cases("MaxPool", "AveragePool", "max_pool2d", "max_pool2d_with_indices", "avg_pool2d", true)
      .Cases("_low_memory_max_pool_with_offsets", "max_pool3d", "avg_pool3d", true)
      .Default(false);
}

bool mixesFloatDtypes(const Node &n, const Value *v) {
  if (!v->type.isTensor() || !n.op || n.op->kind == OpKind::ShapeOnly)
    return false;
  for (const Value *in : n.inputs)
    if (in && in != v && isFloating(in->type.dtype) && isFloating(v->type.dtype) && in->type.dtype != v->type.dtype)
      return true;
  return false;
}

}  // namespace fusion_detail
}  // namespace graphlint
