"""torch 2.x hooks for data-dependent sizes during a fake capture: where
torch would raise GuardOnDataDependentSymNode (a Python branch or loop on an
unbacked size, a size needed as a number), the trace continues with a guess
or an upper bound and the assumption becomes a diagnostic. fx_record's
`recording()` installs them for the duration of one trace."""

import torch



def _guess(sym_bool):
    """A guess for a condition on unbacked sizes: an equality (`u0 == 0`, an
    empty result) is assumed false; otherwise the condition is evaluated with
    each unbacked size at its upper bound (or 2 when torch knows none)."""
    import sympy
    node = getattr(sym_bool, "node", sym_bool)   # a SymBool or its SymNode
    expr = node.expr
    if isinstance(expr, sympy.Eq):
        return False
    if isinstance(expr, sympy.Ne):
        return True
    env = node.shape_env
    subs = {}
    for s in expr.free_symbols:
        rng = env.var_to_range.get(s)
        upper = getattr(rng, "upper", None)
        subs[s] = int(upper) if getattr(upper, "is_Integer", False) and int(upper) < 2 ** 31 else 2
    try:
        return bool(expr.xreplace(subs))
    except TypeError:
        return True


def _on_data_dependent_guard(orig, rec, value_of, message_of):
    """Wraps a torch 2.x SymNode/SymBool method: where it would raise
    GuardOnDataDependentSymNode while `rec` (fx_record.Recorder) records, the
    trace continues with value_of(self) and the assumption is recorded as a
    diagnostic."""
    from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode

    def wrapper(self, *args):
        try:
            return orig(self, *args)
        except GuardOnDataDependentSymNode:
            if not rec.active:
                raise
            value = value_of(self)
            loc = rec.source.user_location()
            rec.diagnostics.append({"kind": "host-value-assumed", "message": message_of(self, value),
                                    **({"source": loc} if loc else {})})
            return value
    return wrapper


def guard_int(orig, rec):
    """torch 2.x: a data-dependent size needed as a number (iterating over
    the rows of a nonzero result, range(t.item())): traced at its upper bound
    (or 2 when torch knows none) and reported."""
    return _on_data_dependent_guard(
        orig, rec, _bound_of, lambda self, value: f"the data-dependent size {self.expr} was needed as a number (a Python "
        f"loop or a size argument): the trace continued with {value}")


def guard_float(orig, rec):
    """torch 2.x: a value read with float(t) / .item() used as a Python
    number (x / t.item()): traced as 1.0 and reported."""
    return _on_data_dependent_guard(
        orig, rec, lambda self: 1.0, lambda self, value: f"the data-dependent value {self.expr} was needed as a Python "
        f"float: the trace continued with {value}")


def _unbacked_bound(size):
    """The upper bound torch knows for an unbacked size, else 2."""
    return _bound_of(size.node)


def _bound_of(node):
    rng = node.shape_env.var_to_range.get(node.expr) if node.expr.is_Symbol else None
    upper = getattr(rng, "upper", None)
    return int(upper) if getattr(upper, "is_Integer", False) and int(upper) < 2 ** 16 else 2


def fake_iter(orig, rec):
    """torch 2.x: `for row in t` over a data-dependent number of rows (the
    rows of a nonzero result): traced for the upper bound of rows, each a
    select, and reported."""
    def wrapper(self):
        n = self.shape[0] if self.dim() > 0 else None
        if not rec.active or not isinstance(n, torch.SymInt) or n.node.hint is not None:
            return orig(self)
        loc = rec.source.user_location()
        rows = _nonzero_rows(rec, self)
        if rows is not None:
            if n.node.expr.is_Symbol:
                rec.enumerated[n.node.expr.name] = len(rows)
            rec.diagnostics.append({"kind": "host-value-assumed", "message":
                                    f"a loop over the {n.node.expr} rows of nonzero() of {len(rows)} elements: "
                                    f"traced as if every element were nonzero, once per index 0..{len(rows) - 1}",
                                    **({"source": loc} if loc else {})})
            return iter(rows)
        count = _unbacked_bound(n)
        rec.diagnostics.append({"kind": "host-value-assumed", "message":
                                f"a loop over the {n.node.expr} rows of a data-dependent tensor: traced for "
                                f"{count} rows", **({"source": loc} if loc else {})})
        return iter([self.select(0, i) for i in range(count)])
    return wrapper


# A loop over nonzero() of a 1-D mask at most this long is traced once per
# index; a longer one (a token mask) once per row up to its bound, as before.
_ENUMERATED_NONZERO = 4096


def _nonzero_rows(rec, t):
    """The rows of `t` when it is nonzero() of a static 1-D mask (transformers'
    `for expert_idx in expert_hit`): row i is a select of `t` that make_fx
    knows holds [i], so `if expert_idx == num_experts: continue` and
    `weight[expert_idx]` resolve to that index -- every expert traced once,
    with its own weights -- instead of one unknown index per row."""
    from torch.fx.experimental import proxy_tensor
    tracer = rec.tracer
    slot = proxy_tensor.get_proxy_slot(t, tracer, None) if tracer is not None else None
    node = getattr(getattr(slot, "proxy", None), "node", None)
    if node is None or node.target is not torch.ops.aten.nonzero.default or not node.args:
        return None
    mask = getattr(node.args[0], "meta", {}).get("val")
    if not isinstance(mask, torch.Tensor) or mask.dim() != 1 or not isinstance(mask.shape[0], int):
        return None
    n = int(mask.shape[0])
    if n > _ENUMERATED_NONZERO:
        return None
    rows = []
    for i in range(n):
        row = t.select(0, i)
        with proxy_tensor.disable_proxy_modes_tracing(), torch._subclasses.fake_tensor.unset_fake_temporarily():
            value = torch.tensor([i], dtype=t.dtype)
        row_slot = proxy_tensor.get_proxy_slot(row, tracer)
        proxy_tensor.set_proxy_slot(row, tracer, type(row_slot)(row_slot.proxy, value))
        rows.append(row)
    return rows


def guard_bool(orig, rec):
    """torch 2.x: a condition torch itself must decide on an unbacked size
    (inside an op's shape logic): guessed as in _guess and reported."""
    return _on_data_dependent_guard(
        orig, rec, _guess, lambda self, value: f"a condition on a data-dependent size ({self.expr}) cannot be decided "
        f"without data: the trace continued as if it were {str(value).lower()}")


def sym_bool_branch(orig, rec):
    """torch 2.x: a Python branch on an unbacked value (`if t.item() > 0:`)
    cannot be decided without data; it is traced as True and reported."""
    return _on_data_dependent_guard(
        orig, rec, _guess, lambda self, value: f"a condition on a data-dependent size or value ({self}) cannot be "
        f"decided without data: the trace continued as if it were {str(value).lower()}")
