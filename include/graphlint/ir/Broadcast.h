// Broadcasting over static shapes: numpy's rule, as ONNX and PyTorch apply
// it. One implementation for ir's small-tensor evaluator (ElementFacts.cpp)
// and the verify pass's reference kernels (src/verify).
#pragma once

#include <llvm/ADT/ArrayRef.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace graphlint {

/// The elements of a tensor of `shape`; nullopt for a negative dim or when
/// the product overflows int64.
std::optional<int64_t> elementCount(const std::vector<int64_t> &shape);

/// The shape `shapes` broadcast to (right-aligned, each dim equal or 1);
/// nullopt when they do not broadcast together.
std::optional<std::vector<int64_t>> broadcastShapes(llvm::ArrayRef<const std::vector<int64_t> *> shapes);

/// The row-major strides of a tensor of `shape` seen from `out`
/// (right-aligned), 0 along the dims it broadcasts; nullopt when it does not
/// broadcast to `out`.
std::optional<std::vector<int64_t>> broadcastStrides(const std::vector<int64_t> &shape,
                                                     const std::vector<int64_t> &out);

/// Visits every element of `out` in row-major order with the offsets of the
/// same position in each operand whose broadcast strides are given:
/// fn(outIndex, offsets). Visits nothing when the element count overflows.
template <typename Fn>
void forEachBroadcast(const std::vector<int64_t> &out, llvm::ArrayRef<std::vector<int64_t>> strides, Fn &&fn) {
  std::optional<int64_t> n = elementCount(out);
  if (!n)
    return;
  size_t rank = out.size(), k = strides.size();
  std::vector<int64_t> idx(rank, 0), off(k, 0);
  for (int64_t i = 0; i < *n; ++i) {
    fn(i, static_cast<const std::vector<int64_t> &>(off));
    for (size_t d = rank; d-- > 0;) {
      ++idx[d];
      for (size_t j = 0; j < k; ++j)
        off[j] += strides[j][d];
      if (idx[d] < out[d])
        break;
      for (size_t j = 0; j < k; ++j)
        off[j] -= strides[j][d] * out[d];
      idx[d] = 0;
    }
  }
}

}  // namespace graphlint
