"""Capturing a module's aten graph for graphlint-export: make_fx (torch 1.13
and 2.x; forward, or the joint forward + backward graph with the tensors
autograd saves marked) and torch.export (torch >= 2.1, forward only)."""

import contextlib
import os
import sys
import warnings

import torch
from torch.fx.experimental import proxy_tensor
from torch.utils import _pytree as pytree

from fx_record import Recorder, loc_from_stack_trace, node_of, recording, tensor_meta

TORCH2 = int(torch.__version__.split(".")[0]) >= 2


class ExportError(Exception):
    """A request this torch cannot serve; the CLI prints it and exits 2."""


# --------------------------------------------------------------------------
# Capture
# --------------------------------------------------------------------------

def functional_call(module, tensors, args):
    if TORCH2:
        return torch.func.functional_call(module, tensors, args)
    from torch.nn.utils import stateless
    return stateless.functional_call(module, tensors, args)


class Capture:
    """The traced graph plus what the exporter knows about its placeholders."""

    def __init__(self, gm, placeholders, saved, backward):
        self.gm = gm
        # Per placeholder, in graph order: (kind, name, tensor), kind one of
        # "parameter", "buffer", "constant" or "input".
        self.placeholders = placeholders
        self.saved = saved                # fx nodes whose value autograd saves for backward
        self.backward = backward          # {"traced": bool, "error": str}


def capture_make_fx(module, inputs, train, simulate_device):
    params = dict(module.named_parameters())
    buffers = dict(module.named_buffers())
    names = list(params) + list(buffers)
    state = [params[n] if n in params else buffers[n] for n in names]
    module_names = {id(m): n for n, m in module.named_modules()}
    placeholders = [("parameter" if n in params else "buffer", n, t) for n, t in zip(names, state)]
    placeholders += [("input", f"input{i}", t) for i, t in enumerate(inputs)]

    def trace(with_backward, save_hooks):
        rec = Recorder(module_names, simulate_device)
        if simulate_device:
            for t in list(state) + list(inputs):
                t._graphlint_device = simulate_device

        def step(*flat):
            rec.active = True
            kept = dict(zip(names, flat[:len(names)]))
            hooks = (torch.autograd.graph.saved_tensors_hooks(lambda t: save(rec, t), lambda t: t)
                     if save_hooks else contextlib.nullcontext())
            # Anomaly mode makes autograd keep each grad_fn's forward stack,
            # which the backward ops are then attributed to.
            with hooks, (_forward_stacks() if with_backward else contextlib.nullcontext()):
                out = functional_call(module, kept, tuple(flat[len(names):]))
            if not with_backward:
                return out
            rec.phase = "backward"
            outs = [o for o in pytree.tree_flatten(out)[0] if isinstance(o, torch.Tensor) and o.requires_grad]
            _locate_backward(rec, [o.grad_fn for o in outs])
            wrt = [t for t in flat if isinstance(t, torch.Tensor) and t.requires_grad]
            grads = torch.autograd.grad(outs, wrt, grad_outputs=[torch.ones_like(o) for o in outs], allow_unused=True)
            return out, grads

        grad_ctx = contextlib.nullcontext() if train else torch.no_grad()
        with recording(rec), grad_ctx:
            gm = proxy_tensor.make_fx(step)(*state, *inputs)
        return gm, rec.saved

    module.train(train)
    if not train:
        gm, _ = trace(False, False)
        return Capture(gm, placeholders, set(), None)
    # Saved tensors are recorded with saved_tensors_hooks in a forward-only
    # trace: in torch 1.13, make_fx cannot trace backward through hooked
    # saved tensors. The joint trace runs without them and takes the marks
    # over by position (the forward ops are the same, minus the `detach`
    # nodes autograd adds for saved outputs when no hooks are set).
    fwd, saved = trace(False, True)
    try:
        joint, _ = trace(True, False)
    except RuntimeError as e:
        if os.environ.get("GRAPHLINT_EXPORT_DEBUG"):
            raise
        # Typically autograd's own "modified by an inplace operation": keep
        # the forward graph with its saved-for-backward marks so GL132 can
        # point at the line that causes it.
        return Capture(fwd, placeholders, saved, {"traced": False, "error": str(e).splitlines()[0]})
    ops_fwd = _forward_ops(fwd)
    ops_joint = _forward_ops(joint)
    if [n.target for n in ops_fwd] != [n.target for n in ops_joint[:len(ops_fwd)]]:
        print("graphlint-export: warning: forward and joint traces differ; saved-for-backward marks dropped",
              file=sys.stderr)
        return Capture(joint, placeholders, set(), {"traced": True, "error": ""})
    mapped = set()
    for n, twin in zip(ops_fwd, ops_joint):
        if n in saved:
            mapped.add(twin)
        items = {g.args[1]: g for g in twin.users if _is_getitem(g)}
        mapped.update(items[g.args[1]] for g in n.users if _is_getitem(g) and g in saved and g.args[1] in items)
    return Capture(joint, placeholders, mapped, {"traced": True, "error": ""})


