"""Building the user's model and inputs for graphlint-export without real
weights: the module is constructed under `MetaInit` (every tensor factory
runs on the meta device; tensors of at most SMALL elements are then made for
real, so init code that reads a value -- timm's drop-path rates, RoPE
frequencies -- still works), and its parameters and buffers are replaced by
fake tensors (FakeTensorMode) of the same shapes, dtypes and strides.
Nothing the size of a weight or an activation is ever allocated."""

import contextlib
import re

import torch
from torch.overrides import TorchFunctionMode

SMALL = 1 << 14   # elements: tensors this small made at construction are real


class ExportError(Exception):
    """A request this torch or this model cannot serve; the CLI prints it and exits 2."""


_FACTORY_NAMES = ["empty", "zeros", "ones", "full", "rand", "randn", "randint", "randperm", "arange", "range",
                  "linspace", "logspace", "eye", "empty_strided", "tensor", "as_tensor", "normal", "tril_indices",
                  "triu_indices", "scalar_tensor", "empty_like", "zeros_like", "ones_like", "full_like",
                  "rand_like", "randn_like", "randint_like"]
FACTORIES = {getattr(torch, n) for n in _FACTORY_NAMES if hasattr(torch, n)}


def _is_cuda(device):
    if device is None:
        return False
    try:
        return torch.device(device).type == "cuda"
    except (RuntimeError, TypeError):
        return False


class MetaInit(TorchFunctionMode):
    """Active while model() / example_inputs() run: factories make meta
    tensors (small ones real, on the CPU); a request for a GPU device is
    remembered (the model wants cuda) and served on the CPU or meta."""

    def __init__(self):
        super().__init__()
        self.wants_cuda = False

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func not in FACTORIES:
            return func(*args, **kwargs)
        if _is_cuda(kwargs.get("device")):
            self.wants_cuda = True
            kwargs["device"] = "cpu"
        like = func.__name__.endswith("_like")
        if like and args and isinstance(args[0], torch.Tensor) and args[0].device.type == "meta":
            return func(*args, **kwargs)
        if func.__name__ in ("tensor", "as_tensor") or kwargs.get("device") not in (None, "cpu", torch.device("cpu")):
            return func(*args, **kwargs)
        meta = func(*args, **{**kwargs, "device": "meta"})
        if isinstance(meta, torch.Tensor) and meta.numel() <= SMALL:
            return func(*args, **kwargs)
        return meta


@contextlib.contextmanager
def meta_construction(init):
    """model() runs with MetaInit active and Module.cuda()/.to('cuda')
    recorded instead of performed (there may be no GPU)."""
    mod = torch.nn.Module
    orig_cuda, orig_to = mod.cuda, mod.to

    def cuda(self, device=None):
        init.wants_cuda = True
        return self

    def to(self, *args, **kwargs):
        dev = kwargs.get("device", next((a for a in args if isinstance(a, (str, torch.device))), None))
        if _is_cuda(dev):
            init.wants_cuda = True
            kwargs.pop("device", None)
            args = tuple(a for a in args if not isinstance(a, (str, torch.device)))
            if not args and not kwargs:
                return self
        return orig_to(self, *args, **kwargs)

    mod.cuda, mod.to = cuda, to
    try:
        with init:
            yield init
    finally:
        mod.cuda, mod.to = orig_cuda, orig_to


def state_tensors(module):
    """(unique tensors in named_parameters()/named_buffers() order with their
    first name and kind, every qualified name -> index). Tied tensors (one
    object under two names) appear once; every alias name maps to it."""
    unique, index, aliases = [], {}, {}
    for kind, items in (("parameter", module.named_parameters()), ("buffer", module.named_buffers())):
        for name, t in items:
            if id(t) not in index:
                index[id(t)] = len(unique)
                unique.append((kind, name, t))
    for mod_name, m in module.named_modules(remove_duplicate=False):
        for table in (m._parameters, m._buffers):
            for n, t in table.items():
                if t is not None and id(t) in index:
                    aliases[f"{mod_name}.{n}" if mod_name else n] = index[id(t)]
    return unique, aliases


