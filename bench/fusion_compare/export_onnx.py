"""Export one corpus model to ONNX (TorchScript exporter, opset 17: the graph
shape ONNX Runtime's transformer optimizer was written against).

Usage: export_onnx.py MODEL OUT.onnx
"""

import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))

import torch  # noqa: E402

import zoo  # noqa: E402


class LastHiddenState(torch.nn.Module):
    """transformers models take keyword arguments and return a ModelOutput;
    the TorchScript exporter wants positional tensors in and out."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids):
        return self.model(input_ids=input_ids, use_cache=False).last_hidden_state \
            if "use_cache" in self.model.forward.__code__.co_varnames else self.model(input_ids=input_ids).last_hidden_state


def main():
    name, out = sys.argv[1], sys.argv[2]
    torch.set_num_threads(1)
    model, inputs = zoo.build(name)
    if zoo.env_of(name) == "nlp":
        model = LastHiddenState(model)
    warnings.simplefilter("ignore")
    with torch.no_grad():
        kwargs = {}
        if zoo.env_of(name) == "nlp":
            kwargs = {"input_names": ["input_ids"], "output_names": ["last_hidden_state"]}
        try:
            torch.onnx.export(model, inputs, out, opset_version=17, dynamo=False, do_constant_folding=True, **kwargs)
        except torch.onnx.errors.UnsupportedOperatorError as e:
            # (GPT-2's mask code uses aten::diff, which the TorchScript exporter lacks.)
            print(f"{name}: TorchScript exporter: {e}; using the dynamo exporter", file=sys.stderr)
            torch.onnx.export(model, inputs, out, opset_version=18, dynamo=True, optimize=True, **kwargs)
    print(f"{name}: wrote {out} ({os.path.getsize(out)} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
