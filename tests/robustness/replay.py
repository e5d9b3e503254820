#!/usr/bin/env python3
"""Replays the robustness reproducers (fuzzing findings) against a graphlint binary.

Each case is a folder holding its inputs and either an `entry.json` (the curated
cases: "cmds" are shell lines naming the binary "$GL", "setup" lines generate
big inputs) or an `info.json` (raw fuzzer findings: "cmd" is an argv whose
first element is the binary). Every command runs in a scratch copy of its
folder and must:
  - exit 0, 1 or 2 (never a signal, an abort or a sanitizer report),
  - on exit 2 print exactly one line on stderr, naming an input file,
  - finish within --timeout seconds,
  - leave every file that existed before it byte-identical (files over 64 MiB,
    the sparse giants some setups make: same size, modification time and
    first and last MiB).

  replay.py --graphlint build/tools/graphlint ../shared/robustness/cases ../shared/robustness/more
  replay.py --graphlint build/tools/graphlint tests/fixtures/robustness

A root that does not exist is skipped with a message (exit 77 when none
exists, which CTest reports as skipped).

  replay.py --graphlint build/tools/graphlint --round2 tests/robustness/round2.json \
            ../shared/robustness/round2/cases

Issue 40's round-2 cases hold a run.sh, not an entry.json: round2.json gives
each one's setup lines and commands (bash lines naming "$GL") with the proof
the issue asks for, on top of the checks above: the exit code expected, the
exit-2 line naming the file, no secret marker of the case in stdout, stderr
or any file the command wrote, and each command within --timeout seconds and
--memory-mb MiB. A case whose spec names no command is reported as such. The
results are printed per case with the branch that owns its fix.
"""
import argparse
import hashlib
import json
import os
import re
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

# Curated cases whose fixes live on branch robust-io (baseline/config/hardware
# YAML depth, huge FX file, glob matcher, verify's external-data resolver,
# output paths that name an input, /dev/zero configs, message escaping). They
# still fail on a branch without those fixes; remove this list once both
# branches are merged.
OTHER_BRANCH_CASES = set()  # cases 11-15, 18, 22, 24, 25 (robust-io) are merged

SANITIZER_MARKERS = ("runtime error:", "AddressSanitizer", "LeakSanitizer", "UndefinedBehaviorSanitizer",
                     "LLVM ERROR", "terminate called", "Segmentation fault", "internal error")
SKIP_EXIT = 77


# Files above this size (the sparse multi-GiB inputs the setup lines make) are
# not hashed whole: their digest is their size, modification time and the
# hashes of their first and last MiB. A write through any API moves the
# modification time, so a changed input is still caught, and the replay does
# not read 43 GB twice per command (it took four minutes of the CI suite).
WHOLE_HASH_LIMIT = 64 << 20
EDGE = 1 << 20


def sha(path):
    """The content digest of one file (see WHOLE_HASH_LIMIT for large ones)."""
    h = hashlib.sha256()
    st = os.stat(path)
    with open(path, "rb") as f:
        if st.st_size <= WHOLE_HASH_LIMIT:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        else:
            h.update(f"{st.st_size}:{st.st_mtime_ns}:".encode())
            h.update(f.read(EDGE))
            f.seek(st.st_size - EDGE)
            h.update(f.read(EDGE))
    return h.hexdigest()


def snapshot(folder):
    """Hashes of every regular file under `folder` (symlinks and devices are not read)."""
    out = {}
    for root, _, files in os.walk(folder):
        for name in files:
            p = os.path.join(root, name)
            if os.path.isfile(p) and not os.path.islink(p):
                out[os.path.relpath(p, folder)] = sha(p)
    return out


