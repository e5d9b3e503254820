"""torch.export programs for graphlint: `.pt2` archives keep torch's symbol
names (s77, s27) but not the torch.export.Dim names the program was exported
with, which live only in the in-memory program's ShapeEnv. `save_pt2` writes
them into the archive (extra/graphlint_symbols.json, {"s77": "batch"}), and
graphlint reads the program's sizes under those names, so `-D batch=8` binds.
The archive stays an ordinary torch.export archive (torch.export.load reads it).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import warnings
from typing import Any, Dict, Iterator, Mapping, Optional, Sequence

SYMBOL_NAMES = "graphlint_symbols.json"   # under the archive's extra/ folder
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def is_exported_program(obj: Any) -> bool:
    try:
        from torch.export import ExportedProgram
    except ImportError:
        return False
    return isinstance(obj, ExportedProgram)


def dim_names(ep: Any) -> Dict[str, str]:
    """{torch symbol: Dim name} for the user inputs' sizes of an ExportedProgram."""
    import torch
    env = None
    for node in ep.graph.nodes:
        if node.op != "placeholder":
            continue
        for d in getattr(node.meta.get("val"), "shape", ()):
            if isinstance(d, torch.SymInt):
                env = d.node.shape_env
                break
        if env is not None:
            break
    debug = getattr(env, "source_name_to_debug_name", None) or {}
    out: Dict[str, str] = {}
    for sym, sources in (getattr(env, "var_to_sources", None) or {}).items():
        for src in sources:
            source_name = src.name() if callable(src.name) else src.name
            name = debug.get(source_name)
            if name and _NAME.match(name) and name not in out.values():
                out[str(sym)] = name
                break
    return out


def save_pt2(ep: Any, path: "os.PathLike[str] | str") -> Dict[str, str]:
    """torch.export.save(ep, path), with the Dim names of its symbols; returns them."""
    import torch
    names = dim_names(ep)
    torch.export.save(ep, os.fspath(path), extra_files={SYMBOL_NAMES: json.dumps(names, sort_keys=True)})
    return names


@contextlib.contextmanager
def record_python_frames() -> Iterator[bool]:
    """Within it, a non-strict torch.export (torch.export.export's default,
    and the exporters built on it: torch.onnx.export(..., dynamo=True))
    records every frame of the model's own Python in each node's stack trace,
    as a strict export does, not only the `forward` frames. graphlint reads
    the locals of helper functions from them (transformers'
    eager_attention_forward holds repeat_kv's key and value copies until it
    returns), which a default non-strict trace cannot show. Yields whether
    this torch supports it; where it does not, warns and records as before.

    torch keeps a frame when its (file, function) is a registered anchor
    (torch.fx.proxy._STACK_TRACE_ANCHORS); for the duration, every frame
    outside torch's own package counts as one."""
    try:
        import torch
        import torch.fx.proxy as proxy
    except ImportError:
        yield False
        return
    anchors = getattr(proxy, "_STACK_TRACE_ANCHORS", None)
    if not isinstance(anchors, set):
        warnings.warn("graphlint.record_python_frames: torch %s has no stack-trace anchors; its non-strict "
                      "export records forward frames only (export with strict=True to record helper "
                      "functions)" % torch.__version__, stacklevel=3)
        yield False
        return
    torch_root = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep

    class _UserFrames(set):
        def __contains__(self, key: object) -> bool:
            if set.__contains__(self, key):
                return True
            return (isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], str)
                    and not os.path.abspath(key[0]).startswith(torch_root))

    proxy._STACK_TRACE_ANCHORS = _UserFrames(anchors)
    try:
        yield True
    finally:
        proxy._STACK_TRACE_ANCHORS = anchors


def export_pt2(model: Any, args: Sequence[Any], path: "os.PathLike[str] | str", *,
               kwargs: Optional[Mapping[str, Any]] = None, dynamic_shapes: Any = None,
               strict: bool = False) -> Any:
    """torch.export.export(model, args, ...) under record_python_frames, then
    save_pt2(ep, path); returns the ExportedProgram."""
    import torch
    with record_python_frames():
        ep = torch.export.export(model, tuple(args), kwargs=dict(kwargs) if kwargs else None,
                                 dynamic_shapes=dynamic_shapes, strict=strict)
    _drop_caller_frames(ep)
    save_pt2(ep, path)
    return ep


_FRAME = re.compile(r'^\s*File "[^"]*", line \d+, in (\S+)\s*$')


def _drop_caller_frames(ep: Any) -> None:
    """Drops each stack trace's frames before its first `forward`: the
    script that called the export, which record_python_frames records too."""
    for node in ep.graph.nodes:
        trace = node.meta.get("stack_trace")
        if not isinstance(trace, str):
            continue
        lines = trace.splitlines()
        for i, line in enumerate(lines):
            m = _FRAME.match(line)
            if m and m.group(1) == "forward":
                if i:
                    node.meta["stack_trace"] = "\n".join(lines[i:])
                break
