"""A small GPT-style decoder for graphlint-export and validation/validate_memory.py
--fx: the GPTTiny of models/export_models.py with 4 layers, d_model 256,
4 heads, a 2048-token vocabulary and 128 tokens; batch 2."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from gpt_tiny import GPTTiny  # noqa: E402

VOCAB, SEQ, BATCH = 2048, 128, 2


def model():
    return GPTTiny(vocab=VOCAB, d_model=256, n_head=4, n_layer=4, max_seq=SEQ)


def example_inputs():
    return (torch.randint(0, VOCAB, (BATCH, SEQ)),)
