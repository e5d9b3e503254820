"""The 1.3B GPT of issue 14 (nanoGPT layout, GPT-2 shapes): 24 layers,
d_model 2048, 16 heads, vocab 50257, context 2048, the LM head tied to the
token embedding, dropout 0.1 on attention probabilities and residuals, so a
--train capture saves the dropout masks. Exactly 1,315,723,264 parameters:
the same as transformers' GPT2LMHeadModel with that config. Pure torch, so it
captures on torch 1.13 and 2.x. Example inputs: batch 8, seq 2048 (under
graphlint-export they are fake: nothing is allocated)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, CONTEXT, LAYERS, D_MODEL, HEADS, DROPOUT = 50257, 2048, 24, 2048, 16, 0.1
BATCH, SEQ = 8, 2048


class CausalSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(D_MODEL, 3 * D_MODEL)
        self.proj = nn.Linear(D_MODEL, D_MODEL)
        self.attn_drop = nn.Dropout(DROPOUT)
        self.resid_drop = nn.Dropout(DROPOUT)
        self.register_buffer("mask", torch.tril(torch.ones(CONTEXT, CONTEXT)).view(1, 1, CONTEXT, CONTEXT),
                             persistent=False)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(D_MODEL, dim=2)
        q = q.view(b, t, HEADS, c // HEADS).transpose(1, 2)
        k = k.view(b, t, HEADS, c // HEADS).transpose(1, 2)
        v = v.view(b, t, HEADS, c // HEADS).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
        att = self.attn_drop(F.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        return self.resid_drop(self.proj(y))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(D_MODEL)
        self.attn = CausalSelfAttention()
        self.ln2 = nn.LayerNorm(D_MODEL)
        self.fc = nn.Linear(D_MODEL, 4 * D_MODEL)
        self.out = nn.Linear(4 * D_MODEL, D_MODEL)
        self.drop = nn.Dropout(DROPOUT)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.drop(self.out(F.gelu(self.fc(self.ln2(x)))))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, D_MODEL)
        self.pos = nn.Embedding(CONTEXT, D_MODEL)
        self.drop = nn.Dropout(DROPOUT)
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.ln_f = nn.LayerNorm(D_MODEL)
        self.head = nn.Linear(D_MODEL, VOCAB, bias=False)
        self.head.weight = self.tok.weight  # tied

    def forward(self, idx, targets):
        t = idx.shape[1]
        pos = torch.arange(t, device=idx.device)
        x = self.drop(self.tok(idx) + self.pos(pos))
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def model():
    return GPT()


def example_inputs():
    return (torch.randint(0, VOCAB, (BATCH, SEQ)), torch.randint(0, VOCAB, (BATCH, SEQ)))
