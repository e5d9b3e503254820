// A tensor in host memory for the verify executor (docs/verify.md): the IR
// dtype and concrete shape, with every element held as a double. The cpu
// reference backend computes in double and rounds each result to its dtype, so
// one kernel serves every numeric type; the memory plan counts the bytes the
// dtype would occupy on the device, never the double storage.
#pragma once

#include "graphlint/ir/Graph.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <utility>
#include <cstdint>
#include <string>
#include <vector>

namespace graphlint::verify {

/// The host bytes of the HostTensors alive now, across the whole run. A
/// tensor reserves its bytes when it is made and gives them back when it is
/// destroyed, so tensors whose shapes are computed at run time (ConstantOfShape
/// of a computed shape) count against hostMemoryBytes() together, not each
/// alone: three run-time tensors of 8 GB each no longer pass on a 23 GB host.
class HostReservation {
public:
  HostReservation() = default;
  /// Reserves 8 bytes an element of `shape`; throws std::length_error,
  /// before anything is allocated, when the count overflows or the tensors
  /// alive would then need more than hostMemoryBytes().
  explicit HostReservation(const std::vector<int64_t> &shape);
  HostReservation(const HostReservation &o);  // a copy holds its own bytes
  HostReservation(HostReservation &&o) noexcept : bytes_(o.bytes_) { o.bytes_ = 0; }
  HostReservation &operator=(HostReservation o) noexcept {
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  ~HostReservation();
  /// Bytes reserved by every tensor alive now.
  static uint64_t live();

private:
  uint64_t bytes_ = 0;
};

struct HostTensor {
  DType dtype = DType::Float;
  std::vector<int64_t> shape;
  HostReservation reservation;  // before `data`: checked before it is allocated
  std::vector<double> data;

  HostTensor() = default;
  /// Throws std::length_error when the shape has a negative dim, its
  /// element count overflows or it does not fit beside the host tensors
  /// alive (the cpu backend reports it as the node's error).
  HostTensor(DType dt, std::vector<int64_t> s)
      : dtype(dt), shape(std::move(s)), reservation(shape), data(zeros(shape)) {}
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
