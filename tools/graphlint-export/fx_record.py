"""Recording one make_fx trace for graphlint-export: each aten op's user
source line and nn.Module path, host syncs make_fx cannot record, output
tensor meta, and (--device cuda without a GPU) the device a tensor would be on.
The hooks are installed by `recording()` for the duration of one trace."""

import contextlib
import importlib
import os
import sys
import sysconfig

import torch
from torch.fx.experimental import proxy_tensor
from torch.utils import _pytree as pytree

# --------------------------------------------------------------------------
# Source locations: the innermost frame of user code
# --------------------------------------------------------------------------

def _package_dir(name):
    try:
        mod = importlib.import_module(name)
        return os.path.dirname(os.path.abspath(mod.__file__))
    except Exception:
        return None


# Frames in these directories are never the user's: torch itself, the Python
# standard library and graphlint-export (this directory).
_NOT_USER = [d for d in (_package_dir("torch"), _package_dir("functorch"), sysconfig.get_paths().get("stdlib"),
                         os.path.dirname(os.path.realpath(__file__))) if d]
_user_file_cache = {}
_positions_cache = {}


def is_user_file(filename):
    hit = _user_file_cache.get(filename)
    if hit is None:
        path = os.path.abspath(filename)
        hit = not filename.startswith("<") and not any(
            path.startswith(d + os.sep) for d in _NOT_USER)
        _user_file_cache[filename] = hit
    return hit


def display_path(filename):
    """Relative to the current directory when the file is inside it."""
    path = os.path.abspath(filename)
    cwd = os.getcwd()
    if path.startswith(cwd + os.sep):
        return os.path.relpath(path, cwd)
    return path


def frame_position(frame):
    """(line, 1-based column) of the instruction a frame is executing."""
    code = frame.f_code
    if hasattr(code, "co_positions"):  # Python 3.11+: columns are known
        pos = _positions_cache.get(code)
        if pos is None:
            pos = _positions_cache[code] = list(code.co_positions())
        i = frame.f_lasti // 2
        if 0 <= i < len(pos) and pos[i][0]:
            return pos[i][0], (pos[i][2] + 1) if pos[i][2] is not None else 0
    return frame.f_lineno, 0


def user_location():
    frame = sys._getframe(1)
    while frame is not None:
        if is_user_file(frame.f_code.co_filename):
            line, col = frame_position(frame)
            return {"file": display_path(frame.f_code.co_filename), "line": line, "col": col,
                    "function": frame.f_code.co_name}
        frame = frame.f_back
    return None


# --------------------------------------------------------------------------
# Trace recorder: hooks into make_fx's tracer and dispatch mode
# --------------------------------------------------------------------------

def _aten(name, overload="default"):
    packet = getattr(torch.ops.aten, name, None)
    return getattr(packet, overload, None) if packet is not None else None


# Ops that hand a tensor value to Python: make_fx cannot record them (it
# raises on real and fake tensors alike), so the recorder runs them eagerly
# and adds a node for them: .item(), .tolist(), bool(t), `if t:`, int(t).
SYNC_OPS = {op for op in (_aten("_local_scalar_dense"), _aten("equal"), _aten("is_nonzero")) if op is not None}


class Recorder:
    """State shared by the patched tracer and dispatch mode during one trace."""

    def __init__(self, module_names, simulate_device):
        self.module_names = module_names      # id(module) -> qualified name
        self.module_stack = []
        self.phase = "forward"
        self.backward_loc = None              # the forward line of the backward node running now
        self.tracer = None
        self.saved = set()                    # fx nodes whose value autograd saved for backward
        self.simulate_device = simulate_device  # "cuda:0" when tracing on CPU as if on a GPU
        self.active = False


REC = None


def node_of(tracer, t):
    proxy = proxy_tensor.get_proxy_slot(t, tracer, None, lambda x: x.proxy)
    return proxy.node if proxy is not None else None


def logical_device(t):
    return getattr(t, "_graphlint_device", None) or str(torch._C._TensorBase.device.__get__(t))


def _patched_create_proxy(orig):
    def create_proxy(self, kind, target, args, kwargs, *rest, **kw):
        proxy = orig(self, kind, target, args, kwargs, *rest, **kw)
        rec = REC
        if rec is not None and rec.active and kind == "call_function":
            rec.tracer = self
            proxy.node.meta["graphlint"] = {
                "loc": user_location() if rec.phase == "forward" else rec.backward_loc,
                "module": rec.module_stack[-1] if rec.module_stack else "",
                "phase": rec.phase,
            }
        return proxy
    return create_proxy


def _device_kwarg(kwargs):
    d = kwargs.get("device") if kwargs else None
    return torch.device(d) if d is not None else None


