"""graphlint capture driver for one historical version of nanoGPT's model.py
(karpathy/nanoGPT, MIT; the version is copied beside this file as model.py by
validation/diff_history.py). Not part of nanoGPT: it only builds the model."""
import dataclasses
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model as m  # noqa: E402

# Sizes only; every other field (vocab_size, dropout, bias) keeps the version's default.
TINY = dict(n_layer=2, n_head=4, n_embd=64, block_size=32)
BATCH = 2


def model():
    fields = {f.name for f in dataclasses.fields(m.GPTConfig)}
    return m.GPT(m.GPTConfig(**{k: v for k, v in TINY.items() if k in fields}))


def example_inputs():
    idx = torch.randint(0, 64, (BATCH, TINY["block_size"]))
    return (idx, torch.randint(0, 64, (BATCH, TINY["block_size"])))
