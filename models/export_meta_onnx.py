#!/usr/bin/env python3
"""ONNX export of a model too large to hold: built on the meta device,
exported by torch.onnx's dynamo exporter in train() or eval() mode, optimized
by onnxscript (SplitToSequence/SequenceAt become Split), and saved without
weight bytes: every weight is an initializer whose external file is absent and
the metadata says so (graphlint.weights: stripped, a quiet GL004 note), so
graphlint lints its shapes, memory and cost. Nothing is computed.

  build/venv/bin/python models/export_meta_onnx.py models/fx/gpt_1_3b.py -o gpt_1_3b.onnx --train

FILE defines model() and example_inputs() (as for graphlint-export); the
inputs are made on the meta device. Used for tests/fixtures/closed_forms/
gpt_1_3b.onnx (docs/validation.md, "The 1.3B GPT on 8x A100-80GB")."""
import argparse
import importlib.util
import os
import sys
import time

import onnx
import onnxscript.optimizer
import torch
from onnx import TensorProto

ELEMENT_BYTES = {TensorProto.FLOAT: 4, TensorProto.FLOAT16: 2, TensorProto.BFLOAT16: 2, TensorProto.DOUBLE: 8,
                 TensorProto.INT64: 8, TensorProto.INT32: 4, TensorProto.BOOL: 1, TensorProto.UINT8: 1,
                 TensorProto.INT8: 1}


def load(path):
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def strip_weights(model, data_inputs, location):
    """The weights, saved as graph inputs, become external-data initializers
    of an absent file."""
    weights = list(model.graph.input)[data_inputs:]
    kept = list(model.graph.input)[:data_inputs]
    del model.graph.input[:]
    model.graph.input.extend(kept)
    offset = 0
    for w in weights:
        tt = w.type.tensor_type
        t = TensorProto(name=w.name, data_type=tt.elem_type, dims=[d.dim_value for d in tt.shape.dim])
        numel = 1
        for d in t.dims:
            numel *= d
        length = numel * ELEMENT_BYTES[t.data_type]
        t.data_location = TensorProto.EXTERNAL
        for key, value in (("location", location), ("offset", str(offset)), ("length", str(length))):
            entry = t.external_data.add()
            entry.key, entry.value = key, value
        offset += length
        model.graph.initializer.append(t)
    entry = model.metadata_props.add()
    entry.key, entry.value = "graphlint.weights", "stripped"
    return len(weights), offset


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", help="Python file defining model() and example_inputs()")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--train", action="store_true", help="export in train() mode (dropout with its masks)")
    args = ap.parse_args()
    start = time.time()
    mod = load(args.file)
    with torch.device("meta"):
        model = mod.model()
        inputs = tuple(t.to("meta") for t in mod.example_inputs())
    model.train(args.train)
    program = torch.onnx.export(model, inputs, dynamo=True, optimize=False)
    tmp = args.output + ".tmp"
    program.save(tmp, include_initializers=False, keep_initializers_as_inputs=True)
    proto = onnxscript.optimizer.optimize(onnx.load(tmp))
    os.remove(tmp)
    count, nbytes = strip_weights(proto, len(inputs), os.path.basename(args.output) + ".weights")
    onnx.save(proto, args.output)
    print(f"export_meta_onnx: wrote {args.output}: {len(proto.graph.node)} nodes, {count} weights "
          f"({nbytes:,} bytes, stripped) in {time.time() - start:.1f} s")


if __name__ == "__main__":
    main()
