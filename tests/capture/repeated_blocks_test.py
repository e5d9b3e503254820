"""graphlint-export's repeated-block capture (docs/fx-format.md, "Repeated
blocks"), on the torch line of the interpreter running this file (CTest:
FxRepeatedBlocks.TORCH113 with /usr/bin/python3, .TORCH2 with the torch 2.x
venv). Each model is exported twice, --repeated-blocks auto and off, and
the two files must be byte-identical, with graphlint's JSON report (findings,
memory, cost) on them identical too; heterogeneous blocks must fall back to
the full trace with a note saying why. The exporter runs in this process
(its `main`, as the command line calls it) to pay torch's import once.

    python tests/capture/repeated_blocks_test.py [-k pattern]
"""
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest

import torch

from graphlint.export import cli as EXPORT   # the package, from PYTHONPATH (tests/CMakeLists.txt)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "fx")
TORCH2 = int(torch.__version__.split(".")[0]) >= 2
GRAPHLINT = os.environ.get("GRAPHLINT_CLI", os.path.join(ROOT, "build", "tools", "graphlint"))
try:
    import transformers  # noqa: F401
    HAVE_TRANSFORMERS = True
except ImportError:
    HAVE_TRANSFORMERS = False


LM = ["--input", "input_ids:int64[batch,seq]", "--input", "labels:int64[batch,seq]", "--dim", "batch=2",
      "--dim", "seq=16"]


def export(args, mode):
    """Runs graphlint-export's main in FIXTURES; returns (path, file bytes, stderr)."""
    out = os.path.join(tempfile.mkdtemp(prefix=f"repeated-{mode}-"), "out.fx.json")
    err = io.StringIO()
    cwd = os.getcwd()
    os.chdir(FIXTURES)
    try:
        with contextlib.redirect_stderr(err):
            rc = EXPORT.main([*args, "--repeated-blocks", mode, "-o", out])
    except SystemExit as e:
        rc = e.code
    finally:
        os.chdir(cwd)
    if rc != 0:
        raise AssertionError(f"graphlint-export {' '.join(args)}: exit {rc}\n{err.getvalue()}")
    with open(out, "rb") as f:
        return out, f.read(), err.getvalue()


