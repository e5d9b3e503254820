// Kernels an ONNX exporter wrote as several ops that PyTorch eager runs as
// one: SiLU as x * Sigmoid(x), GELU as its erf formula, GroupNorm as
// InstanceNormalization between two Reshapes and the per-channel affine.
// The pieces' intermediate tensors never exist in eager, and the kernel
// keeps for its backward what PyTorch's does (derivatives.yaml): its input
// (GroupNorm also its weight, mean and rstd), not what the pieces would.
// One source for the memory plan (what is allocated and saved) and the
// compute model (what a training step's backward reads), so ONNX and FX
// captures of one model get one answer.
#pragma once

#include "graphlint/analyses/Analysis.h"
#include "graphlint/ir/Graph.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/SmallVector.h>

#include <string>

namespace graphlint {

struct DecomposedKernel {
  enum class Kind : uint8_t { Silu, Gelu, GroupNorm };
  Kind kind = Kind::Silu;
  const Node *last = nullptr;   // stands for the kernel: its output is the kernel's
  const Value *input = nullptr;  // the tensor the kernel reads (and keeps for its backward)
  llvm::SmallVector<const Node *, 4> inner;  // the other pieces, whose outputs never exist
  /// Trained operands besides the input (a group norm's weight and bias,
  /// or views of them): their gradients come from the kernel's backward.
  llvm::SmallVector<const Value *, 2> weights;
  /// GroupNorm: the [N, G, -1] value whose rows the kernel keeps an fp32
  /// mean and rstd for (sized by the consumer, which binds its symbols).
  const Value *statisticsRows = nullptr;
};

class DecomposedKernels {
public:
  DecomposedKernels(const Model &m, AnalysisContext &) : DecomposedKernels(*m.graph) {}
  explicit DecomposedKernels(const Graph &g);
  /// It reads no setup value (Analysis.h, SharedFacts): one per model.
  static std::string sharedKey(const Setup &) { return {}; }

  /// The kernel whose last piece `n` is, or null.
  const DecomposedKernel *endingAt(const Node &n) const;
  /// `n` is an inner piece of a kernel: its outputs never exist.
  bool isInner(const Node &n) const { return innerOf_.count(&n) != 0; }
  const std::vector<DecomposedKernel> &kernels() const { return kernels_; }

private:
  std::vector<DecomposedKernel> kernels_;
  llvm::DenseMap<const Node *, unsigned> lastOf_;
  llvm::DenseMap<const Node *, unsigned> innerOf_;
  void add(DecomposedKernel k);
};

}  // namespace graphlint
