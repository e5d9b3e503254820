#!/usr/bin/env python3
"""The memory matrix's check rule (validation/recorded_errors.py): a row passes
within the target, or outside it when it was recorded outside and has not
grown by more than 0.5 points; it fails when it crosses the target, regresses,
or misses with no record. No torch: runs in the unit label."""

import json
import os
import sys
import tempfile
import unittest

import recorded_errors as re_   # validation/, from PYTHONPATH (tests/CMakeLists.txt)

T = 0.03


class Verdict(unittest.TestCase):
    def ok(self, errors, recorded):
        return re_.verdict(errors, recorded, T)[0]

    def test_within_the_target_passes_with_or_without_a_record(self):
        self.assertTrue(self.ok({"total": 0.029, "beyond": -0.03}, None))
        self.assertTrue(self.ok({"total": 0.01}, {"total": 0.05}))

    def test_a_miss_without_a_record_fails(self):
        ok, why = re_.verdict({"total": 0.031}, None, T)
        self.assertFalse(ok)
        self.assertIn("no recorded error", why)

    def test_a_row_that_crosses_the_target_fails_however_little(self):
        ok, why = re_.verdict({"beyond": -0.0301}, {"beyond": -0.0299}, T)
        self.assertFalse(ok)
        self.assertIn("crossed out of 3%", why)

    def test_a_recorded_miss_passes_until_it_grows_by_half_a_point(self):
        self.assertTrue(self.ok({"fwd_bwd": -0.0914}, {"fwd_bwd": -0.0914}))
        self.assertTrue(self.ok({"fwd_bwd": -0.0960}, {"fwd_bwd": -0.0914}))
        self.assertTrue(self.ok({"fwd_bwd": 0.0900}, {"fwd_bwd": -0.0914}))   # smaller, other sign
        self.assertTrue(self.ok({"fwd_bwd": -0.0500}, {"fwd_bwd": -0.0914}))  # better
        ok, why = re_.verdict({"fwd_bwd": -0.0970}, {"fwd_bwd": -0.0914}, T)
        self.assertFalse(ok)
        self.assertIn("regressed 0.56 pp", why)

    def test_every_error_of_a_row_is_checked_on_its_own(self):
        # The total was within 3% when recorded: its crossing fails the row
        # even though the recorded miss of the other error still holds.
        ok, why = re_.verdict({"total": 0.04, "beyond": 0.06}, {"total": 0.02, "beyond": 0.06}, T)
        self.assertFalse(ok)
        self.assertIn("total", why)
        self.assertNotIn("beyond", why)


class Record(unittest.TestCase):
    def test_keeps_causes_and_rows_it_did_not_produce(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "recorded.json")
            with open(path, "w") as f:
                json.dump({"t.json": {"rows": {
                    "m|b2|train|fx": {"total": 0.05, "why": "the cause"},
                    "m|b8|inference|fx": {"total": 0.0}}}}, f)
            missing = re_.write(path, "t.json", "2.x", "cmd", [
                ("m|b8|train|fx", {"total": 0.045}, T),      # a miss: takes the b2 row's cause
                ("n|b8|train|fx", {"total": -0.04}, T),      # a new miss: no cause
                ("n|b8|bf16|fx", {"total": 0.001}, T)])      # within: no cause needed
            rows = re_.load(path, "t.json")
        self.assertEqual(rows["m|b8|train|fx"], {"total": 0.045, "why": "the cause"})
        self.assertEqual(rows["n|b8|train|fx"]["why"], re_.UNEXPLAINED)
        self.assertNotIn("why", rows["n|b8|bf16|fx"])
        self.assertIn("m|b8|inference|fx", rows)
        self.assertEqual(missing, ["n|b8|train|fx"])


if __name__ == "__main__":
    unittest.main()
