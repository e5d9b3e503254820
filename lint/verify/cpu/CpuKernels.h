// The cpu reference backend's kernels: one plain C++ function per ONNX op,
// computing in double and rounding results to their dtype. Grouped by kind in
// Elementwise.cpp, Contraction.cpp, Normalization.cpp and Layout.cpp; this
// header holds what they share (attribute access, broadcasting, errors).
#pragma once

#include "graphlint/verify/HostTensor.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringMap.h>

#include <string>
#include <vector>

namespace graphlint::verify::cpu {

/// A node's inputs (nullptr for an omitted optional input) and its outputs,
/// one per node output, filled by the kernel.
using Inputs = llvm::ArrayRef<const HostTensor *>;
using Outputs = std::vector<HostTensor>;
using Kernel = llvm::Error (*)(const Node &, Inputs, Outputs &);
using KernelTable = llvm::StringMap<Kernel>;

/// The kernel of an ai.onnx op, or nullptr when the backend has none.
Kernel kernelForOp(llvm::StringRef op);

void addElementwiseKernels(KernelTable &t);
void addContractionKernels(KernelTable &t);
void addNormalizationKernels(KernelTable &t);
void addLayoutKernels(KernelTable &t);

llvm::Error kernelError(const Node &n, const std::string &msg);
/// Rounds `y` to its dtype and stores it as output 0.
llvm::Error result(Outputs &out, HostTensor y);

int64_t attrInt(const Node &n, llvm::StringRef name, int64_t fallback);
double attrFloat(const Node &n, llvm::StringRef name, double fallback);
std::string attrString(const Node &n, llvm::StringRef name, const std::string &fallback);
std::vector<int64_t> attrInts(const Node &n, llvm::StringRef name, std::vector<int64_t> fallback = {});
/// Input `i` when present (not omitted, not out of range).
const HostTensor *input(Inputs in, size_t i);
/// Normalises a possibly negative axis against `rank`; nullopt when out of range.
std::optional<int64_t> normAxis(int64_t axis, int64_t rank);

/// Numpy broadcasting of several shapes; nullopt when they are incompatible.
std::optional<std::vector<int64_t>> broadcastShapes(llvm::ArrayRef<const std::vector<int64_t> *> shapes);
/// Strides of `shape` read as if broadcast to `out` (0 on broadcast dims).
std::vector<int64_t> broadcastStrides(const std::vector<int64_t> &shape, const std::vector<int64_t> &out);
/// Row-major strides.
std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape);

/// Visits every element of `out` with the offsets of the same position in
/// each input broadcast to it: fn(outIndex, offsets).
template <typename Fn>
void forEachBroadcast(const std::vector<int64_t> &out, const std::vector<std::vector<int64_t>> &strides, Fn &&fn) {
  int64_t n = HostTensor::count(out);
  size_t rank = out.size(), k = strides.size();
  std::vector<int64_t> idx(rank, 0), off(k, 0);
  for (int64_t i = 0; i < n; ++i) {
    fn(i, off);
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

}  // namespace graphlint::verify::cpu
