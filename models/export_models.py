#!/usr/bin/python3
"""Export the graphlint test/benchmark models to ONNX.

For every model (except resnet50) a *weightless* copy ``NAME.onnx`` is written
into ``--out`` (default: the directory of this script).  In that copy every
initializer whose raw payload is larger than 1024 bytes is turned into ONNX
external data that points at ``NAME.weights`` (with the ``offset``/``length``
keys onnx.external_data_helper would write) and its payload is removed.  The
``NAME.weights`` file itself is only ever written to a temporary directory and
is never left next to the model, so graphlint sees a model whose weights are
missing (GL004) but whose graph, shapes and small constants are all intact.

With ``--full-dir DIR`` the full models, weights embedded, are also written to
DIR.  resnet50 (~100 MB) is only exported with ``--full-dir`` and either
``--bench`` or ``--only ... resnet50``, and only ever into DIR.

Run with /usr/bin/python3 (torch 1.13, torchvision 0.14, onnx 1.12).  No
pretrained weights are downloaded: torchvision models use ``weights=None``.
"""

import argparse
import collections
import io
import math
import os
import sys
import tempfile
import warnings

import numpy as np
import onnx
from onnx import TensorProto, external_data_helper, numpy_helper
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

OPSET = 17
INLINE_LIMIT = 1024  # initializers with raw size > this many bytes go external
SCRIPT_DIR = os.path.dirname(os.path.abspath(__file__))


# --------------------------------------------------------------------------
# Model definitions
# --------------------------------------------------------------------------

from gpt_tiny import GPTTiny  # noqa: E402,F401  (re-exported: the validation scripts use export_models.GPTTiny)


class ControlFlow(nn.Module):
    """Data-dependent If plus a Loop with a tensor-valued trip count.

    Scripted with torch.jit.script so that the exporter emits real ONNX
    ``If`` and ``Loop`` nodes (tracing would unroll/freeze them).
    """

    def __init__(self):
        super().__init__()
        self.fc_in = nn.Linear(16, 32)
        self.fc_pos = nn.Linear(32, 32)
        self.fc_neg = nn.Linear(32, 32)
        self.fc_loop = nn.Linear(32, 32)
        self.fc_out = nn.Linear(32, 8)

    def forward(self, x: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.fc_in(x))
        if h.sum() > 0:
            h = torch.relu(self.fc_pos(h))
        else:
            h = torch.tanh(self.fc_neg(h)) * 2.0
        for i in range(int(n)):
            h = h + torch.sigmoid(self.fc_loop(h)) * 0.5
        return self.fc_out(h)


# --------------------------------------------------------------------------
# Export helpers
# --------------------------------------------------------------------------

def _export(module, args, input_names, output_names, dynamic_axes):
    """torch.onnx.export into memory, return (ModelProto, [warning strings])."""
    module.eval()
    buf = io.BytesIO()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.onnx.export(
            module,
            args,
            buf,
            export_params=True,
            opset_version=OPSET,
            do_constant_folding=True,
            input_names=input_names,
            output_names=output_names,
            dynamic_axes=dynamic_axes,
        )
    msgs = []
    for w in caught:
        m = "%s: %s" % (w.category.__name__, str(w.message).strip().splitlines()[0])
        if m not in msgs:
            msgs.append(m)
    return onnx.load_from_string(buf.getvalue()), msgs


def randomize_constant_params(model):
    """Give constant-initialised parameters non-trivial values, as in a
    trained model.

    With weights=None every BatchNorm/LayerNorm starts at gamma=1, beta=0
    (and BN at mean=0, var=1), and some Conv/Linear biases start at 0
    (e.g. mobilenet_v3's squeeze-excitation convs).  Such tensors end up
    bit-identical, and torch 1.13 deduplicates identical initializers by
    inserting ``Identity`` nodes -- an artifact of random init that a real
    (pretrained) export does not have.  Perturbing them (deterministically,
    under the caller's seed) keeps the exported graph structurally identical
    to a trained model's.
    """
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, (nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.Linear)):
                b = getattr(mod, "bias", None)
                if b is not None and b.numel() > 1 and bool((b == b.flatten()[0]).all()):
                    b.normal_(0.0, 0.02)
            if isinstance(mod, (nn.BatchNorm1d, nn.BatchNorm2d, nn.LayerNorm)):
                if getattr(mod, "weight", None) is not None:
                    mod.weight.uniform_(0.5, 1.5)
                if getattr(mod, "bias", None) is not None:
                    mod.bias.normal_(0.0, 0.1)
                if getattr(mod, "running_mean", None) is not None:
                    mod.running_mean.normal_(0.0, 0.1)
                if getattr(mod, "running_var", None) is not None:
                    mod.running_var.uniform_(0.5, 1.5)
    return model