def argv_from_shell(line, binary):
    """The (env, argv) of the graphlint call in a run.sh-style line:
    `[wrappers] [VAR=val ...] "$GL" args [; | > ...]`. Wrappers (timeout,
    prlimit, time) are dropped: the replay applies its own limits."""
    lex = shlex.shlex(line, posix=True, punctuation_chars=";|&<>")
    lex.whitespace_split = True
    tokens = list(lex)
    if "$GL" not in tokens:
        return None
    i = tokens.index("$GL")
    env = {}
    j = i - 1
    while j >= 0 and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", tokens[j]):
        k, v = tokens[j].split("=", 1)
        env[k] = v
        j -= 1
    args = []
    for t in tokens[i + 1:]:
        if set(t) <= set(";|&<>"):
            if args and args[-1].isdigit():
                args.pop()  # the "2" of "2>&1"
            break
        args.append(t)
    return env, [binary] + args


def load_case(folder, binary):
    """(case id, setup lines, [(env, argv)]) or None for a folder that is not a case."""
    entry, info = os.path.join(folder, "entry.json"), os.path.join(folder, "info.json")
    name = os.path.basename(folder)
    if os.path.isfile(entry):
        with open(entry) as f:
            e = json.load(f)
        cmds = []
        for line in e.get("cmds", []):
            c = argv_from_shell(line, binary)
            if c:
                # Commands before the call on the same line ("cp a b; $GL b -o b") prepare it.
                before = line[:line.index("$GL")]
                cmds.append((c[0], c[1], before.rsplit(";", 1)[0] if ";" in before else ""))
        return name, e.get("setup", []), cmds
    if os.path.isfile(info):
        with open(info) as f:
            e = json.load(f)
        return name, [], [({}, [binary] + list(e["cmd"][1:]), "")]
    return None


def case_number(name):
    m = re.match(r"(\d\d)-", name)
    return m.group(1) if m else None


def limit_memory(mb):
    def apply():
        if mb:
            resource.setrlimit(resource.RLIMIT_AS, (mb << 20, mb << 20))
    return apply


def check(argv, env, cwd, timeout, memory_mb):
    """Runs one command; returns (problems, seconds): problems is empty when it behaved."""
    before = snapshot(cwd)
    full_env = dict(os.environ)
    full_env.update(env)
    start = time.monotonic()
    try:
        p = subprocess.run(argv, cwd=cwd, env=full_env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=timeout, preexec_fn=limit_memory(memory_mb))
    except subprocess.TimeoutExpired:
        return [f"did not finish within {timeout} s"], timeout
    elapsed = time.monotonic() - start
    problems = []
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode < 0:
        problems.append(f"killed by signal {-p.returncode}")
    elif p.returncode not in (0, 1, 2):
        problems.append(f"exit status {p.returncode}")
    for marker in SANITIZER_MARKERS:
        if marker in err:
            line = next(l for l in err.splitlines() if marker in l)
            problems.append(f"stderr reports '{marker}': {line[:200]}")
            break
    if p.returncode == 2:
        # One error line; setup warnings the run printed before it (a -D that
        # binds nothing, docs/commands/lint.md) are each one line of their own.
        lines = [l for l in err.splitlines() if l.strip() and not WARNING_LINE.match(l)]
        # Files named on the command line or by an environment variable
        # (GRAPHLINT_HARDWARE_FILE=hw.yaml) are the inputs a message may name.
        named = list(argv[1:]) + list(env.values())
        inputs = [os.path.basename(a) for a in named if os.path.exists(os.path.join(cwd, a))]
        if len(lines) != 1:
            problems.append(f"exit 2 with {len(lines)} lines on stderr (want one): {err[:300]!r}")
        elif inputs and not any(i in lines[0] for i in inputs):
            problems.append(f"exit 2 message names no input file ({', '.join(inputs)}): {lines[0][:200]}")
    after = snapshot(cwd)
    for path, digest in before.items():
        if after.get(path) != digest:
            problems.append(f"input {path} was changed or removed")
    return problems, elapsed


WARNING_LINE = re.compile(r"^\S+: warning: ")
USAGE_HINT = "Try 'graphlint --help'."


def files_under(folder):
    """{relative path: digest} of the regular files (not symlinks) under folder."""
    return snapshot(folder)


