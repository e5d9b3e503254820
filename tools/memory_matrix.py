#!/usr/bin/env python3
"""The memory target matrix of issue 15: measured peaks against graphlint's
memory plan for the models of tools/memory_models.py at two batch sizes, in
four modes, through every frontend this interpreter's torch can write
(docs/validation.md "Memory: the target matrix").

  PY tools/memory_matrix.py --truth tests/fixtures/memory/matrix-torchX.json [--check] [--onnx] [--pt2]
      [--pt2-strict] [--frames] [--heldout | --sdpa] [--graphlint BIN] [--out DIR] [--only NAME ...]

Modes: inference (eval, no_grad); train (fp32, Adam single-tensor, one step
after a warm-up step); bf16 (the forward under torch.autocast("cpu",
bfloat16), fp32 weights, gradients and Adam state); ckpt (fp32,
torch.utils.checkpoint(use_reentrant=False) around every block). The truth is
validate_memory.py's LiveStorages (every live tensor storage summed at every
aten op); the figure compared is the peak beyond the resident states
(parameters, buffers, inputs, optimizer state), and the total peak.

Frontends: fx (graphlint-export in this process: the forward graph for
inference, the joint --train graph otherwise; graphlint --train --optimizer
adam --precision fp32, the autocast casts and bf16 tensors being in the graph;
ckpt twice: the checkpointed model's own joint graph, whose backward holds the
recompute, and the plain joint graph with --recompute layer, compared with
a whole-block checkpoint where the model's own differs: DenseNet's
memory_efficient checkpoints the bottleneck only, so its column is measured
with memory_models.checkpointed_layers, the "ckpt-layers" truth). --onnx: on torch
1.x torch.onnx.export's TorchScript exporter (opset 17, eval with
training=PRESERVE; "onnx"), on torch 2.x its dynamo exporter with its default
optimizer (the eval module for inference, the train() module for a training
step; "onnx dynamo"): inference and train, also compared with the fx
prediction (the same peak within 2%). --pt2 (torch.export.save of the eval
forward): inference and train; --pt2-strict: the same with
torch.export.export(strict=True), whose stack traces hold every Python frame
dynamo inlined (".pt2 strict"); --frames: with --pt2 and --onnx on torch
2.x, the same non-strict exports under graphlint.record_python_frames, whose
stack traces then hold every frame of the model's own Python too, as a strict
export's do (".pt2 frames", "onnx dynamo frames").

The truth is measured once per case and written to --truth; with --check
nothing is measured (a case without truth is skipped) and the exit code is 1
when a case misses its bound. A known miss keeps its own recorded bound
(KNOWN_MISSES) so a regression still fails."""

import argparse
import contextlib
import gc
import importlib.machinery
import importlib.util
import io
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "models"))
import memory_models as mm  # noqa: E402
sys.path.insert(0, os.path.join(REPO, "python"))
from graphlint._pt2 import export_pt2, record_python_frames  # noqa: E402
from validate_memory import LiveStorages, storages_bytes  # noqa: E402

TOLERANCE = 0.03   # of the peak beyond the resident states, and of the total peak
PARITY = 0.02      # ONNX against FX: the same total peak
# The truth runs on the CPU: --kernels cpu makes the plan assume the CPU's
# kernels where they keep other tensors than CUDA's (dropout's noise tensor).
TRAIN = ["--train", "--optimizer", "adam", "--precision", "fp32", "--kernels", "cpu"]
MODES = ("inference", "train", "bf16", "ckpt")
# (model, mode, frontend) -> (bound, why): the misses docs/validation.md
# explains, each with its own recorded bound (tests/fixtures/memory/
# matrix-known-misses.json) so a regression still fails.
MISSES_FILE = os.path.join(REPO, "tests", "fixtures", "memory", "matrix-known-misses.json")
KNOWN_MISSES = {}
if os.path.exists(MISSES_FILE):
    with open(MISSES_FILE) as _f:
        KNOWN_MISSES = {tuple(k.split("|")): (v["bound"], v["why"]) for k, v in json.load(_f).items()}


