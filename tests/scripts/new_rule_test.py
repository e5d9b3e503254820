#!/usr/bin/env python3
"""scripts/new_rule.py in a throwaway copy of the rule sources and pages: it
creates the rule file, the page, the fixture and the one sorted line of
src/rules/Rules.def, and for a rule with options the options struct and table,
the page's Options table and the rows of docs/configuration.md; a code or
name already used, or a malformed one, is refused with exit 2 and nothing
written.

With --build DIR (a configured Ninja build whose graphlint is current), the
generated rules are compiled with the build's flags and linked into a copy of
graphlint in place of the registry, and that binary lints each generated
fixture (converted with python3-onnx): exactly the `# expect:` line fires, an
option's default reaches `config --dump`, a .graphlint.yaml value reaches
the rule's typed options struct (its message prints it) and a value outside
the range is refused. Without it only a syntax check runs. ~15 s with a
build (three -O0 compiles and one link)."""
import argparse
import json
import os
import pathlib
import shlex
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "new_rule.py"
OPTION_ARGS = ["--option", "min-rank", "2", "1", "8", "lowest rank reported",
               "--option", "share", "0.5", "0", "1", "share of the inputs that must be sparse"]


def run(root, *args):
    return subprocess.run([sys.executable, str(SCRIPT), *args, "--root", str(root)],
                          capture_output=True, text=True)


def check(cond, what):
    if not cond:
        print(f"FAIL: {what}")
        sys.exit(1)


def registry_codes(text):
    return [l[len("GRAPHLINT_RULE("):].split(",")[0] for l in text.splitlines() if l.startswith("GRAPHLINT_RULE(")]


def generate(root):
    before = (root / "src" / "rules" / "Rules.def").read_text()
    config_before = (root / "docs" / "configuration.md").read_text()

    r = run(root, "GL143", "wide-reduction", "a reduction whose axis is wider than one block", "--probe-op", "ReduceSum")
    check(r.returncode == 0, f"generation failed: {r.stderr}")
    cpp = root / "src" / "rules" / "WideReduction.cpp"
    page = root / "docs" / "rules" / "GL143-wide-reduction.md"
    fixture = root / "tests" / "fixtures" / "rules" / "GL143-wide-reduction.onnxtxt"
    for f in (cpp, page, fixture):
        check(f.exists(), f"{f.name} not created")
    lines = page.read_text().splitlines()
    check(lines[0] == "# GL143 wide-reduction" and lines[2] == "Default severity: warning",
          f"page heading/severity: {lines[:3]}")
    check("# expect: GL143" in fixture.read_text() and "ReduceSum(x)" in fixture.read_text(), "fixture marker")
    src = cpp.read_text()
    check(src.rstrip().endswith("GRAPHLINT_DEFINE_RULE(WideReduction)\n\n}  // namespace graphlint"),
          "the rule file does not end with its registration line")
    check("Options" not in src and "Options" not in page.read_text(), "options written without --option")

    reg = (root / "src" / "rules" / "Rules.def").read_text()
    order = registry_codes(reg)
    check(order == sorted(order) and order.index("GL143") == order.index("GL142") + 1,
          f"GL143 not listed in code order after GL142: {order}")
    check(reg.replace("GRAPHLINT_RULE(GL143, WideReduction)\n", "", 1) == before,
          "Rules.def changed beyond the one line")
    check("\n  WideReduction.cpp" in (root / "src" / "rules" / "CMakeLists.txt").read_text(),
          "the rules layer's source list does not name WideReduction.cpp")
    check((root / "docs" / "configuration.md").read_text() == config_before,
          "configuration.md changed for a rule without options")

    r = run(root, "GL144", "sparse-gather", "a gather whose indices are mostly padding", *OPTION_ARGS)
    check(r.returncode == 0, f"generation with options failed: {r.stderr}")
    src = (root / "src" / "rules" / "SparseGather.cpp").read_text()
    for want in ("struct SparseGatherOptions {\n  double minRank = 2;\n  double share = 0.5;\n};",
                 '{"min-rank", &SparseGatherOptions::minRank, 1, 8, "lowest rank reported"}',
                 "ruleOptionInfos<kOptions>", "const SparseGatherOptions &o = ruleOptions<SparseGather>(ctx);"):
        check(want in src, f"SparseGather.cpp lacks {want!r}")
    doc = (root / "docs" / "rules" / "GL144-sparse-gather.md").read_text()
    check("| `min-rank` | **2** | 1 to 8 | lowest rank reported |" in doc, "page's Options table")
    conf = (root / "docs" / "configuration.md").read_text()
    rows = [l for l in conf.splitlines() if l.startswith("| GL")]
    check("| GL144 sparse-gather | `share` | 0.5 | 0 - 1 | share of the inputs that must be sparse |" in rows,
          f"configuration.md rows: {rows}")
    check([r[2:7] for r in rows] == sorted(r[2:7] for r in rows), "configuration.md rows not in code order")
    check(len(conf.splitlines()) == len(config_before.splitlines()) + 2, "configuration.md: not exactly two rows added")

    for args, why in ((("GL141", "other-name", "x"), "a used code"),
                      (("GL145", "tensor-core-alignment", "x"), "a used name"),
                      (("GL14", "short-code", "x"), "a malformed code"),
                      (("GL145", "Bad_Name", "x"), "a malformed name"),
                      (("GL145", "bad-option", "x", "--option", "k", "9", "0", "1", "help"), "a default out of range")):
        snapshot = (root / "src" / "rules" / "Rules.def").read_text()
        r = run(root, *args)
        check(r.returncode == 2 and r.stderr.startswith("new_rule.py: ") and r.stderr.count("\n") == 1,
              f"{why} not refused in one line: rc {r.returncode} {r.stderr!r}")
        check((root / "src" / "rules" / "Rules.def").read_text() == snapshot, f"{why}: registry written")
        check(not list((root / "src" / "rules").glob("Bad*.cpp")), f"{why}: a rule file written")


