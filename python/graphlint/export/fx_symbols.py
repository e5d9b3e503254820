"""Symbolic sizes for graphlint-export (docs/fx-format.md, version 2): the
symbols of the user's dynamic dims, torch's unbacked sizes, and each dim
written as an expression string over them."""

import os
import sys

import torch

from .fx_source import is_user_file

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


def condition_string(e, names):
    """A condition or expression for a message, in the file's names."""
    import sympy
    e = e.xreplace({s: sympy.Symbol(names[s.name]) for s in e.free_symbols if s.name in names})
    if isinstance(e, sympy.core.relational.Relational):   # Ne(batch, 1) -> batch != 1
        return f"{e.lhs} {e.rel_op} {e.rhs}"
    return str(e)


def _wrap(e, names, add):
    import sympy
    s = expr_string(e, names)
    if isinstance(e, sympy.Add) or (add and isinstance(e, sympy.Mul)) or s.startswith("-"):
        return f"({s})"
    return s


# Frames between a Python-level size test and the ShapeEnv recording its
# guard: torch's symbolic machinery (SymBool.__bool__ lives in torch/__init__)
# and this exporter's own guard wrappers.
_GUARD_MACHINERY = ("torch/fx/experimental/symbolic_shapes.py", "torch/fx/experimental/sym_node.py",
                    "torch/fx/experimental/recording.py", "torch/__init__.py")


class LocatedGuards(list):
    """ShapeEnv.guards that also remember which code asked for each guard:
    `where[i]` is (file, line, function) when the first frame past torch's
    symbolic machinery is the user's (a branch in the model), else None
    (torch's own shape logic: broadcasting, contiguity)."""

    def __init__(self, items=()):
        super().__init__(items)
        self.where = [None] * len(self)

    def append(self, guard):
        super().append(guard)
        self.where.append(self._asker())

    @staticmethod
    def _asker():
        here = os.path.dirname(os.path.realpath(__file__))
        frame = sys._getframe(2)
        while frame is not None:
            name = frame.f_code.co_filename
            if not name.replace(os.sep, "/").endswith(_GUARD_MACHINERY) and not name.startswith(here + os.sep):
                return (name, frame.f_lineno, frame.f_code.co_name) if is_user_file(name) else None
            frame = frame.f_back
        return None


class Symbols:
    """torch 2.x: the ShapeEnv of a fake capture. `symbolic(name, hint)`
    makes the SymInt of a user-named dynamic dim (one symbol per name);
    `dim(x)` writes a size; `table()` is the file's `symbols` object."""

    # torch specialises sizes 0 and 1 (a size-1 dim broadcasts, so every
    # broadcast check guards on it): a dim the user sizes below this is
    # traced at this size and recorded at the user's (its symbol's hint).
    TRACE_AT_LEAST = 2

    def __init__(self, shape_env):
        self.shape_env = shape_env
        self.by_name = {}        # user name -> SymInt
        self.names = {}          # torch symbol name -> user name
        self.info = {}           # user/unbacked name -> symbols-table entry
        self.values = {}         # torch symbol -> the user's size (the hint written), where it differs from the traced one
        self.unsupported = 0
        self.assumed = set()     # torch symbols of unbacked sizes written under an assumed, defaulted name
        self.defaults = {}       # unbacked symbol -> {"default", "hint", "assumption"} its trace assumed
        self._introduced = set()
        self._cache = {}
        if shape_env is not None and type(getattr(shape_env, "guards", None)) is list:
            shape_env.guards = LocatedGuards(shape_env.guards)

    def symbolic(self, name, hint, source):
        if name in self.by_name:
            if self.info[name]["hint"] != hint:
                raise ValueError(f"dim '{name}' is {self.info[name]['hint']} in one input and {hint} in {source}")
            self.info[name]["source"] += f", {source}"
            return self.by_name[name]
        from torch._dynamo.source import ConstantSource
        from torch.fx.experimental.symbolic_shapes import DimDynamic
        src = ConstantSource(f"graphlint_{name}")
        traced = max(hint, self.TRACE_AT_LEAST)
        sym = self.shape_env.create_symbol(traced, source=src, dynamic_dim=DimDynamic.DYNAMIC,
                                           do_not_specialize_zero_one=True)
        value = self.shape_env.create_symintnode(sym, hint=traced, source=src)
        self.by_name[name] = value
        self.names[sym.name] = name
        if traced != hint:
            self.values[sym] = hint
        self.info[name] = {"hint": hint, "kind": "input", "min": 0 if hint == 0 else 1, "source": source}
        return value

    def value(self, d):
        """A size as a number at the user's sizes (a traced dim at its traced
        size is the only case where this differs from torch's hint)."""
        if isinstance(d, int):
            return d
        hint = d.node.hint
        if self.values:
            got = d.node.expr.xreplace(self.values)
            if got.is_number:
                return int(got)
        return int(hint) if hint is not None else None

    def off_path(self):
        """[(user dims, condition, (file, line, function))]: branches of the
        model's own code (not torch's contiguity and broadcast checks, whose
        graph is the same either way) that the trace took at the traced size
        and that are false at the user's size, e.g. `if x.shape[0] == 1:`."""
        guards = getattr(self.shape_env, "guards", None)
        if not self.values or not isinstance(guards, LocatedGuards):
            return []
        out = []
        for guard, where in zip(guards, guards.where):
            syms = [s for s in guard.expr.free_symbols if s in self.values]
            if where is not None and syms and guard.expr.xreplace(self.values) == False:  # noqa: E712 (sympy)
                out.append((", ".join(sorted(self.names[s.name] for s in syms)),
                            condition_string(guard.expr, self.names), where))
        return out

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
                hit = self.value(d)
            self._cache[expr] = hit
        return hit

    def unbacked_symbols(self, d):
        """Names of the unbacked symbols (u0, ...) in a size; an assumed one
        (fx_moe's tokens_per_expert) by its name, at the size it first sizes."""
        if not isinstance(d, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            return []
        out = []
        for s in d.node.expr.free_symbols:
            if s.name not in self.names:
                out.append(s.name)
            elif s.name in self.assumed and s.name not in self._introduced:
                self._introduced.add(s.name)
                out.append(self.names[s.name])
        return sorted(out)

    def assume(self, torch_symbol, name, entry):
        """Writes torch's unbacked `torch_symbol` as `name`, a data-dependent
        size with a default (`entry`: its symbols-table entry, the first time)."""
        self.names[torch_symbol] = name
        self.assumed.add(torch_symbol)
        if entry is not None:
            self.info.setdefault(name, entry)

    def note_unbacked(self, name, source, bound, scalar=False):
        if name in self.info and "default" in self.info[name]:   # an assumed size: each of its sources
            self.info[name].setdefault("source", source)
            return True
        if name in self.info:
            return False
        entry = {"kind": "unbacked", "source": source, **self.defaults.get(name, {})}
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
        `x.shape[0] == 8`)."""
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
