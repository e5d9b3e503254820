"""Recording one make_fx trace for graphlint-export: each aten op's user
source line and nn.Module path, host syncs make_fx cannot record, output
tensor meta, and (--device cuda without a GPU) the device a tensor would be on.
The hooks are installed by `recording()` for the duration of one trace."""

import contextlib
import importlib

import torch
from torch.fx.experimental import proxy_tensor
from torch.utils import _pytree as pytree
from torch._subclasses.fake_tensor import FakeTensor

from .fx_devices import logical_device, simulate_device_calls
from .fx_guards import fake_iter, guard_bool, guard_float, guard_int, sym_bool_branch
from .fx_moe import ExpertsScope, GroupedMmAnyFloat
from .fx_source import UserSource

try:
    from torch._subclasses.fake_tensor import DynamicOutputShapeException as DynamicOutputShape
except ImportError:  # pragma: no cover
    DynamicOutputShape = ()

TORCH2 = int(torch.__version__.split(".")[0]) >= 2

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
    """The capture state of one trace: what the patched tracer, dispatch
    mode and hooks (installed by `recording(rec)`, each holding this
    recorder) record and read. Nothing about a capture lives in a module
    global."""

    def __init__(self, module_names, simulate_device, fake_mode=None, source=None):
        self.module_names = module_names      # id(module) -> qualified name
        self.source = source or UserSource()  # the user's files and repository root (fx_source)
        self.fake_mode = fake_mode            # FakeTensorMode of a fake capture, None for --capture real
        self.diagnostics = []                 # [{"kind", "message", "source"}] for the file's top level
        self.unbacked = {}                    # torch 1.13: fx node -> [(output, dim, symbol, max)]
        self.no_grad = []                     # placeholder indices that got no gradient
        self.unbacked_counter = [0]
        self.module_stack = []
        self.called = set()                   # qualified names of the modules whose forward ran
        self.held = {}                        # fx node -> the newest node when a Python frame holding it returned
        self.phase = "forward"
        self.backward_loc = None              # the forward line of the backward node running now
        self.autograd_node = None             # the number of the autograd node whose apply runs now
        self.autograd_count = 0
        self.recomputing = 0                  # inside a non-reentrant checkpoint's recompute (in an apply)
        self.recompute_frames = None          # (start, stop): trace the recompute's Python frames (fx_capture)
        self.tracer = None
        self.saved = set()                    # fx nodes whose value autograd saved for backward
        self.saved_at = {}                    # saved fx node -> the newest graph node at its first save
        self.simulate_device = simulate_device  # "cuda:0" when tracing on CPU as if on a GPU
        self.active = False
        self.in_dispatch = 0                  # inside the dispatch (fake tensor kernels): `.device` is the traced one
        self.in_repr = 0                      # inside Tensor.__repr__, which re-enters itself for subclasses
        # Joint traces: every forward op's output tensors (a hook on each
        # tells which backward tensor is its gradient) and what the hooks saw.
        self.collect_forward = False
        self.forward_values = []              # [(tensor, fx node)] in forward order
        self.grad_of = {}                     # fx node of a gradient -> fx node of the forward value
        self.blocks = None                    # fx_blocks.BlockMarks: where each repeated block starts
        self.experts = None                   # fx_moe.ExpertsScope (torch 2.x fake captures)
        self.enumerated = {}                  # unbacked symbol -> rows a loop over nonzero() was traced for


# torch 1.13: under no_grad these modules take fused inference kernels
# (_native_multi_head_attention) that its fake tensors cannot run; with grad
# enabled around them they run their ordinary ops.
_FAST_PATH_MODULES = () if TORCH2 else (torch.nn.MultiheadAttention, torch.nn.TransformerEncoderLayer)


_DROPOUT_MODULES = (torch.nn.Dropout, torch.nn.Dropout2d, torch.nn.Dropout3d, torch.nn.AlphaDropout) + tuple(
    getattr(torch.nn, n) for n in ("Dropout1d", "FeatureAlphaDropout") if hasattr(torch.nn, n))


