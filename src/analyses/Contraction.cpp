// Contraction geometry (include/graphlint/analyses/Contraction.h): one table of
// which ONNX and aten ops are contractions and where their M, N, K live.
#include "graphlint/analyses/Contraction.h"

#include "graphlint/ir/CheckedMath.h"
#include "graphlint/ir/OpRegistry.h"

#include <algorithm>

namespace graphlint {
namespace {

const Value *in(const Node &n, unsigned i) { return i < n.inputs.size() ? n.inputs[i] : nullptr; }
const Value *out0(const Node &n) { return n.outputs.empty() ? nullptr : n.outputs[0]; }

std::optional<int64_t> dimAt(const Value *v, int idx) { return v ? v->type.staticDim(idx) : std::nullopt; }

int rankOf(const Value *v) {
  return v && v->type.isTensor() && v->type.shape.rankKnown ? static_cast<int>(v->type.shape.rank()) : -1;
}

constexpr const char *kPadHint = "with zeros (zero-padded K leaves the product unchanged; slice padded N outputs off)";
constexpr const char *kHeadHint = "by choosing a head dim such as 64 or 128";

bool isSoftmax(const Node &n) {
  std::string aten = n.atenName();
  llvm::StringRef op = aten.empty() ? llvm::StringRef(n.opType) : llvm::StringRef(aten);
  return op == "Softmax" || op == "LogSoftmax" || op == "softmax" || op == "_softmax" || op == "log_softmax" ||
         op == "_log_softmax";
}

// Ops between an attention matmul and its softmax: scale, mask, cast, views.
bool passesThrough(const Node &n) {
  return n.op && (n.op->kind == OpKind::Pointwise || n.op->kind == OpKind::Broadcast ||
                  n.op->kind == OpKind::ShapeOnly || n.opType == "Dropout" || n.atenName() == "native_dropout");
}

// Q.K^T of a written-out attention: the scores reach a softmax.
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

// P.V of a written-out attention: the probabilities come from a softmax.
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

// A (batched) matrix product A[..., M, K] x B[..., K, N]; vectors as in numpy.
std::optional<ContractionGeometry> matmul(const Node &n, const Value *A, const Value *B) {
  int ra = rankOf(A), rb = rankOf(B);
  if (ra < 1 || rb < 1)
    return std::nullopt;
  ContractionGeometry g;
  g.form = ContractionForm::MatMul;
  g.dtype = A->type.dtype;
  g.M = ra >= 2 ? dimAt(A, -2) : std::optional<int64_t>(1);
  g.K = dimAt(A, -1);
  if (!g.K)
    g.K = dimAt(B, rb >= 2 ? -2 : 0);
  g.N = rb >= 2 ? dimAt(B, -1) : std::optional<int64_t>(1);
  if (feedsSoftmax(out0(n))) {
    g.tiled = {{"K", g.K}};  // the head dim; the sequence length is the attention kernel's business
    g.hint = kHeadHint;
  } else if (comesFromSoftmax(A)) {
    g.tiled = {{"N", g.N}};
    g.hint = kHeadHint;
  } else {
    g.tiled = {{"K", g.K}, {"N", g.N}};
    g.hint = kPadHint;
  }
  return g;
}

// aten::_grouped_mm(A, B, offs): G GEMMs in one kernel. A[S, K] x B[G, K, N]
// (MoE experts: the rows S are partitioned among the groups) writes [S, N];
// A[M, S] x B[S, N] (their weight gradients: the reduction is partitioned)
// writes [G, M, N], K = S / G on average; A[G, M, K] x B[G, K, N] is a bmm.
// How the rows split is data; the total work is not.
std::optional<ContractionGeometry> groupedMm(const Node &n) {
  const Value *A = in(n, 0), *B = in(n, 1);
  int ra = rankOf(A), rb = rankOf(B);
  ContractionGeometry g;
  g.form = ContractionForm::MatMul;
  g.dtype = A ? A->type.dtype : DType::Undefined;
  g.hint = kPadHint;
  if (ra == 2 && rb == 3) {
    g.M = dimAt(A, 0), g.K = dimAt(A, 1), g.N = dimAt(B, 2);
    g.tiled = {{"K", g.K}, {"N", g.N}};
  } else if (ra == 2 && rb == 2) {
    auto groups = dimAt(out0(n), 0), rows = dimAt(A, 1);
    g.M = dimAt(A, 0), g.N = dimAt(B, 1);
    if (groups && rows && *groups > 0)
      g.K = *rows / *groups;
    g.tiled = {{"M", g.M}, {"N", g.N}};
  } else if (ra == 3 && rb == 3) {
    return matmul(n, A, B);
  } else {
    return std::nullopt;
  }
  return g;
}

// ONNX Gemm(A, B) with transA/transB.
std::optional<ContractionGeometry> gemm(const Node &n) {
  const Value *A = in(n, 0), *B = in(n, 1);
  if (rankOf(A) != 2 || rankOf(B) != 2)
    return std::nullopt;
  bool ta = n.attrInt("transA").value_or(0) != 0, tb = n.attrInt("transB").value_or(0) != 0;
  ContractionGeometry g;
  g.form = ContractionForm::Gemm;
  g.dtype = A->type.dtype;
  g.M = dimAt(A, ta ? 1 : 0), g.K = dimAt(A, ta ? 0 : 1), g.N = dimAt(B, tb ? 0 : 1);
  g.tiled = {{"K", g.K}, {"N", g.N}};
  if (ta)
    g.tiled.push_back({"M", g.M});  // A stored transposed: M is its contiguous dim
  g.hint = kPadHint;
  return g;
}

// aten::linear(x[..., K], W[N, K]): x W^T.
std::optional<ContractionGeometry> linear(const Node &n) {
  const Value *X = in(n, 0), *W = in(n, 1);
  if (rankOf(X) < 1 || rankOf(W) != 2)
    return std::nullopt;
  ContractionGeometry g;
  g.form = ContractionForm::Gemm;
  g.dtype = X->type.dtype;
  auto rows = X->type.shape.numElements();
  g.K = dimAt(W, 1), g.N = dimAt(W, 0);
  if (rows && g.K && *g.K > 0)
    g.M = *rows / *g.K;
  g.tiled = {{"K", g.K}, {"N", g.N}};
  g.hint = kPadHint;
  return g;
}

// Conv W: [C_out, C_in/group, k...]; ConvTranspose W: [C_in, C_out/group, k...].
std::optional<ContractionGeometry> conv(const Node &n, const Value *X, const Value *W, bool transpose,
                                        int64_t group) {
  if (rankOf(W) < 3)
    return std::nullopt;
  group = std::max<int64_t>(1, group);
  ContractionGeometry g;
  g.form = transpose ? ContractionForm::ConvTranspose : ContractionForm::Conv;
  g.dtype = X ? X->type.dtype : W->type.dtype;
  auto w0 = dimAt(W, 0), w1 = dimAt(W, 1);
  std::optional<int64_t> cin = transpose ? (w0 ? std::optional<int64_t>(*w0 / group) : std::nullopt) : w1;
  std::optional<int64_t> cout = transpose ? w1 : (w0 ? std::optional<int64_t>(*w0 / group) : std::nullopt);
  std::optional<int64_t> kernel = 1;
  for (int i = 2; i < rankOf(W); ++i) {
    auto d = dimAt(W, i);
    kernel = d && kernel ? checkedMul(*kernel, *d) : std::nullopt;
  }
  const Value *out = out0(n);
  CheckedInt perPixel = cout && *cout > 0 ? checkedMul(*cout, group) : std::nullopt;
  if (auto e = out ? out->type.shape.numElements() : std::nullopt; e && perPixel)
    g.M = *e / *perPixel;  // batch x output pixels
  g.N = cout;
  g.K = cin && kernel ? checkedMul(*cin, *kernel) : std::nullopt;
  g.tiled = {{group > 1 ? "C_in/group" : "C_in", cin}, {group > 1 ? "C_out/group" : "C_out", cout}};
  g.hint = "with zero channels, or choose a multiple of the alignment when designing the layer";
  return g;
}

// "bij,bjk->bik": K = product of the indices both operands share and the
// output drops, N = product of the indices only the second operand brings.
std::optional<ContractionGeometry> einsum(const Node &n) {
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
  ContractionGeometry g;
  g.form = ContractionForm::Einsum;
  g.dtype = A->type.dtype;
  g.M = M, g.N = N, g.K = K;
  g.tiled = {{"K", K}, {"N", N}};
  g.hint = kPadHint;
  return g;
}

// ONNX Attention (opset 23): Q/K/V are [B, H, S, D] or [B, S, H*D]; aten's
// scaled_dot_product attention ops take [B, H, S, D].
std::optional<ContractionGeometry> attention(const Node &n) {
  const Value *Q = in(n, 0), *V = in(n, 2);
  if (!Q)
    return std::nullopt;
  auto headDim = [&](const Value *x, const char *headsAttr) -> std::optional<int64_t> {
    if (rankOf(x) == 4)
      return dimAt(x, 3);
    auto heads = n.attrInt(headsAttr);
    auto hidden = dimAt(x, -1);
    if (rankOf(x) == 3 && heads && *heads > 0 && hidden && *hidden % *heads == 0)
      return *hidden / *heads;
    return std::nullopt;
  };
  ContractionGeometry g;
  g.form = ContractionForm::Attention;
  g.dtype = Q->type.dtype;
  g.K = headDim(Q, "q_num_heads");
  g.tiled = {{"head_dim", g.K}, {"v_head_dim", headDim(V, "kv_num_heads")}};
  g.hint = "by choosing a head dim such as 64 or 128 (fused attention kernels want it)";
  return g;
}

std::optional<ContractionGeometry> onnxGeometry(const Node &n) {
  const std::string &op = n.opType;
  if (op == "MatMul" || op == "MatMulInteger") return matmul(n, in(n, 0), in(n, 1));
  if (op == "QLinearMatMul") return matmul(n, in(n, 0), in(n, 3));
  if (op == "Gemm") return gemm(n);
  if (op == "Conv" || op == "ConvInteger") return conv(n, in(n, 0), in(n, 1), false, n.attrInt("group").value_or(1));
  if (op == "QLinearConv") return conv(n, in(n, 0), in(n, 3), false, n.attrInt("group").value_or(1));
  if (op == "ConvTranspose") return conv(n, in(n, 0), in(n, 1), true, n.attrInt("group").value_or(1));
  if (op == "Einsum") return einsum(n);
  if (op == "Attention") return attention(n);
  return std::nullopt;
}

std::optional<ContractionGeometry> atenGeometry(const Node &n, llvm::StringRef op) {
  if (op == "mm" || op == "bmm" || op == "matmul") return matmul(n, in(n, 0), in(n, 1));
  if (op == "addmm" || op == "baddbmm") return matmul(n, in(n, 1), in(n, 2));  // (bias, a, b)
  if (op == "linear") return linear(n);
  if (op == "_grouped_mm") return groupedMm(n);
  if (op == "convolution" || op == "_convolution")
    return conv(n, in(n, 0), in(n, 1), n.attrInt("transposed").value_or(0) != 0, n.attrInt("groups").value_or(1));
  if (op == "conv1d" || op == "conv2d" || op == "conv3d")
    return conv(n, in(n, 0), in(n, 1), false, n.attrInt("groups").value_or(1));
  if (op == "conv_transpose1d" || op == "conv_transpose2d" || op == "conv_transpose3d")
    return conv(n, in(n, 0), in(n, 1), true, n.attrInt("groups").value_or(1));
  if (op == "scaled_dot_product_attention" || op.startswith("_scaled_dot_product_"))
    return op.endswith("_backward") ? std::nullopt : attention(n);
  return std::nullopt;
}

}  // namespace

std::optional<ContractionGeometry> contractionGeometry(const Node &n) {
  std::string aten = n.atenName();
  if (!aten.empty())
    return atenGeometry(n, aten);
  if (!n.domain.empty())
    return std::nullopt;  // com.microsoft / custom domains: not ai.onnx's ops
  return onnxGeometry(n);
}

}  // namespace graphlint
