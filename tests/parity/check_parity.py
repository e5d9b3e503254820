#!/usr/bin/env python3
"""ONNX-vs-FX rule parity (issue 13): the same model, exported through
torch.onnx.export and through graphlint-export, linted with the same setup,
must raise the same rule codes for every rule both formats can express.

Usage: check_parity.py --graphlint BIN --out DIR [--case NAME ...]

For each case of parity_models.CASES:
  * ONNX: torch.onnx.export in eval() with the `batch` symbol a dynamic axis
    (opset 17, no constant folding, so a cast chain is not folded away);
  * FX: graphlint-export --model parity_models:FACTORY --input ... (fake capture;
    --train when the setup is a training step);
  * both linted with `graphlint --format json -D batch=N FLAGS`.
It prints a table (case, expected, ONNX codes, FX codes) and exits 1 when the
two sets differ over COMPARABLE or an expected code is missing from either.

A case with `onnx_exporter="dynamo"` (torch.cond: GL121) is exported with
torch.onnx.export(dynamo=True), which needs torch 2.x; on torch 1.13 it is
skipped and said so.

Rules left out of COMPARABLE, and why: GL111 (devices: an ONNX graph has none),
GL131/GL132 (in-place writes: ONNX has no in-place ops), GL001-GL005 (file
validity and suppressions: about the file, not the model), GL122 (If branch
mismatch: ONNX-only), GL203 (allocator fragmentation: the ONNX export of an
eval() model and the joint FX graph schedule the same tensors in different
orders, so the simulated segments differ; the allocated peak is compared by
the memory validation instead).
"""
import argparse
import contextlib
import io
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

import torch  # noqa: E402

import parity_models  # noqa: E402   (beside this script)
from graphlint.export import cli as EXPORT  # noqa: E402   (the package, from PYTHONPATH: tests/CMakeLists.txt)

COMPARABLE = ["GL101", "GL102", "GL112", "GL121", "GL123", "GL141", "GL142",
              "GL201", "GL202", "GL301", "GL302"]

DTYPE_NAMES = {torch.float32: "float32", torch.int64: "int64"}


def export_onnx(case, path):
    model = case["factory"]().eval()
    args = tuple(torch.randn(*[case["export_dims"].get(d, d) for d in dims]).to(dtype)
                 for _, dtype, dims in case["inputs"])
    names = [name for name, _, _ in case["inputs"]]
    dynamic = {name: {i: d for i, d in enumerate(dims) if isinstance(d, str)}
               for name, _, dims in case["inputs"]}
    if case.get("onnx_exporter") == "dynamo":
        shapes = tuple({i: torch.export.Dim(d) for i, d in enumerate(dims) if isinstance(d, str)}
                       for _, _, dims in case["inputs"])
        torch.onnx.export(model, args, path, input_names=names, dynamo=True, dynamic_shapes=shapes,
                          verbose=False)
        return
    kwargs = dict(input_names=names, output_names=["out"], dynamic_axes=dynamic,
                  opset_version=17, do_constant_folding=False)
    if "dynamo" in torch.onnx.export.__code__.co_varnames:
        kwargs["dynamo"] = False  # the TorchScript exporter: the same on both torch lines
    with torch.no_grad():
        torch.onnx.export(model, args, path, **kwargs)


def export_fx(case, path, train):
    """graphlint-export's main in this process (torch is imported once)."""
    args = ["--model", "parity_models:" + case["factory"].__name__, "-o", path]
    for iname, dtype, dims in case["inputs"]:
        args += ["--input", "%s:%s[%s]" % (iname, DTYPE_NAMES[dtype], ",".join(str(d) for d in dims))]
    for sym, size in case["export_dims"].items():
        args += ["--dim", "%s=%d" % (sym, size)]
    if train:
        args.append("--train")
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            rc = EXPORT.main(args)
    except SystemExit as e:
        rc = e.code
    if rc not in (0, None):
        sys.exit("check_parity: graphlint-export %s failed (exit %s):\n%s" % (" ".join(args), rc, err.getvalue()))


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit("check_parity: %s failed (exit %d):\n%s%s" % (" ".join(cmd), p.returncode, p.stdout, p.stderr))
    return p.stdout


def lint(graphlint, path, case):
    cmd = [graphlint, "--format", "json", "--exit-zero", "--no-group", path] + case["flags"]
    for sym, size in case["lint_dims"].items():
        cmd += ["-D", "%s=%d" % (sym, size)]
    report = json.loads(run(cmd))
    codes = set()
    for f in report["files"]:
        for d in f.get("diagnostics", []):
            codes.add(d["code"])
    return codes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--graphlint", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--case", action="append")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    names = a.case or list(parity_models.CASES)
    failures = []
    rows = []
    torch2 = int(torch.__version__.split(".")[0]) >= 2
    for name in names:
        case = parity_models.CASES[name]
        if case.get("onnx_exporter") == "dynamo" and not torch2:
            rows.append((name, case["expect"], None, None, True))
            continue
        train = "--train" in case["flags"]
        onnx_path = os.path.join(a.out, name + ".onnx")
        fx_path = os.path.join(a.out, name + (".train" if train else "") + ".fx.json")
        export_onnx(case, onnx_path)
        export_fx(case, fx_path, train)
        onnx_codes = lint(a.graphlint, onnx_path, case) & set(COMPARABLE)
        fx_codes = lint(a.graphlint, fx_path, case) & set(COMPARABLE)
        ok = onnx_codes == fx_codes and set(case["expect"]) <= onnx_codes
        rows.append((name, case["expect"], sorted(onnx_codes), sorted(fx_codes), ok))
        if not ok:
            failures.append(name)
    print("torch %s: rule parity over %s" % (torch.__version__, ", ".join(COMPARABLE)))
    print("| case | expected | ONNX | FX | same |")
    print("|---|---|---|---|---|")
    for name, expect, onnx_codes, fx_codes, ok in rows:
        if onnx_codes is None:
            print("| %s | %s | skipped: the dynamo ONNX exporter needs torch 2.x | | |" % (name, " ".join(expect)))
            continue
        print("| %s | %s | %s | %s | %s |" % (name, " ".join(expect), " ".join(onnx_codes) or "none",
                                             " ".join(fx_codes) or "none", "yes" if ok else "**no**"))
    if failures:
        print("check_parity: differ or miss an expected code: " + ", ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
