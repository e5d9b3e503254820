"""The models of the memory target matrix (validation/memory_matrix.py, issue 15):
small, random-init configurations (no downloads) of the architectures a user
launches, each with the block class that per-layer activation checkpointing
wraps, and the wrappers that give every mode one call signature:

- `Autocast`: the forward under torch.autocast("cpu", bfloat16), fp32 weights
  (the master weights Adam updates), as a training script writes it;
- `checkpointed(model)`: torch.utils.checkpoint(use_reentrant=False) around
  every block's forward, as `gradient_checkpointing_enable()` or a hand-written
  loop over `model.layers` does;
- `Logits`: a transformers model's tensor output (logits or the last hidden
  state) for keyword inputs given positionally.

A builder returns (module, inputs) at a batch size; `LINES` says which torch
environment can build which model (transformers lives in the torch 2.13 venv,
torchvision in the other two)."""

import functools

import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

IMAGE = 64   # vision inputs: batch x 3 x 64 x 64, 10 classes
SEQ = 64     # token inputs: batch x 64, a 256-token vocabulary
VOCAB = 256


class Autocast(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, *inputs):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return self.m(*inputs)


class Logits(nn.Module):
    def __init__(self, m, names, field):
        super().__init__()
        self.m = m
        self.names = names
        self.field = field

    def forward(self, *inputs):
        return getattr(self.m(**dict(zip(self.names, inputs))), self.field)


def checkpointed(model, block_types):
    """Wraps each block's forward in non-reentrant checkpoint; returns how many.
    torchvision's DenseNet layers take the list of earlier features, which the
    next layer appends to, so a recompute would see a longer list: for them the
    model's own per-layer checkpoint (memory_efficient=True) is used."""
    n = 0
    for mod in model.modules():
        if type(mod).__name__ == "_DenseLayer" and isinstance(mod, block_types):
            mod.memory_efficient = True
            n += 1
        elif isinstance(mod, block_types):
            mod.forward = functools.partial(checkpoint, mod.forward, use_reentrant=False)
            n += 1
    if n == 0:
        raise RuntimeError("no block of %s to checkpoint" % (block_types,))
    return n


def checkpointed_layers(model, block_types):
    """Wraps each whole block in non-reentrant checkpoint, the policy
    graphlint's `--recompute layer` models; the same as `checkpointed` but for
    torchvision's DenseNet, whose layers are checkpointed whole here (their
    list of features passed as separate tensors, so a recompute rebuilds the
    list it saw) instead of memory_efficient's bottleneck. Returns how many."""
    n = 0
    for mod in model.modules():
        if not isinstance(mod, block_types):
            continue
        if type(mod).__name__ == "_DenseLayer":
            def whole(init, forward=mod.forward):
                features = [init] if isinstance(init, torch.Tensor) else list(init)
                return checkpoint(lambda *fs: forward(list(fs)), *features, use_reentrant=False)
            mod.forward = whole
        else:
            mod.forward = functools.partial(checkpoint, mod.forward, use_reentrant=False)
        n += 1
    if n == 0:
        raise RuntimeError("no block of %s to checkpoint" % (block_types,))
    return n


# Models whose `ckpt` mode is not what `--recompute layer` models (DenseNet:
# memory_efficient checkpoints the bottleneck only): the matrix measures
# `checkpointed_layers` for that column ("ckpt-layers").
LAYER_POLICY_DIFFERS = {"densenet_small"}

# Configurations outside the matrix: torch itself cannot run them on the named
# version, so there is no truth (or no file) to check graphlint against. Every
# run prints each with its reason ("not runnable"); none is a row of the
# headline count, and none can pass or fail. Keyed by (model, mode, torch
# major.minor, frontend or None for every frontend).
_DISPATCH_CKPT_113 = ("torch 1.13's torch.utils.checkpoint under the truth's TorchDispatchMode raises "
                      "(aten::detach() expected a Tensor, found a float): the peak cannot be measured on 1.13")
NOT_RUNNABLE = {
    ("convnext_small", "bf16", "1.13", None): "torch 1.13's eager run under autocast(bfloat16) on CPU raises "
                                              "RuntimeError: expected scalar type BFloat16 but found Float",
    ("gpt_tiny", "ckpt", "1.13", None): _DISPATCH_CKPT_113,
    ("vit_small", "ckpt", "1.13", None): _DISPATCH_CKPT_113,
    ("gpt2", "bf16", "2.13", ".pt2 strict"): "torch 2.13's strict torch.export (dynamo) refuses GPT-2 under "
                                             "autocast(bfloat16): there is no .pt2 to read",
}


