// The cpu reference backend's kernels: one plain C++ function per ONNX op,
// computing in double and rounding results to their dtype. Grouped by kind in
// Elementwise.cpp, Contraction.cpp, Normalization.cpp and Layout.cpp; this
// header holds what they share (attribute access, broadcasting, errors).
#pragma once

#include "graphlint/ir/Broadcast.h"
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

/// Row-major strides. (Broadcasting: graphlint/ir/Broadcast.h.)
std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape);

}  // namespace graphlint::verify::cpu
