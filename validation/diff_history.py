#!/usr/bin/env python3
"""`graphlint diff` on real before/after pairs from public history (issue 44,
docs/validation.md "graphlint diff: real history").

Each pair is one commit of a public repository that touched its model file,
diffed against the file as it was at the commit's parent: the two versions are
stored under validation/diff_pairs/history/REPO/SHA.py (the file at that
commit, unedited; REPO/ORIGIN.md names the repository, its licence and the
commits). history/labels.jsonl holds one line per pair, labelled by hand from
reading the commit's diff before any diff was run: the commit subject, what a
reader expects `graphlint diff` to name (`expect`: [side, text of the line],
the line of the head, or of the base for a removal, found by a substring
unique in that version), and why. An empty `expect` says the commit makes no
change to the captured training graph (comments, init, generate(),
from_pretrained(), configure_optimizers(), ...): its diff must be empty.
A label changed after a run keeps the first label and the reason in
`relabelled`.

For each version the script writes a folder with a `.git` marker, the model
file where the repository keeps it, and the repository's capture driver
(history/REPO/driver.py: builds the model from a tiny config, sizes only,
every other field at the version's default, and gives example inputs); it
captures it once with graphlint-export --train (fake tensors), then runs
`graphlint diff --train --format json` per pair. A labelled line is named
when a node change, a parameter change, a fusion change or a new finding is
at it (attribution does not count), on the side given or, for the same text,
on the other side; a pair is a hit when all its lines are named.

    PY validation/diff_history.py [--graphlint build/tools/graphlint] [--only SHA,...]
                                  [--keep DIR] [--jobs N] [--markdown]

Exit 0 when at least 90% of the labelled pairs hit and every no-change pair
is empty, else 1.
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from diff_pairs import named_lines  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
EXPORTER = os.path.join(REPO, "tools", "graphlint-export", "graphlint-export")
HISTORY = os.path.join(HERE, "diff_pairs", "history")

# Per repository: the folder under history/, the model file's path in the
# repository (where the capture folder puts it, so sources read PATH:LINE as in
# a checkout) and the forward output to back-propagate.
REPOS = {
    "karpathy/nanoGPT": {"dir": "nanoGPT", "file": "model.py", "loss_output": "1"},
    "karpathy/minGPT": {"dir": "minGPT", "file": "mingpt/model.py", "loss_output": "1"},
}


def load_labels(path=os.path.join(HISTORY, "labels.jsonl")):
    pairs = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                p = json.loads(line)
                p["lineno"] = n
                pairs.append(p)
    return pairs


def version_text(repo, sha):
    with open(os.path.join(HISTORY, REPOS[repo]["dir"], sha + ".py")) as f:
        return f.read()


def line_of(text, needle):
    hits = [i + 1 for i, line in enumerate(text.splitlines()) if needle in line]
    return hits[0] if len(hits) == 1 else None


def capture(python, repo, sha, work, reuse):
    """Capture one version into WORK/DIR/SHA.fx.json; returns the path."""
    cfg = REPOS[repo]
    folder = os.path.join(work, cfg["dir"], sha)
    out = folder + ".fx.json"
    src = os.path.join(folder, cfg["file"])
    text = version_text(repo, sha)
    if reuse and os.path.exists(out) and os.path.exists(src) and open(src).read() == text:
        return out
    os.makedirs(os.path.join(folder, ".git"), exist_ok=True)
    os.makedirs(os.path.dirname(src), exist_ok=True)
    with open(src, "w") as f:
        f.write(text)
    shutil.copy(os.path.join(HISTORY, cfg["dir"], "driver.py"), os.path.join(folder, "driver.py"))
    proc = subprocess.run([python, EXPORTER, "driver.py", "--train", "--loss-output", cfg["loss_output"], "-o", out],
                          cwd=folder, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()
        raise RuntimeError(f"capture of {sha} failed: {tail[-1] if tail else proc.returncode}")
    return out


def run_pair(p, graphlint, captures):
    repo, base, head = p["repo"], p["base"], p["head"]
    cfg = REPOS[repo]
    texts = {"base": version_text(repo, base), "head": version_text(repo, head)}
    for side in ("base", "head"):
        if isinstance(captures[(repo, p[side])], Exception):
            raise captures[(repo, p[side])]
    proc = subprocess.run([graphlint, "diff", captures[(repo, base)], captures[(repo, head)], "--train",
                           "--format", "json"], capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"graphlint diff exit {proc.returncode}: {proc.stderr.strip()}")
    diff = json.loads(proc.stdout)
    named = named_lines(diff, cfg["file"])
    lines = []  # (label text, side, line, named)
    for side, needle in p["expect"]:
        line = line_of(texts[side], needle)
        if line is None:
            raise SystemExit(f"labels.jsonl:{p['lineno']}: {needle!r} is not one line of the {side} ({p[side]})")
        other = "head" if side == "base" else "base"
        other_line = line_of(texts[other], needle)
        hit = (side, line) in named or (other_line is not None and (other, other_line) in named)
        lines.append((needle, side, line, hit))
    if p["expect"]:
        hit = all(x[3] for x in lines)
    else:
        hit = diff["empty"]
    wanted = {(s, l) for _, s, l, _ in lines}
    return {"pair": p, "hit": hit, "lines": lines, "empty": diff["empty"], "named": sorted(named),
            "extra": sorted(named - wanted), "summary": summarize(diff)}


def summarize(diff):
    """A short account of a non-empty diff (for a no-change pair that is not empty)."""
    parts = []
    for key in ("changes", "params", "fusion"):
        for e in diff[key][:4]:
            parts.append(f"{key}:{e.get('kind', '')}@{e['source']}")
    moved = [k for k, v in diff.get("metrics", {}).items() if v.get("delta")]
    if moved:
        parts.append("metrics moved: " + ",".join(moved[:6]))
    for f in diff["findings"]["new"][:2]:
        parts.append(f"new {f['code']}@{f['source']}")
    return "; ".join(parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graphlint", default=os.path.join(REPO, "build", "tools", "graphlint"))
    ap.add_argument("--only", help="comma-separated head commits")
    ap.add_argument("--keep", metavar="DIR", help="capture into DIR and keep it (reused while the sources match)")
    ap.add_argument("--jobs", type=int, default=1, help="captures run at once")
    ap.add_argument("--markdown", action="store_true", help="print the docs/validation.md table")
    a = ap.parse_args()
    pairs = load_labels()
    if a.only:
        only = set(a.only.split(","))
        pairs = [p for p in pairs if p["head"] in only]
    work = a.keep or tempfile.mkdtemp(prefix="graphlint-diff-history-")
    t0 = time.time()
    versions = sorted({(p["repo"], p[s]) for p in pairs for s in ("base", "head")})
    captures = {}
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
            futs = {ex.submit(capture, sys.executable, repo, sha, work, bool(a.keep)): (repo, sha)
                    for repo, sha in versions}
            for fut in concurrent.futures.as_completed(futs):
                try:
                    captures[futs[fut]] = fut.result()
                except (RuntimeError, OSError) as e:
                    captures[futs[fut]] = e
        print(f"{len(versions)} versions captured in {time.time() - t0:.0f} s")
        results = []
        for p in pairs:
            try:
                r = run_pair(p, a.graphlint, captures)
            except (RuntimeError, OSError, json.JSONDecodeError) as e:
                r = {"pair": p, "hit": False, "lines": [], "empty": False, "named": [], "extra": [],
                     "summary": "", "error": str(e)}
            results.append(r)
            status = "ok  " if r["hit"] else "MISS"
            labelled = bool(p["expect"])
            detail = r.get("error") or ""
            if labelled and not detail:
                missed = [f"{s}:{l}" for _, s, l, h in r["lines"] if not h]
                detail = f"missed {missed}" if missed else ""
            elif not detail and not r["hit"]:
                detail = "not empty: " + r["summary"]
            print(f"{status} {p['repo'].split('/')[1]} {p['head']} {p['subject'][:60]}"
                  + (f"  [{detail}]" if detail else "")
                  + (f"  (also named {len(r['extra'])} lines)" if labelled and r["extra"] else ""))
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    labelled = [r for r in results if r["pair"]["expect"]]
    empty = [r for r in results if not r["pair"]["expect"]]
    hits = sum(r["hit"] for r in labelled)
    line_total = sum(len(r["lines"]) for r in labelled)
    line_hits = sum(h for r in labelled for *_, h in r["lines"])
    empties = sum(r["hit"] for r in empty)
    rate = hits / len(labelled) if labelled else 1.0
    print(f"\n{len(results)} pairs from history: labelled changes named {hits} of {len(labelled)} pairs "
          f"({100 * rate:.0f}%), {line_hits} of {line_total} lines; no-change pairs empty {empties} of {len(empty)} "
          f"({time.time() - t0:.0f} s)")
    if a.markdown:
        print("\n| repo | commit | subject | label (expected lines) | result |\n|---|---|---|---|---|")
        for r in results:
            p = r["pair"]
            want = ", ".join(f"{s}:{l}" for _, s, l, _ in r["lines"]) or "no change (empty diff)"
            if r.get("error"):
                res = "error: " + r["error"]
            elif p["expect"]:
                missed = [f"{s}:{l}" for _, s, l, h in r["lines"] if not h]
                res = "named" if r["hit"] else f"missed {', '.join(missed)}"
            else:
                res = "empty" if r["hit"] else "not empty"
            subject = p["subject"].replace("|", "\\|")
            if p.get("relabelled"):
                res += " (relabelled)"
            print(f"| {p['repo'].split('/')[1]} | {p['base']}..{p['head']} | {subject} | "
                  f"{p['why']}: {want} | {res} |")
    return 0 if rate >= 0.9 and empties == len(empty) else 1


if __name__ == "__main__":
    sys.exit(main())
