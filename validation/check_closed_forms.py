#!/usr/bin/env python3
"""graphlint's memory plan against the closed forms (docs/validation.md
"Transformer layers against the closed forms"), on committed FX exports
(tests/fixtures/closed_forms: torch 2.13 and 1.13 fake capture, .pt2, ONNX):

1. saved activations per GPT layer (2-layer minus 1-layer stack,
   models/fx/gpt_layers.py: s=128, b=4, h=256, a=4) under bf16-mixed
   (16-bit activations, 1-byte masks) within 3% of Korthikanti et al. 2022:
   34sbh + 5as^2b with dropout, 32sbh + 2as^2b without;
2. model states of the 1.3B GPT (models/fx/gpt_1_3b.py) on 8 ranks, exactly
   the ZeRO paper's 2Psi weights / 2Psi grads / 12Psi optimizer, sharded per
   stage (16Psi, 4Psi + 12Psi/N, 2Psi + 14Psi/N, 16Psi/N), plus the causal
   mask buffers;
3. its ZeRO-0/2/3 peaks at batch 8 x seq 2048 on A100-80GB within 5% of the
   closed form derived in docs/validation.md, and GL201 (does not fit) for
   each, through every export path: FX from torch 2.13 and torch 1.13
   (*.torch113.fx.json), torch.export's .pt2, and the dynamo ONNX exporter
   (gpt_1_3b.onnx, models/export_meta_onnx.py).

usage: check_closed_forms.py --graphlint build/tools/graphlint
"""
import argparse
import json
import os
import subprocess
import sys

# The FX exports of each torch line graphlint-export supports (file suffix):
# torch 1.13 traces dropout as the CPU's bernoulli noise, costed as CUDA's
# one-byte mask.
TORCH_LINES = (("torch 2.13", ""), ("torch 1.13", ".torch113"))
FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "closed_forms")
GIB = 2.0 ** 30