def build_torchvision(name):
    def build():
        torch.manual_seed(0)
        model = randomize_constant_params(getattr(torchvision.models, name)(weights=None))
        x = torch.randn(1, 3, 224, 224)
        return _export(model, (x,), ["input"], ["logits"],
                       {"input": {0: "batch"}, "logits": {0: "batch"}})
    return build


def build_gpt_tiny():
    torch.manual_seed(0)
    model = randomize_constant_params(
        GPTTiny(vocab=1000, d_model=128, n_head=4, n_layer=2, max_seq=32))
    ids = torch.randint(0, 1000, (2, 32), dtype=torch.int64)
    return _export(model, (ids,), ["input_ids"], ["logits"],
                   {"input_ids": {0: "batch", 1: "seq"},
                    "logits": {0: "batch", 1: "seq"}})


def build_control_flow():
    torch.manual_seed(0)
    model = ControlFlow().eval()
    scripted = torch.jit.script(model)
    x = torch.randn(2, 16)
    n = torch.tensor(3, dtype=torch.int64)
    return _export(scripted, (x, n), ["x", "n"], ["y"],
                   {"x": {0: "batch"}, "y": {0: "batch"}})


MODELS = collections.OrderedDict([
    ("resnet18", build_torchvision("resnet18")),
    ("mobilenet_v3_small", build_torchvision("mobilenet_v3_small")),
    ("gpt_tiny", build_gpt_tiny),
    ("control_flow", build_control_flow),
])
BENCH_MODELS = collections.OrderedDict([
    ("resnet50", build_torchvision("resnet50")),
])


# --------------------------------------------------------------------------
# Inspection / stripping
# --------------------------------------------------------------------------

def iter_graphs(graph):
    yield graph
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from iter_graphs(attr.g)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for g in attr.graphs:
                    yield from iter_graphs(g)


def tensor_nbytes(t):
    if t.HasField("raw_data"):
        return len(t.raw_data)
    return numpy_helper.to_array(t).nbytes


def stats(model):
    top_nodes = len(model.graph.node)
    hist = collections.Counter()
    all_nodes = 0
    n_params = 0
    n_bytes = 0
    n_inits = 0
    big_consts = []
    for g in iter_graphs(model.graph):
        all_nodes += len(g.node)
        hist.update(n.op_type for n in g.node)
        for t in g.initializer:
            n_inits += 1
            n_params += int(np.prod(t.dims)) if len(t.dims) else 1
            n_bytes += tensor_nbytes(t)
        for n in g.node:
            if n.op_type == "Constant":
                for a in n.attribute:
                    if a.type == onnx.AttributeProto.TENSOR and tensor_nbytes(a.t) > INLINE_LIMIT:
                        big_consts.append((n.name, tensor_nbytes(a.t)))
    return dict(top_nodes=top_nodes, all_nodes=all_nodes, hist=hist,
                n_params=n_params, n_bytes=n_bytes, n_inits=n_inits,
                big_consts=big_consts)


