"""graphlint capture driver for one historical version of minGPT's
mingpt/model.py (karpathy/minGPT, MIT; validation/diff_history.py copies the
version beside this file as mingpt/model.py). Not part of minGPT: it only
builds the model, across the config APIs the history went through."""
import os
import sys
import types

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


class CfgNode:
    """Stand-in for mingpt.utils.CfgNode (attributes, merge_from_dict), so
    that only the model file is needed."""

    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)

    def merge_from_dict(self, d):
        self.__dict__.update(d)


import mingpt  # noqa: E402  (namespace package: HERE/mingpt)

utils = types.ModuleType("mingpt.utils")
utils.CfgNode = CfgNode
sys.modules["mingpt.utils"] = utils
mingpt.utils = utils
from mingpt import model as m  # noqa: E402

# Sizes only; the dropouts keep the version's defaults. minGPT has no default
# vocabulary size: 64.
TINY = dict(n_layer=2, n_head=4, n_embd=64)
VOCAB, BLOCK, BATCH = 64, 32, 2


def model():
    if hasattr(m, "GPTConfig"):  # 2020-2022: GPTConfig(vocab_size, block_size, **kwargs)
        cfg = m.GPTConfig(VOCAB, BLOCK, **TINY)
    else:  # 2022: GPT.get_default_config() -> CfgNode
        try:
            cfg = m.GPT.get_default_config()
        except TypeError:  # 8425759 - b162d3f: a model type is required; the sizes are set below
            cfg = m.GPT.get_default_config("GPT-Micro")
        for k in ("name", "model_type"):  # either a named type or the sizes: the sizes
            if hasattr(cfg, k):
                setattr(cfg, k, None)
        for k, v in TINY.items():
            setattr(cfg, k, v)
        cfg.vocab_size, cfg.block_size = VOCAB, BLOCK
    return m.GPT(cfg)


def example_inputs():
    return (torch.randint(0, VOCAB, (BATCH, BLOCK)), torch.randint(0, VOCAB, (BATCH, BLOCK)))
