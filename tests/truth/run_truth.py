#!/usr/bin/env python3
"""The truth set: graphlint's in-place and host-sync rules against execution.

For every pattern of tests/truth/patterns.py, on the torch line of the Python
running this file:

- **raises** (the truth for GL132): the module runs eagerly, forward and
  backward, on real tensors; true when autograd raises "modified by an
  inplace operation".
- **observable aliasing** (the truth for GL131): the forward runs twice under
  no_grad, as written and in its functional version, where every in-place
  write goes to a fresh copy that only the written name sees from then on
  (a TorchDispatchMode clones each mutated argument, runs the op on the clone
  and `set_`s the written tensor onto it, so other views keep the old
  contents); true when an output differs, or a view of an input or a
  parameter taken before the call differs afterwards (the caller sees the
  write). Buffers updated in place (BatchNorm's running statistics) are the
  module's own state, not aliasing, and are not compared.
- **sync** (the truth for GL112): the forward runs under a dispatch mode that
  records every op that hands tensor values to the host (`.item()`, `bool`,
  nonzero, masked_select, unique, boolean-mask indexing) and Tensor.tolist /
  numpy / __repr__ (print) at the Python level; true when one ran.

Then each pattern is exported with graphlint-export --train (in-process, the
Python API's entry) and linted with graphlint; a pattern is flagged by a rule
when graphlint reports that rule's code on it. Prints a table per rule
(precision, recall) and exits 1 when an error-severity finding is on a pattern
whose truth is false (error precision below 100%) or GL132's recall is below
95%.

    run_truth.py [--graphlint PATH] [--json OUT] [--markdown] [-k SUBSTRING]
"""
import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile

import torch
from torch.utils import _pytree as pytree
from torch.utils._python_dispatch import TorchDispatchMode

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
import patterns as P  # noqa: E402   (beside this script)
from graphlint.export import cli as exporter  # noqa: E402   (the package, from PYTHONPATH: tests/CMakeLists.txt)

INPLACE_ERROR = "modified by an inplace operation"


def build(name):
    torch.manual_seed(0)
    m = P.Base(P.PATTERNS[name])
    m.train()
    return m


def run_quiet(fn):
    with contextlib.redirect_stdout(io.StringIO()):
        return fn()


# --------------------------------------------------------------------------
# Truth 1: does eager forward + backward raise?
# --------------------------------------------------------------------------

def raises(name):
    m = build(name)
    (x,) = P.inputs(name)
    try:
        out = run_quiet(lambda: m(x))
        out.backward()
    except RuntimeError as e:
        if INPLACE_ERROR in str(e):
            return True
        raise
    return False


# --------------------------------------------------------------------------
# Truth 2: does a result differ from the functional version?
# --------------------------------------------------------------------------

def _written_args(func):
    schema = getattr(func, "_schema", None)
    if schema is None:
        return []
    return [(i, a.name) for i, a in enumerate(schema.arguments) if a.alias_info is not None and a.alias_info.is_write]