def node_of(tracer, t):
    proxy = proxy_tensor.get_proxy_slot(t, tracer, None, lambda x: x.proxy)
    return proxy.node if proxy is not None else None


def _patched_create_proxy(orig, rec):
    def create_proxy(self, kind, target, args, kwargs, *rest, **kw):
        proxy = orig(self, kind, target, args, kwargs, *rest, **kw)
        if rec.active and kind == "call_function":
            rec.tracer = self
            proxy.node.meta["graphlint"] = {
                "loc": rec.source.user_location() if rec.phase == "forward" else rec.backward_loc,
                "module": rec.module_stack[-1] if rec.module_stack else "",
                "phase": rec.phase,
            }
            if rec.phase == "backward" and rec.autograd_node is not None and not rec.recomputing:
                proxy.node.meta["graphlint"]["autograd_node"] = rec.autograd_node
            elif rec.phase == "backward" and rec.autograd_count and not rec.recomputing and \
                    target is torch.ops.aten.add.Tensor:
                # Between two applies: the engine's InputBuffer summing two
                # gradients of one tensor. The trace's own dispatch mode makes
                # it out of place; eager on torch 2.x adds into a buffer it
                # alone holds (the memory plan decides, JointTrace.cpp).
                proxy.node.meta["graphlint"]["accumulates"] = True
        return proxy
    return create_proxy


def _device_kwarg(kwargs):
    d = kwargs.get("device") if kwargs else None
    return torch.device(d) if d is not None else None


def _patched_dispatch(orig, rec):
    def dispatch(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if not rec.active or not getattr(self, "enable_tracing", True):
            return orig(self, func, types, args, kwargs)
        rec.tracer = self.tracer
        if func in SYNC_OPS and not (TORCH2 and rec.fake_mode is not None):
            return _record_host_sync(self, func, args, kwargs, rec)
        wanted = _device_kwarg(kwargs)
        if rec.simulate_device and wanted is not None and wanted.type == "cuda":
            kwargs["device"] = torch.device("cpu")  # traced on the CPU; recorded as on the GPU below
        # Inside the dispatch (fake tensor kernels), `.device` is the device
        # the tensor is traced on, not the one recorded for it.
        rec.in_dispatch += 1
        last = self.tracer.graph._root._prev
        try:
            out = orig(self, func, types, args, kwargs)
        except DynamicOutputShape:
            _drop_nodes_after(self.tracer.graph, last)   # make_fx made the node before the kernel raised
            out = _record_upper_bound(self, func, args, kwargs, rec)
        except (NotImplementedError, RuntimeError):
            _drop_nodes_after(self.tracer.graph, last)
            # torch 1.13's fake tensors lack some backward kernels (the meta
            # backend reaches convolution_backward_overrideable): shape them here.
            if TORCH2 or rec.fake_mode is None or not func.overloadpacket.__name__.endswith("_backward"):
                raise
            out = _record_outputs(self, func, args, kwargs, _backward_outputs(func, args, kwargs))
        finally:
            rec.in_dispatch -= 1
        if rec.experts is not None:
            rec.experts.after_op(func, args, out)
        dev = _output_device(func, args, kwargs, wanted, rec) if rec.simulate_device else None
        for t in (out,) if isinstance(out, torch.Tensor) else pytree.tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor):
                if dev is not None:
                    t._graphlint_device = dev
                node = node_of(self.tracer, t)
                if node is not None:
                    node.meta["graphlint_val"] = tensor_meta(t)
                    if rec.collect_forward and rec.phase == "forward":
                        rec.forward_values.append((t, node))
        return out
    return dispatch


