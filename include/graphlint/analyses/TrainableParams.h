// Which parameters a training step updates: the one answer the memory plan
// (gradients, optimizer state) and the compute and communication models
// (backward FLOPs, DDP buckets) share. An FX graph says it (requires_grad,
// buffers marked); an ONNX file says it when it carries training info
// (ModelProto.training_info's update_binding). Otherwise it is inferred
// (docs/memory.md "Which initializers are parameters"): a floating-point
// initializer with more than one element whose value can reach a graph
// output through operands a gradient flows into -- not BatchNorm's running
// statistics, not a tensor only read through comparisons, casts to integers
// or other non-differentiable ops (a causal mask compared with 0), not
// Resize's scales or Clip's bounds.
#pragma once

#include "graphlint/ir/Graph.h"

#include <vector>

namespace graphlint {

/// The trained parameters of the main graph, in parameter order.
std::vector<const Value *> trainableParams(const Graph &g);

}  // namespace graphlint