class Functional(TorchDispatchMode):
    """Each in-place / out= write lands in a fresh copy the written tensor is
    rebound to (set_), so no other view of the old storage sees it."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        written = _written_args(func)
        if not written:
            return func(*args, **kwargs)
        args = list(args)
        swaps = []
        for i, arg_name in written:
            if i < len(args):
                t = args[i]
                if isinstance(t, torch.Tensor):
                    c = t.clone()
                    args[i] = c
                    swaps.append((t, c))
            elif isinstance(kwargs.get(arg_name), torch.Tensor):
                t = kwargs[arg_name]
                c = t.clone()
                kwargs[arg_name] = c
                swaps.append((t, c))
        out = func(*args, **kwargs)
        for t, c in swaps:
            t.set_(c)
        back = {id(c): t for t, c in swaps}
        return pytree.tree_map(lambda o: back.get(id(o), o) if isinstance(o, torch.Tensor) else o, out)


def _forward_no_grad(name, functional):
    m = build(name)
    (x,) = P.inputs(name)
    caller = [x.view_as(x)] + [p.view_as(p) for p in m.parameters()]
    torch.manual_seed(1)
    with torch.no_grad():
        mode = Functional() if functional else contextlib.nullcontext()
        with mode:
            out = run_quiet(lambda: m(x))
    return [o.clone() for o in pytree.tree_flatten(out)[0] if isinstance(o, torch.Tensor)], [c.clone() for c in caller]


def observable(name):
    out_a, caller_a = _forward_no_grad(name, False)
    out_b, caller_b = _forward_no_grad(name, True)
    same = all(torch.equal(a, b) for a, b in zip(out_a, out_b)) and len(out_a) == len(out_b)
    same = same and all(torch.equal(a, b) for a, b in zip(caller_a, caller_b))
    return not same


# --------------------------------------------------------------------------
# Truth 3: does a host sync happen?
# --------------------------------------------------------------------------

SYNC_OPS = {"_local_scalar_dense", "is_nonzero", "equal", "nonzero", "argwhere", "masked_select", "_unique",
            "_unique2", "unique_dim", "unique_consecutive", "unique_dim_consecutive"}


class SyncRecorder(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.syncs = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = func.overloadpacket.__name__
        if name in SYNC_OPS:
            self.syncs.append(name)
        elif name in ("index", "index_put", "index_put_") and len(args) > 1:
            if any(isinstance(i, torch.Tensor) and i.dtype in (torch.bool, torch.uint8) for i in args[1]):
                self.syncs.append(f"{name} (boolean mask)")
        elif name == "repeat_interleave" and kwargs.get("output_size") is None and isinstance(args[0], torch.Tensor) \
                and len(args) == 1:
            self.syncs.append(name)
        return func(*args, **kwargs)


def syncs(name):
    m = build(name)
    (x,) = P.inputs(name)
    rec = SyncRecorder()
    host = []
    originals = {k: getattr(torch.Tensor, k) for k in ("tolist", "numpy", "__repr__")}

    def patched(k):
        def f(self, *a, **kw):
            host.append(k)
            return originals[k](self, *a, **kw)
        return f

    for k in originals:
        setattr(torch.Tensor, k, patched(k))
    try:
        with rec:
            run_quiet(lambda: m(x))
    finally:
        for k, f in originals.items():
            setattr(torch.Tensor, k, f)
    return bool(rec.syncs or host)


# --------------------------------------------------------------------------
# Export and lint
# --------------------------------------------------------------------------

def export_all(names, out_dir):
    exp = exporter
    files, failures = {}, {}
    for name in names:
        path = os.path.join(out_dir, f"{name}.fx.json")
        try:
            run_quiet(lambda: exp.export_module(build(name), P.inputs(name), path, train=True,
                                                model_file=P.__file__))
            files[name] = path
        except Exception as e:  # an export failure is a miss for every rule, reported
            failures[name] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    return files, failures


def lint(graphlint, files):
    """{name: [diagnostic]} from one graphlint run over every file."""
    if not files:
        return {}
    names = list(files)
    p = subprocess.run([graphlint, "--no-color", "--format", "json"] + [files[n] for n in names],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode not in (0, 1):
        raise SystemExit(f"graphlint failed (exit {p.returncode}): {p.stderr.strip()}")
    doc = json.loads(p.stdout)
    by_path = {os.path.realpath(f["path"] if "path" in f else f.get("file", "")): f.get("diagnostics", [])
               for f in doc["files"]}
    return {n: by_path.get(os.path.realpath(files[n]), []) for n in names}


RULES = [("GL132", "raises"), ("GL131", "observable"), ("GL112", "sync")]


def score(rows, code, truth_key, errors_only=False):
    tp = fp = fn = tn = 0
    for r in rows:
        flagged = any(d["code"] == code and (not errors_only or d["severity"] == "error") for d in r["diagnostics"])
        truth = r[truth_key]
        tp += flagged and truth
        fp += flagged and not truth
        fn += truth and not flagged
        tn += not truth and not flagged
    return tp, fp, fn, tn


def pct(a, b):
    return f"{100.0 * a / b:.1f}%" if b else "n/a"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graphlint", default=os.environ.get("GRAPHLINT_CLI",
                                                          os.path.join(ROOT, "build", "tools", "graphlint")))
    ap.add_argument("--json", help="write the per-pattern results here")
    ap.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    ap.add_argument("-k", help="only patterns whose name contains this")
    ap.add_argument("--keep", help="export into this folder (kept) instead of a temporary one")
    args = ap.parse_args()
    names = [n for n in P.PATTERNS if not args.k or args.k in n]
    rows = []
    for n in names:
        rows.append({"pattern": n, "raises": raises(n), "observable": observable(n), "sync": syncs(n)})
    out_dir = args.keep or tempfile.mkdtemp(prefix="graphlint-truth-")
    os.makedirs(out_dir, exist_ok=True)
    files, failures = export_all(names, out_dir)
    diags = lint(args.graphlint, files)
    for r in rows:
        r["export_error"] = failures.get(r["pattern"])
        phases = {}
        if r["pattern"] in files:
            with open(files[r["pattern"]]) as f:
                phases = {n["name"]: n.get("phase", "forward") for n in json.load(f)["nodes"]}
        r["diagnostics"] = [{"code": d["code"], "severity": d["severity"], "message": d["message"],
                             "line": ((d.get("location") or {}).get("source") or {}).get("line"),
                             "phase": phases.get((d.get("location") or {}).get("node"), "forward")}
                            for d in diags.get(r["pattern"], [])]
    torch_line = f"torch {torch.__version__}"
    print(f"truth set: {len(rows)} patterns on {torch_line}; "
          f"{sum(r['raises'] for r in rows)} raise in backward, {sum(r['observable'] for r in rows)} have observable "
          f"aliasing, {sum(r['sync'] for r in rows)} sync; {len(failures)} export failure(s)")
    sep = "|" if args.markdown else " "
    print(f"{sep} rule {sep} truth {sep} TP {sep} FP {sep} FN {sep} TN {sep} precision {sep} recall {sep}")
    if args.markdown:
        print("|---|---|---|---|---|---|---|---|")
    for code, key in RULES:
        tp, fp, fn, tn = score(rows, code, key)
        print(f"{sep} {code} {sep} {key} {sep} {tp} {sep} {fp} {sep} {fn} {sep} {tn} {sep} {pct(tp, tp + fp)} {sep} "
              f"{pct(tp, tp + fn)} {sep}")
    etp, efp, efn, _ = score(rows, "GL132", "raises", errors_only=True)
    error_fp = [r["pattern"] for r in rows
                if any(d["severity"] == "error" for d in r["diagnostics"]) and not r["raises"]]
    print(f"error severity: {sum(1 for r in rows if any(d['severity'] == 'error' for d in r['diagnostics']))} "
          f"pattern(s) with an error, {len(error_fp)} of them do not raise (precision "
          f"{pct(etp, etp + len(error_fp))}); GL132 errors recall {pct(etp, etp + efn)}")
    backward = [f"{r['pattern']} ({d['code']})" for r in rows for d in r["diagnostics"]
                if d["code"] in ("GL131", "GL132") and d["phase"] == "backward"]
    print(f"in-place findings on backward-pass (autograd's) nodes: {len(backward)}")
    print("\nper pattern (R raises, A observable aliasing, S sync; graphlint's codes, * = error):")
    for r in rows:
        truth = "".join(c if r[k] else "." for c, k in (("R", "raises"), ("A", "observable"), ("S", "sync")))
        codes = sorted({d["code"] + ("*" if d["severity"] == "error" else "") for d in r["diagnostics"]
                        if d["code"] in ("GL131", "GL132", "GL112") or d["severity"] == "error"})
        wrong = []
        for code, key in RULES:
            flagged = any(d["code"] == code for d in r["diagnostics"])
            if flagged != r[key]:
                wrong.append(f"{'false' if flagged else 'missed'} {code}")
        note = f"  export failed: {r['export_error']}" if r["export_error"] else ""
        print(f"  {r['pattern']:<32} {truth}  {' '.join(codes) or '-':<24} {', '.join(wrong)}{note}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"torch": torch.__version__, "patterns": rows}, f, indent=1, sort_keys=True)
    failed = []
    if error_fp:
        failed.append(f"error-severity findings on patterns that do not raise: {', '.join(error_fp)}")
    if etp + efn and etp / (etp + efn) < 0.95:
        failed.append(f"GL132 recall {pct(etp, etp + efn)} is below 95%")
    if backward:
        failed.append(f"in-place findings on autograd's backward nodes: {', '.join(backward)}")
    if not args.k and len(P.PATTERNS) < 40:
        failed.append("the truth set has fewer than 40 patterns")
    for f in failed:
        print(f"FAIL: {f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
