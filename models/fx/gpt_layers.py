"""A stack of GPT layers (the layer of models/fx/gpt_1_3b.py: pre-LN, fused
QKV, written-out causal attention, GELU MLP, dropout 0.1 on the attention
probabilities and both residual branches) at a small size, for the
per-layer closed form of Korthikanti et al. 2022 (docs/validation.md
"Transformer layers against the closed forms"). GPT_LAYERS (default 1) sets
the depth, GPT_DROPOUT (default 0.1) the dropout (0: no Dropout modules); s=128, b=4, h=256, a=4.
The input is the embedding output itself, so the stack holds nothing but
layers."""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

LAYERS = int(os.environ.get("GPT_LAYERS", "1"))
DROPOUT = float(os.environ.get("GPT_DROPOUT", "0.1"))
SEQ, BATCH, D_MODEL, HEADS = 128, 4, 256, 4


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(D_MODEL), nn.LayerNorm(D_MODEL)
        self.qkv, self.proj = nn.Linear(D_MODEL, 3 * D_MODEL), nn.Linear(D_MODEL, D_MODEL)
        self.fc, self.out = nn.Linear(D_MODEL, 4 * D_MODEL), nn.Linear(4 * D_MODEL, D_MODEL)
        # No dropout means no Dropout modules: nn.Dropout(0.0) in train() still
        # copies its input (a clone the attention matmul then saves).
        drop = (lambda: nn.Dropout(DROPOUT)) if DROPOUT > 0 else nn.Identity
        self.attn_drop, self.resid_drop, self.mlp_drop = (drop() for _ in range(3))
        self.register_buffer("mask", torch.tril(torch.ones(SEQ, SEQ)).view(1, 1, SEQ, SEQ), persistent=False)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (y.view(b, t, HEADS, c // HEADS).transpose(1, 2) for y in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(c // HEADS))
        att = self.attn_drop(F.softmax(att.masked_fill(self.mask == 0, float("-inf")), dim=-1))
        x = x + self.resid_drop(self.proj((att @ v).transpose(1, 2).contiguous().view(b, t, c)))
        return x + self.mlp_drop(self.out(F.gelu(self.fc(self.ln2(x)))))


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(*(Layer() for _ in range(LAYERS)))

    def forward(self, x):
        return self.layers(x).sum()


def model():
    return Stack()


def example_inputs():
    return (torch.randn(BATCH, SEQ, D_MODEL, requires_grad=True),)
