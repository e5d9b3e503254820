"""Tracing a module's aten graph for graphlint-export.

`trace_make_fx` runs make_fx over the module reparametrized with the traced state --
with fake tensors (the default: FakeTensorMode on torch 1.13, FakeTensorMode
with a ShapeEnv, so sizes are SymInts, on torch 2.x) or real ones (--capture
real) -- forward only, or the joint forward + backward graph (autograd.grad
inside the trace, as aot_autograd does) with the tensors autograd saves for
backward marked. `trace_export` is torch.export (torch >= 2.1, forward)."""

import contextlib
import inspect
import os
import sys
import warnings

import torch
from torch.fx.experimental import proxy_tensor
from torch.utils import _pytree as pytree

from .fx_build import ExportError
from .fx_record import Recorder, node_of, recording, tensor_meta
from .fx_source import UserSource, is_user_file

TORCH2 = int(torch.__version__.split(".")[0]) >= 2


class Capture:
    """The traced graph plus what the exporter knows about its placeholders."""

    def __init__(self, gm, placeholders, saved, backward, diagnostics, rec=None, saved_at=None):
        self.gm = gm
        # Per placeholder, in graph order: (kind, name, tensor), kind one of
        # "parameter", "buffer", "constant" or "input".
        self.placeholders = placeholders
        self.saved = saved                # fx nodes whose value autograd saves for backward
        self.saved_at = saved_at or {}    # saved fx node -> the graph node newest when autograd first saved it
        self.backward = backward          # {"traced": bool, "error": str}
        self.diagnostics = diagnostics    # [{"kind", "message", "source"?}]
        self.unbacked = rec.unbacked if rec is not None else {}   # 1.13: node -> [(out, dim, symbol, max)]
        self.grad_of = rec.grad_of if rec is not None else {}     # joint graphs: gradient node -> forward node
        self.blocks = rec.blocks if rec is not None else None      # fx_blocks.BlockMarks of this graph's trace
        self.called = rec.called if rec is not None else None     # modules whose forward ran (None: not tracked)
        self.held = rec.held if rec is not None else {}          # fx node -> newest node when a Python frame let it go
        # torch symbol of an unbacked size -> the experts module whose one expert's rows it counts (fx_moe)
        self.expert_rows = rec.experts.counts if rec is not None and rec.experts is not None else {}
        self.enumerated = rec.enumerated if rec is not None else {}   # fx_guards._nonzero_rows


def reparametrized(module, tensors):
    """The module reads `tensors` as its parameters and buffers while the
    context is open: over the forward and, for a joint graph, the backward
    too, where torch.utils.checkpoint recomputes a block's forward (outside
    the forward's call, the recompute would read the module's own weights and
    bake them into the graph as constants)."""
    from torch.nn.utils import stateless
    if TORCH2:
        return stateless._reparametrize_module(module, tensors, tie_weights=True, strict=False)
    return stateless._reparametrize_module(module, tensors)