def fake_like(fake_mode, t, requires_grad=None):
    """A fake CPU tensor with t's shape, dtype and strides (t may be meta)."""
    with fake_mode:
        f = torch.empty_strided(tuple(t.shape), tuple(t.stride()), dtype=t.dtype, device="cpu")
    if requires_grad if requires_grad is not None else t.requires_grad:
        f.requires_grad_(True)
    return f


# --------------------------------------------------------------------------
# --input NAME:DTYPE[d0,d1,...]
# --------------------------------------------------------------------------

DTYPE_NAMES = {"float32": torch.float32, "float": torch.float32, "f32": torch.float32, "float16": torch.float16,
               "half": torch.float16, "f16": torch.float16, "bfloat16": torch.bfloat16, "bf16": torch.bfloat16,
               "float64": torch.float64, "f64": torch.float64, "int64": torch.int64, "long": torch.int64,
               "i64": torch.int64, "int32": torch.int32, "i32": torch.int32, "int8": torch.int8,
               "uint8": torch.uint8, "bool": torch.bool}
_INPUT_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*):([A-Za-z0-9]+)\[([^\]]*)\]$")
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class CallInputs:
    """The example inputs of one forward call given as positional and keyword
    tensors (graphlint.check's example_inputs and kwargs): forward(*args, **kwargs)."""

    def __init__(self, args=(), kwargs=None):
        self.args, self.kwargs = tuple(args), dict(kwargs or {})


class InputSpec:
    """One input given on the command line: a keyword argument of forward()
    (or a positional one, named input0, input1, ...), its dtype and its dims:
    integers or symbol names (sized by --dim NAME=SIZE or inline NAME=SIZE)."""

    def __init__(self, name, dtype, dims):
        self.name, self.dtype, self.dims = name, dtype, dims   # dims: int or (symbol, size or None)

    @staticmethod
    def parse(text):
        m = _INPUT_RE.match(text.replace(" ", ""))
        if not m:
            raise ValueError(f"expected NAME:DTYPE[d0,d1,...] (e.g. 'input_ids:int64[batch,seq]'), got '{text}'")
        name, dtype, dims_text = m.groups()
        if dtype not in DTYPE_NAMES:
            raise ValueError(f"--input {name}: unknown dtype '{dtype}' (one of {', '.join(sorted(DTYPE_NAMES))})")
        dims = []
        for d in filter(None, dims_text.split(",")):
            sym, eq, size = d.partition("=")
            if d.isdigit():
                dims.append(int(d))
            elif _NAME_RE.match(sym) and (not eq or size.isdigit()):
                dims.append((sym, int(size) if eq else None))
            else:
                raise ValueError(f"--input {name}: dim '{d}' is neither a size nor NAME or NAME=SIZE")
        return InputSpec(name, DTYPE_NAMES[dtype], dims)

    def sizes(self, dim_sizes):
        out = []
        for d in self.dims:
            if isinstance(d, int):
                out.append(d)
            else:
                sym, size = d
                size = size if size is not None else dim_sizes.get(sym)
                if size is None:
                    raise ValueError(f"--input {self.name}: dim '{sym}' has no size: add --dim {sym}=SIZE "
                                     f"or write {sym}=SIZE in the brackets")
                out.append(size)
        return out

    def symbols(self):
        return [None if isinstance(d, int) else d[0] for d in self.dims]


def real_input(spec, sizes):
    """--capture real: a tensor for a command-line input (zeros for integer
    and bool inputs, so ids are valid indices; randn for floats)."""
    if spec.dtype.is_floating_point:
        return torch.randn(*sizes, dtype=spec.dtype)
    return torch.zeros(*sizes, dtype=spec.dtype)
