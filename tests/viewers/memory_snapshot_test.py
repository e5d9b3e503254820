"""--emit-memory-snapshot against torch's own readers (docs/viewers.md).

For each model and setup: graphlint writes the JSON report and the snapshot;
the snapshot must load with pickle.load, go through torch.cuda._memory_viz
(trace, segsum, segments, memory, trace_plot, segment_plot), hold only plain
Python types, and replaying its device_traces must give the report's
memory.peak_allocated_bytes and its segments memory.peak_reserved_bytes.
Run by GRAPHLINT_TORCH2_PYTHON; GRAPHLINT_CLI is the binary.
"""
import os
import pickle
import subprocess
import sys
import tempfile
import json

from torch.cuda import _memory_viz

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.environ["GRAPHLINT_CLI"]

CASES = [
    ("models/resnet18.onnx", ["--dim", "batch=2"]),
    ("models/resnet18.onnx", ["--dim", "batch=2", "--train", "--optimizer", "adamw"]),
    ("models/gpt_tiny.onnx", ["--train"]),
    ("tests/fixtures/fx/tiny_llama.train.fx.json", ["--train", "--precision", "bf16-mixed"]),
    ("tests/fixtures/fx/joint_mlp.train.fx.json", ["--train", "--zero", "2", "--world-size", "4"]),
]
CATEGORIES = {"parameter", "gradient", "optimizer_state", "input", "activation", "temporary"}
PLAIN = (dict, list, tuple, str, int, float, bool, type(None))


def plain(x, path="snapshot"):
    assert isinstance(x, PLAIN), f"{path}: {type(x).__name__} is not a plain Python type"
    if isinstance(x, dict):
        for k, v in x.items():
            assert isinstance(k, str), f"{path}: key {k!r}"
            plain(v, f"{path}[{k!r}]")
    elif isinstance(x, (list, tuple)):
        for i, v in enumerate(x[:50]):
            plain(v, f"{path}[{i}]")


def replay(snap):
    live = peak = 0
    sizes = {}
    for e in snap["device_traces"][0]:
        if e["action"] == "alloc":
            assert e["addr"] not in sizes, f"address {e['addr']:#x} handed out twice"
            sizes[e["addr"]] = e["size"]
            live += e["size"]
            peak = max(peak, live)
            assert e["category"] in CATEGORIES, e
        elif e["action"] == "free_completed":
            live -= sizes.pop(e["addr"])
    return peak


def check(model, flags, tmp):
    pkl = os.path.join(tmp, "snap.pickle")
    cmd = [CLI, os.path.join(ROOT, model), "--format", "json", "--exit-zero", "--emit-memory-snapshot", pkl] + flags
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    mem = json.loads(out)["files"][0]["memory"]
    with open(pkl, "rb") as f:
        snap = pickle.load(f)
    plain(snap)
    peak_alloc = replay(snap)
    reserved = sum(s["total_size"] for s in snap["segments"])
    for seg in snap["segments"]:
        assert sum(b["size"] for b in seg["blocks"]) == seg["total_size"], seg["address"]
    # torch's readers: each raises on an inconsistent snapshot (segsum checks
    # every segment's blocks add up).
    _memory_viz.trace(snap)
    _memory_viz.segsum(snap)
    ident = lambda lines: lines  # noqa: E731 (no flamegraph.pl download)
    _memory_viz.segments(snap, format_flamegraph=ident)
    _memory_viz.memory(snap, format_flamegraph=ident)
    assert "Active Memory Timeline" in _memory_viz.trace_plot(snap)
    _memory_viz.segment_plot(snap)
    # MemoryViz.js (pytorch.org/memory_viz) throws on a snapshot whose trace has
    # categories but not "unknown" (tests/viewers/memory_viz_chromium_test.py,
    # which needs a copy of it): the segments carry it.
    assert "unknown" in {e.get("category") for e in snap["device_traces"][0]}, "no 'unknown' category"
    frames = [fr for e in snap["device_traces"][0] for fr in e["frames"] if fr["line"] > 0]
    ok = peak_alloc == mem["peak_allocated_bytes"] and reserved == mem["peak_reserved_bytes"]
    print(f"{'ok ' if ok else 'BAD'} {model} {' '.join(flags)}: allocated {peak_alloc} vs {mem['peak_allocated_bytes']}, "
          f"reserved {reserved} vs {mem['peak_reserved_bytes']}, {len(snap['device_traces'][0])} entries, "
          f"{len(snap['segments'])} segments, {len(frames)} frames with a source line")
    return ok


def main():
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for model, flags in CASES:
            bad += not check(model, flags, tmp)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
