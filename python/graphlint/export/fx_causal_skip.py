"""Trace transformers' causal mask the way eager runs it.

A transformers causal LM with SDPA attention, called without an
attention_mask, builds no mask in eager: masking_utils' create_causal_mask
finds that the position_ids hold one sequence per row (no packed sequences),
so sdpa_mask's `allow_is_causal_skip` holds, `_ignore_causal_mask_sdpa`
returns True, and SDPA runs with `is_causal=True` (FlashAttention). Under
tracing, `find_packed_sequence_indices` cannot read the position_ids
(`is_tracing`), assumes packing, and the trace materialises a
[batch, 1, seq, seq] boolean mask that eager never builds.

`EagerCausalSkip` answers that one question as eager would, and only where
the answer is provable from the graph: the position_ids are an `arange` with
step 1 (shifted, unsqueezed, expanded), which is what the model makes when
none is given. Everything else stays transformers' own decision: an
attention_mask (padding) keeps the mask (`is_tracing(padding_mask)`), as do
`or/and_mask_function`, `block_sequence_ids`, a compileable cache at q_length
1, eager attention and non-causal configs. Sliding-window and chunked masks
are left as traced: their skip depends on the sequence length
(`kv_length >= local_attention_size`), which would become a silent guard on
the symbolic seq. Without the hook points (another transformers version) the
trace is today's, with a note."""

import inspect
import sys

import torch
from torch.fx.experimental import proxy_tensor

# Ops that keep "each row of the last dim counts up by one from some start":
# how transformers' models make position_ids (arange + past tokens, unsqueeze(0),
# and masking_utils' expand to the batch).
_SHIFTS = {"aten.add.Tensor", "aten.add.Scalar", "aten.sub.Tensor", "aten.sub.Scalar"}
_SAME = {"aten._to_copy.default", "aten.clone.default", "aten.alias.default", "aten.detach.default"}


def _same_size(a, b):
    """a == b for sizes, without adding a guard on a symbolic one."""
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    try:
        from torch.fx.experimental.symbolic_shapes import statically_known_true
    except ImportError:
        return False
    return statically_known_true(a == b)


def _consecutive_rows(node, depth=0):
    """True when the fx node's value provably holds consecutive integers
    along its last dim in every row (diff 1, so no packed sequences)."""
    if node is None or node.op != "call_function" or depth > 16:
        return False
    name = str(node.target)
    args = node.args
    if name in ("aten.arange.default", "aten.arange.start"):
        return True
    if name == "aten.arange.start_step":
        return len(args) > 2 and isinstance(args[2], int) and args[2] == 1
    if name in _SHIFTS:
        # x + c: a Python number or a size, never a tensor (that could vary per position)
        return len(args) > 1 and isinstance(args[1], (int, torch.SymInt)) and \
            node.kwargs.get("alpha", 1) == 1 and _consecutive_rows(args[0], depth + 1)
    if name == "aten.unsqueeze.default":
        # a new leading dim: rows stay the arange's
        val = args[0].meta.get("val") if isinstance(args[0], torch.fx.Node) else None
        return val is not None and args[1] in (0, -(val.dim() + 1)) and val.dim() >= 1 and \
            _consecutive_rows(args[0], depth + 1)
    if name == "aten.expand.default":
        # broadcast over leading dims only: the last dim's size is unchanged
        val = args[0].meta.get("val") if isinstance(args[0], torch.fx.Node) else None
        if val is None or val.dim() < 1:
            return False
        last = list(args[1])[-1]
        return (last == -1 if isinstance(last, int) and last < 0 else _same_size(last, val.shape[-1])) and \
            _consecutive_rows(args[0], depth + 1)
    if name in _SAME:
        return _consecutive_rows(args[0], depth + 1)
    return False


def _traced_node(t):
    mode = proxy_tensor.get_proxy_mode() if hasattr(proxy_tensor, "get_proxy_mode") else None
    if mode is None or not isinstance(t, torch.Tensor):
        return None
    proxy = proxy_tensor.get_proxy_slot(t, mode.tracer, None, lambda x: x.proxy)
    return proxy.node if proxy is not None else None