def trace_make_fx(module, state, aliases, inputs, train, module_train, fake_mode, simulate_device, blocks=None,
                  loss_output=None, source=None):
    """state: [(kind, name, tensor)] unique parameters and buffers; aliases:
    every qualified name -> index in state (tied weights: two names, one
    tensor); inputs: [(name, tensor, keyword?)]; loss_output: the output
    name (--loss-output) to back-propagate alone, None for the default (a
    `loss` beside other outputs, else every output); source: the user's
    files (fx_source.UserSource). Returns a Capture."""
    source = source or UserSource()
    tensors = [t for _, _, t in state]
    module_names = {id(m): n for n, m in module.named_modules()}
    placeholders = list(state) + [("input", name, t) for name, t, _ in inputs]
    flat_inputs = tensors + [t for _, t, _ in inputs]
    n_state = len(tensors)
    diagnostics = []

    reentrant_checkpoint = [False]   # set when autograd.grad met a reentrant checkpoint

    def trace(with_backward, save_hooks):
        # Without a GPU, `.cuda()` in the model is recorded (as cuda:0), not performed.
        patch_devices = simulate_device or (None if torch.cuda.is_available() else "cpu")
        rec = Recorder(module_names, patch_devices, fake_mode, source)
        rec.blocks = blocks() if blocks is not None else None
        if simulate_device:
            for t in flat_inputs:
                t._graphlint_device = simulate_device

        def step(*flat):
            rec.active = True
            if simulate_device:   # the tensors the trace sees (torch 2.x make_fx re-wraps its inputs)
                for t in flat:
                    t._graphlint_device = simulate_device
            kept = {alias: flat[i] for alias, i in aliases.items()}
            args = tuple(t for (_, _, kw), t in zip(inputs, flat[n_state:]) if not kw)
            kwargs = {name: t for (name, _, kw), t in zip(inputs, flat[n_state:]) if kw}
            hooks = (torch.autograd.graph.saved_tensors_hooks(lambda t: save(rec, t), unpack)
                     if save_hooks else contextlib.nullcontext())
            # Anomaly mode makes autograd keep each grad_fn's forward stack,
            # which the backward ops are then attributed to.
            rec.collect_forward = with_backward
            with reparametrized(module, kept):
                with hooks, (_forward_stacks() if with_backward else contextlib.nullcontext()):
                    out = module(*args, **kwargs)
                if not with_backward:
                    return out
                rec.collect_forward = False
                _hook_gradients(rec)
                return out, backward(out, flat)

        def backward(out, flat):
            rec.phase = "backward"
            outs = [o for o in pytree.tree_flatten(_plain(out))[0]
                    if isinstance(o, torch.Tensor) and o.requires_grad]
            if loss_output is not None:
                # --loss-output NAME: that output alone, as `out[NAME].backward()`.
                outs = [_named_output(out, loss_output)]
                return backward_from(outs, flat)
            loss = _loss_output(out)
            if loss is not None and len(outs) > 1:
                # A model that returns its loss (transformers' `loss`, given
                # labels) trains on it alone: loss.backward(), no seed on the logits.
                outs = [loss]
                if not any(d["kind"] == "loss-only" for d in diagnostics):
                    diagnostics.append({"kind": "loss-only", "message": "the model returns 'loss' and other outputs: "
                                        "only the loss is back-propagated (loss.backward()); the other outputs are "
                                        "kept as forward outputs"})
            if not outs:
                raise ExportError("--train: no output of the model requires grad (nothing to differentiate)")
            return backward_from(outs, flat)

        def backward_from(outs, flat):
            _locate_backward(rec, [o.grad_fn for o in outs])
            wrt_idx = [i for i, t in enumerate(flat) if isinstance(t, torch.Tensor) and t.requires_grad]
            seeds = [torch.ones_like(o) for o in outs]
            if reentrant_checkpoint[0]:
                # torch.utils.checkpoint(use_reentrant=True) refuses
                # autograd.grad: run .backward() as the training step does
                # and read the leaves' accumulated gradients.
                torch.autograd.backward(outs, grad_tensors=seeds)
                grads = tuple(flat[i].grad for i in wrt_idx)
            else:
                grads = torch.autograd.grad(outs, [flat[i] for i in wrt_idx], grad_outputs=seeds, allow_unused=True)
            rec.no_grad = [i for i, g in zip(wrt_idx, grads) if g is None]
            return grads

        grad_ctx = contextlib.nullcontext() if with_backward or save_hooks else torch.no_grad()
        # Python locals' holds are recorded for forward graphs; a joint graph's
        # forward frames are not traced: the trace function costs every Python
        # call of the trace (a Llama 7B --train capture took 3x as long, and
        # the hold into the next layer kept the repeated-block capture from
        # applying), and a training step's peak is in backward, after those
        # frames have returned. A checkpoint's recompute runs in backward: its
        # frames are traced (T5's relative position buckets, the scores).
        holding = frames_holding(rec, recompute_only=with_backward)
        with recording(rec), grad_ctx, holding:
            gm = _make_fx(step, fake_mode)(*flat_inputs)
        return gm, rec

    def joint_trace(save_hooks):
        # torch 1.x only: on torch 2.x the traced reentrant step (checked on
        # a 4-block MLP) costs +31% against eager's, where the forward
        # graph's synthesised step is +25% and says it is one (docs/memory.md).
        try:
            return trace(True, save_hooks)
        except RuntimeError as e:
            if TORCH2 or "compatible with .grad()" not in str(e):
                raise
            reentrant_checkpoint[0] = True
            return trace(True, save_hooks)

    module.train(module_train)
    if not train:
        gm, rec = trace(False, False)
        return Capture(gm, placeholders, set(), None, diagnostics + rec.diagnostics, rec)
    if TORCH2 and fake_mode is not None and not os.environ.get("GRAPHLINT_EXPORT_TWO_TRACES"):
        # torch 2.x traces backward through hooked saved tensors: one trace.
        try:
            joint, rec = joint_trace(True)
        except (RuntimeError, NotImplementedError) as e:
            if os.environ.get("GRAPHLINT_EXPORT_DEBUG"):
                raise
            fwd, frec = trace(False, True)
            return _backward_failed(e, fwd, frec, placeholders, diagnostics)
        _no_grad_diagnostics(rec, placeholders, diagnostics)
        return Capture(joint, placeholders, rec.saved, {"traced": True, "error": ""}, diagnostics + rec.diagnostics,
                       rec, rec.saved_at)
    # Saved tensors are recorded with saved_tensors_hooks in a forward-only
    # trace: in torch 1.13, make_fx cannot trace backward through hooked
    # saved tensors. The joint trace runs without them and takes the marks
    # over by position (the forward ops are the same, minus the `detach`
    # nodes autograd adds for saved outputs when no hooks are set).
    fwd, frec = trace(False, True)
    saved = frec.saved
    try:
        joint, rec = joint_trace(False)
    except (RuntimeError, NotImplementedError) as e:
        if os.environ.get("GRAPHLINT_EXPORT_DEBUG"):
            raise
        return _backward_failed(e, fwd, frec, placeholders, diagnostics)
    _no_grad_diagnostics(rec, placeholders, diagnostics)
    ops_fwd = _forward_ops(fwd)
    ops_joint = _forward_ops(joint)
    if [n.target for n in ops_fwd] != [n.target for n in ops_joint[:len(ops_fwd)]]:
        diagnostics.append({"kind": "saved-marks-dropped", "message": "the forward and joint traces differ, so the "
                            "tensors autograd saves for backward are not marked"})
        return Capture(joint, placeholders, set(), {"traced": True, "error": ""}, diagnostics + rec.diagnostics, rec)
    mapped, mapped_at = set(), {}
    twin_of = dict(zip(ops_fwd, ops_joint))

    def twin_point(p):   # the joint twin of the newest forward op at or before p
        while p is not None and p.op != "root" and p not in twin_of:
            p = p._prev
        return twin_of.get(p)

    for n, twin in zip(ops_fwd, ops_joint):
        if n in saved:
            mapped.add(twin)
            mapped_at[twin] = twin_point(frec.saved_at.get(n))
        items = {g.args[1]: g for g in twin.users if _is_getitem(g)}
        for g in n.users:
            if _is_getitem(g) and g in saved and g.args[1] in items:
                mapped.add(items[g.args[1]])
                mapped_at[items[g.args[1]]] = twin_point(frec.saved_at.get(g))
    return Capture(joint, placeholders, mapped, {"traced": True, "error": ""}, diagnostics + rec.diagnostics, rec,
                   mapped_at)


