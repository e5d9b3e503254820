// GL141 tensor-core-alignment: a contraction dimension that tensor cores tile
// (the reduction length K, the output width N, conv channels per group, an
// attention head dim) is not a multiple of the dtype's alignment: 8 for 16-bit,
// 16 for 8-bit, 4 for fp32 run as TF32. Identical findings on repeated layers
// become one diagnostic with a count.
#include "graphlint/ir/CheckedMath.h"
#include "graphlint/ir/OpRegistry.h"
#include "graphlint/lint/FusionPlan.h"
#include "graphlint/lint/HardwareProfile.h"
#include "graphlint/lint/Rule.h"

#include <fmt/format.h>

#include <llvm/ADT/StringSwitch.h>

#include <map>
#include <set>

namespace graphlint {
namespace {

/// The multiple tensor-core kernels want for `t` on `hw`, or 0 when the dtype
/// does not run on tensor cores there (fp32 without TF32, fp64, integers >8 bit).
unsigned alignmentFor(DType t, const HardwareProfile &hw) {
  auto p = mathPrecisionOf(t);
  if (!p)
    return 0;
  switch (*p) {
  case MathPrecision::FP16: case MathPrecision::BF16: return hw.supports(*p) ? 8 : 0;
  case MathPrecision::FP8: case MathPrecision::INT8: return hw.supports(*p) ? 16 : 0;
  case MathPrecision::FP32: return hw.supportsTf32() ? 4 : 0;
  default: return 0;
  }
}

const Value *in(const Node &n, unsigned i) { return i < n.inputs.size() ? n.inputs[i] : nullptr; }

std::optional<int64_t> dimAt(const Value *v, int idx) { return v ? v->type.staticDim(idx) : std::nullopt; }

int rankOf(const Value *v) {
  return v && v->type.isTensor() && v->type.shape.rankKnown ? static_cast<int>(v->type.shape.rank()) : -1;
}

bool isSoftmax(const Node &n) { return n.opType == "Softmax" || n.opType == "LogSoftmax"; }

// Ops between an attention matmul and its softmax: scale, mask, cast, views.
bool passesThrough(const Node &n) {
  return n.op && (n.op->kind == OpKind::Pointwise || n.op->kind == OpKind::Broadcast ||
                  n.op->kind == OpKind::ShapeOnly || n.opType == "Dropout");
}

// Q.K^T of a written-out attention: the scores reach a Softmax.
bool feedsSoftmax(const Value *v, int depth = 4) {
  if (!v || depth == 0)
    return false;
  for (const Use &u : v->uses) {
    if (isSoftmax(*u.user))
      return true;
    if (passesThrough(*u.user) && !u.user->outputs.empty() && feedsSoftmax(u.user->outputs[0], depth - 1))
      return true;
  }
  return false;
}

// P.V of a written-out attention: the probabilities come from a Softmax.
bool comesFromSoftmax(const Value *v, int depth = 4) {
  for (; v && depth > 0; --depth) {
    if (v->kind != Value::Kind::NodeOutput || !v->producer)
      return false;
    const Node &p = *v->producer;
    if (isSoftmax(p))
      return true;
    if (!passesThrough(p))
      return false;
    v = in(p, 0);
  }
  return false;
}

struct DimCheck {
  std::string role;     // "K", "N", "M", "C_in", "C_out", "head_dim", "v_head_dim"
  std::optional<int64_t> size;
};

struct Shape3 {
  DType dtype = DType::Undefined;
  std::vector<DimCheck> dims;          // the tiled dims to check
  std::vector<std::optional<int64_t>> gemm;  // the implied GEMM's M, N, K (tiny ones make it a GEMV)
  const char *hint = "";
};

std::optional<Shape3> matmulDims(const Node &n, unsigned a, unsigned b) {
  const Value *A = in(n, a), *B = in(n, b);
  int ra = rankOf(A), rb = rankOf(B);
  if (ra < 1 || rb < 1)
    return std::nullopt;
  Shape3 s;
  s.dtype = A->type.dtype;
  std::optional<int64_t> M = ra >= 2 ? dimAt(A, -2) : std::optional<int64_t>(1);
  std::optional<int64_t> K = dimAt(A, -1);
  if (!K) K = dimAt(B, rb >= 2 ? -2 : 0);
  std::optional<int64_t> N = rb >= 2 ? dimAt(B, -1) : std::optional<int64_t>(1);
  s.gemm = {M, N, K};
  const Value *out = n.outputs.empty() ? nullptr : n.outputs[0];
  if (feedsSoftmax(out)) {
    s.dims = {{"K", K}};  // head dim; the sequence length is the attention kernel's business
    s.hint = "by choosing a head dim such as 64 or 128";
  } else if (comesFromSoftmax(A)) {
    s.dims = {{"N", N}};
    s.hint = "by choosing a head dim such as 64 or 128";
  } else {
    s.dims = {{"K", K}, {"N", N}};
    s.hint = "with zeros (zero-padded K leaves the product unchanged; slice padded N outputs off)";
  }
  return s;
}

std::optional<Shape3> gemmDims(const Node &n) {
  const Value *A = in(n, 0), *B = in(n, 1);
  if (rankOf(A) != 2 || rankOf(B) != 2)
    return std::nullopt;
  bool ta = n.attrInt("transA").value_or(0) != 0, tb = n.attrInt("transB").value_or(0) != 0;
  Shape3 s;
  s.dtype = A->type.dtype;
  auto M = dimAt(A, ta ? 1 : 0), K = dimAt(A, ta ? 0 : 1), N = dimAt(B, tb ? 0 : 1);
  s.gemm = {M, N, K};
  s.dims = {{"K", K}, {"N", N}};
  if (ta)
    s.dims.push_back({"M", M});  // A stored transposed: M is its contiguous dim
  s.hint = "with zeros (zero-padded K leaves the product unchanged; slice padded N outputs off)";
  return s;
}

std::optional<Shape3> convDims(const Node &n, unsigned x, unsigned w, bool transpose) {
  const Value *X = in(n, x), *W = in(n, w);
  if (rankOf(W) < 3)
    return std::nullopt;
  int64_t group = std::max<int64_t>(1, n.attrInt("group").value_or(1));
  Shape3 s;
  s.dtype = X ? X->type.dtype : W->type.dtype;
  auto w0 = dimAt(W, 0), w1 = dimAt(W, 1);
  // Conv W: [C_out, C_in/group, k...]; ConvTranspose W: [C_in, C_out/group, k...].
  std::optional<int64_t> cin = transpose ? (w0 ? std::optional<int64_t>(*w0 / group) : std::nullopt) : w1;
  std::optional<int64_t> cout = transpose ? w1 : (w0 ? std::optional<int64_t>(*w0 / group) : std::nullopt);
  std::optional<int64_t> kernel = 1;
  for (int i = 2; i < rankOf(W); ++i) {
    auto d = dimAt(W, i);
    kernel = d && kernel ? checkedMul(*kernel, *d) : std::nullopt;
  }
  const Value *out = n.outputs.empty() ? nullptr : n.outputs[0];
  std::optional<int64_t> M;  // batch x output pixels
  CheckedInt perPixel = cout && *cout > 0 ? checkedMul(*cout, group) : std::nullopt;
  if (auto e = out ? out->type.shape.numElements() : std::nullopt; e && perPixel)
    M = *e / *perPixel;
  s.gemm = {M, cout, cin && kernel ? checkedMul(*cin, *kernel) : std::nullopt};
  s.dims = {{group > 1 ? "C_in/group" : "C_in", cin}, {group > 1 ? "C_out/group" : "C_out", cout}};
  s.hint = "with zero channels, or choose a multiple of the alignment when designing the layer";
  return s;
}

// "bij,bjk->bik": K = product of the indices both operands share and the
// output drops, N = product of the indices only the second operand brings.
std::optional<Shape3> einsumDims(const Node &n) {
  const Attribute *eq = n.attr("equation");
  if (!eq || n.inputs.size() != 2 || eq->s.find("...") != std::string::npos)
    return std::nullopt;
  std::string e;
  for (char c : eq->s)
    if (c != ' ')
      e.push_back(c);
  size_t arrow = e.find("->"), comma = e.find(',');
  if (arrow == std::string::npos || comma == std::string::npos || comma > arrow)
    return std::nullopt;
  std::string a = e.substr(0, comma), b = e.substr(comma + 1, arrow - comma - 1), o = e.substr(arrow + 2);
  const Value *A = in(n, 0), *B = in(n, 1);
  if (rankOf(A) != static_cast<int>(a.size()) || rankOf(B) != static_cast<int>(b.size()))
    return std::nullopt;
  std::optional<int64_t> M = 1, N = 1, K = 1;
  auto mul = [](std::optional<int64_t> &acc, std::optional<int64_t> d) {
    acc = acc && d ? checkedMul(*acc, *d) : std::nullopt;
  };
  for (size_t i = 0; i < a.size(); ++i) {
    bool inB = b.find(a[i]) != std::string::npos, inO = o.find(a[i]) != std::string::npos;
    if (inB && !inO) mul(K, dimAt(A, static_cast<int>(i)));
    if (!inB && inO) mul(M, dimAt(A, static_cast<int>(i)));
  }
  for (size_t i = 0; i < b.size(); ++i)
    if (a.find(b[i]) == std::string::npos && o.find(b[i]) != std::string::npos)
      mul(N, dimAt(B, static_cast<int>(i)));
  if (K == 1 || N == 1)
    return std::nullopt;  // not a matmul (outer product, reduction, transpose)
  Shape3 s;
  s.dtype = A->type.dtype;
  s.gemm = {M, N, K};
  s.dims = {{"K", K}, {"N", N}};
  s.hint = "with zeros (zero-padded K leaves the product unchanged; slice padded N outputs off)";
  return s;
}

// ONNX Attention (opset 23): Q/K/V are [B, H, S, D] or [B, S, H*D].
std::optional<Shape3> attentionDims(const Node &n) {
  const Value *Q = in(n, 0), *V = in(n, 2);
  auto headDim = [&](const Value *x, const char *headsAttr) -> std::optional<int64_t> {
    if (rankOf(x) == 4)
      return dimAt(x, 3);
    auto heads = n.attrInt(headsAttr);
    auto hidden = dimAt(x, -1);
    if (rankOf(x) == 3 && heads && *heads > 0 && hidden && *hidden % *heads == 0)
      return *hidden / *heads;
    return std::nullopt;
  };
  if (!Q)
    return std::nullopt;
  Shape3 s;
  s.dtype = Q->type.dtype;
  s.dims = {{"head_dim", headDim(Q, "q_num_heads")}, {"v_head_dim", headDim(V, "kv_num_heads")}};
  s.hint = "by choosing a head dim such as 64 or 128 (fused attention kernels want it)";
  return s;
}

std::optional<Shape3> tiledDims(const Node &n) {
  if (!n.domain.empty())
    return std::nullopt;
  const std::string &op = n.opType;
  if (op == "MatMul" || op == "MatMulInteger") return matmulDims(n, 0, 1);
  if (op == "QLinearMatMul") return matmulDims(n, 0, 3);
  if (op == "Gemm") return gemmDims(n);
  if (op == "Conv" || op == "ConvInteger") return convDims(n, 0, 1, false);
  if (op == "QLinearConv") return convDims(n, 0, 3, false);
  if (op == "ConvTranspose") return convDims(n, 0, 1, true);
  if (op == "Einsum") return einsumDims(n);
  if (op == "Attention") return attentionDims(n);
  return std::nullopt;
}

struct Finding {
  const Node *first = nullptr;
  std::vector<const Node *> others;
  std::string message;
  unsigned align = 0;
  DType dtype = DType::Undefined;
};

class TensorCoreAlignment final : public Rule {
public:
  const RuleInfo &info() const override {
    static const RuleInfo i{"GL141", "tensor-core-alignment", Severity::Warning,
                            "a MatMul/Gemm/Conv dimension is not a multiple of 8 (16-bit), 16 (8-bit) or 4 (tf32)"};
    return i;
  }