class EagerCausalSkip:
    """Context manager around a trace: while open, masking_utils'
    find_packed_sequence_indices answers None (no packed sequences) for
    create_causal_mask when the traced position_ids are provably consecutive.
    `skipped`: how many create_causal_mask calls then took transformers' own
    skip (sdpa_mask's `_ignore_causal_mask_sdpa` said True); `unsupported`:
    why the hook could not be installed (a transformers model with SDPA
    under the module, but not the masking_utils this was written against)."""

    def __init__(self, module):
        self.module = module
        self.skipped = 0
        self.unsupported = None
        self._mu, self._saved = None, []

    def __enter__(self):
        mu = sys.modules.get("transformers.masking_utils")
        configs = [getattr(m, "config", None) for m in self.module.modules()]
        if not any(getattr(c, "_attn_implementation", None) == "sdpa" for c in configs):
            return self   # not a transformers model with SDPA attention: nothing to do
        needed = ("find_packed_sequence_indices", "_preprocess_mask_arguments", "create_causal_mask",
                  "_ignore_causal_mask_sdpa", "is_tracing")
        missing = [n for n in needed if mu is None or not hasattr(mu, n)]
        if missing:
            self.unsupported = f"transformers.masking_utils has no {missing[0]}"
            return self
        orig = mu.find_packed_sequence_indices
        try:
            params = list(inspect.signature(orig).parameters)
            creator = inspect.unwrap(mu.create_causal_mask).__code__
            preprocess = inspect.unwrap(mu._preprocess_mask_arguments).__code__
        except (TypeError, ValueError, AttributeError):
            params = []
        if params != ["position_ids"]:
            self.unsupported = "transformers.masking_utils.find_packed_sequence_indices has another signature"
            return self
        is_tracing = mu.is_tracing
        answered = [None]   # the config of the create_causal_mask call answered last, until sdpa_mask decides

        def find_packed_sequence_indices(position_ids):
            answered[0] = None
            if not is_tracing(position_ids):
                return orig(position_ids)          # eager, or a real capture: transformers reads the values
            config = _caller_config(sys._getframe(1), preprocess, creator)
            if config is None or not _consecutive_rows(_traced_node(position_ids)):
                return orig(position_ids)
            answered[0] = config
            return None                            # eager's answer: one sequence per row

        # Whether transformers then took the skip is its own decision (an
        # or/and_mask_function or block_sequence_ids still build the mask):
        # read from _ignore_causal_mask_sdpa's answer, for the note.
        ignore = mu._ignore_causal_mask_sdpa

        def _ignore_causal_mask_sdpa(*a, **kw):
            skip = ignore(*a, **kw)
            config, answered[0] = answered[0], None
            if skip and config is not None:
                self.skipped += 1
            return skip

        self._mu = mu
        self._saved = [("find_packed_sequence_indices", orig), ("_ignore_causal_mask_sdpa", ignore)]
        mu.find_packed_sequence_indices = find_packed_sequence_indices
        mu._ignore_causal_mask_sdpa = _ignore_causal_mask_sdpa
        return self

    def __exit__(self, *exc):
        if self._mu is not None:
            for name, fn in reversed(self._saved):
                setattr(self._mu, name, fn)
            self._mu = None
        return False

    def diagnostics(self):
        if self.skipped:
            return [{"kind": "causal-mask-skipped", "message": "no attention mask given: traced SDPA with "
                     "is_causal=True as eager transformers runs it (the [batch,1,seq,seq] causal mask is built "
                     "only under tracing, where transformers cannot read the position_ids to rule out packed "
                     "sequences)"}]
        if self.unsupported:
            return [{"kind": "causal-mask-kept", "message": f"{self.unsupported}: the traced SDPA takes the "
                     "materialised [batch,1,seq,seq] causal mask, though eager transformers may run it with "
                     "is_causal=True when no attention mask is given"}]
        return []


def _caller_config(frame, preprocess, creator):
    """The config create_causal_mask was called with, when that is who asks
    (through _preprocess_mask_arguments); None for sliding-window, chunked or
    any other caller."""
    if frame is None or frame.f_code is not preprocess:
        return None
    up = frame.f_back
    if up is None or up.f_code is not creator:
        return None
    return up.f_locals.get("config")