def exporter():
    path = os.path.join(HERE, "graphlint-export", "graphlint-export")
    loader = importlib.machinery.SourceFileLoader("graphlint_export", path)
    spec = importlib.util.spec_from_loader("graphlint_export", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def variant(name, batch, mode):
    """(module, inputs) of a case, built fresh (a measurement leaves state behind)."""
    model, inputs, blocks = mm.model(name)[0](batch)
    if mode == "bf16":
        model = mm.Autocast(model)
    elif mode == "ckpt":
        mm.checkpointed(model, blocks)
    elif mode == "ckpt-layers":
        mm.checkpointed_layers(model, blocks)
    return model, inputs


def training_step(model, inputs):
    """The matrix's training step, as (forward_backward, optimizer): train(),
    `out.backward(ones_like(out))` (the output dropped when it returns), and
    single-tensor Adam, whose step and zero_grad(set_to_none=True) the
    caller runs."""
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4, foreach=False)

    def forward_backward():
        out = model(*inputs)
        out.backward(torch.ones_like(out))

    return forward_backward, opt


def measure(model, inputs, mode, live=None):
    """The truth of one case; `live`: the LiveStorages (or subclass) instance
    to measure with, which keeps its samples (a fresh one when None)."""
    gc.collect()
    live = LiveStorages() if live is None else live
    if mode == "inference":
        model.eval()
        with torch.no_grad():
            live.track(list(model.parameters()) + list(model.buffers()) + list(inputs))
            live.sample("start")
            with live:
                out = model(*inputs)
            del out
        return {"peak": live.peak, "resident": live.samples[0][1], "peak_op": live.peak_op, "ops": len(live.samples)}
    forward_backward, opt = training_step(model, inputs)

    def step(live=None):
        forward_backward()
        if live is not None:
            live.sample("backward-end")
            live.backward_end = len(live.samples)
        opt.step()
        opt.zero_grad(set_to_none=True)

    step()   # allocates the optimizer state
    gc.collect()
    state = [t for s in opt.state.values() for t in s.values() if isinstance(t, torch.Tensor)]
    live.track(list(model.parameters()) + list(model.buffers()) + list(inputs) + state)
    live.sample("start")
    with live:
        step(live)
    return {"peak": live.peak, "resident": live.samples[0][1], "peak_op": live.peak_op, "ops": len(live.samples),
            "fwd_bwd_peak": max(b for _, b in live.samples[:live.backward_end]),
            "optimizer_bytes": storages_bytes(state)}


