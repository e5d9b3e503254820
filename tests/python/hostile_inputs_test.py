#!/usr/bin/env python3
"""The Python API and the graphlint-models hook against the round-2 hostile
inputs (issue 40: N10, N12), without torch: the entry points fail or misbehave
before anything would be captured.

  GRAPHLINT_BINARY=build/tools/graphlint PYTHONPATH=python \
      python3 tests/python/hostile_inputs_test.py --model tests/fixtures/robustness/control_flow.onnx
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

MODEL = None


class ApiMessages(unittest.TestCase):
    def test_usage_errors_carry_the_binarys_message_not_the_help_hint(self):
        import graphlint
        cases = [({"precision": "fp8"}, "--precision must be one of"),
                 ({"target": "B9000"}, "unknown target 'B9000'"),
                 ({"select": ["GL999"]}, "unknown rule 'GL999'"),
                 ({"dims": {"batch": -1}}, "--dim batch")]
        for kwargs, want in cases:
            with self.subTest(**{k: str(v) for k, v in kwargs.items()}):
                with self.assertRaises(graphlint.GraphlintError) as cm:
                    graphlint.check(MODEL, **kwargs)
                self.assertIn(want, str(cm.exception))
                self.assertNotIn("--help", str(cm.exception))

    def test_a_path_starting_with_a_dash_is_a_file_not_an_option(self):
        import graphlint
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copy(MODEL, os.path.join(tmp, "-model.onnx"))
            cwd = os.getcwd()
            os.chdir(tmp)
            try:
                report = graphlint.check("-model.onnx")
            finally:
                os.chdir(cwd)
            self.assertIn(report.exit_code, (0, 1))
            # A missing one is the binary's own "no such file", naming it.
            with self.assertRaises(graphlint.GraphlintError) as cm:
                graphlint.check(os.path.join(tmp, "-missing.onnx"))
            self.assertIn("-missing.onnx", str(cm.exception))


def make_repo(root, module_head, pyproject='[tool.graphlint]\nmodels = ["pkg.models:build"]\n'):
    os.makedirs(os.path.join(root, "pkg"))
    open(os.path.join(root, "pkg", "__init__.py"), "w").close()
    with open(os.path.join(root, "pkg", "models.py"), "w") as f:
        f.write(textwrap.dedent(module_head) + "\ndef build():\n    raise ValueError('no model here')\n")
    with open(os.path.join(root, "pyproject.toml"), "w") as f:
        f.write(pyproject)


def hook(root, *args, timeout=60):
    env = dict(os.environ, GRAPHLINT_MODELS_TIMEOUT="3")
    start = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "graphlint.precommit", *args], cwd=root, env=env,
                       capture_output=True, text=True, timeout=timeout)
    return p, time.monotonic() - start


class PreCommitHook(unittest.TestCase):
    def run_case(self, module_head, want, pyproject=None, max_seconds=30):
        with tempfile.TemporaryDirectory() as tmp:
            make_repo(tmp, module_head, *([pyproject] if pyproject else []))
            p, seconds = hook(tmp, "pkg/models.py")
        lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertTrue(lines[0].startswith("graphlint-models: error: "), lines[0])
        self.assertIn(want, lines[0])
        self.assertNotIn("Traceback", p.stderr + p.stdout)
        self.assertLess(seconds, max_seconds)

    def test_a_module_that_prints_at_import_reaches_its_own_error(self):
        # The deps child's stdout was parsed as JSON: JSONDecodeError traceback.
        self.run_case('print("loading models...")', "pkg.models:build: ValueError: no model here")

    def test_sys_exit_at_import_is_one_line(self):
        self.run_case("import sys; sys.exit(0)", "exited (sys.exit(0))")

    def test_a_module_that_sleeps_at_import_times_out(self):
        self.run_case("import time; time.sleep(3600)", "did not finish within 3 s", max_seconds=20)

    def test_a_non_daemon_thread_does_not_hold_the_hook(self):
        self.run_case("import threading, time\nthreading.Thread(target=lambda: time.sleep(3600)).start()",
                      "pkg.models:build: ValueError: no model here", max_seconds=20)

    def test_tool_tables_of_the_wrong_type_are_one_line(self):
        self.run_case("", "[tool.graphlint] must be a table, not int", pyproject="[tool]\ngraphlint = 5\n")
        self.run_case("", "[tool] must be a table, not str", pyproject='tool = "x"\n')


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    a, rest = ap.parse_known_args()
    MODEL = os.path.abspath(a.model)
    # The hook's children run in the test repositories: the package path must not be relative.
    os.environ["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in
                                               os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)
    unittest.main(argv=[sys.argv[0], *rest])
