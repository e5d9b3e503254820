"""graphlint-export's capture, on the torch line of the interpreter running
this file (CTest runs it with /usr/bin/python3 = torch 1.13 and with the
torch 2.x venvs; tests/CMakeLists.txt). Every export is a separate process,
as a user runs it; the assertions read the JSON it writes (docs/fx-format.md).

    python tests/capture/capture_test.py [-k pattern]
"""
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The exporter package (python/graphlint/export), imported through PYTHONPATH or the install.
EXPORTER = ["-m", "graphlint.export"]
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "fx")
TORCH2 = int(torch.__version__.split(".")[0]) >= 2
GRAPHLINT = os.environ.get("GRAPHLINT_CLI", os.path.join(ROOT, "build", "tools", "graphlint"))


def export(args, cwd=None, expect_rc=0):
    """Runs graphlint-export in its own process; returns (doc, stderr, seconds)."""
    out = os.path.join(tempfile.mkdtemp(prefix="capture-test-"), "out.fx.json")
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    start = time.perf_counter()
    p = subprocess.run([sys.executable, *EXPORTER, *args, "-o", out], cwd=cwd or FIXTURES, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
    took = time.perf_counter() - start
    if p.returncode != expect_rc:
        raise AssertionError(f"graphlint-export {' '.join(args)}: exit {p.returncode}, expected {expect_rc}\n{p.stderr}")
    doc = None
    if expect_rc == 0:
        with open(out) as f:
            doc = json.load(f)
    return doc, p.stderr, took


def nodes_at(doc, line, file_suffix):
    return [n for n in doc["nodes"] if n.get("source", {}).get("line") == line
            and n["source"]["file"].endswith(file_suffix)]


def value_producers(doc):
    out = {}
    for n in doc["nodes"]:
        for i, o in enumerate(n["outputs"]):
            out[o["name"]] = (n, i)
    return out


def model_file(prefix, name, source):
    """A model source `name` in a fresh folder of its own (no repository)."""
    path = os.path.join(tempfile.mkdtemp(prefix=prefix), name)
    with open(path, "w") as f:
        f.write(source)
    return path


class Capture(unittest.TestCase):
    def test_fixture_hazards_host_syncs_and_unbacked_sizes(self):
        doc, err, _ = export(["hazards.py", "--device", "cuda"])
        self.assertEqual(doc["format"], "graphlint-fx")
        self.assertEqual(doc["version"], 2)
        self.assertEqual(doc["producer"]["capture"], "fake")
        self.assertEqual(doc["mode"], "forward")
        self.assertEqual(doc["module_mode"], "eval")
        syncs = {n["source"]["line"] for n in doc["nodes"] if n.get("host_sync")}
        self.assertTrue({26, 27, 28, 29, 30} <= syncs, syncs)   # item, nonzero, masked_select, tolist, if
        nonzero = next(n for n in doc["nodes"] if n["op"] == "aten::nonzero")
        sym = nonzero["outputs"][0]["shape"][0]
        self.assertIsInstance(sym, str)
        self.assertEqual(nonzero["unbacked"], [sym])
        self.assertEqual(doc["symbols"][sym]["kind"], "unbacked")
        self.assertEqual(doc["symbols"][sym]["max"], 64, "nonzero of a [4, 16] tensor: at most 64 rows")
        self.assertEqual(nonzero["outputs"][0]["shape"][1], 2)
        masked = next(n for n in doc["nodes"] if n["op"] == "aten::masked_select")
        self.assertEqual(doc["symbols"][masked["outputs"][0]["shape"][0]]["kind"], "unbacked")
        item = next(n for n in doc["nodes"] if n["op"] == "aten::_local_scalar_dense")
        self.assertTrue(item["host_sync"])
        self.assertEqual(item["source"]["line"], 26)
        if TORCH2:   # torch's unbacked float
            self.assertIn(item["outputs"][0]["value"], doc["symbols"])
        else:        # no value in a 1.13 fake capture: assumed, and said so
            self.assertEqual(item["assumed"], 1.0)
        kinds = [(d["kind"], d.get("source", {}).get("line")) for d in doc["diagnostics"]]
        self.assertIn(("host-value-assumed", 30), kinds, "the `if` took an assumed branch")

    def test_device_cuda_is_recorded_without_a_gpu(self):
        doc, _, _ = export(["hazards.py", "--device", "cuda"])
        self.assertEqual(doc["simulated_device"], "cuda:0")
        self.assertTrue(all(p["device"] == "cuda:0" for p in doc["params"]))
        self.assertEqual(doc["inputs"][0]["device"], "cuda:0")
        host = nodes_at(doc, 24, "hazards.py")[0]          # y.cpu()
        self.assertEqual(host["outputs"][0]["device"], "cpu")
        again = nodes_at(doc, 25, "hazards.py")[0]         # host.cuda()
        self.assertEqual(again["outputs"][0]["device"], "cuda:0")
        doc, _, _ = export(["hazards.py"])                 # the model's own .cuda() without --device
        self.assertEqual(nodes_at(doc, 25, "hazards.py")[0]["outputs"][0]["device"], "cuda:0")
        self.assertEqual(doc["inputs"][0]["device"], "cpu")

    def test_no_real_compute_for_a_model_no_machine_here_can_run(self):
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        doc, _, took = export(["huge.py", "--train"])
        rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        self.assertEqual(doc["model"]["parameters"], 2 * (65536 * 65536 + 65536))
        self.assertEqual(sum(_numel(p["shape"]) for p in doc["params"] if p["kind"] == "parameter"),
                         2 * (65536 * 65536 + 65536))
        # Real: 34 GB of weights and ~2 TFLOP per layer. Fake: the process's
        # own imports (~300 MB) and seconds (the bound allows a loaded CI box).
        self.assertLess(max(rss_mb, before / 1024), 1500, f"peak RSS {rss_mb:.0f} MB")
        self.assertLess(took, 120, f"{took:.1f} s")
        self.assertTrue(any(n["op"] == "aten::mm" and n["phase"] == "backward" for n in doc["nodes"]))

    def test_gradient_sums_are_marked(self):
        # The three selects of one projection hand it three gradients: the
        # engine sums them between applies (two adds, marked `accumulates`);
        # the forward's own adds and the backward's ops are not marked.
        doc, _, _ = export(["packed_projection.py", "--train"])
        marked = [n for n in doc["nodes"] if n.get("accumulates")]
        self.assertEqual([(n["op"], n["phase"]) for n in marked], [("aten::add", "backward")] * 2)
        produced = value_producers(doc)
        for n in marked:
            self.assertEqual(sorted(produced[i][0]["op"] for i in n["inputs"])[-1], "aten::select_backward")
        self.assertEqual(sum(1 for n in doc["nodes"] if n["op"] == "aten::add" and n["phase"] == "forward"), 2)

    def test_training_semantics_tied_buffers_frozen_dropout(self):
        doc, _, _ = export(["training.py", "--train"])
        self.assertEqual(doc["mode"], "train")
        self.assertEqual(doc["module_mode"], "train")
        names = {p["name"]: p for p in doc["params"]}
        self.assertIn("embed.weight", names)
        self.assertNotIn("head.weight", names, "tied: one parameter, under its first name")
        self.assertEqual(doc["model"]["parameters"], 100 * 32 + 32 * 32 + 32 + 64 + 32 * 32 + 32 + 32)
        self.assertEqual(sum(_numel(p["shape"]) for p in doc["params"] if p["kind"] == "parameter"),
                         doc["model"]["parameters"])
        for b in ("norm.running_mean", "norm.running_var", "norm.num_batches_tracked"):
            self.assertEqual(names[b]["kind"], "buffer")
            self.assertFalse(names[b]["requires_grad"])
        self.assertFalse(names["frozen.weight"]["requires_grad"])
        self.assertTrue(names["proj.weight"]["requires_grad"])
        no_grad = [d["message"] for d in doc.get("diagnostics", []) if d["kind"] == "no-gradient"]
        self.assertEqual(len(no_grad), 1, no_grad)
        self.assertIn("'unused_scale'", no_grad[0])
        self.assertTrue(doc["backward"]["traced"])
        # Dropout's mask is a forward value autograd saves for backward.
        producers = value_producers(doc)
        dropout_ops = {"aten::native_dropout", "aten::bernoulli_", "aten::div_", "aten::bernoulli"}
        saved_masks = [n for n in doc["nodes"] if n["phase"] == "forward" and n["op"] in dropout_ops
                       and any(n.get("saved", []))]
        self.assertTrue(saved_masks, "the dropout mask is saved for backward")
        # Gradients for the tied weight flow from both uses into one parameter.
        self.assertTrue(producers)
        # BatchNorm in train mode updates its running statistics.
        bn = [n for n in doc["nodes"] if "batch_norm" in n["op"] and n["phase"] == "forward"]
        self.assertTrue(bn)
        self.assertTrue(any("norm.running_mean" in n["inputs"] for n in bn))

    def test_forward_module_mode_is_recorded(self):
        doc, _, _ = export(["training.py", "--module-mode", "train"])
        self.assertEqual((doc["mode"], doc["module_mode"]), ("forward", "train"))
        self.assertTrue(any(n["op"] in ("aten::native_dropout", "aten::bernoulli_") for n in doc["nodes"]))
        doc, _, _ = export(["training.py"])
        self.assertEqual((doc["mode"], doc["module_mode"]), ("forward", "eval"))
        self.assertFalse(any(n["op"] in ("aten::native_dropout", "aten::bernoulli_") for n in doc["nodes"]))

    def test_symbolic_dims(self):
        doc, _, _ = export(["training.py", "--train", "--dynamic", "input0:0=batch", "--dynamic", "input0:1=seq"])
        self.assertEqual(doc["inputs"][0]["shape"], ["batch", "seq"])
        self.assertEqual(doc["symbols"]["batch"]["hint"], 3)
        self.assertEqual(doc["symbols"]["seq"]["hint"], 7)
        self.assertEqual(doc["symbols"]["batch"]["kind"], "input")
        dims = {d for n in doc["nodes"] for o in n["outputs"] for d in o.get("shape", []) if isinstance(d, str)}
        if TORCH2:   # torch's own expressions, renamed: the flattened linear input
            self.assertIn("batch*seq", dims)
            self.assertEqual(doc["producer"]["tracer"].split()[1], "symbolic")
        else:        # torch 1.13: size matching
            self.assertEqual(dims, {"batch", "seq"})
        # --dim on example inputs binds by size; one that binds nothing is reported.
        doc, err, _ = export(["parity.py", "--dim", "batch=5", "--dim", "nothing=11"])
        self.assertEqual(doc["inputs"][0]["shape"], ["batch", 3, 16, 16])
        unbound = [d["message"] for d in doc["diagnostics"] if d["kind"] == "dim-unbound"]
        self.assertEqual(len(unbound), 1)
        self.assertIn("--dim nothing=11", unbound[0])
        self.assertIn("input0 [5, 3, 16, 16]", unbound[0])
        self.assertIn("--dim nothing=11 binds no input dim", err)

    @unittest.skipUnless(TORCH2, "torch 2.x symbolic sizes (torch 1.13 matches sizes)")
    def test_batch_of_one_stays_a_symbol(self):
        # torch specialises sizes 0 and 1: the dim is traced at 2 and written at 1.
        doc, err, _ = export(["--model", "training:model", "--input", "input0:int64[batch,seq]",
                              "--dim", "batch=1", "--dim", "seq=9", "--train"])
        self.assertEqual(doc["inputs"][0]["shape"], ["batch", "seq"])
        self.assertEqual(doc["symbols"]["batch"]["hint"], 1)
        self.assertNotIn("specialised", err)
        dims = {d for n in doc["nodes"] for o in n["outputs"] for d in o.get("shape", []) if isinstance(d, str)}
        self.assertIn("batch*seq", dims)
        if not os.access(GRAPHLINT, os.X_OK):
            self.skipTest(f"{GRAPHLINT} not built")
        path = os.path.join(tempfile.mkdtemp(), "batch1.fx.json")
        with open(path, "w") as f:
            json.dump(doc, f)

        def ir(*dims):
            p = subprocess.run([GRAPHLINT, "inspect", "--print-ir", *dims, path], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            return p.stdout
        self.assertIn("%input0: i64[1,9]", ir())                  # the hint: the size asked for
        scaled = ir("-D", "batch=8")
        self.assertIn("%input0: i64[8,9]", scaled)
        self.assertIn("f32[72,32] = aten::addmm", scaled)          # the flattened [batch*seq, 32] linear

    @unittest.skipUnless(TORCH2, "torch 2.x symbolic sizes")
    def test_branch_on_a_batch_of_one_is_reported(self):
        doc, err, _ = export(["--model", "size_one:model", "--input", "input0:float32[batch,16]", "--dim", "batch=1"])
        self.assertEqual(doc["inputs"][0]["shape"], ["batch", 16])
        found = [d for d in doc["diagnostics"] if d["kind"] == "dim-traced-larger"]
        self.assertEqual(len(found), 1, doc.get("diagnostics"))
        self.assertEqual(found[0]["source"]["line"], 13)
        self.assertIn("batch != 1", found[0]["message"])
        self.assertIn("tests/fixtures/fx/size_one.py:13: dim batch was traced at size 2", err)
        doc, _, _ = export(["--model", "size_one:model", "--input", "input0:float32[batch,16]", "--dim", "batch=4"])
        self.assertNotIn("dim-traced-larger", [d["kind"] for d in doc.get("diagnostics", [])])

    def test_factory_and_input_shapes(self):
        doc, _, _ = export(["--model", "training:model", "--input", "input0:int64[batch,seq]",
                            "--dim", "batch=4", "--dim", "seq=9", "--train"])
        self.assertEqual(doc["inputs"][0]["shape"], ["batch", "seq"])
        self.assertEqual(doc["inputs"][0]["dtype"], "int64")
        self.assertEqual(doc["symbols"]["batch"]["hint"], 4)
        self.assertEqual(doc["model"]["parameters"], 5408)
        _, err, _ = export(["--model", "training:model", "--input", "input0:int64[batch]"], expect_rc=2)
        self.assertIn("dim 'batch' has no size", err)
        _, err, _ = export(["--model", "training:model", "--input", "ids:int65[4]"], expect_rc=2)
        self.assertIn("unknown dtype 'int65'", err)

    def test_source_lines_relative_to_the_repository_root(self):
        doc, _, _ = export([os.path.join(FIXTURES, "parity.py")], cwd=tempfile.gettempdir())
        conv = next(n for n in doc["nodes"] if n["op"] == "aten::convolution")
        self.assertEqual(conv["source"]["file"], "tests/fixtures/fx/parity.py")
        self.assertEqual(conv["source"]["line"], 14)
        self.assertEqual(doc["model"]["file"], "tests/fixtures/fx/parity.py")
        outside = tempfile.mkdtemp(prefix="capture-norepo-")   # no git repository: the model's folder
        shutil.copy(os.path.join(FIXTURES, "parity.py"), outside)
        doc, _, _ = export([os.path.join(outside, "parity.py")], cwd=FIXTURES)
        conv = next(n for n in doc["nodes"] if n["op"] == "aten::convolution")
        self.assertEqual(conv["source"]["file"], "parity.py")

    def test_backward_ops_point_at_the_forward_line(self):
        doc, _, _ = export(["parity.py", "--train"])
        conv_bwd = next(n for n in doc["nodes"] if n["op"] == "aten::convolution_backward")
        self.assertEqual(conv_bwd["phase"], "backward")
        self.assertEqual(conv_bwd["source"]["line"], 14)
        self.assertEqual([o.get("shape") for o in conv_bwd["outputs"]][1:], [[8, 3, 3, 3], [8]])

    def test_backward_that_cannot_be_traced_is_reported(self):
        doc, err, _ = export(["saved.py", "--train"])
        self.assertFalse(doc["backward"]["traced"])
        self.assertIn("modified by an inplace operation", doc["backward"]["error"])
        self.assertIn("backward-not-traced", [d["kind"] for d in doc["diagnostics"]])
        self.assertTrue(any(any(n.get("saved", [])) for n in doc["nodes"]), "forward keeps its saved marks")

    def test_reentrant_checkpoint(self):
        """torch.utils.checkpoint(use_reentrant=True) refuses autograd.grad:
        on torch 1.13 (its default, torchvision's DenseNet memory_efficient)
        the step is traced with .backward(), the recompute and the inner
        backward in the joint graph; on torch 2.x it stays the forward graph
        with a backward-not-traced diagnostic (docs/memory.md)."""
        path = model_file("capture-reentrant-", "reentrant.py", textwrap.dedent("""\
            import torch, torch.nn as nn
            from torch.utils.checkpoint import checkpoint
            class M(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.blocks = nn.ModuleList(nn.Linear(16, 16) for _ in range(2))
                def forward(self, x):
                    for b in self.blocks:
                        x = checkpoint(lambda t: torch.relu(b(t)), x, use_reentrant=True)
                    return x.sum()
            def model(): return M()
            def example_inputs(): return (torch.randn(4, 16, requires_grad=True),)
            """))
        doc, _, _ = export([os.path.basename(path), "--train"], cwd=os.path.dirname(path))
        kinds = [d["kind"] for d in doc["diagnostics"]]
        if TORCH2:
            self.assertFalse(doc["backward"]["traced"])
            self.assertIn("backward-not-traced", kinds)
            return
        self.assertTrue(doc["backward"]["traced"], doc["backward"])
        self.assertNotIn("backward-not-traced", kinds)
        backward = [n["op"] for n in doc["nodes"] if n.get("phase") == "backward"]
        self.assertEqual(backward.count("aten::addmm"), 2, "each block's forward recomputed in backward")
        self.assertIn("aten::threshold_backward", backward)

    def test_locals_of_a_checkpoint_recompute_are_held(self):
        """A checkpoint's recompute runs the block's Python frames again in
        backward, where the step's peak is: a local of a helper there lives
        until the helper returns (T5's relative position buckets), so the
        joint graph records it `held` like a forward graph's locals."""
        path = model_file("capture-recompute-", "recompute_locals.py", textwrap.dedent("""\
            import torch, torch.nn as nn
            from torch.utils.checkpoint import checkpoint
            def helper(x):
                big = x.exp()
                scale = big.sum(-1, keepdim=True)
                return x * scale
            class Block(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(16, 16)
                def forward(self, x):
                    return helper(self.fc(x))
            class M(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.blocks = nn.ModuleList(Block() for _ in range(2))
                def forward(self, x):
                    for b in self.blocks:
                        x = checkpoint(b, x, use_reentrant=False)
                    return x.sum()
            def model(): return M()
            def example_inputs(): return (torch.randn(4, 16),)
            """))
        doc, _, _ = export([os.path.basename(path), "--train"], cwd=os.path.dirname(path))
        self.assertTrue(doc["backward"]["traced"], doc["backward"])
        recomputed = [n for n in doc["nodes"] if n.get("phase") == "backward" and n["op"] == "aten::exp"]
        self.assertTrue(recomputed, "the blocks' forward is recomputed in backward")
        self.assertTrue(all(n.get("held") for n in recomputed), [n.get("held") for n in recomputed])

    def test_graph_breaks_become_nodes_or_diagnostics(self):
        doc, _, _ = export(["breaks.py"])
        syncs = {n["source"]["line"] for n in doc["nodes"] if n.get("host_sync")}
        self.assertTrue({16, 18, 23, 24} <= syncs, syncs)    # item, if, boolean mask, tolist
        const = [d for d in doc["diagnostics"] if d["kind"] == "constant-baked"]
        self.assertEqual([d["source"]["line"] for d in const], [21], "the numpy array baked as a constant")

    def test_data_dependent_early_exit_is_assumed_not_taken(self):
        early = model_file("capture-branch-", "early.py",
                    "import torch\n\n\nclass M(torch.nn.Module):\n    def __init__(self):\n"
                    "        super().__init__()\n        self.fc = torch.nn.Linear(8, 8)\n\n"
                    "    def forward(self, x):\n        if x.sum() == 0:\n            return x\n"
                    "        return self.fc(x).relu()\n\n\ndef model():\n    return M()\n\n\n"
                    "def example_inputs():\n    return (torch.randn(2, 8),)\n")
        doc, _, _ = export([early])
        self.assertIn("aten::addmm", [n["op"] for n in doc["nodes"]], "the main path is traced")
        branch = next(n for n in doc["nodes"] if n["op"] == "aten::is_nonzero")
        self.assertIs(branch["assumed"], False)
        self.assertEqual(branch["source"]["line"], 10)
        self.assertIn(("host-value-assumed", 10), [(x["kind"], x.get("source", {}).get("line"))
                                                  for x in doc["diagnostics"]])

    def test_a_local_rebound_after_a_call_is_held_until_that_call_returns(self):
        # T5's block: `h, bias, _ = self.layer[0](h)` keeps the attention
        # weights in `_` until the next layer's call returns and rebinds it.
        rebound = model_file("capture-held-", "rebound.py",
                    "import torch\n\n\nclass Attn(torch.nn.Module):\n    def forward(self, x):\n"
                    "        w = torch.softmax(x @ x.transpose(-1, -2), -1)\n        return w @ x, w\n\n\n"
                    "class M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                    "        self.a = Attn()\n        self.b = Attn()\n\n    def forward(self, x):\n"
                    "        h, _ = self.a(x)\n        h, _ = self.b(h)\n        return h.relu()\n\n\n"
                    "def model():\n    return M()\n\n\ndef example_inputs():\n    return (torch.randn(2, 8, 8),)\n")
        doc, _, _ = export([rebound])
        softmax = [n for n in doc["nodes"] if n["op"] == "aten::_softmax"]
        self.assertEqual([n["module"] for n in softmax], ["a", "b"])
        last_of_b = [n["name"] for n in doc["nodes"] if n.get("module") == "b"][-1]
        self.assertEqual(softmax[0].get("held"), [last_of_b], "a's weights live in `_` until b returns")
        # b's weights are rebound by no later call: M's own frame holds them until it returns.
        self.assertEqual(softmax[1].get("held"), [doc["nodes"][-1]["name"]])

    def test_model_that_cannot_be_built_on_meta_is_an_error_at_its_line(self):
        bad = model_file("capture-meta-", "bad.py",
                    "import torch\n\n\ndef model():\n    w = torch.zeros(1 << 20)\n    w.numpy()\n"
                    "    return torch.nn.Linear(2, 2)\n\n\ndef example_inputs():\n    return (torch.zeros(1, 2),)\n")
        _, err, _ = export([bad], expect_rc=2)
        self.assertIn("bad.py:6: model() failed (the model is built on the meta device", err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        doc, _, _ = export([bad, "--capture", "real"])
        self.assertEqual(doc["producer"]["capture"], "real")

    def test_real_capture_matches_the_fake_one(self):
        fake, _, _ = export(["parity.py", "--train"])
        real, _, _ = export(["parity.py", "--train", "--capture", "real"])
        self.assertEqual(real["producer"]["capture"], "real")
        strip = lambda doc: [(n["op"], [o.get("shape") for o in n["outputs"]]) for n in doc["nodes"]
                             if n["op"] not in ("aten::detach", "aten::nonzero")]
        self.assertEqual(strip(fake)[:12], strip(real)[:12])
        self.assertEqual(fake["model"]["parameters"], real["model"]["parameters"])

    @unittest.skipUnless(TORCH2, "torch.export needs torch >= 2.1")
    def test_export_capture(self):
        doc, _, _ = export(["parity.py", "--capture", "export", "--dim", "batch=5"])
        self.assertEqual(doc["producer"]["capture"], "export")
        self.assertEqual(doc["inputs"][0]["shape"], ["batch", 3, 16, 16])
        self.assertEqual(doc["symbols"]["batch"]["kind"], "input")
        conv = next(n for n in doc["nodes"] if n["op"] == "aten::convolution")
        self.assertEqual(conv["source"]["line"], 14)
        self.assertEqual(conv["outputs"][0]["shape"], ["batch", 8, 16, 16])
        self.assertEqual(conv["outputs"][0]["device"], "cpu")
        self.assertEqual(sum(_numel(p["shape"]) for p in doc["params"] if p["kind"] == "parameter"), 260)
        _, err, _ = export(["parity.py", "--capture", "export", "--train"], expect_rc=2)
        self.assertIn("forward graph only", err)

    @unittest.skipUnless(TORCH2, "torch.export needs torch >= 2.1")
    def test_exported_program_keeps_its_dim_names(self):
        # torch.export.save drops the Dim names; graphlint.save_pt2 (and check(ep)) keeps them.
        if not os.access(GRAPHLINT, os.X_OK):
            self.skipTest(f"{GRAPHLINT} not built")
        os.environ["GRAPHLINT_BINARY"] = GRAPHLINT
        import graphlint
        sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures", "pt2"))
        import pt2_models
        ep = torch.export.export(pt2_models.DynamicBatch().eval(), (torch.randn(3, 7, 24),), dynamic_shapes=(
            {0: torch.export.Dim("batch"), 1: torch.export.Dim("seq")},))
        path = os.path.join(tempfile.mkdtemp(), "dynamic.pt2")
        names = graphlint.save_pt2(ep, path)
        self.assertEqual(sorted(names.values()), ["batch", "seq"])
        torch.export.load(path)   # still a torch.export archive
        p = subprocess.run([GRAPHLINT, "inspect", "--print-ir", "-D", "batch=8", "-D", "seq=16", path],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("binds nothing", p.stderr)
        self.assertIn("%x: f32[8,16,24]", p.stdout)
        self.assertIn("f32[128,48]", p.stdout)   # the flattened [batch*seq, 48] linear
        report = graphlint.check(ep, dims={"batch": 8})
        dims = {d["name"]: d for d in report.json["files"][0]["dims"]}
        self.assertEqual((dims["batch"]["value"], dims["batch"]["from"]), (8, "cli"))
        self.assertEqual((dims["seq"]["value"], dims["seq"]["source"]), (7, "x.shape[1]"))

    @unittest.skipUnless(TORCH2, "torch.export needs torch >= 2.1")
    def test_record_python_frames_keeps_helper_frames(self):
        # A non-strict export records `forward` frames only; under
        # graphlint.record_python_frames (export_pt2) the helper `attend` has
        # its frame, the caller's frames are dropped, and graphlint's memory
        # report then has no caveat about helper locals.
        if not os.access(GRAPHLINT, os.X_OK):
            self.skipTest(f"{GRAPHLINT} not built")
        import graphlint
        import torch.fx.proxy as proxy
        sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures", "pt2"))
        import pt2_models
        anchors = proxy._STACK_TRACE_ANCHORS
        ids = torch.randint(0, 100, (2, 8))
        tmp = tempfile.mkdtemp()
        plain = torch.export.export(pt2_models.Locals().eval(), (ids,))
        self.assertFalse(any("in attend" in (n.meta.get("stack_trace") or "") for n in plain.graph.nodes))
        torch.export.save(plain, os.path.join(tmp, "plain.pt2"))
        ep = graphlint.export_pt2(pt2_models.Locals().eval(), (ids,), os.path.join(tmp, "frames.pt2"))
        traces = [n.meta.get("stack_trace") or "" for n in ep.graph.nodes]
        self.assertTrue(any("in attend" in t for t in traces))
        self.assertFalse(any("capture_test.py" in t for t in traces), "the caller's frames are dropped")
        self.assertIs(proxy._STACK_TRACE_ANCHORS, anchors, "the anchors are restored")
        torch.export.load(os.path.join(tmp, "frames.pt2"))
        caveats = {}
        for name in ("plain", "frames"):
            p = subprocess.run([GRAPHLINT, os.path.join(tmp, name + ".pt2"), "--format", "json"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            caveats[name] = json.loads(p.stdout)["files"][0]["memory"]["caveats"]
        self.assertEqual(len(caveats["plain"]), 1)
        self.assertIn("`out, weights = attend(q, k, v)`", caveats["plain"][0])
        self.assertEqual(caveats["frames"], [])

    @unittest.skipIf(TORCH2, "torch 1.13 only")
    def test_torch113_refuses_export(self):
        _, err, _ = export(["parity.py", "--capture", "export"], expect_rc=2)
        self.assertIn("needs torch >= 2.1", err)

    def test_graphlint_reads_the_capture(self):
        if not os.access(GRAPHLINT, os.X_OK):
            self.skipTest(f"{GRAPHLINT} not built")
        doc, _, _ = export(["hazards.py", "--device", "cuda"])
        path = os.path.join(tempfile.mkdtemp(), "hazards.fx.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        p = subprocess.run([GRAPHLINT, "--no-color", "--format", "gcc", path], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if "version 2" in p.stdout and "fatal" in p.stdout:
            self.skipTest(f"this graphlint does not read format version 2 yet: {p.stdout.strip()}")
        for line in (26, 27, 28, 29, 30):
            self.assertIn(f"tests/fixtures/fx/hazards.py:{line}:", p.stdout)
        self.assertIn("GL112", p.stdout)
        self.assertIn("GL111", p.stdout)


class FindingsAUserActsOn(unittest.TestCase):
    """Suppression comments carried by the exporter, and baselines that stay
    matched when the model is edited elsewhere and re-exported (issue 16)."""

    def setUp(self):
        if not os.access(GRAPHLINT, os.X_OK):
            self.skipTest(f"{GRAPHLINT} not built")
        self.repo = tempfile.mkdtemp(prefix="capture-repo-")   # its own root: paths are "layers.py"
        with open(os.path.join(FIXTURES, "layers.py")) as f:
            self.source = f.read()

    def export_here(self, text, *args):
        with open(os.path.join(self.repo, "layers.py"), "w") as f:
            f.write(text)
        out = os.path.join(self.repo, "layers.fx.json")
        p = subprocess.run([sys.executable, *EXPORTER, "layers.py", "-o", out, "--device", "cuda", *args], cwd=self.repo,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            return out, json.load(f)

    def lint(self, path, *args):
        p = subprocess.run([GRAPHLINT, "--no-color", "--format", "json", *args, path], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        return p, json.loads(p.stdout)["files"][0]

    def test_suppression_comments_reach_graphlint(self):
        path, doc = self.export_here(self.source)
        self.assertEqual(doc["suppressions"], [{"file": "layers.py", "line": 31, "codes": ["GL112"]},
                                               {"file": "layers.py", "line": 32, "codes": ["GL111"]}])
        _, f = self.lint(path)
        found = {(d["code"], d["location"]["source"]["line"]) for d in f["diagnostics"]}
        self.assertIn(("GL131", 19), found)
        self.assertNotIn(("GL112", 31), found)            # the .item() line's comment
        self.assertNotIn(("GL111", 32), found)            # noqa: GL111 (E501 is not ours)
        self.assertGreaterEqual(f["suppressed"], 2)
        # The GL131 line runs in 4 layers: one finding with the list.
        gl131 = next(d for d in f["diagnostics"] if d["code"] == "GL131")
        self.assertEqual(gl131["count"], 4)
        self.assertEqual([a["module"] for a in gl131["also_at"]], ["blocks.1", "blocks.2", "blocks.3"])
        # A comment whose rule does not fire on its line is GL005 there (with
        # --report-unused-ignores); one that names no rule always is.
        edited = self.source.replace("h.relu_()  # expect", "h.relu_()  # graphlint: ignore[GL131]  # expect")
        edited = edited.replace("return h + skip.sum()", "return h + skip.sum()  # graphlint: ignore[GL201, GL9X]")
        path, _ = self.export_here(edited)
        _, f = self.lint(path, "--report-unused-ignores")
        gl005 = sorted((d["location"]["source"]["line"], d["message"]) for d in f["diagnostics"] if d["code"] == "GL005")
        self.assertEqual([line for line, _ in gl005], [20, 20])
        self.assertTrue(any("'GL9X'" in m and "names no rule" in m for _, m in gl005), gl005)
        self.assertTrue(any("'GL201'" in m and "suppresses nothing" in m for _, m in gl005), gl005)
        self.assertFalse(any(d["code"] == "GL131" for d in f["diagnostics"]))

    def test_baseline_survives_an_unrelated_edit_and_re_export(self):
        path, before = self.export_here(self.source)
        baseline = os.path.join(self.repo, "baseline.json")
        # GL142 is left out: its finding is the run of tiny kernels, which the
        # added op joins (a related change by nature).
        p = subprocess.run([GRAPHLINT, "--no-color", "--ignore", "GL142", "--write-baseline", baseline, path],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        # An unrelated in-place op before the layers (torch renumbers every
        # relu_ node after it) and an import at the top (every line moves).
        edited = ("import math  # noqa: F401\n" + self.source).replace(
            "        for b in self.blocks:", "        x = x.clone().relu_()\n        for b in self.blocks:")
        self.assertNotEqual(edited.count("\n"), self.source.count("\n"))
        path, after = self.export_here(edited)
        relu = lambda doc: [n["name"] for n in doc["nodes"] if n["op"] == "aten::relu_"]
        self.assertNotEqual(relu(before), relu(after))    # node names changed: they cannot be the key
        p, f = self.lint(path, "--ignore", "GL142", "--baseline", baseline)
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertEqual(f["diagnostics"], [])
        self.assertGreater(f["baselined"], 0)
        self.assertNotIn("stale entry", p.stderr)
        # A new finding in the edit is new, and the old ones still match.
        edited = edited.replace("        return x.cpu() * scale", "        x = x.cpu().cuda()\n        return x.cpu() * scale")
        path, _ = self.export_here(edited)
        p, f = self.lint(path, "--ignore", "GL142", "--baseline", baseline)
        new = [(d["code"], d["location"]["source"]["line"]) for d in f["diagnostics"]]
        line = edited.splitlines().index("        x = x.cpu().cuda()") + 1
        self.assertIn(("GL111", line), new)
        self.assertTrue(all(code == "GL111" for code, _ in new), new)
        self.assertNotIn("stale entry", p.stderr)


class CommittedCaptures(unittest.TestCase):
    """tests/fixtures/fx/captured/: exports of breaks.py and training.py from
    both torch lines, linted as committed (no Python capture needed)."""

    def lint(self, name):
        if not os.access(GRAPHLINT, os.X_OK):
            self.skipTest(f"{GRAPHLINT} not built")
        p = subprocess.run([GRAPHLINT, "--no-color", "--format", "json",
                            os.path.join(FIXTURES, "captured", name)], stdout=subprocess.PIPE, text=True)
        f = json.loads(p.stdout)["files"][0]
        self.assertIsNone(f["error"])
        return [(d["code"], ((d["location"] or {}).get("source") or {}).get("line")) for d in f["diagnostics"]]

    def test_breaks_are_host_syncs_at_the_users_lines(self):
        for name in ("breaks.torch2.fx.json", "breaks.torch113.fx.json"):
            got = sorted(line for code, line in self.lint(name) if code == "GL112")
            self.assertEqual(got, [16, 18, 23, 24], name)   # .item(), `if`, boolean mask, .tolist()

    def test_training_graphs_are_well_formed(self):
        for name in ("training.torch2.train.fx.json", "training.torch113.train.fx.json"):
            codes = [code for code, _ in self.lint(name)]
            self.assertNotIn("GL001", codes, name)
            self.assertNotIn("GL002", codes, name)


class RescalingEqualsCapturing(unittest.TestCase):
    """A capture with symbolic sizes, bound with -D, predicts what a capture
    at those sizes does (issue 42 item 5). full_range_slice.py's `h[:, 0:, :]`
    (transformers' slice_logits_to_keep(0)) is a slice eager's indexing
    skips; torch 2.x's symbolic trace records it, and its backward as
    zero-filled slice_backward copies, which graphlint reads as the aliases
    eager runs."""

    def predict(self, doc, *flags):
        if not os.access(GRAPHLINT, os.X_OK):
            self.skipTest(f"{GRAPHLINT} not built")
        path = os.path.join(tempfile.mkdtemp(prefix="rescale-test-"), "g.fx.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        p = subprocess.run([GRAPHLINT, "--format", "json", "--train", "--cost", *flags, path],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        f = json.loads(p.stdout)["files"][0]
        self.assertIsNone(f["error"], p.stderr)
        c = f["compute"]
        return (f["memory"]["peak_allocated_bytes"], c["kernels_forward"], c["kernels_backward"],
                round((c["time_forward_s"] + c["time_backward_s"]) * 1e9))

    @unittest.skipUnless(TORCH2, "torch 1.13 names dims back by size: a flattened batch*seq is no name -D rescales")
    def test_symbolic_capture_bound_with_dims_predicts_the_static_capture(self):
        sym, _, _ = export(["full_range_slice.py", "--input", "input0:float32[batch,seq,64]", "--dim", "batch=2",
                            "--dim", "seq=24", "--train"])
        static, _, _ = export(["full_range_slice.py", "--train"])   # example_inputs(): [4, 32, 64]
        # The premise: the symbolic trace keeps full-range slices the static one drops.
        full = [n for n in sym["nodes"] if n["op"] in ("aten::slice", "aten::slice_backward")
                and n["attrs"].get("end") == 2 ** 63 - 1]
        self.assertGreaterEqual(len(full), 4, [n["op"] for n in sym["nodes"]])
        self.assertNotIn(2 ** 63 - 1, [n.get("attrs", {}).get("end") for n in static["nodes"]])
        for kernels in ("cuda", "cpu"):
            self.assertEqual(self.predict(sym, "-D", "batch=4", "-D", "seq=32", "--kernels", kernels),
                             self.predict(static, "--kernels", kernels), kernels)


class LossOutputAndKeywordInputs(unittest.TestCase):
    """--loss-output NAME back-propagates that output alone; keyword inputs by
    name (--input NAME:..., graphlint.check(kwargs=...)) reach forward() as
    keywords, and a name forward() lacks is refused by name (issue 42 item 1)."""

    SOURCE = textwrap.dedent("""\
        import torch


        class TwoHeads(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.body = torch.nn.Linear(8, 8)
                self.aux = torch.nn.Linear(8, 4)

            def forward(self, x, scale=None):
                h = self.body(x) if scale is None else self.body(x) * scale
                return {"aux": self.aux(h).sum(), "main": (h * h).mean(), "hidden": h}


        class Pair(TwoHeads):
            def forward(self, x):
                h = self.body(x)
                return self.aux(h), (h * h).mean()


        def model():
            return TwoHeads()


        def pair():
            return Pair()
        """)

    def setUp(self):
        self.folder = os.path.dirname(model_file("capture-loss-", "heads.py", self.SOURCE))

    def capture(self, *args, expect_rc=0):
        return export(["--model", "heads:model", "--input", "x:float32[2,8]", *args], cwd=self.folder,
                      expect_rc=expect_rc)

    @staticmethod
    def seeds(doc):
        return [n["outputs"][0]["shape"] for n in doc["nodes"] if n["op"] == "aten::ones_like"]

    def test_loss_output_backpropagates_that_output_alone(self):
        doc, err, _ = self.capture("--train", "--loss-output", "main")
        self.assertEqual(self.seeds(doc), [[]])   # one scalar seed: main.backward()
        unused = sorted(d["message"].split("'")[1] for d in doc["diagnostics"] if d["kind"] == "no-gradient")
        self.assertEqual(unused, ["aux.bias", "aux.weight"])   # only `aux` reads them
        default, _, _ = self.capture("--train")
        self.assertEqual(len(self.seeds(default)), 3)   # no `loss`: every output is seeded

    def test_loss_output_is_an_index_of_a_tuple(self):
        doc, _, _ = export(["--model", "heads:pair", "--input", "x:float32[2,8]", "--train", "--loss-output", "1"],
                           cwd=self.folder)
        self.assertEqual(self.seeds(doc), [[]])

    def test_unknown_loss_output_names_the_outputs(self):
        _, err, _ = self.capture("--train", "--loss-output", "los", expect_rc=2)
        self.assertIn("--loss-output los: the model has no output 'los' (its outputs: aux, main, hidden)", err)
        _, err, _ = self.capture("--loss-output", "main", expect_rc=2)
        self.assertIn("add --train", err)

    def test_loss_output_is_in_help(self):
        p = subprocess.run([sys.executable, *EXPORTER, "--help"], stdout=subprocess.PIPE, text=True)
        self.assertIn("--loss-output NAME", p.stdout)
        self.assertIn("--input NAME:DTYPE[DIMS]", p.stdout)

    def test_input_by_name_is_a_keyword_argument_of_forward(self):
        doc, _, _ = self.capture("--input", "scale:float32[2,8]")
        self.assertEqual([i["name"] for i in doc["inputs"]], ["x", "scale"])
        self.assertIn("aten::mul", [n["op"] for n in doc["nodes"]])   # scale=... reached forward()
        _, err, _ = self.capture("--input", "scales:float32[2,8]", expect_rc=2)
        self.assertIn("--input scales: TwoHeads.forward() has no argument 'scales' (its arguments: x, scale;", err)

    def test_check_takes_keyword_inputs_and_a_loss_output(self):
        if not os.access(GRAPHLINT, os.X_OK):
            self.skipTest(f"{GRAPHLINT} not built")
        sys.path.insert(0, self.folder)
        os.environ["GRAPHLINT_BINARY"] = GRAPHLINT
        import graphlint
        import heads
        out = os.path.join(self.folder, "kw.fx.json")
        report = graphlint.check(heads.model(), kwargs={"x": torch.randn(2, 8), "scale": torch.randn(2, 8)},
                                 train=True, loss_output="main", export_path=out)
        self.assertIsNone(report.json["files"][0]["error"])
        with open(out) as f:
            doc = json.load(f)
        self.assertEqual([i["name"] for i in doc["inputs"]], ["x", "scale"])
        self.assertEqual(self.seeds(doc), [[]])
        mixed = graphlint.check(heads.model(), (torch.randn(2, 8),), kwargs={"scale": torch.randn(2, 8)},
                                export_path=out)
        self.assertIsNone(mixed.json["files"][0]["error"])
        with open(out) as f:
            self.assertEqual([i["name"] for i in json.load(f)["inputs"]], ["input0", "scale"])
        with self.assertRaises(graphlint.GraphlintError) as e:
            graphlint.check(heads.model(), kwargs={"y": torch.randn(2, 8)})
        self.assertIn("kwargs y: TwoHeads.forward() has no argument 'y'", str(e.exception))
        with self.assertRaises(TypeError):
            graphlint.check(out, kwargs={"x": torch.randn(2, 8)})


class Vision(unittest.TestCase):
    """torchvision (torch 1.13 and venv-vision) and timm (venv-vision):
    real architectures from --model factories, inputs given as shapes."""

    def _check(self, factory, params, module):
        try:
            __import__(module)
        except ImportError:
            self.skipTest(f"{module} is not installed for {sys.executable}")
        doc, _, _ = export(["--model", factory, "--input", "input0:float32[batch,3,64,64]", "--dim", "batch=2",
                            "--train"], cwd=tempfile.gettempdir())
        self.assertEqual(doc["model"]["parameters"], params)
        self.assertEqual(sum(_numel(p["shape"]) for p in doc["params"] if p["kind"] == "parameter"), params)
        self.assertTrue(doc["backward"]["traced"])
        ops = {n["op"] for n in doc["nodes"]}
        self.assertIn("aten::convolution_backward", ops)
        bn_buffers = [p for p in doc["params"] if p["kind"] == "buffer" and p["name"].endswith("running_mean")]
        self.assertTrue(bn_buffers)
        self.assertEqual(doc["inputs"][0]["shape"][0], "batch")
        # Tuple results (batch norm, max pool with indices) are read on through
        # getitem: every ReLU reads one (a writer that dropped getitem as a
        # size node left them with no input).
        relus = [n for n in doc["nodes"] if n["op"] in ("aten::relu", "aten::relu_")]
        self.assertTrue(relus)
        self.assertTrue(all(n["inputs"] and n["inputs"][0] for n in relus), [n["name"] for n in relus if not n["inputs"]])
        return doc

    def test_torchvision_resnet18(self):
        self._check("torchvision.models:resnet18", 11689512, "torchvision")

    def test_timm_resnet18(self):
        self._check("timm.models:resnet18", 11689512, "timm")


class UserTrialFindings(unittest.TestCase):
    """The user trial's reproducers (issue 42 items 2, 3 and 8), exported and
    linted as the user ran them: findings true at their lines, no false GL123
    after a host sync, one GL111 per device round trip, library code folded."""

    ITEM_SCALE = textwrap.dedent("""\
        import torch, torch.nn as nn
        class M(nn.Module):
            def __init__(self):
                super().__init__(); self.fc1 = nn.Linear(64, 64); self.fc2 = nn.Linear(64, 64)
            def forward(self, x):
                h = self.fc1(x)
                s = h.abs().max().item()    # host sync: a scalar, no shape depends on it
                h = h / s
                return self.fc2(h).sum()
        def model(): return M()
        def example_inputs(): return (torch.randn(8, 64),)
        """)
    ROUNDTRIP = textwrap.dedent("""\
        import torch, torch.nn as nn
        class M(nn.Module):
            def __init__(self):
                super().__init__(); self.fc = nn.Linear(64, 64)
            def forward(self, x):
                h = self.fc(x).cpu()
                h = h.to(x.device)          # back to the GPU
                return self.fc(h).sum()
        def model(): return M()
        def example_inputs(): return (torch.randn(8, 64),)
        """)
    # buggy.py with its in-place bug (line 18) taken out, so that the backward
    # traces; five defects remain on known lines.
    BUGGY = textwrap.dedent("""\
        import torch
        import torch.nn as nn
        import torch.nn.functional as F


        class Buggy(nn.Module):
            def __init__(self, d=256, n_cls=10):
                super().__init__()
                self.fc1 = nn.Linear(d, d)
                self.fc2 = nn.Linear(d, d)
                self.fc3 = nn.Linear(d, d).half()
                self.gate = nn.Linear(d, 1)
                self.head = nn.Linear(d, n_cls)

            def forward(self, x):
                h = torch.sigmoid(self.fc1(x))
                h = h * 2.0
                scale = h.mean().item()                       # line 18: .item() host sync
                h = self.fc2(h) * scale
                h16 = self.fc3(h.half())                      # line 20: f32 -> f16
                h = h + h16                                   # line 21: f16/f32 promotion
                h = h.cpu()                                   # line 22: round trip to the host
                h = h.to(x.device)
                if h.sum() > 0:                               # line 24: data-dependent branch
                    h = F.relu(h)
                else:
                    h = torch.tanh(h)
                keep = h[h.abs().mean(-1) > 0.1]              # line 28: boolean-mask indexing
                g = torch.sigmoid(self.gate(keep))
                pooled = (keep * g).sum(0, keepdim=True)
                return self.head(pooled).sum()


        def model():
            return Buggy()


        def example_inputs():
            return (torch.randn(16, 256),)
        """)

    def setUp(self):
        if not os.access(GRAPHLINT, os.X_OK):
            self.skipTest(f"{GRAPHLINT} not built")

    def capture_and_lint(self, name, source, *args, lint_args=(), env=None):
        path = model_file("capture-trial-", name, source)
        out = os.path.join(os.path.dirname(path), "out.fx.json")
        p = subprocess.run([sys.executable, *EXPORTER, name, "-o", out, *args], cwd=os.path.dirname(path),
                           env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1", **(env or {})),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            doc = json.load(f)
        q = subprocess.run([GRAPHLINT, "--no-color", "--format", "json", "--train", *lint_args, out],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        return doc, json.loads(q.stdout)["files"][0]["diagnostics"]

    @staticmethod
    def found(diags):
        return sorted((d["code"], d["location"]["source"]["line"]) for d in diags if d["location"].get("source"))

    def test_a_scalar_read_by_item_leaves_later_shapes_static(self):
        _, diags = self.capture_and_lint("item_scale.py", self.ITEM_SCALE, "--train")
        self.assertIn(("GL112", 7), self.found(diags))
        self.assertEqual([d for d in diags if d["code"] == "GL123"], [])   # 7 false ones on weight gradients before

    def test_a_device_round_trip_is_recorded_both_ways_and_reported_once(self):
        doc, diags = self.capture_and_lint("roundtrip.py", self.ROUNDTRIP, "--train", "--device", "cuda")
        copies = [(n["source"]["line"], n["outputs"][0]["device"]) for n in doc["nodes"]
                  if n["op"] == "aten::_to_copy" and n.get("phase") == "forward"]
        self.assertEqual(copies, [(6, "cpu"), (7, "cuda:0")])
        gl111 = [d for d in diags if d["code"] == "GL111"]
        self.assertEqual(len(gl111), 1, gl111)
        self.assertEqual(gl111[0]["location"]["source"]["line"], 6)
        self.assertIn("round trip cuda:0 -> cpu -> cuda:0", gl111[0]["message"])

    def test_buggy_model_with_its_backward_gives_one_finding_per_defect_line(self):
        doc, diags = self.capture_and_lint("buggy.py", self.BUGGY, "--train", "--device", "cuda")
        self.assertTrue(doc["backward"]["traced"])
        found = self.found(diags)
        for expected in [("GL112", 18), ("GL101", 20), ("GL101", 21), ("GL111", 22), ("GL112", 24),
                         ("GL112", 28), ("GL123", 29)]:
            self.assertIn(expected, found)
        # Nothing at a backward line (column 0 of a forward line) stands alone:
        # the gradient of the f16 cast is folded into the cast's finding.
        self.assertEqual([d for d in diags if d["location"].get("source", {}).get("col", 1) == 0
                          and d["code"] != "GL142"], [])
        # GL123 only downstream of the mask, in the forward: lines 29-31.
        self.assertTrue(all(29 <= line <= 31 for code, line in found if code == "GL123"), found)
        self.assertEqual(sum(1 for code, _ in found if code == "GL111"), 1, found)
        self.assertLessEqual(len(diags), 11, found)   # 44 warnings for 5 defects before

    LIBRARY = textwrap.dedent("""\
        import torch


        def rms_norm(x, w):
            h = x.float()                                         # line 5: the library's deliberate upcast
            h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)
            return w * h.to(x.dtype)


        def scale_of(x):
            return x.abs().max().item()                           # line 11


        def count_of(x):
            return x.sum().item()                                 # line 15
        """)
    USER = textwrap.dedent("""\
        import torch, torch.nn as nn
        import triallib


        class M(nn.Module):
            def __init__(self):
                super().__init__(); self.fc = nn.Linear(64, 64).to(torch.bfloat16)
                self.w = nn.Parameter(torch.ones(64, dtype=torch.bfloat16))
            def forward(self, x):
                h = triallib.rms_norm(self.fc(x), self.w)
                h = h / triallib.scale_of(h) / triallib.count_of(h)
                u = self.fc(h).float()                            # line 12: the user's own upcast
                return (u * u).sum()
        def model(): return M()
        def example_inputs(): return (torch.randn(8, 64, dtype=torch.bfloat16),)
        """)

    def test_library_findings_are_folded_and_its_upcasts_are_not_warnings(self):
        lib_root = os.path.join(tempfile.mkdtemp(prefix="capture-lib-"), "lib", "site-packages")
        os.makedirs(os.path.join(lib_root, "triallib"))
        with open(os.path.join(lib_root, "triallib", "__init__.py"), "w") as f:
            f.write(self.LIBRARY)
        # The library beside the test's own path (graphlint from python/).
        env = {"PYTHONPATH": os.pathsep.join(p for p in (lib_root, os.environ.get("PYTHONPATH")) if p)}
        _, diags = self.capture_and_lint("user.py", self.USER, env=env)
        lib = [d for d in diags if "site-packages" in d["location"].get("source", {}).get("file", "")]
        # Two .item() lines of the library: one GL112 line for triallib.
        gl112 = [d for d in lib if d["code"] == "GL112"]
        self.assertEqual(len(gl112), 1, lib)
        self.assertEqual(gl112[0]["count"], 2)
        self.assertIn("in library code (triallib", gl112[0]["message"])
        # The library's fp32 upcast and the cast back are not GL101; the user's is.
        self.assertEqual([d for d in lib if d["code"] == "GL101"], [])
        self.assertIn(("GL101", 12), self.found(diags))
        # --show-library-findings lists each one.
        _, expanded = self.capture_and_lint("user.py", self.USER, env=env, lint_args=["--show-library-findings"])
        self.assertEqual(sorted(line for code, line in self.found(expanded) if code == "GL112"), [11, 15])
        # per-file-ignores match a finding's source file, not only the model file.
        config = os.path.join(tempfile.mkdtemp(prefix="capture-cfg-"), ".graphlint.yaml")
        with open(config, "w") as f:
            f.write('per-file-ignores:\n  "*/triallib/*": [GL112]\n  "user.py": [GL101]\n')
        _, ignored = self.capture_and_lint("user.py", self.USER, env=env,
                                           lint_args=["--show-library-findings", "--config", config])
        codes = {code for code, _ in self.found(ignored)}
        self.assertNotIn("GL112", codes)   # both were reported above, without the config
        self.assertNotIn("GL101", codes)


class HuggingFace(unittest.TestCase):
    """transformers causal LMs built from their config as users build them:
    the default `use_cache=True` and labels given, so the model returns the
    loss and the logits (issue 41 item 10, issue 42 item 1)."""

    SOURCE = textwrap.dedent("""\
        from transformers import {cls}Config, {cls}ForCausalLM


        def model():
            return {cls}ForCausalLM({cls}Config(vocab_size=256, hidden_size=64, intermediate_size=128,
                                               num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                               max_position_embeddings=128))
        """)

    def _capture(self, cls, *extra):
        try:
            import transformers
        except ImportError:
            self.skipTest(f"transformers is not installed for {sys.executable}")
        cfg = getattr(transformers, f"{cls}Config")()
        self.assertTrue(cfg.use_cache, f"{cls}Config's default use_cache")   # the case under test
        path = model_file("capture-hf-", f"{cls.lower()}_default.py", self.SOURCE.format(cls=cls))
        return export(["--model", f"{cls.lower()}_default:model", "--input", "input_ids:int64[2,16]", *extra],
                      cwd=os.path.dirname(path))

    def _check(self, cls):
        doc, err, _ = self._capture(cls, "--input", "labels:int64[2,16]", "--train")
        self.assertTrue(doc["backward"]["traced"])
        kinds = [d["kind"] for d in doc.get("diagnostics", [])]
        self.assertIn("cache-disabled", kinds)
        note = next(d["message"] for d in doc["diagnostics"] if d["kind"] == "cache-disabled")
        self.assertIn(f"{cls}Config", note)
        self.assertIn("use_cache=False", note)
        self.assertIn("warning: use_cache=True", err)   # also printed, as the exporter's warning
        # The model returns (loss, logits): loss.backward() alone. A scalar
        # seed on the loss, none on the [2,16,256] logits.
        self.assertIn("loss-only", kinds)
        seeds = [n["outputs"][0]["shape"] for n in doc["nodes"] if n["op"] == "aten::ones_like"]
        self.assertEqual(seeds, [[]])

    def test_llama_default_config_trains(self):
        self._check("Llama")

    def test_qwen2_default_config_trains(self):
        self._check("Qwen2")

    def test_loss_output_names_the_output_to_train_on(self):
        # --loss-output loss is the default made explicit (no note: the user chose);
        # --loss-output logits seeds the [2,16,256] logits instead of the loss.
        doc, _, _ = self._capture("Llama", "--input", "labels:int64[2,16]", "--train", "--loss-output", "loss")
        self.assertEqual([n["outputs"][0]["shape"] for n in doc["nodes"] if n["op"] == "aten::ones_like"], [[]])
        self.assertNotIn("loss-only", [d["kind"] for d in doc.get("diagnostics", [])])
        doc, _, _ = self._capture("Llama", "--input", "labels:int64[2,16]", "--train", "--loss-output", "logits")
        self.assertEqual([n["outputs"][0]["shape"] for n in doc["nodes"] if n["op"] == "aten::ones_like"],
                         [[2, 16, 256]])

    def test_forward_graph_says_it_holds_no_kv_cache(self):
        doc, _, _ = self._capture("Llama")
        self.assertEqual(doc["mode"], "forward")
        note = next(d["message"] for d in doc.get("diagnostics", []) if d["kind"] == "cache-disabled")
        self.assertIn("holds no KV cache", note)
        self.assertNotIn("loss-only", [d["kind"] for d in doc["diagnostics"]])


class CausalMask(unittest.TestCase):
    """A transformers causal LM with SDPA attention and no attention_mask
    runs eagerly with SDPA(is_causal=True) and no mask tensor (masking_utils'
    skip); the trace takes the same path, with a `causal-mask-skipped` note.
    Given an attention_mask (padding possible), the [b,1,s,s] mask stays."""

    SOURCE = textwrap.dedent("""\
        from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM, MistralConfig, \\
            MistralForCausalLM


        def llama():
            return LlamaForCausalLM(LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=128,
                                                num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                                max_position_embeddings=128, attn_implementation="sdpa"))


        def gpt2():   # no dropout: SDPA stays one op on the CPU trace
            return GPT2LMHeadModel(GPT2Config(vocab_size=256, n_embd=64, n_layer=2, n_head=4, n_positions=128,
                                              attn_pdrop=0.0, attn_implementation="sdpa"))


        def mistral():   # a sliding window longer than the traced sequence
            return MistralForCausalLM(MistralConfig(vocab_size=256, hidden_size=64, intermediate_size=128,
                                                    num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                                    sliding_window=64, attn_implementation="sdpa"))
        """)

    def _capture(self, factory, *inputs):
        try:
            import transformers  # noqa: F401
        except ImportError:
            self.skipTest(f"transformers is not installed for {sys.executable}")
        path = model_file("capture-mask-", "causal_lms.py", self.SOURCE)
        args = ["--model", f"causal_lms:{factory}", "--input", "input_ids:int64[batch,seq]"]
        for name in inputs:
            args += ["--input", f"{name}:int64[batch,seq]"]
        doc, err, _ = export(args + ["--input", "labels:int64[batch,seq]", "--train", "--dim", "batch=2",
                                     "--dim", "seq=16"], cwd=os.path.dirname(path))
        self.assertTrue(doc["backward"]["traced"])
        masks = [n for n in doc["nodes"] for o in n["outputs"] if o.get("shape") == ["batch", 1, "seq", "seq"]]
        sdpa = [n for n in doc["nodes"] if "scaled_dot_product" in n["op"] and "backward" not in n["op"]]
        self.assertEqual(len(sdpa), 2, [n["op"] for n in doc["nodes"] if "attention" in n["op"]])  # one per layer
        notes = {d["kind"]: d["message"] for d in doc.get("diagnostics", [])}
        return masks, sdpa, notes, err

    def _assert_skipped(self, factory):
        masks, sdpa, notes, err = self._capture(factory)
        self.assertEqual(masks, [])
        for n in sdpa:
            self.assertIs(n["attrs"].get("is_causal"), True, n)
            self.assertEqual(len(n["inputs"]), 3, n)   # query, key, value: no attn_mask
        self.assertIn("is_causal=True", notes["causal-mask-skipped"])
        self.assertIn("warning: no attention mask given", err)

    def _assert_kept(self, masks, sdpa, notes):
        self.assertTrue(masks)
        for n in sdpa:
            self.assertNotEqual(n["attrs"].get("is_causal"), True, n)
            self.assertEqual(len(n["inputs"]), 4, n)   # query, key, value, the mask
        self.assertNotIn("causal-mask-skipped", notes)

    def test_llama_without_attention_mask_traces_is_causal(self):
        self._assert_skipped("llama")

    def test_gpt2_without_attention_mask_traces_is_causal(self):
        self._assert_skipped("gpt2")

    def test_attention_mask_keeps_the_mask(self):
        # padding possible: eager builds the mask as well
        self._assert_kept(*self._capture("llama", "attention_mask")[:3])

    def test_position_ids_given_keep_the_mask(self):
        # they may restart within a row (packed sequences): not provably one sequence per row
        self._assert_kept(*self._capture("llama", "position_ids")[:3])

    def test_sliding_window_keeps_its_mask(self):
        # eager skips at seq 16 < window 64, not at seq >= 64: a decision on the
        # symbolic seq the trace does not take (it would pin seq below the window)
        self._assert_kept(*self._capture("mistral")[:3])


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


if __name__ == "__main__":
    print(f"capture tests with torch {torch.__version__} ({sys.executable})", flush=True)
    unittest.main(verbosity=2)
