"""graphlint compare per user function, on a real torch.profiler trace
recorded here with with_stack=True (docs/viewers.md#compare).

A small model defined in this file is captured by graphlint's exporter (each
op recorded at the line and function of this file that issued it) and run
for one eager training step under the profiler on the CPU. The profiler names
a Python frame by its function's first line, so compare's `functions` rows
must be exactly the two functions below that run ops (Net.forward and
Net.head), each with its measured calls found through the trace's frames;
with the frames stripped there are no rows and a note says why.
GRAPHLINT_CLI is the binary; torch 2.x.
"""
import inspect
import json
import os
import subprocess
import sys
import tempfile

import torch

CLI = os.environ["GRAPHLINT_CLI"]


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(64, 256)
        self.fc2 = torch.nn.Linear(256, 10)

    def forward(self, x, y):
        h = torch.relu(self.fc1(x))
        return torch.nn.functional.cross_entropy(self.head(h), y)

    def head(self, h):
        return self.fc2(h)


def compare(fx, trace):
    r = subprocess.run([CLI, "compare", fx, "--trace", trace, "--train", "--optimizer", "sgd", "--kernels", "cpu",
                        "--backend", "eager", "--format", "json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def main():
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
    from graphlint.export import cli as exporter
    torch.manual_seed(0)
    net = Net()
    inputs = (torch.randn(32, 64), torch.randint(0, 10, (32,)))
    with tempfile.TemporaryDirectory() as tmp:
        fx = os.path.join(tmp, "net.fx.json")
        exporter.export_module(net, inputs, fx, train=True)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)

        def step():
            net(*inputs).backward()
            opt.step()
            opt.zero_grad(set_to_none=True)

        step()
        from torch.profiler import ProfilerActivity, profile, record_function
        with profile(activities=[ProfilerActivity.CPU], with_stack=True) as prof:
            with record_function("ProfilerStep#1"):
                step()
        trace = os.path.join(tmp, "net.trace.json")
        prof.export_chrome_trace(trace)

        doc = compare(fx, trace)
        here = os.path.basename(__file__)
        want = {f"{here}:{inspect.getsourcelines(f)[1]}:{f.__name__}" for f in (Net.forward, Net.head)}
        rows = {r["function"]: r for r in doc["functions"]}
        assert set(rows) == want, (sorted(rows), sorted(want))
        for key, r in rows.items():
            assert r["predicted_count"] > 0 and r["measured_count"] > 0 and r["measured_s"] > 0, (key, r)
        print("ok functions: " + ", ".join(f"{k} {r['measured_count']} calls {r['measured_s'] * 1e6:.0f} us"
                                       for k, r in sorted(rows.items())))

        # The same trace without its Python frames: no rows, a note saying why.
        events = json.load(open(trace))
        events["traceEvents"] = [e for e in events["traceEvents"] if e.get("cat") != "python_function"]
        bare = os.path.join(tmp, "bare.json")
        json.dump(events, open(bare, "w"))
        doc = compare(fx, bare)
        assert not doc["functions"] and any("with_stack=True" in n for n in doc["notes"]), doc["notes"]
        print("ok without frames: a note, no rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
