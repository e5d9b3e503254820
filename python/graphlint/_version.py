"""The package version: the CMake project version (CMakeLists.txt), which the
wheel's metadata and the binary's `--version` both carry."""

import os
import re


def _read() -> str:
    try:
        from importlib.metadata import PackageNotFoundError, version
        here = os.path.dirname(os.path.abspath(__file__))
        try:
            v = version("graphlint")
            # Only trust the metadata when it describes this copy of the package.
            import importlib.util
            spec = importlib.util.find_spec("graphlint")
            if spec and spec.origin and os.path.dirname(os.path.abspath(spec.origin)) == here:
                return v
        except PackageNotFoundError:
            pass
        # A source checkout: python/graphlint beside CMakeLists.txt.
        cmake = os.path.join(here, "..", "..", "CMakeLists.txt")
        with open(cmake) as f:
            m = re.search(r"project\(graphlint VERSION ([0-9.]+)", f.read())
        if m:
            return m.group(1)
    except OSError:
        pass
    return "0+unknown"


__version__ = _read()
