"""`graphlint diff --git BASE..HEAD` end to end (docs/diff.md "Git revisions"):
a throwaway repository whose pyproject.toml names a nanoGPT-style model
(validation/diff_pairs/gpt.py), two commits (GELU -> ReLU in the MLP), each
captured in its own worktree by the exporter; the diff names the changed line,
a commit that only adds a comment is an empty diff, a bad revision is one line
and exit 2, and no worktree is left behind either way. Run by CTest as
DiffGit.TORCH2 with GRAPHLINT_CLI set (skips, 77, without torch)."""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CLI = os.environ.get("GRAPHLINT_CLI", os.path.join(REPO, "build", "tools", "graphlint"))


def git(repo, *args):
    subprocess.run(["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args], cwd=repo, check=True,
                   capture_output=True)


def diff(repo, *args):
    env = dict(os.environ, GRAPHLINT_PYTHON=sys.executable,
               PYTHONPATH=os.pathsep.join([os.path.join(REPO, "python"), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([CLI, "diff", *args], cwd=repo, capture_output=True, text=True, env=env, timeout=900)


def worktrees(repo):
    out = subprocess.run(["git", "worktree", "list"], cwd=repo, capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if line.strip()]


def main():
    failures = []

    def check(cond, what, detail=""):
        print(("ok   " if cond else "FAIL ") + what)
        if not cond:
            failures.append(what)
            print(detail[-3000:])

    tmp = tempfile.mkdtemp(prefix="graphlint-diff-git-test-")
    try:
        repo = os.path.join(tmp, "repo")
        os.makedirs(os.path.join(repo, "pkg"))
        git(repo, "init", "-q")
        with open(os.path.join(REPO, "validation", "diff_pairs", "gpt.py")) as f:
            source = f.read() + "\n\ndef build():\n    return model(), example_inputs()\n"
        with open(os.path.join(repo, "pkg", "__init__.py"), "w"):
            pass
        with open(os.path.join(repo, "pkg", "model.py"), "w") as f:
            f.write(source)
        with open(os.path.join(repo, "pyproject.toml"), "w") as f:
            f.write('[tool.graphlint]\nmodels = ["pkg.model:build"]\n')
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "base")
        with open(os.path.join(repo, "pkg", "model.py"), "w") as f:
            f.write(source.replace("        x = self.gelu(x)\n", "        x = F.relu(x)\n"))
        git(repo, "commit", "-qam", "relu")
        line = source.splitlines().index("        x = self.gelu(x)") + 1
        r = diff(repo, "--git", "HEAD~1..HEAD", "--train", "--format", "json")
        check(r.returncode == 0, "diff --git exits 0", r.stderr + r.stdout)
        check(f'"source": "pkg/model.py:{line}"' in r.stdout, f"names pkg/model.py:{line}", r.stdout)
        check(len(worktrees(repo)) == 1, "no worktree left after a diff", "\n".join(worktrees(repo)))
        # A commit that only adds a comment: empty.
        with open(os.path.join(repo, "pkg", "model.py")) as f:
            text = f.read()
        with open(os.path.join(repo, "pkg", "model.py"), "w") as f:
            f.write(text.replace("class MLP(nn.Module):", "# the feed-forward block\nclass MLP(nn.Module):"))
        git(repo, "commit", "-qam", "comment")
        r = diff(repo, "--git", "HEAD~1..HEAD", "--train")
        check(r.returncode == 0 and "no changes" in r.stdout, "a comment-only commit is an empty diff",
              r.stderr + r.stdout)
        # Two models: each one's report in its own -o file (diff.1.json, diff.2.json).
        with open(os.path.join(repo, "pkg", "model.py"), "a") as f:
            f.write("\n\ndef build_again():\n    return build()\n")
        with open(os.path.join(repo, "pyproject.toml"), "w") as f:
            f.write('[tool.graphlint]\nmodels = ["pkg.model:build", "pkg.model:build_again"]\n')
        git(repo, "commit", "-qam", "two models")
        r = diff(repo, "--git", "HEAD..HEAD", "--train", "--format", "json", "-o", os.path.join(tmp, "diff.json"))
        kept = [os.path.isfile(os.path.join(tmp, f"diff.{k}.json")) for k in (1, 2)]
        check(r.returncode == 0 and all(kept), "several models: one -o file per model", r.stderr + r.stdout)
        # A broken limit is exit 1; a bad revision one line and exit 2.
        r = diff(repo, "--git", "HEAD~3..HEAD~2", "--train", "--fail-on", "peak-1%")
        check(r.returncode == 1 and "graphlint: diff: peak-1%" in r.stderr, "--fail-on through --git", r.stderr)
        r = diff(repo, "--git", "nosuchrev..HEAD")
        check(r.returncode == 2 and r.stderr.count("\n") == 1 and "nosuchrev" in r.stderr,
              "a bad revision is one line, exit 2", r.stderr)
        check(len(worktrees(repo)) == 1, "no worktree left after an error", "\n".join(worktrees(repo)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
