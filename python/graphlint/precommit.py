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
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
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
    section = doc.get("tool", {}).get("graphlint", {})
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
    """Runs in a fresh interpreter: prints the entry's repository imports, or captures it."""
    sys.path.insert(0, root)
    try:
        mod, factory = _resolve(entry.entry)
        if mode == "deps":
            print(json.dumps(_files_under(root)))
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
        from ._export import exporter
        exp = exporter()
        train = "--train" in entry.args
        exp.export_module(module, inputs if isinstance(inputs, (tuple, list)) else (inputs,), out, train=train)
        return 0
    except Exception as e:  # a broken entry point is the user's error: one line
        name = type(e).__name__
        return _fail(f"{entry.entry}: {name}: {str(e).splitlines()[0] if str(e) else ''}")


def _run_child(root: str, entry: Entry, mode: str, out: Optional[str] = None) -> subprocess.CompletedProcess:
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
    return subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=env)


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
    a = p.parse_args(argv)
    if a.child:
        return _child(a.root, Entry(a.entry, a.inputs, json.loads(a.args)), a.child, a.out)

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
            if changed and "pyproject.toml" not in changed:
                deps = _run_child(root, entry, "deps")
                if deps.returncode != 0:
                    sys.stderr.write(deps.stderr)
                    status = 2
                    continue
                if not changed.intersection(json.loads(deps.stdout)):
                    continue
            out = os.path.join(tmp, f"model{i}.fx.json")
            cap = _run_child(root, entry, "capture", out)
            if cap.returncode != 0:
                sys.stderr.write(cap.stderr.splitlines()[-1] + "\n" if cap.stderr else
                                 f"graphlint-models: error: {entry.entry}: capture failed\n")
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
