"""--device cuda on a machine without a GPU (and a model's own .cuda()):
tensors are traced on the CPU and recorded as on the GPU (fx_record)."""

import contextlib
import os
import sys

import torch


def logical_device(t):
    """The device a tensor is recorded on: the simulated one, else its own."""
    return getattr(t, "_graphlint_device", None) or str(torch._C._TensorBase.device.__get__(t))


@contextlib.contextmanager
def simulate_device_calls(rec):
    """While `rec` (fx_record.Recorder) records a trace on a machine without a GPU, `.cuda()` / `.to("cuda")` fail before they
    reach the dispatcher and `.cpu()` of a CPU tensor never reaches it; route
    them to aten._to_copy, which the recorder runs on the CPU and records on
    the device the program would use."""
    orig_cuda, orig_cpu, orig_to, orig_init = torch.Tensor.cuda, torch.Tensor.cpu, torch.Tensor.to, torch.cuda._lazy_init

    def to_copy(t, device, dtype=None):
        if logical_device(t) == device and dtype in (None, t.dtype):
            return t
        return torch.ops.aten._to_copy.default(t, dtype=dtype, device=torch.device(device))

    def cuda(self, device=None, non_blocking=False, **kw):
        index = device.index if isinstance(device, torch.device) else device
        return to_copy(self, f"cuda:{index or 0}")

    def cpu(self, memory_format=torch.preserve_format):
        return to_copy(self, "cpu")  # a no-op on real CPU tensors, a copy from the recorded GPU

    def to(self, *args, **kwargs):
        dev = kwargs.get("device")
        dtype = kwargs.get("dtype")
        for a in args:
            if isinstance(a, (str, torch.device)):
                dev = a
            elif isinstance(a, torch.dtype):
                dtype = a
        if dev is not None and torch.device(dev).type in ("cuda", "cpu") and not any(isinstance(a, torch.Tensor) for a in args):
            d = torch.device(dev)
            return to_copy(self, f"cuda:{d.index or 0}" if d.type == "cuda" else "cpu", dtype)
        return orig_to(self, *args, **kwargs)

    # `x.device` / `x.is_cuda` answer with the recorded device, so that code
    # such as `torch.arange(n, device=x.device)` follows x to the GPU. The
    # getset descriptors live on the C base class; torch.Tensor shadows them.
    real_device = torch._C._TensorBase.device

    def device_of(t):
        if not rec.in_dispatch and hasattr(t, "_graphlint_device"):
            return torch.device(t._graphlint_device)
        return real_device.__get__(t)

    # torch 2.x's FakeTensor answers `.device` with its own property (the
    # device it is traced on): without the same answer there, `.to(x.device)`
    # after `.cpu()` was a no-op and the copy back to the GPU went unrecorded.
    fake_cls = _fake_tensor_class()
    orig_fake_device = fake_cls.__dict__.get("device") if fake_cls is not None else None

    # Only code outside torch (the model's, transformers') gets the recorded
    # device: torch's own Python (decompositions, fake-tensor bookkeeping)
    # must keep seeing the device the trace runs on.
    torch_dir = os.path.dirname(torch.__file__) + os.sep

    def fake_device_of(t):
        if not rec.in_dispatch and hasattr(t, "_graphlint_device") and \
                not sys._getframe(1).f_code.co_filename.startswith(torch_dir):
            return torch.device(t._graphlint_device)
        return orig_fake_device.__get__(t)

    torch.Tensor.cuda, torch.Tensor.cpu, torch.Tensor.to, torch.cuda._lazy_init = cuda, cpu, to, (lambda: None)
    torch.Tensor.device = property(device_of)
    torch.Tensor.is_cuda = property(lambda t: device_of(t).type == "cuda")
    if orig_fake_device is not None:
        fake_cls.device = property(fake_device_of)
    try:
        yield
    finally:
        torch.Tensor.cuda, torch.Tensor.cpu, torch.Tensor.to, torch.cuda._lazy_init = orig_cuda, orig_cpu, orig_to, orig_init
        del torch.Tensor.device, torch.Tensor.is_cuda
        if orig_fake_device is not None:
            fake_cls.device = orig_fake_device


def _fake_tensor_class():
    try:
        from torch._subclasses.fake_tensor import FakeTensor
    except ImportError:
        return None
    return FakeTensor
