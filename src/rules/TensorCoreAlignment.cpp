// GL141 tensor-core-alignment: a contraction dimension that tensor cores tile
// (the reduction length K, the output width N, conv channels per group, an
// attention head dim) is not a multiple of the dtype's alignment: 8 for 16-bit,
// 16 for 8-bit, 4 for fp32 run as TF32. Identical findings on repeated layers
// become one diagnostic with a count.
#include "graphlint/ir/Display.h"
#include "graphlint/ir/CheckedMath.h"
#include "graphlint/analyses/CapturePrecision.h"
#include "graphlint/analyses/Contraction.h"
#include "graphlint/analyses/FusionPlan.h"
#include "graphlint/base/HardwareProfile.h"
#include "graphlint/rules/Rule.h"

#include <fmt/format.h>

#include <map>
#include <set>

namespace graphlint {
namespace {

/// The multiple tensor-core kernels want for math precision `p` on `hw`, or 0
/// when it does not run on tensor cores there (fp32 without TF32, fp64, ints).
unsigned alignmentFor(MathPrecision p, const HardwareProfile &hw) {
  switch (p) {
  case MathPrecision::FP16: case MathPrecision::BF16: return hw.supports(p) ? 8 : 0;
  case MathPrecision::FP8: case MathPrecision::INT8: return hw.supports(p) ? 16 : 0;
  case MathPrecision::FP32: return hw.supportsTf32() ? 4 : 0;
  default: return 0;
  }
}

struct Finding {
  const Node *first = nullptr;
  std::vector<const Node *> others;
  std::string message;
  unsigned align = 0;
  MathPrecision math = MathPrecision::FP32;
};

class TensorCoreAlignment final : public Rule {
public:
  static constexpr RuleInfo kInfo{"GL141", "tensor-core-alignment", Severity::Warning,
                                  "a MatMul/Gemm/Conv dimension is not a multiple of 8 (16-bit), 16 (8-bit) or 4 (tf32)"};
  const RuleInfo &info() const override { return kInfo; }

  void check(const Model &m, AnalysisContext &ctx, DiagnosticSink &sink) const override {
    const HardwareProfile *hw = ctx.setup().targetProfile();
    if (!hw)
      return;  // the CLI rejects unknown targets; an API caller gets no guesses
    const CapturePrecision &precision = ctx.get<CapturePrecision>();
    std::map<std::string, Finding> findings;  // by op, dtype and the misaligned dims
    std::vector<std::string> order;
    forEachGraph(*m.graph, [&](const Graph &g) {
      for (const auto &np : g.nodes()) {
        const Node &n = *np;
        auto s = contractionGeometry(n);
        if (!s)
          continue;
        // The precision the kernel runs at: under --precision bf16-mixed an
        // fp32 capture's tensor is multiplied in bf16 (alignment 8, not
        // TF32's 4); a bf16 capture's fp32 contraction stays fp32.
        auto math = precision.contractionMath(s->dtype);
        unsigned align = math ? alignmentFor(*math, *hw) : 0;
        if (align == 0)
          continue;
        // A GEMM with a dimension below the tile is a matrix-vector product:
        // bandwidth-bound, tensor cores do not decide its speed.
        bool gemv = false;
        for (const auto &d : {s->M, s->N, s->K})
          gemv |= d && *d < static_cast<int64_t>(align);
        if (gemv)
          continue;
        std::vector<std::pair<std::string, int64_t>> bad;
        for (const TiledDim &d : s->tiled)
          // Dims below the alignment (an RGB stem's 3 channels, 1 output) are
          // not worth padding: the op is bound by memory traffic, not math.
          if (d.size && *d.size >= static_cast<int64_t>(align) && *d.size % align != 0)
            bad.push_back({d.role, *d.size});
        if (bad.empty())
          continue;
        std::string key = fmt::format("{}|{}", n.opType, mathPrecisionName(*math));
        std::string dims, pads;
        for (const auto &[role, size] : bad) {
          key += fmt::format("|{}={}", role, size);
          dims += fmt::format("{}{} = {}", dims.empty() ? "" : ", ", role, size);
          // The next multiple of align; a dim within align of INT64_MAX has none.
          CheckedInt up = checkedCeilDiv(size, static_cast<int64_t>(align));
          CheckedInt padded = up ? checkedMul(*up, static_cast<int64_t>(align)) : std::nullopt;
          pads += fmt::format("{}{} to {}", pads.empty() ? "" : ", ", role,
                              padded ? std::to_string(*padded) : "a multiple of " + std::to_string(align));
        }
        auto [it, inserted] = findings.try_emplace(key);
        Finding &f = it->second;
        if (!inserted) {
          f.others.push_back(&n);
          continue;
        }
        order.push_back(key);
        f.first = &n;
        f.align = align;
        f.math = *math;
        std::string what = *math == MathPrecision::FP32 ? "f32 (run as TF32)"
                           : s->dtype == DType::Float
                               ? fmt::format("{} (--precision {})", mathPrecisionName(*math), precisionName(ctx.setup().precision))
                               : std::string(dtypeShortName(s->dtype));
        f.message = fmt::format(
            "{} '{}' has {}, {} {}, the {} tensor-core alignment: its kernel falls back to narrower loads or "
            "padded tiles; pad {} {}",
            n.qualifiedOp(), nodeLabel(n), dims,
            bad.size() == 1 ? "not a multiple of" : "not multiples of", align, what, pads, s->hint);
      }
    });
    const auto *plan = &ctx.get<FusionPlan>();
    for (const std::string &key : order) {
      const Finding &f = findings[key];
      Diagnostic &d = sink.report(*f.first, f.message);
      d.fusionId = plan->groupOf(*f.first).id;
      if (!f.others.empty()) {
        std::string names;
        for (size_t i = 0; i < f.others.size() && i < 3; ++i)
          names += fmt::format("{}'{}'", i ? ", " : "", f.others[i]->name);
        d.note(fmt::format("{} more node(s) have the same {} shape: {}{}", f.others.size(),
                           f.first->qualifiedOp(), names, f.others.size() > 3 ? ", ..." : ""));
      }
      if (f.math == MathPrecision::FP32)
        d.note(fmt::format("fp32 contractions use tensor cores on {} only as TF32: the default for cuDNN "
                           "convolutions, TensorRT and ONNX Runtime; PyTorch matmuls need "
                           "torch.set_float32_matmul_precision('high')",
                           hw->name));
    }
  }
};

}  // namespace

GRAPHLINT_DEFINE_RULE(TensorCoreAlignment)

}  // namespace graphlint