def _backward_failed(e, fwd, frec, placeholders, diagnostics):
    """Typically autograd's own "modified by an inplace operation", or an op
    without a backward: keep the forward graph with its saved-for-backward
    marks (GL132 points at the line) and say so in the file."""
    msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    where = frec.source.exception_frame(e)
    diagnostics.append({"kind": "backward-not-traced", "message": f"the backward graph could not be traced: {msg}",
                        **({"source": where} if where else {})})
    return Capture(fwd, placeholders, frec.saved, {"traced": False, "error": msg}, diagnostics + frec.diagnostics, frec,
                   frec.saved_at)


def _no_grad_diagnostics(rec, placeholders, diagnostics):
    for i in rec.no_grad:
        kind, name, _ = placeholders[i]
        diagnostics.append({"kind": "no-gradient", "message":
                            f"{kind} '{name}' requires grad but gets no gradient: it is unused, or an op on its "
                            f"path has no autograd kernel (a custom op without a backward)"})


def _make_fx(step, fake_mode):
    if fake_mode is None:
        return proxy_tensor.make_fx(step)
    if TORCH2:
        # The inputs are fake tensors of `fake_mode` (its ShapeEnv holds the
        # symbols of the dynamic dims); make_fx finds the mode from them.
        return proxy_tensor.make_fx(step, tracing_mode="symbolic")

    def run(*flat):  # torch 1.13: trace "real" over fake inputs, inside the fake mode
        with fake_mode:
            return proxy_tensor.make_fx(step)(*flat)
    return run


