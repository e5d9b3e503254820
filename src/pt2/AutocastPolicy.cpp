#include "AutocastPolicy.h"

#include <llvm/ADT/StringSet.h>

#include <initializer_list>

namespace graphlint::pt2 {
namespace {

llvm::StringSet<> set(std::initializer_list<llvm::StringRef> names) {
  llvm::StringSet<> s;
  for (llvm::StringRef n : names)
    s.insert(n);
  return s;
}

// AutocastCPU's registrations (torch 2.x).
const llvm::StringSet<> &cpuLower() {
  static const llvm::StringSet<> s = set({
      "conv1d", "conv2d", "conv3d", "bmm", "mm", "linalg_vecdot", "baddbmm", "addmm", "_addmm_activation", "addbmm",
      "linear", "_convolution", "matmul", "conv_tbc", "mkldnn_rnn_layer", "conv_transpose1d", "conv_transpose2d",
      "conv_transpose3d", "prelu", "scaled_dot_product_attention", "_native_multi_head_attention"});
  return s;
}

const llvm::StringSet<> &cpuFp32() {
  static const llvm::StringSet<> s = set({
      "avg_pool3d", "binary_cross_entropy", "grid_sampler", "polar", "prod", "quantile", "nanquantile", "stft",
      "cdist", "grid_sampler_2d", "_grid_sampler_2d_cpu_fallback", "grid_sampler_3d", "trace", "view_as_complex",
      "cholesky", "cholesky_inverse", "cholesky_solve", "inverse", "lu_solve", "orgqr", "ormqr", "pinverse",
      "max_pool3d", "max_unpool2d", "max_unpool3d", "adaptive_avg_pool3d", "reflection_pad1d", "reflection_pad2d",
      "replication_pad1d", "replication_pad2d", "replication_pad3d", "mse_loss", "cosine_embedding_loss", "nll_loss",
      "nll_loss2d", "hinge_embedding_loss", "poisson_nll_loss", "smooth_l1_loss", "cross_entropy_loss", "l1_loss",
      "huber_loss", "margin_ranking_loss", "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss",
      "ctc_loss", "kl_div", "multilabel_margin_loss", "binary_cross_entropy_with_logits", "fft_fft", "fft_ifft",
      "fft_fft2", "fft_ifft2", "fft_fftn", "fft_ifftn", "fft_rfft", "fft_irfft", "fft_rfft2", "fft_irfft2",
      "fft_rfftn", "fft_irfftn", "fft_hfft", "fft_ihfft", "linalg_cond", "linalg_matrix_rank", "linalg_solve",
      "linalg_cholesky", "linalg_svdvals", "linalg_eigvals", "linalg_eigvalsh", "linalg_inv",
      "linalg_householder_product", "linalg_tensorinv", "linalg_tensorsolve", "fake_quantize_per_tensor_affine",
      "geqrf", "_lu_with_info", "qr", "svd", "triangular_solve", "fractional_max_pool2d", "fractional_max_pool3d",
      "adaptive_max_pool3d", "multilabel_margin_loss_forward", "linalg_qr", "linalg_cholesky_ex", "linalg_svd",
      "linalg_eig", "linalg_eigh", "linalg_lstsq", "linalg_inv_ex"});
  return s;
}

const llvm::StringSet<> &cpuPromote() {
  static const llvm::StringSet<> s = set({"stack", "cat", "index_copy"});
  return s;
}

// AutocastCUDA's (AT_FORALL_LOWER_PRECISION_FP, AT_FORALL_FP32,
// AT_FORALL_PROMOTE). The fp32_set_opt_dtype ops (softmax, log_softmax,
// sum, prod, cumsum, cumprod, the norms) compute in float32 without copying
// their input: their recorded output dtype is all there is, policy None.
const llvm::StringSet<> &cudaLower() {
  static const llvm::StringSet<> s = set({
      "_convolution", "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d",
      "conv_transpose3d", "convolution", "prelu", "addmm", "addmv", "addr", "matmul", "einsum", "mm", "mv",
      "linalg_vecdot", "linear", "addbmm", "baddbmm", "bmm", "chain_matmul", "linalg_multi_dot",
      "_thnn_fused_lstm_cell", "_thnn_fused_gru_cell", "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell",
      "_scaled_dot_product_flash_attention", "scaled_dot_product_attention"});
  return s;
}

const llvm::StringSet<> &cudaFp32() {
  static const llvm::StringSet<> s = set({
      "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p", "reciprocal", "rsqrt",
      "sinh", "tan", "pow", "softplus", "layer_norm", "native_layer_norm", "group_norm", "frobenius_norm",
      "nuclear_norm", "cosine_similarity", "poisson_nll_loss", "cosine_embedding_loss", "nll_loss", "nll_loss2d",
      "hinge_embedding_loss", "kl_div", "l1_loss", "smooth_l1_loss", "huber_loss", "mse_loss",
      "margin_ranking_loss", "multilabel_margin_loss", "soft_margin_loss", "triplet_margin_loss",
      "multi_margin_loss", "binary_cross_entropy_with_logits", "dist", "pdist", "cdist", "renorm", "logsumexp",
      "upsample_nearest1d", "_upsample_nearest_exact1d", "upsample_nearest2d", "_upsample_nearest_exact2d",
      "upsample_nearest3d", "_upsample_nearest_exact3d", "upsample_linear1d", "upsample_bilinear2d",
      "_upsample_bilinear2d_aa", "upsample_trilinear3d", "upsample_bicubic2d", "_upsample_bicubic2d_aa"});
  return s;
}

const llvm::StringSet<> &cudaPromote() {
  static const llvm::StringSet<> s = set({"addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "grid_sampler",
                                          "index_put", "tensordot", "scatter_add"});
  return s;
}

}  // namespace

AutocastPolicy autocastPolicy(llvm::StringRef device, llvm::StringRef op) {
  bool cpu = device == "cpu";
  if ((cpu ? cpuLower() : cudaLower()).count(op))
    return AutocastPolicy::LowerPrecision;
  if ((cpu ? cpuFp32() : cudaFp32()).count(op))
    return AutocastPolicy::Fp32;
  if ((cpu ? cpuPromote() : cudaPromote()).count(op))
    return AutocastPolicy::Promote;
  return AutocastPolicy::None;
}

}  // namespace graphlint::pt2
