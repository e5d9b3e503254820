#!/usr/bin/env python3
"""Issue 47's scaling benchmark: CPU time and peak RSS of `graphlint lint -D batch=1`
and of the Python pipeline (bench/python_pipeline.py: onnx load + full check +
shape inference with data propagation) on the synthetic chain and wide graphs,
in the same run, with their ratios; then graphlint's per-phase table
(`--timings`) at each size. Times are CPU (user + sys of the process, from
wait4), which a loaded machine disturbs far less than wall time.

  bench/scaling_bench.py --graphlint build/tools/graphlint              # 10k, 100k, 1M
  bench/scaling_bench.py --graphlint ... --sizes 10000 100000 --runs 3  # quicker

Graphs are generated into --data (default /tmp/graphlint-scaling) and reused.
Markdown goes to stdout, progress to stderr."""
import argparse
import os
import resource
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def measure(cmd, runs):
    """(least CPU seconds over `runs` fresh processes, the last run's stderr)."""
    best, err = None, b""
    for _ in range(runs):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        if p.returncode not in (0, 1):
            sys.exit(f"{' '.join(cmd)} failed (exit {p.returncode}):\n{p.stderr.decode()[-2000:]}")
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        best = cpu if best is None else min(best, cpu)
        err = p.stderr
    return best, err


def measure_rss(cmd):
    """Exact peak RSS (MiB) of one run, through GNU time."""
    with tempfile.NamedTemporaryFile("r") as f:
        subprocess.run(["/usr/bin/time", "-q", "-f", "%M", "-o", f.name] + cmd,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return int(f.read().strip().splitlines()[-1]) / 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphlint", required=True)
    ap.add_argument("--python", default="/usr/bin/python3", help="interpreter with onnx")
    ap.add_argument("--kinds", nargs="*", default=["chain", "wide"])
    ap.add_argument("--sizes", nargs="*", type=int, default=[10000, 100000, 1000000])
    ap.add_argument("--runs", type=int, default=3, help="runs per graph and tool (the minimum CPU is kept)")
    ap.add_argument("--python-max-nodes", type=int, default=1000000)
    ap.add_argument("--data", default="/tmp/graphlint-scaling")
    a = ap.parse_args()
    log = lambda m: print(m, file=sys.stderr, flush=True)
    os.makedirs(a.data, exist_ok=True)
    rows, timings = [], []
    for kind in a.kinds:
        for n in a.sizes:
            path = os.path.join(a.data, f"{kind}_{n}.onnx")
            if not os.path.exists(path):
                log(f"generating {path}")
                subprocess.run([a.python, os.path.join(HERE, "gen_synthetic.py"), "--kind", kind, "--nodes", str(n),
                                "--out", path], check=True, stdout=subprocess.DEVNULL)
            gl = [a.graphlint, "lint", "-D", "batch=1", path]
            runs = 1 if n >= 1000000 else a.runs
            log(f"{kind} {n}: graphlint x{runs}")
            gcpu, _ = measure(gl, runs)
            grss = measure_rss(gl)
            _, terr = measure(gl + ["--timings"], 1)
            timings.append((kind, n, terr.decode()))
            pcpu = prss = None
            if n <= a.python_max_nodes:
                log(f"{kind} {n}: python pipeline x{runs}")
                py = [a.python, os.path.join(HERE, "python_pipeline.py"), path]
                pcpu, _ = measure(py, runs)
                prss = measure_rss(py)
            rows.append((kind, n, gcpu, grss, pcpu, prss))
    print("| graph | nodes | graphlint CPU s | graphlint nodes/s | peak RSS MiB | Python CPU s | Python peak RSS MiB "
          "| CPU ratio | RSS ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for kind, n, gcpu, grss, pcpu, prss in rows:
        py = f"{pcpu:.2f} | {prss:.0f} | {pcpu / gcpu:.1f}x | {prss / grss:.1f}x" if pcpu else "not run | | |"
        print(f"| {kind} | {n:,} | {gcpu:.2f} | {n / gcpu:,.0f} | {grss:.0f} | {py} |")
    print()
    print("Targets (issue 47, 1M nodes): <= 2 s CPU, <= 400 MB RSS, >= 5x the Python pipeline.")
    for kind, n, text in timings:
        print(f"\n`graphlint lint -D batch=1 --timings` on {kind} {n:,}:\n\n```\n{text.rstrip()}\n```")


if __name__ == "__main__":
    main()
