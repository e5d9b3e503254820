"""Small transformers mixture-of-experts models for tests/capture/moe_capture_test.py
(graphlint-export --model moe_models:NAME). NAME is FAMILY_DTYPE_IMPL: FAMILY
mixtral, qwen3moe or olmoe; DTYPE fp32 or bf16 (the whole model cast, as
`.to(torch.bfloat16)`); IMPL grouped (transformers' default grouped_mm
experts) or eager (the per-expert Python loop). Each returns only the loss
(a training step calls loss.backward() on it), from random weights."""
import re

import torch

# family -> (config class, model class, config kwargs, experts E, top-k k)
FAMILIES = {
    # The user trial's tiny Mixtral (shared/user-trial/decoders.py).
    "mixtral": ("MixtralConfig", "MixtralForCausalLM",
                dict(vocab_size=2048, hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                     num_attention_heads=8, num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2,
                     max_position_embeddings=1024, sliding_window=None, router_aux_loss_coef=0.0), 4, 2),
    "qwen3moe": ("Qwen3MoeConfig", "Qwen3MoeForCausalLM",
                 dict(vocab_size=1024, hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=2, head_dim=32, moe_intermediate_size=96, num_experts=8,
                      num_experts_per_tok=2, decoder_sparse_step=1, mlp_only_layers=[], norm_topk_prob=True,
                      max_position_embeddings=1024), 8, 2),
    # Held out: never used while the MoE capture was written or checked.
    "olmoe": ("OlmoeConfig", "OlmoeForCausalLM",
              dict(vocab_size=1024, hidden_size=128, intermediate_size=64, num_hidden_layers=2,
                   num_attention_heads=4, num_key_value_heads=4, num_experts=8, num_experts_per_tok=2,
                   max_position_embeddings=1024, eos_token_id=None), 8, 2),
}


class LossOnly(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids, labels):
        return self.m(input_ids=input_ids, labels=labels).loss


def build(family, dtype, impl):
    import transformers
    cfg_name, model_name, kw, _, _ = FAMILIES[family]
    cfg = getattr(transformers, cfg_name)(tie_word_embeddings=False, attention_dropout=0.0, use_cache=False,
                                          output_router_logits=False, **kw)
    if impl == "eager":
        cfg._experts_implementation = "eager"
    torch.manual_seed(0)
    m = LossOnly(getattr(transformers, model_name)(cfg))
    return m.to(torch.bfloat16) if dtype == "bf16" else m


def __getattr__(name):
    m = re.fullmatch(r"([a-z0-9]+)_(fp32|bf16)_(grouped|eager)", name)
    if m and m.group(1) in FAMILIES:
        return lambda: build(*m.groups())
    raise AttributeError(name)
