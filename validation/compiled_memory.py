#!/usr/bin/env python3
"""Compiled vs eager memory on the CPU (issue 41 item 8): the measured peak of
one inference pass and of one training step's forward + backward, eager and
under torch.compile(backend="inductor"), against graphlint's prediction with
--backend eager and --backend inductor-cpu (docs/validation.md "Memory:
compiled vs eager").

  PY validation/compiled_memory.py [--only NAME ...] [--batch B] [--graphlint BIN] [--check] [--json OUT]

Truth. validate_memory.py's LiveStorages samples live storages at every aten
op through a dispatch mode, which Inductor's generated kernels never enter, so
both modes are measured the same other way: the CPU allocator's [memory]
events under torch.profiler.profile(profile_memory=True), summed in time
order (validate_memory.allocations_peak); the high-water mark over the
profiled call is the peak beyond what was allocated before it (parameters,
buffers, inputs). Each run is warmed up first (compilation, autotuning) and
the gradients are set to None before the measured step, as
zero_grad(set_to_none=True) leaves them. For eager, the same case is also
measured with LiveStorages, and the two truths are printed side by side (they
agree to the byte where no fused fast path is involved).

Prediction. The model is captured with graphlint-export (the forward graph
for inference, the joint --train graph for training) and linted with
--kernels cpu --train --optimizer sgd --precision fp32 (no optimizer step is
measured), once with --backend eager and once with --backend inductor-cpu.
The figure compared is the peak of the forward and backward beyond the
resident parameters and inputs.

Nothing here is tuned: CASES are the models as memory_models.py builds them
(plus MLP below, the small case the CTest runs); `--check` fails when a
prediction misses its measured truth by more than TOLERANCE, or when the
predicted order (compiled below or at eager) differs from the measured one."""

import argparse
import contextlib
import gc
import io
import json
import os
import subprocess
import sys
import tempfile
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

TOLERANCE = 0.10  # of the measured peak beyond the resident states


def missing_torch():
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if not hasattr(torch, "compile"):
        return "torch %s has no torch.compile" % torch.__version__
    return None


def build(name, batch):
    import torch
    import torch.nn as nn
    torch.manual_seed(0)
    if name == "mlp":
        class MLP(nn.Module):
            """Two pre-norm residual MLP blocks (LayerNorm, Linear, GELU,
            Linear): what fuses is the residual adds and GELU epilogues."""

            def __init__(self, d=256, h=1024, n=2):
                super().__init__()
                self.layers = nn.ModuleList(nn.Sequential(nn.LayerNorm(d), nn.Linear(d, h), nn.GELU(),
                                                          nn.Linear(h, d)) for _ in range(n))

            def forward(self, x):
                for layer in self.layers:
                    x = x + layer(x)
                return x
        return MLP(), (torch.randn(batch, 64, 256),)
    if name == "swiglu":
        class SwiGLU(nn.Module):
            """A Llama-style gated MLP block with an RMSNorm written out in
            pointwise ops: silu(gate) * up, whose silu output eager saves and
            the partitioner recomputes."""

            def __init__(self, d=256, h=768, n=2):
                super().__init__()
                self.gate = nn.ModuleList(nn.Linear(d, h, bias=False) for _ in range(n))
                self.up = nn.ModuleList(nn.Linear(d, h, bias=False) for _ in range(n))
                self.down = nn.ModuleList(nn.Linear(h, d, bias=False) for _ in range(n))
                self.norm = nn.ParameterList(nn.Parameter(torch.ones(d)) for _ in range(n))

            def forward(self, x):
                for g, u, dn, w in zip(self.gate, self.up, self.down, self.norm):
                    h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
                    x = x + dn(torch.nn.functional.silu(g(h)) * u(h))
                return x
        return SwiGLU(), (torch.randn(batch, 64, 256),)
    import memory_models as mm
    model, inputs, _ = mm.model(name)[0](batch)
    return model, inputs


CASES = ("mlp", "swiglu", "gpt_tiny")


def measure(name, batch, compiled):
    """{"inference": bytes, "train": bytes}: peaks beyond what was allocated
    before the measured call."""
    import torch
    from validate_memory import allocations_peak
    model, inputs = build(name, batch)
    out = {}
    model.train()
    f = torch.compile(model, backend="inductor") if compiled else model

    def fwd_bwd():
        y = f(*inputs)
        y.backward(torch.ones_like(y))

    for _ in range(2):  # compile, then the steady state
        fwd_bwd()
        for p in model.parameters():
            p.grad = None
    gc.collect()
    _, out["train"] = allocations_peak(fwd_bwd)
    for p in model.parameters():
        p.grad = None
    model.eval()
    g = torch.compile(model, backend="inductor") if compiled else model

    def infer():
        with torch.no_grad():
            g(*inputs)

    for _ in range(2):
        infer()
    gc.collect()
    _, out["inference"] = allocations_peak(infer)
    if not compiled:
        out.update(live_storages(name, batch))
    return out


