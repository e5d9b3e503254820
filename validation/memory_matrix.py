#!/usr/bin/env python3
"""The memory target matrix of issue 15: measured peaks against graphlint's
memory plan for the models of validation/memory_models.py at two batch sizes, in
four modes, through every frontend this interpreter's torch can write
(docs/validation.md "Memory: the target matrix").

  PY validation/memory_matrix.py --truth tests/fixtures/memory/matrix-torchX.json [--check] [--onnx] [--pt2]
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
nothing is measured and the exit code is 1 when a row fails the rule of
recorded_errors.py: an error outside 3% (2% for the ONNX-FX parity) that was
within it when recorded, or has grown by more than 0.5 percentage points
since, or has no recorded error; a row without numbers (the truth is missing
or its eager run failed, an export or graphlint raised); a truth measured
with another torch than this interpreter's. --record FILE writes every row's
signed errors into FILE (tests/fixtures/memory/matrix-recorded.json), keeping
each miss's cause ("why")."""

import argparse
import contextlib
import gc
import io
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings

import torch

# graphlint (python/) and the models (models/) come from PYTHONPATH (the
# CTest command sets it: `ctest -N -V -R MemoryMatrix`); the harnesses beside
# this script from its folder.
from graphlint._pt2 import export_pt2, record_python_frames
from graphlint.export import cli as export_cli
import memory_models as mm
from validate_memory import LiveStorages, storages_bytes
import recorded_errors

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

TOLERANCE = 0.03   # of the peak beyond the resident states, and of the total peak
PARITY = 0.02      # ONNX against FX: the same total peak
# The truth runs on the CPU: --kernels cpu makes the plan assume the CPU's
# kernels where they keep other tensors than CUDA's (dropout's noise tensor).
TRAIN = ["--train", "--optimizer", "adam", "--precision", "fp32", "--kernels", "cpu"]
MODES = ("inference", "train", "bf16", "ckpt")
# Every row's signed errors as last recorded from a real run, the misses with
# their cause (recorded_errors.py).
RECORDED_FILE = os.path.join(REPO, "tests", "fixtures", "memory", "matrix-recorded.json")


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
    errors = {"total": case["error_total"], "beyond": case["error_beyond"]}
    if training:
        # The peak before the optimizer step: activations and gradients, which
        # the step's peak hides when Adam's temporaries set it.
        fb = max(s["live_bytes"] for s in mem["timeline"] if s["phase"] in ("forward", "backward"))
        mfb = truth["fwd_bwd_peak"] - truth["resident"]
        case.update({"measured_fwd_bwd": mfb, "predicted_fwd_bwd": fb - resident,
                     "error_fwd_bwd": (fb - resident - mfb) / mfb if mfb > 0 else 0.0})
        errors["fwd_bwd"] = case["error_fwd_bwd"]
    case["errors"] = errors
    case["worst"] = max(errors.values(), key=abs)
    case["target"] = abs(case["worst"]) <= TOLERANCE
    return case


# (case, reason) of the configurations torch cannot run on this version
# (memory_models.NOT_RUNNABLE): listed in the report, never rows.
NOT_RUN = []


def run_case(a, exp, tmp, name, batch, mode, truth, layers_truth=None):
    """The cases of one (model, batch, mode): one per frontend that can write
    it. layers_truth: the measured whole-block checkpoint the `fx --recompute
    layer` column is compared with where it differs from the ckpt mode's."""
    tag = "%s_b%d_%s" % (name, batch, mode)
    out = []

    def add(frontend, fn, against=None):
        case = {"model": name, "batch": batch, "mode": mode, "frontend": frontend}
        why = mm.not_runnable(name, mode, torch.__version__, frontend)
        if why:
            NOT_RUN.append((case, why))
            return
        try:
            out.append(compare(case, against or truth, fn()))
        except Exception as e:  # noqa: BLE001 - a frontend that cannot write the model is a failed row, not a crash
            case.update({"error": "%s: %s" % (type(e).__name__, (str(e).strip().splitlines() or ["?"])[0][:160]),
                         "target": False})
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
    """ONNX against FX, the same model, batch and mode: one row per pair."""
    fx = {(c["model"], c["batch"], c["mode"]): c for c in cases if c["frontend"] == "fx" and "error" not in c}
    rows = []
    for c in cases:
        f = fx.get((c["model"], c["batch"], c["mode"]))
        if c["frontend"] != ONNX_FRONTEND or "error" in c or f is None:
            continue
        d = (c["predicted"] - f["predicted"]) / f["predicted"]
        rows.append({"model": c["model"], "batch": c["batch"], "mode": c["mode"], "frontend": ONNX_FRONTEND + " vs fx",
                     "fx": f["predicted"], "onnx": c["predicted"], "diff": d, "errors": {"diff": d}, "worst": d,
                     "target": abs(d) <= PARITY})
    return rows


def check(rows, recorded, target):
    """Sets each row's verdict ("ok", "why_failed") against its recorded errors."""
    for r in rows:
        r["recorded"] = recorded.get(recorded_errors.row_key(r))
        if "error" in r:
            r["ok"], r["why_failed"] = False, r["error"]
        else:
            r["ok"], r["why_failed"] = recorded_errors.verdict(r["errors"], r["recorded"], target)


