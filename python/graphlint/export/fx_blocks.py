"""Repeated-block capture for graphlint-export (docs/fx-format.md, "Repeated
blocks"): the analogue of torch.compile's regional compilation of repeated
blocks, for a fake capture.

A model whose nn.ModuleList holds N >= MIN_BLOCKS structurally identical
blocks (a transformer's decoder layers) is traced with the list cut short:
to k = 2 blocks (block 0 and the last) and to 3 (block 0 and the last two).
The trace marks where each block's forward and backward start (BlockMarks).
The last block of the k-block trace is the template; the N-block file is
synthesised from it (fx_synth: each copy numbered as a full trace numbers
it: node names, the block index in parameter names and module paths,
references to the previous and the next block, save points, gradients). The
same synthesis must reproduce the (k+1)-block trace exactly (the JSON
documents equal) before it is trusted; if it does not, k = 3 is tried
against a cut to 4 (a first block unlike the rest: a size torch specialises
there). On any mismatch, or blocks that differ (class, parameters, buffers,
attributes other than their index), the model is traced in full and a
one-line note says why.
"""

import inspect

import torch

from .fx_build import ExportError
from .fx_synth import Mismatch, first_difference, synthesise

MIN_BLOCKS = 4
_SKIP = {"_parameters", "_buffers", "_modules", "_non_persistent_buffers_set", "training"}


# --------------------------------------------------------------------------
# Which list, and are its blocks identical
# --------------------------------------------------------------------------

def find_blocks(module):
    """(path, ModuleList) of the largest list of at least MIN_BLOCKS blocks, or None."""
    best = None
    for name, m in module.named_modules():
        if isinstance(m, torch.nn.ModuleList) and len(m) >= MIN_BLOCKS and name:
            size = sum(p.numel() for p in m.parameters()) + len(m)
            if best is None or size > best[2]:
                best = (name, m, size)
    return best[:2] if best else None


def _value(v):
    """A block attribute in comparable form."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (torch.dtype, torch.device)):
        return str(v)
    if isinstance(v, torch.Tensor):
        return ("tensor", tuple(v.shape), str(v.dtype))
    if isinstance(v, (tuple, list)):
        return (type(v).__name__,) + tuple(_value(x) for x in v)
    if isinstance(v, dict):
        return ("dict",) + tuple((str(k), _value(x)) for k, x in v.items())
    if inspect.ismethod(v):
        return ("method", id(v.__func__))
    return ("object", id(v))


def _signature(block):
    out = {}
    for rel, sub in block.named_modules(remove_duplicate=False):
        pre = rel + "." if rel else ""
        out[pre + "<class>"] = type(sub).__qualname__
        out[pre + "<training>"] = sub.training
        for k, p in sub._parameters.items():
            out[pre + k] = ("parameter",) + (() if p is None else (tuple(p.shape), str(p.dtype), p.requires_grad,
                                                                 tuple(p.stride())))
        for k, b in sub._buffers.items():
            out[pre + k] = ("buffer", k in sub._non_persistent_buffers_set) + (
                () if b is None else (tuple(b.shape), str(b.dtype), tuple(b.stride())))
        for k, v in vars(sub).items():
            if k in _SKIP:
                continue
            out[pre + k] = ("hooks", len(v)) if "hook" in k and hasattr(v, "__len__") else _value(v)
    return out


def block_mismatch(module, path, blocks):
    """Why the blocks are not interchangeable, or None. An integer attribute
    may differ only as the block's index (plus a constant): layer_idx."""
    sigs = [_signature(b) for b in blocks]
    first = sigs[0]
    for i, s in enumerate(sigs[1:], 1):
        if s.keys() != first.keys():
            extra = sorted(set(s) ^ set(first))[0]
            return f"{path}.{i} and {path}.0 differ in structure ({extra})"
    for key, v0 in first.items():
        values = [s[key] for s in sigs]
        if all(v == v0 for v in values):
            continue
        if all(isinstance(v, int) and not isinstance(v, bool) for v in values) and \
                len({v - i for i, v in enumerate(values)}) == 1:
            continue   # the block's index
        i = next(i for i, v in enumerate(values) if v != v0)
        return f"{path}.{i}.{key} is {_show(values[i])}, {path}.0.{key} is {_show(v0)}"
    for m in module.modules():
        kinds = getattr(getattr(m, "config", None), "layer_types", None)
        if isinstance(kinds, (list, tuple)) and len(set(map(str, kinds))) > 1:
            return f"config.layer_types mixes {', '.join(sorted(set(map(str, kinds))))}"
    return None


def _show(v):
    text = repr(v[0] if isinstance(v, tuple) and len(v) == 2 and v[0] == "object" else v)
    return text if len(text) < 60 else text[:57] + "..."


