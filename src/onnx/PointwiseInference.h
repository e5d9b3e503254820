// ONNX's own shape inference result for the pointwise ops that make up most of
// a large graph (Add, Mul, Relu, Sigmoid...), computed straight from the input
// TypeProtos. Building ONNX's InferenceContextImpl and checking the type
// constraints through its string-keyed type table costs ~4 µs a node, most of
// a million-node lint; these ops' inference functions are one line of
// element-type propagation and numpy broadcasting, restated here exactly
// (onnx/defs/math/defs.cc: propagateShapeAndTypeFromFirstInput,
// bidirectionalBroadcastShapeInference). Anything else, or any case where
// ONNX would fail, is left to ONNX (the caller's fallback path).
#pragma once

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

namespace graphlint::onnxio {

enum class PointwiseKind : uint8_t { None, Unary, Binary };

/// Whether `schema` (one op at one version) is one of the ops restated here.
PointwiseKind pointwiseKind(const onnx::OpSchema &schema);

/// The output type ONNX's inference function would give, into `out` (cleared
/// first). False when an input is not a tensor with a known element type and
/// a shape, or when ONNX would reject the shapes: then ONNX runs instead and
/// reports what it reports.
bool inferPointwise(PointwiseKind kind, const onnx::TypeProto *const *inputs, onnx::TypeProto &out);

}  // namespace graphlint::onnxio