def _output_device(func, args, kwargs, wanted, rec):
    """The device an op's outputs are recorded on (--device cuda without a GPU)."""
    first = _first_tensor(args)
    if first is None:
        first = _first_tensor(kwargs.values())
    in_dev = logical_device(first) if first is not None else None
    # torch fills the device of `empty_like(x)` / `x.new_zeros()` from x's
    # real device: take x's recorded one instead.
    derived = func.overloadpacket.__name__.endswith("_like") or func.overloadpacket.__name__.startswith("new_")
    # Autograd's backward of a dtype conversion (`.half()` on a GPU tensor)
    # converts the gradient to the forward input's options, whose device is
    # the one traced on (the CPU), not the one recorded: it stays where it is.
    if (wanted is not None and wanted.type == "cpu" and rec.phase == "backward"
            and first is not None and kwargs.get("dtype") not in (None, first.dtype)):
        return in_dev
    if wanted is not None and not (derived and in_dev is not None):
        return f"cuda:{wanted.index or 0}" if wanted.type == "cuda" else str(wanted)
    return in_dev


def _first_tensor(items):
    """The first tensor in pytree order (an aten op's arguments are tensors,
    scalars and lists of them): tree_flatten per op cost 3% of a capture."""
    for a in items:
        if isinstance(a, torch.Tensor):
            return a
        if isinstance(a, (list, tuple)):
            t = _first_tensor(a)
            if t is not None:
                return t
    return None


def _record_host_sync(mode, func, args, kwargs, rec):
    """A value read to Python: computed for real in a real capture; in a
    torch 1.13 fake capture there is no value, so the trace continues with
    an assumed one (1, 1.0, True), recorded on the node and as a diagnostic."""
    fake = rec.fake_mode is not None and any(_is_fake(a) for a in pytree.tree_flatten(args)[0])
    if fake:
        result = _assumed(args[0].dtype if func is _aten("_local_scalar_dense") else torch.bool)
        _note_assumed(rec, {"_local_scalar_dense": ".item()", "is_nonzero": "bool(tensor)",
                            "equal": "torch.equal()"}.get(_short(func), f"{_short(func)}()"), result)
    else:
        with proxy_tensor.disable_proxy_modes_tracing():
            result = func(*args, **kwargs)
    proxy_args = pytree.tree_map(
        lambda a: proxy_tensor.get_proxy_slot(a, mode.tracer, a, lambda x: x.proxy)
        if isinstance(a, torch.Tensor) else a, args)
    proxy = mode.tracer.create_proxy("call_function", func, tuple(proxy_args), {})
    if fake:
        proxy.node.meta["graphlint_assumed"] = result
    return result


def _is_fake(t):
    return isinstance(t, FakeTensor)


def _assumed(dtype):
    if dtype == torch.bool:
        return True
    return 1.0 if dtype.is_floating_point or dtype.is_complex else 1


def _short(func):
    return getattr(func, "__name__", str(func)).split(".")[0]


def _note_assumed(rec, what, value):
    loc = rec.source.user_location()
    rec.diagnostics.append({"kind": "host-value-assumed", "message":
                            f"{what} reads a tensor value, which a fake capture does not have: the trace continued "
                            f"with {value!r} (a data-dependent branch takes the path that value gives)",
                            **({"source": loc} if loc else {})})


# Ops whose output size depends on values: torch 1.13's FakeTensorMode raises
# on them; the recorder traces them with their largest possible output.
def _upper_bound_outputs(func, args, kwargs):
    name = func.overloadpacket.__name__
    x = args[0]
    if name in ("nonzero", "argwhere"):
        return torch.empty((x.numel(), x.dim()), dtype=torch.int64, device=x.device), [(0, 0)], x.numel()
    if name == "masked_select":
        n = torch.broadcast_shapes(x.shape, args[1].shape).numel()
        return torch.empty((n,), dtype=x.dtype, device=x.device), [(0, 0)], n
    if name == "index":
        indices, bound = [], None
        for ix in args[1]:
            if ix is not None and ix.dtype in (torch.bool, torch.uint8):
                bound = ix.numel()
                indices.extend(torch.empty((bound,), dtype=torch.int64, device=ix.device) for _ in range(ix.dim()))
            else:
                indices.append(ix)
        out = func(x, indices)
        return out, [(0, list(out.shape).index(bound))], bound
    if name in ("_unique2", "unique_consecutive"):
        n = x.numel()
        inverse = kwargs.get("return_inverse", args[2] if len(args) > 2 else False)
        counts = kwargs.get("return_counts", args[3] if len(args) > 3 else False)
        out = (torch.empty((n,), dtype=x.dtype, device=x.device),
               torch.empty(x.shape if inverse else (0,), dtype=torch.int64, device=x.device),
               torch.empty((n,) if counts else (0,), dtype=torch.int64, device=x.device))
        return out, [(0, 0)] + ([(2, 0)] if counts else []), n
    return None, [], None


