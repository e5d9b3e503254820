#!/usr/bin/env python3
"""Captures every model of models/capture_corpus.py with graphlint-export on
each torch line it runs on, forward and --train, as whole processes: wall
time, CPU time and peak RSS (os.wait4 on the child), node counts, the exact
parameter count (against sum(p.numel()) computed in a separate process) and
graphlint's findings on the export. Writes JSON lines and a Markdown table
(docs/validation.md).

    bench/run_capture_corpus.py [--only gpt2,llama_7b] [--out DIR] [--modes forward,train]
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "models"))
from capture_corpus import CORPUS  # noqa: E402

# The exporter package (python/graphlint/export) of this checkout, whichever
# interpreter runs it: the child's PYTHONPATH names python/ (EXPORT_ENV).
EXPORTER = ["-m", "graphlint.export"]
EXPORT_ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(
    p for p in (os.path.join(ROOT, "python"), os.environ.get("PYTHONPATH")) if p))
LINES = {
    "1.13": os.environ.get("GRAPHLINT_TORCH113_PYTHON", "/usr/bin/python3"),
    "venv": os.environ.get("GRAPHLINT_TORCH2_PYTHON", os.path.join(ROOT, "build", "venv", "bin", "python")),
    "vision": os.environ.get("GRAPHLINT_TORCH2_VISION_PYTHON",
                             os.path.join(ROOT, "build", "venv-vision", "bin", "python")),
}
GRAPHLINT = os.environ.get("GRAPHLINT_CLI", os.path.join(ROOT, "build", "tools", "graphlint"))


def run_measured(argv, cwd, timeout=1800):
    """(returncode, stderr, wall s, cpu s, peak RSS MiB) of one child process."""
    start = time.perf_counter()
    p = subprocess.Popen(argv, cwd=cwd, env=EXPORT_ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    return p.returncode, err, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def reference_params(python, name):
    """sum(p.numel() for p in model.parameters()) of the module built on the
    meta device by plain torch (torch 2.x) or for real (torch 1.13), in its
    own process: the truth the export's count is checked against."""
    code = (f"import sys, torch; sys.path.insert(0, {os.path.join(ROOT, 'models')!r}); import capture_corpus as c\n"
            f"try:\n"
            f"    with torch.device('meta'):\n"
            f"        m = c.{name}()\n"
            f"except Exception:\n"
            f"    m = c.{name}()\n"
            f"print(sum(p.numel() for p in m.parameters()))\n")
    out = subprocess.run([python, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return int(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 else None


def findings(path):
    if not os.access(GRAPHLINT, os.X_OK):
        return None
    p = subprocess.run([GRAPHLINT, "--no-color", "--format", "json", path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        return {"error": (p.stdout or p.stderr).strip().splitlines()[0] if (p.stdout or p.stderr).strip() else "?"}
    counts = {}
    for f in doc.get("files", [doc])[0].get("diagnostics", []):
        counts[f["code"]] = counts.get(f["code"], 0) + 1
        if f.get("severity") == "error":   # error-severity findings, the CI gate's count
            counts["errors"] = counts.get("errors", 0) + 1
    return counts


def capture(name, line, mode, out_dir):
    lines, inputs, dims = CORPUS[name]
    python = LINES[line]
    out = os.path.join(out_dir, f"{name}.{line}.{mode}.fx.json")
    argv = [python, *EXPORTER, "--model", f"capture_corpus:{name}", "-o", out]
    for spec in inputs:
        argv += ["--input", spec]
    for k, v in dims.items():
        argv += ["--dim", f"{k}={v}"]
    if mode == "train":
        argv.append("--train")
    rc, err, wall, cpu, rss = run_measured(argv, os.path.join(ROOT, "models"))
    row = {"model": name, "line": line, "mode": mode, "rc": rc, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
           "rss_mib": round(rss), "dims": dims}
    if rc != 0:
        row["error"] = err.strip().splitlines()[-1] if err.strip() else f"exit {rc}"
        return row
    with open(out) as f:
        doc = json.load(f)
    row["torch"] = doc["producer"]["torch"]
    row["nodes"] = len(doc["nodes"])
    row["backward_nodes"] = sum(1 for n in doc["nodes"] if n.get("phase") == "backward")
    row["params"] = sum(_numel(p["shape"]) for p in doc["params"] if p["kind"] == "parameter")
    row["saved"] = sum(sum(n.get("saved", [])) for n in doc["nodes"])
    row["symbolic_dims"] = sum(1 for n in doc["nodes"] for o in n["outputs"] for d in o.get("shape", [])
                               if isinstance(d, str))
    row["diagnostics"] = [d["kind"] for d in doc.get("diagnostics", [])]
    row["findings"] = findings(out)
    row["bytes"] = os.path.getsize(out)
    if os.environ.get("CAPTURE_CORPUS_KEEP") != "1" and row["bytes"] > 20 << 20:
        os.remove(out)
    return row


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="comma-separated model names")
    ap.add_argument("--lines", default="1.13,venv,vision")
    ap.add_argument("--modes", default="forward,train")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "capture-corpus"))
    ap.add_argument("--results", default=None, help="JSON lines file to append to")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    results = args.results or os.path.join(args.out, "results.jsonl")
    names = args.only.split(",") if args.only else list(CORPUS)
    for name in names:
        for line in CORPUS[name][0]:
            if line not in args.lines.split(",") or not os.access(LINES[line], os.X_OK):
                continue
            ref = reference_params(LINES[line], name)
            for mode in args.modes.split(","):
                row = capture(name, line, mode, args.out)
                row["reference_params"] = ref
                row["params_exact"] = row.get("params") == ref
                print(json.dumps(row), flush=True)
                with open(results, "a") as f:
                    f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
