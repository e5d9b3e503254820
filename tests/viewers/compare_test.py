"""graphlint compare (docs/viewers.md#compare) on traces whose truth is known.

1. graphlint's own --emit-trace of a data-parallel step, read back as the
   measured run: step, communication and its hidden share come back exactly.
2. A hand-written torch.profiler trace of the MLP fixture's training step:
   nested ops count once (aten::linear's aten::addmm), the optimizer's ops
   stay out of the per-op rows, the CPU's relative memory count gets the
   plan's start bytes added, and the allocation at the peak names the op.
GRAPHLINT_CLI is the binary; plain Python, no torch.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.environ["GRAPHLINT_CLI"]
MLP = os.path.join(ROOT, "tests/fixtures/fx/joint_mlp.train.fx.json")


def run(*args):
    r = subprocess.run([CLI, *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


def metrics(doc):
    return {m["name"]: m for m in doc["metrics"]}


def own_trace(tmp):
    model = os.path.join(ROOT, "models/resnet18.onnx")
    setup = ["--dim", "batch=32", "--train", "--world-size", "8", "--intra", "pcie-gen4"]
    trace = os.path.join(tmp, "own.json")
    run(model, "--exit-zero", "-q", "--emit-trace", trace, *setup)
    m = metrics(json.loads(run("compare", model, "--trace", trace, "--format", "json", *setup)))
    for k in ("step", "comm", "comm_hidden"):
        p, got = m[k]["predicted"], m[k]["measured"]
        tol = 0.01 if k == "comm_hidden" else 1e-6 * abs(p) + 1e-8  # the trace rounds to the nanosecond
        assert abs(p - got) <= tol, (k, p, got)
    print(f"ok own trace: step {m['step']['measured']:.6f} s, hidden {m['comm_hidden']['measured']:.2f}%")


def ev(name, ts, dur, cat="cpu_op"):
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur, "args": {}}


def mem(ts, addr, nbytes, total):
    return {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": ts,
            "args": {"Total Reserved": 0, "Total Allocated": total, "Bytes": nbytes, "Device Id": -1,
                     "Device Type": 0, "Addr": addr}}


def hand_trace(tmp):
    events = [
        ev("ProfilerStep#1", 0, 1000, "user_annotation"),
        ev("aten::linear", 10, 100), ev("aten::t", 12, 2), ev("aten::addmm", 20, 80),
        mem(30, 1, 4096, 4096),
        ev("aten::relu", 120, 20),
        ev("aten::linear", 150, 100), ev("aten::t", 152, 2), ev("aten::addmm", 160, 80),
        mem(170, 2, 1 << 20, (1 << 20) + 4096),
        ev("autograd::engine::evaluate_function: AddmmBackward0", 300, 200),
        ev("aten::mm", 310, 50), ev("aten::mm", 370, 50),
        mem(400, 2, -(1 << 20), 4096),
        ev("Optimizer.step#Adam.step", 600, 300, "user_annotation"),
        ev("aten::addmm", 610, 10),  # inside the optimizer: not an op of the graph's
    ]
    trace = os.path.join(tmp, "hand.json")
    json.dump({"traceEvents": events}, open(trace, "w"))
    doc = json.loads(run("compare", MLP, "--trace", trace, "--train", "--optimizer", "adam", "--kernels", "cpu",
                         "--format", "json"))
    m = metrics(doc)
    assert abs(m["step"]["measured"] - 1e-3) < 1e-12, m["step"]
    assert abs(m["forward"]["measured"] - 300e-6) < 1e-12, m["forward"]
    assert abs(m["backward"]["measured"] - 200e-6) < 1e-12, m["backward"]
    assert abs(m["optimizer"]["measured"] - 300e-6) < 1e-12, m["optimizer"]
    ops = {o["op"]: o for o in doc["ops"]}
    assert ops["aten::addmm"]["measured_count"] == 2 and abs(ops["aten::addmm"]["measured_s"] - 160e-6) < 1e-12, ops
    assert ops["aten::mm"]["measured_count"] == 2, ops
    assert ops["aten::t"]["measured_count"] == 2, ops
    assert doc["memory"]["measured_relative"] and doc["memory"]["measured_region_peak_bytes"] == (1 << 20) + 4096
    assert m["peak_allocated"]["measured"] == (1 << 20) + 4096 + doc["memory"]["predicted_start_bytes"]
    assert doc["measured_top_at_peak"][0] == {"bytes": 1 << 20, "op": "aten::linear"}, doc["measured_top_at_peak"]
    text = run("compare", MLP, "--trace", trace, "--train", "--optimizer", "adam", "--kernels", "cpu")
    assert "largest mispredictions by op" in text and "peak_allocated" in text, text
    print("ok hand-written trace: phases, nesting, optimizer ops, relative memory, allocation at the peak")


def own_snapshot(tmp):
    """--snapshot: graphlint's own snapshot, and the same dict pickled by
    Python (protocol 5, with its memo and frames), give the plan's peaks."""
    import pickle
    model = os.path.join(ROOT, "tests/fixtures/fx/tiny_llama.train.fx.json")
    setup = ["--train", "--precision", "bf16-mixed"]
    snap = os.path.join(tmp, "own.pickle")
    run(model, "--exit-zero", "-q", "--emit-memory-snapshot", snap, *setup)
    again = os.path.join(tmp, "own5.pickle")
    with open(snap, "rb") as f, open(again, "wb") as g:
        pickle.dump(pickle.load(f), g, protocol=5)
    for path in (snap, again):
        doc = json.loads(run("compare", model, "--snapshot", path, "--format", "json", *setup))
        m = metrics(doc)
        for k in ("peak_allocated", "peak_reserved"):
            assert m[k]["predicted"] == m[k]["measured"], (path, k, m[k])
        assert m["step"]["measured"] is None and not doc["ops"], doc
        assert doc["measured_top_at_peak"], doc
    print(f"ok own snapshot (protocols 2 and 5): peak {m['peak_allocated']['measured']:.0f} B, "
          f"reserved {m['peak_reserved']['measured']:.0f} B")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        own_trace(tmp)
        hand_trace(tmp)
        own_snapshot(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
