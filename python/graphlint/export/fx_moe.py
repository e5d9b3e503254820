"""Mixture-of-experts layers in a fake capture (docs/fx-format.md, "Mixture of
experts"): transformers' experts modules (`forward(hidden_states [T, h],
top_k_index [T, k], top_k_weights)`, `num_experts` E), with either
implementation:

- grouped_mm: one `aten::_grouped_mm` per projection for all experts. Its
  fake (meta) kernel accepts bfloat16 only, as the CUDA fast path does, while
  the CPU kernel and the CUDA fallback run any float dtype: an fp32 model that
  runs eagerly failed to capture ("Expected inputs of BF16 type"). During a
  recording the meta check takes the dtypes the kernels take.
- eager: a Python loop over the experts the router hit (`nonzero`), each
  expert's rows picked by a second `nonzero`. The loop is traced once per
  expert (fx_guards.fake_iter); each expert's row count, which is data, is
  the named quantity `tokens_per_expert`, bindable with `graphlint -D
  tokens_per_expert=N`, by default an even share of the routed rows,
  ceil(T x k / E), and the file says that this is an assumption.
"""

import torch

_NONZERO = torch.ops.aten.nonzero.default
NAME = "tokens_per_expert"


class ExpertsScope:
    """Per trace: the experts modules whose forward runs and the unbacked
    sizes that count one expert's rows."""

    def __init__(self):
        self.stack = []      # per module whose forward runs: (path, T, k, E) for an experts module, else None
        self.counts = {}     # torch symbol name -> (path, T, k, E)

    def enter(self, module, path, inputs):
        self.stack.append(_routing(module, path, inputs))

    def leave(self):
        if self.stack:
            self.stack.pop()

    def after_op(self, func, args, out):
        """An op of the trace ran: a `nonzero` over one expert's slice of the
        routing mask ([k, T] or [T, k]: T x k elements) counts its rows."""
        if func is not _NONZERO or not self.stack or self.stack[-1] is None:
            return
        path, T, k, E = self.stack[-1]
        x = args[0] if args else None
        if not isinstance(x, torch.Tensor) or x.dim() < 2 or not isinstance(out, torch.Tensor):
            return
        if not _same(x.numel(), T * k):
            return
        rows = out.shape[0]
        if isinstance(rows, torch.SymInt) and rows.node.expr.is_Symbol:
            self.counts[rows.node.expr.name] = (path, T, k, E)


def _routing(module, path, inputs):
    E = getattr(module, "num_experts", None)
    if not isinstance(E, int) or isinstance(E, bool) or E < 1 or len(inputs) < 2:
        return None
    h, idx = inputs[0], inputs[1]
    if not (isinstance(h, torch.Tensor) and isinstance(idx, torch.Tensor) and h.dim() == 2 and idx.dim() == 2
            and not idx.is_floating_point() and idx.dtype != torch.bool):
        return None
    return (path, h.shape[0], int(idx.shape[1]), E)


def _expr(n):
    import sympy
    return n.node.expr if isinstance(n, torch.SymInt) else sympy.Integer(int(n))


def _same(a, b):
    """a == b as expressions, without the guard a SymInt comparison records."""
    import sympy
    return sympy.simplify(_expr(a) - _expr(b)) == 0


def name_counts(namer, counts):
    """Writes each expert's row count as the named, defaulted size (one name
    per distinct routing T x k / E: `tokens_per_expert`, then `_2`, ...)."""
    names = {}
    for sym, (path, T, k, E) in counts.items():
        key = (str(_expr(T)), k, E)
        if key not in names:
            name = NAME if not names else f"{NAME}_{len(names) + 1}"
            names[key] = name
            rows = namer.dim(T)
            rows_k = f"{rows}*{k}" if isinstance(rows, str) and not any(c in rows for c in "+-") else \
                f"({rows})*{k}" if isinstance(rows, str) else str(int(rows) * k)
            at = namer.value(T) if isinstance(T, torch.SymInt) else int(T)
            entry = {"kind": "unbacked", "default": f"CeilDiv({rows_k}, {E})", "min": 0,
                     "assumption": f"an even share of the routed rows, tokens x top-k / experts = {rows} x {k} / "
                                   f"{E} ({path} and its like); routing is data: a skewed router sends one expert more"}
            if at is not None:
                entry["hint"] = -(-at * k // E)
                entry["max"] = at * k
            namer.assume(sym, name, entry)
        else:
            namer.assume(sym, names[key], None)


def _grouped_mm_any_float(orig):
    """torch's meta kernel for _grouped_mm checks the CUDA fast path's
    bfloat16; the CPU kernel and the CUDA fallback take fp32 and fp16 too
    (transformers calls it so on an fp32 model). Same-dtype float operands
    are shaped as the kernel shapes them; everything else is torch's check."""
    def common(mat_a, mat_b, scale_a=None, scale_b=None, offs=None, bias=None, scale_result=None, out_dtype=None,
               use_fast_accum=False):
        if (scale_a is None and scale_b is None and bias is None and mat_a.dtype == mat_b.dtype
                and mat_a.dtype in (torch.float32, torch.float16) and out_dtype in (None, mat_a.dtype)):
            from torch._meta_registrations import _create_grouped_mm_output_tensor
            torch._check(mat_a.dim() in (2, 3) and mat_b.dim() in (2, 3), lambda: "Multiplicands must be 2D or 3D")
            if mat_a.dim() == 3 or mat_b.dim() == 3:
                torch._check(mat_a.size(-1) == mat_b.size(-2), lambda: "contraction dimension of mat_a and mat_b "
                             "must match")
            return _create_grouped_mm_output_tensor(mat_a, mat_b, offs, out_dtype)
        return orig(mat_a, mat_b, scale_a, scale_b, offs=offs, bias=bias, scale_result=scale_result,
                    out_dtype=out_dtype, use_fast_accum=use_fast_accum)
    return common


class GroupedMmAnyFloat:
    """Context: the relaxed _grouped_mm meta check (no-op on a torch without it)."""

    def __enter__(self):
        import torch._meta_registrations as meta
        self.orig = getattr(meta, "_meta_grouped_mm_common", None)
        if self.orig is not None:
            meta._meta_grouped_mm_common = _grouped_mm_any_float(self.orig)
        return self

    def __exit__(self, *exc):
        if self.orig is not None:
            import torch._meta_registrations as meta
            meta._meta_grouped_mm_common = self.orig
        return False
