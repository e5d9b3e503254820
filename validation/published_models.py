"""The models of validation/published_runs.yaml, built from transformers configs
at the sizes the sources name, for graphlint-export --model (meta device, fake
tensors: nothing is computed). Each factory says where its dims come from.

The configs keep transformers' defaults elsewhere (use_cache=True included:
the exporter traces a training step with the cache off and says so). Llama 3.1's
rope scaling changes the rotary frequencies' values, not any shape or cost, and
is left at the default."""
from transformers import LlamaConfig, LlamaForCausalLM, MptConfig, MptForCausalLM


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


def _mpt(d_model, heads, layers):
    # llm-foundry scripts/train/yamls/pretrain/mpt-*.yaml: expansion_ratio 4,
    # vocab 50368. transformers' MPT uses ALiBi, so the benchmark model's
    # learned positional embedding (seq x d_model parameters) is absent.
    return MptForCausalLM(MptConfig(d_model=d_model, n_heads=heads, n_layers=layers, expansion_ratio=4,
                                    vocab_size=50368, max_seq_len=65536))


def mpt_7b():
    return _mpt(4096, 32, 32)


def mpt_30b():
    return _mpt(7168, 56, 48)
