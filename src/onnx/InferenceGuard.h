// ONNX 1.12's shape-inference and data-propagation functions trust the node
// they are given: a missing required input, an empty input name, a zero
// stride, a kernel whose rank differs from the input's, a 2^39 spatial dim or
// a local function that calls itself crash or hang inside libonnx, where no
// signal can be caught. The guard says, before the call, why a node must not
// be handed to them. It is driven by the node's schema (arity, formal
// parameters, required and typed attributes) plus the few numeric ranges the
// conv/pool family needs; the nodes it refuses get graphlint's own checked
// fallback inference instead.
#pragma once

#include <llvm/ADT/StringMap.h>

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <optional>
#include <set>
#include <string>
#include <unordered_map>

namespace graphlint::onnxio {

/// Windowed ops (those with a `strides` attribute) whose spatial input dims
/// exceed this are not handed to ONNX 1.12: its convPoolShapeInference steps
/// through a dim one stride at a time (2^34 takes 4 s).
inline constexpr int64_t kMaxWindowedDim = int64_t(1) << 24;

struct InferenceHazard {
  std::string reason;   // "input 2 ('R') is required but its name is empty"
  bool invalid = true;  // the node breaks its schema (GL001); false: valid but beyond what ONNX handles
};

struct GuardScope {
  const std::unordered_map<std::string, onnx::TypeProto *> &types;  // value types seen so far
  const std::unordered_map<std::string, int> &opsets;               // domain ("" for ai.onnx) -> version
  const onnx::shape_inference::ModelLocalFunctionsMap &functions;   // "domain:name" -> body
  const std::set<std::string> &recursiveFunctions;                  // "domain:name" of functions in call cycles
  std::set<std::string> &safeFunctions;  // bodies found safe so far (their checks do not depend on the call)
  /// The installed schema of each (domain, op, version) asked for so far and
  /// whether it is current: the registry's lookups compare strings in nested
  /// maps, a guard per node on a million nodes asks a million times. Optional.
  llvm::StringMap<std::pair<const onnx::OpSchema *, bool>> *schemas = nullptr;
};

/// Why ONNX inference (and data propagation) must not run on `np`, or nullopt
/// when it is safe to call. Looks through subgraph attributes and the bodies
/// of model-local functions it calls, which libonnx would infer too.
std::optional<InferenceHazard> onnxInferenceHazard(const onnx::NodeProto &np, const GuardScope &scope);

/// "domain:name" of every model-local function that can reach itself through
/// calls (direct or mutual recursion), in call-graph order; `cycles` gets one
/// description per cycle ("local:F -> local:G -> local:F").
std::set<std::string> recursiveFunctions(const onnx::ModelProto &model, std::vector<std::string> &cycles);

}  // namespace graphlint::onnxio