def _patched_dispatch(orig):
    def dispatch(self, func, types, args=(), kwargs=None):
        rec = REC
        kwargs = dict(kwargs or {})
        if rec is None or not rec.active or not getattr(self, "enable_tracing", True):
            return orig(self, func, types, args, kwargs)
        rec.tracer = self.tracer
        if func in SYNC_OPS:
            return _record_host_sync(self, func, args, kwargs)
        wanted = _device_kwarg(kwargs)
        if rec.simulate_device and wanted is not None and wanted.type == "cuda":
            kwargs["device"] = torch.device("cpu")  # traced on the CPU; recorded as on the GPU below
        out = orig(self, func, types, args, kwargs)
        in_dev = next((logical_device(a) for a in pytree.tree_flatten((args, kwargs))[0]
                       if isinstance(a, torch.Tensor)), None)
        # torch fills the device of `empty_like(x)` / `x.new_zeros()` from x's
        # real device: take x's recorded one instead.
        derived = func.overloadpacket.__name__.endswith("_like") or func.overloadpacket.__name__.startswith("new_")
        if wanted is not None and not (derived and in_dev is not None):
            dev = f"cuda:{wanted.index or 0}" if wanted.type == "cuda" else str(wanted)
        else:
            dev = in_dev
        for t in pytree.tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor):
                if rec.simulate_device and dev is not None:
                    t._graphlint_device = dev
                node = node_of(self.tracer, t)
                if node is not None:
                    node.meta["graphlint_val"] = tensor_meta(t)
        return out
    return dispatch


def _record_host_sync(mode, func, args, kwargs):
    with proxy_tensor.disable_proxy_modes_tracing():
        result = func(*args, **kwargs)
    proxy_args = pytree.tree_map(
        lambda a: proxy_tensor.get_proxy_slot(a, mode.tracer, a, lambda x: x.proxy)
        if isinstance(a, torch.Tensor) else a, args)
    mode.tracer.create_proxy("call_function", func, tuple(proxy_args), {})
    return result


def tolist(t):
    """Stands for Tensor.tolist in the graph: it copies every element to
    Python without passing the dispatcher, so the recorder adds the node."""
    return t.tolist()


def _recorded_tolist(orig):
    def wrapper(self):
        with proxy_tensor.disable_proxy_modes_tracing():
            result = orig(self)
        rec = REC
        if rec is not None and rec.active and rec.tracer is not None:
            proxy = proxy_tensor.get_proxy_slot(self, rec.tracer, None, lambda x: x.proxy)
            if proxy is not None:
                rec.tracer.create_proxy("call_function", tolist, (proxy,), {})
        return result
    return wrapper


@contextlib.contextmanager
def recording(rec):
    """Installs the recorder's hooks for the duration of one trace."""
    global REC
    tracer_cls = proxy_tensor.PythonKeyTracer
    mode_cls = proxy_tensor.ProxyTorchDispatchMode
    orig_proxy, orig_dispatch, orig_tolist = tracer_cls.create_proxy, mode_cls.__torch_dispatch__, torch.Tensor.tolist
    tracer_cls.create_proxy = _patched_create_proxy(orig_proxy)
    mode_cls.__torch_dispatch__ = _patched_dispatch(orig_dispatch)
    torch.Tensor.tolist = _recorded_tolist(orig_tolist)
    def enter(m, inputs):
        rec.module_stack.append(rec.module_names.get(id(m), type(m).__name__))

    def leave(m, inputs, output):  # must return None: a value would replace the output
        if rec.module_stack:
            rec.module_stack.pop()

    hooks = [torch.nn.modules.module.register_module_forward_pre_hook(enter),
             torch.nn.modules.module.register_module_forward_hook(leave)]
    patched = _simulate_device_calls() if rec.simulate_device else contextlib.nullcontext()
    REC = rec
    try:
        with patched:
            yield rec
    finally:
        REC = None
        tracer_cls.create_proxy, mode_cls.__torch_dispatch__ = orig_proxy, orig_dispatch
        torch.Tensor.tolist = orig_tolist
        for h in hooks:
            h.remove()


@contextlib.contextmanager
def _simulate_device_calls():
    """On a machine without a GPU, `.cuda()` / `.to("cuda")` fail before they
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
        return torch.device(t._graphlint_device) if hasattr(t, "_graphlint_device") else real_device.__get__(t)

    torch.Tensor.cuda, torch.Tensor.cpu, torch.Tensor.to, torch.cuda._lazy_init = cuda, cpu, to, (lambda: None)
    torch.Tensor.device = property(device_of)
    torch.Tensor.is_cuda = property(lambda t: device_of(t).type == "cuda")
    try:
        yield
    finally:
        torch.Tensor.cuda, torch.Tensor.cpu, torch.Tensor.to, torch.cuda._lazy_init = orig_cuda, orig_cpu, orig_to, orig_init
        del torch.Tensor.device, torch.Tensor.is_cuda



DTYPES = {
    torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16", torch.float64: "float64",
    torch.int64: "int64", torch.int32: "int32", torch.int16: "int16", torch.int8: "int8", torch.uint8: "uint8",
    torch.bool: "bool", torch.complex64: "complex64", torch.complex128: "complex128",
}


def tensor_meta(t):
    meta = {"shape": [int(d) for d in t.shape], "dtype": DTYPES.get(t.dtype, str(t.dtype).replace("torch.", "")),
            "device": logical_device(t), "requires_grad": bool(t.requires_grad)}
    try:
        meta["strides"] = [int(s) for s in t.stride()]
    except Exception:  # sparse or other layouts
        pass
    return meta


def loc_from_stack_trace(trace):
    """The innermost user frame of a 'File "x.py", line N, in f' stack trace."""
    if not trace:
        return None
    best = None
    for line in trace.splitlines():
        line = line.strip()
        if line.startswith('File "'):
            try:
                path, rest = line[6:].split('", line ', 1)
                num, _, func = rest.partition(", in ")
                if is_user_file(path):
                    best = {"file": display_path(path), "line": int(num), "col": 0, "function": func}
            except ValueError:
                continue
    return best