def run_round2_cmd(cmd, work, env, timeout, memory_mb, secrets, allowed_writes):
    """One round-2 command; returns (problems, seconds)."""
    before = files_under(work)
    start = time.monotonic()
    try:
        p = subprocess.run(["bash", "-o", "pipefail", "-c", cmd["run"]], cwd=work, env=env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                           preexec_fn=limit_memory(memory_mb), start_new_session=True)
    except subprocess.TimeoutExpired as e:
        return [f"did not finish within {timeout} s"], timeout
    elapsed = time.monotonic() - start
    problems = []
    out, err = p.stdout, p.stderr
    text = err.decode("utf-8", "replace")
    if p.returncode not in cmd.get("exit", [0, 1, 2]):
        problems.append(f"exit {p.returncode}, want {cmd.get('exit', [0, 1, 2])}: {text[-300:]!r}")
    for marker in SANITIZER_MARKERS + ("Traceback",):
        if marker in text:
            problems.append(f"stderr reports '{marker}'")
    if p.returncode == 2:
        # The usage hint follows a usage error; a file the text report
        # could not lint is its "FILE: fatal: ..." line on stdout.
        lines = [l for l in text.splitlines() if l.strip() and not WARNING_LINE.match(l) and l != USAGE_HINT]
        if not lines:
            lines = [l for l in out.decode("utf-8", "replace").splitlines() if ": fatal: " in l]
        if len(lines) != 1:
            problems.append(f"exit 2 with {len(lines)} error lines (want one): {text[:300]!r}")
        elif cmd.get("names") and cmd["names"] not in lines[0]:
            problems.append(f"exit 2 message does not name '{cmd['names']}': {lines[0][:200]}")
    after = files_under(work)
    written = [f for f, d in after.items() if before.get(f) != d]
    for f, d in before.items():
        if after.get(f) != d and f not in allowed_writes:
            problems.append(f"input {f} was changed or removed")
    blobs = [("stdout", out), ("stderr", err)]
    for f in written:
        with open(os.path.join(work, f), "rb") as fh:
            blobs.append((f, fh.read(1 << 24)))
    for marker in secrets:
        for where, blob in blobs:
            if marker.encode() in blob:
                problems.append(f"secret {marker!r} appears in {where}")
    return problems, elapsed


