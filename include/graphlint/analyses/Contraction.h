// The geometry of a contraction node, ONNX or aten, in one place: which GEMM
// it runs (M x K times K x N, per batch or group), which of its dims tensor
// cores tile, and the element type it is written in. The FLOP formulas
// (OpFlops) and GL141 tensor-core-alignment both read it, so an FX
// `aten::mm` and the same ONNX MatMul get the same answer.
#pragma once

#include "graphlint/ir/Graph.h"
#include "graphlint/base/HardwareProfile.h"
#include "graphlint/base/Setup.h"

#include <llvm/ADT/SmallVector.h>

#include <optional>

namespace graphlint {

enum class ContractionForm : uint8_t { MatMul, Gemm, Conv, ConvTranspose, Einsum, Attention };

/// A dim the tensor-core tiles of the kernel run along ("K", "N", "C_in",
/// "head_dim", ...), with its static size when known.
struct TiledDim {
  const char *role;
  std::optional<int64_t> size;
};

struct ContractionGeometry {
  ContractionForm form = ContractionForm::MatMul;
  DType dtype = DType::Undefined;  // of the first (activation) operand
  /// One GEMM of the op: M x K times K x N (per batch matrix or conv group);
  /// K is the reduction length of one output element.
  std::optional<int64_t> M, N, K;
  llvm::SmallVector<TiledDim, 3> tiled;
  const char *hint = "";  // how to fix a misaligned dim
};

/// The geometry of `n` when it is a contraction this module knows (ONNX
/// MatMul, Gemm, Conv, ConvTranspose, Einsum, Attention and their
/// integer/quantized forms in the default domain; aten mm, bmm, matmul, addmm,
/// baddbmm, linear, _grouped_mm, convolution/conv*d, conv_transpose*d and the
/// scaled_dot_product attention ops); nullopt otherwise.
std::optional<ContractionGeometry> contractionGeometry(const Node &n);

}  // namespace graphlint
