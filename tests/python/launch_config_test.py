"""setup_from_torchtitan: a torchtitan Trainer.Config / JobConfig shape (a SimpleNamespace, no
torchtitan import) turned into graphlint.check() keyword arguments. Run:
PYTHONPATH=python python3 tests/python/launch_config_test.py (the package in the source tree)."""
import warnings
from types import SimpleNamespace as NS

import graphlint


def job(**over):
    cfg = NS(
        parallelism=NS(data_parallel_replicate_degree=1, data_parallel_shard_degree=-1, tensor_parallel_degree=2,
                       pipeline_parallel_degree=2, context_parallel_degree=1, expert_parallel_degree=1,
                       pipeline_parallel_schedule="Interleaved1F1B", pipeline_parallel_microbatch_size=2,
                       pipeline_parallel_split_points=["layers.8", "layers.16", "layers.24"],
                       enable_async_tensor_parallel=False),
        training=NS(local_batch_size=8, seq_len=8192, mixed_precision_param="bfloat16"),
        activation_checkpoint=NS(mode="full", selective_ac_option="op"),
        compile=NS(enable=True),
        optimizer=NS(name="AdamW", lr=3e-4),
    )
    for path, value in over.items():
        obj = cfg
        parts = path.split("__")
        for p in parts[:-1]:
            obj = getattr(obj, p)
        setattr(obj, parts[-1], value)
    return cfg


def main():
    got = graphlint.setup_from_torchtitan(job())
    want = {"train": True, "dp_replicate": 1, "dp_shard": -1, "tp": 2, "pp": 2, "cp": 1, "ep": 1,
            "pp_schedule": "interleaved-1f1b", "pp_split_points": ["layers.8", "layers.16", "layers.24"],
            "async_tp": False, "dims": {"batch": 8, "seq": 8192}, "microbatches": 4, "precision": "bf16-mixed",
            "recompute": "layer", "backend": "inductor", "optimizer": "adamw"}
    assert got == want, got

    # Unmodelled values: a warning naming the attribute, the key left out.
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        got = graphlint.setup_from_torchtitan(job(activation_checkpoint__mode="selective"))
    assert "recompute" not in got, got
    assert len(w) == 1 and "activation_checkpoint.mode = 'selective'" in str(w[0].message), [str(x.message) for x in w]

    # A micro-batch size that does not divide the local batch, a degree of 0: ValueError naming it.
    for over, name in (({"parallelism__pipeline_parallel_microbatch_size": 3}, "pipeline_parallel_microbatch_size"),
                       ({"parallelism__tensor_parallel_degree": 0}, "tensor_parallel_degree")):
        try:
            graphlint.setup_from_torchtitan(job(**over))
        except ValueError as e:
            assert name in str(e), e
        else:
            raise AssertionError(f"{over}: no ValueError")

    # Older releases kept the degrees and batch_size under training.
    old = NS(training=NS(batch_size=4, seq_len=2048, tensor_parallel_degree=4, compile=False))
    got = graphlint.setup_from_torchtitan(old)
    assert got == {"train": True, "tp": 4, "dims": {"batch": 4, "seq": 2048}}, got
    print("launch_config_test: ok")


if __name__ == "__main__":
    main()
