"""`graphlint-models`: the pre-commit hook that lints model *sources*.

A repository names its model entry points in pyproject.toml:

    [tool.graphlint]
    models = ["pkg.models:build_gpt"]            # returns (module, example_inputs)
    # or, with a setup per model:
    [[tool.graphlint.model]]
    entry = "pkg.models:build_gpt"
    inputs = "pkg.models:example_inputs"          # optional when entry returns both
    args = ["--train", "--precision", "bf16-mixed"]

Given the files a commit changes, the hook re-captures every entry point whose
imports include one of them (found by importing the entry's module in a fresh
interpreter and recording the repository files it loaded), lints the fresh
capture and prints the findings at the user's source lines. Editing model.py
is linted; a stale *.fx.json can no longer pass. Exit 0 clean, 1 findings,
2 when an entry point cannot be loaded or captured.

Each entry point is imported and captured in its own interpreter, with a time
limit (--timeout, default 600 s; GRAPHLINT_MODELS_TIMEOUT): a module that prints,
exits or sleeps at import, or leaves a thread running, costs one line for that
entry and exit 2, never a traceback or a hang.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import signal
import tempfile
from dataclasses import dataclass, field
from typing import List, Optional, Sequence


def _fail(msg: str) -> int:
    print(f"graphlint-models: error: {msg}", file=sys.stderr)
    return 2


@dataclass
class Entry:
    entry: str
    inputs: Optional[str] = None
    args: List[str] = field(default_factory=list)


def repo_root(start: str) -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=start, capture_output=True,
                             text=True, timeout=30)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    except OSError:
        pass
    return os.path.abspath(start)


def load_entries(root: str) -> List[Entry]:
    path = os.path.join(root, "pyproject.toml")
    if not os.path.isfile(path):
        raise ValueError(f"{path}: not found; name the model entry points in [tool.graphlint] models")
    try:
        import tomllib  # Python 3.11+
    except ImportError:  # pragma: no cover - older Pythons
        import tomli as tomllib
    with open(path, "rb") as f:
        try:
            doc = tomllib.load(f)
        except tomllib.TOMLDecodeError as e:
            raise ValueError(f"{path}: {e}") from None
    tool = doc.get("tool", {})
    if not isinstance(tool, dict):
        raise ValueError(f"{path}: [tool] must be a table, not {type(tool).__name__}")
    section = tool.get("graphlint", {})
    if not isinstance(section, dict):
        raise ValueError(f"{path}: [tool.graphlint] must be a table, not {type(section).__name__}")
    for key in ("models", "model"):
        if not isinstance(section.get(key, []), list):
            raise ValueError(f"{path}: tool.graphlint.{key} must be an array, not {type(section[key]).__name__}")
    entries = []
    for i, item in enumerate(section.get("models", [])):
        if not isinstance(item, str) or ":" not in item:
            raise ValueError(f"{path}: tool.graphlint.models[{i}]: expected 'package.module:function'")
        entries.append(Entry(item))
    for i, item in enumerate(section.get("model", [])):
        where = f"{path}: tool.graphlint.model[{i}]"
        if not isinstance(item, dict) or not isinstance(item.get("entry"), str) or ":" not in item["entry"]:
            raise ValueError(f"{where}: expected entry = 'package.module:function'")
        args = item.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ValueError(f"{where}: args must be a list of strings")
        inputs = item.get("inputs")
        if inputs is not None and (not isinstance(inputs, str) or ":" not in inputs):
            raise ValueError(f"{where}: inputs must be 'package.module:function'")
        entries.append(Entry(item["entry"], inputs, args))
    if not entries:
        raise ValueError(f"{path}: [tool.graphlint] names no models (models = [\"pkg.models:build\"])")
    return entries


def _resolve(spec: str):
    mod_name, _, attr = spec.partition(":")
    mod = importlib.import_module(mod_name)
    obj = mod
    for part in attr.split("."):
        obj = getattr(obj, part)
    return mod, obj


def _files_under(root: str) -> List[str]:
    out = set()
    for m in list(sys.modules.values()):
        f = getattr(m, "__file__", None)
        if f:
            f = os.path.realpath(f)
            if f.startswith(root + os.sep) and "site-packages" not in f:
                out.add(os.path.relpath(f, root))
    return sorted(out)


def _child(root: str, entry: Entry, mode: str, out: Optional[str]) -> int:
    """Runs in a fresh interpreter: writes the entry's repository imports to
    `out` (JSON; stdout is the user's module's to print on), or captures it."""
    sys.path.insert(0, root)   # the entry points are modules of the user's repository
    try:
        mod, factory = _resolve(entry.entry)
        if mode == "deps":
            with open(out, "w") as f:
                json.dump(_files_under(root), f)
            return 0
        made = factory()
        if isinstance(made, tuple) and len(made) == 2:
            module, inputs = made
        else:
            module = made
            if entry.inputs:
                inputs = _resolve(entry.inputs)[1]()
            elif callable(getattr(mod, "example_inputs", None)):
                inputs = mod.example_inputs()
            else:
                return _fail(f"{entry.entry}: returns a module but names no inputs "
                             "(return (module, inputs), add `inputs = ...`, or define example_inputs())")
        from .export.cli import export_module   # imports torch: only in the capturing child
        train = "--train" in entry.args
        export_module(module, inputs if isinstance(inputs, (tuple, list)) else (inputs,), out, train=train)
        return 0
    except SystemExit as e:  # sys.exit() at import or in the factory
        return _fail(f"{entry.entry}: exited (sys.exit({e.code!r})) while being imported or called")
    except BaseException as e:  # a broken entry point is the user's error: one line
        name = type(e).__name__
        return _fail(f"{entry.entry}: {name}: {str(e).splitlines()[0] if str(e) else ''}")


def _child_main(root: str, entry: Entry, mode: str, out: Optional[str]) -> None:
    """The child's exit: output flushed, then os._exit, so a non-daemon thread
    the user's module started cannot keep the interpreter alive."""
    code = _child(root, entry, mode, out)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


