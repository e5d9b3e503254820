// The capture's precision or the policy's (include/graphlint/analyses/CapturePrecision.h).
#include "graphlint/analyses/CapturePrecision.h"

#include "graphlint/analyses/Contraction.h"
#include "graphlint/ir/DType.h"

namespace graphlint {
namespace {

bool isNarrowFloat(DType t) { return isFloating(t) && dtypeBits(t) <= 16; }

}  // namespace

CapturePrecision::CapturePrecision(const Model &m, const Setup &s) {
  if (m.graph)
    forEachGraph(*m.graph, [&](const Graph &g) {
      for (const auto &n : g.nodes()) {
        if (evidence_)
          return;
        if (auto c = contractionGeometry(*n); c && isNarrowFloat(c->dtype))
          evidence_ = n.get();
      }
    });
  narrowsFp32_ = precisionPolicy(s.precision).sixteenBitActivations && !recorded();
  sixteenBitMath_ = s.precision == Precision::FP16Mixed ? MathPrecision::FP16 : MathPrecision::BF16;
}

std::string CapturePrecision::sharedKey(const Setup &s) { return std::string(precisionName(s.precision)); }

unsigned CapturePrecision::storedBits(DType t) const {
  return t == DType::Float && narrowsFp32_ ? 16 : dtypeBits(t);
}

std::optional<MathPrecision> CapturePrecision::contractionMath(DType operand) const {
  if (operand == DType::Float && narrowsFp32_)
    return sixteenBitMath_;
  return mathPrecisionOf(operand);
}

double CapturePrecision::operandBytes(const Node *gemm) const {
  std::optional<ContractionGeometry> c = gemm ? contractionGeometry(*gemm) : std::nullopt;
  DType t = c && isFloating(c->dtype) ? c->dtype : DType::Float;
  return storedBits(t) / 8.0;
}

}  // namespace graphlint
