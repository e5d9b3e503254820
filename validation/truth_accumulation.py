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

  PY validation/truth_accumulation.py
  PY validation/truth_accumulation.py --case vit_small 8 train

--case measures one case of validation/memory_matrix.py as its truth does, and
again with each out-of-place accumulation in backward counted as eager
without a mode runs it (in place: no new buffer): the forward+backward peak
beyond the resident states both ways. Eager adds in place only into a
buffer it alone holds, so the second figure is the lowest the accumulations
allow; graphlint's plan applies that condition to each.

  PY validation/truth_accumulation.py --against tests/fixtures/memory/matrix-torch2.14.json [--only NAME ...]

--against measures every training case of a truth file again without any
dispatch mode: one forward+backward, after the truth's warm-up step, under
torch.profiler with profile_memory, its allocator events summed and sampled
at the end of every aten op the mode would see (not CompositeImplicitAutograd,
not called from inside another such op's kernel), and prints it beside the
truth's figure. Where they differ: eager's in-place accumulations (lower);
torch.utils.checkpoint's saved CPU RNG state (torch.get_rng_state(), 5,056 B
per checkpointed call, which no aten op makes, so the mode never sees it:
higher); and one blind spot of the profiler's samples, a checkpoint's early
stop, which raises inside the last recomputed op's autograd kernel, so its
output is freed before that op's end is sampled (lower: the mode samples it).
"""
import functools
import gc
import json
import os
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


def matrix():
    """memory_matrix (beside this script), imported only by the modes that measure a matrix case."""
    import memory_matrix
    return memory_matrix


@functools.lru_cache(maxsize=None)
def composite(name):
    """Whether an aten op decomposes above the dispatch modes (they see its parts, not it)."""
    try:
        return torch._C._dispatch_has_kernel_for_dispatch_key(name, "CompositeImplicitAutograd")
    except RuntimeError:
        return False


def eager_forward_backward(name, batch, mode):
    """eager_peak of a matrix case."""
    return eager_peak(*matrix().variant(name, batch, mode))


def eager_peak(model, inputs):
    """(forward+backward peak beyond what was live before it, the op there) of
    one training step of `model` run without a dispatch mode, as the matrix's
    truth runs it (a warm-up step, Adam): the allocator's events under the
    profiler, sampled at the end of every op a mode would see."""
    forward_backward, opt = matrix().training_step(model, inputs)
    forward_backward()  # the truth's warm-up step: the optimizer state exists
    opt.step()
    opt.zero_grad(set_to_none=True)
    gc.collect()
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        forward_backward()
    # The profiler's own events, in integer nanoseconds (torch 1.13: microseconds).
    events = prof.profiler.kineto_results.events()
    if hasattr(events[0], "start_ns"):
        begin, length = (lambda e: e.start_ns()), (lambda e: e.duration_ns())
    else:
        begin, length = (lambda e: e.start_us()), (lambda e: e.duration_us())
    allocs = sorted((begin(e), e.nbytes()) for e in events if e.name() == "[memory]")
    # What a mode's __torch_dispatch__ would have been called for: an aten op
    # that is not CompositeImplicitAutograd and runs inside no other such op
    # (nesting per thread, from the intervals).
    ops = sorted(((e.start_thread_id(), begin(e), -(begin(e) + length(e)), e.name()) for e in events
                  if e.name().startswith("aten::")))
    ends, open_ops, thread = [], [], None
    for tid, t0, neg_end, name in ops:
        if tid != thread:
            open_ops, thread = [], tid
        while open_ops and open_ops[-1][0] <= t0:
            open_ops.pop()
        kernel = not composite(name)
        if kernel and not any(k for _, k in open_ops):
            ends.append((-neg_end, name[len("aten::"):]))
        open_ops.append((-neg_end, kernel))
    ends.sort()
    live = peak = 0
    peak_op, i = None, 0
    for t, op in ends:
        while i < len(allocs) and allocs[i][0] <= t:
            live += allocs[i][1]
            i += 1
        if live > peak:
            peak, peak_op = live, op
    return peak, peak_op


def against(path, only):
    """Every training case of a truth file measured again without a mode."""
    with open(path) as f:
        cases = json.load(f)["cases"]
    print("torch %s, %s: forward+backward peak beyond the resident states" % (torch.__version__, os.path.basename(path)))
    print("%-36s %12s %12s %8s  %s" % ("case", "truth", "eager", "diff", "eager's peak op"))
    for key, v in sorted(cases.items()):
        name, batch, mode = key.split("/")
        if "fwd_bwd_peak" not in v or (only and name not in only):
            continue
        truth = v["fwd_bwd_peak"] - v["resident"]
        eager, op = eager_forward_backward(name, int(batch[1:]), mode)
        print("%-36s %12d %12d %+7.2f%%  %s" % (key, truth, eager, 100.0 * (eager - truth) / truth, op), flush=True)


def measure_case(name, batch, mode):
    """(truth's fwd+bwd peak beyond the resident states, the same with in-place accumulation, accumulations)."""
    mx = matrix()
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
        eager, _ = eager_forward_backward(name, batch, mode)
        print("%s b%d %s, torch %s: forward+backward peak beyond the resident states %d B as measured, "
              "%d B with its %d accumulations in place, %d B measured without a mode"
              % (name, batch, mode, torch.__version__, truth, inplace, n, eager))
        return 0
    if len(sys.argv) >= 3 and sys.argv[1] == "--against":
        only = sys.argv[4:] if len(sys.argv) > 3 and sys.argv[3] == "--only" else []
        against(sys.argv[2], only)
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
