"""graphlint compare on real GPU traces from public sources
(tests/fixtures/traces/hta/: HolisticTraceAnalysis's test data, MIT licence,
docs/validation.md "compare on public GPU traces").

- alexnet_a100_forward.json.gz: torchvision AlexNet's forward, batch 64, fp32,
  eager, on an A100 40GB (PARAM's benchmark; the model is recognisable from
  its weight copies: conv1 64x3x11x11, fc 4096x9216). The step is the last
  `measure|forward` annotation.
- minitoy_mi250_train.json.gz: the torch.profiler tutorial's toy (Linear
  128->128, ReLU, MSE loss, SGD, batch 5) for one training step on an MI250
  under ROCm 6.2 (ProfilerStep#1).

What is checked exactly: graphlint's measured side (the device's span of the
step, the busy time per phase, each aten op's kernel time through the launch
correlation ids) against the same figures computed here from the JSON by
plain Python. What is printed: predicted vs measured, the rows of
docs/validation.md (AlexNet only: graphlint has no MI250 profile, and the
toy's kernels last microseconds).

Runs under the torch 2.x vision environment (torchvision for AlexNet);
GRAPHLINT_CLI is the binary.
"""
import gzip
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.environ["GRAPHLINT_CLI"]
TRACES = os.path.join(ROOT, "tests/fixtures/traces/hta")
DEVICE_CATS = ("kernel", "gpu_memcpy", "gpu_memset")


