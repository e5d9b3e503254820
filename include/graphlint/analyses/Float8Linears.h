// Float8 training as torchao runs it (--float8, docs/cost-model.md "Float8
// training"): which linears convert_to_float8_training swaps for Float8Linear
// under torchtitan's filter, which contraction nodes are their three GEMMs
// (output, grad_input, grad_weight), and the amax and cast kernels
// (torchao/float8/float8_linear.py, matmul_with_hp_or_float8_args) each GEMM
// adds. The compute model times the GEMMs at the fp8 peak and the casts by
// bytes moved; the memory plan holds each GEMM's fp8 operands while it runs
// and FSDP2's fp8-gathered weights; the step timeline gathers them at one
// byte per element. One source for all three.
#pragma once

#include "graphlint/analyses/Analysis.h"
#include "graphlint/ir/Graph.h"
#include "graphlint/base/Setup.h"

#include <llvm/ADT/DenseMap.h>

#include <string>
#include <vector>

namespace graphlint {

/// One of the three GEMMs of a Float8Linear: y = x W^T (output),
/// dx = dy W (grad_input), dW = dy^T x (grad_weight).
enum class Float8Gemm : uint8_t { Output, GradInput, GradWeight };
std::string_view float8GemmName(Float8Gemm g);

/// A linear torchao converts: its weight [out, in], the elements of the
/// forward GEMM's input x, weight W and output y (= dy's), and its GEMM
/// nodes (a joint graph's backward ones; null on a forward graph, whose
/// backward the compute model synthesises from `output`).
struct Float8Linear {
  const Value *weight = nullptr;
  std::string name;  // the module: the weight's name less ".weight"
  double inputElements = 0, weightElements = 0, outputElements = 0;
  const Node *output = nullptr, *gradInput = nullptr, *gradWeight = nullptr;
};

/// A linear left in bf16, and why ("the output layer", "in 4100 not
/// divisible by 16").
struct Float8Skipped {
  const Value *weight = nullptr;
  std::string name;
  std::string reason;
};

/// The extra memory-bound kernels around one GEMM: bytes read and written,
/// launches, and the fp8 copies that live while the GEMM runs (the largest
/// moment of its casts, eager's fp32 intermediates included).
struct Float8CastTraffic {
  double bytes = 0;
  unsigned kernels = 0;
  double liveBytes = 0;
};

/// The GEMM operands (A, B) of a linear-like contraction: aten mm, matmul,
/// linear and ONNX MatMul, Gemm (0, 1), aten addmm (1, 2); nullopt for
/// other contractions (bmm, convolution, attention).
std::optional<std::pair<unsigned, unsigned>> float8GemmOperands(const Node &n);

class Float8Linears {
public:
  Float8Linears(const Model &m, AnalysisContext &ctx);
  /// The setup values it reads (Analysis.h, SharedFacts): the recipe, an
  /// Inductor backend, the fp8 all-gather in effect.
  static std::string sharedKey(const Setup &s);
  /// The same without a context (the memory plan's builder has a Setup only).
  Float8Linears(const Model &m, const Setup &s);

  /// --float8 is set and at least one linear converts.
  bool active() const { return !linears_.empty(); }
  const std::vector<Float8Linear> &linears() const { return linears_; }
  const std::vector<Float8Skipped> &skipped() const { return skipped_; }
  /// The linear and GEMM a contraction node is, or nullptr.
  const Float8Linear *gemmOf(const Node &n, Float8Gemm *which = nullptr) const;
  bool converted(const Value *weight) const { return byWeight_.count(weight) > 0; }
  /// Converted weight elements (what the fp8 all-gather moves at 1 byte).
  double convertedElements() const { return convertedElements_; }

  /// The amax + cast kernels of `gemm`'s operands (the forward's x and W;
  /// grad_input's dy and W; grad_weight's x and, for rowwise or eager,
  /// dy again), with `hpBytes` the high-precision element size.
  Float8CastTraffic casts(const Float8Linear &l, Float8Gemm gemm, double hpBytes) const;
  /// Every cast of one linear's backward (a forward graph's synthesised one).
  Float8CastTraffic backwardCasts(const Float8Linear &l, double hpBytes) const;

private:
  void find(const Model &m);

  Float8 recipe_ = Float8::None;
  bool fused_ = true;       // --backend inductor: torch.compile's fused casts
  bool gathersFp8_ = false; // Setup::float8GathersFp8
  std::vector<Float8Linear> linears_;
  std::vector<Float8Skipped> skipped_;
  llvm::DenseMap<const Value *, unsigned> byWeight_;
  llvm::DenseMap<const Node *, std::pair<unsigned, Float8Gemm>> byNode_;
  double convertedElements_ = 0;
};

}  // namespace graphlint
