// graphlint's own type and shape inference for ops the installed ONNX library
// does not know, or knows only in an older form (opset 18+ changes such as
// Reduce* taking axes as an input). It works on IR types and known constant
// values, and is used only where ONNX's own inference cannot be trusted.
#pragma once

#include "graphlint/ir/Graph.h"

#include <optional>
#include <vector>

namespace graphlint::onnxio {

struct FallbackContext {
  const Node &node;
  std::vector<Type> inputs;                                 // Unknown when absent
  std::vector<std::optional<std::vector<int64_t>>> values;  // known integer contents
  std::vector<std::optional<std::vector<double>>> floats;   // known float contents
  std::vector<Type> outputs;                                // filled by inference
  std::vector<std::string> problems;  // what makes the node invalid (a stride of 0, no outputs)
};

/// Fills ctx.outputs; returns false when the op has no fallback rule or the
/// inputs are too unknown to say anything. Arithmetic is overflow-checked: a
/// dim that would overflow stays unknown. Attribute values that make the node
/// invalid are described in ctx.problems (the caller reports them as GL001).
bool inferFallback(FallbackContext &ctx);

/// Keeps what `better` knows that `t` does not: a rank where `t` has none,
/// static or named dims where `t` has unknown ones. Returns true on change.
bool refineType(Type &t, const Type &better);

/// Numpy-style broadcast of static/symbolic dims; nullopt when incompatible.
std::optional<Shape> broadcastShapes(const std::vector<const Shape *> &shapes);

}  // namespace graphlint::onnxio
