"""timm-style vision transformer (timm/models/vision_transformer.py Attention,
Mlp and Block, trimmed): the base of the vit_* pairs of validation/diff_pairs.py."""
import torch
import torch.nn as nn
import torch.nn.functional as F

EMBED = 64
HEADS = 4
DEPTH = 2
MLP_RATIO = 4
PATCH = 8
IMG = 32
QKV_BIAS = True


class Attention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.num_heads = HEADS
        self.head_dim = dim // HEADS
        self.scale = self.head_dim ** -0.5
        self.qkv = nn.Linear(dim, dim * 3, bias=QKV_BIAS)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        q = q * self.scale
        attn = q @ k.transpose(-2, -1)
        attn = attn.softmax(dim=-1)
        x = attn @ v
        x = x.transpose(1, 2).reshape(B, N, C)
        x = self.proj(x)
        return x


class Mlp(nn.Module):
    def __init__(self, dim):
        super().__init__()
        hidden = dim * MLP_RATIO
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        x = self.fc1(x)
        x = self.act(x)
        x = self.fc2(x)
        return x


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = Attention(dim)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = Mlp(dim)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        x = x + self.mlp(self.norm2(x))
        return x


class VisionTransformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, EMBED, kernel_size=PATCH, stride=PATCH)
        self.pos_embed = nn.Parameter(torch.zeros(1, (IMG // PATCH) ** 2, EMBED))
        self.blocks = nn.Sequential(*[Block(EMBED) for _ in range(DEPTH)])
        self.norm = nn.LayerNorm(EMBED)
        self.head = nn.Linear(EMBED, 10)

    def forward(self, x, target):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        x = x + self.pos_embed
        x = self.blocks(x)
        x = self.norm(x)
        x = x.mean(dim=1)
        x = self.head(x)
        return F.cross_entropy(x, target)


def model():
    return VisionTransformer()


def example_inputs():
    return (torch.randn(4, 3, IMG, IMG), torch.randint(0, 10, (4,)))
