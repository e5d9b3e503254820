"""Finding and running the graphlint binary that belongs to this package.

A wheel installs the C++ binary into the environment's scripts directory
(bin/), beside the Python interpreter, as ruff's wheel does; a source checkout
uses the CMake build. The package and the binary carry one version (the
CMake project version): a different binary is refused with one line, since
its JSON or its FX reader may not match this package's exporter.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from functools import lru_cache
from typing import List, Optional, Sequence

from ._version import __version__


class GraphlintError(RuntimeError):
    """graphlint could not run, or the binary and the package disagree."""


def _candidates() -> List[str]:
    out = []
    env = os.environ.get("GRAPHLINT_BINARY")
    if env:
        return [env]  # an explicit choice: no silent fallback
    scripts = sysconfig.get_path("scripts")
    if scripts:
        out.append(os.path.join(scripts, "graphlint"))
    out.append(os.path.join(os.path.dirname(sys.executable), "graphlint"))
    found = shutil.which("graphlint")
    if found:
        out.append(found)
    # A source checkout imported through scripts/setup.sh's .pth file
    # (python/graphlint in the checkout): its CMake build.
    checkout = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if os.path.isfile(os.path.join(checkout, "CMakeLists.txt")):
        out.append(os.path.join(checkout, os.environ.get("BUILD_DIR", "build"), "tools", "graphlint"))
    return out


@lru_cache(maxsize=None)
def binary_path() -> str:
    """The graphlint executable, version-checked against this package."""
    tried = []
    for path in _candidates():
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            tried.append(path)
            continue
        version = binary_version(path)
        if version != __version__:
            raise GraphlintError(
                f"{path} is graphlint {version}, but this Python package is {__version__}: "
                "reinstall the package (pip install graphlint) or set GRAPHLINT_BINARY")
        return path
    raise GraphlintError("no graphlint binary found (looked at: " + ", ".join(tried) +
                         "); install the package with pip or set GRAPHLINT_BINARY")


@lru_cache(maxsize=None)
def _version_lines(path: str) -> List[str]:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    except OSError as e:
        raise GraphlintError(f"{path}: cannot run: {e}") from None
    lines = out.stdout.splitlines()
    if out.returncode != 0 or not lines or lines[0].split()[:1] != ["graphlint"] or len(lines[0].split()) < 2:
        raise GraphlintError(f"{path}: not a graphlint binary (--version printed {out.stdout.strip()!r})")
    return lines


def binary_version(path: str) -> str:
    return _version_lines(path)[0].split()[1]


def fx_versions(path: str):
    """The (oldest, newest) graphlint-fx versions the binary reads."""
    for line in _version_lines(path)[1:]:
        words = line.split()
        if len(words) == 2 and words[0] == "graphlint-fx" and "-" in words[1]:
            lo, _, hi = words[1].partition("-")
            if lo.isdigit() and hi.isdigit():
                return int(lo), int(hi)
    return (1, 1)  # binaries before the line was printed read version 1 only


def check_fx_version(version: int) -> None:
    """Fails in one line when the binary cannot read FX files of `version`."""
    path = binary_path()
    lo, hi = fx_versions(path)
    if not lo <= version <= hi:
        raise GraphlintError(f"{path} reads graphlint-fx versions {lo}-{hi}, but this package's exporter writes "
                             f"version {version}: reinstall the package so the two match")


def run(args: Sequence[str], check_fatal: bool = True,
        cwd: Optional[str] = None) -> subprocess.CompletedProcess:
    """Runs the binary; exit 2 (unreadable input, bad option) raises GraphlintError."""
    proc = subprocess.run([binary_path(), *args], capture_output=True, text=True, cwd=cwd)
    if check_fatal and proc.returncode not in (0, 1):
        raise GraphlintError(fatal_message(proc.stderr, proc.returncode))
    return proc


# What usage errors print after their message: a hint for a terminal, not the message.
_HINTS = ("Try 'graphlint --help'.",)


def fatal_message(stderr: str, status: int) -> str:
    """The binary's own one-line message from a failed run's stderr: the last
    line that is not the `Try 'graphlint --help'.` hint usage errors end with."""
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip() and ln.strip() not in _HINTS]
    return lines[-1] if lines else f"graphlint exited with status {status}"


def path_arg(path: str) -> str:
    """`path` as an argument the binary reads as a file, never an option: a
    relative path starting with '-' gets a './' in front."""
    return os.path.join(".", path) if path.startswith("-") else path
