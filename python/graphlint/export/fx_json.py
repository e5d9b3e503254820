"""Writing a captured graph as graphlint's FX JSON (docs/fx-format.md)."""

import math
import operator
import re

import torch
from torch.utils import _pytree as pytree

from .fx_record import DTYPES, SYNC_OPS, host_repr, numpy, tensor_meta, tolist

SYM_TYPES = tuple(t for t in (getattr(torch, n, None) for n in ("SymInt", "SymFloat", "SymBool")) if t is not None)
MARKERS = (tolist, numpy, host_repr)

# --------------------------------------------------------------------------
# Serialisation
# --------------------------------------------------------------------------

def _attr_value(a):
    if isinstance(a, float) and not math.isfinite(a):
        return str(a)  # "inf", "-inf", "nan": JSON has no such numbers
    if isinstance(a, (bool, int, float, str)) or a is None:
        return a
    if isinstance(a, (torch.dtype,)):
        return DTYPES.get(a, str(a))
    if isinstance(a, (torch.device, torch.layout, torch.memory_format)):
        return str(a)
    if isinstance(a, (list, tuple)) and all(isinstance(x, (bool, int, float)) for x in a):
        return [_attr_value(x) for x in a]
    return str(a)


def is_sym_node(n):
    """Nodes that compute sizes, not tensors (aten.sym_size, operator.mul on
    SymInts): dropped; their values appear as expressions in the attrs of
    the ops that use them."""
    if n.op != "call_function":
        return False
    target = n.target
    if target in MARKERS:
        return False
    if target is operator.getitem or getattr(target, "__name__", "") == "getitem":
        # operator.getitem unpacks a tuple: of sizes (a size node), or of
        # tensors (var_mean, batch norm, max_pool2d_with_indices, every
        # *_backward: a value the graph reads on, never to be dropped).
        return isinstance(n.meta.get("val"), SYM_TYPES + (int, float, bool))
    if is_higher_order(n):
        return False
    schema = getattr(target, "_schema", None)
    if schema is None:
        return True
    return schema.name.startswith("aten::sym_")


def getitems(n):
    """A tuple-returning node's unpacking: output index -> its getitem node."""
    return {u.args[1]: u for u in n.users if getattr(u.target, "__name__", "") == "getitem"}


def is_higher_order(n):
    """torch.cond, torch.while_loop, ... (torch.ops.higher_order.*): written as
    `higher_order::NAME` nodes, never dropped."""
    hop = getattr(torch._ops, "HigherOrderOperator", None)
    return n.op == "call_function" and hop is not None and isinstance(n.target, hop)


_SUFFIX = re.compile(r"^(.*)_(\d+)$")


def name_base(name):
    """fx's base of a node name: mm_12 -> mm."""
    m = _SUFFIX.match(name)
    return m.group(1) if m else name


def _illegal_names():
    """Names fx never gives a node bare (keywords, builtins such as slice, max):
    the first such node is base_1."""
    import torch.fx.graph as fx_graph
    table = getattr(fx_graph, "_illegal_names", None)
    if table is not None:   # torch 2.x
        return lambda name: name in table
    namespace = fx_graph._Namespace()
    return lambda name: namespace._is_illegal_name(name, None)


def numbered(bases):
    """Names for nodes written in this order with these base names, numbered
    as fx numbers them (mm, mm_1, mm_2, ...; slice_1, slice_2, ...) but over
    the written nodes only: fx also counts the size nodes it creates and
    erases while tracing, how many depending on torch's caches, so its own
    numbers differ between two traces of the same layers."""
    illegal = _illegal_names()
    counts, out = {}, []
    for b in bases:
        c = counts.get(b)
        if c is None:
            c = 1 if illegal(b) else 0
        counts[b] = c + 1
        out.append(b if c == 0 else f"{b}_{c}")
    return out