def make_weightless(model, name, tmpdir):
    """Return a copy of `model` whose large initializers are external data in
    NAME.weights (written to tmpdir only) with the payload removed."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    location = name + ".weights"
    n_ext = 0
    for g in iter_graphs(m.graph):
        for t in g.initializer:
            if t.data_location == TensorProto.EXTERNAL:
                continue
            if tensor_nbytes(t) <= INLINE_LIMIT:
                continue
            if not t.HasField("raw_data"):
                # Normalise typed-field storage to raw_data first.
                t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t), t.name))
            external_data_helper.set_external_data(t, location)
            n_ext += 1
    weights_path = os.path.join(tmpdir, location)
    if os.path.exists(weights_path):
        os.remove(weights_path)
    # Lays out the payloads sequentially in NAME.weights, fills in the
    # offset/length keys and clears raw_data (same code path as onnx.save_model
    # with save_as_external_data=True).
    external_data_helper.write_external_data_tensors(m, tmpdir)
    # Tells graphlint the weights were left out on purpose, so GL004 is a
    # quiet note on the bundled models instead of a warning.
    entry = m.metadata_props.add()
    entry.key, entry.value = "graphlint.weights", "stripped"
    return m, n_ext, weights_path


def verify_roundtrip(full, weightless, tmpdir):
    """Reattach the temp weights to the weightless copy and compare payloads."""
    m = onnx.ModelProto()
    m.CopyFrom(weightless)
    external_data_helper.load_external_data_for_model(m, tmpdir)
    def payloads(model):
        return {(gi, t.name): numpy_helper.to_array(t)
                for gi, g in enumerate(iter_graphs(model.graph))
                for t in g.initializer}
    want = payloads(full)
    got = payloads(m)
    assert want.keys() == got.keys(), "initializer sets differ"
    for k, v in want.items():
        assert v.dtype == got[k].dtype and v.shape == got[k].shape and \
            np.array_equal(v, got[k]), "payload mismatch for %s" % (k,)


def fmt_bytes(n):
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return ("%d %s" % (n, unit)) if unit == "B" else ("%.1f %s" % (n, unit))
        n /= 1024.0


def process(name, builder, out_dir, full_dir, write_weightless):
    print("== %s" % name, flush=True)
    model, msgs = builder()
    for m in msgs:
        print("   export warning: %s" % m)
    onnx.checker.check_model(model, full_check=True)
    s = stats(model)
    top = ", ".join("%s:%d" % kv for kv in s["hist"].most_common(12))
    print("   nodes: %d top-level, %d incl. subgraphs" % (s["top_nodes"], s["all_nodes"]))
    print("   ops:   %s" % top)
    print("   params: %d in %d initializers (%s)" % (s["n_params"], s["n_inits"], fmt_bytes(s["n_bytes"])))
    for cname, cb in s["big_consts"]:
        print("   note: Constant node %s holds %d bytes inline" % (cname, cb))

    if full_dir:
        os.makedirs(full_dir, exist_ok=True)
        p = os.path.join(full_dir, name + ".onnx")
        onnx.save_model(model, p)
        print("   full model:      %s (%s)" % (p, fmt_bytes(os.path.getsize(p))))

    if write_weightless:
        with tempfile.TemporaryDirectory(prefix="graphlint-export-") as tmpdir:
            wl, n_ext, wpath = make_weightless(model, name, tmpdir)
            wsize = os.path.getsize(wpath) if os.path.exists(wpath) else 0
            verify_roundtrip(model, wl, tmpdir)
            # Check the weightless graph + temp weights as onnx would load
            # them from disk (validates location/offset/length).
            tmp_model = os.path.join(tmpdir, name + ".onnx")
            onnx.save_model(wl, tmp_model)
            onnx.checker.check_model(tmp_model)
        os.makedirs(out_dir, exist_ok=True)
        p = os.path.join(out_dir, name + ".onnx")
        onnx.save_model(wl, p)
        stray = os.path.join(out_dir, name + ".weights")
        if os.path.exists(stray):
            os.remove(stray)
        print("   weightless copy: %s (%s; %d initializers -> external %s, %s not written)"
              % (p, fmt_bytes(os.path.getsize(p)), n_ext, name + ".weights", fmt_bytes(wsize)))
    return s


def main(argv=None):
    all_names = list(MODELS) + list(BENCH_MODELS)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=SCRIPT_DIR,
                    help="directory for the weightless NAME.onnx copies (default: %(default)s)")
    ap.add_argument("--full-dir", default=None,
                    help="also write full models with embedded weights here")
    ap.add_argument("--only", nargs="+", choices=all_names, metavar="NAME",
                    help="export only these models (choices: %s)" % ", ".join(all_names))
    ap.add_argument("--bench", action="store_true",
                    help="with --full-dir: also export the benchmark models (resnet50, ~100 MB)")
    args = ap.parse_args(argv)

    selected = list(args.only) if args.only else list(MODELS)
    if args.bench:
        selected += [n for n in BENCH_MODELS if n not in selected]
    bench_sel = [n for n in selected if n in BENCH_MODELS]
    if bench_sel and not args.full_dir:
        ap.error("%s is only exported into --full-dir; pass --full-dir DIR" % ", ".join(bench_sel))

    print("torch %s, torchvision %s, onnx %s, opset %d"
          % (torch.__version__, torchvision.__version__, onnx.__version__, OPSET))
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    for name in selected:
        if name in MODELS:
            process(name, MODELS[name], args.out, args.full_dir, write_weightless=True)
        else:
            process(name, BENCH_MODELS[name], args.out, args.full_dir, write_weightless=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