def lint(graphlint, name, *args):
    out = subprocess.run([graphlint, os.path.join(FIX, name), "--format", "json", *args], capture_output=True, text=True)
    if out.returncode not in (0, 1):
        raise SystemExit(f"check_closed_forms: graphlint failed on {name}: {out.stderr.strip()}")
    return json.loads(out.stdout)["files"][0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--graphlint", required=True)
    g = ap.parse_args().graphlint
    failures = []

    def check(what, got, want, tol):
        err = got / want - 1
        ok = abs(err) <= tol
        print(f"{'ok  ' if ok else 'FAIL'} {what}: graphlint {got:,.0f}, closed form {want:,.0f}, {err:+.3%} (tolerance {tol:.0%})")
        if not ok:
            failures.append(what)

    s, b, h, a = 128, 4, 256, 4
    for torch, suffix in TORCH_LINES:
        for tag, closed in (("0.1", 34 * s * b * h + 5 * a * s * s * b), ("0.0", 32 * s * b * h + 2 * a * s * s * b)):
            act = [lint(g, f"gpt_layers_{n}_{tag}{suffix}.fx.json", "--train", "--precision",
                        "bf16-mixed")["memory"]["activations_bytes"] for n in (1, 2)]
            check(f"{torch}: saved activations per layer, dropout {tag}", act[1] - act[0], closed, 0.03)

    psi, n, L, s, b, h, a, v = 1315723264, 8, 24, 2048, 8, 2048, 16, 50257
    buffers = L * s * s * 4  # the fp32 causal masks, not trainable
    layers = L * (34 * s * b * h + 5 * a * s * s * b)
    # Outside the layers: the embedding's dropout mask (sbh), the final norm's
    # and the LM head's inputs (2sbh each), the saved log-softmax (2sbV) and,
    # at the peak (the loss's backward), its incoming and outgoing gradients
    # (2sbV each); no parameter gradient exists yet.
    tail = 5 * s * b * h + 6 * s * b * v
    for (torch, suffix), zero in ((line, zero) for line in TORCH_LINES for zero in (0, 1, 2, 3)):
        f = lint(g, f"gpt_1_3b{suffix}.fx.json", "--train", "--precision", "bf16-mixed", "--optimizer", "adam",
                 "--world-size", str(n), "--zero", str(zero), "--target", "A100-80GB")
        m = f["memory"]
        weights = 2 * psi / (n if zero == 3 else 1)
        grads = 2 * psi / (n if zero >= 2 else 1)
        optim = 12 * psi / (n if zero >= 1 else 1)
        states = m["params_bytes"] + m["grads_bytes"] + m["optimizer_bytes"]
        paper = {0: 16 * psi, 1: 4 * psi + 12 * psi / n, 2: 2 * psi + 14 * psi / n, 3: 16 * psi / n}[zero]
        check(f"{torch}: ZeRO-{zero} model states (ZeRO paper)", states, paper, 0.0)
        check(f"{torch}: ZeRO-{zero} weights", m["params_bytes"], weights, 0.0)
        check(f"{torch}: ZeRO-{zero} buffers (causal masks)", m["buffers_bytes"], buffers, 0.0)
        check(f"{torch}: ZeRO-{zero} gradients", m["grads_bytes"], grads, 0.0)
        check(f"{torch}: ZeRO-{zero} optimizer state", m["optimizer_bytes"], optim, 0.0)
        if zero == 1:
            continue
        closed = weights + buffers + optim + layers + tail
        check(f"{torch}: ZeRO-{zero} peak allocated ({m['peak_allocated_bytes'] / GIB:.2f} GiB)",
              m["peak_allocated_bytes"], closed, 0.05)
        gl201 = [d for d in f["diagnostics"] if d.get("code") == "GL201"]
        print(f"{'ok  ' if gl201 else 'FAIL'} {torch}: ZeRO-{zero} verdict: {'does not fit (GL201)' if gl201 else 'no GL201'}")
        if not gl201:
            failures.append(f"{torch}: ZeRO-{zero} verdict")
    # The same model through torch.export.save (forward graph on the meta
    # device, graphlint adds the backward; meta weights all share one storage
    # entry in the archive, which is no tie) and through the dynamo ONNX
    # exporter (train() on the meta device, weights stripped:
    # models/export_meta_onnx.py): the same verdict, the same trainable
    # parameters, and the peak within 5% of the same closed form.
    for (path, name), zero in ((p, zero) for p in (("gpt_1_3b.pt2", ".pt2"), ("gpt_1_3b.onnx", "ONNX"))
                               for zero in (0, 2, 3)):
        f = lint(g, path, "--train", "--precision", "bf16-mixed", "--optimizer", "adam",
                 "--world-size", str(n), "--zero", str(zero), "--target", "A100-80GB")
        m = f["memory"]
        check(f"{name} ZeRO-{zero} gradients", m["grads_bytes"], 2 * psi / (n if zero >= 2 else 1), 0.0)
        check(f"{name} ZeRO-{zero} optimizer state", m["optimizer_bytes"], 12 * psi / (n if zero >= 1 else 1), 0.0)
        weights = 2 * psi / (n if zero == 3 else 1)
        optim = 12 * psi / (n if zero >= 1 else 1)
        check(f"{name} ZeRO-{zero} peak allocated ({m['peak_allocated_bytes'] / GIB:.2f} GiB)", m["peak_allocated_bytes"],
              weights + buffers + optim + layers + tail, 0.05)
        gl201 = [d for d in f["diagnostics"] if d.get("code") == "GL201"]
        print(f"{'ok  ' if gl201 else 'FAIL'} {name} ZeRO-{zero} verdict: "
              f"{'does not fit (GL201)' if gl201 else 'no GL201'}, peak {m['peak_allocated_bytes'] / GIB:.2f} GiB")
        if not gl201:
            failures.append(f"{name} ZeRO-{zero} verdict")
    if failures:
        print("FAILED: " + "; ".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
