"""Real architectures for graphlint-export's capture (docs/validation.md):
factories that build each model from its configuration, with random init --
nothing is downloaded. graphlint-export builds them on the meta device, so
even the 70B configuration allocates no weights:

    graphlint-export --model capture_corpus:llama_7b --input 'input_ids:int64[batch,seq]' \\
        --dim batch=1 --dim seq=4096 --train -o llama7b.fx.json

CORPUS lists, per model, the interpreter line it needs, its inputs and its
default sizes; bench/run_capture_corpus.py runs them all and writes the table.
"""


def _hf(config_cls, model_cls, **kw):
    import transformers
    cfg = getattr(transformers, config_cls)(**kw)
    cfg.use_cache = False   # no KV cache object in the outputs: a training step
    if hasattr(cfg, "_attn_implementation"):
        cfg._attn_implementation = "eager"
    if hasattr(cfg, "_experts_implementation"):   # MoE: the per-expert loop, not CUDA grouped_mm
        cfg._experts_implementation = "eager"
    return getattr(transformers, model_cls)(cfg)


# ---- transformers (torch 2.x venv) -------------------------------------------------

def gpt2():
    return _hf("GPT2Config", "GPT2LMHeadModel")


def gpt_1_3b():
    """The issue's 1.3B GPT: GPT-2 architecture, 24 layers, width 2048, 16
    heads, vocab 50257, 2048 positions, the LM head tied to the embedding."""
    return _hf("GPT2Config", "GPT2LMHeadModel", n_layer=24, n_embd=2048, n_head=16, vocab_size=50257,
               n_positions=2048, tie_word_embeddings=True)


def _llama(**kw):
    return _hf("LlamaConfig", "LlamaForCausalLM", **kw)


def llama_7b():
    return _llama(hidden_size=4096, intermediate_size=11008, num_hidden_layers=32, num_attention_heads=32,
                  num_key_value_heads=32, vocab_size=32000, max_position_embeddings=4096)


def llama_70b():
    return _llama(hidden_size=8192, intermediate_size=28672, num_hidden_layers=80, num_attention_heads=64,
                  num_key_value_heads=8, vocab_size=32000, max_position_embeddings=4096)


def llama_tiny():
    return _llama(hidden_size=256, intermediate_size=688, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=4, vocab_size=1000, max_position_embeddings=512)


def mistral_7b():
    return _hf("MistralConfig", "MistralForCausalLM", hidden_size=4096, intermediate_size=14336,
               num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=8, vocab_size=32000)


def mixtral_8x7b():
    return _hf("MixtralConfig", "MixtralForCausalLM", hidden_size=4096, intermediate_size=14336,
               num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=8, vocab_size=32000,
               num_local_experts=8, num_experts_per_tok=2)


def bert_base():
    return _hf("BertConfig", "BertForMaskedLM")


def t5_small():
    return _hf("T5Config", "T5ForConditionalGeneration", d_model=512, d_ff=2048, num_layers=6, num_heads=8,
               decoder_start_token_id=0, pad_token_id=0)


def vit_base():
    return _hf("ViTConfig", "ViTForImageClassification")


def whisper_base():
    return _hf("WhisperConfig", "WhisperForConditionalGeneration", d_model=512, encoder_layers=6, decoder_layers=6,
               encoder_attention_heads=8, decoder_attention_heads=8, encoder_ffn_dim=2048, decoder_ffn_dim=2048)


# ---- timm (torch 2.x venv-vision) --------------------------------------------------

def _timm(name):
    import timm
    return timm.create_model(name, pretrained=False)


def timm_resnet50():
    return _timm("resnet50")


def timm_convnext_tiny():
    return _timm("convnext_tiny")


def timm_efficientnet_b0():
    return _timm("efficientnet_b0")


def timm_vit_base():
    return _timm("vit_base_patch16_224")


# ---- torchvision (torch 1.13 and venv-vision) --------------------------------------

def tv_resnet50():
    import torchvision
    return torchvision.models.resnet50()


def tv_vit_b_16():
    import torchvision
    return torchvision.models.vit_b_16()


TOKENS = ["input_ids:int64[batch,seq]"]
LM = TOKENS + ["labels:int64[batch,seq]"]
IMAGE = ["input0:float32[batch,3,224,224]"]

# name: (lines it runs on, inputs, dims)
CORPUS = {
    "gpt2": (["venv"], LM, {"batch": 2, "seq": 128}),
    "llama_7b": (["venv"], LM, {"batch": 1, "seq": 4096}),
    "llama_70b": (["venv"], LM, {"batch": 1, "seq": 4096}),
    "mistral_7b": (["venv"], LM, {"batch": 1, "seq": 4096}),
    "mixtral_8x7b": (["venv"], LM, {"batch": 1, "seq": 2048}),
    "bert_base": (["venv"], LM, {"batch": 8, "seq": 128}),
    "t5_small": (["venv"], ["input_ids:int64[batch,seq]", "labels:int64[batch,tgt]"],
                 {"batch": 4, "seq": 128, "tgt": 32}),
    "vit_base": (["venv"], ["pixel_values:float32[batch,3,224,224]"], {"batch": 8}),
    "whisper_base": (["venv"], ["input_features:float32[batch,80,3000]", "labels:int64[batch,tgt]"],
                     {"batch": 2, "tgt": 64}),
    "timm_resnet50": (["vision"], IMAGE, {"batch": 8}),
    "timm_convnext_tiny": (["vision"], IMAGE, {"batch": 8}),
    "timm_efficientnet_b0": (["vision"], IMAGE, {"batch": 8}),
    "timm_vit_base": (["vision"], IMAGE, {"batch": 8}),
    "tv_resnet50": (["1.13", "vision"], IMAGE, {"batch": 8}),
    "tv_vit_b_16": (["1.13", "vision"], IMAGE, {"batch": 8}),
}


def llama_small():
    """The Llama architecture at a size a real-tensor capture can run here
    (docs/performance.md compares both captures on it): 4 layers, width 1024."""
    return _llama(hidden_size=1024, intermediate_size=2752, num_hidden_layers=4, num_attention_heads=16,
                  num_key_value_heads=16, vocab_size=32000, max_position_embeddings=4096)


CORPUS["llama_small"] = (["venv"], LM, {"batch": 1, "seq": 512})


def mixtral_small():
    """Mixtral's MoE architecture at a size torch._dynamo.explain can run for real."""
    return _hf("MixtralConfig", "MixtralForCausalLM", hidden_size=256, intermediate_size=512, num_hidden_layers=2,
               num_attention_heads=4, num_key_value_heads=2, vocab_size=1000, num_local_experts=4,
               num_experts_per_tok=2)


# The issue-16 measurement's GPT-style 24-layer decoder (docs/validation.md, findings per model).
CORPUS["gpt_1_3b"] = (["venv"], LM, {"batch": 1, "seq": 1024})
