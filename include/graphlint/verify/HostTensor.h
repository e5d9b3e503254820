// A tensor in host memory for the verify executor (docs/verify.md): the IR
// dtype and concrete shape, with every element held as a double. The cpu
// reference backend computes in double and rounds each result to its dtype, so
// one kernel serves every numeric type; the memory plan counts the bytes the
// dtype would occupy on the device, never the double storage.
#pragma once

#include "graphlint/ir/Graph.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <cstdint>
#include <string>
#include <vector>

namespace graphlint::verify {

struct HostTensor {
  DType dtype = DType::Float;
  std::vector<int64_t> shape;
  std::vector<double> data;

  HostTensor() = default;
  /// Throws std::length_error when the shape has a negative dim or its
  /// element count overflows (the cpu backend reports it as the node's error).
  HostTensor(DType dt, std::vector<int64_t> s) : dtype(dt), shape(std::move(s)), data(zeros(shape)) {}
  /// Element count of `shape`; -1 when a dim is negative or the product overflows.
  static int64_t count(const std::vector<int64_t> &shape);
  static std::vector<double> zeros(const std::vector<int64_t> &shape);
  int64_t numel() const { return static_cast<int64_t>(data.size()); }
  size_t rank() const { return shape.size(); }
  /// Bytes the tensor occupies on a device in its dtype (sub-byte types packed).
  uint64_t deviceBytes() const;
  /// Rounds every element to what `dtype` can hold (float32 rounding,
  /// integer truncation, bool to 0/1).
  void roundToDtype();
  std::vector<int64_t> asInts() const;
  std::string str() const;  // "f32[2,3]"
};

/// Bytes the host may hold: physical memory, or less under an address-space
/// limit (`ulimit -v`). HostTensor refuses larger tensors, feedModel a larger
/// sum of them.
double hostMemoryBytes();

/// The dtypes a HostTensor represents exactly enough: floating types up to
/// 64 bits (fp16 and bf16 rounded on store), integers, bool. Not strings,
/// float8, or sub-byte types.
bool hostSupportsDtype(DType dt);

/// Rounds one value to `dt` the way a store of that dtype would.
double roundTo(DType dt, double v);

/// A tensor from a serialised ONNX TensorProto (a test_data_set .pb file).
llvm::Expected<HostTensor> parseTensorProto(llvm::StringRef bytes);
/// A tensor from little-endian bytes of `dt` (raw_data or external data).
llvm::Expected<HostTensor> tensorFromBytes(DType dt, std::vector<int64_t> shape, llvm::StringRef bytes);
/// A tensor from a literal's small known payload (ConstData).
std::optional<HostTensor> tensorFromLiteral(const TensorLiteral &lit);

/// Elementwise comparison with ONNX's backend-test tolerances; on mismatch
/// `why` names the first differing element.
bool allClose(const HostTensor &got, const HostTensor &want, double rtol, double atol, std::string &why);

}  // namespace graphlint::verify