def _drop_nodes_after(graph, last):
    while graph._root._prev is not last and not graph._root._prev.users:
        graph.erase_node(graph._root._prev)


def _backward_outputs(func, args, kwargs):
    """Outputs of a backward op shaped like the forward tensors they are the
    gradients of (torch 1.13 fake tensors only)."""
    schema = func._schema
    bound = dict(zip([a.name for a in schema.arguments], args))
    bound.update(kwargs)
    with proxy_tensor.disable_proxy_modes_tracing():
        if func.overloadpacket.__name__ == "convolution_backward":
            mask = bound.get("output_mask", [True, True, True])
            x, w, grad = bound["input"], bound["weight"], bound["grad_output"]
            bias = bound.get("bias_sizes") or [w.shape[0]]
            return (torch.empty_like(x) if mask[0] else None, torch.empty_like(w) if mask[1] else None,
                    torch.empty(bias, dtype=grad.dtype, device=grad.device) if mask[2] else None)
        like = bound.get("self", bound.get("input"))
        if len(schema.returns) == 1 and isinstance(like, torch.Tensor):
            return torch.empty_like(like)
    raise NotImplementedError(f"{func}: torch {torch.__version__}'s fake tensors have no kernel for it")


def _record_outputs(mode, func, args, kwargs, out):
    proxy_args, proxy_kwargs = pytree.tree_map(
        lambda a: proxy_tensor.get_proxy_slot(a, mode.tracer, a, lambda x: x.proxy)
        if isinstance(a, torch.Tensor) else a, (args, kwargs))
    proxy = mode.tracer.create_proxy("call_function", func, tuple(proxy_args), proxy_kwargs)
    proxy_tensor.track_tensor_tree(out, proxy, constant=None, tracer=mode.tracer)
    return out


def _record_upper_bound(mode, func, args, kwargs, rec):
    with proxy_tensor.disable_proxy_modes_tracing():
        out, dims, bound = _upper_bound_outputs(func, args, kwargs)
    if out is None:
        raise NotImplementedError(f"{func}: its output size depends on tensor values and this torch's fake "
                                  f"tensors cannot trace it (torch 2.x records it with an unbacked size)")
    proxy_args, proxy_kwargs = pytree.tree_map(
        lambda a: proxy_tensor.get_proxy_slot(a, mode.tracer, a, lambda x: x.proxy)
        if isinstance(a, torch.Tensor) else a, (args, kwargs))
    proxy = mode.tracer.create_proxy("call_function", func, tuple(proxy_args), proxy_kwargs)
    proxy_tensor.track_tensor_tree(out, proxy, constant=None, tracer=mode.tracer)
    symbol = f"u{rec.unbacked_counter[0]}"
    rec.unbacked_counter[0] += 1
    rec.unbacked[proxy.node] = [(o, d, symbol, bound) for o, d in dims]
    return out


def tolist(t):
    """Stands for Tensor.tolist in the graph: it copies every element to
    Python without passing the dispatcher, so the recorder adds the node."""
    return t.tolist()


def numpy(t):
    """Stands for Tensor.numpy in the graph (a copy to the host)."""
    return t.numpy()


def host_repr(t):
    """Stands for Tensor.__repr__ in the graph (aten::repr): print(t), str(t),
    f"{t}" copy the values to the host to format them."""
    return t.__repr__()


host_repr.__name__ = "repr"


def _concrete(d):
    """A size as a number: its traced value, or 1 for a data-dependent one."""
    if isinstance(d, int):
        return d
    hint = getattr(getattr(d, "node", None), "hint", None)
    return int(hint) if hint is not None else 1


