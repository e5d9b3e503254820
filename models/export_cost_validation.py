#!/usr/bin/python3
"""Export the models the compute model's FLOP counts are validated on
(docs/cost-model.md, "Validation") into a scratch directory, weightless
(default build/tmp/cost-validation; never committed):

  /usr/bin/python3 models/export_cost_validation.py [--out DIR] [--only NAME ...]

  resnet50, vit_b_16  torchvision, fp32, opset 17, input [batch, 3, 224, 224]
  gpt2_small          the GPT-style decoder of export_models.py at GPT-2 small
                      size: vocab 50257, d_model 768, 12 heads, 12 layers,
                      max_seq 1024, untied LM head; input_ids [batch, seq]

tests/unit/CostModelTest.cpp (FlopCounts.ExportedModelsMatchPublishedFigures)
lints them when present. Needs torch 1.13 / torchvision 0.14 / onnx 1.12, no
network (weights=None; FLOPs do not depend on weight values).
"""

import os
import shutil
import sys
import tempfile

import onnx
import torch

SCRIPT_DIR = os.path.dirname(os.path.abspath(__file__))
import export_models  # noqa: E402   (beside this script)  (GPTTiny, make_weightless)
import export_validation  # noqa: E402  (classifier, export)


def gpt2_small(path):
    torch.manual_seed(0)
    model = export_models.GPTTiny(vocab=50257, d_model=768, n_head=12, n_layer=12, max_seq=1024)
    ids = torch.randint(0, 50257, (1, 128), dtype=torch.int64)
    return export_validation.export(model, (ids,), path, 17, input_names=["input_ids"], output_names=["logits"],
                                    dynamic_axes={"input_ids": {0: "batch", 1: "seq"},
                                                  "logits": {0: "batch", 1: "seq"}})


def weightless(build):
    """build(path) -> the same model written weightless (payloads dropped;
    the external file named in it does not exist)."""
    def build_weightless(path):
        scratch = tempfile.mkdtemp()
        try:
            name = os.path.splitext(os.path.basename(path))[0]
            full = build(os.path.join(scratch, name + ".onnx"))
            m, _, _ = export_models.make_weightless(full, name, scratch)
            onnx.save(m, path)
            return m
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return build_weightless


MODELS = {
    "resnet50": weightless(export_validation.classifier("resnet50")),
    "vit_b_16": weightless(export_validation.classifier("vit_b_16")),
    "gpt2_small": weightless(gpt2_small),
}


if __name__ == "__main__":
    sys.exit(export_validation.run(MODELS, os.path.join(SCRIPT_DIR, "..", "build", "tmp", "cost-validation")))
