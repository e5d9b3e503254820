"""The comparison corpus: real model architectures with random weights (no
downloads), small inputs, eval mode. Each entry names the environment that
has its library: "vision" (torchvision + timm: build/venv-vision) or "nlp"
(transformers: build/venv)."""

# name -> environment
MODELS = {
    "resnet18": "vision", "resnet50": "vision", "mobilenet_v2": "vision", "mobilenet_v3_small": "vision",
    "efficientnet_b0": "vision", "convnext_tiny": "vision", "densenet121": "vision", "regnet_y_400mf": "vision",
    "squeezenet1_1": "vision", "shufflenet_v2_x1_0": "vision", "mnasnet0_5": "vision", "googlenet": "vision",
    "vit_b_16": "vision", "deit_tiny": "vision", "convnext_atto": "vision",
    "fasterrcnn_mobilenet": "vision", "retinanet_resnet50": "vision",
    "gpt2": "nlp", "bert": "nlp", "llama": "nlp", "t5": "nlp", "distilbert": "nlp",
}

# The subset the CTest test fusion_compare_smoke runs (small, fast to lower and
# optimize: about 2 minutes on 2 shared cores).
SMOKE = ["mobilenet_v3_small", "resnet18", "bert"]


def env_of(name):
    return MODELS[name[:-len("-train")] if name.endswith("-train") else name]


def _vision(name):
    import torch
    import torchvision.models as tvm
    img = torch.randn(1, 3, 224, 224)
    if name == "deit_tiny" or name == "convnext_atto":
        import timm
        m = timm.create_model({"deit_tiny": "deit_tiny_patch16_224", "convnext_atto": "convnext_atto"}[name],
                              pretrained=False)
        return m, (img,)
    if name == "fasterrcnn_mobilenet":
        from torchvision.models.detection import fasterrcnn_mobilenet_v3_large_320_fpn
        m = fasterrcnn_mobilenet_v3_large_320_fpn(weights=None, weights_backbone=None, num_classes=91)
        return m, ([torch.rand(3, 320, 320)],)
    if name == "retinanet_resnet50":
        from torchvision.models.detection import retinanet_resnet50_fpn
        m = retinanet_resnet50_fpn(weights=None, weights_backbone=None, num_classes=91, min_size=320, max_size=320)
        return m, ([torch.rand(3, 320, 320)],)
    kwargs = {"aux_logits": False, "init_weights": True} if name == "googlenet" else {}
    return getattr(tvm, name)(weights=None, **kwargs), (img,)


def _nlp(name):
    import torch
    import transformers as tf
    ids = torch.randint(0, 1000, (1, 64))
    if name == "gpt2":
        cfg = tf.GPT2Config(n_layer=2, n_embd=128, n_head=4, vocab_size=1000, n_positions=128)
        return tf.GPT2Model(cfg), (ids,)
    if name == "bert":
        cfg = tf.BertConfig(num_hidden_layers=2, hidden_size=128, num_attention_heads=4, intermediate_size=512,
                            vocab_size=1000, max_position_embeddings=128)
        return tf.BertModel(cfg), (ids,)
    if name == "distilbert":
        cfg = tf.DistilBertConfig(n_layers=2, dim=128, n_heads=4, hidden_dim=512, vocab_size=1000,
                                  max_position_embeddings=128)
        return tf.DistilBertModel(cfg), (ids,)
    if name == "llama":
        cfg = tf.LlamaConfig(num_hidden_layers=2, hidden_size=128, num_attention_heads=4, num_key_value_heads=4,
                             intermediate_size=344, vocab_size=1000, max_position_embeddings=128)
        return tf.LlamaModel(cfg), (ids,)
    if name == "t5":
        cfg = tf.T5Config(num_layers=2, num_decoder_layers=2, d_model=128, d_ff=512, num_heads=4, d_kv=32,
                          vocab_size=1000)
        return tf.T5EncoderModel(cfg), (ids,)
    raise KeyError(name)


def build(name):
    import torch
    torch.manual_seed(0)
    model, inputs = (_vision if MODELS[name] == "vision" else _nlp)(name)
    model.eval()
    if MODELS[name] == "nlp":
        model.config.use_cache = False
    return model, inputs
