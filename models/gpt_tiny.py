"""The GPT-style decoder of the bundled models (models/export_models.py),
the memory validation (validation/validate_memory.py) and models/fx/gpt_small.py:
pre-LN blocks, a bool causal-mask buffer, no dropout. Needs torch only."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_head):
        super().__init__()
        assert d_model % n_head == 0
        self.d_model = d_model
        self.n_head = n_head
        self.head_dim = d_model // n_head
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x, causal_mask):
        b, t, c = x.size()
        q, k, v = self.qkv(x).split(self.d_model, dim=2)
        q = q.view(b, t, self.n_head, self.head_dim).transpose(1, 2)
        k = k.view(b, t, self.n_head, self.head_dim).transpose(1, 2)
        v = v.view(b, t, self.n_head, self.head_dim).transpose(1, 2)
        att = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim))
        mask = causal_mask[:, :, :t, :t]
        att = torch.where(mask, att, torch.full_like(att, float("-inf")))
        att = F.softmax(att, dim=-1)
        y = torch.matmul(att, v)
        y = y.transpose(1, 2).contiguous().view(b, t, c)
        return self.proj(y)


class MLP(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.fc = nn.Linear(d_model, 4 * d_model)
        self.act = nn.GELU()
        self.proj = nn.Linear(4 * d_model, d_model)

    def forward(self, x):
        return self.proj(self.act(self.fc(x)))


class Block(nn.Module):
    """Pre-LN transformer block."""

    def __init__(self, d_model, n_head):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, n_head)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = MLP(d_model)

    def forward(self, x, causal_mask):
        x = x + self.attn(self.ln1(x), causal_mask)
        x = x + self.mlp(self.ln2(x))
        return x


class GPTTiny(nn.Module):
    def __init__(self, vocab=1000, d_model=128, n_head=4, n_layer=2, max_seq=32):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab, d_model)
        self.pos_emb = nn.Embedding(max_seq, d_model)
        self.blocks = nn.ModuleList([Block(d_model, n_head) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab, bias=False)
        # Lower-triangular causal mask (bool, 1x1xSxS; 1024 bytes, so it stays
        # inline in the weightless copy), sliced to the runtime sequence
        # length.  One buffer shared by all blocks: a per-block copy would be
        # deduplicated by the exporter into Identity nodes.
        mask = torch.tril(torch.ones(max_seq, max_seq, dtype=torch.bool))
        self.register_buffer("causal_mask", mask.view(1, 1, max_seq, max_seq))

    def forward(self, input_ids):
        t = input_ids.size(1)
        pos = torch.arange(0, t, dtype=torch.long, device=input_ids.device).unsqueeze(0)
        x = self.tok_emb(input_ids) + self.pos_emb(pos)
        for blk in self.blocks:
            x = blk(x, self.causal_mask)
        x = self.ln_f(x)
        return self.lm_head(x)
