#!/usr/bin/env python3
"""graphlint.plan() (docs/plan.md): the Python API runs `graphlint plan
--format json` and returns its contract; its numbers are the CLI's, and a
bad argument raises GraphlintError with the binary's one-line message. No
torch: the model is a captured file.

  GRAPHLINT_BINARY=build/tools/graphlint PYTHONPATH=python \
      python3 tests/python/plan_api_test.py --model tests/fixtures/fx/tiny_llama.train.fx.json
"""
import argparse
import json
import os
import subprocess
import sys
import unittest

MODEL = None


class PlanApi(unittest.TestCase):
    def test_the_result_is_the_clis_json(self):
        import graphlint
        r = graphlint.plan(MODEL, target=["H100-SXM", "L4"], gpus=2, global_batch=4,
                           fix={"backend": "eager"}, jobs=2)
        self.assertEqual(r.evaluated, len(r.candidates))
        self.assertTrue(r.best["fits"])
        self.assertEqual(set(r.best["setup"]), {"dp_replicate", "dp_shard", "tp", "pp", "cp", "ep", "batch",
                                                "microbatches", "pp_schedule", "recompute", "float8", "backend",
                                                "target", "gpus"})
        self.assertTrue(all(c["setup"]["backend"] == "eager" for c in r.candidates))
        self.assertIn("torchtitan.train", r.launch["torchrun"])
        cli = subprocess.run([os.environ["GRAPHLINT_BINARY"], "plan", MODEL, "--format", "json", "--target",
                              "H100-SXM,L4", "--gpus", "2", "--global-batch", "4", "--fix", "backend=eager"],
                             capture_output=True, text=True, check=True)
        doc = json.loads(cli.stdout)
        self.assertEqual([c["peak_reserved_bytes"] for c in doc["candidates"]],
                         [c["peak_reserved_bytes"] for c in r.candidates])
        self.assertEqual(doc["candidates"][0]["step_time_s"], r.best["step_time_s"])

    def test_bad_arguments_raise_the_binarys_message(self):
        import graphlint
        for kwargs, want in (({"fix": {"tpp": 2}}, "--fix: unknown key 'tpp'"),
                             ({"objective": "fast"}, "--objective must be one of"),
                             ({"gpus": "16..8"}, "the range is empty")):
            with self.subTest(**{k: str(v) for k, v in kwargs.items()}):
                with self.assertRaises(graphlint.GraphlintError) as cm:
                    graphlint.plan(MODEL, **kwargs)
                self.assertIn(want, str(cm.exception))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    args, rest = ap.parse_known_args()
    MODEL = os.path.abspath(args.model)
    unittest.main(argv=[sys.argv[0], *rest])
