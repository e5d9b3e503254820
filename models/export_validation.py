#!/usr/bin/python3
"""Export the real models the fusion planner and the fusion-breaker rules are
validated on (docs/validation.md, "Fusion planner"), into a scratch directory
(default build/tmp/validation; never committed).

  /usr/bin/python3 models/export_validation.py [--out DIR] [--only NAME ...]

Needs torch 1.13 / torchvision 0.14 / onnx 1.12, no network (weights=None;
graph structure does not depend on weight values).

  resnet50, mobilenet_v3_small, efficientnet_b0, vit_b_16  fp32, opset 17
  fasterrcnn_mobilenet_v3_large_320_fpn, maskrcnn_resnet50_fpn
      eval mode, [image] input, opset 11 (torchvision's ONNX export path)
  gpt_tiny_fp16  the GPT-style decoder of models/export_models.py in fp16 with
      fp32 LayerNormalization/Softmax islands (Cast to fp32 before, Cast back
      to fp16 after: what model.half() plus .float()/.half() wrappers export).
      torch 1.13 has no fp16 CPU kernels for addmm/gelu, so tracing model.half()
      on a CPU fails; the fp32 export is converted at the ONNX level instead
      (weights and activations to fp16, Casts around each LayerNormalization and
      Softmax, their scale/bias kept fp32) - the graph the GPU export produces.
"""

import argparse
import io
import os
import sys
import time
import warnings

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
import torch
import torchvision

SCRIPT_DIR = os.path.dirname(os.path.abspath(__file__))
import export_models  # noqa: E402   (beside this script)  (GPTTiny, randomize_constant_params)


def export(module, args, path, opset, **kw):
    module.eval()
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # Not under no_grad: eval + no_grad makes nn.MultiheadAttention take its
        # fused fast path (aten::_native_multi_head_attention), which torch
        # 1.13 cannot export (vit_b_16).
        torch.onnx.export(module, args, buf, opset_version=opset, do_constant_folding=True, **kw)
    model = onnx.load_from_string(buf.getvalue())
    onnx.save(model, path)
    return model


def classifier(name):
    def build(path):
        torch.manual_seed(0)
        model = export_models.randomize_constant_params(getattr(torchvision.models, name)(weights=None))
        x = torch.randn(1, 3, 224, 224)
        return export(model, (x,), path, 17, input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})
    return build


def detector(name, size):
    def build(path):
        torch.manual_seed(0)
        ctor = getattr(torchvision.models.detection, name)
        model = ctor(weights=None, weights_backbone=None)
        model.eval()
        image = torch.rand(3, size, size)
        return export(model, ([image],), path, 11, input_names=["image"],
                      output_names=["boxes", "labels", "scores"] + (["masks"] if "mask" in name else []))
    return build


def to_fp16_with_fp32_islands(model, island_ops=("LayerNormalization", "Softmax")):
    """fp32 ONNX model -> fp16 model whose island ops still compute in fp32."""
    g = model.graph
    keep_fp32 = set()
    for n in g.node:
        if n.op_type == "LayerNormalization":
            keep_fp32.update(n.input[1:])  # scale / bias stay fp32 inside the island
    for init in g.initializer:
        if init.data_type == TensorProto.FLOAT and init.name not in keep_fp32:
            init.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(init).astype(np.float16), init.name))
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.TENSOR and a.t.data_type == TensorProto.FLOAT:
                a.t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(a.t).astype(np.float16), a.t.name))
            if n.op_type == "Cast" and a.name == "to" and a.i == TensorProto.FLOAT:
                a.i = TensorProto.FLOAT16
    for v in list(g.input) + list(g.output):
        if v.type.tensor_type.elem_type == TensorProto.FLOAT:
            v.type.tensor_type.elem_type = TensorProto.FLOAT16
    del g.value_info[:]
    nodes = []
    for i, n in enumerate(g.node):
        if n.op_type not in island_ops:
            nodes.append(n)
            continue
        x32 = n.input[0] + "_fp32"
        nodes.append(helper.make_node("Cast", [n.input[0]], [x32], name=f"island{i}_to_fp32", to=TensorProto.FLOAT))
        y = n.output[0]
        n.input[0] = x32
        n.output[0] = y + "_fp32"
        nodes.append(n)
        nodes.append(helper.make_node("Cast", [y + "_fp32"], [y], name=f"island{i}_to_fp16", to=TensorProto.FLOAT16))
    del g.node[:]
    g.node.extend(nodes)
    onnx.checker.check_model(model)
    onnx.shape_inference.infer_shapes(model, strict_mode=True)
    return model


def gpt_fp16(path):
    torch.manual_seed(0)
    model = export_models.randomize_constant_params(
        export_models.GPTTiny(vocab=1000, d_model=128, n_head=4, n_layer=2, max_seq=32))
    ids = torch.randint(0, 1000, (2, 32), dtype=torch.int64)
    fp32 = export(model, (ids,), path, 17, input_names=["input_ids"], output_names=["logits"],
                  dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}})
    m = to_fp16_with_fp32_islands(fp32)
    onnx.save(m, path)
    return m


MODELS = {
    "resnet50": classifier("resnet50"),
    "mobilenet_v3_small": classifier("mobilenet_v3_small"),
    "efficientnet_b0": classifier("efficientnet_b0"),
    "vit_b_16": classifier("vit_b_16"),
    "fasterrcnn_mobilenet_v3_large_320_fpn": detector("fasterrcnn_mobilenet_v3_large_320_fpn", 320),
    "maskrcnn_resnet50_fpn": detector("maskrcnn_resnet50_fpn", 320),
    "gpt_tiny_fp16": gpt_fp16,
}


def run(models, default_out):
    """Export each of `models` (name -> build(path) returning the ModelProto
    written to path) into --out; a failed export is reported, not fatal."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=default_out)
    ap.add_argument("--only", nargs="*")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    failed = 0
    for name, build in models.items():
        if args.only and name not in args.only:
            continue
        path = os.path.join(args.out, name + ".onnx")
        t0 = time.time()
        try:
            m = build(path)
            print(f"{name}: {len(m.graph.node)} nodes, opset "
                  f"{[o.version for o in m.opset_import if o.domain in ('', 'ai.onnx')][0]}, "
                  f"{time.time() - t0:.0f}s -> {path}", flush=True)
        except Exception as e:  # report and go on: a failed export is a finding
            failed += 1
            print(f"{name}: EXPORT FAILED: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}",
                  flush=True)
    return 1 if failed else 0


def main():
    return run(MODELS, os.path.join(SCRIPT_DIR, "..", "build", "tmp", "validation"))


if __name__ == "__main__":
    sys.exit(main())
