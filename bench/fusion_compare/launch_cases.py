#!/usr/bin/env python3
"""The kernels TorchInductor (CPU) emits for the small graphs of
tests/unit/InductorCpuLaunchTest.cpp, the measured truth of its expectations
(docs/fusion.md#inductor-cpu-launches). Same hooks as capture_inductor.py:
codegen runs, the generated C++ is never compiled.

  launch_cases.py     (with the torch 2.x environment: $GRAPHLINT_VENV_VISION/bin/python)
prints, per case, the kernel count and each kernel's scheduler buffers.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

import torch  # noqa: E402
import torch._inductor.config as iconfig  # noqa: E402

import capture_inductor as ci  # noqa: E402

F = torch.nn.functional


def param(*shape):
    return torch.nn.Parameter(torch.randn(*shape))


class FirstConv(torch.nn.Module):  # ConvolutionOnGraphInputsPaysACopyOnlyKernel
    def __init__(self):
        super().__init__()
        self.w = param(8, 8, 3, 3)

    def forward(self, x):
        return F.relu(F.conv2d(x, self.w, padding=1))


class Chain(torch.nn.Module):  # WeightCopyJoinsTheOpenCppFunction
    def __init__(self):
        super().__init__()
        self.w1, self.w2 = param(8, 8, 1, 1), param(8, 8, 3, 3)

    def forward(self, x):
        return F.conv2d(F.relu(F.conv2d(F.relu(x), self.w1)), self.w2, padding=1)


class ConcatBranches(torch.nn.Module):  # ConcatFeedingAConvolutionIsCopiedOnceForAllReaders
    def __init__(self):
        super().__init__()
        self.w1, self.w2 = param(4, 16, 1, 1), param(4, 16, 1, 1)

    def forward(self, a, b):
        c = torch.cat([F.relu(a), F.relu(b)], 1)
        return F.conv2d(c, self.w1), F.conv2d(c, self.w2)


class Independent(torch.nn.Module):  # LoopNestsBetweenTwoLibraryCallsShareOneFunction
    def forward(self, x, z):
        return torch.exp(x), z.amax(1)


class SharedHeads(torch.nn.Module):  # SharedHeadWeightsOnTwoLevels
    def __init__(self):
        super().__init__()
        self.w, self.v = param(64, 64, 3, 3), param(64, 64, 3, 3)

    def forward(self, p3, p4):
        return [F.conv2d(F.relu(F.conv2d(F.relu(p), self.w, padding=1)), self.v, padding=1) for p in (p3, p4)]


CASES = [
    ("first_conv", FirstConv(), (torch.randn(1, 8, 16, 16),)),
    ("chain", Chain(), (torch.randn(1, 8, 16, 16),)),
    ("concat_branches", ConcatBranches(), (torch.randn(1, 8, 8, 8), torch.randn(1, 8, 8, 8))),
    ("independent", Independent(), (torch.randn(4, 64), torch.randn(8, 32))),
    ("shared_heads", SharedHeads(), (torch.randn(1, 64, 32, 32), torch.randn(1, 64, 16, 16))),
]


def main():
    torch.manual_seed(0)
    iconfig.fx_graph_cache = False
    ci._patch()
    for name, module, inputs in CASES:
        ci.REC.graphs.clear()
        torch._dynamo.reset()
        with torch.no_grad():
            torch.compile(module, backend=ci.backend(inputs))(*inputs)
        for g in ci.REC.graphs:
            kernels = [k for k in g["kernels"] if k["kind"] != "extern:MultiOutput"]
            print(f"{name}: {len(kernels)} kernels: " +
                  ", ".join(f"{'extern' if k['kind'].startswith('extern') else 'cpp'}{k['buffers']}" for k in kernels))


if __name__ == "__main__":
    main()