# --------------------------------------------------------------------------
# Marks: where each block's forward and backward start in one trace
# --------------------------------------------------------------------------

class BlockMarks:
    """Recorder hook (fx_record.recording): every graph node in the order
    it was created (fx names them in that order; some are erased later), and
    how many had been created when block `pos` was entered (its forward
    starts there) and when autograd started on the block's output (its
    backward starts there)."""

    def __init__(self, positions):
        self.positions = positions   # id(block module) -> position in the cut list
        self.fwd, self.bwd = {}, {}
        self.created = []

    def recording(self, create_node):
        created = self.created

        def wrapper(graph, *args, **kwargs):
            node = create_node(graph, *args, **kwargs)
            created.append(node)
            return node
        return wrapper

    def newest(self, rec):
        return len(self.created)

    def enter(self, rec, m):
        pos = self.positions.get(id(m))
        if pos is not None and rec.phase == "forward":
            self.fwd.setdefault(pos, self.newest(rec))

    def leave(self, rec, m, output):
        pos = self.positions.get(id(m))
        if pos is None:
            return
        t = _first_grad_tensor(output)
        if t is not None:
            def mark(grads, pos=pos):   # must return None (a value would replace the gradients)
                self.bwd.setdefault(pos, self.newest(rec))
            t.grad_fn.register_prehook(mark)


def _first_grad_tensor(out):
    if isinstance(out, torch.Tensor):
        return out if out.grad_fn is not None else None
    items = out.values() if isinstance(out, dict) else out if isinstance(out, (tuple, list)) else \
        out.to_tuple() if hasattr(out, "to_tuple") else ()
    for x in items:
        t = _first_grad_tensor(x)
        if t is not None:
            return t
    return None


# --------------------------------------------------------------------------
# Capture: two cut traces, the synthesis checked against the second
# --------------------------------------------------------------------------

def capture_repeated(prep, capture_doc):
    """(document, what was repeated), or (None, why not) when the model is
    to be traced in full (None, None: nothing to repeat)."""
    found = find_blocks(prep.module)
    if found is None:
        return None, None
    path, blocks = found
    n = len(blocks)
    why = block_mismatch(prep.module, path, list(blocks))
    if why is None:
        try:
            doc = _capture(prep, capture_doc, path, blocks)
            k = prep.repeated_from
            return doc, f"{path} x{n}, from traces cut to {k} and {k + 1} blocks"
        except Mismatch as e:
            why = str(e)
        except ExportError as e:
            why = f"the cut trace failed ({e})"
    return None, f"repeated blocks: {path} ({n} blocks) traced in full: {why}"


def _cut(k, n):
    """The blocks a trace cut to k keeps: block 0 and the last k-1."""
    return [0] + list(range(n - k + 1, n))


def _trace_cut(prep, capture_doc, path, blocks, k):
    parent_path, _, attr = path.rpartition(".")
    parent = prep.module.get_submodule(parent_path) if parent_path else prep.module
    cut = torch.nn.ModuleList([blocks[i] for i in _cut(k, len(blocks))])
    positions = {id(m): p for p, m in enumerate(cut)}
    try:
        setattr(parent, attr, cut)
        prep.blocks = lambda: BlockMarks(positions)
        doc = capture_doc()
        return (doc,) + prep.trace_items
    finally:
        setattr(parent, attr, blocks)
        prep.blocks = None
        prep.restore_attributes()


def _capture(prep, capture_doc, path, blocks):
    """Cut to 2 blocks, synthesised and checked against the cut to 3; where
    the first block differs from the rest (a size torch specialises there,
    a cache warmed), once more from the cut to 3, checked against the cut to 4."""
    n = len(blocks)
    traces = {2: _trace_cut(prep, capture_doc, path, blocks, 2)}
    why = None
    for k in (2, 3):
        if k + 1 >= n:   # the check would be the full trace
            break
        traces[k + 1] = _trace_cut(prep, capture_doc, path, blocks, k + 1)
        try:
            check = synthesise(traces[k], path, k + 1)
            if check != traces[k + 1][0]:
                raise Mismatch(f"the {k + 1}-block trace is not the {k}-block trace plus one block "
                               f"({first_difference(check, traces[k + 1][0])})")
            doc = synthesise(traces[k], path, n)
        except Mismatch as e:
            why = why or str(e)
            continue
        except (KeyError, IndexError, ValueError, TypeError) as e:   # a graph the synthesis does not understand
            why = why or f"the synthesis failed ({type(e).__name__}: {e})"
            continue
        if doc["model"]["parameters"] != prep.param_count:
            raise Mismatch(f"the synthesised graph holds {doc['model']['parameters']} parameters, the module "
                           f"{prep.param_count}")
        prep.repeated_from = k
        return doc
    raise Mismatch(why)
