#include "graphlint/ir/Broadcast.h"

#include <algorithm>

namespace graphlint {

std::optional<int64_t> elementCount(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(n, d, &n))
      return std::nullopt;
  return n;
}

std::optional<std::vector<int64_t>> broadcastShapes(llvm::ArrayRef<const std::vector<int64_t> *> shapes) {
  size_t rank = 0;
  for (const auto *s : shapes)
    rank = std::max(rank, s->size());
  std::vector<int64_t> out(rank, 1);
  for (const auto *s : shapes)
    for (size_t i = 0; i < s->size(); ++i) {
      int64_t d = (*s)[s->size() - 1 - i], &o = out[rank - 1 - i];
      if (d == o || d == 1)
        continue;
      if (o != 1)
        return std::nullopt;
      o = d;
    }
  return out;
}

std::optional<std::vector<int64_t>> broadcastStrides(const std::vector<int64_t> &shape,
                                                     const std::vector<int64_t> &out) {
  if (shape.size() > out.size())
    return std::nullopt;
  std::vector<int64_t> st(out.size(), 0);
  int64_t stride = 1;
  for (size_t k = 0; k < shape.size(); ++k) {
    size_t i = shape.size() - 1 - k, o = out.size() - 1 - k;
    if (shape[i] != out[o] && shape[i] != 1)
      return std::nullopt;
    st[o] = shape[i] == 1 ? 0 : stride;
    if (__builtin_mul_overflow(stride, std::max<int64_t>(shape[i], 1), &stride))
      return std::nullopt;
  }
  return st;
}

}  // namespace graphlint
