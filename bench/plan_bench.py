#!/usr/bin/env python3
"""Benchmark of `graphlint plan` (docs/plan.md, "Speed"): candidates evaluated
per second on a large training graph, wall and CPU time, over repeated runs.

    bench/plan_bench.py [--graphlint build/tools/graphlint] [--model FILE] [--runs 3] [--jobs 2] [-- PLAN ARGS...]

The default model is the Llama 3.1 70B training capture of
validation/published_runs.py (build/tmp/published-runs/llama3_70b.fx.json, or
BENCH_70B), and the default space is 2,061 setups of it on 64 H100 at a
global batch of 64 samples of 8192 tokens (DEFAULT_SPACE). A timing, never a test: the
numbers go to docs/plan.md with the machine they came from.
"""
import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_MODEL = os.environ.get("BENCH_70B", os.path.join(ROOT, "build", "tmp", "published-runs", "llama3_70b.fx.json"))
# 2,061 candidates: every mesh of 64 H100 (tp, pp, cp, dp_shard; schedules and
# micro-batches), three recompute policies, compiled, bf16.
DEFAULT_SPACE = ["--target", "H100-SXM", "--gpus", "64", "--global-batch", "64", "-D", "seq=8192",
                 "--fix", "dp_replicate=1", "--fix", "float8=none", "--fix", "backend=inductor"]


def one_run(binary, model, jobs, space):
    cmd = [binary, "plan", model, "--format", "json", "--jobs", str(jobs), *space]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit(f"plan_bench: {' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()[-300:]}")
    doc = json.loads(p.stdout)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "evaluated": doc["evaluated"], "fitting": doc["fitting"],
            "timed": sum(1 for c in doc["candidates"] if c["step_time_s"] is not None),
            "rss_kib": after.ru_maxrss}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graphlint", default=os.environ.get("GRAPHLINT", os.path.join(ROOT, "build", "tools", "graphlint")))
    ap.add_argument("--model", default=DEFAULT_MODEL)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("space", nargs="*", help="graphlint plan arguments (default: the issue's 70B space)")
    args = ap.parse_args(argv)
    if not os.path.exists(args.model):
        sys.exit(f"plan_bench: no model at {args.model} (validation/published_runs.py captures it; or --model)")
    space = args.space or DEFAULT_SPACE
    runs = [one_run(args.graphlint, args.model, args.jobs, space) for _ in range(args.runs)]
    wall = statistics.median(r["wall"] for r in runs)
    cpu = statistics.median(r["cpu"] for r in runs)
    n = runs[0]["evaluated"]
    print(f"model      {args.model}")
    print(f"space      {' '.join(space)}")
    print(f"machine    {platform.machine()}, {os.cpu_count()} CPUs, --jobs {args.jobs}; load average "
          f"{os.getloadavg()[0]:.1f} at the end")
    print(f"candidates {n} evaluated, {runs[0]['fitting']} fit, {runs[0]['timed']} timed")
    walls = ", ".join("%.2f" % r["wall"] for r in runs)
    print(f"wall       {wall:.2f} s median of {len(runs)} ({walls})")
    print(f"cpu        {cpu:.2f} s (user + system)")
    print(f"rate       {n / wall:.0f} candidates/s wall, {n / cpu:.0f} candidates per CPU-second")
    print(f"peak RSS   {max(r['rss_kib'] for r in runs) / 1024:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