MIB = 1024.0 * 1024.0


def recorded_text(r):
    """The row's worst recorded error, or '-' when it has none."""
    was = [v for k, v in (r.get("recorded") or {}).items() if k != "why"]
    return "%+.2f%%" % (100 * max(was, key=abs)) if was else "-"


def table(cases):
    """Every row: its signed errors (total peak, peak beyond the resident
    states, forward+backward peak beyond them), the worst of them, the worst
    recorded one, and the check's verdict."""
    lines = ["| model | batch | mode | frontend | peak: measured (MiB) | predicted | error | beyond resident:"
             " measured | predicted | error | fwd+bwd beyond resident: measured | predicted | error | worst |"
             " recorded | within 3% | check |",
             "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    for c in cases:
        verdict = "ok" if c.get("ok") else "**FAIL**"
        if "error" in c:
            lines.append("| %s | %d | %s | %s | %s |||||||||| - | **no** | %s |" % (
                c["model"], c["batch"], c["mode"], c["frontend"], c["error"], verdict))
            continue
        fb = ("%.2f | %.2f | %+.2f%%" % (c["measured_fwd_bwd"] / MIB, c["predicted_fwd_bwd"] / MIB,
                                         100 * c["error_fwd_bwd"]) if "error_fwd_bwd" in c else "| |")
        lines.append("| %s | %d | %s | %s | %.2f | %.2f | %+.2f%% | %.2f | %.2f | %+.2f%% | %s | %+.2f%% | %s | %s | %s |"
                     % (c["model"], c["batch"], c["mode"], c["frontend"], c["measured"] / MIB, c["predicted"] / MIB,
                        100 * c["error_total"], c["measured_beyond"] / MIB, c["predicted_beyond"] / MIB,
                        100 * c["error_beyond"], fb, 100 * c["worst"], recorded_text(c),
                        "yes" if c["target"] else "**no**", verdict))
    return "\n".join(lines)


def summary_table(cases):
    """docs/validation.md's form: one row per model and mode, one column per
    frontend, the case's worst error at each batch size (bold: outside 3%;
    "failed": no numbers, in the "(measurement)" column when the truth has none)."""
    fronts = [f for f in ("(truth)", "(measurement)", "fx", "onnx", "onnx dynamo", "onnx dynamo frames", ".pt2", ".pt2 strict", ".pt2 frames",
                          "fx --recompute layer", ".pt2 --recompute layer")
              if any(c["frontend"] == f for c in cases)]
    batches = sorted({c["batch"] for c in cases})
    cell, rows = {}, []
    for c in cases:
        if (c["model"], c["mode"]) not in rows:
            rows.append((c["model"], c["mode"]))
        if "error" in c:
            cell[(c["model"], c["mode"], c["frontend"], c["batch"])] = "**failed**"
            continue
        text = "%+.1f%%" % (100 * c["worst"])
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
    lines = ["| model | batch | mode | FX peak (MiB) | ONNX peak (MiB) | ONNX - FX | recorded | within 2% | check |",
             "|---|---:|---|---:|---:|---:|---:|---|---|"]
    for r in rows:
        lines.append("| %s | %d | %s | %.2f | %.2f | %+.2f%% | %s | %s | %s |" % (
            r["model"], r["batch"], r["mode"], r["fx"] / MIB, r["onnx"] / MIB, 100 * r["diff"], recorded_text(r),
            "yes" if r["target"] else "**no**", "ok" if r["ok"] else "**FAIL**"))
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--truth", required=True, help="the measured peaks (read; measured and written when missing)")
    ap.add_argument("--check", action="store_true", help="measure nothing; exit 1 when a row fails (recorded_errors.py)")
    ap.add_argument("--record", metavar="FILE", help="write every row's signed errors into FILE's section for this "
                    "truth (tests/fixtures/memory/matrix-recorded.json), keeping each miss's cause")
    ap.add_argument("--recorded", default=RECORDED_FILE, help="the recorded errors --check compares with")
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
        # A truth is checked on the torch it was measured with, or the test fails.
        print("memory_matrix: FAIL: %s was measured with torch %s, but %s has torch %s: its rows cannot be checked "
              "here (run it with torch %s, or measure it again without --check)" % (
                  a.truth, truth.get("torch"), sys.executable, torch.__version__, truth.get("torch")))
        return 1
    names = [n for n in mm.available(a.heldout, a.sdpa) if not a.only or n in a.only]
    cases = [{"model": n, "batch": b, "mode": "-", "frontend": "(truth)", "target": False,
              "error": "measured in %s, but %s cannot build it (a library is missing)" % (a.truth, sys.executable)}
             for n, b in unbuildable(truth, names, a)]
    exp = export_cli
    tmpdir = tempfile.TemporaryDirectory(prefix="memory-matrix-")
    tmp = a.out or tmpdir.name
    os.makedirs(tmp, exist_ok=True)
    t_all = time.time()
    for name in names:
        t0 = time.time()
        for batch in a.batches:
            for mode in a.modes:
                key = "%s/b%d/%s" % (name, batch, mode)
                why = mm.not_runnable(name, mode, torch.__version__)
                if why:
                    NOT_RUN.append(({"model": name, "batch": batch, "mode": mode, "frontend": "every frontend"}, why))
                    continue
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
                if key not in truth["cases"] or "error" in truth["cases"][key]:
                    cases.append({"model": name, "batch": batch, "mode": mode, "frontend": "(measurement)",
                                  "target": False, "error": truth["cases"].get(key, {}).get(
                                      "error", "no measured truth in %s" % a.truth)})
                    continue
                layers = truth["cases"].get(measured[-1]) if len(measured) > 1 else None
                if layers is not None and "error" in layers:
                    layers = None
                cases += run_case(a, exp, tmp, name, batch, mode, truth["cases"][key], layers)
        print("%s: %.1f s" % (name, time.time() - t0), file=sys.stderr, flush=True)
    pairs = parity(cases)
    truth_name = os.path.basename(a.truth)
    recorded = recorded_errors.load(a.recorded, truth_name)
    check(cases, recorded, TOLERANCE)
    check(pairs, recorded, PARITY)
    with open(os.path.join(tmp, "results.json"), "w") as f:
        json.dump({"torch": torch.__version__, "cases": cases, "parity": pairs}, f, indent=1, sort_keys=True)
    report(a, cases, pairs, time.time() - t_all)
    failed = [r for r in cases + pairs if "error" in r]
    if a.record:
        rows = [(recorded_errors.row_key(r), r["errors"], target)
                for group, target in ((cases, TOLERANCE), (pairs, PARITY)) for r in group if "error" not in r]
        command = "memory_matrix.py --truth %s --batches %s%s" % (
            truth_name, " ".join(map(str, a.batches)), "".join(" " + f for f in frontend_flags(a)))
        for key in recorded_errors.write(a.record, truth_name, torch.__version__, command, rows):
            print("recorded without a cause: %s (write its \"why\" in %s)" % (key, a.record))
        print("recorded %d rows in %s; %d rows without numbers were not recorded" % (len(rows), a.record, len(failed)))
        return 1 if failed else 0
    return 1 if a.check and any(not r["ok"] for r in cases + pairs) else 0


def unbuildable(truth, names, a):
    """(model, batch) of the truth's cases in this run's scope that this
    interpreter cannot build: their rows cannot be checked."""
    known = mm.SDPA if a.sdpa else mm.HELDOUT if a.heldout else mm.MODELS
    out = set()
    for k in truth["cases"]:
        name, b, mode = k.split("/")
        batch = int(b[1:])
        if (name in known and name not in names and (not a.only or name in a.only) and batch in a.batches
                and mode in a.modes):
            out.add((name, batch))
    return sorted(out)


def frontend_flags(a):
    return [f for f, on in (("--onnx", a.onnx), ("--pt2", a.pt2), ("--pt2-strict", a.pt2_strict),
                            ("--frames", a.frames), ("--heldout", a.heldout), ("--sdpa", a.sdpa)) if on]


def report(a, cases, pairs, seconds):
    """Every row with its signed errors, the headline over all rows, each
    miss with its cause and each failure with its reason."""
    print("Memory matrix, torch %s (%s), CPU; error of the total peak and of the peak beyond the resident states "
          "(parameters, buffers, inputs, Adam state), target %d%% (%.0f s):\n" % (
              torch.__version__, sys.executable, round(100 * TOLERANCE), seconds))
    print(table(cases))
    print("\nWorst error per case, batch %s (docs/validation.md):\n" % " / ".join(str(b) for b in a.batches))
    print(summary_table(cases))
    if pairs:
        print("\nONNX against FX, the same model: predicted total peak, target %d%%:\n" % round(100 * PARITY))
        print(parity_table(pairs))
    print()
    for r in cases + pairs:
        if not r["target"] and "error" not in r:
            print("miss: %s %+.2f%% (recorded %s): %s" % (recorded_errors.row_key(r), 100 * r["worst"],
                                                         recorded_text(r), (r.get("recorded") or {}).get(
                                                             "why", recorded_errors.UNEXPLAINED)))
    for case, why in NOT_RUN:
        print("not runnable (outside the matrix, not a row): %s b%d %s %s: %s" % (
            case["model"], case["batch"], case["mode"], case["frontend"], why))
    for r in cases + pairs:
        if not r["ok"]:
            print("FAIL: %s: %s" % (recorded_errors.row_key(r), r["why_failed"]))
    print("\n%d of %d rows within %d%% (misses and failed rows included)" % (
        sum(1 for c in cases if c["target"]), len(cases), round(100 * TOLERANCE)))
    if pairs:
        print("%d of %d ONNX-FX pairs within %d%%" % (sum(1 for p in pairs if p["target"]), len(pairs),
                                                      round(100 * PARITY)))
    print("rows failing the check: %d" % sum(1 for r in cases + pairs if not r["ok"]))


if __name__ == "__main__":
    rc = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(rc)
