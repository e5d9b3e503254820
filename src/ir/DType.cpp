#include "graphlint/ir/DType.h"

#include <array>

namespace graphlint {
namespace {

struct DTypeFacts {
  std::string_view onnx;
  std::string_view shortName;
  unsigned bits;
};

constexpr std::array<DTypeFacts, kMaxDType + 1> kFacts{{
    {"UNDEFINED", "?", 0},
    {"FLOAT", "f32", 32},
    {"UINT8", "u8", 8},
    {"INT8", "i8", 8},
    {"UINT16", "u16", 16},
    {"INT16", "i16", 16},
    {"INT32", "i32", 32},
    {"INT64", "i64", 64},
    {"STRING", "str", 0},
    {"BOOL", "bool", 8},
    {"FLOAT16", "f16", 16},
    {"DOUBLE", "f64", 64},
    {"UINT32", "u32", 32},
    {"UINT64", "u64", 64},
    {"COMPLEX64", "c64", 64},
    {"COMPLEX128", "c128", 128},
    {"BFLOAT16", "bf16", 16},
    {"FLOAT8E4M3FN", "f8e4m3fn", 8},
    {"FLOAT8E4M3FNUZ", "f8e4m3fnuz", 8},
    {"FLOAT8E5M2", "f8e5m2", 8},
    {"FLOAT8E5M2FNUZ", "f8e5m2fnuz", 8},
    {"UINT4", "u4", 4},
    {"INT4", "i4", 4},
    {"FLOAT4E2M1", "f4e2m1", 4},
    {"FLOAT8E8M0", "f8e8m0", 8},
    {"UINT2", "u2", 2},
    {"INT2", "i2", 2},
}};

}  // namespace

std::string_view dtypeName(DType t) { return kFacts[static_cast<unsigned>(t)].onnx; }
std::string_view dtypeShortName(DType t) { return kFacts[static_cast<unsigned>(t)].shortName; }
unsigned dtypeBits(DType t) { return kFacts[static_cast<unsigned>(t)].bits; }

std::optional<DType> dtypeFromName(std::string_view n) {
  for (unsigned i = 0; i < kFacts.size(); ++i)
    if (kFacts[i].onnx == n || kFacts[i].shortName == n)
      return static_cast<DType>(i);
  return std::nullopt;
}

std::optional<DType> dtypeFromCode(int64_t code) {
  if (code < 0 || code > kMaxDType)
    return std::nullopt;
  return static_cast<DType>(code);
}

bool isFloating(DType t) {
  switch (t) {
  case DType::Float: case DType::Float16: case DType::Double: case DType::BFloat16:
  case DType::Float8E4M3FN: case DType::Float8E4M3FNUZ: case DType::Float8E5M2:
  case DType::Float8E5M2FNUZ: case DType::Float4E2M1: case DType::Float8E8M0:
    return true;
  default:
    return false;
  }
}

bool isInteger(DType t) {
  switch (t) {
  case DType::UInt8: case DType::Int8: case DType::UInt16: case DType::Int16:
  case DType::Int32: case DType::Int64: case DType::UInt32: case DType::UInt64:
  case DType::UInt4: case DType::Int4: case DType::UInt2: case DType::Int2:
    return true;
  default:
    return false;
  }
}

}  // namespace graphlint
