// Which precision a run holds each tensor in and runs each contraction at:
// the capture's own dtypes where it recorded its precision, the --precision
// policy only where it could not. A capture traced in bf16 (a model cast to
// bf16, or its forward under torch.autocast) records which tensors stay fp32
// (RMSNorm and LayerNorm upcasts, softmax, the loss), and those stay fp32 in
// memory and time; an fp32 capture says nothing about the 16-bit run, so
// under a 16-bit policy its fp32 activations count 16 bits and its fp32
// contractions run at the 16-bit peak (docs/memory.md "Precision: the
// capture's or the policy's"). One source for the memory plan, the compute
// model, the mesh's activation traffic and GL141.
#pragma once

#include "graphlint/analyses/Analysis.h"
#include "graphlint/base/HardwareProfile.h"
#include "graphlint/base/Setup.h"
#include "graphlint/ir/Graph.h"

#include <optional>

namespace graphlint {

/// A capture recorded its precision when one of its contractions (matmul,
/// linear, convolution, attention: contractionGeometry) reads a 16-bit or
/// 8-bit floating operand (bf16, fp16, fp8). Casts elsewhere (an fp32 model's
/// stray `.half()` on a pointwise op) do not: the contractions are where a
/// run's precision policy acts. Autocast regions of a `.pt2` count through
/// the casts the importer adds for them.
class CapturePrecision {
public:
  CapturePrecision(const Model &m, AnalysisContext &ctx) : CapturePrecision(m, ctx.setup()) {}
  CapturePrecision(const Model &m, const Setup &s);
  /// The setup value it reads (Analysis.h, SharedFacts): the precision.
  static std::string sharedKey(const Setup &s);

  /// The capture recorded its precision (see the class comment).
  bool recorded() const { return evidence_ != nullptr; }
  /// The first contraction that showed it, or null.
  const Node *evidence() const { return evidence_; }
  /// fp32 values are held in 16 bits: a 16-bit policy (fp16-mixed,
  /// bf16-mixed, bf16) on a capture that did not record its precision.
  bool policyNarrowsFp32() const { return narrowsFp32_; }
  /// Bits per element of a value of dtype `t` as the run holds it.
  unsigned storedBits(DType t) const;
  /// The precision a contraction whose activation operand is `operand`
  /// runs at: the policy's 16-bit math for an fp32 operand when the policy
  /// narrows fp32, else the operand's own (fp32 on CUDA cores; the compute
  /// model adds PyTorch's TF32 defaults).
  std::optional<MathPrecision> contractionMath(DType operand) const;
  /// Bytes per element of contraction `gemm`'s activation operand as the
  /// run holds it (a float8 linear's casts read x, W and dy at this size);
  /// an fp32 operand's when `gemm` is null or not a contraction.
  double operandBytes(const Node *gemm) const;

private:
  const Node *evidence_ = nullptr;
  bool narrowsFp32_ = false;
  MathPrecision sixteenBitMath_ = MathPrecision::BF16;
};

}  // namespace graphlint