class Writer:
    def __init__(self, cap, namer):
        self.cap = cap
        self.namer = namer
        self.names = {}   # fx node -> value name (or list of names for tuple outputs)
        self.emitted = set()   # fx nodes written as nodes (save points refer to them)
        self.diagnostics = []
        self.items = []

    def meta_json(self, meta, static=False):
        meta = dict(meta)
        if meta.get("device") == "meta":
            meta["device"] = getattr(self.cap, "meta_device", "meta")
        dim = (lambda d: int(d)) if static else self.namer.dim
        meta["shape"] = [dim(d) for d in meta["shape"]]
        if "strides" in meta:
            meta["strides"] = [dim(d) for d in meta["strides"]]
        return meta

    def run(self):
        gm, cap = self.cap.gm, self.cap
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        params, inputs = [], []
        for ph, (kind, name, t) in zip(placeholders, cap.placeholders):
            self.names[ph] = name
            if not isinstance(t, torch.Tensor) or kind == "alias":   # alias: a tied weight's second name
                continue
            if kind == "input":
                inputs.append({"name": name, **self.meta_json(tensor_meta(t))})
            else:
                params.append({"name": name, "kind": kind, **self.meta_json(tensor_meta(t), static=True)})
        saved = cap.saved
        # Every node written as a node (save points name the newest of them).
        emitted = [n for n in gm.graph.nodes if n.op == "call_function" and not is_sym_node(n)
                   and not (n.target.__module__ == "_operator" and n.target.__name__ == "getitem")]
        self.emitted = set(emitted)
        self.node_name = dict(zip(emitted, numbered([name_base(n.name) for n in emitted])))
        # Per backward node: how many of the nodes written after it run in
        # the same autograd node's apply (they are consecutive).
        self.apply_rest, later = {}, None
        for n in reversed(emitted):
            g = n.meta.get("graphlint", {}).get("autograd_node")
            same = g is not None and later is not None and later[0] == g
            self.apply_rest[n] = self.apply_rest[later[1]] + 1 if same else 0
            later = (g, n)
        nodes = []
        self.items = emitted   # the fx node of each entry of `nodes` (fx_blocks)
        self.constants = False
        for n in gm.graph.nodes:
            if n.op == "get_attr":
                self.constants = True
                t = getattr(gm, n.target)
                if isinstance(t, torch.Tensor):
                    params.append({"name": n.name, "kind": "constant", **self.meta_json(tensor_meta(t), static=True)})
                    self.names[n] = n.name
                    self.note_constant(n, t)
            elif is_sym_node(n):
                continue
            elif n.op == "call_function":
                if n.target.__module__ == "_operator" and n.target.__name__ == "getitem":
                    src = self.names.get(n.args[0])
                    self.names[n] = src[n.args[1]] if isinstance(src, list) and n.args[1] < len(src) else None
                    continue
                nodes.append(self.node_json(n, saved))
        out_node = next((n for n in gm.graph.nodes if n.op == "output"), None)
        outputs = []
        if out_node is not None:
            for a in pytree.tree_flatten(out_node.args)[0]:
                name = self.names.get(a) if isinstance(a, torch.fx.Node) else None
                if isinstance(name, str) and name not in outputs:
                    outputs.append(name)
        return params, inputs, nodes, outputs

    def note_constant(self, n, t):
        user = next((u for u in n.users if u.meta.get("graphlint", {}).get("loc")), None)
        loc = user.meta["graphlint"]["loc"] if user is not None else None
        self.diagnostics.append({"kind": "constant-baked", "message":
                                 f"a tensor made from Python or numpy data ({list(t.shape)}, {t.dtype}) is baked into "
                                 f"the graph as the constant '{n.name}': its values are fixed at capture time",
                                 **({"source": loc} if loc else {})})

    def ref(self, a):
        name = self.names.get(a)
        return name if isinstance(name, str) else None

    def node_json(self, n, saved):
        target = n.target
        schema = getattr(target, "_schema", None)
        op_name = schema.name if schema is not None else f"aten::{getattr(target, '__name__', str(target))}"
        bodies = []
        if is_higher_order(n):
            op_name = f"higher_order::{target.name()}"
            # The branch/loop bodies are graph modules: their sizes, not inputs.
            bodies = [a for a in n.args if isinstance(a, torch.fx.Node) and a.op == "get_attr"
                      and isinstance(getattr(self.cap.gm, a.target, None), torch.fx.GraphModule)]
        overload = getattr(schema, "overload_name", "") if schema is not None else ""
        inputs, attrs = [], {}
        arg_positions = {}   # schema argument index -> positions in `inputs`
        args = list(n.args)
        formal = list(schema.arguments) if schema is not None else []
        for i, formal_arg in enumerate(formal):
            if i < len(args):
                a = args[i]
            elif formal_arg.name in n.kwargs:
                a = n.kwargs[formal_arg.name]
            else:
                continue
            self.add_arg(formal_arg.name, a, i, inputs, attrs, arg_positions)
        if schema is None:
            for i, a in enumerate(args):
                if a in bodies:
                    continue
                self.add_arg(f"arg{i}", a, i, inputs, attrs, arg_positions)
        if bodies:
            attrs["body_nodes"] = [sum(1 for b in getattr(self.cap.gm, a.target).graph.nodes
                                       if b.op == "call_function") for a in bodies]
        mutates, alias_of_set = [], {}
        for i, formal_arg in enumerate(formal):
            info = formal_arg.alias_info
            if info is None:
                continue
            for s in info.before_set:
                alias_of_set.setdefault(s, i)
            if "*" in info.after_set and not info.is_write:
                alias_of_set.setdefault("*", i)
            if info.is_write:
                mutates.extend(arg_positions.get(i, []))
        gl = n.meta.get("graphlint", {})
        vals = self.output_metas(n)
        unbacked = []
        outs, aliases = [], []
        returns = list(schema.returns) if schema is not None else []
        names = []
        node_name = self.node_name[n]
        for j, meta in enumerate(vals):
            name = node_name if len(vals) == 1 else f"{node_name}.{j}"
            names.append(name)
            o = {"name": name}
            if meta is not None:
                o.update(self.meta_json(meta))
                self.new_unbacked(n, meta["shape"], unbacked)
            elif isinstance(n.meta.get("val"), SYM_TYPES) and len(vals) == 1:
                o["value"] = self.namer.dim(n.meta["val"])   # e.g. the u0 that .item() returns
                self.new_unbacked(n, [n.meta["val"]], unbacked, scalar=True)
            outs.append(o)
            src = -1
            # split/chunk/unbind return one `Tensor(a)[]`: every element is a view of `a`.
            ret = returns[j] if j < len(returns) else (
                returns[0] if len(returns) == 1 and isinstance(returns[0].type, torch._C.ListType) else None)
            if ret is not None and ret.alias_info is not None:
                # The schema writes a list's element alias `Tensor(a -> *)`: the
                # list's own set is empty and the argument's after-set is '*'.
                sets = ret.alias_info.before_set or ({"*"} if isinstance(ret.type, torch._C.ListType) else set())
                for s in sets:
                    pos = arg_positions.get(alias_of_set.get(s, -1), [])
                    if pos:
                        src = pos[0]
            aliases.append(src)
        for j, d, symbol, bound in self.cap.unbacked.get(n, []):   # torch 1.13: sized at the upper bound
            if j < len(outs) and "shape" in outs[j]:
                outs[j]["shape"][d] = symbol
                self.namer.info.setdefault(symbol, {"kind": "unbacked", "min": 0, "max": bound, "source": node_name})
                unbacked.append(symbol)
        self.names[n] = names[0] if len(vals) == 1 and not self.is_tuple(n) else names
        node = {"name": node_name, "op": op_name, "overload": overload, "inputs": inputs, "outputs": outs}
        if attrs:
            node["attrs"] = attrs
        if mutates:
            node["mutates"] = sorted(set(mutates))
        if any(a >= 0 for a in aliases):
            node["aliases"] = aliases
        saved_marks = self.saved_marks(n, len(vals), saved)
        if any(saved_marks):
            node["saved"] = saved_marks
            node["saved_at"] = self.save_points(n, len(vals), saved_marks)
        grad_of = self.gradient_marks(n, len(vals))
        if any(g is not None for g in grad_of):
            node["grad_of"] = grad_of
        held = self.held_points(n, len(vals))
        if any(held):
            node["held"] = held
        if self.apply_rest.get(n):
            node["apply_rest"] = self.apply_rest[n]
        if n.meta.get("graphlint", {}).get("accumulates"):
            node["accumulates"] = True
        dropout = self.dropout_marks(n, len(vals))
        if any(p is not None for p in dropout):
            node["dropout"] = dropout
        if target in SYNC_OPS or target in MARKERS or unbacked:
            node["host_sync"] = True
        if unbacked:
            node["unbacked"] = unbacked
        if "graphlint_assumed" in n.meta:
            node["assumed"] = n.meta["graphlint_assumed"]
        if gl.get("loc"):
            node["source"] = gl["loc"]
        if gl.get("module"):
            node["module"] = gl["module"]
        node["phase"] = gl.get("phase", "forward")
        return node

    def sym_value(self, a):
        val = a.meta.get("val")
        return self.namer.dim(val) if isinstance(val, SYM_TYPES + (int, float, bool)) else None

    def add_arg(self, name, a, i, inputs, attrs, positions):
        items = list(a) if isinstance(a, (list, tuple)) else [a]
        scalar = [isinstance(x, SYM_TYPES) or (isinstance(x, torch.fx.Node) and self.is_scalar(x)) for x in items]
        if any(scalar):
            # Sizes: written as expressions; a size read from a tensor value
            # (.item()) also references its host-sync node, for the data flow.
            vals = [self.namer.dim(x) if isinstance(x, SYM_TYPES) else
                    self.sym_value(x) if isinstance(x, torch.fx.Node) else _attr_value(x) for x in items]
            attrs[name] = vals if isinstance(a, (list, tuple)) else vals[0]
            for x in items:
                if isinstance(x, torch.fx.Node) and not is_sym_node(x):
                    positions.setdefault(i, []).append(len(inputs))
                    inputs.append(self.ref(x))
        elif isinstance(a, torch.fx.Node):
            positions.setdefault(i, []).append(len(inputs))
            inputs.append(self.ref(a))
        elif isinstance(a, (list, tuple)) and any(isinstance(x, torch.fx.Node) for x in a):
            for x in a:
                if isinstance(x, torch.fx.Node):
                    positions.setdefault(i, []).append(len(inputs))
                    inputs.append(self.ref(x))
        else:
            attrs[name] = _attr_value(a)

    def new_unbacked(self, n, dims, found, scalar=False):
        """Unbacked symbols (u0, ...) a node's outputs introduce: the node is
        where a size becomes data-dependent (nonzero, a boolean mask, .item())."""
        for d in dims:
            for name in self.namer.unbacked_symbols(d):
                bound = None if scalar else self.bound(n)
                if name not in found and self.namer.note_unbacked(name, self.node_name[n], bound, scalar):
                    found.append(name)

    def bound(self, n):
        """The largest size a data-dependent op can produce: its input's numel."""
        sizes = [a.meta.get("val") for a in n.args if isinstance(a, torch.fx.Node)]
        numel = [t.numel() for t in sizes if isinstance(t, torch.Tensor)]
        numel = [x if isinstance(x, int) else self.namer.value(x) for x in numel]   # symbolic: at the user's sizes
        numel = [int(x) for x in numel if x is not None]
        return max(numel) if numel else None

    @staticmethod
    def is_scalar(n):
        return is_sym_node(n) or isinstance(n.meta.get("val"), SYM_TYPES)

    @staticmethod
    def is_tuple(n):
        return any(u.op == "call_function" and getattr(u.target, "__name__", "") == "getitem" for u in n.users)

    def output_metas(self, n):
        if self.is_tuple(n):
            items = getitems(n)
            count = max(items) + 1 if items else 0
            schema = getattr(n.target, "_schema", None)
            if schema is not None:
                count = max(count, len(schema.returns))
            return [self.value_meta(n, items[j]) if j in items else None for j in range(count)]
        return [self.value_meta(n, n)]

    @staticmethod
    def value_meta(n, v):
        """The value the dispatch hook recorded; for a higher-order op, whose
        outputs it does not see, the fake tensor make_fx keeps."""
        meta = v.meta.get("graphlint_val")
        if meta is None and is_higher_order(n) and isinstance(v.meta.get("val"), torch.Tensor):
            meta = tensor_meta(v.meta["val"])
        return meta

    def dropout_marks(self, n, count):
        """eval() capture: per output, the p of a dropout module it passes through (None: none)."""
        if self.is_tuple(n):
            items = getitems(n)
            return [items[j].meta.get("graphlint_dropout") if j in items else None for j in range(count)]
        return [n.meta.get("graphlint_dropout")]

    def gradient_marks(self, n, count):
        """Joint graphs: per output, the forward value it is the gradient of (None: none known)."""
        def forward_name(key):
            fwd = self.cap.grad_of.get(key)
            return self.ref(fwd) if fwd is not None else None
        if self.is_tuple(n):
            items = getitems(n)
            return [forward_name(items[j]) if j in items else None for j in range(count)]
        return [forward_name(n)]

    def save_points(self, n, count, marks):
        """Per output, the name of the written node newest when autograd saved
        it (the save point; n itself for a saved output), None where not saved."""
        items = getitems(n)
        points = []
        for j in range(count):
            if not marks[j]:
                points.append(None)
                continue
            p = self.cap.saved_at.get(items.get(j) if self.is_tuple(n) else n)
            while p is not None and p not in self.emitted and p.op != "root":
                p = p._prev   # a getitem or size node: the written node before it
            # Unknown (never for a recorded save): n itself, the earliest a saved output can be saved.
            points.append(self.node_name[p] if p is not None and p in self.emitted else self.node_name[n])
        return points

    def held_points(self, n, count):
        """Per output, the name of the written node newest when a Python frame
        holding the value returned (None: no frame held it past the graph)."""
        items = getitems(n)
        points = []
        for j in range(count):
            p = self.cap.held.get(items.get(j) if self.is_tuple(n) else n)
            while p is not None and p not in self.emitted and p.op != "root":
                p = p._prev
            points.append(self.node_name[p] if p is not None and p in self.emitted and p is not n else None)
        return points

    def saved_marks(self, n, count, saved):
        if self.is_tuple(n):
            items = getitems(n)
            return [j in items and items[j] in saved for j in range(count)]
        return [n in saved]


