"""transformers mixture-of-experts blocks through graphlint-export and graphlint
(issue 42 item 6; docs/fx-format.md "Mixture of experts"): tiny Mixtral and
Qwen3-MoE in fp32 and bf16, with transformers' grouped_mm experts and its
eager per-expert loop, plus the held-out OLMoE for memory.

    python tests/capture/moe_capture_test.py [-k pattern]
    python tests/capture/moe_capture_test.py --measure TRIAL_DIR   # rewrite the truth

Checked: every case captures (fp32 grouped_mm used to fail: "Expected inputs
of BF16 type"); the eager loop runs each expert once per layer, with its own
weights; each expert's rows are `tokens_per_expert`, by default
ceil(tokens x top-k / experts), rebinding with -D batch and bound by -D
tokens_per_expert, and the memory report names the assumption; grouped_mm
needs none (its sizes are exact). The predicted training peak (--kernels cpu)
is within 3% of the measured one, tests/fixtures/memory/moe-torch2.13.json,
measured with the user trial's CPU harness (shared/user-trial/truth_generic.py:
torch.profiler allocations of step 2 of single-tensor Adam).
"""
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import unittest

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# The exporter package (python/graphlint/export), imported through PYTHONPATH or the install.
EXPORTER = ["-m", "graphlint.export"]
GRAPHLINT = os.environ.get("GRAPHLINT_CLI", os.path.join(ROOT, "build", "tools", "graphlint"))
TRUTH = os.path.join(ROOT, "tests", "fixtures", "memory", "moe-torch2.13.json")
import moe_models  # noqa: E402   (beside this script)

BATCH, SEQ = 2, 128
TOLERANCE = 0.03
_DOCS = {}


def export(name):
    """The capture of moe_models:NAME at batch 2 x seq 128, symbolic (cached per run)."""
    if name not in _DOCS:
        out = os.path.join(tempfile.mkdtemp(prefix="moe-test-"), f"{name}.fx.json")
        p = subprocess.run([sys.executable, *EXPORTER, "--model", f"moe_models:{name}",
                            "--input", "input_ids:int64[batch,seq]", "--input", "labels:int64[batch,seq]",
                            "--dim", f"batch={BATCH}", "--dim", f"seq={SEQ}", "--train", "-o", out], cwd=HERE,
                           env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=600)
        if p.returncode != 0:
            raise AssertionError(f"graphlint-export {name}: exit {p.returncode}\n{p.stderr[-3000:]}")
        with open(out) as f:
            _DOCS[name] = (out, json.load(f), p.stderr)
    return _DOCS[name]


