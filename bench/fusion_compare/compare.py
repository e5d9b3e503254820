#!/usr/bin/env python3
"""Compare graphlint's fusion plan with what TorchInductor (CPU) and ONNX
Runtime (CPU EP) really do to the same graph (docs/validation.md#fusion-against-the-compilers).

For every corpus model (zoo.py) and profile:
  inductor-cpu  capture_inductor.py lowers the model with Inductor and writes
                the aten graph it lowered (FX JSON) and its kernels; graphlint
                plans that FX JSON with --backend inductor-cpu;
  ort-cpu       export_onnx.py writes the ONNX model, ort_groups.py optimizes
                it (ORT_ENABLE_EXTENDED, CPU EP); graphlint plans the ONNX
                model with --backend ort-cpu.
Compiler results are cached under --out (per-model JSON); graphlint is
re-run every time. Metrics (see docs/validation.md for the definitions):
kernel counts, pairwise co-membership agreement over the compute nodes, edge
agreement, and whether graphlint's boundaries are splits in the compiler too
(and, for Inductor, whether the reason matches the scheduler's refusal).

  compare.py [--models a,b|smoke] [--profiles inductor-cpu,ort-cpu] [--check] [--fresh] [--markdown FILE]
Exit status 1 with --check when a model misses a target (co-membership >= 90%,
kernel count within 10%).
"""

import argparse
import collections
import datetime
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))

import metrics  # noqa: E402
import zoo  # noqa: E402

TARGET_AGREEMENT = 0.90
TARGET_KERNELS = 0.10
GATED = ("inductor-cpu", "ort-cpu")


def venv_python(env):
    """The interpreter of an environment: $GRAPHLINT_VENV(_VISION), else the
    checkout's build/venv(-vision) (scripts/setup.sh creates both)."""
    var, sub = ("GRAPHLINT_VENV_VISION", "venv-vision") if env == "vision" else ("GRAPHLINT_VENV", "venv")
    for base in (os.environ.get(var), os.path.join(ROOT, "build", sub)):
        if base and os.path.exists(os.path.join(base, "bin", "python")):
            return os.path.join(base, "bin", "python")
    raise RuntimeError(f"no {sub} environment: set {var}")


