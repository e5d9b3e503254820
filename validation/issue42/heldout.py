# Held-out decoders for docs/validation.md, issue 42 item 4; run beside the shared user-trial files (decoders.py).
"""Held-out models for issue 42 items 4 and 7 (not tuned on): a tiny Llama and a tiny GPT-NeoX
in bf16 (weights cast to bf16, as decoders.qwen2_tiny_loss_bf16), and the Llama in fp32."""
import torch
from transformers import LlamaConfig, LlamaForCausalLM, GPTNeoXConfig, GPTNeoXForCausalLM
from decoders import LossOnly


def llama_tiny():
    torch.manual_seed(0)
    return LlamaForCausalLM(LlamaConfig(vocab_size=3000, hidden_size=192, intermediate_size=512, num_hidden_layers=3,
                                        num_attention_heads=6, num_key_value_heads=3, max_position_embeddings=512,
                                        tie_word_embeddings=False, use_cache=False))


def neox_tiny():
    torch.manual_seed(0)
    return GPTNeoXForCausalLM(GPTNeoXConfig(vocab_size=3000, hidden_size=256, intermediate_size=1024,
                                            num_hidden_layers=3, num_attention_heads=8, max_position_embeddings=512,
                                            use_cache=False, hidden_dropout=0.0, attention_dropout=0.0))


def llama_tiny_loss_bf16():
    return LossOnly(llama_tiny()).to(torch.bfloat16)


def neox_tiny_loss_bf16():
    return LossOnly(neox_tiny()).to(torch.bfloat16)


def llama_tiny_loss():
    return LossOnly(llama_tiny())
