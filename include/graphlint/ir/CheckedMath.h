// Overflow-checked int64 arithmetic for shape and size computations. A model
// file decides every operand (dims, attribute values, folded constants), so
// none of them may wrap, divide by zero or trap on INT64_MIN / -1: each
// helper returns nullopt instead, and callers turn that into an unknown dim
// (and a diagnostic where the model itself is at fault). The bounds below are
// the limits graphlint reasons within; anything beyond them is left unknown.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>

namespace graphlint {

/// The largest rank graphlint materialises (ONNX and PyTorch stop far lower);
/// a rank taken from a declared length beyond it stays unknown.
inline constexpr int64_t kMaxRank = 64;
/// The largest dim handed to ONNX's inference functions: 2^40.
inline constexpr int64_t kMaxInferredDim = int64_t(1) << 40;

using CheckedInt = std::optional<int64_t>;

inline CheckedInt checkedAdd(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? std::nullopt : CheckedInt(r);
}

inline CheckedInt checkedSub(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_sub_overflow(a, b, &r) ? std::nullopt : CheckedInt(r);
}

inline CheckedInt checkedMul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? std::nullopt : CheckedInt(r);
}

inline CheckedInt checkedNeg(int64_t a) { return checkedSub(0, a); }

/// Truncating division (C++ semantics); nullopt for b == 0 and INT64_MIN / -1.
inline CheckedInt checkedDiv(int64_t a, int64_t b) {
  if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1))
    return std::nullopt;
  return a / b;
}

/// Floor division (Python / ONNX integer Mod semantics).
inline CheckedInt checkedFloorDiv(int64_t a, int64_t b) {
  CheckedInt q = checkedDiv(a, b);
  if (q && a % b != 0 && ((a < 0) != (b < 0)))
    --*q;
  return q;
}

/// a - floor(a / b) * b: the result has the sign of b (ONNX Mod, fmod = 0).
inline CheckedInt checkedFloorMod(int64_t a, int64_t b) {
  if (b == 0)
    return std::nullopt;
  if (b == -1)
    return 0;  // also covers INT64_MIN % -1, which traps in hardware
  int64_t r = a % b;
  return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}

/// ceil(a / b) for a >= 0, b > 0.
inline CheckedInt checkedCeilDiv(int64_t a, int64_t b) {
  if (b <= 0 || a < 0)
    return std::nullopt;
  return a / b + (a % b != 0);
}

/// Product of a range of int64 values; nullopt on overflow. With
/// `nonNegative`, a negative factor also gives nullopt (element counts).
template <typename Range>
CheckedInt checkedProduct(const Range &values, bool nonNegative = true) {
  int64_t n = 1;
  for (int64_t v : values) {
    if (nonNegative && v < 0)
      return std::nullopt;
    if (__builtin_mul_overflow(n, v, &n))
      return std::nullopt;
  }
  return n;
}

/// The most bytes one tensor is counted as (16 TiB, far above any device):
/// a larger or overflowing size saturates here, so sums of a million such
/// tensors still fit in uint64 and never wrap to a small number.
inline constexpr uint64_t kMaxTensorBytes = uint64_t(1) << 44;

/// a * b, or UINT64_MAX when it overflows (element counts).
inline uint64_t saturatingMul(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<uint64_t>::max() : r;
}

}  // namespace graphlint
