// Completes the types and shapes of every value: ONNX's own per-op inference
// (with data propagation) where the installed library knows the op at the
// model's opset, graphlint's fallback elsewhere, node by node in topological
// order so that one unknown op never stops the rest of the graph.
#pragma once

#include "GraphBuilder.h"
#include "graphlint/ir/ImportOptions.h"

namespace graphlint::onnxio {

void completeShapes(Model &model, GraphBuilder &builder, onnx::ModelProto &proto, const ImportOptions &opts);

}  // namespace graphlint::onnxio