def _forward_stacks():
    warnings.filterwarnings("ignore", message="Anomaly Detection has been enabled")
    try:
        return torch.autograd.detect_anomaly(check_nan=False)
    except TypeError:  # torch versions without check_nan
        return torch.autograd.detect_anomaly()


def _locate_backward(rec, roots):
    """Before each backward node runs, point the recorder at the user's line
    of the forward op it differentiates (from the anomaly-mode stack)."""
    seen, todo = set(), [fn for fn in roots if fn is not None]
    while todo:
        fn = todo.pop()
        if fn in seen:
            continue
        seen.add(fn)
        stack = fn.metadata.get("traceback_") if hasattr(fn, "metadata") else None
        loc = loc_from_stack_trace("".join(stack)) if stack else None
        fn.register_prehook(lambda grads, loc=loc: setattr(rec, "backward_loc", loc))
        todo.extend(next_fn for next_fn, _ in fn.next_functions if next_fn is not None)


def save(rec, t):
    """saved_tensors_hooks pack hook: resolve the tensor to its node now, since
    a later in-place op rebinds the tensor to the node that mutated it."""
    node = node_of(rec.tracer, t) if rec.tracer is not None and isinstance(t, torch.Tensor) else None
    if node is not None:
        rec.saved.add(node)
    return t


def _is_getitem(n):
    return n.op == "call_function" and getattr(n.target, "__name__", "") == "getitem"


def _forward_ops(gm):
    return [n for n in gm.graph.nodes if n.op == "call_function" and not _is_getitem(n)
            and str(n.target) != "aten.detach.default"
            and n.meta.get("graphlint", {}).get("phase", "forward") == "forward"]


def capture_export(module, inputs, train, simulate_device):  # pragma: no cover - torch 2.x only
    """torch.export path (torch >= 2.1): forward only, decomposed to aten.
    Source lines come from each node's stack_trace; module paths from
    nn_module_stack. Untested here (only torch 1.13 is installed)."""
    if not TORCH2 or not hasattr(torch, "export"):
        raise ExportError("--capture export needs torch >= 2.1 (torch.export); use the default make_fx capture")
    if train:
        raise ExportError("--capture export traces the forward graph only; use the default make_fx capture with --train")
    module.eval()
    ep = torch.export.export(module, tuple(inputs)).run_decompositions()
    gm = ep.graph_module
    sig = ep.graph_signature
    sd = {**dict(module.named_parameters()), **dict(module.named_buffers())}
    constants = getattr(ep, "constants", {})
    kinds = [("parameter", getattr(sig, "inputs_to_parameters", {}), sd),
             ("buffer", getattr(sig, "inputs_to_buffers", {}), sd),
             ("constant", getattr(sig, "inputs_to_lifted_tensor_constants", {}), constants)]
    placeholders, user_inputs = [], iter(inputs)
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            lifted = next(((kind, table[node.name], values.get(table[node.name]))
                           for kind, table, values in kinds if node.name in table), None)
            if lifted is None:
                user = next(user_inputs, None)
                lifted = ("input", f"input{sum(k == 'input' for k, _, _ in placeholders)}", user)
            placeholders.append(lifted)
        elif node.op == "call_function":
            node.meta["graphlint"] = {"loc": loc_from_stack_trace(node.meta.get("stack_trace")),
                                      "module": _module_from_stack(node.meta.get("nn_module_stack")),
                                      "phase": "forward"}
            val = node.meta.get("val")
            if isinstance(val, torch.Tensor):
                node.meta["graphlint_val"] = tensor_meta(val)
    return Capture(gm, placeholders, set(), None)


def _module_from_stack(stack):
    if not stack:
        return ""
    last = list(stack.values())[-1]
    return last[0] if isinstance(last, tuple) else str(last)


