"""`graphlint diff --git BASE..HEAD`: diff the models a repository names in
pyproject.toml ([tool.graphlint] models, the model-sources hook's config;
docs/diff.md "Git revisions") between two revisions.

Each revision is checked out into a temporary git worktree, each entry point is
captured there by the exporter's fake capture in a fresh interpreter (as
`graphlint-models` captures: graphlint.precommit), and the binary diffs the two
captures with the entry's args and the options given after `--`. The source
paths both captures record are relative to their worktree, so the same line of
the same file reads the same on both sides. The worktrees are removed whatever
happens (an error, a timeout, Ctrl-C).

Exit: the highest of the diffs' codes (0, 1 for a broken --fail-on limit), 2
when a revision, the config or a capture fails.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from typing import List, Optional, Sequence

from .precommit import ChildTimeout, DEFAULT_TIMEOUT, _child_error, _run_child, load_entries, repo_root


def _fail(msg: str) -> int:
    print(f"graphlint: diff --git: {msg}", file=sys.stderr)
    return 2


def _git(root: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=300)


def _revisions(spec: str):
    if ".." not in spec:
        return spec, "HEAD"
    base, _, head = spec.partition("..")
    return base or "HEAD", head or "HEAD"


def _output_per_model(rest: List[str], index: int) -> List[str]:
    """`-o FILE` for the index-th of several models: FILE with the model's
    number before its extension (diff.json -> diff.1.json), so each model's
    report is kept instead of the next one writing over it."""
    out = list(rest)

    def numbered(path: str) -> str:
        stem, ext = os.path.splitext(path)
        return f"{stem}.{index}{ext}"

    for k, arg in enumerate(out):
        if arg in ("-o", "--output", "-output") and k + 1 < len(out):
            out[k + 1] = numbered(out[k + 1])
            break
        prefix = next((p for p in ("--output=", "-output=", "-o=") if arg.startswith(p)), None)
        if prefix is None and arg.startswith("-o") and not arg.startswith("--") and len(arg) > 2:
            prefix = "-o"
        if prefix is not None:
            out[k] = prefix + numbered(arg[len(prefix):])
            break
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="graphlint diff --git", description=__doc__.split("\n\n")[0])
    p.add_argument("revisions", help="BASE..HEAD (HEAD defaults to HEAD), or BASE alone")
    p.add_argument("--binary", help="the graphlint binary that diffs (default: GRAPHLINT_BINARY or PATH)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                   help="seconds each capture may take (default 600)")
    p.add_argument("rest", nargs=argparse.REMAINDER, help="-- then graphlint diff's options")
    a = p.parse_args(argv)
    rest: List[str] = a.rest[1:] if a.rest[:1] == ["--"] else a.rest
    binary = a.binary or os.environ.get("GRAPHLINT_BINARY") or shutil.which("graphlint") or "graphlint"
    root = repo_root(os.getcwd())
    if not os.path.isdir(os.path.join(root, ".git")) and _git(root, "rev-parse", "--git-dir").returncode != 0:
        return _fail(f"{root} is not in a git repository")
    base, head = _revisions(a.revisions)
    revs = {}
    for side, rev in (("base", base), ("head", head)):
        proc = _git(root, "rev-parse", "--verify", "--quiet", rev + "^{commit}")
        if proc.returncode != 0:
            return _fail(f"'{rev}' is not a revision of {root}")
        revs[side] = proc.stdout.strip()
    status = 0
    tmp = tempfile.mkdtemp(prefix="graphlint-diff-git-")
    worktrees: List[str] = []
    try:
        for side in ("base", "head"):
            wt = os.path.join(tmp, side)
            proc = _git(root, "worktree", "add", "--detach", "--force", wt, revs[side])
            if proc.returncode != 0:
                return _fail(f"git worktree add {revs[side][:12]}: {proc.stderr.strip().splitlines()[-1:]}")
            worktrees.append(wt)
        try:
            # The entry points as the head revision names them.
            entries = load_entries(worktrees[1])
        except ValueError as e:
            return _fail(str(e))
        for i, entry in enumerate(entries):
            outs = []
            for side, wt in zip(("base", "head"), worktrees):
                out = os.path.join(tmp, f"{side}{i}.fx.json")
                try:
                    cap = _run_child(wt, entry, "capture", out, a.timeout)
                except ChildTimeout as e:
                    _fail(f"{side} {revs[side][:12]}: {e}")
                    status = 2
                    break
                if cap.returncode != 0 or not os.path.isfile(out):
                    _fail(f"{side} {revs[side][:12]}: {_child_error(entry, cap, 'capture failed')}")
                    status = 2
                    break
                outs.append(out)
            if len(outs) != 2:
                continue
            options = rest
            if len(entries) > 1:
                print(f"== {entry.entry}", flush=True)
                options = _output_per_model(rest, i + 1)
            try:
                proc = subprocess.run([binary, "diff", outs[0], outs[1], *entry.args, *options], cwd=root)
            except OSError as e:
                return _fail(f"cannot run {binary}: {e.strerror}")
            status = max(status, proc.returncode)
    finally:
        for wt in worktrees:
            _git(root, "worktree", "remove", "--force", wt)
        _git(root, "worktree", "prune")
        shutil.rmtree(tmp, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
