"""Export one corpus model to ONNX (TorchScript exporter, opset 17: the graph
shape ONNX Runtime's transformer optimizer was written against).

Usage: export_onnx.py MODEL OUT.onnx
"""

import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402

import zoo  # noqa: E402


def main():
    name, out = sys.argv[1], sys.argv[2]
    torch.set_num_threads(1)
    model, inputs = zoo.build(name)
    warnings.simplefilter("ignore")
    with torch.no_grad():
        kwargs = {}
        if zoo.env_of(name) == "nlp":
            kwargs = {"input_names": ["input_ids"], "output_names": ["last_hidden_state"]}
        torch.onnx.export(model, inputs, out, opset_version=17, dynamo=False, do_constant_folding=True, **kwargs)
    print(f"{name}: wrote {out} ({os.path.getsize(out)} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