def report(path):
    """graphlint's JSON report (findings, memory, cost) on one file, run in its folder."""
    p = subprocess.run([GRAPHLINT, "--no-color", "--format", "json", "--exit-zero", os.path.basename(path)],
                       cwd=os.path.dirname(path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=300)
    if p.returncode != 0:
        raise AssertionError(f"graphlint {path}: exit {p.returncode}\n{p.stderr}")
    return json.loads(p.stdout)


def first_difference(a, b):
    """Where two exports differ: the first top-level key, or the first node
    and its differing fields (a failure then says what differed)."""
    try:
        da, db = json.loads(a), json.loads(b)
    except ValueError:
        return "not JSON"
    for i, (x, y) in enumerate(zip(da.get("nodes", []), db.get("nodes", []))):
        if x != y:
            return "node %d (%s): %s" % (i, x.get("name"), {k: (x.get(k), y.get(k)) for k in sorted(set(x) | set(y))
                                                          if x.get(k) != y.get(k)})
    keys = [k for k in sorted(set(da) | set(db)) if da.get(k) != db.get(k)]
    return "keys %s" % keys if keys else "the bytes only"


class RepeatedBlocks(unittest.TestCase):
    def same_as_full_trace(self, args, repeated, with_report=False, cuts=("2 and 3",)):
        path, fast, err = export(args, "auto")
        self.assertTrue(any(f"repeated blocks: {repeated}, from traces cut to {c} blocks" in err for c in cuts), err)
        full_path, full, full_err = export(args, "off")
        self.assertNotIn("repeated blocks", full_err)
        self.assertEqual(len(fast), len(full))
        self.assertTrue(fast == full, f"{args}: the repeated-block file differs from the full trace: "
                        f"{first_difference(fast, full)}")
        doc = json.loads(fast)
        if with_report and os.access(GRAPHLINT, os.X_OK):
            a, b = report(path), report(full_path)
            self.assertTrue({"memory", "compute", "diagnostics"} <= set(a["files"][0]), sorted(a["files"][0]))
            self.assertTrue(a["files"][0]["diagnostics"], "the report has findings to compare")
            self.assertEqual(a, b)
        return doc

    def falls_back(self, args, why, path="blocks"):
        _, fast, err = export(args, "auto")
        self.assertIn(f"graphlint-export: note: repeated blocks: {path} (5 blocks) traced in full: ", err)
        self.assertIn(why, err)
        _, full, _ = export(args, "off")
        self.assertTrue(fast == full, f"{args}: the file traced in full differs between two exports: "
                        f"{first_difference(fast, full)}")

    def test_gpt_1_3b_cut_to_five_layers_forward(self):
        doc = self.same_as_full_trace(["--model", "repeated:gpt"], "blocks x5")
        self.assertEqual(doc["mode"], "forward")

    def test_gpt_1_3b_cut_to_five_layers_train(self):
        doc = self.same_as_full_trace(["--model", "repeated:gpt", "--train"], "blocks x5", with_report=True)
        repeated = sys.modules["repeated"]   # the model module the export above imported (--model)
        self.assertEqual(doc["model"]["parameters"], sum(p.numel() for p in repeated.gpt().parameters()))
        names = [p["name"] for p in doc["params"]]
        self.assertIn("tok.weight", names)
        self.assertNotIn("head.weight", names, "the tied LM head is the embedding's parameter")
        self.assertEqual([n for n in names if n.startswith("blocks.4.")][:2],
                         ["blocks.4.ln1.weight", "blocks.4.ln1.bias"])
        modules = {n.get("module", "") for n in doc["nodes"]}
        self.assertTrue({f"blocks.{i}.attn" for i in range(5)} <= modules, sorted(modules))
        dropouts = [n for n in doc["nodes"] if n["op"] in ("aten::native_dropout", "aten::bernoulli_")]
        self.assertEqual(len(dropouts), 5 * 3 + 1, "three dropouts a layer and the embedding's")

    def test_blocks_that_differ_in_an_attribute_are_traced_in_full(self):
        self.falls_back(["--model", "repeated:alternating", "--train"], "blocks.1.window is 4, blocks.0.window is None")

    def test_index_dependent_code_is_traced_in_full(self):
        self.falls_back(["--model", "repeated:indexed", "--train"],
                        "the 3-block trace is not the 2-block trace plus one block")

    def test_help_names_the_flag(self):
        text = EXPORT.build_parser().format_help()
        self.assertIn("--repeated-blocks {auto,off}", text)

    @unittest.skipUnless(TORCH2 and HAVE_TRANSFORMERS, "transformers on torch 2.x")
    def test_transformers_llama_small_train(self):
        doc = self.same_as_full_trace(["--model", "repeated:llama_small", *LM, "--train"], "model.layers x4",
                                      with_report=True)
        self.assertEqual(doc["model"]["parameters"], 116_139_008)

    @unittest.skipUnless(TORCH2 and HAVE_TRANSFORMERS, "transformers on torch 2.x")
    def test_transformers_gpt2_forward_and_train(self):
        # GPT-2's loop keeps the previous block's `outputs` tuple (held until
        # the next block returns) from the second block on: the first block
        # differs, so the cut to 3 is checked against the cut to 4.
        self.same_as_full_trace(["--model", "repeated:gpt2", *LM], "transformer.h x5", cuts=("2 and 3", "3 and 4"))
        self.same_as_full_trace(["--model", "repeated:gpt2", *LM, "--train"], "transformer.h x5",
                                cuts=("2 and 3", "3 and 4"))

    @unittest.skipUnless(TORCH2 and HAVE_TRANSFORMERS, "transformers on torch 2.x")
    def test_transformers_bert_train(self):
        self.same_as_full_trace(["--model", "repeated:bert", *LM, "--train"], "bert.encoder.layer x5")

    @unittest.skipUnless(TORCH2 and HAVE_TRANSFORMERS, "transformers on torch 2.x")
    def test_transformers_mixed_sliding_window_layers_are_traced_in_full(self):
        self.falls_back(["--model", "repeated:qwen2_mixed", *LM],
                        "model.layers.2.self_attn.layer_type is 'sliding_attention', "
                        "model.layers.0.self_attn.layer_type is 'full_attention'", path="model.layers")

    @unittest.skipUnless(TORCH2, "torch.export needs torch >= 2.1")
    def test_export_capture_keeps_tied_weights_one_parameter(self):
        _, data, _ = export(["--model", "repeated:gpt", "--capture", "export"], "auto")
        doc = json.loads(data)
        repeated = sys.modules["repeated"]   # the model module the export above imported (--model)
        m = repeated.gpt()
        self.assertIs(m.head.weight, m.tok.weight)
        self.assertEqual(doc["model"]["parameters"], sum(p.numel() for p in m.parameters()))
        counted = 0
        for p in doc["params"]:
            if p["kind"] == "parameter":
                size = 1
                for d in p["shape"]:
                    size *= d
                counted += size
        self.assertEqual(counted, doc["model"]["parameters"])
        names = [p["name"] for p in doc["params"]]
        self.assertEqual(names.count("tok.weight"), 1)
        self.assertNotIn("head.weight", names)
        readers = [n["op"] for n in doc["nodes"] if "tok.weight" in n["inputs"]]
        self.assertIn("aten::embedding", readers)
        self.assertEqual(len(readers), 2, f"the embedding and the LM head read the one parameter: {readers}")


if __name__ == "__main__":
    unittest.main()
