"""--emit-trace against a trace tool (docs/viewers.md).

For each model and setup graphlint writes the JSON report and the trace.
The trace must be Chrome trace JSON whose complete events nest perfectly on
each track (pid, tid), as Perfetto reads them (integer nanoseconds) and as
chrome://tracing and speedscope do (floating point), with ProfilerStep#0
spanning every kernel, and
HolisticTraceAnalysis must read it: its communication/computation overlap
(the share of communication time that computation hides) must equal the
report's 1 - exposed/communication within 1 point, and its kernel time per
stream the report's compute and communication busy time.
Run by GRAPHLINT_TORCH2_PYTHON with HolisticTraceAnalysis installed
(scripts/requirements/torch2.txt); GRAPHLINT_CLI is the binary.
"""
import json
import logging
import math
import os
import subprocess
import sys
import tempfile
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.environ["GRAPHLINT_CLI"]

# Setups with communication (HTA's overlap divides by it), and one without.
CASES = [
    ("models/resnet18.onnx", ["--dim", "batch=32", "--train", "--world-size", "8", "--intra", "pcie-gen4"]),
    ("models/gpt_tiny.onnx", ["--dim", "batch=8", "--dim", "seq=256", "--train", "--world-size", "16",
                             "--gpus-per-node", "8"]),
    ("tests/fixtures/fx/tiny_llama.train.fx.json", ["--train", "--precision", "bf16-mixed", "--zero", "3",
                                                    "--world-size", "8"]),
    ("models/mobilenet_v3_small.onnx", ["--dim", "batch=64", "--train", "--zero", "2", "--world-size", "8"]),
    ("models/resnet18.onnx", ["--dim", "batch=1"]),
]


# How viewers read a complete event's span: Perfetto's JSON importer turns ts
# and dur into integer nanoseconds, each on its own (llround(us * 1000) today,
# a truncating cast in older releases), and nests the slices of a track only
# where they nest exactly; chrome://tracing and speedscope add ts + dur in
# floating point.
SPANS = {
    "Perfetto, rounded to ns": lambda ts, dur: (math.floor(ts * 1000 + 0.5), math.floor(ts * 1000 + 0.5)
                                                + math.floor(dur * 1000 + 0.5)),
    "Perfetto, truncated to ns": lambda ts, dur: (int(ts * 1000), int(ts * 1000) + int(dur * 1000)),
    "floating point": lambda ts, dur: (ts, ts + dur),
}


def check_nesting(events):
    """Every pair of complete events on one track is disjoint or nested, exactly, as each viewer reads them."""
    tracks = defaultdict(list)
    for e in events:
        if e.get("ph") == "X":
            assert e["dur"] >= 0, e
            tracks[(e["pid"], e["tid"])].append(e)
    for how, span in SPANS.items():
        for track, evs in tracks.items():
            stack = []
            # Of two that start together, the longer first: it holds the other.
            spans = sorted(((span(e["ts"], e["dur"]), e["name"]) for e in evs), key=lambda s: (s[0][0], -s[0][1]))
            for (start, end), name in spans:
                while stack and stack[-1][0] <= start:
                    stack.pop()
                if stack and end > stack[-1][0]:
                    raise AssertionError(f"track {track} ({how}): '{name}' [{start}, {end}] partly overlaps "
                                         f"'{stack[-1][1]}', which ends at {stack[-1][0]}")
                stack.append((end, name))
    return len(tracks)


def hta_overlap(trace_dir):
    from hta.trace_analysis import TraceAnalysis
    a = TraceAnalysis(trace_dir=trace_dir)
    df = a.get_comm_comp_overlap(visualize=False)
    return float(df["comp_comm_overlap_pctg"].iloc[0])


def check(model, flags, tmp):
    tdir = os.path.join(tmp, f"case{len(os.listdir(tmp))}")
    os.makedirs(tdir)
    path = os.path.join(tdir, "rank0.pt.trace.json")
    cmd = [CLI, os.path.join(ROOT, model), "--format", "json", "--exit-zero", "--emit-trace", path] + flags
    report = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)["files"][0]
    with open(path) as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    tracks = check_nesting(events)
    assert trace["distributedInfo"]["backend"] == "nccl"
    step = [e for e in events if e["name"].startswith("ProfilerStep#")]
    assert len(step) == 1
    # speedscope ends the wrong frames at a launch of no duration (docs/viewers.md).
    assert all(e["dur"] > 0 for e in events if e.get("cat") == "cuda_runtime"), "a cudaLaunchKernel lasts 0 us"
    kernels = [e for e in events if e.get("cat") == "kernel"]
    for k in kernels:
        assert step[0]["ts"] <= k["ts"] and k["ts"] + k["dur"] <= step[0]["ts"] + step[0]["dur"] + 1e-3, k
    counters = [e for e in events if e.get("ph") == "C"]
    assert counters and max(c["args"]["allocated"] for c in counters) > 0
    comm = report.get("communication") or {}
    busy = comm.get("comm_s", 0)
    line = f"{model} {' '.join(flags)}: {len(kernels)} kernels on {tracks} tracks"
    if busy <= 0:
        print(f"ok  {line}, no communication")
        return True
    hidden = 100 * (1 - comm["exposed_s"] / busy)
    got = hta_overlap(tdir)
    ok = abs(got - hidden) <= 1.0
    print(f"{'ok ' if ok else 'BAD'} {line}: HTA overlap {got:.2f}% vs graphlint hidden communication {hidden:.2f}% "
          f"(graphlint overlap_ratio {100 * comm['overlap_ratio']:.2f}%)")
    return ok


def main():
    logging.disable(logging.WARNING)  # HTA logs each file it parses
    # HTA rounds sub-microsecond timestamps to whole microseconds unless told
    # not to; the predicted kernels are often shorter than that.
    os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for model, flags in CASES:
            bad += not check(model, flags, tmp)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