def not_runnable(name, mode, torch_version, frontend=None):
    """The reason (model, mode[, frontend]) is outside the matrix on this
    torch, or None."""
    minor = ".".join(torch_version.split("+")[0].split(".")[:2])
    return NOT_RUNNABLE.get((name, mode, minor, frontend)) or NOT_RUNNABLE.get((name, mode, minor, None))


def _vision(factory, blocks):
    def build(batch):
        import torchvision  # noqa: F401
        torch.manual_seed(0)
        return factory(), (torch.randn(batch, 3, IMAGE, IMAGE),), blocks()
    return build


def _tv(name, **kw):
    def make():
        import torchvision
        return getattr(torchvision.models, name)(weights=None, num_classes=10, **kw)
    return make


def _convnext():
    from torchvision.models.convnext import CNBlockConfig, ConvNeXt
    return ConvNeXt([CNBlockConfig(32, 64, 2), CNBlockConfig(64, None, 2)], num_classes=10)


def _vit():
    from torchvision.models.vision_transformer import VisionTransformer
    return VisionTransformer(image_size=IMAGE, patch_size=16, num_layers=2, num_heads=4, hidden_dim=128, mlp_dim=256,
                             num_classes=10)


def _densenet():
    from torchvision.models.densenet import DenseNet
    return DenseNet(growth_rate=16, block_config=(2, 2, 2, 2), num_init_features=32, num_classes=10)


def _blocks(module, cls):
    def get():
        import importlib
        return (getattr(importlib.import_module(module), cls),)
    return get


def _gpt_tiny(batch):
    from gpt_tiny import Block, GPTTiny
    torch.manual_seed(0)
    m = GPTTiny(vocab=VOCAB, d_model=64, n_head=4, n_layer=2, max_seq=SEQ)
    return m, (torch.randint(0, VOCAB, (batch, SEQ)),), (Block,)


def _hf(config_cls, model_cls, block, config, names=("input_ids",), field="logits"):
    def build(batch):
        import importlib
        tf = importlib.import_module("transformers")
        torch.manual_seed(0)
        cfg = getattr(tf, config_cls)(**config)
        cfg.use_cache = False
        m = getattr(tf, model_cls)(cfg)
        inputs = tuple(torch.randint(0, VOCAB, (batch, SEQ)) for _ in names)
        mod, cls = block
        return Logits(m, list(names), field), inputs, (getattr(importlib.import_module(mod), cls),)
    return build


TINY = {"attn_implementation": "eager"}
# name -> (builder, tuned_on): tuned_on = looked at while the FX memory path was
# fixed (issue 15's first table); the others were checked only (their numbers
# were taken before anything was changed for them).
MODELS = {
    "resnet18": (_vision(_tv("resnet18"), _blocks("torchvision.models.resnet", "BasicBlock")), True),
    "mobilenet_v3_small": (_vision(_tv("mobilenet_v3_small"),
                                   _blocks("torchvision.models.mobilenetv3", "InvertedResidual")), True),
    "squeezenet1_1": (_vision(_tv("squeezenet1_1"), _blocks("torchvision.models.squeezenet", "Fire")), True),
    "densenet_small": (_vision(_densenet, _blocks("torchvision.models.densenet", "_DenseLayer")), True),
    "gpt_tiny": (_gpt_tiny, True),
    "efficientnet_b0": (_vision(_tv("efficientnet_b0"), _blocks("torchvision.models.efficientnet", "MBConv")), False),
    "convnext_small": (_vision(_convnext, _blocks("torchvision.models.convnext", "CNBlock")), False),
    "vit_small": (_vision(_vit, _blocks("torchvision.models.vision_transformer", "EncoderBlock")), False),
    "gpt2": (_hf("GPT2Config", "GPT2LMHeadModel", ("transformers.models.gpt2.modeling_gpt2", "GPT2Block"),
                 dict(n_layer=2, n_embd=64, n_head=4, vocab_size=VOCAB, n_positions=SEQ, **TINY)), False),
    "bert": (_hf("BertConfig", "BertModel", ("transformers.models.bert.modeling_bert", "BertLayer"),
                 dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=128,
                      vocab_size=VOCAB, max_position_embeddings=SEQ, **TINY), field="last_hidden_state"), False),
    "llama": (_hf("LlamaConfig", "LlamaForCausalLM", ("transformers.models.llama.modeling_llama", "LlamaDecoderLayer"),
                  dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                       num_key_value_heads=2, vocab_size=VOCAB, max_position_embeddings=SEQ, **TINY)), False),
    "t5": (_hf("T5Config", "T5ForConditionalGeneration", ("transformers.models.t5.modeling_t5", "T5Block"),
               dict(d_model=64, d_ff=128, num_layers=2, num_heads=4, d_kv=16, vocab_size=VOCAB, **TINY),
               names=("input_ids", "decoder_input_ids")), False),
}
BATCHES = (2, 8)


