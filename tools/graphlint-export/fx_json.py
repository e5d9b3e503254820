"""Writing a captured graph as graphlint's FX JSON (docs/fx-format.md)."""

import math

import torch
from torch.utils import _pytree as pytree

from fx_record import DTYPES, SYNC_OPS, tensor_meta, tolist

# --------------------------------------------------------------------------
# Serialisation
# --------------------------------------------------------------------------

class DimNamer:
    """--dim NAME=SIZE: every dim of that traced size in the inputs and the
    intermediate tensors (not the weights) is written as the symbol. The
    trace only sees sizes, so pick a size no other dim has (e.g. batch 7)."""

    def __init__(self, bindings):
        self.by_size = {size: name for name, size in bindings}

    def dims(self, shape):
        return [self.by_size.get(int(d), int(d)) for d in shape]


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


class Writer:
    def __init__(self, cap, namer):
        self.cap = cap
        self.namer = namer
        self.names = {}   # fx node -> value name (or list of names for tuple outputs)

    def meta_json(self, meta):
        meta = dict(meta)
        meta["shape"] = self.namer.dims(meta["shape"])
        return meta

    def run(self):
        gm, cap = self.cap.gm, self.cap
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        params, inputs = [], []
        for ph, (kind, name, t) in zip(placeholders, cap.placeholders):
            self.names[ph] = name
            if not isinstance(t, torch.Tensor):
                continue
            if kind == "input":
                inputs.append({"name": name, **self.meta_json(tensor_meta(t))})
            else:
                params.append({"name": name, "kind": kind, **tensor_meta(t)})  # weights keep static dims
        saved = cap.saved
        nodes = []
        for n in gm.graph.nodes:
            if n.op == "get_attr":
                t = getattr(gm, n.target)
                if isinstance(t, torch.Tensor):
                    params.append({"name": n.name, "kind": "constant", **self.meta_json(tensor_meta(t))})
                    self.names[n] = n.name
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

    def ref(self, a):
        name = self.names.get(a)
        return name if isinstance(name, str) else None

    def node_json(self, n, saved):
        target = n.target
        schema = getattr(target, "_schema", None)
        op_name = schema.name if schema is not None else f"aten::{getattr(target, '__name__', str(target))}"
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
                self.add_arg(f"arg{i}", a, i, inputs, attrs, arg_positions)
        mutates, alias_of_set = [], {}
        for i, formal_arg in enumerate(formal):
            info = formal_arg.alias_info
            if info is None:
                continue
            for s in info.before_set:
                alias_of_set.setdefault(s, i)
            if info.is_write:
                mutates.extend(arg_positions.get(i, []))
        gl = n.meta.get("graphlint", {})
        vals = self.output_metas(n)
        outs, aliases = [], []
        returns = list(schema.returns) if schema is not None else []
        names = []
        for j, meta in enumerate(vals):
            name = n.name if len(vals) == 1 else f"{n.name}.{j}"
            names.append(name)
            o = {"name": name}
            if meta is not None:
                o.update(self.meta_json(meta))
            outs.append(o)
            src = -1
            if j < len(returns) and returns[j].alias_info is not None:
                for s in returns[j].alias_info.before_set:
                    pos = arg_positions.get(alias_of_set.get(s, -1), [])
                    if pos:
                        src = pos[0]
            aliases.append(src)
        self.names[n] = names[0] if len(vals) == 1 and not self.is_tuple(n) else names
        node = {"name": n.name, "op": op_name, "overload": overload, "inputs": inputs, "outputs": outs}
        if attrs:
            node["attrs"] = attrs
        if mutates:
            node["mutates"] = sorted(set(mutates))
        if any(a >= 0 for a in aliases):
            node["aliases"] = aliases
        saved_marks = self.saved_marks(n, len(vals), saved)
        if any(saved_marks):
            node["saved"] = saved_marks
        if target in SYNC_OPS or target is tolist:
            node["host_sync"] = True
        if gl.get("loc"):
            node["source"] = gl["loc"]
        if gl.get("module"):
            node["module"] = gl["module"]
        node["phase"] = gl.get("phase", "forward")
        return node

    def add_arg(self, name, a, i, inputs, attrs, positions):
        if isinstance(a, torch.fx.Node):
            positions.setdefault(i, []).append(len(inputs))
            inputs.append(self.ref(a))
        elif isinstance(a, (list, tuple)) and any(isinstance(x, torch.fx.Node) for x in a):
            for x in a:
                if isinstance(x, torch.fx.Node):
                    positions.setdefault(i, []).append(len(inputs))
                    inputs.append(self.ref(x))
        else:
            attrs[name] = _attr_value(a)

    @staticmethod
    def is_tuple(n):
        return any(u.op == "call_function" and getattr(u.target, "__name__", "") == "getitem" for u in n.users)

    def output_metas(self, n):
        if self.is_tuple(n):
            getitems = {u.args[1]: u for u in n.users if getattr(u.target, "__name__", "") == "getitem"}
            count = max(getitems) + 1 if getitems else 0
            schema = getattr(n.target, "_schema", None)
            if schema is not None:
                count = max(count, len(schema.returns))
            return [getitems[j].meta.get("graphlint_val") if j in getitems else None for j in range(count)]
        return [n.meta.get("graphlint_val")]

    def saved_marks(self, n, count, saved):
        if self.is_tuple(n):
            getitems = {u.args[1]: u for u in n.users if getattr(u.target, "__name__", "") == "getitem"}
            return [j in getitems and getitems[j] in saved for j in range(count)]
        return [n in saved]


