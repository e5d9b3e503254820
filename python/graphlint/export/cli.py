"""graphlint-export's command line and its Python entry (export_module):
arguments, loading the model, the capture steps, the document and its
atomic write. `python -m graphlint.export` and the `graphlint-export`
console script run `main` (graphlint/export/__main__.py)."""

import argparse
import gc
import importlib
import importlib.util
import inspect
import json
import os
import re
import sys
import tempfile
import time

from . import __doc__ as _PACKAGE_DOC
from . import EXPORTER_VERSION, FORMAT_NAME, FORMAT_VERSION


def fail(msg):
    print(f"graphlint-export: error: {msg}", file=sys.stderr)
    sys.exit(2)


def warn(msg):
    print(f"graphlint-export: warning: {msg}", file=sys.stderr)


try:
    import torch
except ImportError as e:  # pragma: no cover - depends on the interpreter
    fail(f"cannot import torch ({e}); run graphlint-export with a Python that has torch, e.g. /usr/bin/python3")

from .fx_blocks import capture_repeated  # noqa: E402
from .fx_build import CallInputs, ExportError, InputSpec  # noqa: E402
from .fx_json import Writer  # noqa: E402
from .fx_prepare import prepare  # noqa: E402
from .fx_source import UserSource, repo_root  # noqa: E402
from .fx_suppress import source_suppressions  # noqa: E402


# --------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------

def load_file(path):
    if not os.path.isfile(path):
        fail(f"{path}: no such file")
    # The user's model imports its neighbours, as `python MODEL.py` would let it.
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec = importlib.util.spec_from_file_location("graphlint_user_model", path)
    if spec is None or spec.loader is None:
        fail(f"{path}: not a Python file: graphlint-export reads a .py file defining model() "
             f"(lint an ONNX, FX or .pt2 file with graphlint itself)")
    mod = importlib.util.module_from_spec(spec)
    # Registered as imported modules are: dynamo (torch.cond, torch.export)
    # and dataclasses look the module up by name.
    sys.modules[spec.name] = mod
    try:
        spec.loader.exec_module(mod)
    except Exception as e:
        fail(f"{path}: cannot be imported: {type(e).__name__}: {first_line(e)}")
    if not callable(getattr(mod, "model", None)):
        fail(f"{path}: must define model()")
    return mod.model, getattr(mod, "example_inputs", None), os.path.abspath(path)


def load_factory(text):
    mod_name, sep, attr = text.partition(":")
    if not sep or not mod_name or not attr:
        fail(f"--model: expected pkg.module:factory, got '{text}'")
    # pkg.module is the user's, found from the working directory as `python -m` finds it.
    sys.path.insert(0, os.getcwd())
    try:
        mod = importlib.import_module(mod_name)
    except Exception as e:
        fail(f"--model {text}: cannot import {mod_name}: {type(e).__name__}: {first_line(e)}")
    factory = getattr(mod, attr, None)
    if not callable(factory):
        fail(f"--model {text}: {mod_name} has no callable '{attr}'")
    return factory, getattr(mod, "example_inputs", None), os.path.abspath(mod.__file__)


def first_line(e):
    text = str(e).strip()
    return text.splitlines()[0] if text else ""


def parse_dim(s):
    name, sep, size = s.partition("=")
    if not sep or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name) or not size.isdigit():
        raise argparse.ArgumentTypeError(f"expected NAME=SIZE, got '{s}'")
    return name, int(size)


def parse_dynamic(s):
    m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*):(\d+)=([A-Za-z_][A-Za-z0-9_]*)$", s)
    if not m:
        raise argparse.ArgumentTypeError(f"expected INPUT:DIM=NAME (e.g. input0:0=batch), got '{s}'")
    return m.group(1), int(m.group(2)), m.group(3)


def parse_input(s):
    try:
        return InputSpec.parse(s)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e))