def predict(graphlint, path, extra):
    r = subprocess.run([graphlint, "--format", "json", "--exit-zero"] + extra + [path], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("graphlint failed on %s: %s" % (os.path.basename(path), (r.stderr.strip().splitlines()
                                                                                   or ["?"])[-1]))
    mem = json.loads(r.stdout)["files"][0].get("memory")
    if not mem:
        raise RuntimeError("graphlint wrote no memory section for " + path)
    return mem


def fx_export(exp, model, inputs, path, train):
    with contextlib.redirect_stderr(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exp.export_module(model, inputs, path, train=train)


DYNAMO = int(torch.__version__.split(".")[0]) >= 2
ONNX_FRONTEND = "onnx dynamo" if DYNAMO else "onnx"


def onnx_export(model, inputs, path, train, frames=False):
    """torch 1.x: the TorchScript exporter, eval with training=PRESERVE (the
    synthesised step adds no dropout). torch 2.x: the dynamo exporter as a
    user calls it (its default optimizer folds constants), the module in
    train() for a training step, so its dropouts are training Dropouts;
    frames: under graphlint.record_python_frames."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if DYNAMO:
            model.train(train)
            with record_python_frames() if frames else contextlib.nullcontext():
                torch.onnx.export(model, tuple(inputs), dynamo=True).save(path)
            return
        model.eval()
        torch.onnx.export(model, inputs, path, opset_version=17, do_constant_folding=True,
                          training=torch.onnx.TrainingMode.PRESERVE,
                          input_names=["input%d" % i for i in range(len(inputs))], output_names=["output"])


def pt2_export(model, inputs, path, strict=False, frames=False):
    """torch.export.export of the eval module: non-strict (torch 2.x's
    default), or strict (dynamo traces the Python, and records every frame it
    inlines: decorators' wrappers and helper functions); frames: non-strict
    under graphlint.record_python_frames, which records the same frames."""
    model.eval()
    with contextlib.redirect_stderr(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if frames:
            export_pt2(model, tuple(inputs), path)
            return
        ep = torch.export.export(model, tuple(inputs), strict=strict)
        torch.export.save(ep, path)


def compare(case, truth, mem):
    training = case["mode"] != "inference"
    resident = mem["params_bytes"] + mem.get("buffers_bytes", 0) + mem["inputs_bytes"] + (mem["optimizer_bytes"] if training else 0)
    m, p = truth["peak"], mem["peak_allocated_bytes"]
    mb, pb = m - truth["resident"], p - resident
    case.update({"measured": m, "predicted": p, "measured_beyond": mb, "predicted_beyond": pb,
                 "error_total": (p - m) / m, "error_beyond": (pb - mb) / mb if mb > 0 else 0.0,
                 "peak_at": "%s %s" % (mem.get("peak_phase", ""), mem.get("peak_node", ""))})
    errors = [case["error_total"], case["error_beyond"]]
    if training:
        # The peak before the optimizer step: activations and gradients, which
        # the step's peak hides when Adam's temporaries set it.
        fb = max(s["live_bytes"] for s in mem["timeline"] if s["phase"] in ("forward", "backward"))
        mfb = truth["fwd_bwd_peak"] - truth["resident"]
        case.update({"measured_fwd_bwd": mfb, "predicted_fwd_bwd": fb - resident,
                     "error_fwd_bwd": (fb - resident - mfb) / mfb if mfb > 0 else 0.0})
        errors.append(case["error_fwd_bwd"])
    worst = max(abs(e) for e in errors)
    case["target"] = worst <= TOLERANCE
    known = KNOWN_MISSES.get((case["model"], case["mode"], case["frontend"]))
    case["bound"] = known[0] if known and known[0] != "fails" else TOLERANCE
    case["ok"] = worst <= case["bound"]
    return case


def run_case(a, exp, tmp, name, batch, mode, truth, layers_truth=None):
    """The cases of one (model, batch, mode): one per frontend that can write
    it. layers_truth: the measured whole-block checkpoint the `fx --recompute
    layer` column is compared with where it differs from the ckpt mode's."""
    tag = "%s_b%d_%s" % (name, batch, mode)
    out = []

    def add(frontend, fn, against=None):
        case = {"model": name, "batch": batch, "mode": mode, "frontend": frontend}
        try:
            out.append(compare(case, against or truth, fn()))
        except Exception as e:  # noqa: BLE001 - a frontend that cannot write the model is a row, not a crash
            # A frontend known not to write the model is recorded as such ("fails").
            known = KNOWN_MISSES.get((name, mode, frontend))
            case.update({"error": "%s: %s" % (type(e).__name__, (str(e).strip().splitlines() or ["?"])[0][:160]),
                         "ok": known is not None and known[0] == "fails", "target": False})
            out.append(case)

    train = mode != "inference"
    fx = os.path.join(tmp, tag + ".fx.json")

    def via_fx():
        model, inputs = variant(name, batch, mode)
        fx_export(exp, model, inputs, fx, train)
        return predict(a.graphlint, fx, TRAIN if train else [])
    add("fx", via_fx)
    if mode == "ckpt":
        plain = os.path.join(tmp, "%s_b%d_train.fx.json" % (name, batch))

        def via_recompute():
            if not os.path.exists(plain):
                model, inputs = variant(name, batch, "train")
                fx_export(exp, model, inputs, plain, True)
            return predict(a.graphlint, plain, TRAIN + ["--recompute", "layer"])
        add("fx --recompute layer", via_recompute, layers_truth)
    # The TorchScript export is the same file for both modes; the dynamo
    # export of a training step is of the train() module.
    # bf16 (torch 2.x): the dynamo export of the train() autocast module,
    # whose casts the exporter records.
    for frontend, suffix, wanted in ((ONNX_FRONTEND, "", a.onnx),
                                     ("onnx dynamo frames", ".frames", a.onnx and a.frames and DYNAMO)):
        if not wanted or mode not in ("inference", "train") + (("bf16",) if DYNAMO else ()):
            continue
        kind = "_bf16" if mode == "bf16" else "_train" if DYNAMO and train else ""
        path = os.path.join(tmp, "%s_b%d%s%s.onnx" % (name, batch, kind, suffix))

        def via_onnx(path=path, suffix=suffix):
            if not os.path.exists(path):
                onnx_export(*variant(name, batch, "bf16" if mode == "bf16" else "inference"), path, train,
                            frames=suffix == ".frames")
            return predict(a.graphlint, path, TRAIN if train else [])
        add(frontend, via_onnx)
    # bf16: the export of the autocast module (torch.export records the
    # region, docs/pt2.md "Autocast regions"); ckpt: the plain export with
    # `--recompute layer` (an export records no checkpoint), against the
    # whole-block checkpoint it models, as `fx --recompute layer`.
    for frontend, suffix, wanted in ((".pt2", "", a.pt2), (".pt2 strict", ".strict", a.pt2_strict),
                                     (".pt2 frames", ".frames", a.pt2 and a.frames)):
        if not wanted or (mode == "ckpt" and suffix):
            continue
        bf16 = mode == "bf16"
        path = os.path.join(tmp, "%s_b%d%s%s.pt2" % (name, batch, "_bf16" if bf16 else "", suffix))

        def via_pt2(path=path, suffix=suffix, bf16=bf16):
            if not os.path.exists(path):
                pt2_export(*variant(name, batch, "bf16" if bf16 else "inference"), path, suffix == ".strict",
                           suffix == ".frames")
            return predict(a.graphlint, path, (TRAIN + (["--recompute", "layer"] if mode == "ckpt" else []))
                           if train else [])
        if mode == "ckpt":
            add(".pt2 --recompute layer", via_pt2, layers_truth)
        else:
            add(frontend, via_pt2)
    return out


def parity(cases):
    """ONNX against FX, the same model, batch and mode: (case pairs, misses)."""
    fx = {(c["model"], c["batch"], c["mode"]): c for c in cases if c["frontend"] == "fx" and "error" not in c}
    rows = []
    for c in cases:
        f = fx.get((c["model"], c["batch"], c["mode"]))
        if c["frontend"] != ONNX_FRONTEND or "error" in c or f is None:
            continue
        d = (c["predicted"] - f["predicted"]) / f["predicted"]
        bound = KNOWN_MISSES.get((c["model"], c["mode"], ONNX_FRONTEND + " vs fx"), (PARITY,))[0]
        rows.append({"model": c["model"], "batch": c["batch"], "mode": c["mode"], "fx": f["predicted"],
                     "onnx": c["predicted"], "diff": d, "ok": abs(d) <= bound, "target": abs(d) <= PARITY})
    return rows


MIB = 1024.0 * 1024.0


def table(cases):
    lines = ["| model | batch | mode | frontend | peak: measured (MiB) | predicted | error | beyond resident:"
             " measured | predicted | error | fwd+bwd beyond resident: measured | predicted | error | within 3% |"
             " bound |", "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|"]
    for c in cases:
        if "error" in c:
            lines.append("| %s | %d | %s | %s | %s ||||||||||" % (c["model"], c["batch"], c["mode"], c["frontend"],
                                                                    c["error"]))
            continue
        fb = ("%.2f | %.2f | %+.2f%%" % (c["measured_fwd_bwd"] / MIB, c["predicted_fwd_bwd"] / MIB,
                                         100 * c["error_fwd_bwd"]) if "error_fwd_bwd" in c else "| |")
        lines.append("| %s | %d | %s | %s | %.2f | %.2f | %+.2f%% | %.2f | %.2f | %+.2f%% | %s | %s | %g%% |" % (
            c["model"], c["batch"], c["mode"], c["frontend"], c["measured"] / MIB, c["predicted"] / MIB,
            100 * c["error_total"], c["measured_beyond"] / MIB, c["predicted_beyond"] / MIB, 100 * c["error_beyond"],
            fb, "yes" if c["target"] else "**no**", round(100 * c["bound"], 1)))
    return "\n".join(lines)


def summary_table(cases):
    """docs/validation.md's form: one row per model and mode, one column per
    frontend, the case's worst error at each batch size (bold: outside 3%)."""
    fronts = [f for f in ("fx", "onnx", "onnx dynamo", "onnx dynamo frames", ".pt2", ".pt2 strict", ".pt2 frames",
                          "fx --recompute layer", ".pt2 --recompute layer")
              if any(c["frontend"] == f for c in cases)]
    batches = sorted({c["batch"] for c in cases})
    cell, rows = {}, []
    for c in cases:
        if (c["model"], c["mode"]) not in rows:
            rows.append((c["model"], c["mode"]))
        if "error_beyond" not in c:
            continue
        errs = [c["error_total"], c["error_beyond"]] + ([c["error_fwd_bwd"]] if "error_fwd_bwd" in c else [])
        text = "%+.1f%%" % (100 * max(errs, key=abs))
        cell[(c["model"], c["mode"], c["frontend"], c["batch"])] = text if c["target"] else "**%s**" % text
    lines = ["| model | mode | " + " | ".join(fronts) + " |", "|---|---|" + "---|" * len(fronts)]
    for model, mode in rows:
        cols = []
        for f in fronts:
            got = [cell.get((model, mode, f, b)) for b in batches]
            cols.append(" / ".join(g or "-" for g in got) if any(got) else "")
        lines.append("| %s | %s | %s |" % (model, mode, " | ".join(cols)))
    return "\n".join(lines)


def parity_table(rows):
    # "within 2%" is the target; a known miss passes --check within its own
    # recorded bound, which is not the target.
    lines = ["| model | batch | mode | FX peak (MiB) | ONNX peak (MiB) | ONNX - FX | within 2% |",
             "|---|---:|---|---:|---:|---:|---|"]
    for r in rows:
        lines.append("| %s | %d | %s | %.2f | %.2f | %+.2f%% | %s |" % (r["model"], r["batch"], r["mode"], r["fx"] / MIB,
                                                                       r["onnx"] / MIB, 100 * r["diff"],
                                                                       "yes" if r["target"] else "**no**"))
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--truth", required=True, help="the measured peaks (read; measured and written when missing)")
    ap.add_argument("--check", action="store_true", help="measure nothing; exit 1 when a case misses its bound")
    ap.add_argument("--graphlint", default=os.path.join(REPO, "build", "tools", "graphlint"))
    ap.add_argument("--out", help="keep the exports and results.json here (default: a temporary folder)")
    ap.add_argument("--only", nargs="*", help="these models only")
    ap.add_argument("--modes", nargs="*", default=list(MODES), choices=MODES)
    ap.add_argument("--batches", nargs="*", type=int, default=list(mm.BATCHES), help="these batch sizes only")
    ap.add_argument("--onnx", action="store_true", help="also torch.onnx.export (torch 1.x: TorchScript; torch 2.x: "
                    "dynamo, as 'onnx dynamo') and the FX parity")
    ap.add_argument("--pt2", action="store_true", help="also torch.export.save .pt2 (torch 2.x)")
    ap.add_argument("--pt2-strict", action="store_true", help="also a strict torch.export (dynamo) .pt2, as '.pt2 strict'")
    ap.add_argument("--frames", action="store_true",
                    help="with --pt2 and --onnx (torch 2.x): also the exports under graphlint.record_python_frames"
                         " (every Python frame recorded), as '.pt2 frames' and 'onnx dynamo frames'")
    ap.add_argument("--heldout", action="store_true", help="the held-out models (memory_models.HELDOUT), never looked "
                    "at while the memory plan was fixed, instead of the matrix's")
    ap.add_argument("--sdpa", action="store_true", help="the models of memory_models.SDPA (transformers' default "
                    "scaled_dot_product_attention: docs/validation.md) instead of the matrix's")
    a = ap.parse_args(argv)
    if not os.path.exists(a.graphlint):
        print("memory_matrix: no graphlint binary at %s" % a.graphlint)
        return 2
    torch.set_num_threads(1)
    truth = {"torch": torch.__version__, "cases": {}}
    if a.check and not os.path.exists(a.truth):
        print("memory_matrix: %s: no such file (the measured truth --check compares with)" % a.truth)
        return 2
    if os.path.exists(a.truth):
        with open(a.truth) as f:
            truth = json.load(f)
    if truth.get("torch") != torch.__version__:
        print("memory_matrix: SKIP: %s was measured with torch %s, this is %s" % (a.truth, truth.get("torch"),
                                                                                 torch.__version__))
        return 77
    names = [n for n in mm.available(a.heldout, a.sdpa) if not a.only or n in a.only]
    if not names:
        print("memory_matrix: SKIP: %s (torch %s) can build none of the models" % (sys.executable, torch.__version__))
        return 77
    exp = exporter()
    tmpdir = tempfile.TemporaryDirectory(prefix="memory-matrix-")
    tmp = a.out or tmpdir.name
    os.makedirs(tmp, exist_ok=True)
    cases = []
    t_all = time.time()
    for name in names:
        t0 = time.time()
        for batch in a.batches:
            for mode in a.modes:
                key = "%s/b%d/%s" % (name, batch, mode)
                measured = [key]
                if mode == "ckpt" and name in mm.LAYER_POLICY_DIFFERS:
                    measured.append("%s/b%d/ckpt-layers" % (name, batch))
                for k in measured:
                    if k in truth["cases"] or a.check:
                        continue
                    try:
                        model, inputs = variant(name, batch, k.rsplit("/", 1)[1])
                        truth["cases"][k] = measure(model, inputs, mode)
                        del model, inputs
                    except Exception as e:  # noqa: BLE001 - eager torch cannot run it: say so in the table
                        truth["cases"][k] = {"error": "eager run failed: %s: %s" % (
                            type(e).__name__, (str(e).strip().splitlines() or ["?"])[0][:160])}
                    truth.update({"torch": torch.__version__, "python": sys.executable,
                                  "measured": time.strftime("%Y-%m-%d")})
                    with open(a.truth, "w") as f:
                        json.dump(truth, f, indent=1, sort_keys=True)
                        f.write("\n")
                if key not in truth["cases"]:
                    print("%s: no measured truth in %s, skipped" % (key, a.truth))
                    continue
                if "error" in truth["cases"][key]:
                    cases.append({"model": name, "batch": batch, "mode": mode, "frontend": "(measurement)",
                                  "error": truth["cases"][key]["error"], "ok": True, "target": False})
                    continue
                layers = truth["cases"].get(measured[-1]) if len(measured) > 1 else None
                if layers is not None and "error" in layers:
                    layers = None
                cases += run_case(a, exp, tmp, name, batch, mode, truth["cases"][key], layers)
        print("%s: %.1f s" % (name, time.time() - t0), file=sys.stderr, flush=True)
    pairs = parity(cases)
    with open(os.path.join(tmp, "results.json"), "w") as f:
        json.dump({"torch": torch.__version__, "cases": cases, "parity": pairs}, f, indent=1, sort_keys=True)
    print("Memory matrix, torch %s (%s), CPU; error of the total peak and of the peak beyond the resident states "
          "(parameters, buffers, inputs, Adam state), target %d%% (%.0f s):\n" % (
              torch.__version__, sys.executable, round(100 * TOLERANCE), time.time() - t_all))
    print(table(cases))
    print("\nWorst error per case, batch %s (docs/validation.md):\n" % " / ".join(str(b) for b in a.batches))
    print(summary_table(cases))
    if pairs:
        print("\nONNX against FX, the same model: predicted total peak, target %d%%:\n" % round(100 * PARITY))
        print(parity_table(pairs))
    hit = sum(1 for c in cases if c.get("target"))
    print("\n%d of %d cases within %d%%" % (hit, len(cases), round(100 * TOLERANCE)))
    for c in cases:
        k = (c["model"], c["mode"], c["frontend"])
        if c.get("ok") and not c["target"] and k in KNOWN_MISSES:
            if "error" in c:  # a frontend recorded as unable to write the model
                print("known miss: %s b%d %s %s fails, as recorded: %s" % (c["model"], c["batch"], c["mode"],
                      c["frontend"], KNOWN_MISSES[k][1]))
                continue
            print("known miss: %s b%d %s %s %+.2f%% (bound %g%%): %s" % (c["model"], c["batch"], c["mode"],
                  c["frontend"], 100 * c["error_beyond"], 100 * c["bound"], KNOWN_MISSES[k][1]))
    bad = [c for c in cases if not c.get("ok")] + [p for p in pairs if not p["ok"]]
    for c in bad:
        print("MISS: %s b%d %s %s: %s" % (c["model"], c["batch"], c["mode"], c.get("frontend", ONNX_FRONTEND + " vs fx"),
                                          c.get("error") or ("%+.2f%% beyond resident, %+.2f%% total, %+.2f%% fwd+bwd" % (
                                              100 * c["error_beyond"], 100 * c["error_total"],
                                              100 * c.get("error_fwd_bwd", 0.0)) if "error_beyond" in c
                                              else "%+.2f%%" % (100 * c["diff"]))))
    return 1 if bad and a.check else 0


if __name__ == "__main__":
    rc = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(rc)
