#!/usr/bin/env python3
"""Benchmark driver: times graphlint and the Python ONNX pipeline on the inputs
run_benchmarks.sh generated, and prints markdown tables.

Every measurement is one fresh child process; wall time comes from the parent
(perf_counter around the child) and peak RSS from os.wait4's rusage of that
very child, so runs never contaminate each other. Before the first ("cold-ish")
run of each file its pages are evicted from the page cache with
posix_fadvise(DONTNEED); the binary and shared libraries stay cached. The
following runs are warm (file in the page cache).
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def evict(path):
    """Drops a file's clean pages from the page cache (no root needed)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


# The child's ru_maxrss also counts the memory of the (v)forked Python
# before exec (Linux keeps the pre-exec high-water mark), so once this
# script holds a large graph every child would look at least that big.
# GNU time forks from a small process and reports its own child's peak; it
# adds ~2 ms, so timed runs go without it and one extra run measures RSS.
GNU_TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


def run_once(cmd, exact_rss=False):
    """Runs cmd in a fresh process; returns (seconds, peak RSS KiB, rc, stdout).
    The RSS is exact (not inflated by this script's own size) with exact_rss."""
    use_time = GNU_TIME and exact_rss
    with tempfile.TemporaryFile() as out, tempfile.NamedTemporaryFile("r") as rss:
        argv = [GNU_TIME, "-q", "-f", "%M", "-o", rss.name] + list(cmd) if use_time else list(cmd)
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
        _, status, ru = os.wait4(p.pid, 0)
        dt = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        peak = ru.ru_maxrss
        if use_time:
            text = rss.read().strip().splitlines()
            peak = int(text[-1]) if text and text[-1].isdigit() else peak
        out.seek(0)
        return dt, peak, p.returncode, out.read().decode(errors="replace")


class Series:
    def __init__(self, cold, warm):
        self.cold = cold          # (sec, rss)
        self.warm = warm          # [(sec, rss)]

    @property
    def median(self):
        return statistics.median(s for s, _ in self.warm)

    @property
    def min(self):
        return min(s for s, _ in self.warm)

    @property
    def rss(self):
        return max(r for _, r in self.warm)


def measure(cmd, path, runs, check):
    """Times a cold-ish run and `runs` warm ones; peak RSS comes from one
    extra run each (cold-ish and warm) under GNU time, see run_once."""
    evict(path)
    cold = run_once(cmd)
    check(cold)
    evict(path)
    cold_rss = run_once(cmd, exact_rss=True)[1]
    warm = []
    for _ in range(runs):
        r = run_once(cmd)
        check(r)
        warm.append(r[0])
    warm_rss = run_once(cmd, exact_rss=True)[1]
    return Series((cold[0], cold_rss), [(s, warm_rss) for s in warm])


def graphlint_series(gl, path, runs):
    def check(r):
        if r[2] not in (0, 1):
            sys.exit(f"graphlint failed on {path} (exit {r[2]}):\n{r[3][-2000:]}")
        doc = json.loads(r[3])
        f = doc["files"][0]
        if f["status"] != "linted":
            sys.exit(f"graphlint did not lint {path}: {f}")
        check.stats = f.get("stats", {})
        check.diags = len(f.get("diagnostics", []))
    s = measure([gl, "--format", "json", "--exit-zero", path], path, runs, check)
    s.stats, s.diags = check.stats, check.diags
    return s


def python_series(py, path, runs):
    phases = []

    def check(r):
        if r[2] != 0:
            sys.exit(f"the Python pipeline failed on {path} (exit {r[2]}):\n{r[3][-2000:]}")
        phases.append(json.loads(r[3].strip().splitlines()[-1]))
    s = measure([py, os.path.join(HERE, "python_pipeline.py"), path], path, runs, check)
    warm = phases[1:]
    s.pipeline_median = statistics.median(p["pipeline"] for p in warm)
    s.pipeline_min = min(p["pipeline"] for p in warm)
    s.phase_median = {k: statistics.median(p[k] for p in warm) for k in ("import", "load", "check", "infer")}
    s.onnx_version = phases[0]["onnx"]
    return s


