#!/usr/bin/env python3
"""Step time against published training throughput (docs/validation.md
"Step time"). Each row of tests/fixtures/calibration/step_time.json is a
published single-GPU measurement; graphlint predicts its step from a real
graph of the model (committed FX exports). A row's published step is
micro_batch / throughput (a row marked not_comparable, whose published
run is not the graph's shape, is shown with its reason and not compared); the
prediction is forward + backward + the optimizer step divided by the
gradient-accumulation steps (the optimizer runs once per accumulated batch).
--check exits 1 when a row leaves its bound (its own `bound`, else
tolerance_row), when the mean error over all rows exceeds tolerance_mean, or
when a row has kernels of unknown cost.

usage: calibrate_step_time.py --graphlint build/tools/graphlint [--check] [--table FILE]
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_TABLE = os.path.join(HERE, "..", "tests", "fixtures", "calibration", "step_time.json")


def predict(graphlint, graph, args):
    out = subprocess.run([graphlint, graph, "--format", "json", *args], capture_output=True, text=True)
    if out.returncode not in (0, 1):
        raise SystemExit(f"calibrate_step_time: graphlint failed on {graph}: {out.stderr.strip()}")
    f = json.loads(out.stdout)["files"][0]
    return f["communication"], f["compute"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graphlint", required=True)
    ap.add_argument("--table", default=DEFAULT_TABLE)
    ap.add_argument("--check", action="store_true", help="exit 1 when a row leaves its bound")
    a = ap.parse_args()
    with open(a.table) as fh:
        table = json.load(fh)
    base = os.path.dirname(os.path.abspath(a.table))
    tol, tol_mean = table["tolerance_row"], table["tolerance_mean"]
    failures, errors = [], []
    print("| row | role | published (ms) | predicted (ms) | error | predicted TFLOP/s | bound | within bound |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    # Each row is one graphlint process; two at a time halve the test's wall time.
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda r: predict(a.graphlint, os.path.join(base, r["graph"]), r["args"]), table["rows"]))
    for row, (comm, compute) in zip(table["rows"], results):
        if compute.get("lower_bound") or compute.get("unknown_groups"):
            failures.append(f"{row['id']}: {compute.get('unknown_groups')} kernels of unknown cost")
        published = 1e3 * row["micro_batch"] / row["throughput"]
        predicted = 1e3 * (comm["forward_s"] + comm["backward_s"] + comm["optimizer_s"] / row["accumulation"])
        err = predicted / published - 1
        if row.get("not_comparable"):
            print(f"| {row['id']} | not compared | {published:.1f} | {predicted:.1f} | ({err:+.1%}) | | | "
                  f"not comparable: {row['not_comparable']} |")
            continue
        bound = row.get("bound", tol)
        ok = abs(err) <= bound
        errors.append(abs(err))
        if not ok:
            failures.append(f"{row['id']}: {err:+.1%} outside {bound:.0%}")
        mfu = comm["model_flops"] / (predicted / 1e3) / 1e12
        print(f"| {row['id']} | {row['role']} | {published:.1f} | {predicted:.1f} | {err:+.1%} | {mfu:.0f} | "
              f"{bound:.0%} | {'yes' if ok else 'NO'} |")
    mean = sum(errors) / len(errors) if errors else 0
    within = sum(e <= tol for e in errors)
    print(f"\n{len(errors)} rows: mean |error| {mean:.1%} (target {tol_mean:.0%}), "
          f"{within} of {len(errors)} within {tol:.0%}")
    if mean > tol_mean:
        failures.append(f"mean error {mean:.1%} above {tol_mean:.0%}")
    if a.check and failures:
        print("FAILED: " + "; ".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
