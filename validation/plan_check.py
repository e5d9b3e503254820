#!/usr/bin/env python3
"""`graphlint plan` against the published runs (issue 43, "Proof"; docs/validation.md,
"plan against published setups").

    python validation/plan_check.py [--graphlint build/tools/graphlint] [--rows ID,ID] [--max-gpus 8]

For each row of validation/published_runs.yaml that published_runs.py can
predict (its setup stated, a captured model), at the row's GPU count, target
and global batch (local batch x data-parallel ranks): the published setup's
predicted tokens/s/GPU (lint, the row's own flags) against `plan --objective
time`'s top pick, both predicted by graphlint. The top pick must be at least
as fast, and must fit (it always does: plan never ranks a setup that does
not). A row the model predicts to OOM is checked to be listed as not fitting
when its setup is in plan's space. The training setup plan does not search
(precision, optimizer, sequence length, async TP, float8 all-gather) is the
row's; plan searches the rest. Rows on more GPUs than --max-gpus are skipped
(a plan there takes minutes per row on a laptop): say so in the table.
"""
import argparse
import json
import os
import subprocess
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
import published_runs as pr  # noqa: E402   (beside this script)

# The row flags plan takes as its base setup (the rest it searches).
BASE_FLAGS = {"--train", "--optimizer", "--precision", "--gpus-per-node", "--async-tp", "--float8-all-gather",
              "--float8-precompute-scale"}


def plan_top(binary, fx, target, gpus, global_batch, base, seq):
    cmd = [binary.path, "plan", fx, "--format", "json", "--objective", "time", "--target", target, "--gpus", str(gpus),
           "--global-batch", str(global_batch), "-D", f"seq={seq}", "--top", "1"]
    for f, v in base:
        cmd += [f] if v is None else [f, v]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        return None, (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]
    return json.loads(p.stdout), None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graphlint", default=os.environ.get("GRAPHLINT_CLI", os.path.join(pr.ROOT, "build", "tools", "graphlint")))
    ap.add_argument("--cache", default=os.path.join(pr.ROOT, "build", "tmp", "published-runs"))
    ap.add_argument("--rows", help="comma-separated row ids, run in that order (default: all, in the YAML's order)")
    ap.add_argument("--max-gpus", type=int, default=8)
    args = ap.parse_args(argv)
    with open(os.path.join(HERE, "published_runs.yaml")) as f:
        rows = yaml.safe_load(f)["rows"]
    if args.rows:
        want = args.rows.split(",")
        rows = sorted((r for r in rows if r["id"] in want), key=lambda r: want.index(r["id"]))  # in the order given
    binary = pr.Binary(args.graphlint)
    print(f"{'row':34} {'gpus':>5} {'batch':>6} {'published setup (predicted)':>28} {'plan top pick':>14}  verdict")
    failures = 0
    for row in rows:
        flags, unstated, _, local, seq = pr.setup_flags(row)
        factory = pr.FACTORIES.get(row["model"]["name"])
        gpus = int(row["hardware"]["count"])
        status = None
        if factory is None:
            status = "no model"
        elif unstated or local is None or seq is None:
            status = "setup unstated"
        elif gpus > args.max_gpus:
            status = f"skipped: {gpus} GPUs > --max-gpus {args.max_gpus}"
        if status:
            print(f"{row['id']:34} {gpus:>5} {'':>6} {'':>28} {'':>14}  {status}")
            continue
        fx = os.path.join(args.cache, f"{pr.capture_name(row, factory)}.fx.json")
        if not os.path.exists(fx):
            print(f"{row['id']:34} {gpus:>5} {'':>6} {'':>28} {'':>14}  no capture at {fx} (published_runs.py makes it)")
            continue
        par = row.get("parallelism", {})
        dp = int(par.get("dp_shard", 1)) * int(par.get("dp_replicate", 1))
        if par.get("fsdp") == 1:
            dp = gpus // (int(par.get("tp", 1)) * int(par.get("pp", 1)) * int(par.get("cp", 1)))
        global_batch = int(local) * dp
        out, why = pr.predict(binary, fx, flags)
        if out is None:
            print(f"{row['id']:34} {gpus:>5} {global_batch:>6} {'':>28} {'':>14}  lint failed: {why}")
            continue
        comm, mem = out.get("communication") or {}, out.get("memory") or {}
        published_tps = comm.get("tokens_per_second_per_gpu")
        published_fits = not any(d["code"] == "GL201" for d in out.get("diagnostics", []))
        base = [(f, v) for f, v in flags if f in BASE_FLAGS]
        plan, why = plan_top(binary, fx, row["hardware"]["target"], gpus, global_batch, base, seq)
        if plan is None:
            print(f"{row['id']:34} {gpus:>5} {global_batch:>6} {'':>28} {'':>14}  plan failed: {why}")
            failures += 1
            continue
        top = plan["candidates"][0]
        top_tps = top["tokens_per_second_per_gpu"] if top["fits"] else None
        verdict = []
        if top_tps is None:
            verdict.append("no setup fits")
        elif published_fits and published_tps and top_tps < published_tps * (1 - 1e-9):
            verdict.append("FAIL: top pick slower than the published setup")
        else:
            verdict.append("ok" if published_fits else "ok (published setup predicted not to fit)")
        if not published_fits:
            same = [c for c in plan["candidates"]
                    if not c["fits"] and c["peak_reserved_bytes"] == mem.get("peak_reserved_bytes")]
            verdict.append("listed as not fitting" if same else "its setup is outside plan's space")
        failures += any(v.startswith("FAIL") for v in verdict)
        pub = f"{published_tps:.0f} tok/s/GPU" if published_tps else "-"
        if not published_fits:
            pub += " (OOM)"
        print(f"{row['id']:34} {gpus:>5} {global_batch:>6} {pub:>28} {top_tps or 0:>10.0f} tok/s  "
              f"{'; '.join(verdict)} [{plan['evaluated']} candidates; top: {top['lint_flags']}]")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
