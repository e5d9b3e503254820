"""graphlint compare (docs/viewers.md#compare) on traces whose truth is known.

1. graphlint's own --emit-trace of a data-parallel step, read back as the
   measured run: step, communication and its hidden share come back exactly.
2. A hand-written torch.profiler trace of the MLP fixture's training step:
   nested ops count once (aten::linear's aten::addmm), the optimizer's ops
   stay out of the per-op rows, the CPU's relative memory count gets the
   plan's start bytes added, and the allocation at the peak names the op.
3. A hand-written device trace: kernels charged to the ops and phases that
   launched them (correlation ids), the step as the device's span, a kernel
   launched outside the step left out, NCCL's hidden share; --step picks
   another annotation, and a name no event has is a one-line error.
4. A folder of two ranks (one gzipped): the ranks' mean, each rank kept.
GRAPHLINT_CLI is the binary; plain Python, no torch.
"""
import gzip
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


def device_trace(tmp):
    def launch(ts, corr, tid=1):
        return {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": tid, "ts": ts,
                "dur": 2, "args": {"correlation": corr}}

    def kernel(name, ts, dur, corr):
        return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur,
                "args": {"correlation": corr, "stream": 7}}

    events = [
        ev("ProfilerStep#1", 0, 1000, "user_annotation"),
        ev("my forward", 0, 200, "user_annotation"),
        ev("aten::linear", 10, 100), ev("aten::addmm", 15, 90), launch(20, 1),
        ev("aten::relu", 120, 20), launch(125, 2),
        ev("autograd::engine::evaluate_function: AddmmBackward0", 300, 200),
        ev("aten::mm", 310, 50), launch(320, 3), launch(330, 5),
        ev("Optimizer.step#SGD.step", 600, 300, "user_annotation"), launch(610, 4),
        launch(1500, 9),  # after the step: its kernel is not the step's
        kernel("sgemm", 50, 30, 1), kernel("relu_kernel", 85, 10, 2), kernel("sgemm_bwd", 400, 40, 3),
        kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 420, 50, 5), kernel("multi_tensor_apply", 700, 20, 4),
        kernel("late", 1600, 100, 9),
    ]
    trace = os.path.join(tmp, "device.json")
    json.dump({"traceEvents": events, "deviceProperties": [{"name": "NVIDIA H100"}]}, open(trace, "w"))
    setup = ["--train", "--optimizer", "sgd", "--format", "json"]
    doc = json.loads(run("compare", MLP, "--trace", trace, *setup))
    m = metrics(doc)
    near = lambda a, b: abs(a - b) < 1e-12
    assert near(m["step"]["measured"], 670e-6), m["step"]       # 50 .. 720 on the device
    assert near(m["forward"]["measured"], 40e-6), m["forward"]  # sgemm + relu_kernel
    assert near(m["backward"]["measured"], 40e-6), m["backward"]
    assert near(m["optimizer"]["measured"], 20e-6), m["optimizer"]
    assert near(m["comm"]["measured"], 50e-6) and abs(m["comm_hidden"]["measured"] - 40) < 1e-9, m
    ops = {o["op"]: o for o in doc["ops"]}
    assert near(ops["aten::addmm"]["measured_s"], 30e-6) and ops["aten::addmm"]["measured_count"] == 1, ops
    assert near(ops["aten::relu"]["measured_s"], 10e-6), ops
    assert near(ops["aten::mm"]["measured_s"], 40e-6), ops
    assert any("NVIDIA H100" in n and "85% idle" in n for n in doc["notes"]), doc["notes"]
    # The groups: the forward's addmm and relu and the joint backward's mm aligned in order.
    groups = {(g["phase"], g["ops"]): g for g in doc["groups"]}
    matched = {k: g["measured_s"] for k, g in groups.items() if g["matched_ops"]}
    assert any(p == "forward" and "aten::addmm" in o for p, o in matched), doc["groups"]
    assert any(p == "backward" and "aten::mm" in o for p, o in matched), doc["groups"]
    assert near(sum(matched.values()), 30e-6 + 10e-6 + 40e-6), doc["groups"]
    step = metrics(json.loads(run("compare", MLP, "--trace", trace, "--step", "my forward", *setup)))["step"]
    assert near(step["measured"], 45e-6), step  # 50 .. 95
    r = subprocess.run([CLI, "compare", MLP, "--trace", trace, "--step", "no such step"], capture_output=True,
                       text=True)
    assert r.returncode != 0 and r.stderr.count("\n") == 1 and "no such step" in r.stderr, r.stderr
    print("ok device trace: kernels by launch, device span, phases, NCCL hidden share, --step")


def ranks(tmp):
    model = os.path.join(ROOT, "models/resnet18.onnx")
    setup = ["--dim", "batch=32", "--train", "--world-size", "8", "--intra", "pcie-gen4"]
    folder = os.path.join(tmp, "ranks")
    os.mkdir(folder)
    rank0 = os.path.join(folder, "rank-0.json")
    run(model, "--exit-zero", "-q", "--emit-trace", rank0, *setup)
    doc = json.load(open(rank0))
    for e in doc["traceEvents"]:  # rank 1 is 10% slower in everything
        for k in ("ts", "dur"):
            if k in e:
                e[k] *= 1.1
    doc["distributedInfo"]["rank"] = 1
    with gzip.open(os.path.join(folder, "rank-1.json.gz"), "wt") as f:
        json.dump(doc, f)
    one = metrics(json.loads(run("compare", model, "--trace", rank0, "--format", "json", *setup)))["step"]["measured"]
    gz = metrics(json.loads(run("compare", model, "--trace", os.path.join(folder, "rank-1.json.gz"), "--format", "json",
                                *setup)))["step"]["measured"]
    assert abs(gz - 1.1 * one) < 1e-6 * one, (gz, one)
    both = json.loads(run("compare", model, "--trace", folder, "--format", "json", *setup))
    assert abs(metrics(both)["step"]["measured"] - 1.05 * one) < 1e-6 * one, both["metrics"]
    assert [r["rank"] for r in both["ranks"]] == [0, 1], both["ranks"]
    assert any("slowest" not in n and "rank 1" in n for n in both["notes"]), both["notes"]
    text = run("compare", model, "--trace", folder, *setup)
    assert "per rank (measured)" in text, text
    print(f"ok two ranks (one gzipped): mean step {metrics(both)['step']['measured']:.6f} s")


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
        device_trace(tmp)
        ranks(tmp)
        own_snapshot(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
