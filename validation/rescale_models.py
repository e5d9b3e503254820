"""Held-out models for "rescaling equals capturing" (docs/validation.md, issue 42 item 5): built from configs, random init, nothing downloaded."""
import torch


def gpt2_tiny():
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    return GPT2LMHeadModel(GPT2Config(vocab_size=1024, n_embd=128, n_layer=4, n_head=4, n_positions=1024))


def llama_tiny():
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    return LlamaForCausalLM(LlamaConfig(vocab_size=1024, hidden_size=256, intermediate_size=512, num_hidden_layers=4,
                                        num_attention_heads=8, num_key_value_heads=4, max_position_embeddings=2048))


def vit_tiny():
    import timm
    torch.manual_seed(0)
    return timm.create_model("vit_tiny_patch16_224", num_classes=100)