def _nested(shape, value):
    return [_nested(shape[1:], value) for _ in range(shape[0])] if shape else value


def _host_copy(orig, marker, rec):
    """Tensor.tolist / Tensor.numpy: the whole tensor goes to Python without
    passing the dispatcher, so the recorder adds the node. A fake tensor has
    no values: the result is filled with the assumed value (see _assumed)."""
    def wrapper(self, *args, **kwargs):
        tracing = rec.active and rec.tracer is not None
        if marker is host_repr:   # nothing to assume: a fake tensor formats its metadata
            nested = rec.in_repr > 0   # Tensor.__repr__ re-enters itself for subclasses
            rec.in_repr += 1
            try:
                with proxy_tensor.disable_proxy_modes_tracing():
                    result = orig(self, *args, **kwargs)
            finally:
                rec.in_repr -= 1
            tracing = tracing and not nested
        elif tracing and rec.fake_mode is not None and _is_fake(self):
            value = _assumed(self.dtype)
            if marker is tolist:
                result = _nested([_concrete(d) for d in self.shape], value)
            else:
                import numpy as np
                result = np.full([_concrete(d) for d in self.shape], value)
            _note_assumed(rec, f".{marker.__name__}()", value)
        else:
            with proxy_tensor.disable_proxy_modes_tracing():
                result = orig(self, *args, **kwargs)
        if tracing:
            proxy = proxy_tensor.get_proxy_slot(self, rec.tracer, None, lambda x: x.proxy)
            if proxy is not None:
                rec.tracer.create_proxy("call_function", marker, (proxy,), {})
        return result
    return wrapper


def _fake_bool(orig, rec):
    """`if t:` / `bool(t)` on a fake tensor: recorded as aten::is_nonzero (a
    host sync) and traced as True."""
    def wrapper(self):
        if not rec.active or rec.fake_mode is None or not _is_fake(self) or rec.tracer is None:
            return orig(self)
        slot = proxy_tensor.get_proxy_slot(self, rec.tracer, None)
        if slot is not None and slot.constant is not None:   # make_fx knows the value (fx_guards._nonzero_rows)
            return bool(slot.constant)
        proxy = slot.proxy if slot is not None else None
        # An equality test usually guards the rare case (`if idx == n: continue`,
        # `if count == 0: return`): assume it fails; any other condition holds.
        value = not (proxy is not None and getattr(proxy.node.target, "__name__", "").startswith("eq"))
        if proxy is not None:
            p = rec.tracer.create_proxy("call_function", _aten("is_nonzero"), (proxy,), {})
            p.node.meta["graphlint_assumed"] = value
        _note_assumed(rec, "bool(tensor)", value)
        return value
    return wrapper


def _identity_dropout(orig):
    """F.dropout with p == 0 or in eval returns its input in eager ATen; the
    Python decomposition symbolic make_fx runs writes `clone` instead, a copy
    (and a held [b, heads, s, s] buffer in transformers' attention) that
    PyTorch never makes."""
    def dropout(input, p=0.5, training=True, inplace=False):
        if p == 0 or not training:
            return input
        return orig(input, p, training, inplace)
    return dropout


