#!/usr/bin/env python3
"""graphlint.check()'s setup keywords are the setup-key table's, and each turns
into the flag the binary takes, with the value the binary resolves (no torch:
the model is a file).

  GRAPHLINT_BINARY=build/tools/graphlint PYTHONPATH=python \
      python3 tests/python/setup_keys_test.py --model tests/fixtures/robustness/control_flow.onnx
"""
import argparse
import inspect
import json
import os
import subprocess
import sys
import unittest

MODEL = None

# check()'s keywords that are not setup keys: the module's inputs, the
# capture, the rule selection and the configuration layers.
NOT_SETUP = {"model", "example_inputs", "kwargs", "loss_output", "select", "ignore", "config", "launch_config",
             "nnodes", "nproc_per_node", "device", "capture", "export_path", "export_dims"}


class SetupKeywords(unittest.TestCase):
    def test_the_table_is_the_binarys(self):
        from graphlint._setup_keys import SETUP_KEYS
        proc = subprocess.run([os.environ["GRAPHLINT_BINARY"], "config", "--keys", "--format", "json"],
                              capture_output=True, text=True, check=True)
        keys = json.loads(proc.stdout)
        self.assertEqual([k.key for k in SETUP_KEYS], [k["key"] for k in keys],
                         "python/graphlint/_setup_keys.py is stale: run scripts/gen_setup_keys.py")

    def test_check_takes_every_key_and_nothing_else(self):
        import graphlint
        from graphlint._setup_keys import SETUP_KEYS
        params = set(inspect.signature(graphlint.check).parameters)
        table = {k.python for k in SETUP_KEYS} | {k.preset[0] for k in SETUP_KEYS if k.preset}
        self.assertEqual(sorted(table - params), [], "setup keys graphlint.check() does not take")
        self.assertEqual(sorted(params - table - NOT_SETUP), [], "check() keywords that are no setup key")

    def test_every_keyword_reaches_the_binary(self):
        import graphlint
        # One value per key, not the default, as the binary reports it back in
        # the report's setup (config --dump's text).
        values = dict(train=True, optimizer="sgd", precision="bf16-mixed", zero=None, fsdp=True,
                      dp_shard=4, tp=2, world_size=8, recompute="selective-layer=3", target="a100-80g",
                      backend="eager", kernels="cpu", gpus_per_node=4, intra="pcie5", inter="ndr",
                      pp_schedule="gpipe", microbatches=None, sequence_parallel=False, async_tp=True,
                      capacity_factor=1.5, dims={"batch": 2})
        args = graphlint._setup_args(values, None, None, None)
        self.assertIn("--fsdp", args)
        self.assertIn("--train=true", args)
        self.assertIn("--sequence-parallel=false", args)
        self.assertEqual(args[args.index("--dim") + 1], "batch=2")
        proc = subprocess.run([os.environ["GRAPHLINT_BINARY"], "config", "--dump", MODEL, "--no-config", *args],
                              capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        dump = proc.stdout
        for line in ("train: true", "optimizer: sgd", "precision: bf16-mixed", "zero: 3", "dp-shard: 4", "tp: 2",
                     "recompute: selective-layer=3", "target: A100-80GB", "backend: eager", "kernels: cpu",
                     "gpus-per-node: 4", 'intra: "pcie5"', 'inter: "ndr"', "pp-schedule: gpipe",
                     "sequence-parallel: false", "async-tp: true", "capacity-factor: 1.5", '"batch": 2'):
            self.assertIn(line, dump)

    def test_none_leaves_the_key_to_the_file(self):
        import graphlint
        self.assertEqual(graphlint._setup_args({"train": None, "tp": None}, None, None, None), [])


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    args, rest = ap.parse_known_args()
    MODEL = args.model
    unittest.main(argv=[sys.argv[0], *rest])
