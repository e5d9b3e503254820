// How much of a prediction rests on facts graphlint could not establish:
// kernels of unknown cost, tensors of unknown size. Above a few percent the
// memory and cost figures are lower bounds; the reports say so and GL201 /
// GL301 do not state confident conclusions from them (docs/memory.md
// "Provenance").
#pragma once

#include <cstdint>

namespace graphlint {

/// "A few percent": the share of unknowns above which figures are lower bounds.
inline constexpr double kLowerBoundShare = 0.02;

inline bool isLowerBound(uint64_t unknown, uint64_t total) {
  return total > 0 && static_cast<double>(unknown) > kLowerBoundShare * static_cast<double>(total);
}

}  // namespace graphlint