def compile_flags(build):
    """The build's command for src/rules/Registry.cpp, unoptimised, without its source and output."""
    for e in json.loads((build / "compile_commands.json").read_text()):
        if e["file"].endswith("src/rules/Registry.cpp"):
            words = shlex.split(e["command"])
            out, skip = [], False
            for w in words:
                if skip:
                    skip = False
                elif w in ("-o", "-c"):
                    skip = True
                elif not w.startswith("-O"):
                    out.append(w)
            return out + ["-O0"], e["directory"]
    check(False, "compile_commands.json has no src/rules/Registry.cpp")


def build_and_lint(root, build, tmp):
    flags, cwd = compile_flags(build)
    objects = []
    for src in ("Registry.cpp", "WideReduction.cpp", "SparseGather.cpp"):
        obj = tmp / (src + ".o")
        c = subprocess.run(flags + ["-o", str(obj), "-c", str(root / "src" / "rules" / src)], cwd=cwd,
                           capture_output=True, text=True)
        check(c.returncode == 0, f"{src} does not compile:\n{c.stderr[:3000]}")
        objects.append(str(obj))
    commands = subprocess.run(["ninja", "-C", str(build), "-t", "commands", "tools/graphlint"],
                              capture_output=True, text=True, check=True).stdout.splitlines()
    # Ninja writes the link as `: && c++ ... -o tools/graphlint ... && :`.
    link = shlex.split(next(part for part in commands[-1].split("&&") if " -o " in part))
    at = link.index("-o")
    exe = tmp / "graphlint"
    # The generated registry and rules come first, so the build's own
    # Registry.o is never pulled from the archive.
    link = link[:at] + ["-o", str(exe)] + objects + link[at + 2:]
    c = subprocess.run(link, cwd=str(build), capture_output=True, text=True)
    check(c.returncode == 0, f"link failed:\n{c.stderr[:3000]}")

    import onnx.parser  # python3-onnx, as the corpus test uses
    models = tmp / "models"
    models.mkdir()
    for code, name in (("GL143", "wide-reduction"), ("GL144", "sparse-gather")):
        text = (root / "tests" / "fixtures" / "rules" / f"{code}-{name}.onnxtxt").read_text()
        model = models / f"{code}.onnx"
        onnx.save(onnx.parser.parse_model(text), str(model))
        node_lines = [l for l in text.splitlines() if " = " in l.split("#")[0]]
        want = [i for i, l in enumerate(node_lines) if f"# expect: {code}" in l]
        r = subprocess.run([str(exe), "--format", "json", "--select", code, str(model)], capture_output=True, text=True)
        check(r.returncode in (0, 1), f"{code}: graphlint failed: {r.stderr}")
        diags = [d for f in json.loads(r.stdout)["files"] for d in f["diagnostics"] if d["code"] == code]
        check([d["location"]["node_index"] for d in diags] == want, f"{code}: findings {diags}, expected nodes {want}")

    dump = subprocess.run([str(exe), "config", "--dump", str(models / "GL144.onnx")], capture_output=True, text=True)
    check("  GL144:  # sparse-gather\n    severity: warning\n    min-rank: 2  # lowest rank reported\n"
          "    share: 0.5  # share of the inputs that must be sparse\n" in dump.stdout, f"config --dump:\n{dump.stdout}")
    (models / ".graphlint.yaml").write_text("rules:\n  GL144:\n    min-rank: 3\n")
    r = subprocess.run([str(exe), "--format", "json", "--select", "GL144", str(models / "GL144.onnx")],
                       capture_output=True, text=True)
    messages = [d["message"] for f in json.loads(r.stdout)["files"] for d in f["diagnostics"]]
    check(len(messages) == 1 and messages[0].endswith("(min-rank 3, share 0.5)"),
          f"the config's value did not reach the options struct: {messages}")
    (models / ".graphlint.yaml").write_text("rules:\n  GL144:\n    min-rank: 9\n")
    r = subprocess.run([str(exe), str(models / "GL144.onnx")], capture_output=True, text=True)
    check(r.returncode == 2 and "option 'min-rank' of GL144 expects a number from 1 to 8, got '9'" in r.stderr,
          f"out-of-range option: rc {r.returncode} {r.stderr!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", help="a configured Ninja build directory of this checkout")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        root = tmp / "checkout"
        for d in ("src/rules", "docs/rules", "tests/fixtures/rules"):
            shutil.copytree(ROOT / d, root / d)
        shutil.copy(ROOT / "docs" / "configuration.md", root / "docs" / "configuration.md")
        generate(root)
        build = pathlib.Path(a.build) if a.build else None
        if build and (build / "build.ninja").exists() and shutil.which("ninja"):
            build_and_lint(root, build, tmp)
        else:
            cxx = shutil.which(os.environ.get("CXX", "c++"))
            check(cxx, "no C++ compiler")
            for src in ("WideReduction.cpp", "SparseGather.cpp"):
                # Without a build tree there are no per-layer include roots
                # (docs/ARCHITECTURE.md, Structure): the whole include/ is seen.
                roots = [f"-I{ROOT / 'include'}"]
                c = subprocess.run([cxx, "-std=c++17", "-fsyntax-only", *roots,
                                    "-I/usr/lib/llvm-14/include", str(root / "src" / "rules" / src)], capture_output=True, text=True)
                check(c.returncode == 0, f"generated rule does not compile:\n{c.stderr[:2000]}")
            print("note: no Ninja build given (--build), the generated rules were only syntax-checked")
    print("new_rule.py: ok")


if __name__ == "__main__":
    main()