def rss_by_page_cache_state(gl, path):
    """Peak RSS of one graphlint run after three page-cache histories of the file.

    graphlint reads only the protobuf framing, with pread() through a small
    window, so its peak RSS should not depend on how the file sits in the page
    cache (an mmapped reader's would: touching a header maps a whole page-cache
    folio, up to 2 MiB). This table checks that for the three usual histories."""
    cmd = lambda f: [gl, "--format", "json", "--exit-zero", f]
    res = []
    evict(path)
    res.append(("evicted, then read by graphlint", run_once(cmd(path), exact_rss=True)[1]))
    evict(path)
    with open(path, "rb") as f:
        while f.read(1 << 20):
            pass
    res.append(("read sequentially with read() first (as `cat` or onnx.load do)", run_once(cmd(path), exact_rss=True)[1]))
    copy = path + ".fresh-copy.onnx"
    try:
        with open(path, "rb") as src, open(copy, "wb") as dst:
            while chunk := src.read(1 << 20):
                dst.write(chunk)
        res.append(("freshly written (a just-exported or just-downloaded file)", run_once(cmd(copy), exact_rss=True)[1]))
    finally:
        os.unlink(copy)
    return res


def ms(sec):
    return f"{sec * 1e3:.1f}" if sec < 10 else f"{sec * 1e3:.0f}"