def compare(model, trace, *args):
    r = subprocess.run([CLI, "compare", model, "--trace", trace, "--format", "json", *args], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def metrics(doc):
    return {m["name"]: m for m in doc["metrics"]}


def union(intervals):
    total, end = 0.0, -1e300
    for a, b in sorted(intervals):
        if b > end:
            total += b - max(a, end)
            end = b
    return total


def truth(path, step_name):
    """The measured figures from the JSON, computed without graphlint: the
    step's launches (by correlation id), their device events' span and busy
    time, per phase and per top-level aten op of `top_ops`."""
    events = json.load(gzip.open(path))["traceEvents"]
    x = [e for e in events if e.get("ph") == "X"]
    step = max((e for e in x if step_name in e["name"] and e.get("cat") not in DEVICE_CATS + ("gpu_user_annotation",)),
               key=lambda e: e["ts"])
    lo, hi = step["ts"], step["ts"] + step["dur"]
    host = [e for e in x if e.get("cat") not in DEVICE_CATS and lo <= e["ts"] <= hi]
    launches = {e["args"]["correlation"]: e for e in host if "correlation" in e.get("args", {})}
    device = [e for e in x if e.get("cat") in DEVICE_CATS and e.get("args", {}).get("correlation") in launches]
    backward = [(e["ts"], e["ts"] + e["dur"]) for e in host if e["name"].startswith("autograd::engine::evaluate_function")]
    optimizer = [(e["ts"], e["ts"] + e["dur"]) for e in host if e["name"].startswith("Optimizer.")]
    inside = lambda t, spans: any(a <= t < b for a, b in spans)
    phases = {"forward": [], "backward": [], "optimizer": []}
    for k in device:
        t = launches[k["args"]["correlation"]]["ts"]
        phase = "optimizer" if inside(t, optimizer) else "backward" if inside(t, backward) else "forward"
        phases[phase].append((k["ts"], k["ts"] + k["dur"]))
    ops = [e for e in host if e.get("cat") == "cpu_op"]

    def op_seconds(name):
        """Kernel time launched under each outermost `name` op."""
        total = 0.0
        for op in ops:
            if op["name"] != name:
                continue
            if any(o is not op and o["name"] == name and o["tid"] == op["tid"] and o["ts"] <= op["ts"]
                   and op["ts"] + op["dur"] <= o["ts"] + o["dur"] for o in ops):
                continue
            for k in device:
                launch = launches[k["args"]["correlation"]]
                if launch["tid"] == op["tid"] and op["ts"] <= launch["ts"] < op["ts"] + op["dur"]:
                    total += k["dur"]
        return total * 1e-6

    return {
        "step": (max(k["ts"] + k["dur"] for k in device) - min(k["ts"] for k in device)) * 1e-6,
        "busy": union([(k["ts"], k["ts"] + k["dur"]) for k in device]) * 1e-6,
        **{p: union(v) * 1e-6 for p, v in phases.items()},
        "op": op_seconds,
    }


def near(a, b):
    return abs(a - b) <= 1e-9 + 1e-9 * abs(b)


def alexnet(tmp):
    import torch
    import torchvision
    from graphlint.export import cli as exporter
    fx = os.path.join(tmp, "alexnet.fx.json")
    exporter.export_module(torchvision.models.alexnet(weights=None), (torch.randn(64, 3, 224, 224),), fx)
    trace = os.path.join(TRACES, "alexnet_a100_forward.json.gz")
    doc = compare(fx, trace, "--step", "measure|forward", "--target", "A100-40GB", "--precision", "fp32",
                  "--backend", "eager")
    m, t = metrics(doc), truth(trace, "measure|forward")
    assert near(m["step"]["measured"], t["step"]), (m["step"], t["step"])
    assert near(m["forward"]["measured"], t["forward"]), (m["forward"], t["forward"])
    ops = {o["op"]: o for o in doc["ops"]}
    # make_fx records aten::convolution and addmm; eager's conv2d and linear enclose them.
    for graph_op, eager_op in (("aten::convolution", "aten::conv2d"), ("aten::addmm", "aten::linear")):
        assert ops[graph_op]["measured_count"] == (5 if graph_op == "aten::convolution" else 3), ops[graph_op]
        assert near(ops[graph_op]["measured_s"], t["op"](eager_op)), (graph_op, ops[graph_op], t["op"](eager_op))
    # Per fusion group (eager: one op per group): every kernel op aligned in
    # order, so the groups hold exactly the per-op rows' measured time.
    groups = doc["groups"]
    assert groups and all(g["matched_ops"] == g["kernel_ops"] for g in groups), groups
    assert near(sum(g["measured_s"] for g in groups), sum(o["measured_s"] for o in doc["ops"])), groups
    conv1 = [g for g in groups if g["ops"] == "aten::convolution"]
    assert len(conv1) == 5 and max(conv1, key=lambda g: g["measured_s"])["group"] == min(g["group"] for g in conv1)
    print(f"alexnet A100 forward, batch 64: step predicted {m['step']['predicted'] * 1e3:.3f} ms, measured "
          f"{m['step']['measured'] * 1e3:.3f} ms ({100 * m['step']['relative_error']:+.1f}%); device busy "
          f"{t['busy'] * 1e3:.3f} ms")
    for o in doc["ops"][:6]:
        print(f"  {o['op']:<28} predicted {o['predicted_s'] * 1e6:9.1f} us  measured {o['measured_s'] * 1e6:9.1f} us")
    return m


def minitoy(tmp):
    import torch
    from graphlint.export import cli as exporter

    class Toy(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(128, 128)

        def forward(self, x, y):
            return torch.nn.functional.mse_loss(torch.relu(self.fc(x)), y)

    fx = os.path.join(tmp, "toy.fx.json")
    exporter.export_module(Toy(), (torch.randn(5, 128), torch.randn(5, 128)), fx, train=True)
    trace = os.path.join(TRACES, "minitoy_mi250_train.json.gz")
    # The measured side does not depend on the target; MI300X is the AMD profile graphlint has.
    doc = compare(fx, trace, "--train", "--optimizer", "sgd", "--target", "MI300X", "--backend", "eager")
    m, t = metrics(doc), truth(trace, "ProfilerStep#1")  # #2 is empty: the profiler stopped in it
    for k in ("step", "forward", "backward", "optimizer"):
        assert near(m[k]["measured"], t[k]), (k, m[k], t[k])
    ops = {o["op"]: o for o in doc["ops"]}
    assert near(ops["aten::mm"]["measured_s"], t["op"]("aten::mm")), (ops["aten::mm"], t["op"]("aten::mm"))
    print(f"minitoy MI250 train step: measured step {m['step']['measured'] * 1e6:.1f} us (forward "
          f"{m['forward']['measured'] * 1e6:.1f}, backward {m['backward']['measured'] * 1e6:.1f}, optimizer "
          f"{m['optimizer']['measured'] * 1e6:.1f} us on the device)")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        alexnet(tmp)
        minitoy(tmp)
    print("ok: graphlint's measured figures equal the traces' own, on two public GPU traces")
    return 0


if __name__ == "__main__":
    sys.exit(main())
