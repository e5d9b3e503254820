"""torch.export programs for graphlint: `.pt2` archives keep torch's symbol
names (s77, s27) but not the torch.export.Dim names the program was exported
with, which live only in the in-memory program's ShapeEnv. `save_pt2` writes
them into the archive (extra/graphlint_symbols.json, {"s77": "batch"}), and
graphlint reads the program's sizes under those names, so `-D batch=8` binds.
The archive stays an ordinary torch.export archive (torch.export.load reads it).
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Dict

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
