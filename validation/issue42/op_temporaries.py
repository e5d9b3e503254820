#!/usr/bin/env python3
"""Where the CPU truth's peak falls, and what the op running there allocates for itself.

The user trial's truth (shared/user-trial/truth.py) is torch.profiler's running
"Total Allocated" over the second eager Adam step on the CPU: it counts memory
an op allocates and frees before it returns (oneDNN's reorder buffers, a
kernel's scratch), which graphlint's plan does not (docs/memory.md,
Limitations: kernels' internal workspaces). This script names the op at the
peak and prints the allocations around it, so a miss can be split into what the
plan lacks and what the kernel keeps to itself.

  cd COPY_OF_user-trial
  PYTHONPATH=. build/venv-vision/bin/python validation/issue42/op_temporaries.py vision:convnext_atto \\
      'x:float32[8,3,128,128]' 'y<100:int64[8]'
  PYTHONPATH=. build/venv/bin/python validation/issue42/op_temporaries.py unet:model \\
      'x:float32[16,3,32,32]' 't<1000:int64[16]' 'n:float32[16,3,32,32]'
  ... --probe-convs   # also: single convolutions, what their backward allocates beyond its outputs

Inputs are written as in truth_generic.py: NAME[<HIGH]:DTYPE[SHAPE].
"""
import argparse
import gc
import importlib
import json
import os
import sys
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile

MiB = 2 ** 20


def make_input(spec):
    name, rest = spec.split(":")
    dtype, shape = rest.split("[")
    shape = [int(x) for x in shape.rstrip("]").split(",")]
    dtype = getattr(torch, dtype)
    if dtype in (torch.int64, torch.int32):
        high = int(name.split("<")[1]) if "<" in name else 1000
        return torch.randint(0, high, shape, dtype=dtype)
    return torch.randn(shape, dtype=dtype)


def profiled(fn):
    """The [memory] events and cpu ops of one profiled call, in time order."""
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True, record_shapes=True) as prof:
        fn()
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        path = f.name
    prof.export_chrome_trace(path)
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    os.unlink(path)
    mem = sorted((e for e in events if e.get("name") == "[memory]"), key=lambda e: e["ts"])
    ops = [e for e in events if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
    return mem, ops


def innermost(ops, ts):
    around = [e for e in ops if e["ts"] <= ts <= e["ts"] + e["dur"]]
    return sorted(around, key=lambda e: e["ts"])


def model_step(factory, specs):
    module, fn = factory.split(":")
    m = getattr(importlib.import_module(module), fn)().train()
    torch.manual_seed(1)
    inputs = tuple(make_input(s) for s in specs)
    opt = torch.optim.Adam(list(m.parameters()), lr=1e-3, foreach=False)

    def step():
        out = m(*inputs)
        loss = out if out.dim() == 0 else out.sum()
        loss.backward()
        del loss, out
        opt.step()
        opt.zero_grad(set_to_none=True)

    step()  # warm-up: Adam's state
    gc.collect()
    mem, ops = profiled(step)
    start = mem[0]["args"]["Total Allocated"] - mem[0]["args"]["Bytes"]
    peak = max(mem, key=lambda e: e["args"]["Total Allocated"])
    print(f"step peak over the resident states: {(peak['args']['Total Allocated'] - start) / MiB:.2f} MiB")
    for e in innermost(ops, peak["ts"]):
        print(f"  in {e['name']}  {e.get('args', {}).get('Input Dims', '')}")
    i = mem.index(peak)
    print("allocations before and after the peak (running total, change, op):")
    for e in mem[max(0, i - 12): i + 4]:
        ops_at = innermost(ops, e["ts"])
        print(f"  {(e['args']['Total Allocated'] - start) / MiB:9.2f} {e['args']['Bytes'] / MiB:+8.2f}  "
              f"{ops_at[-1]['name'] if ops_at else '?'}")


def probe_conv(n, cin, cout, hw, k, groups, channels_last):
    """The largest allocations of one convolution's backward (outputs included)."""
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    conv = torch.nn.Conv2d(cin, cout, k, padding=k // 2, groups=groups)
    x = torch.randn(n, cin, hw, hw).contiguous(memory_format=fmt).requires_grad_()
    y = conv(x)
    gy = torch.ones_like(y).contiguous(memory_format=fmt)
    mem, _ = profiled(lambda: torch.autograd.grad(y, [x, conv.weight, conv.bias], gy))
    sizes = sorted((e["args"]["Bytes"] // 4 for e in mem if e["args"]["Bytes"] > 0), reverse=True)[:4]
    return sizes


def probe_convs():
    print("convolution backward, fp32, largest allocations in elements (x, gy: the input and output sizes):")
    for n, c, hw, k in [(8, 160, 8, 7), (8, 320, 4, 7), (4, 160, 8, 7), (8, 160, 16, 7), (8, 64, 16, 5), (8, 160, 8, 3)]:
        print(f"  depthwise {k}x{k} channels-last n{n} c{c} {hw}x{hw}: {probe_conv(n, c, c, hw, k, c, True)}  "
              f"x={n * c * hw * hw}  c*k*k*256={c * k * k * 256}")
    for n, cin, cout, hw in [(16, 192, 64, 32), (4, 192, 64, 32)]:
        print(f"  dense 3x3 contiguous n{n} {cin}->{cout} {hw}x{hw}: {probe_conv(n, cin, cout, hw, 3, 1, False)}  "
              f"x={n * cin * hw * hw}  gy={n * cout * hw * hw}  w={cin * cout * 9}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("factory", nargs="?", help="MODULE:FUNCTION returning the module (the trial's factories)")
    ap.add_argument("inputs", nargs="*", help="NAME[<HIGH]:DTYPE[SHAPE], as truth_generic.py")
    ap.add_argument("--probe-convs", action="store_true")
    a = ap.parse_args()
    sys.path.insert(0, os.getcwd())  # the trial's model files
    if a.factory:
        model_step(a.factory, a.inputs)
    if a.probe_convs:
        probe_convs()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, oneDNN "
          f"{'on' if torch.backends.mkldnn.is_available() else 'off'}")


if __name__ == "__main__":
    main()