DEFAULT_TIMEOUT = 600.0


class ChildTimeout(Exception):
    pass


def _run_child(root: str, entry: Entry, mode: str, out: Optional[str] = None,
               timeout: float = DEFAULT_TIMEOUT) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "graphlint.precommit", "--child", mode, "--root", root,
           "--entry", entry.entry]
    if entry.inputs:
        cmd += ["--inputs", entry.inputs]
    if out:
        cmd += ["--out", out]
    cmd += ["--args=" + json.dumps(entry.args)]
    env = dict(os.environ)
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = os.pathsep.join([here, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    # Its own session: on a timeout the whole group goes, threads and grandchildren
    # that hold the pipes included.
    proc = subprocess.Popen(cmd, cwd=root, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.communicate()
        raise ChildTimeout(f"{entry.entry}: {'importing' if mode == 'deps' else 'capturing'} it did not finish "
                           f"within {timeout:g} s (a module that sleeps or waits at import?); see --timeout") from None
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)


def _last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def _child_error(entry: Entry, proc: subprocess.CompletedProcess, what: str) -> str:
    """One line for a child that failed: its own message when it printed one."""
    line = _last_line(proc.stderr)
    prefix = "graphlint-models: error: "
    if line.startswith(prefix):
        return line[len(prefix):]
    status = f"exit {proc.returncode}" if proc.returncode >= 0 else f"signal {-proc.returncode}"
    return f"{entry.entry}: {what} ({status}{': ' + line if line else ''})"


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="graphlint-models", description=__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="*", help="changed files (pre-commit passes them); none: lint every model")
    p.add_argument("--format", default="gcc", help="graphlint's output format (default gcc)")
    p.add_argument("--child", choices=["deps", "capture"], help=argparse.SUPPRESS)
    p.add_argument("--root", help=argparse.SUPPRESS)
    p.add_argument("--entry", help=argparse.SUPPRESS)
    p.add_argument("--inputs", help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    p.add_argument("--args", default="[]", help=argparse.SUPPRESS)
    p.add_argument("--timeout", type=float,
                   default=float(os.environ.get("GRAPHLINT_MODELS_TIMEOUT", DEFAULT_TIMEOUT) or DEFAULT_TIMEOUT),
                   help="seconds each entry point may take to import, and again to capture (default 600; "
                        "GRAPHLINT_MODELS_TIMEOUT)")
    a = p.parse_args(argv)
    if a.child:
        _child_main(a.root, Entry(a.entry, a.inputs, json.loads(a.args)), a.child, a.out)
    if not a.timeout > 0:
        return _fail(f"--timeout must be a positive number of seconds, got {a.timeout:g}")

    root = repo_root(os.getcwd())
    try:
        entries = load_entries(root)
    except ValueError as e:
        return _fail(str(e))
    changed = {os.path.relpath(os.path.realpath(f), root) for f in a.files}
    from ._binary import GraphlintError, run
    status = 0
    with tempfile.TemporaryDirectory(prefix="graphlint-models-") as tmp:
        for i, entry in enumerate(entries):
            try:
                if changed and "pyproject.toml" not in changed:
                    deps_out = os.path.join(tmp, f"deps{i}.json")
                    deps = _run_child(root, entry, "deps", deps_out, a.timeout)
                    if deps.returncode != 0 or not os.path.isfile(deps_out):
                        _fail(_child_error(entry, deps, "importing it failed"))
                        status = 2
                        continue
                    with open(deps_out) as f:
                        imported = json.load(f)
                    if not changed.intersection(imported):
                        continue
                out = os.path.join(tmp, f"model{i}.fx.json")
                cap = _run_child(root, entry, "capture", out, a.timeout)
            except ChildTimeout as e:
                _fail(str(e))
                status = 2
                continue
            if cap.returncode != 0 or not os.path.isfile(out):
                _fail(_child_error(entry, cap, "capture failed"))
                status = 2
                continue
            try:
                proc = run([out, "--format", a.format, *entry.args], cwd=root)
            except GraphlintError as e:
                print(f"graphlint-models: error: {entry.entry}: {e}", file=sys.stderr)
                status = 2
                continue
            sys.stdout.write(proc.stdout)
            sys.stderr.write(proc.stderr)
            if proc.returncode == 1 and status == 0:
                status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