def _loss_output(out):
    """The scalar `loss` a model returns beside other outputs (transformers'
    ModelOutput, or a dict with a "loss" key), or None."""
    loss = out.get("loss") if isinstance(out, dict) else None
    if isinstance(loss, torch.Tensor) and loss.requires_grad and loss.dim() == 0:
        return loss
    return None


def _output_names(out):
    """The names --loss-output accepts for a model's output: a dict's (or
    transformers ModelOutput's) keys, a tuple's or list's indices, a plain
    object's tensor attributes; a lone tensor has none."""
    if isinstance(out, dict):
        return [str(k) for k in out.keys()]
    if isinstance(out, (tuple, list)):
        return [str(i) for i in range(len(out))]
    if isinstance(out, torch.Tensor):
        return []
    return sorted(k for k, v in vars(out).items() if isinstance(v, torch.Tensor)) if hasattr(out, "__dict__") else []


def _named_output(out, name):
    """The output --loss-output NAME names (a key, an index or an attribute),
    checked to be a tensor autograd can differentiate; ExportError otherwise."""
    value, found = None, False
    if isinstance(out, dict):
        found, value = name in out, out.get(name)
    elif isinstance(out, (tuple, list)):
        found = name.isdigit() and int(name) < len(out)
        value = out[int(name)] if found else None
    elif not isinstance(out, torch.Tensor) and hasattr(out, name):
        found, value = True, getattr(out, name)
    if not found:
        names = _output_names(out)
        have = f"its outputs: {', '.join(names)}" if names else f"it returns a single {type(out).__name__}"
        raise ExportError(f"--loss-output {name}: the model has no output '{name}' ({have})")
    if not isinstance(value, torch.Tensor):
        raise ExportError(f"--loss-output {name}: the output is a {type(value).__name__}, not a tensor")
    if not value.requires_grad:
        raise ExportError(f"--loss-output {name}: the output does not require grad (nothing to differentiate)")
    return value


def _plain(out):
    """Model outputs as pytree-flattenable values (transformers' ModelOutput
    is a dict subclass; dataclass-like outputs are read by their fields)."""
    if isinstance(out, dict):
        return dict(out)
    if hasattr(out, "to_tuple"):
        return out.to_tuple()
    return out


@contextlib.contextmanager
def _forward_stacks():
    """Anomaly mode: autograd keeps, on each grad_fn, the stack that created
    it. It asks torch.fx.traceback.format_stack for that stack; the whole
    formatted stack (source lines read through linecache) cost about a tenth
    of a Llama capture, and only its innermost user frame is ever read
    (UserSource.loc_from_stack_trace), so during the trace that frame alone is kept."""
    warnings.filterwarnings("ignore", message="Anomaly Detection has been enabled")
    try:
        anomaly = torch.autograd.detect_anomaly(check_nan=False)
    except TypeError:  # torch versions without check_nan
        anomaly = torch.autograd.detect_anomaly()
    import torch.fx.traceback as fx_traceback
    full = getattr(fx_traceback, "format_stack", None)

    def user_frame_only():
        if full is None or getattr(fx_traceback, "has_preserved_node_meta", lambda: False)():
            return full()
        frame = sys._getframe(1)
        while frame is not None and not is_user_file(frame.f_code.co_filename):
            frame = frame.f_back
        if frame is None:
            return []
        return [f'  File "{frame.f_code.co_filename}", line {frame.f_lineno}, in {frame.f_code.co_name}\n']

    if full is not None:
        fx_traceback.format_stack = user_frame_only
    try:
        with anomaly:
            yield
    finally:
        if full is not None:
            fx_traceback.format_stack = full