def build_parser():
    p = argparse.ArgumentParser(prog="graphlint-export", description=_PACKAGE_DOC.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="docs/fx-format.md describes every option and the file format.")
    p.add_argument("file", nargs="?", help="Python file defining model() and example_inputs()")
    p.add_argument("--model", dest="factory", metavar="PKG.MODULE:FACTORY",
                   help="an importable function returning the nn.Module (instead of FILE)")
    p.add_argument("-o", "--output", required=True, help="output file (*.fx.json)")
    p.add_argument("--input", dest="inputs", action="append", type=parse_input, default=[], metavar="NAME:DTYPE[DIMS]",
                   help="an input given by shape, no tensor needed: 'input_ids:int64[batch,seq]' (a keyword "
                        "argument of forward(); input0, input1, ... are positional). Dims are sizes or symbol "
                        "names sized by --dim (or NAME=SIZE inline). Replaces example_inputs()")
    p.add_argument("--dim", "-D", action="append", type=parse_dim, default=[], metavar="NAME=SIZE",
                   help="size of the symbol NAME. With example_inputs(), every input dim of that size becomes "
                        "the symbol (torch 2.x: a symbolic size torch carries through the graph; torch 1.13: every "
                        "dim of that size in the inputs and activations, matched by size)")
    p.add_argument("--dynamic", action="append", type=parse_dynamic, default=[], metavar="INPUT:DIM=NAME",
                   help="make dim DIM of input INPUT (input0, ... or an --input name) the symbol NAME")
    p.add_argument("--train", action="store_true",
                   help="joint forward + backward graph in train() mode, saved tensors marked")
    p.add_argument("--loss-output", metavar="NAME",
                   help="--train: back-propagate this output alone, as out[NAME].backward() (a key of a dict or "
                        "transformers ModelOutput, an index of a tuple, an attribute); the others stay forward "
                        "outputs. Default: a scalar 'loss' beside other outputs alone, else every output")
    p.add_argument("--module-mode", choices=["eval", "train"], default=None,
                   help="forward-only graphs: trace in eval() (default) or train() mode (dropout, BatchNorm statistics)")
    p.add_argument("--device", choices=["cuda"], help="record parameters, inputs and tensors created on 'cuda' as "
                   "on cuda:0 (nothing runs on a GPU; no GPU is needed)")
    p.add_argument("--capture", choices=["fake", "real", "export", "make_fx"], default="fake",
                   help="fake (default): meta-built module, fake tensors, make_fx; nothing is computed. real: real "
                        "weights and inputs, the model runs once (debugging). export: torch.export (torch >= 2.1, "
                        "forward, on the meta device). make_fx: same as fake")
    p.add_argument("--repeated-blocks", choices=["auto", "off"], default="auto",
                   help="auto (default, fake capture): a model whose nn.ModuleList holds 4 or more identical blocks "
                        "(decoder layers) is traced cut to 2 and to 3 blocks and the full graph is written from "
                        "them: the same file as a full trace, checked against the 3-block trace, traced in full "
                        "(with a note) when the blocks or the check differ. off: always trace every block")
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    if bool(args.file) == bool(args.factory):
        fail("give a model file or --model pkg.module:factory (exactly one)")
    try:   # before any user code runs: the source itself is never the output
        check_output(args.output, [args.file] if args.file else [])
    except ExportError as e:
        fail(str(e))
    if args.loss_output is not None and not args.train:
        fail("--loss-output names the output a --train capture back-propagates; add --train")
    if args.train and args.module_mode == "eval":
        fail("--train traces in train() mode; --module-mode eval contradicts it")
    factory, example_inputs, model_file = load_file(args.file) if args.file else load_factory(args.factory)
    if example_inputs is None and not args.inputs:
        fail(f"{UserSource().display_path(model_file)}: no example_inputs() and no --input: give the inputs' shapes with --input")
    try:
        doc, took = run_export(factory, example_inputs, model_file, args)
    except ExportError as e:
        fail(str(e))
    repeated = f"; repeated blocks: {args.repeated}" if getattr(args, "repeated", None) else ""
    print(f"graphlint-export: wrote {args.output}: {len(doc['nodes'])} nodes, {len(doc['params'])} params "
          f"({doc['model']['parameters']} parameter elements), {os.path.getsize(args.output)} bytes in {took:.2f} s "
          f"({doc['producer']['capture']} capture, {doc['producer']['tracer']}{repeated})", file=sys.stderr)
    return 0


