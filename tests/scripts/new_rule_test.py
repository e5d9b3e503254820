#!/usr/bin/env python3
"""scripts/new_rule.py in a throwaway copy of the rule sources: it creates the
rule file, the page, the fixture, the registry declaration and sorted entry
and the CMake line; the generated rule compiles with only the header roots the
rules layer sees; a code or name already used, or a malformed one, is refused
with exit 2 and nothing written. Takes a few seconds (one -fsyntax-only compile)."""
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "new_rule.py"


def run(root, *args):
    return subprocess.run([sys.executable, str(SCRIPT), *args, "--root", str(root)],
                          capture_output=True, text=True)


def check(cond, what):
    if not cond:
        print(f"FAIL: {what}")
        sys.exit(1)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        for d in ("rules", "docs/rules", "tests/fixtures/rules"):
            shutil.copytree(ROOT / d, root / d)
        before = (root / "rules" / "Registry.cpp").read_text()

        r = run(root, "GL143", "wide-reduction", "a reduction whose axis is wider than one block", "--probe-op", "ReduceSum")
        check(r.returncode == 0, f"generation failed: {r.stderr}")
        cpp = root / "rules" / "WideReduction.cpp"
        page = root / "docs" / "rules" / "GL143-wide-reduction.md"
        fixture = root / "tests" / "fixtures" / "rules" / "GL143-wide-reduction.onnxtxt"
        for f in (cpp, page, fixture):
            check(f.exists(), f"{f.name} not created")
        lines = page.read_text().splitlines()
        check(lines[0] == "# GL143 wide-reduction" and lines[2] == "Default severity: warning",
              f"page heading/severity: {lines[:3]}")
        check("# expect: GL143" in fixture.read_text() and "ReduceSum(x)" in fixture.read_text(), "fixture marker")

        reg = (root / "rules" / "Registry.cpp").read_text()
        check("const Rule *makeWideReductionRule();\n" in reg, "declaration missing")
        order = [l.split("//")[1].strip() for l in reg.splitlines() if l.strip().startswith("make") and "//" in l]
        check(order == sorted(order) and "GL143" in order, f"list not sorted by code: {order}")
        check(order.index("GL143") == order.index("GL142") + 1, "GL143 not after GL142")
        check(reg.replace("const Rule *makeWideReductionRule();\n", "").replace(
            [l for l in reg.splitlines(True) if "makeWideReductionRule()," in l][0], "") == before,
            "the registry changed beyond the two lines")
        cmake = (root / "rules" / "CMakeLists.txt").read_text()
        check("  AllocatorFragmentation.cpp\n  WideReduction.cpp)" in cmake, "CMake source missing")

        cxx = shutil.which(os.environ.get("CXX", "c++"))
        if cxx:
            # Only the header roots the rules layer sees (docs/ARCHITECTURE.md, Structure).
            roots = [f"-I{ROOT / 'include' / layer}" for layer in ("ir", "base", "analyses", "rules")]
            c = subprocess.run([cxx, "-std=c++17", "-fsyntax-only", *roots,
                                "-I/usr/lib/llvm-14/include", str(cpp)], capture_output=True, text=True)
            check(c.returncode == 0, f"generated rule does not compile:\n{c.stderr[:2000]}")
        else:
            print("note: no C++ compiler, compile check skipped")

        for args, why in ((("GL141", "other-name", "x"), "a used code"),
                          (("GL144", "tensor-core-alignment", "x"), "a used name"),
                          (("GL14", "short-code", "x"), "a malformed code"),
                          (("GL145", "Bad_Name", "x"), "a malformed name")):
            snapshot = (root / "rules" / "Registry.cpp").read_text()
            r = run(root, *args)
            check(r.returncode == 2 and r.stderr.startswith("new_rule.py: ") and r.stderr.count("\n") == 1,
                  f"{why} not refused in one line: rc {r.returncode} {r.stderr!r}")
            check((root / "rules" / "Registry.cpp").read_text() == snapshot, f"{why}: registry written")
    print("new_rule.py: ok")


if __name__ == "__main__":
    main()
