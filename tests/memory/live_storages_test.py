#!/usr/bin/env python3
"""The memory truth's own checks (validation/validate_memory.py LiveStorages): what
it counts at op boundaries, and the fused fast-path kernels whose internal
allocations it reads from the profiler. Run by CTest on each torch line."""

import unittest

import torch

from validate_memory import LiveStorages   # validation/, from PYTHONPATH (tests/CMakeLists.txt)

F32 = 4


class LiveStoragesTest(unittest.TestCase):
    def test_op_boundaries_count_each_live_storage_once(self):
        x = torch.randn(64, 64)
        live = LiveStorages()
        live.track([x])
        live.sample("start")
        with live:
            y = x.relu()
            z = y.view(-1)   # a view: no new storage
            w = y * 2
        del z
        self.assertEqual(live.samples[0][1], x.numel() * F32)
        self.assertEqual(live.peak, 3 * x.numel() * F32, live.samples)
        del w

    def test_fused_attention_fast_path_is_measured_inside(self):
        # nn.MultiheadAttention in eval under no_grad calls one fused kernel;
        # its in-projection (b, s, 3d) and the q, k, v it splits into are
        # allocated inside it, where op boundaries cannot see them.
        b, s, d = 2, 17, 128
        mha = torch.nn.MultiheadAttention(d, 4, batch_first=True).eval()
        x = torch.randn(b, s, d)
        with torch.no_grad():
            live = LiveStorages()
            live.track(list(mha.parameters()) + [x])
            live.sample("start")
            with live:
                out, _ = mha(x, x, x, need_weights=False)
        labels = [label for label, _ in live.samples]
        if "_native_multi_head_attention" not in labels:
            self.skipTest("this torch runs nn.MultiheadAttention's slow path here")
        inside = dict(live.samples)["_native_multi_head_attention (inside)"]
        start = live.samples[0][1]
        self.assertGreaterEqual(inside - start, 2 * 3 * b * s * d * F32,
                                "the in-projection and q, k, v are live together inside the kernel")
        self.assertEqual(live.peak, inside)
        self.assertEqual(out.shape, (b, s, d))


if __name__ == "__main__":
    unittest.main()