def replay_round2(args, spec_path, roots):
    with open(spec_path) as f:
        spec = json.load(f)
    checkout = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(spec_path))))
    results = {}
    for root in roots:
        lib = os.path.join(os.path.dirname(os.path.abspath(root)), "lib")
        for name in sorted(os.listdir(root)):
            folder = os.path.join(root, name)
            if not os.path.isdir(folder) or (args.only and args.only not in name) or name in results:
                continue
            case = spec.get(name)
            if case is None:
                results[name] = ("?", ["no commands for it in round2.json"], 0)
                continue
            if case.get("needs_python") and not (args.python and os.access(args.python, os.X_OK)):
                results[name] = (case["owner"], None, 0)
                print(f"SKIP {name}: needs --python (a Python with torch)")
                continue
            problems, ran = [], 0
            with tempfile.TemporaryDirectory(prefix="gl-replay2-") as tmp:
                os.makedirs(os.path.join(tmp, "cases"))
                work = os.path.join(tmp, "cases", name)
                shutil.copytree(folder, work, symlinks=True, ignore=shutil.ignore_patterns("release.txt"))
                if os.path.isdir(lib):
                    shutil.copytree(lib, os.path.join(tmp, "lib"))
                # $EXPORT runs the checkout's exporter package (python/graphlint/export).
                env = dict(os.environ, GL=args.graphlint_abs, GRAPHLINT_CHECKOUT=checkout,
                           PYTHONPATH=os.path.join(checkout, "python"),
                           PY=args.python or "/usr/bin/python3",
                           EXPORT=f"{args.python or '/usr/bin/python3'} -m graphlint.export")
                env.pop("GRAPHLINT_HARDWARE_FILE", None)
                for line in case.get("setup", []):
                    subprocess.run(["bash", "-c", line], cwd=work, env=env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, timeout=300)
                for cmd in case["cmds"]:
                    ran += 1
                    got, seconds = run_round2_cmd(cmd, work, env, args.timeout, args.memory_mb,
                                                  case.get("secrets", []), set(case.get("writes", [])))
                    shown = cmd["run"].replace("\n", "\\n")
                    if got:
                        problems += [f"`{shown[:120]}`: {g}" for g in got]
                        print(f"FAIL {name}: {shown[:160]}")
                        for g in got:
                            print(f"     {g}")
                    else:
                        print(f"ok   {name}: {shown[:160]} ({seconds:.2f} s)")
            results[name] = (case["owner"], problems, ran)
    print("\nround 2, per case (owner: the branch fixing it):")
    failed = 0
    for name, (owner, problems, ran) in sorted(results.items()):
        state = "skipped" if problems is None else "ok" if not problems else f"FAIL ({len(problems)})"
        failed += bool(problems)
        print(f"  {state:10} {name:42} {owner}")
    print(f"replay round 2: {len(results)} cases, {failed} failing")
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphlint", required=True, help="the binary under test")
    ap.add_argument("--timeout", type=float, default=5.0, help="seconds per command (default 5)")
    ap.add_argument("--memory-mb", type=int, default=4096,
                    help="address-space limit per command in MiB (0: none; use 0 for sanitizer builds)")
    ap.add_argument("--include-other-branch", action="store_true",
                    help="also run the cases fixed on branch robust-io (see OTHER_BRANCH_CASES)")
    ap.add_argument("--only", default="", help="run only cases whose folder name contains this")
    ap.add_argument("--round2", metavar="SPEC", help="replay round-2 case folders (run.sh) with this spec (round2.json)")
    ap.add_argument("--python", help="round 2: a Python with torch, for the exporter and hook cases")
    ap.add_argument("roots", nargs="+", help="folders of case folders")
    args = ap.parse_args()
    binary = os.path.abspath(args.graphlint)
    args.graphlint_abs = binary

    roots = [r for r in args.roots if os.path.isdir(r)]
    for r in args.roots:
        if r not in roots:
            print(f"replay: {r} is absent; its cases are skipped")
    if not roots:
        print("replay: no case folder present (../shared absent?); skipped")
        return SKIP_EXIT
    if args.round2:
        return replay_round2(args, args.round2, roots)

    failures, ran, skipped, slowest = [], 0, 0, (0.0, "")
    for root in roots:
        for name in sorted(os.listdir(root)):
            folder = os.path.join(root, name)
            if not os.path.isdir(folder) or (args.only and args.only not in name):
                continue
            case = load_case(folder, binary)
            if not case:
                continue
            cid, setup, cmds = case
            if case_number(cid) in OTHER_BRANCH_CASES and not args.include_other_branch:
                print(f"SKIP {cid} (fixed on branch robust-io)")
                skipped += 1
                continue
            with tempfile.TemporaryDirectory(prefix="gl-replay-") as tmp:
                work = os.path.join(tmp, name)
                shutil.copytree(folder, work, symlinks=True,
                                ignore=shutil.ignore_patterns("release.txt", "asan.txt", "stdout.txt", "stderr.txt"))
                for line in setup:
                    subprocess.run(line, shell=True, cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   timeout=120)
                for env, argv, prepare in cmds:
                    if prepare:
                        subprocess.run(prepare, shell=True, cwd=work, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL, timeout=120)
                    ran += 1
                    problems, seconds = check(argv, env, work, args.timeout, args.memory_mb)
                    slowest = max(slowest, (seconds, cid))
                    shown = " ".join(shlex.quote(a) for a in argv[1:])
                    if problems:
                        failures.append((cid, shown, problems))
                        print(f"FAIL {cid}: graphlint {shown}")
                        for pr in problems:
                            print(f"     {pr}")
                    else:
                        print(f"ok   {cid}: graphlint {shown} ({seconds:.2f} s)")
    print(f"replay: {ran} commands, {len(failures)} failed, {skipped} cases skipped; "
          f"slowest {slowest[0]:.2f} s ({slowest[1]})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
