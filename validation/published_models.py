"""The models of validation/published_runs.yaml, built from transformers configs
at the sizes the sources name, for graphlint-export --model (meta device, fake
tensors: nothing is computed). Each factory says where its dims come from.

The configs keep transformers' defaults elsewhere (use_cache=True included:
the exporter traces a training step with the cache off and says so). Llama 3.1's
rope scaling changes the rotary frequencies' values, not any shape or cost, and
is left at the default."""
import re

from transformers import LlamaConfig, LlamaForCausalLM


def _llama(hidden, inter, layers, heads):
    # Llama 3.1 (arXiv 2407.21783 Table 3; torchtitan's llama3 flavours give
    # the same FFN sizes from ffn_dim_multiplier/multiple_of): vocab 128256,
    # 8 KV heads, head dim 128, untied output, RMSNorm eps 1e-5, rope theta 500000.
    return LlamaForCausalLM(LlamaConfig(vocab_size=128256, hidden_size=hidden, intermediate_size=inter,
                                        num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=8,
                                        max_position_embeddings=131072, rms_norm_eps=1e-5, rope_theta=500000.0,
                                        tie_word_embeddings=False))


def llama3_8b():
    return _llama(4096, 14336, 32, 32)


def llama3_70b():
    return _llama(8192, 28672, 80, 64)


def llama3_405b():
    return _llama(16384, 53248, 126, 128)


def _mpt(d_model, heads, layers, seq):
    # llm-foundry's benchmark table (scripts/train/benchmarking/README.md at
    # 061f2c7): d_model/n_heads/n_layers from scripts/train/yamls/pretrain/
    # mpt-*.yaml, expansion_ratio 4, vocab 50368. The table's NumParams grows
    # with SeqLen, so its benchmark model has a learned position table of
    # SeqLen rows (not MPT's ALiBi); a GPT-2 block (biases, GELU MLP, tied
    # embeddings, LayerNorm) at these dims gives every NumParams of the table
    # exactly (6,658,859,008 at 7b/2048, 6,684,024,832 at 7b/8192,
    # 29,975,214,080 at 30b/2048). Attention is SDPA (causal, no mask): the
    # yamls use a fused flash kernel (attn_impl triton), never the materialised
    # softmax that transformers' MPT writes. No dropout (the yamls' *_pdrop
    # are 0.0).
    from transformers import GPT2Config, GPT2LMHeadModel
    return GPT2LMHeadModel(GPT2Config(n_embd=d_model, n_head=heads, n_layer=layers, n_inner=4 * d_model,
                                      vocab_size=50368, n_positions=seq, activation_function="gelu",
                                      resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                                      attn_implementation="sdpa"))


_MPT_DIMS = {"mpt_7b": (4096, 32, 32), "mpt_30b": (7168, 56, 48)}


def __getattr__(name):
    """mpt_7b_s2048 and the like: the benchmark model at one sequence length
    (its position table has that many rows). FACTORY_bf16: the model cast to
    bfloat16, as a run whose parameters compute in bf16 (FSDP2's param_dtype,
    Megatron's --bf16) holds it: the capture records the bf16 activations and
    the fp32 upcasts the model writes itself (the loss's logits.float(), the
    RMSNorm statistics), which graphlint then keeps (docs/memory.md)."""
    if name.endswith("_bf16"):
        base = globals().get(name[:-5]) or __getattr__(name[:-5])

        def bf16():
            import torch
            return base().to(torch.bfloat16)
        return bf16
    m = re.fullmatch(r"(mpt_\d+b)_s(\d+)", name)
    if m and m.group(1) in _MPT_DIMS:
        return lambda: _mpt(*_MPT_DIMS[m.group(1)], int(m.group(2)))
    raise AttributeError(name)


# Mixture-of-experts models. Their dims are those of torchtitan 0.3.0 (the
# PyPI package, torchtitan/models/<family>/__init__.py, each flavour's
# function named below), built here with transformers' classes of the same
# architecture. The experts run transformers' default grouped_mm path (one
# grouped GEMM per projection for all experts, as torchtitan's and Megatron's
# grouped experts do); routing functions differ in elementwise detail only.

def _qwen3_moe(hidden, layers, heads, moe_inter, theta):
    # Qwen3-MoE: 4 KV heads, head dim 128, 128 experts, top-8, vocab 151936,
    # untied output; every layer sparse (no dense or shared FFN).
    from transformers import Qwen3MoeConfig, Qwen3MoeForCausalLM
    return Qwen3MoeForCausalLM(Qwen3MoeConfig(
        vocab_size=151936, hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
        num_key_value_heads=4, head_dim=128, moe_intermediate_size=moe_inter, num_experts=128, num_experts_per_tok=8,
        decoder_sparse_step=1, mlp_only_layers=[], norm_topk_prob=True, tie_word_embeddings=False,
        max_position_embeddings=40960, rope_theta=theta))


def qwen3_30b_a3b():
    # torchtitan qwen3 `_30b_a3b`: dim 2048, 48 layers, 32 heads, experts of
    # hidden dim 768, rope theta 1e6.
    return _qwen3_moe(2048, 48, 32, 768, 1000000.0)


def qwen3_235b_a22b():
    # torchtitan qwen3 `_235b_a22b`: dim 4096, 94 layers, 64 heads, experts of
    # hidden dim 1536, rope theta 5e6.
    return _qwen3_moe(4096, 94, 64, 1536, 5000000.0)


def gpt_oss_120b():
    # torchtitan gpt_oss `_120b`: dim 2880, 36 layers, 128 experts of hidden
    # dim 2880 with biases, top-4, 64 heads of dim 64, 8 KV heads, attention
    # biases and sinks, a 128-token sliding window on the even layers, vocab
    # 201088, untied output.
    from transformers import GptOssConfig, GptOssForCausalLM
    return GptOssForCausalLM(GptOssConfig(
        vocab_size=201088, hidden_size=2880, intermediate_size=2880, num_hidden_layers=36, num_local_experts=128,
        num_experts_per_tok=4, num_attention_heads=64, num_key_value_heads=8, head_dim=64, sliding_window=128,
        attention_bias=True, tie_word_embeddings=False))


def deepseek_v3_16b():
    # torchtitan deepseek_v3 `_16b` (the YAML row's flavour): dim 2048, 27
    # layers of which the first is dense (FFN 10944), 16 heads, MLA with no
    # query LoRA, kv_lora_rank 512, qk nope/rope head dims 128/64, v head dim
    # 128, 64 routed experts of hidden dim 1408 plus 2 shared, top-6, vocab
    # 102400, untied output, no multi-token prediction layers.
    from transformers import DeepseekV3Config, DeepseekV3ForCausalLM
    return DeepseekV3ForCausalLM(DeepseekV3Config(
        vocab_size=102400, hidden_size=2048, intermediate_size=10944, moe_intermediate_size=1408,
        num_hidden_layers=27, first_k_dense_replace=1, num_attention_heads=16, num_key_value_heads=16,
        q_lora_rank=None, kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128,
        n_routed_experts=64, n_shared_experts=2, num_experts_per_tok=6, n_group=1, topk_group=1,
        tie_word_embeddings=False, num_mtp_layers=0))
