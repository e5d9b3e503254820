// Element types of tensors, numbered exactly as ONNX's TensorProto.DataType so
// that files from any ONNX version (float8, int4, int2 included) map 1:1, even
// when the installed ONNX library predates those types.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace graphlint {

enum class DType : uint8_t {
  Undefined = 0,
  Float = 1,
  UInt8 = 2,
  Int8 = 3,
  UInt16 = 4,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  String = 8,
  Bool = 9,
  Float16 = 10,
  Double = 11,
  UInt32 = 12,
  UInt64 = 13,
  Complex64 = 14,
  Complex128 = 15,
  BFloat16 = 16,
  Float8E4M3FN = 17,
  Float8E4M3FNUZ = 18,
  Float8E5M2 = 19,
  Float8E5M2FNUZ = 20,
  UInt4 = 21,
  Int4 = 22,
  Float4E2M1 = 23,
  Float8E8M0 = 24,
  UInt2 = 25,
  Int2 = 26,
};

inline constexpr int kMaxDType = 26;

/// ONNX spelling: "FLOAT", "FLOAT16", "BFLOAT16", "FLOAT8E4M3FN", ...
std::string_view dtypeName(DType t);
/// Short spelling used in messages: f32, f16, bf16, i64, ...
std::string_view dtypeShortName(DType t);
std::optional<DType> dtypeFromName(std::string_view onnxName);
/// Maps a raw ONNX data_type code; codes outside the known range yield nullopt.
std::optional<DType> dtypeFromCode(int64_t code);

/// Bits per element; 0 for STRING and UNDEFINED (no fixed width).
unsigned dtypeBits(DType t);
bool isFloating(DType t);
bool isInteger(DType t);

}  // namespace graphlint