def _same_file(a, b):
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_output(output, inputs):
    """Refuses, with a one-line ExportError, an output that would replace an
    input (the model source, a module the model imported) or cannot be
    written: graphlint's output guard (docs/robustness.md) for the exporter."""
    if os.path.isdir(output):
        raise ExportError(f"cannot write '{output}': is a directory")
    parent = os.path.dirname(os.path.abspath(output))
    if not os.path.isdir(parent):
        raise ExportError(f"cannot write '{output}': no such directory '{parent}'")
    if not os.path.exists(output):
        return
    for path in inputs:
        if path and _same_file(output, path):
            raise ExportError(f"refusing to write --output '{output}': it is the model source '{path}' this export "
                              f"reads (the output would overwrite it)")
    for name, mod in list(sys.modules.items()):
        path = getattr(mod, "__file__", None)
        if isinstance(path, str) and _same_file(output, path):
            raise ExportError(f"refusing to write --output '{output}': it is the module {name} ('{path}') the model "
                              f"imports (the output would overwrite it)")


def write_output(path, doc):
    """Writes the JSON next to `path` and renames it over `path` once whole,
    as graphlint's outputs are: a failed write leaves no truncated file."""
    out_dir = os.path.dirname(os.path.abspath(path))
    tmp = None
    try:
        if not os.path.exists(path) or os.path.isfile(path):
            fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=out_dir)
            with os.fdopen(fd, "w") as f:
                json.dump(doc, f, separators=(",", ":"), allow_nan=False)
                f.write("\n")
            if os.path.exists(path):
                os.chmod(tmp, os.stat(path).st_mode & 0o7777)
            os.replace(tmp, path)
            tmp = None
        else:   # /dev/null, a FIFO: written in place
            with open(path, "w") as f:
                json.dump(doc, f, separators=(",", ":"), allow_nan=False)
                f.write("\n")
    except OSError as e:
        raise ExportError(f"cannot write '{path}': {e.strerror or e}") from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def run_export(factory, example_inputs, model_file, args):
    """Captures factory() on the inputs and writes args.output; returns (doc, seconds).

    The command line (main) and the Python API (export_module, graphlint.check)
    both come here. Raises ExportError with a one-line message on any failure.
    """
    # The trace makes millions of short-lived objects and few cycles: the
    # cyclic collector's passes cost ~10% of a Llama 7B capture for a few
    # MiB, so it is paused for the export (and resumed after, for export_module's caller).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _run_export(factory, example_inputs, model_file, args)
    finally:
        if collecting:
            gc.enable()


def _run_export(factory, example_inputs, model_file, args):
    capture = "fake" if args.capture == "make_fx" else args.capture
    source = UserSource(repo_root(model_file))   # this export's user files, shared by every step below
    start = time.perf_counter()
    prep = _traced(lambda: prepare(factory, example_inputs, model_file, args, capture, source), model_file, source)
    doc = None
    if capture == "fake" and getattr(args, "repeated_blocks", "auto") != "off":
        doc, note = capture_repeated(prep, lambda: capture_doc(prep, capture, args, model_file))
        if doc is not None:
            args.repeated = note   # what was repeated, for the summary line
        elif note:
            print(f"graphlint-export: note: {note}", file=sys.stderr)
    if doc is None:
        doc = capture_doc(prep, capture, args, model_file)
    if doc["model"]["parameters"] != prep.param_count:
        raise ExportError(f"internal error: the graph holds {doc['model']['parameters']} parameters, "
                          f"the module {prep.param_count}")
    for d in doc.get("diagnostics", []):
        src = d.get("source")
        warn(f"{src['file']}:{src['line']}: {d['message']}" if src else d["message"])
    check_output(args.output, [model_file])
    write_output(args.output, doc)
    return doc, time.perf_counter() - start


def _traced(step, model_file, source):
    """Runs one preparation or trace step; any failure is a one-line ExportError."""
    try:
        return step()
    except ExportError:
        raise
    except Exception as e:
        if os.environ.get("GRAPHLINT_EXPORT_DEBUG"):
            raise
        raise ExportError(f"{source.error_location(e) or source.display_path(model_file) + ': '}tracing failed: {type(e).__name__}: "
                          f"{first_line(e)}") from None


