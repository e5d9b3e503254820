#!/usr/bin/env python3
"""How the memory truth's own TorchDispatchMode changes eager's gradient
accumulation (docs/validation.md, "The truth's accumulation").

The matrix's truth (validate_memory.LiveStorages) is a TorchDispatchMode.
Under any dispatch mode, autograd's InputBuffer sums two gradients of one
tensor into a new buffer (aten::add); without one it adds into the buffer
it alone holds (aten::add_). The example is nn.MultiheadAttention's packed
in-projection: three selects of one tensor, whose three input-sized
gradients are accumulated. Prints the accumulation ops the profiler records
each way (the last is w.grad's own, in place either way), and exits 1 if
eager without a mode does not accumulate in place (torch 1.13 never does:
its InputBuffer always sums into a new buffer).

  PY tools/truth_accumulation.py
  PY tools/truth_accumulation.py --case vit_small 8 train

--case measures one case of tools/memory_matrix.py as its truth does, and
again with each out-of-place accumulation in backward counted as eager
without a mode runs it (in place: no new buffer): the forward+backward peak
beyond the resident states both ways. Eager adds in place only into a
buffer it alone holds, so the second figure is the lowest the accumulations
allow; graphlint's plan applies that condition to each.
"""
import sys

import torch
from torch.profiler import ProfilerActivity, profile
from torch.utils._python_dispatch import TorchDispatchMode


class PassThrough(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def accumulation_ops():
    """The aten add ops one backward runs after its select_backwards."""
    w = torch.randn(16, 48, requires_grad=True)
    x = torch.randn(4, 16)

    def step():
        packed = (x @ w).view(4, 3, 16).transpose(0, 1).contiguous()
        q, k, v = packed[0], packed[1], packed[2]
        (q * 2 + k * 3 + v * 4).sum().backward()

    step()  # w.grad exists: later steps accumulate into it in place either way
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step()
    # In time order; under a mode the profiler records each op twice (the
    # mode's call and, within its time, the kernel's): keep the outer one.
    events = sorted((e for e in prof.events() if e.name in ("aten::select_backward", "aten::add", "aten::add_")),
                    key=lambda e: (e.time_range.start, -e.time_range.end))
    outer = []
    for e in events:
        if not (outer and outer[-1].name == e.name and e.time_range.end <= outer[-1].time_range.end):
            outer.append(e)
    events = outer
    names = [e.name for e in events]
    # What follows the first select_backward: the two accumulations, then
    # w.grad's own accumulation (in place on every torch).
    return [n for n in names[names.index("aten::select_backward"):] if n != "aten::select_backward"]


def measure_case(name, batch, mode):
    """(truth's fwd+bwd peak beyond the resident states, the same with in-place accumulation, accumulations)."""
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    import memory_matrix as mx
    from validate_memory import LiveStorages

    class Live(LiveStorages):
        backward = False

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            op = str(func.overloadpacket.__name__)
            self.backward |= op == "ones_like"
            out = super().__torch_dispatch__(func, types, args, kwargs)
            # InputBuffer's sum of two gradients of one tensor: same shapes,
            # neither needing a gradient itself.
            acc = (self.backward and op == "add" and len(args) >= 2 and
                   all(isinstance(a, torch.Tensor) and not a.requires_grad for a in args[:2]) and
                   args[0].shape == args[1].shape == out.shape)
            if acc:  # the sample this op just took
                self.saved_by_inplace[-1] = out.untyped_storage().nbytes()
            return out

        def sample(self, label):
            super().sample(label)
            self.saved_by_inplace.append(0)

    live = Live()
    live.saved_by_inplace = []
    mx.measure(*mx.variant(name, batch, mode), mode, live)
    live.end = live.backward_end
    resident = live.samples[0][1]
    samples = list(zip(live.samples[:live.end], live.saved_by_inplace[:live.end]))
    return (max(b for (_, b), _ in samples) - resident, max(b - e for (_, b), e in samples) - resident,
            sum(1 for _, e in samples if e))


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--case":
        name, batch, mode = sys.argv[2], int(sys.argv[3]), sys.argv[4]
        truth, inplace, n = measure_case(name, batch, mode)
        print("%s b%d %s, torch %s: forward+backward peak beyond the resident states %d B as measured, "
              "%d B with its %d accumulations in place" % (name, batch, mode, torch.__version__, truth, inplace, n))
        return 0
    plain = accumulation_ops()
    with PassThrough():
        moded = accumulation_ops()
    print("torch %s" % torch.__version__)
    print("without a dispatch mode: %s" % " ".join(plain))
    print("under a dispatch mode:   %s" % " ".join(moded))
    return 0 if plain[:2] == ["aten::add_", "aten::add_"] else 1


if __name__ == "__main__":
    sys.exit(main())