def _locate_backward(rec, roots):
    """Before each backward node runs, point the recorder at the user's line
    of the forward op it differentiates (from the anomaly-mode stack), and
    number the node's apply: the ops between its pre- and post-hook
    (`rec.autograd_node`; the engine's gradient accumulation after the
    apply belongs to none)."""
    seen, todo = set(), [fn for fn in roots if fn is not None]

    def enter(loc):
        rec.backward_loc = loc
        rec.autograd_node = rec.autograd_count = rec.autograd_count + 1

    while todo:
        fn = todo.pop()
        if fn in seen:
            continue
        seen.add(fn)
        stack = fn.metadata.get("traceback_") if hasattr(fn, "metadata") else None
        loc = rec.source.loc_from_stack_trace("".join(stack)) if stack else None
        fn.register_prehook(lambda grads, loc=loc: enter(loc))
        fn.register_hook(lambda grad_inputs, grad_outputs: setattr(rec, "autograd_node", None))
        todo.extend(next_fn for next_fn, _ in fn.next_functions if next_fn is not None)


def _hook_gradients(rec):
    """A hook on every forward activation autograd differentiates: the tensor
    it is handed in backward is that activation's gradient, so its node is
    recorded as the gradient of the forward node (the first hook to see a
    gradient tensor wins: `y = a + b` hands y's gradient on to a and b
    unchanged, and it is y's). Hooks only observe: the graph is unchanged."""
    def note(fwd, g):
        node = node_of(rec.tracer, g) if isinstance(g, torch.Tensor) else None
        if node is not None:
            rec.grad_of.setdefault(node, fwd)
    seen = set()
    for t, fwd in rec.forward_values:
        if id(t) in seen or not t.requires_grad or t.grad_fn is None:
            continue
        seen.add(id(t))
        t.register_hook(lambda g, fwd=fwd: note(fwd, g))
    rec.forward_values = []


# Frames whose locals are not the model's: torch's internals (but nn.Module
# forwards, which hold their arguments and results), the standard library and
# this exporter.
_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
_MODULES_DIR = os.path.join(_TORCH_DIR, "nn", "modules") + os.sep
# nn.Module.__call__ (_call_impl) holds a module's arguments until it
# returns: the memory trace's module scopes already do (Liveness), and a
# hold recorded here would point into the next repeated block.
_MODULE_CALL = os.path.join(_MODULES_DIR, "module.py")
_STDLIB_DIR = os.path.dirname(os.path.abspath(contextlib.__file__)) + os.sep
_EXPORTER_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


