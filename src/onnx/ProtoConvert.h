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

/// Makes every `string` field of `m` and of the messages it holds valid UTF-8
/// (MessageText.h's makeValidUtf8; `bytes` fields such as payloads and string
/// attributes are left alone). ONNX requires UTF-8, but proto2 parsing does not
/// check it. Returns how many strings were repaired; `first` gets the first one
/// as repaired. Nesting is bounded by the parser's recursion limit.
size_t makeStringsValidUtf8(google::protobuf::Message &m, std::string *first = nullptr);

/// The `metadata_props` (StringStringEntryProto) an ONNX newer than the
/// installed one keeps in field `field` of `m` (NodeProto 9, ValueInfoProto 4,
/// GraphProto 16): they survive parsing as unknown fields. Strings are made
/// valid UTF-8.
std::vector<std::pair<std::string, std::string>> newerMetadataProps(const google::protobuf::Message &m, int field);

/// Decodes a retained (small) payload into ints/floats; false when absent.
bool decodeSmallPayload(const onnx::TensorProto &t, ConstData &out);

}  // namespace graphlint::onnxio
