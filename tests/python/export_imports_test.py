#!/usr/bin/env python3
"""The exporter package's import structure (issue 39), read from the source
without importing it (no torch needed): every import of a sibling module in
graphlint.export is a top-level relative import, the imports between the
modules form no circle, no module loads a file by path, and the package
itself never edits sys.path except to put the user's own code on it."""

import ast
import os
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGE = os.path.join(ROOT, "python", "graphlint", "export")
# The sys.path edits the package keeps, each putting user code on the path
# (docs/testing.md, "Python imports"): cli.py's FILE folder and --model's
# working directory.
USER_PATH_EDITS = {"cli.py": 2}


def modules():
    return {f[:-3]: os.path.join(PACKAGE, f) for f in sorted(os.listdir(PACKAGE)) if f.endswith(".py")}


def sibling_imports(tree, names):
    """(module imported, at top level?) for each import of a package module."""
    top = set(id(n) for n in tree.body)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            targets = [node.module] if node.module else [a.name for a in node.names]
            out += [(t, id(node) in top) for t in targets if t in names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in names:
            out.append((node.module, id(node) in top))   # an absolute `from fx_x import`: the old layout
        elif isinstance(node, ast.Import):
            out += [(a.name, id(node) in top) for a in node.names if a.name in names]
    return out


class ExportImports(unittest.TestCase):
    def setUp(self):
        self.files = modules()
        self.trees = {}
        for name, path in self.files.items():
            with open(path) as f:
                self.trees[name] = ast.parse(f.read(), path)

    def test_siblings_are_imported_at_the_top_and_relatively(self):
        for name, tree in self.trees.items():
            for target, at_top in sibling_imports(tree, self.files):
                self.assertTrue(at_top, f"{name}.py imports {target} inside a function")

    def test_no_import_circle(self):
        graph = {n: {t for t, _ in sibling_imports(tree, self.files)} for n, tree in self.trees.items()}
        state = {}

        def visit(n, path):
            if state.get(n) == "done":
                return
            self.assertNotEqual(state.get(n), "open", "import circle: " + " -> ".join(path + [n]))
            state[n] = "open"
            for m in sorted(graph[n]):
                visit(m, path + [n])
            state[n] = "done"

        for n in sorted(graph):
            visit(n, [])

    def test_no_file_loaded_by_path_and_no_path_edits(self):
        for name, path in self.files.items():
            with open(path) as f:
                text = f.read()
            self.assertNotIn("SourceFileLoader", text, name)
            self.assertEqual(text.count("sys.path"), USER_PATH_EDITS.get(name + ".py", 0), name)


if __name__ == "__main__":
    sys.exit(0 if unittest.main(exit=False).result.wasSuccessful() else 1)