@contextlib.contextmanager
def frames_holding(rec, recompute_only=False):
    """Python locals keep tensors alive past their last use in the graph
    (torchvision's DenseNet concatenation until the bottleneck returns,
    transformers' input and position embeddings until the model returns): when
    a Python function of the model returns, every tensor its locals still
    bind was held until the newest node of that moment (`rec.held`, the FX
    format's `held`). recompute_only (a joint trace): only the frames of a
    checkpoint's recompute, which run in backward, where a training step's
    peak is; the tracer is installed while the recompute runs (the
    recorder's `recompute_frames`), so the rest of the trace pays nothing."""
    arguments = {}   # id(frame) -> ids of the tensors the frame was called with

    def wanted():
        # Not the tracer's presence: make_fx enters the model's outermost
        # frames before it has a tracer, and their locals (transformers'
        # inputs_embeds) are the ones held longest.
        return rec.active and (rec.recomputing > 0 if recompute_only else rec.phase == "forward")

    def tensors(v):
        return [t for t in (v if isinstance(v, (list, tuple)) else (v,)) if isinstance(t, torch.Tensor)]

    def hold(frame, skip, now):
        for v in frame.f_locals.values():
            for t in tensors(v):
                if id(t) in skip:
                    continue
                node = node_of(rec.tracer, t)
                if node is not None and node.op == "call_function":
                    now = now or rec.tracer.graph._root._prev
                    rec.held[node] = now
        return now

    def on_return(frame, event, arg):
        # A recompute torch stops early (its last saved tensor rebuilt)
        # unwinds its frames with an exception: they return here too.
        if event != "return":
            return on_return
        # Forget the frame whatever else happens: a stale entry's id is
        # reused by a later frame at the same address, which would then be
        # taken for a model frame with these arguments.
        own = arguments.pop(id(frame), ())
        if rec.tracer is None or not wanted():
            return on_return
        now = hold(frame, own, None)
        # The calling model frame binds its locals through the call, also
        # those it rebinds only afterwards (T5's `h, bias, _ = self.layer[0](h)`
        # keeps the attention weights in `_` until the next layer returns):
        # they were held until now.
        caller = frame.f_back
        while caller is not None and id(caller) not in arguments:
            caller = caller.f_back
        # The call's own arguments are the module scope's to hold (Liveness:
        # a module holds its arguments until it returns), not the caller's.
        if caller is not None:
            hold(caller, arguments[id(caller)] | set(own), now)
        return on_return

    def on_call(frame, event, arg):
        # A trace function, not a profile one: it sees Python frames only (no
        # C calls), and only the model's frames get a local tracer, with line
        # events off, so a 7B capture pays a few percent, not 3x.
        if not wanted():
            return None
        f = frame.f_code.co_filename
        if (f.startswith(_TORCH_DIR) and not f.startswith(_MODULES_DIR)) or f == _MODULE_CALL \
                or f.startswith(_STDLIB_DIR) or f.startswith(_EXPORTER_DIR) or f.startswith("<"):
            return None
        # A frame's arguments are its caller's: the caller binds them (and is
        # recorded when it returns), and a module call's are held by the
        # memory plan's module scopes. Recording them here too would point a
        # block's output into the next block's call (nn.Module.__call__,
        # transformers' checkpointing and deprecation wrappers).
        code = frame.f_code
        count = code.co_argcount + code.co_kwonlyargcount
        count += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
        values = [frame.f_locals.get(name) for name in code.co_varnames[:count]]
        flat = [x for v in values for x in (v.values() if isinstance(v, dict) else [v])]
        arguments[id(frame)] = {id(t) for v in flat for t in tensors(v)}
        frame.f_trace_lines = False
        return on_return

    if recompute_only:
        previous = []

        def start():
            previous.append(sys.gettrace())
            sys.settrace(on_call)

        def stop():
            sys.settrace(previous.pop() if previous else None)
        rec.recompute_frames = (start, stop)
        try:
            yield
        finally:
            rec.recompute_frames = None
        return
    old = sys.gettrace()
    sys.settrace(on_call)
    try:
        yield
    finally:
        sys.settrace(old)


def save(rec, t):
    """saved_tensors_hooks pack hook: resolve the tensor to its node now, since
    a later in-place op rebinds the tensor to the node that mutated it."""
    node = node_of(rec.tracer, t) if rec.tracer is not None and isinstance(t, torch.Tensor) else None
    if node is not None:
        rec.saved.add(node)
        # The save point: the newest node of the graph now. A write to the
        # tensor's storage by a later node is what autograd's version check
        # catches; one before it is not (`h[:, 0] = 0` before a Linear).
        rec.saved_at.setdefault(node, rec.tracer.graph._root._prev)
    return t, t._version


def unpack(packed):
    """saved_tensors_hooks unpack hook: autograd does not check the version
    of a tensor a hook packed, so do it here, as autograd would."""
    t, version = packed
    if t._version != version:
        raise RuntimeError(f"one of the variables needed for gradient computation has been modified by an inplace "
                           f"operation: [{t.dtype} {list(t.shape)}] is at version {t._version}; expected version "
                           f"{version} instead")
    return t


