#!/usr/bin/env python3
"""The pip package end to end (docs/python.md), as a user gets it.

1. Builds the wheel from the checkout (`pip wheel .`: scikit-build-core runs
   the package's own CMake build) and records its size and build time.
2. Installs it into a fresh virtual environment, with torch 2.13 and
   transformers pinned as in scripts/requirements/torch2.txt, and records the
   install time: `graphlint --version`, `python -m graphlint --version` and
   `graphlint-export --help` work and agree on the version.
3. Runs docs/python.md's example (the API on a model with a known GL132).
4. graphlint.check on a small transformers GPT-2 (training, Adam) and, with
   the wheel installed into a target folder used by the torch 2.14 + timm
   environment, on a timm resnet: findings and memory figures must equal the
   CLI's on the same export.
5. The pre-commit hook graphlint-models through `pre-commit try-repo` on a
   throwaway model repository: a clean model passes, an edit that adds an
   in-place write on a saved tensor fails at the edited line.

Usage: package_test.py --source DIR --work DIR [--vision-python PY] [--skip-build]
Prints `N passed, N failed` last.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time

RESULTS = []


def check(name, ok, detail=""):
    RESULTS.append((name, bool(ok)))
    print(f"{'PASS' if ok else 'FAIL'} {name}" + (f": {detail}" if detail and not ok else ""), flush=True)
    return ok


def sh(cmd, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    return subprocess.run(cmd, **kw)


def pinned(source, names):
    pins = {}
    with open(os.path.join(source, "scripts", "requirements", "torch2.txt")) as f:
        for line in f:
            line = line.split("#")[0].strip()
            if "==" in line:
                pins[line.split("==")[0]] = line
    return [pins[n] for n in names]


def build_wheel(source, work):
    dist = os.path.join(work, "dist")
    shutil.rmtree(dist, ignore_errors=True)
    env = dict(os.environ)
    if shutil.which("ccache"):
        env.setdefault("CMAKE_CXX_COMPILER_LAUNCHER", "ccache")
        env.setdefault("CMAKE_C_COMPILER_LAUNCHER", "ccache")
        env.setdefault("CCACHE_BASEDIR", os.path.dirname(os.path.abspath(source)))
    t = time.time()
    r = sh([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", dist, source], env=env)
    took = time.time() - t
    if not check("wheel builds", r.returncode == 0, r.stderr[-2000:]):
        return None
    wheels = [os.path.join(dist, w) for w in os.listdir(dist) if w.endswith(".whl")]
    wheel = wheels[0]
    print(f"wheel: {os.path.basename(wheel)} {os.path.getsize(wheel) / 2**20:.1f} MiB, built in {took:.0f} s")
    with open(os.path.join(work, "wheel.json"), "w") as f:
        json.dump({"wheel": wheel, "bytes": os.path.getsize(wheel), "build_s": took}, f)
    return wheel


def lint_cli(binary, path, args):
    r = sh([binary, path, "--format", "json", *args])
    return json.loads(r.stdout)["files"][0]


def same_as_cli(name, report_json, cli_json):
    a, b = report_json["files"][0], cli_json
    codes = lambda f: sorted((d["code"], d["location"].get("node") or "") for d in f["diagnostics"])
    check(f"{name}: findings equal the CLI's", codes(a) == codes(b), f"{codes(a)} vs {codes(b)}")
    keys = ("params_bytes", "grads_bytes", "optimizer_bytes", "activations_bytes", "peak_allocated_bytes",
            "peak_reserved_bytes")
    check(f"{name}: memory equals the CLI's", all(a["memory"][k] == b["memory"][k] for k in keys),
          {k: (a["memory"][k], b["memory"][k]) for k in keys})


GPT2 = textwrap.dedent('''
    import json, sys, torch, graphlint
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=512, n_positions=64,
                     bos_token_id=0, eos_token_id=0, use_cache=False)
    model = GPT2LMHeadModel(cfg)
    ids = torch.randint(0, 512, (2, 16))
    r = graphlint.check(model, (ids,), train=True, optimizer="adam", target="A100-80GB",
                        export_path=sys.argv[1])
    assert r.memory is not None and r.memory.mode == "training", r.memory
    assert r.memory.execution == "eager" and not r.memory.execution_stated, r.memory
    assert r.cost.flops > 0
    c = graphlint.check(model, (ids,), train=True, optimizer="adam", target="A100-80GB", backend="inductor")
    assert c.memory.execution == "compiled" and c.memory.execution_stated, c.memory
    assert c.memory.peak_allocated_bytes <= r.memory.peak_allocated_bytes, (c.memory, r.memory)
    n = sum(p.numel() for p in model.parameters())
    print(json.dumps({"report": r.json, "numel": n}))
''')

TIMM = textwrap.dedent('''
    import json, sys, torch, timm, graphlint
    model = timm.create_model("resnet18", pretrained=False).eval()
    r = graphlint.check(model, (torch.randn(1, 3, 64, 64),), target="A100-80GB", export_path=sys.argv[1])
    assert r.memory is not None and r.memory.mode == "inference", r.memory
    assert r.fusion.kernels_predicted > 0
    print(json.dumps({"report": r.json}))
''')


def fresh_venv(work, source, wheel):
    venv = os.path.join(work, "venv")
    shutil.rmtree(venv, ignore_errors=True)
    py3 = shutil.which("python3")
    r = sh([py3, "-m", "venv", venv])
    if not check("fresh venv", r.returncode == 0, r.stderr):
        return None
    py = os.path.join(venv, "bin", "python")
    t = time.time()
    r = sh([py, "-m", "pip", "install", "-q", wheel])
    took = time.time() - t
    check("wheel installs into a fresh venv", r.returncode == 0, r.stderr[-2000:])
    print(f"install of the wheel alone: {took:.1f} s")
    r = sh([py, "-m", "pip", "install", "-q", *pinned(source, ["torch", "transformers"])])
    check("torch and transformers install beside it", r.returncode == 0, r.stderr[-2000:])
    with open(os.path.join(work, "wheel.json")) as f:
        meta = json.load(f)
    meta["install_s"] = took
    with open(os.path.join(work, "wheel.json"), "w") as f:
        json.dump(meta, f)
    return venv


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--source", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--vision-python")
    p.add_argument("--skip-build", action="store_true", help="reuse WORK/dist's wheel")
    a = p.parse_args()
    source, work = os.path.abspath(a.source), os.path.abspath(a.work)
    os.makedirs(work, exist_ok=True)
    if a.skip_build and os.path.isdir(os.path.join(work, "dist")):
        wheel = [os.path.join(work, "dist", w) for w in os.listdir(os.path.join(work, "dist"))][0]
    else:
        wheel = build_wheel(source, work)
    if not wheel:
        return finish()
    venv = fresh_venv(work, source, wheel)
    if not venv:
        return finish()
    bindir = os.path.join(venv, "bin")
    py, gl = os.path.join(bindir, "python"), os.path.join(bindir, "graphlint")
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
    env.pop("GRAPHLINT_BINARY", None)
    env.pop("PYTHONPATH", None)

    # 2. The binaries on PATH, one version.
    version = sh([py, "-c", "import graphlint; print(graphlint.__version__)"], env=env).stdout.strip()
    check("package version is the CMake project version",
          re.search(r"project\(graphlint VERSION " + re.escape(version) + r"\b",
                    open(os.path.join(source, "CMakeLists.txt")).read()), version)
    r = sh([gl, "--version"], env=env)
    check("graphlint --version", r.returncode == 0 and r.stdout.split()[:2] == ["graphlint", version], r.stdout)
    r = sh([py, "-m", "graphlint", "--version"], env=env)
    check("python -m graphlint --version", r.returncode == 0 and r.stdout.split()[:2] == ["graphlint", version],
          r.stdout + r.stderr)
    r = sh([os.path.join(bindir, "graphlint-export"), "--help"], env=env)
    check("graphlint-export --help", r.returncode == 0 and "usage: graphlint-export" in r.stdout, r.stderr)
    r = sh([gl, "rules"], env=env)
    check("the installed binary finds its data", r.returncode == 0 and "GL001" in r.stdout, r.stderr)
    fake = os.path.join(work, "fake-graphlint")
    with open(fake, "w") as f:
        f.write("#!/bin/sh\necho graphlint 0.0.1\n")
    os.chmod(fake, 0o755)
    r = sh([py, "-c", "import graphlint; graphlint.check('x.onnx')"], env=dict(env, GRAPHLINT_BINARY=fake))
    check("a binary of another version is refused in one line",
          r.returncode != 0 and "is graphlint 0.0.1, but this Python package is " + version in r.stderr, r.stderr)

    old = os.path.join(work, "old-fx-graphlint")
    with open(old, "w") as f:
        f.write(f"#!/bin/sh\necho graphlint {version}\necho graphlint-fx 1-1\n")
    os.chmod(old, 0o755)
    r = sh([py, "-c", "import torch, graphlint; graphlint.check(torch.nn.Linear(2, 2), (torch.randn(1, 2),))"],
           env=dict(env, GRAPHLINT_BINARY=old))
    check("an exporter writing an FX version the binary cannot read is refused in one line",
          r.returncode != 0 and "reads graphlint-fx versions 1-1, but this package's exporter writes version" in r.stderr,
          r.stderr[-2000:])

    # 3. docs/python.md's example.
    doc = open(os.path.join(source, "docs", "python.md")).read()
    m = re.search(r"<!-- example: [^>]*-->\s*```python\n(.*?)```", doc, re.S)
    ex = os.path.join(work, "python_md_example.py")
    with open(ex, "w") as f:
        f.write(m.group(1))
    r = sh([py, ex], env=env, cwd=work)
    check("docs/python.md example runs", r.returncode == 0 and "GL132" in r.stdout, (r.stdout + r.stderr)[-3000:])

    # 4. API vs CLI on the same export: transformers GPT-2 (this venv), timm resnet (torch 2.14 env).
    gpt = os.path.join(work, "gpt2.fx.json")
    script = os.path.join(work, "api_gpt2.py")
    with open(script, "w") as f:
        f.write(GPT2)
    r = sh([py, script, gpt], env=env, cwd=work)
    if check("graphlint.check on a transformers GPT-2 (train)", r.returncode == 0, (r.stdout + r.stderr)[-3000:]):
        out = json.loads(r.stdout.strip().splitlines()[-1])
        same_as_cli("GPT-2", out["report"], lint_cli(gl, gpt, ["--train", "--optimizer", "adam", "--target",
                                                                "A100-80GB"]))
        params = json.load(open(gpt))["params"]
        numel = 0
        for t in params:
            if t.get("kind") == "parameter":
                k = 1
                for d in t["shape"]:
                    k *= d
                numel += k
        check("GPT-2: exported parameter count equals sum(p.numel())", numel == out["numel"],
              f"{numel} vs {out['numel']}")
    if a.vision_python and os.path.exists(a.vision_python):
        target = os.path.join(work, "vision-target")
        shutil.rmtree(target, ignore_errors=True)
        r = sh([a.vision_python, "-m", "pip", "install", "-q", "--no-deps", "--target", target, wheel])
        check("wheel installs into a target folder for the torch 2.14 environment", r.returncode == 0, r.stderr)
        venv_env = dict(env, PYTHONPATH=target, PATH=os.path.join(target, "bin") + os.pathsep + env["PATH"])
        res = os.path.join(work, "resnet18.fx.json")
        script = os.path.join(work, "api_timm.py")
        with open(script, "w") as f:
            f.write(TIMM)
        r = sh([a.vision_python, script, res], env=venv_env, cwd=work)
        if check("graphlint.check on a timm resnet18", r.returncode == 0, (r.stdout + r.stderr)[-3000:]):
            out = json.loads(r.stdout.strip().splitlines()[-1])
            same_as_cli("timm resnet18", out["report"], lint_cli(gl, res, ["--target", "A100-80GB"]))
    else:
        print("SKIP timm: no --vision-python")

    # torch 1.13 (Debian's Python 3.11): the same wheel in a target folder.
    debian = "/usr/bin/python3"
    if sh([debian, "-c", "import torch"]).returncode == 0:
        target = os.path.join(work, "debian-target")
        shutil.rmtree(target, ignore_errors=True)
        r = sh([py, "-m", "pip", "install", "-q", "--no-deps", "--target", target, wheel])
        old_env = dict(env, PYTHONPATH=target, PATH=os.path.join(target, "bin") + os.pathsep + env["PATH"])
        r = sh([debian, ex], env=old_env, cwd=work)
        check("docs/python.md example runs on torch 1.13 (Debian's Python)",
              r.returncode == 0 and "GL132" in r.stdout, (r.stdout + r.stderr)[-3000:])
    else:
        print("SKIP torch 1.13: /usr/bin/python3 has no torch")

    # 5. pre-commit try-repo with the model-sources hook.
    precommit_e2e(source, work, env)
    return finish()


MODEL_CLEAN = textwrap.dedent('''
    import torch


    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(32, 32)

        def forward(self, x):
            h = torch.sigmoid(self.fc(x))
            return h.sum()


    def build():
        return Net(), (torch.randn(4, 32),)
''')


def precommit_e2e(source, work, env):
    pre = shutil.which("pre-commit")
    if not pre:
        print("SKIP pre-commit: not installed")
        return
    # try-repo clones the hooks repository's commits: a clone of the checkout
    # with its working tree committed, so uncommitted hook changes are tested.
    hooks = os.path.join(work, "hooks-repo")
    shutil.rmtree(hooks, ignore_errors=True)
    sh(["git", "clone", "-q", source, hooks])
    for f in (".pre-commit-hooks.yaml",):
        shutil.copy(os.path.join(source, f), os.path.join(hooks, f))
    git = lambda *args, cwd: sh(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd)
    git("commit", "-qam", "hooks under test", "--allow-empty", cwd=hooks)
    repo = os.path.join(work, "model-repo")
    shutil.rmtree(repo, ignore_errors=True)
    os.makedirs(os.path.join(repo, "mypkg"))
    open(os.path.join(repo, "mypkg", "__init__.py"), "w").close()
    with open(os.path.join(repo, "mypkg", "models.py"), "w") as f:
        f.write(MODEL_CLEAN)
    with open(os.path.join(repo, "pyproject.toml"), "w") as f:
        f.write('[tool.graphlint]\nmodels = ["mypkg.models:build"]\n\n'
                '[[tool.graphlint.model]]\nentry = "mypkg.models:build"\nargs = ["--train", "--select", "GL13"]\n')
    with open(os.path.join(repo, "unrelated.py"), "w") as f:
        f.write("x = 1\n")
    sh(["git", "init", "-q"], cwd=repo)
    git("add", ".", cwd=repo)
    git("commit", "-qm", "model", cwd=repo)
    run = lambda *files: sh([pre, "try-repo", hooks, "graphlint-models", "--files", *files],
                            cwd=repo, env=dict(env, PRE_COMMIT_HOME=os.path.join(work, "pre-commit-home")))
    r = run("mypkg/models.py")
    check("pre-commit try-repo: a clean model passes", r.returncode == 0, (r.stdout + r.stderr)[-3000:])
    with open(os.path.join(repo, "mypkg", "models.py"), "w") as f:
        f.write(MODEL_CLEAN.replace("        return h.sum()", "        h.mul_(2.0)\n        return h.sum()"))
    line = MODEL_CLEAN.splitlines().index("        return h.sum()") + 1  # the inserted line's number
    r = run("unrelated.py")
    check("pre-commit try-repo: a change outside the model's imports is skipped", r.returncode == 0,
          (r.stdout + r.stderr)[-3000:])
    r = run("mypkg/models.py")
    check("pre-commit try-repo: an in-place write on a saved tensor fails at the edited line",
          r.returncode == 1 and f"mypkg/models.py:{line}:" in r.stdout and "GL132" in r.stdout,
          (r.stdout + r.stderr)[-3000:])


def finish():
    passed = sum(ok for _, ok in RESULTS)
    failed = len(RESULTS) - passed
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