@contextlib.contextmanager
def recording(rec):
    """Installs the recorder's hooks for the duration of one trace; each
    hook holds `rec`, the one place the trace's state lives."""
    tracer_cls = proxy_tensor.PythonKeyTracer
    mode_cls = proxy_tensor.ProxyTorchDispatchMode
    orig_proxy, orig_dispatch = tracer_cls.create_proxy, mode_cls.__torch_dispatch__
    tensor_methods = {m: getattr(torch.Tensor, m) for m in ("tolist", "numpy", "__bool__", "__repr__")}
    sym_bool = getattr(torch, "SymBool", None)
    orig_sym_bool = sym_bool.__bool__ if sym_bool is not None else None
    tracer_cls.create_proxy = _patched_create_proxy(orig_proxy, rec)
    mode_cls.__torch_dispatch__ = _patched_dispatch(orig_dispatch, rec)
    orig_dropout = torch.nn.functional.dropout
    torch.nn.functional.dropout = _identity_dropout(orig_dropout)
    torch.Tensor.tolist = _host_copy(tensor_methods["tolist"], tolist, rec)
    torch.Tensor.numpy = _host_copy(tensor_methods["numpy"], numpy, rec)
    torch.Tensor.__bool__ = _fake_bool(tensor_methods["__bool__"], rec)
    torch.Tensor.__repr__ = _host_copy(tensor_methods["__repr__"], host_repr, rec)
    fake_repr = FakeTensor.__dict__.get("__repr__")   # fake tensors format themselves
    if fake_repr is not None:
        FakeTensor.__repr__ = _host_copy(fake_repr, host_repr, rec)
    if sym_bool is not None:
        sym_bool.__bool__ = sym_bool_branch(orig_sym_bool, rec)
    sym_node = None
    if TORCH2:
        from torch.fx.experimental.sym_node import SymNode as sym_node
        orig_guard_int, orig_guard_bool = sym_node.guard_int, sym_node.guard_bool
        orig_guard_float = sym_node.guard_float
        tensor_methods["__iter__"] = torch.Tensor.__iter__
        torch.Tensor.__iter__ = fake_iter(tensor_methods["__iter__"], rec)
        sym_node.guard_int = guard_int(orig_guard_int, rec)
        sym_node.guard_bool = guard_bool(orig_guard_bool, rec)
        sym_node.guard_float = guard_float(orig_guard_float, rec)
    fake_tolist = FakeTensor.__dict__.get("tolist")   # torch 2.x fake tensors define their own
    if fake_tolist is not None:
        FakeTensor.tolist = _host_copy(fake_tolist, tolist, rec)
    grad_stack = []

    def enter(m, inputs):
        rec.module_stack.append(rec.module_names.get(id(m), type(m).__name__))
        if rec.blocks is not None:
            rec.blocks.enter(rec, m)
        rec.called.add(rec.module_stack[-1])
        if rec.experts is not None:
            rec.experts.enter(m, rec.module_stack[-1], inputs)
        if _FAST_PATH_MODULES and isinstance(m, _FAST_PATH_MODULES):
            ctx = torch.enable_grad()
            ctx.__enter__()
            grad_stack.append((m, ctx))

    def leave(m, inputs, output):  # must return None: a value would replace the output
        if rec.module_stack:
            rec.module_stack.pop()
        # eval(): a dropout module is the identity and records no op; note its
        # p on the value it passes through, so a training step predicted from
        # this forward graph can count the mask and output it would allocate.
        if (isinstance(m, _DROPOUT_MODULES) and not m.training and getattr(m, "p", 0) > 0
                and rec.tracer is not None and isinstance(output, torch.Tensor)):
            node = node_of(rec.tracer, output)
            if node is not None:
                node.meta["graphlint_dropout"] = float(m.p)
        if grad_stack and grad_stack[-1][0] is m:
            grad_stack.pop()[1].__exit__(None, None, None)
        if rec.blocks is not None:
            rec.blocks.leave(rec, m, output)
        if rec.experts is not None:
            rec.experts.leave()

    hooks = [torch.nn.modules.module.register_module_forward_pre_hook(enter),
             torch.nn.modules.module.register_module_forward_hook(leave)]
    patched = simulate_device_calls(rec) if rec.simulate_device else contextlib.nullcontext()
    # A checkpoint's recompute runs inside the apply of the first backward
    # node that unpacks its tensors, but its ops are the block's forward, not
    # that apply's. torch 2.x marks it with _recomputation_hook; torch 1.13
    # has no such hook, so the checkpointed function is wrapped: called again
    # in backward (the non-reentrant unpack), it is the recompute; the
    # reentrant CheckpointFunction.backward, whose recompute and inner
    # backward run in one apply of the outer graph, records no applies.
    checkpoint = importlib.import_module("torch.utils.checkpoint")
    recompute = getattr(checkpoint, "_recomputation_hook", None)
    orig_recompute = (recompute.__enter__, recompute.__exit__) if recompute is not None else None
    legacy = None
    if recompute is not None:
        def recompute_enter(self, *a):
            rec.recomputing += 1
            if rec.recomputing == 1 and rec.recompute_frames:
                rec.recompute_frames[0]()
            return orig_recompute[0](self, *a)

        def recompute_exit(self, *a):
            if rec.recomputing == 1 and rec.recompute_frames:
                rec.recompute_frames[1]()
            rec.recomputing -= 1
            return orig_recompute[1](self, *a)
        recompute.__enter__, recompute.__exit__ = recompute_enter, recompute_exit
    elif (hasattr(checkpoint, "_checkpoint_without_reentrant") and hasattr(checkpoint, "CheckpointFunction")
          and "backward" in checkpoint.CheckpointFunction.__dict__):
        legacy = (checkpoint._checkpoint_without_reentrant, checkpoint.CheckpointFunction.__dict__["backward"])

        def recomputing(fn):
            def run(*a, **k):
                rec.recomputing += 1
                frames = rec.recompute_frames if rec.recomputing == 1 else None
                if frames:
                    frames[0]()
                try:
                    return fn(*a, **k)
                finally:
                    if frames:
                        frames[1]()
                    rec.recomputing -= 1
            return run

        def without_reentrant(function, *a, **k):
            again = recomputing(function)
            return legacy[0](lambda *fa, **fk: (again if rec.phase == "backward" else function)(*fa, **fk), *a, **k)
        checkpoint._checkpoint_without_reentrant = without_reentrant
        checkpoint.CheckpointFunction.backward = staticmethod(recomputing(legacy[1].__func__))
    else:
        rec.recomputing = 1   # a checkpoint this exporter does not know: no applies recorded
    orig_create_node = torch.fx.Graph.create_node
    if rec.blocks is not None:   # fx names nodes in creation order: fx_blocks renumbers from it
        torch.fx.Graph.create_node = rec.blocks.recording(orig_create_node)
    if TORCH2 and rec.fake_mode is not None:
        rec.experts = ExpertsScope()
    try:
        with patched, GroupedMmAnyFloat():
            yield rec
    finally:
        tracer_cls.create_proxy, mode_cls.__torch_dispatch__ = orig_proxy, orig_dispatch
        torch.fx.Graph.create_node = orig_create_node
        if recompute is not None:
            recompute.__enter__, recompute.__exit__ = orig_recompute
        if legacy is not None:
            checkpoint._checkpoint_without_reentrant = legacy[0]
            checkpoint.CheckpointFunction.backward = legacy[1]
        torch.nn.functional.dropout = orig_dropout
        for m, f in tensor_methods.items():
            setattr(torch.Tensor, m, f)
        if sym_bool is not None:
            sym_bool.__bool__ = orig_sym_bool
        if fake_tolist is not None:
            FakeTensor.tolist = fake_tolist
        if fake_repr is not None:
            FakeTensor.__repr__ = fake_repr
        if sym_node is not None:
            sym_node.guard_int, sym_node.guard_bool = orig_guard_int, orig_guard_bool
            sym_node.guard_float = orig_guard_float
        for h in hooks:
            h.remove()


DTYPES = {
    torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16", torch.float64: "float64",
    torch.int64: "int64", torch.int32: "int32", torch.int16: "int16", torch.int8: "int8", torch.uint8: "uint8",
    torch.bool: "bool", torch.complex64: "complex64", torch.complex128: "complex128",
}


def tensor_meta(t):
    """Shape and strides keep torch's SymInts; fx_json writes them."""
    meta = {"shape": list(t.shape), "dtype": DTYPES.get(t.dtype, str(t.dtype).replace("torch.", "")),
            "device": logical_device(t), "requires_grad": bool(t.requires_grad)}
    try:
        meta["strides"] = list(t.stride())
    except Exception:  # sparse or other layouts
        pass
    return meta