def _is_getitem(n):
    return n.op == "call_function" and getattr(n.target, "__name__", "") == "getitem"


def _forward_ops(gm):
    return [n for n in gm.graph.nodes if n.op == "call_function" and not _is_getitem(n)
            and hasattr(n.target, "_schema") and str(n.target) != "aten.detach.default"
            and n.meta.get("graphlint", {}).get("phase", "forward") == "forward"]


# --------------------------------------------------------------------------
# torch.export (torch >= 2.1)
# --------------------------------------------------------------------------

def trace_export(module, inputs, train, dynamic_shapes, source=None):
    """torch.export.export(...).run_decompositions(): forward only. The module
    and inputs are on the meta device (nothing is computed); dynamic dims are
    torch.export.Dim objects. Source lines come from each node's
    stack_trace (written as `source`, a fx_source.UserSource, writes
    them), module paths from nn_module_stack."""
    source = source or UserSource()
    if not TORCH2 or not hasattr(torch, "export"):
        raise ExportError("--capture export needs torch >= 2.1 (torch.export); use the default fake capture")
    if train:
        raise ExportError("--capture export traces the forward graph only; use the default capture with --train")
    module.eval()
    args = tuple(t for _, t, kw in inputs if not kw)
    kwargs = {n: t for n, t, kw in inputs if kw}
    ep = torch.export.export(module, args, kwargs, dynamic_shapes=dynamic_shapes or None, strict=False)
    ep = ep.run_decompositions()
    gm = ep.graph_module
    sig = ep.graph_signature
    # Tied weights (lm_head.weight = embed.weight): torch.export lifts one
    # placeholder per name; the graph keeps one parameter, under its first
    # name in named_parameters(), which every user of either name reads.
    state = {**dict(module.named_parameters(remove_duplicate=False)),
             **dict(module.named_buffers(remove_duplicate=False))}
    first = {}
    for name, t in list(module.named_parameters()) + list(module.named_buffers()):
        first.setdefault(id(t), name)
    kinds = [("parameter", getattr(sig, "inputs_to_parameters", {})),
             ("buffer", getattr(sig, "inputs_to_buffers", {})),
             ("constant", getattr(sig, "inputs_to_lifted_tensor_constants", {}))]
    placeholders, user_inputs, lifted_ids = [], iter(inputs), set()
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            lifted = next(((kind, table[node.name], node.meta.get("val")) for kind, table in kinds
                           if node.name in table), None)
            if lifted is None:
                user = next(user_inputs, None)
                lifted = ("input", user[0] if user else node.name, node.meta.get("val"))
            elif lifted[0] != "constant" and lifted[1] in state:
                tensor_id = id(state[lifted[1]])
                kind = "alias" if tensor_id in lifted_ids else lifted[0]   # fx_json writes no param for an alias
                lifted_ids.add(tensor_id)
                lifted = (kind, first.get(tensor_id, lifted[1]), lifted[2])
            placeholders.append(lifted)
        elif node.op == "call_function":
            node.meta["graphlint"] = {"loc": source.loc_from_stack_trace(node.meta.get("stack_trace")),
                                      "module": _module_from_stack(node.meta.get("nn_module_stack")),
                                      "phase": "forward"}
            val = node.meta.get("val")
            if isinstance(val, torch.Tensor):
                node.meta["graphlint_val"] = tensor_meta(val)
            elif isinstance(val, (tuple, list)):
                for u in node.users:
                    if _is_getitem(u) and isinstance(u.meta.get("val"), torch.Tensor):
                        u.meta["graphlint_val"] = tensor_meta(u.meta["val"])
    return Capture(gm, placeholders, set(), None, []), ep


def _module_from_stack(stack):
    if not stack:
        return ""
    last = list(stack.values())[-1]
    return last[0] if isinstance(last, tuple) else str(last)


__all__ = ["Capture", "ExportError", "trace_make_fx", "trace_export", "TORCH2"]
