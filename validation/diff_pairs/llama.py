"""Hugging Face transformers-style Llama decoder (modeling_llama.py's
LlamaRMSNorm, LlamaMLP, LlamaAttention with grouped KV heads, trimmed) driven
by a config dict as transformers' LlamaConfig: the base of the llama_* pairs
of validation/diff_pairs.py."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CONFIG = dict(hidden_size=64, intermediate_size=176, num_attention_heads=4, num_key_value_heads=4,
              num_hidden_layers=2, vocab_size=128, rms_norm_eps=1e-6, hidden_act="silu", attention_bias=False)


class LlamaRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states


ACT2FN = {"silu": nn.SiLU, "gelu": nn.GELU, "relu": nn.ReLU}


class LlamaMLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.gate_proj = nn.Linear(config["hidden_size"], config["intermediate_size"], bias=False)
        self.up_proj = nn.Linear(config["hidden_size"], config["intermediate_size"], bias=False)
        self.down_proj = nn.Linear(config["intermediate_size"], config["hidden_size"], bias=False)
        self.act_fn = ACT2FN[config["hidden_act"]]()

    def forward(self, x):
        down_proj = self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))
        return down_proj


def repeat_kv(hidden_states, n_rep):
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


class LlamaAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.num_heads = config["num_attention_heads"]
        self.num_kv = config["num_key_value_heads"]
        self.head_dim = config["hidden_size"] // self.num_heads
        bias = config["attention_bias"]
        self.q_proj = nn.Linear(config["hidden_size"], self.num_heads * self.head_dim, bias=bias)
        self.k_proj = nn.Linear(config["hidden_size"], self.num_kv * self.head_dim, bias=bias)
        self.v_proj = nn.Linear(config["hidden_size"], self.num_kv * self.head_dim, bias=bias)
        self.o_proj = nn.Linear(self.num_heads * self.head_dim, config["hidden_size"], bias=bias)

    def forward(self, hidden_states):
        bsz, q_len, _ = hidden_states.size()
        query_states = self.q_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        key_states = self.k_proj(hidden_states).view(bsz, q_len, self.num_kv, self.head_dim).transpose(1, 2)
        value_states = self.v_proj(hidden_states).view(bsz, q_len, self.num_kv, self.head_dim).transpose(1, 2)
        key_states = repeat_kv(key_states, self.num_heads // self.num_kv)
        value_states = repeat_kv(value_states, self.num_heads // self.num_kv)
        attn_output = F.scaled_dot_product_attention(query_states, key_states, value_states, is_causal=True)
        attn_output = attn_output.transpose(1, 2).reshape(bsz, q_len, -1)
        return self.o_proj(attn_output)


class LlamaDecoderLayer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.self_attn = LlamaAttention(config)
        self.mlp = LlamaMLP(config)
        self.input_layernorm = LlamaRMSNorm(config["hidden_size"], config["rms_norm_eps"])
        self.post_attention_layernorm = LlamaRMSNorm(config["hidden_size"], config["rms_norm_eps"])

    def forward(self, hidden_states):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states = self.self_attn(hidden_states)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states = self.mlp(hidden_states)
        hidden_states = residual + hidden_states
        return hidden_states


class LlamaForCausalLM(nn.Module):
    def __init__(self, config=CONFIG):
        super().__init__()
        self.embed_tokens = nn.Embedding(config["vocab_size"], config["hidden_size"])
        self.layers = nn.ModuleList([LlamaDecoderLayer(config) for _ in range(config["num_hidden_layers"])])
        self.norm = LlamaRMSNorm(config["hidden_size"], config["rms_norm_eps"])
        self.lm_head = nn.Linear(config["hidden_size"], config["vocab_size"], bias=False)

    def forward(self, input_ids, labels):
        hidden_states = self.embed_tokens(input_ids)
        for decoder_layer in self.layers:
            hidden_states = decoder_layer(hidden_states)
        hidden_states = self.norm(hidden_states)
        logits = self.lm_head(hidden_states)
        return F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1))


def model():
    return LlamaForCausalLM()


def example_inputs():
    return (torch.randint(0, 128, (2, 32)), torch.randint(0, 128, (2, 32)))
