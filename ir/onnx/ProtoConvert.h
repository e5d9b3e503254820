// Conversions between ONNX protobuf messages and IR types, shared by the ONNX
// importer and its shape completion.
#pragma once

#include "graphlint/ir/Graph.h"

#include <onnx/onnx_pb.h>

namespace graphlint::onnxio {

/// dim_params named "unk__N" are ONNX's own placeholders, not user names.
bool isPlaceholderSymbol(const std::string &s);

Type typeFromProto(const onnx::TypeProto &t);
void typeToProto(const Type &t, onnx::TypeProto &out);

/// Metadata of a tensor (and the values of small retained payloads).
TensorLiteral literalFromTensor(const onnx::TensorProto &t);
void attributeFromProto(const onnx::AttributeProto &a, Attribute &out);

/// Decodes a retained (small) payload into ints/floats; false when absent.
bool decodeSmallPayload(const onnx::TensorProto &t, ConstData &out);

}  // namespace graphlint::onnxio