def _timm(name, block, **kw):
    def build(batch):
        import importlib
        timm = importlib.import_module("timm")
        torch.manual_seed(0)
        m = timm.create_model(name, pretrained=False, num_classes=10, **kw)
        mod, cls = block
        return m, (torch.randn(batch, 3, IMAGE, IMAGE),), (getattr(importlib.import_module(mod), cls),)
    return build


def _decoder(config_cls, model_cls, module, layer, **extra):
    return _hf(config_cls, model_cls, ("transformers.models.%s.modeling_%s" % (module, module), layer),
               dict(dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                         vocab_size=VOCAB, max_position_embeddings=SEQ, **TINY), **extra))


# Held out (docs/validation.md "Held-out models"): built after the memory plan
# was fixed on MODELS and never looked at while changing it, so their numbers
# say how the plan does on architectures it was not shaped by. Run with
# memory_matrix.py --heldout.
HELDOUT = {
    "mistral": (_decoder("MistralConfig", "MistralForCausalLM", "mistral", "MistralDecoderLayer",
                         num_key_value_heads=2), False),
    "qwen2": (_decoder("Qwen2Config", "Qwen2ForCausalLM", "qwen2", "Qwen2DecoderLayer", num_key_value_heads=2), False),
    "gpt_neox": (_decoder("GPTNeoXConfig", "GPTNeoXForCausalLM", "gpt_neox", "GPTNeoXLayer"), False),
    "opt": (_hf("OPTConfig", "OPTForCausalLM", ("transformers.models.opt.modeling_opt", "OPTDecoderLayer"),
                dict(hidden_size=64, ffn_dim=128, num_hidden_layers=2, num_attention_heads=4, vocab_size=VOCAB,
                     max_position_embeddings=SEQ, word_embed_proj_dim=64, **TINY)), False),
    "phi3": (_decoder("Phi3Config", "Phi3ForCausalLM", "phi3", "Phi3DecoderLayer", num_key_value_heads=2,
                      pad_token_id=0), False),
    "gemma": (_decoder("GemmaConfig", "GemmaForCausalLM", "gemma", "GemmaDecoderLayer", num_key_value_heads=2,
                       head_dim=16), False),
    # Bidirectional encoders (added 2026-12-04, after the all-pass mask of
    # the exports was modelled on bert and t5; these were not looked at).
    "roberta": (_hf("RobertaConfig", "RobertaModel", ("transformers.models.roberta.modeling_roberta", "RobertaLayer"),
                    dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=128,
                         vocab_size=VOCAB, max_position_embeddings=SEQ + 2, **TINY), field="last_hidden_state"),
                False),
    "electra": (_hf("ElectraConfig", "ElectraModel", ("transformers.models.electra.modeling_electra", "ElectraLayer"),
                    dict(num_hidden_layers=2, embedding_size=64, hidden_size=64, num_attention_heads=4,
                         intermediate_size=128, vocab_size=VOCAB, max_position_embeddings=SEQ, **TINY),
                    field="last_hidden_state"), False),
    "distilbert": (_hf("DistilBertConfig", "DistilBertModel",
                       ("transformers.models.distilbert.modeling_distilbert", "TransformerBlock"),
                       dict(n_layers=2, dim=64, n_heads=4, hidden_dim=128, vocab_size=VOCAB,
                            max_position_embeddings=SEQ, **TINY), field="last_hidden_state"), False),
    "timm_vit_tiny": (_timm("vit_tiny_patch16_224", ("timm.models.vision_transformer", "Block"), img_size=IMAGE,
                            depth=2), False),
    "timm_convnext_atto": (_timm("convnext_atto", ("timm.models.convnext", "ConvNeXtBlock")), False),
    "timm_resnet18d": (_timm("resnet18d", ("timm.models.resnet", "BasicBlock")), False),
}


