"""The PyTorch exporter (tools/graphlint-export) as part of the package.

A wheel carries the exporter's modules in graphlint/_exporter/; a source
checkout runs them from tools/graphlint-export. `graphlint-export` (the
console script) and graphlint.check() both load the same module, so the
command line and the API capture identically.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from functools import lru_cache

_HERE = os.path.dirname(os.path.abspath(__file__))


def _exporter_main_path() -> str:
    for path in (os.path.join(_HERE, "_exporter", "graphlint_export_main.py"),
                 os.path.join(_HERE, "..", "..", "tools", "graphlint-export", "graphlint-export")):
        if os.path.isfile(path):
            return os.path.normpath(path)
    raise ImportError("graphlint's exporter modules are missing from this installation")


@lru_cache(maxsize=None)
def exporter():
    """The exporter's main module (imports torch: call only when capturing)."""
    path = _exporter_main_path()
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    loader = importlib.machinery.SourceFileLoader("graphlint_export_main", path)
    spec = importlib.util.spec_from_loader("graphlint_export_main", loader)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["graphlint_export_main"] = mod
    loader.exec_module(mod)
    return mod


def main() -> int:
    """The `graphlint-export` console script."""
    return exporter().main(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
