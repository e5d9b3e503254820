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
    (its position table has that many rows)."""
    m = re.fullmatch(r"(mpt_\d+b)_s(\d+)", name)
    if m and m.group(1) in _MPT_DIMS:
        return lambda: _mpt(*_MPT_DIMS[m.group(1)], int(m.group(2)))
    raise AttributeError(name)