def lint(path, *flags, fmt="json"):
    p = subprocess.run([GRAPHLINT, path, "--train", "--kernels", "cpu", "--exit-zero", "--format", fmt, *flags],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
    if p.returncode != 0:
        raise AssertionError(f"graphlint {path} {flags}: exit {p.returncode}\n{p.stderr}")
    return json.loads(p.stdout)["files"][0] if fmt == "json" else p.stdout


def precision(name):
    return ["--precision", "bf16"] if "_bf16_" in name else []


def expert_selects(doc, layer, weight):
    """Forward `select(experts.<weight>, 0, i)` of one layer: the experts the loop ran."""
    param = next(p["name"] for p in doc["params"] if re.search(rf"layers\.{layer}\..*experts\.{weight}$", p["name"]))
    return [n["attrs"]["index"] for n in doc["nodes"] if n["op"] == "aten::select" and n["phase"] == "forward"
            and n["inputs"][:1] == [param]]


def dims(report):
    return {d["name"]: d for d in report["dims"]}


class MoeCapture(unittest.TestCase):
    def check_case(self, family, dtype, impl):
        name = f"{family}_{dtype}_{impl}"
        _, _, _, E, k = moe_models.FAMILIES[family]
        path, doc, _ = export(name)
        layers = 2
        if impl == "eager":
            for layer in range(layers):
                for weight in ("gate_up_proj", "down_proj"):
                    # Every expert once, with its own weights (not E + 1 copies of an unknown one).
                    self.assertEqual(sorted(expert_selects(doc, layer, weight)), list(range(E)), (name, layer))
            sym = doc["symbols"]["tokens_per_expert"]
            self.assertEqual(sym["kind"], "unbacked")
            self.assertEqual(sym["default"], f"CeilDiv(batch*seq*{k}, {E})")
            self.assertIn("an even share of the routed rows", sym["assumption"])
            for s, entry in doc["symbols"].items():   # no data-dependent size left at a silent 1
                if entry["kind"] == "unbacked":
                    self.assertIn("default", entry, s)
            balanced = math.ceil(BATCH * SEQ * k / E)
            report = lint(path, *precision(name))
            tpe = dims(report)["tokens_per_expert"]
            self.assertEqual((tpe["value"], tpe["from"]), (balanced, "default"))
            self.assertTrue(any(a.startswith(f"tokens_per_expert={balanced} (an even share")
                                for a in report["memory"]["assumed_dims"]), report["memory"]["assumed_dims"])
            self.assertFalse([a for a in report["memory"]["assumed_dims"] if a.endswith("=1")])
            # The default follows -D batch; -D tokens_per_expert binds it.
            rescaled = dims(lint(path, "-D", "batch=4", *precision(name)))["tokens_per_expert"]
            self.assertEqual((rescaled["value"], rescaled["from"]), (2 * balanced, "default"))
            skewed = lint(path, "-D", f"tokens_per_expert={2 * balanced}", *precision(name))
            self.assertEqual((dims(skewed)["tokens_per_expert"]["value"], dims(skewed)["tokens_per_expert"]["from"]),
                             (2 * balanced, "cli"))
            self.assertGreater(skewed["memory"]["peak_allocated_bytes"], report["memory"]["peak_allocated_bytes"])
            text = lint(path, "--memory", *precision(name), fmt="text")
            self.assertRegex(text, rf"assumed \(bind with --dim\): .*tokens_per_expert={balanced} \(an even share")
        else:
            for layer in range(layers):
                grouped = [n for n in doc["nodes"] if n["op"] == "aten::_grouped_mm" and n["phase"] == "forward"
                           and f"layers.{layer}." in n.get("module", "")]
                self.assertEqual(len(grouped), 2, (name, layer))   # gate_up and down, all experts in each
                self.assertEqual([o["dtype"] for n in grouped for o in n["outputs"]],
                                 ["float32" if dtype == "fp32" else "bfloat16"] * 2)
            self.assertNotIn("tokens_per_expert", doc.get("symbols", {}))   # rows exact: tokens x top-k in all
            self.assertFalse(any(e["kind"] == "unbacked" for e in doc.get("symbols", {}).values()))
            assumed = lint(path, *precision(name))["memory"]["assumed_dims"]
            self.assertEqual(assumed, [f"batch={BATCH}", f"seq={SEQ}"])   # the traced sizes only

    def test_grouped_mm_has_its_flops(self):
        """All experts' rows in one kernel: 2 x rows x K x N, none of unknown cost."""
        path, _, _ = export("mixtral_fp32_grouped")
        compute = lint(path, "--cost")["compute"]
        self.assertEqual(compute["unknown_groups"], 0)
        up = next(g for g in compute["groups"] if g["node"] == "_grouped_mm")   # layer 0's gate_up
        rows, hidden, inter = BATCH * SEQ * 2, 256, 512
        gemm = 2 * rows * hidden * 2 * inter   # the group also runs an elementwise op of its [rows, 2 x inter]
        self.assertTrue(gemm <= up["flops_forward"] <= gemm + rows * 2 * inter, up)

    def check_memory(self, dtype):
        """Each case's predicted peak within 3% of the measured one. The eager
        experts' default is an even share of the rows; the measured step routes
        as its random weights do (the fixture's `expert_rows`: Mixtral's second
        layer sends 204 rows to one expert where an even share is 128), so an
        eager case passes when the truth lies within 3% of the range from the
        even share to the busiest expert's rows (-D tokens_per_expert=MAX)."""
        with open(TRUTH) as f:
            truth = json.load(f)["cases"]
        failures, lines = [], []
        for name, measured in sorted(truth.items()):
            if f"_{dtype}_" not in name:
                continue
            path, _, _ = export(name)
            pred = lint(path, *precision(name))["memory"]["peak_allocated_bytes"]
            err = (pred - measured["peak"]) / measured["peak"]
            line = (f"{name:24} measured {measured['peak'] / 2**20:8.2f} MiB  predicted {pred / 2**20:8.2f} MiB"
                    f"  {100 * err:+6.2f}%")
            ok = abs(err) <= TOLERANCE
            if not ok and "expert_rows" in measured:
                busiest = max(max(rows) for rows in measured["expert_rows"])
                high = lint(path, "-D", f"tokens_per_expert={busiest}", *precision(name))["memory"][
                    "peak_allocated_bytes"]
                line += f"; at the busiest expert's {busiest} rows {high / 2**20:.2f} MiB"
                ok = pred * (1 - TOLERANCE) <= measured["peak"] <= high * (1 + TOLERANCE)
            lines.append(line)
            if not ok:
                failures.append(line)
        print("\n".join(lines), file=sys.stderr)
        self.assertFalse(failures, "\n".join(failures))

    def test_memory_fp32_within_3_percent_of_the_cpu_truth(self):
        self.check_memory("fp32")

    # The fp32 tensors a bf16 graph records (RMSNorm, router softmax and loss
    # upcasts) stay fp32 (precision from the graph, issue 42 item 4): -0.00%
    # (Mixtral grouped), -0.43% (Mixtral eager), -0.00% (OLMoE grouped); they
    # were -3.9% to -18.7% when --precision bf16 narrowed them.
    def test_memory_bf16_within_3_percent_of_the_cpu_truth(self):
        self.check_memory("bf16")


def expert_rows(name):
    """Rows each expert of each layer gets in the measured step (its seed, its inputs)."""
    model = getattr(moe_models, name)()
    vocab = moe_models.FAMILIES[name.split("_")[0]][2]["vocab_size"]
    torch.manual_seed(1)   # truth_generic.py's inputs
    ids, labels = torch.randint(0, vocab, (BATCH, SEQ)), torch.randint(0, vocab, (BATCH, SEQ))
    rows = []
    for mod in model.modules():
        if isinstance(getattr(mod, "num_experts", None), int) and type(mod).__name__.endswith("Experts"):
            mod.register_forward_pre_hook(
                lambda m, a: rows.append(torch.bincount(a[1].flatten(), minlength=m.num_experts).tolist()))
    with torch.no_grad():
        model(ids, labels)
    return rows


for _family in ("mixtral", "qwen3moe"):   # test_mixtral_fp32_grouped, ..., test_qwen3moe_bf16_eager
    for _dtype in ("fp32", "bf16"):
        for _impl in ("grouped", "eager"):
            setattr(MoeCapture, f"test_{_family}_{_dtype}_{_impl}",
                    lambda self, c=(_family, _dtype, _impl): self.check_case(*c))


def measure(trial_dir):
    """Rewrites the truth: shared/user-trial's truth_generic.py on each case."""
    cases = {}
    for name in ("mixtral_fp32_grouped", "mixtral_bf16_grouped", "mixtral_fp32_eager", "mixtral_bf16_eager",
                 "olmoe_fp32_grouped", "olmoe_bf16_grouped", "olmoe_fp32_eager"):
        family = name.split("_")[0]
        vocab = moe_models.FAMILIES[family][2]["vocab_size"]
        p = subprocess.run([sys.executable, os.path.join(trial_dir, "truth_generic.py"), f"moe_models:{name}",
                            f"ids<{vocab}:int64[{BATCH},{SEQ}]", f"lab<{vocab}:int64[{BATCH},{SEQ}]"],
                           cwd=trial_dir, env=dict(os.environ, PYTHONPATH=HERE), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, check=True)
        cases[name] = json.loads(p.stdout.strip().splitlines()[-1])
        if name.endswith("_eager"):
            cases[name]["expert_rows"] = expert_rows(name)
        print(name, cases[name]["peak"], file=sys.stderr)
    with open(TRUTH, "w") as f:
        json.dump({"torch": torch.__version__, "harness": "shared/user-trial/truth_generic.py (training step 2, "
                   "Adam foreach=False, torch.profiler allocations)", "batch": BATCH, "seq": SEQ, "cases": cases},
                  f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    if not torch.__version__.startswith("2."):
        print("SKIP: the MoE capture needs torch 2.x")
        sys.exit(77)
    try:
        import transformers  # noqa: F401
    except ImportError:
        print("SKIP: transformers is not installed")
        sys.exit(77)
    if len(sys.argv) == 3 and sys.argv[1] == "--measure":
        measure(sys.argv[2])
        sys.exit(0)
    unittest.main()
