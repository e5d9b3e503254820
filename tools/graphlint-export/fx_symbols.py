"""Symbolic sizes for graphlint-export (docs/fx-format.md, version 2): the
symbols of the user's dynamic dims, torch's unbacked sizes, and each dim
written as an expression string over them."""

import torch

TORCH2 = int(torch.__version__.split(".")[0]) >= 2


class Unsupported(Exception):
    pass


_FUNCS = {"FloorDiv": "FloorDiv", "CleanDiv": "FloorDiv", "IntTrueDiv": None, "Mod": "Mod", "PythonMod": "Mod",
          "Max": "Max", "Min": "Min", "CeilToInt": "CeilToInt", "FloorToInt": "FloorToInt", "CeilDiv": "CeilDiv"}


def expr_string(e, names):
    """A sympy expression in FX-V2's grammar, symbols renamed by `names`.
    Raises Unsupported for what the grammar cannot say (true division, ...)."""
    import sympy
    if e.is_Integer:
        return str(int(e))
    if e.is_Symbol:
        return names.get(e.name, e.name)
    if isinstance(e, sympy.Add):
        out = ""
        for term in sympy.Add.make_args(e):
            if term.could_extract_minus_sign():
                out += (" - " if out else "-") + _wrap(-term, names, add=False)
            else:
                out += (" + " if out else "") + _wrap(term, names, add=False)
        return out
    if isinstance(e, sympy.Mul):
        coeff, rest = e.as_coeff_Mul()
        if not coeff.is_Integer:
            raise Unsupported(str(e))
        parts = [] if coeff == 1 else [str(int(coeff))]
        parts += [_wrap(f, names, add=True) for f in sympy.Mul.make_args(rest)]
        return "*".join(parts)
    if isinstance(e, sympy.Pow):
        base, exp = e.args
        if exp.is_Integer and int(exp) >= 1:
            return "*".join([_wrap(base, names, add=True)] * int(exp))
        raise Unsupported(str(e))
    name = type(e).__name__
    if name == "ModularIndexing":   # (x // a) % b
        x, a, b = e.args
        return f"Mod(FloorDiv({expr_string(x, names)}, {expr_string(a, names)}), {expr_string(b, names)})"
    if name == "Identity":
        return expr_string(e.args[0], names)
    if _FUNCS.get(name):
        return f"{_FUNCS[name]}({', '.join(expr_string(a, names) for a in e.args)})"
    raise Unsupported(str(e))


def _wrap(e, names, add):
    import sympy
    s = expr_string(e, names)
    if isinstance(e, sympy.Add) or (add and isinstance(e, sympy.Mul)) or s.startswith("-"):
        return f"({s})"
    return s


class Symbols:
    """torch 2.x: the ShapeEnv of a fake capture. `symbolic(name, hint)`
    makes the SymInt of a user-named dynamic dim (one symbol per name);
    `dim(x)` writes a size; `table()` is the file's `symbols` object."""

    def __init__(self, shape_env):
        self.shape_env = shape_env
        self.by_name = {}        # user name -> SymInt
        self.names = {}          # torch symbol name -> user name
        self.info = {}           # user/unbacked name -> symbols-table entry
        self.unsupported = 0
        self._cache = {}

    def symbolic(self, name, hint, source):
        if name in self.by_name:
            got = self.by_name[name]
            if got.node.hint != hint:
                raise ValueError(f"dim '{name}' is {got.node.hint} in one input and {hint} in {source}")
            self.info[name]["source"] += f", {source}"
            return got
        from torch._dynamo.source import ConstantSource
        from torch.fx.experimental.symbolic_shapes import DimDynamic
        src = ConstantSource(f"graphlint_{name}")
        sym = self.shape_env.create_symbol(hint, source=src, dynamic_dim=DimDynamic.DYNAMIC,
                                           do_not_specialize_zero_one=True)
        value = self.shape_env.create_symintnode(sym, hint=hint, source=src)
        self.by_name[name] = value
        self.names[sym.name] = name
        self.info[name] = {"hint": hint, "kind": "input", "min": 0 if hint == 0 else 1, "source": source}
        return value

    def dim(self, d):
        if isinstance(d, int):
            return d
        if not isinstance(d, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            return int(d)
        expr = d.node.expr
        if not isinstance(d, torch.SymInt):   # a float or bool value (from .item()), not a size
            return str(expr.xreplace({s: _sym(self.names[s.name]) for s in expr.free_symbols if s.name in self.names}))
        hit = self._cache.get(expr)
        if hit is None:
            simple = self.shape_env.simplify(expr) if self.shape_env is not None else expr
            try:
                hit = int(simple) if simple.is_Integer else expr_string(simple, self.names)
            except Unsupported:
                self.unsupported += 1
                hint = d.node.hint
                hit = int(hint) if hint is not None else None
            self._cache[expr] = hit
        return hit

    def unbacked_symbols(self, d):
        """Names of the unbacked symbols (u0, ...) in a size."""
        if not isinstance(d, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            return []
        return sorted(s.name for s in d.node.expr.free_symbols if s.name not in self.names)

    def note_unbacked(self, name, source, bound, scalar=False):
        if name in self.info:
            return False
        entry = {"kind": "unbacked", "source": source}
        if scalar:   # the value .item() returned: no size bounds
            self.info[name] = entry
            return True
        entry["min"] = 0
        rng = getattr(self.shape_env, "var_to_range", {}).get(_sym(name)) if self.shape_env is not None else None
        upper = getattr(rng, "upper", None) if rng is not None else None
        if upper is not None and getattr(upper, "is_Integer", False) and int(upper) < 2 ** 62:
            entry["max"] = int(upper)
        elif bound is not None:
            entry["max"] = bound
        self.info[name] = entry
        return True

    def specialised(self):
        """User dims the model pinned to a number (a guard such as
        `x.shape[0] == 8`, or broadcasting against size 1)."""
        out = []
        for name, value in self.by_name.items():
            simple = self.shape_env.simplify(value.node.expr)
            if simple.is_Integer:
                out.append((name, int(simple)))
        return out

    def table(self):
        return dict(self.info)


def _sym(name):
    import sympy
    return sympy.Symbol(name, integer=True)


class SizeNamer:
    """torch 1.13 (and `--dim` on a static capture): the trace only sees
    numbers, so every dim of a --dim NAME=SIZE's size in the inputs and the
    intermediate tensors (never the weights) is written as NAME."""

    def __init__(self, bindings):
        self.by_size = {size: name for name, size in bindings}
        self.used = set()
        self.unsupported = 0
        self.info = {}

    def dim(self, d):
        d = int(d)
        name = self.by_size.get(d)
        if name is None:
            return d
        self.used.add(name)
        return name

    def unbacked_symbols(self, d):
        return []

    def table(self):
        out = dict(self.info)
        for size, name in self.by_size.items():
            if name in self.used:
                out.setdefault(name, {"hint": size, "kind": "input", "source": "size match (--dim)"})
        return out