def capture_doc(prep, capture, args, model_file):
    """Traces prep.module as it is now and returns the graphlint-fx document
    (not written). fx_blocks calls it on the module with its repeated blocks
    cut short, and reads prep.trace_items: every graph node, and where each
    block's forward and backward start."""
    prep.diagnostics = []
    cap = _traced(prep.capture, model_file, prep.source)
    writer = Writer(cap, prep.namer)
    params, graph_inputs, nodes, outputs = writer.run()
    diagnostics = prep.diagnostics + cap.diagnostics + writer.diagnostics
    if prep.namer.unsupported:
        diagnostics.append({"kind": "dim-not-expressible", "message": f"{prep.namer.unsupported} size expression(s) "
                            "outside the format's grammar (e.g. true division) were written at their traced value"})
    counted = sum(_numel(p["shape"]) for p in params if p["kind"] == "parameter")
    expected = sum(p.numel() for p in prep.module.parameters())
    if counted != expected:
        raise ExportError(f"internal error: the graph holds {counted} parameters, the module {expected}")
    doc = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "producer": {"name": "graphlint-export", "version": EXPORTER_VERSION, "torch": torch.__version__,
                     "capture": capture, "tracer": prep.tracer},
        "model": {"file": prep.source.display_path(model_file), "class": type(prep.module).__name__, "parameters": counted},
        "mode": "train" if args.train else "forward",
        "module_mode": "train" if prep.module.training else "eval",
        "params": params,
        "inputs": graph_inputs,
        "nodes": nodes,
        "outputs": outputs,
    }
    containers = module_containers(nodes, cap.called)
    if containers:
        doc["module_containers"] = containers
    symbols = prep.namer.table()
    if symbols:
        doc["symbols"] = symbols
    if cap.backward is not None:
        doc["backward"] = cap.backward
    if prep.simulate:
        doc["simulated_device"] = prep.simulate
    if diagnostics:
        doc["diagnostics"] = diagnostics
    suppressions = source_suppressions(nodes, prep.source.root or os.getcwd())
    if suppressions:
        doc["suppressions"] = suppressions
    prep.trace_items = (writer.items, writer.constants, cap.blocks)   # for fx_blocks
    return doc


def export_module(module, inputs, output, train=False, dims=(), device=None, capture="fake", model_file=None,
                  kwargs=None, loss_output=None):
    """The Python API's entry (graphlint.check): captures an nn.Module the
    caller already built, on its example inputs (positional `inputs`,
    keyword `kwargs`: forward(*inputs, **kwargs)), into `output`;
    loss_output is --loss-output.

    The module's own weights are never used for computing: the fake capture
    replaces them with fake tensors of the same shapes. Returns the written
    document; raises ExportError with a one-line message on any failure.
    """
    if not isinstance(module, torch.nn.Module):
        raise ExportError(f"the model must be an nn.Module, got {type(module).__name__}")
    if model_file is None:
        try:
            model_file = inspect.getsourcefile(type(module))
        except (TypeError, OSError):  # a class defined in a notebook cell or by exec
            model_file = None
    model_file = os.path.abspath(model_file) if model_file else os.path.join(os.getcwd(), "<module>")
    if loss_output is not None and not train:
        raise ExportError("loss_output names the output a training capture back-propagates; pass train=True")
    call = CallInputs(inputs, kwargs)
    args = build_parser().parse_args(["-o", output])
    args.train, args.dim, args.device, args.capture = train, list(dims), device, capture
    args.loss_output = loss_output
    doc, _ = run_export(lambda: module, lambda: call, model_file, args)
    return doc


def module_containers(nodes, called):
    """Module paths that prefix a node's module but never ran a forward
    (nn.ModuleList, nn.ModuleDict): they hold no arguments, unlike a called
    nn.Sequential (docs/fx-format.md `module_containers`)."""
    if called is None:
        return []
    out = set()
    for path in {n.get("module", "") for n in nodes}:
        parts = path.split(".") if path else []
        for d in range(1, len(parts)):
            prefix = ".".join(parts[:d])
            if prefix not in called:
                out.add(prefix)
    return sorted(out)


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n

