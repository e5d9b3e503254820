// Folds small integer tensors through the ops exporters use to compute shapes
// (Shape -> Gather -> Concat -> Reshape, Range, arithmetic on sizes), so that
// shape inference sees the values a static reader can know. Bounded to small
// tensors: it never touches weights.
#pragma once

#include "graphlint/ir/Graph.h"

#include <optional>
#include <vector>

namespace graphlint::onnxio {

inline constexpr size_t kMaxFoldElements = 1024;

struct IntTensor {
  std::vector<int64_t> dims;
  std::vector<int64_t> values;
};

/// Computes output 0 of `n` from known integer inputs (nullopt entries are
/// unknown) and the node's inferred output types; nullopt when not foldable.
std::optional<IntTensor> foldIntegers(const Node &n, const std::vector<std::optional<IntTensor>> &inputs,
                                      const std::vector<Type> &inputTypes);

}  // namespace graphlint::onnxio