# transformers' default attention, torch's scaled_dot_product_attention
# (attn_implementation="sdpa"; MODELS and HELDOUT run eager attention),
# measured since 2026-12-04 (docs/validation.md "transformers' default
# attention", memory_matrix.py --sdpa; CTest MemoryMatrix.SDPA_TORCH2 at
# batch 8).
SDPA = {
    "llama_sdpa": (_hf("LlamaConfig", "LlamaForCausalLM",
                       ("transformers.models.llama.modeling_llama", "LlamaDecoderLayer"),
                       dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                            num_key_value_heads=2, vocab_size=VOCAB, max_position_embeddings=SEQ,
                            attn_implementation="sdpa")), False),
    "bert_sdpa": (_hf("BertConfig", "BertModel", ("transformers.models.bert.modeling_bert", "BertLayer"),
                      dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=128,
                           vocab_size=VOCAB, max_position_embeddings=SEQ, attn_implementation="sdpa"),
                      field="last_hidden_state"), False),
    # Held out for the causal mask and head repeats a tracer makes (added
    # 2026-12-04 after that change was made on llama_sdpa; never looked at
    # before their first numbers): grouped-query decoders with SDPA.
    "mistral_sdpa": (_decoder("MistralConfig", "MistralForCausalLM", "mistral", "MistralDecoderLayer",
                              num_key_value_heads=2, attn_implementation="sdpa"), False),
    "qwen2_sdpa": (_decoder("Qwen2Config", "Qwen2ForCausalLM", "qwen2", "Qwen2DecoderLayer", num_key_value_heads=2,
                            attn_implementation="sdpa"), False),
    "gemma_sdpa": (_decoder("GemmaConfig", "GemmaForCausalLM", "gemma", "GemmaDecoderLayer", num_key_value_heads=2,
                            head_dim=16, attn_implementation="sdpa"), False),
    "phi3_sdpa": (_decoder("Phi3Config", "Phi3ForCausalLM", "phi3", "Phi3DecoderLayer", num_key_value_heads=2,
                           pad_token_id=0, attn_implementation="sdpa"), False),
    # Held out for the math path a CPU training step runs under attention
    # dropout (added 2026-12-04 after that change was made on bert_sdpa;
    # never looked at before their first numbers): GPT-2 (causal, attention
    # dropout 0.1), RoBERTa and DistilBERT (0.1) with SDPA.
    "gpt2_sdpa": (_hf("GPT2Config", "GPT2LMHeadModel", ("transformers.models.gpt2.modeling_gpt2", "GPT2Block"),
                      dict(n_layer=2, n_embd=64, n_head=4, vocab_size=VOCAB, n_positions=SEQ,
                           attn_implementation="sdpa")), False),
    "roberta_sdpa": (_hf("RobertaConfig", "RobertaModel",
                         ("transformers.models.roberta.modeling_roberta", "RobertaLayer"),
                         dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=128,
                              vocab_size=VOCAB, max_position_embeddings=SEQ + 2, attn_implementation="sdpa"),
                         field="last_hidden_state"), False),
    "distilbert_sdpa": (_hf("DistilBertConfig", "DistilBertModel",
                            ("transformers.models.distilbert.modeling_distilbert", "TransformerBlock"),
                            dict(n_layers=2, dim=64, n_heads=4, hidden_dim=128, vocab_size=VOCAB,
                                 max_position_embeddings=SEQ, attn_implementation="sdpa"),
                            field="last_hidden_state"), False),
    # Held out for the query layout a partial rotary embedding gives (added
    # 2026-12-04; never looked at before their first numbers): GPT-NeoX
    # (rotary_pct 0.25) and Phi-2 (0.5) end their rotary in a real cat, so
    # eager's query is contiguous.
    "gpt_neox_sdpa": (_decoder("GPTNeoXConfig", "GPTNeoXForCausalLM", "gpt_neox", "GPTNeoXLayer",
                               attn_implementation="sdpa"), False),
    "phi_sdpa": (_decoder("PhiConfig", "PhiForCausalLM", "phi", "PhiDecoderLayer", attn_implementation="sdpa"),
                 False),
}


def model(name):
    """(builder, tuned_on) of a matrix or held-out model."""
    for models in (MODELS, HELDOUT, SDPA):
        if name in models:
            return models[name]
    raise KeyError(name)


def available(heldout=False, sdpa=False):
    """The models this interpreter can build (torchvision, transformers,
    timm): the matrix's, the held-out ones, or the SDPA ones."""
    out = []
    for name in (SDPA if sdpa else HELDOUT if heldout else MODELS):
        if name.startswith("timm_"):
            lib = "timm"
        elif name in ("gpt2", "bert", "llama", "t5") or name in HELDOUT or name in SDPA:
            lib = "transformers"
        else:
            lib = None if name == "gpt_tiny" else "torchvision"
        if lib is not None:
            try:
                __import__(lib)
            except ImportError:
                continue
        out.append(name)
    return out