  void check(const Model &m, AnalysisContext &ctx, DiagnosticSink &sink) const override {
    const HardwareProfile *hw = HardwareCatalog::instance().find(ctx.setup().target);
    if (!hw)
      return;  // the CLI rejects unknown targets; an API caller gets no guesses
    std::map<std::string, Finding> findings;  // by op, dtype and the misaligned dims
    std::vector<std::string> order;
    forEachGraph(*m.graph, [&](const Graph &g) {
      for (const auto &np : g.nodes()) {
        const Node &n = *np;
        auto s = tiledDims(n);
        if (!s)
          continue;
        unsigned align = alignmentFor(s->dtype, *hw);
        if (align == 0)
          continue;
        // A GEMM with a dimension below the tile is a matrix-vector product:
        // bandwidth-bound, tensor cores do not decide its speed.
        bool gemv = false;
        for (const auto &d : s->gemm)
          gemv |= d && *d < static_cast<int64_t>(align);
        if (gemv)
          continue;
        std::vector<std::pair<std::string, int64_t>> bad;
        for (const DimCheck &d : s->dims)
          // Dims below the alignment (an RGB stem's 3 channels, 1 output) are
          // not worth padding: the op is bound by memory traffic, not math.
          if (d.size && *d.size >= static_cast<int64_t>(align) && *d.size % align != 0)
            bad.push_back({d.role, *d.size});
        if (bad.empty())
          continue;
        std::string key = fmt::format("{}|{}", n.opType, dtypeShortName(s->dtype));
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
        f.dtype = s->dtype;
        bool tf32 = s->dtype == DType::Float;
        std::string what = tf32 ? "f32 (run as TF32)" : std::string(dtypeShortName(s->dtype));
        f.message = fmt::format(
            "{} '{}' has {}, {} {}, the {} tensor-core alignment: its kernel falls back to narrower loads or "
            "padded tiles; pad {} {}",
            n.opType, n.name.empty() ? fmt::format("#{}", n.index) : n.name, dims,
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
        d.notes.push_back({fmt::format("{} more node(s) have the same {} shape: {}{}", f.others.size(),
                                       f.first->opType, names, f.others.size() > 3 ? ", ..." : ""),
                           std::nullopt});
      }
      if (f.dtype == DType::Float)
        d.notes.push_back({fmt::format("fp32 contractions use tensor cores on {} only as TF32: the default for cuDNN "
                                       "convolutions, TensorRT and ONNX Runtime; PyTorch matmuls need "
                                       "torch.set_float32_matmul_precision('high')",
                                       hw->name),
                           std::nullopt});
    }
  }
};

}  // namespace

const Rule *makeTensorCoreAlignmentRule() {
  static const TensorCoreAlignment r;
  return &r;
}

}  // namespace graphlint