def mib(kib):
    return f"{kib / 1024:.1f}"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphlint", required=True)
    ap.add_argument("--python", default="/usr/bin/python3", help="interpreter with onnx for the baseline")
    ap.add_argument("--resnet50", required=True)
    ap.add_argument("--floor", required=True, help="a 1-node graph: the fixed cost of any lint")
    ap.add_argument("--synthetic", nargs="*", default=[], help="KIND:NODES:PATH")
    ap.add_argument("--python-max-nodes", type=int, default=100000,
                    help="run the Python pipeline on synthetic graphs up to this size")
    ap.add_argument("--runs", type=int, default=7, help="warm runs per small input")
    ap.add_argument("--big-runs", type=int, default=3, help="warm runs for inputs of >= 1M nodes")
    ap.add_argument("--py-runs", type=int, default=3, help="warm runs of the Python pipeline")
    a = ap.parse_args()

    log = lambda msg: print(msg, file=sys.stderr, flush=True)
    out = []
    p = out.append
    mem_total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    p(f"Machine: {cpu_model()}, {os.cpu_count()} cores, {mem_total:.0f} GiB RAM, "
      f"Linux {platform.release()}, Python {platform.python_version()}.")
    try:
        rev = subprocess.run(["git", "-C", HERE, "describe", "--always", "--dirty"], capture_output=True,
                             text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        rev = "unknown"
    p(f"Date: {time.strftime('%Y-%m-%d %H:%M %Z')}. graphlint: `{a.graphlint}` (source {rev}). "
      f"Load average at start: {' '.join(open('/proc/loadavg').read().split()[:3])}.")
    p("")

    log("startup baseline: graphlint --version")
    base = measure([a.graphlint, "--version"], a.graphlint, a.runs, lambda r: None)
    log("fixed cost: graphlint on a 1-node graph")
    floor = graphlint_series(a.graphlint, a.floor, a.runs)

    # resnet50
    size = os.path.getsize(a.resnet50)
    log(f"resnet50: graphlint x{a.runs + 1}")
    gl = graphlint_series(a.graphlint, a.resnet50, a.runs)
    log(f"resnet50: python pipeline x{a.py_runs + 1}")
    py = python_series(a.python, a.resnet50, a.py_runs)
    p(f"### resnet50 with embedded weights ({size / 1e6:.1f} MB, {gl.stats.get('nodes', '?')} nodes, "
      f"{gl.stats.get('params', '?')} initializers)")
    p("")
    p("| tool | warm median ms | warm min ms | cold-ish first run ms | peak RSS MiB |")
    p("|---|---:|---:|---:|---:|")
    p(f"| `graphlint --version` (process start only) | {ms(base.median)} | {ms(base.min)} | {ms(base.cold[0])} | "
      f"{mib(base.rss)} |")
    p(f"| graphlint on a 1-node graph (start + ONNX schema registry) | {ms(floor.median)} | {ms(floor.min)} | "
      f"{ms(floor.cold[0])} | {mib(floor.rss)} |")
    p(f"| graphlint full lint | {ms(gl.median)} | {ms(gl.min)} | {ms(gl.cold[0])} | {mib(gl.rss)} |")
    p(f"| Python: whole process (interpreter + `import onnx` + pipeline) | {ms(py.median)} | {ms(py.min)} | "
      f"{ms(py.cold[0])} | {mib(py.rss)} |")
    p(f"| Python: pipeline only, in-process (load {ms(py.phase_median['load'])} + check "
      f"{ms(py.phase_median['check'])} + infer {ms(py.phase_median['infer'])}) | {ms(py.pipeline_median)} | "
      f"{ms(py.pipeline_min)} | | |")
    p("")
    p(f"- Speed-up, graphlint process vs Python pipeline alone (medians): **{py.pipeline_median / gl.median:.0f}x** "
      f"(vs the whole Python process: {py.median / gl.median:.0f}x). Target >= 20x.")
    p(f"- graphlint warm median {ms(gl.median)} ms vs target < 50 ms: "
      f"**{'met' if gl.median < 0.05 else 'MISSED'}**.")
    half = size / 2 / 1024
    p(f"- graphlint peak RSS {mib(gl.rss)} MiB (cold-ish run {mib(gl.cold[1])} MiB) = "
      f"{gl.rss / (size / 1024):.0%} of the file size; target < 50%: "
      f"**{'met' if gl.rss < half else 'MISSED'}**. Python peak RSS {mib(py.rss)} MiB.")
    p(f"- graphlint findings on this file: {gl.diags}. onnx {py.onnx_version}.")
    p("")
    log("resnet50: graphlint peak RSS by page-cache state")
    states = rss_by_page_cache_state(a.graphlint, a.resnet50)
    p("graphlint peak RSS on resnet50 by the file's page-cache history (one run each):")
    p("")
    p("| page cache before the run | peak RSS MiB | share of file size |")
    p("|---|---:|---:|")
    for what, kib in states:
        p(f"| {what} | {mib(kib)} | {kib / (size / 1024):.0%} |")
    worst = max(k for _, k in states)
    p("")
    p(f"- Worst case {mib(worst)} MiB vs target < {mib(half)} MiB: **{'met' if worst < half else 'MISSED'}**.")
    p("")

    # scaling
    rows = []
    for spec in a.synthetic:
        kind, nodes, path = spec.split(":", 2)
        nodes = int(nodes)
        runs = a.big_runs if nodes >= 1_000_000 else a.runs
        log(f"{kind} {nodes}: graphlint x{runs + 1}")
        g = graphlint_series(a.graphlint, path, runs)
        pys = None
        if nodes <= a.python_max_nodes:
            log(f"{kind} {nodes}: python pipeline x{a.py_runs + 1}")
            pys = python_series(a.python, path, a.py_runs)
        rows.append((kind, nodes, os.path.getsize(path), g, pys))
    if rows:
        p("### Scaling on synthetic graphs")
        p("")
        p("| graph | nodes | file MB | graphlint median ms | min ms | cold-ish ms | µs/node "
          "| peak RSS MiB | Python pipeline median ms | speed-up |")
        p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for kind, nodes, fsize, g, pys in rows:
            per = (g.median - floor.median) / nodes * 1e6
            pyc = f"{ms(pys.pipeline_median)}" if pys else "not run"
            per = f"{per:.2f}" if per > 0 else "~0 (noise)"
            ratio = f"{pys.pipeline_median / g.median:.1f}x" if pys else ""
            p(f"| {kind} | {nodes:,} | {fsize / 1e6:.2f} | {ms(g.median)} | {ms(g.min)} | {ms(g.cold[0])} | "
              f"{per} | {mib(g.rss)} | {pyc} | {ratio} |")
        p("")
        p(f"µs/node = (median - {ms(floor.median)} ms, the median on a 1-node graph) / nodes. Speed-up compares the graphlint "
          f"process with the in-process Python pipeline (load + check_model(full_check=True) + "
          f"infer_shapes(data_prop=True)).")
    p("")
    p(f"Load average at the end: {' '.join(open('/proc/loadavg').read().split()[:3])}.")
    print("\n".join(out))


if __name__ == "__main__":
    main()