def live_storages(name, batch):
    """The eager truth of validate_memory.py (LiveStorages), beyond the
    resident states, for the agreement check of the profiler's truth."""
    import torch
    from validate_memory import LiveStorages
    model, inputs = build(name, batch)
    model.train()
    live = LiveStorages()
    y = model(*inputs)
    y.backward(torch.ones_like(y))
    del y
    for p in model.parameters():
        p.grad = None
    gc.collect()
    live.track(list(model.parameters()) + list(model.buffers()) + list(inputs))
    live.sample("start")
    with live:
        y = model(*inputs)
        y.backward(torch.ones_like(y))
        del y
    train = live.peak - live.samples[0][1]
    model.eval()
    live = LiveStorages()
    with torch.no_grad():
        live.track(list(model.parameters()) + list(model.buffers()) + list(inputs))
        live.sample("start")
        with live:
            y = model(*inputs)
            del y
    return {"train_livestorages": train, "inference_livestorages": live.peak - live.samples[0][1]}


def exporter():
    """graphlint's exporter (imports torch: after missing_torch says it is there)."""
    from graphlint.export import cli
    return cli


def predict(graphlint, exp, name, batch, tmp):
    """{(mode, backend): predicted peak beyond resident} for the two modes and
    the two backends."""
    out = {}
    for mode in ("inference", "train"):
        model, inputs = build(name, batch)
        path = os.path.join(tmp, "%s-%d-%s.json" % (name, batch, mode))
        with contextlib.redirect_stderr(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exp.export_module(model, inputs, path, train=mode == "train")
        for backend in ("eager", "inductor-cpu"):
            extra = ["--kernels", "cpu", "--backend", backend]
            if mode == "train":
                extra += ["--train", "--optimizer", "sgd", "--precision", "fp32"]
            r = subprocess.run([graphlint, "--format", "json", "--exit-zero"] + extra + [path],
                               capture_output=True, text=True)
            if r.returncode != 0:
                raise RuntimeError("graphlint failed on %s: %s" % (path, r.stderr.strip()[-400:]))
            mem = json.loads(r.stdout)["files"][0]["memory"]
            resident = mem["params_bytes"] + mem.get("buffers_bytes", 0) + mem["inputs_bytes"] + mem["optimizer_bytes"]
            peak = max(p["live_bytes"] for p in mem["timeline"] if p["phase"] in ("forward", "backward"))
            out[(mode, backend)] = {"beyond": peak - resident, "execution": mem["execution"],
                                    "fused_away": mem.get("compiled", {}).get("fused_away_bytes", 0),
                                    "recomputed": mem.get("compiled", {}).get("recomputed_bytes", 0)}
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="*", default=list(CASES), help="these cases only (%s)" % ", ".join(CASES))
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--graphlint", default=os.path.join(REPO, "build", "tools", "graphlint"))
    ap.add_argument("--check", action="store_true", help="exit 1 when a case misses TOLERANCE or the order")
    ap.add_argument("--json", help="write the rows here")
    a = ap.parse_args(argv)
    why = missing_torch()
    if why:
        print("SKIP: compiled_memory: %s" % why)
        return 77
    exp = exporter()
    rows, bad = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.only:
            eager = measure(name, a.batch, compiled=False)
            comp = measure(name, a.batch, compiled=True)
            pred = predict(a.graphlint, exp, name, a.batch, tmp)
            for mode in ("inference", "train"):
                row = {"model": name, "batch": a.batch, "mode": mode,
                       "livestorages_eager": eager[mode + "_livestorages"],
                       "measured_eager": eager[mode], "measured_compiled": comp[mode],
                       "predicted_eager": pred[(mode, "eager")]["beyond"],
                       "predicted_compiled": pred[(mode, "inductor-cpu")]["beyond"],
                       "fused_away_bytes": pred[(mode, "inductor-cpu")]["fused_away"],
                       "recomputed_bytes": pred[(mode, "inductor-cpu")]["recomputed"]}
                row["error_eager"] = (row["predicted_eager"] - row["measured_eager"]) / row["measured_eager"]
                row["error_compiled"] = (row["predicted_compiled"] - row["measured_compiled"]) / \
                    row["measured_compiled"]
                measured_order = row["measured_compiled"] <= row["measured_eager"]
                predicted_order = row["predicted_compiled"] <= row["predicted_eager"]
                row["order_ok"] = measured_order == predicted_order
                row["ok"] = row["order_ok"] and max(abs(row["error_eager"]), abs(row["error_compiled"])) <= TOLERANCE
                rows.append(row)
                if not row["ok"]:
                    bad.append(row)
    print("| model | batch | mode | eager: LiveStorages | eager: profiler | eager: predicted | err | "
          "compiled: profiler | compiled: predicted | err |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %s | %d | %s | %d | %d | %d | %+.1f%% | %d | %d | %+.1f%% |" % (
            r["model"], r["batch"], r["mode"], r["livestorages_eager"], r["measured_eager"], r["predicted_eager"],
            100 * r["error_eager"], r["measured_compiled"], r["predicted_compiled"], 100 * r["error_compiled"]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    if a.check and bad:
        for r in bad:
            print("MISS: %s %s: eager %+.1f%%, compiled %+.1f%%, order %s" % (
                r["model"], r["mode"], 100 * r["error_eager"], 100 * r["error_compiled"],
                "ok" if r["order_ok"] else "WRONG"))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