def run(cmd, env=None, log=None):
    full = dict(os.environ, **(env or {}))
    res = subprocess.run(["nice", "-n", "5"] + cmd, env=full, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if log:
        with open(log, "w") as f:
            f.write(res.stdout)
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({res.returncode}):\n{res.stdout[-2000:]}")
    return res.stdout


def pyshim(out):
    """onnx + onnxscript for the vision environment (which lacks them), by
    path from the transformers environment; nothing is installed."""
    shim = os.path.join(out, "pyshim")
    os.makedirs(shim, exist_ok=True)
    site = run([venv_python("nlp"), "-c", "import onnx, os; print(os.path.dirname(os.path.dirname(onnx.__file__)))"]).strip()
    for pkg in ("onnx", "onnx_ir", "onnxscript", "ml_dtypes", "google"):
        link = os.path.join(shim, pkg)
        if not os.path.lexists(link):
            os.symlink(os.path.join(site, pkg), link)
    return shim


def inductor_result(name, out):
    path = os.path.join(out, f"{name}.inductor.json")
    if not os.path.exists(path):
        # capture_inductor writes with graphlint's exporter: the checkout's package.
        run([venv_python(zoo.env_of(name)), os.path.join(HERE, "capture_inductor.py"), name, out],
            env={"PYTHONPATH": os.path.join(ROOT, "python")}, log=os.path.join(out, f"{name}.inductor.log"))
    with open(path) as f:
        return json.load(f)


TRANSFORMER_ARGS = {"gpt2": ("gpt2", 4, 128), "bert": ("bert", 4, 128), "distilbert": ("bert", 4, 128),
                    "llama": ("bert", 4, 128), "t5": ("t5", 4, 128)}


def ort_result(name, out):
    onnx_path = os.path.join(out, f"{name}.onnx")
    path = os.path.join(out, f"{name}.ort.json")
    if not os.path.exists(onnx_path):
        env = {"PYTHONPATH": pyshim(out)} if zoo.env_of(name) == "vision" else {}
        run([venv_python(zoo.env_of(name)), os.path.join(HERE, "export_onnx.py"), name, onnx_path], env=env,
            log=os.path.join(out, f"{name}.export.log"))
    if not os.path.exists(path):
        extra = []
        if name in TRANSFORMER_ARGS:
            t, h, d = TRANSFORMER_ARGS[name]
            extra = ["--transformer", t, str(h), str(d)]
        run([venv_python("nlp"), os.path.join(HERE, "ort_groups.py"), onnx_path, path] + extra,
            log=os.path.join(out, f"{name}.ort.log"))
    with open(path) as f:
        return json.load(f), onnx_path


def graphlint_plan(graphlint, path, backend):
    res = subprocess.run([graphlint, path, "--format", "json", "--backend", backend],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if res.returncode not in (0, 1):
        raise RuntimeError(f"graphlint {path}: exit {res.returncode}: {res.stderr.strip()}")
    return json.loads(res.stdout)["files"][0]["fusion"]


def compare_inductor(name, out, graphlint, backend):
    ind = inductor_result(name, out)
    rows = []
    for i, g in enumerate(ind["graphs"]):
        fx_path = os.path.join(out, g["fx_file"])
        with open(fx_path) as f:
            fx = json.load(f)
        plan = graphlint_plan(graphlint, fx_path, backend)
        rows.append(metrics.compare_fx(fx, plan, g))
    return metrics.combine(rows, name, backend, compile_s=ind.get("compile_s"))


def compare_ort(name, out, graphlint, backend, level):
    res, onnx_path = ort_result(name, out)
    plan = graphlint_plan(graphlint, onnx_path, backend)
    row = metrics.compare_onnx(res["source"], plan, res["levels"][level])
    out_row = metrics.combine([row], name, backend)
    out_row["level"] = level
    if "transformer_fusions" in res:
        out_row["transformer_fusions"] = {k: v for k, v in res["transformer_fusions"].items() if v}
    return out_row


def meets(row):
    return row["agreement"] >= TARGET_AGREEMENT and abs(row["kernel_error"]) <= TARGET_KERNELS


def markdown(rows, date=None):
    """The per-profile tables of docs/validation.md#fusion-against-the-compilers
    (ort-cpu@all rows become the last column of the ort-cpu table)."""
    out = [f"Generated by `bench/fusion_compare/compare.py` on {date or datetime.date.today().isoformat()}.", ""]
    allk = {r["model"]: r["kernels_compiler"] for r in rows if r["profile"] == "ort-cpu@all"}
    for profile in dict.fromkeys(r["profile"] for r in rows):
        if profile == "ort-cpu@all":
            continue
        sel = [r for r in rows if r["profile"] == profile]
        ind = profile.startswith("inductor")
        name = "Inductor" if ind else "ORT (EXTENDED)"
        head = ["model"] + (["graphs"] if ind else []) + ["kernels graphlint", f"kernels {name}", "error",
                                                            "co-membership", "edge agreement",
                                                            f"boundaries {name.split()[0]} splits too"]
        head += ["reasons matching", "targets"] if ind else ["targets"] + (["kernels ORT (ALL)"] if allk else [])
        out += [f"#### {profile}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for r in sel:
            cells = [r["model"]] + ([str(r["graphs"])] if ind else [])
            cells += [str(r["kernels_graphlint"]), str(r["kernels_compiler"]), f"{r['kernel_error']:+.1%}",
                      f"{r['agreement']:.1%}", f"{r['edge_agreement']:.1%}", f"{r['boundaries_split']}/{r['boundaries']}"]
            target = "met" if meets(r) else "**missed**"
            if ind:
                cells += [f"{r['reason_match']}/{r['reason_checked']}" if r.get("reason_checked") else "n/a", target]
            else:
                cells += [target] + ([str(allk.get(r["model"], ""))] if allk else [])
            out.append("| " + " | ".join(cells) + " |")
        n_met = sum(meets(r) for r in sel)
        out += ["", f"{n_met} of {len(sel)} models meet both targets; co-membership "
                    f"{sum(r['agreement'] for r in sel) / len(sel):.1%} on average (lowest "
                    f"{min(r['agreement'] for r in sel):.1%}), edge agreement "
                    f"{sum(r['edge_agreement'] for r in sel) / len(sel):.1%}, kernel count error "
                    f"{sum(abs(r['kernel_error']) for r in sel) / len(sel):.1%} on average.", ""]
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(zoo.MODELS), help="comma-separated zoo.py names, or smoke (the CTest subset)")
    ap.add_argument("--profiles", default="inductor-cpu,ort-cpu")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "fusion-compare"))
    ap.add_argument("--graphlint", default=os.path.join(ROOT, "build", "tools", "graphlint"))
    ap.add_argument("--check", action="store_true", help="exit 1 when a gated profile misses a target")
    ap.add_argument("--markdown", help="write the per-model table here")
    ap.add_argument("--json", help="write every row here")
    ap.add_argument("--fresh", action="store_true", help="recompute the compiler results of these models")
    args = ap.parse_args(argv)
    if args.models == "smoke":
        args.models = ",".join(zoo.SMOKE)
    os.makedirs(args.out, exist_ok=True)
    try:
        for env in {zoo.env_of(m) for m in args.models.split(",")}:
            venv_python(env)
    except RuntimeError as e:
        print(f"compare.py: skipped: {e}", file=sys.stderr)
        return 77  # CTest's SKIP_RETURN_CODE
    if not os.access(args.graphlint, os.X_OK):
        print(f"compare.py: {args.graphlint}: not an executable", file=sys.stderr)
        return 2
    if args.fresh:
        for name in args.models.split(","):
            for f in os.listdir(args.out):
                if f.startswith(name + ".") and (f.endswith(".json") or f.endswith(".onnx")):
                    os.remove(os.path.join(args.out, f))
    rows, failures = [], []
    for profile in args.profiles.split(","):
        for name in args.models.split(","):
            try:
                if profile.startswith("inductor"):
                    row = compare_inductor(name, args.out, args.graphlint, profile)
                else:
                    row = compare_ort(name, args.out, args.graphlint, profile.split("@")[0],
                                      profile.split("@")[1] if "@" in profile else "extended")
                    row["profile"] = profile
            except Exception as e:  # a model that does not lower is reported, not fatal
                print(f"{profile} {name}: {e}", file=sys.stderr)
                failures.append(f"{profile} {name}: could not compare")
                continue
            rows.append(row)
            print(f"{profile:14} {name:22} kernels {row['kernels_graphlint']:4} vs {row['kernels_compiler']:4} "
                  f"({row['kernel_error']:+.1%})  co-membership {row['agreement']:.1%}  edges "
                  f"{row['edge_agreement']:.1%}  boundaries split {row['boundaries_split']}/{row['boundaries']}"
                  f"{'' if meets(row) else '  MISS'}")
            if profile.split("@")[0] in GATED and "@" not in profile and not meets(row):
                failures.append(f"{profile} {name}: co-membership {row['agreement']:.1%}, kernels "
                                f"{row['kernel_error']:+.1%}")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    if failures:
        print("below target:\n  " + "\n  ".join(failures), file=sys.stderr)
    return 1 if args.check and failures else 0


if __name__ == "__main__":
    sys.exit(main())
