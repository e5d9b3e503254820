"""The setup keys, generated from src/base/SetupKeys.cpp by scripts/gen_setup_keys.py: do not edit.

One row per key of `.graphlint.yaml`'s `setup:` mapping, as `graphlint config --keys`
prints it: graphlint.check()'s keyword (`python`), the flag it becomes, and how a value
is written (`switch`: a boolean, `--flag=true|false`; `mapping`: one `flag NAME=VALUE`
per entry; otherwise one `flag VALUE`, a list joined with commas). `preset`: a keyword
that sets the key to a fixed value (`fsdp=True` is `zero=3`).
"""
from typing import NamedTuple, Optional, Tuple


class SetupKey(NamedTuple):
    key: str
    python: str
    flag: str
    value: str
    switch: bool
    mapping: bool
    preset: Optional[Tuple[str, str, str]]  # (keyword, flag, value)
    help: str


SETUP_KEYS: Tuple[SetupKey, ...] = (
    SetupKey('target', 'target', '--target', 'GPU', False, False,
             None,
             'hardware profile for GL141/GL142 and the memory capacity of GL201 (default H100-SXM): V100, A100-40GB, A100-80GB, H100-SXM, H100-PCIe, H100-96GB-HBM2e, H200, B200, MI300X, L4, RTX-4090, or one from hardware.yaml (docs/hardware.md)'),
    SetupKey('kernels', 'kernels', '--kernels', 'cuda|cpu', False, False,
             None,
             "whose PyTorch kernels the memory plan assumes where the CPU's keep other tensors than CUDA's (dropout: a bool mask on CUDA, an input-sized noise tensor on the CPU); default cuda, the GPU the prediction is for; cpu compares with a measurement on the CPU (docs/memory.md)"),
    SetupKey('backend', 'backend', '--backend', 'inductor|inductor-cpu|tensorrt|ort-cpu|ort-cuda|eager', False, False,
             None,
             'fusion legality the planner applies (default inductor; ort = ort-cpu); docs/fusion.md describes each backend'),
    SetupKey('dims', 'dims', '--dim', 'NAME=SIZE', False, True,
             None,
             "bind a symbolic dimension (repeatable), e.g. -D batch=8; size expressions over it (batch*seq) are rescaled. A NAME that binds nothing in a file is a warning on stderr (`FILE: warning: -D NAME=N binds nothing: ...`) naming the file's size symbols and inputs; the lint goes on"),
    SetupKey('train', 'train', '--train', '', True, False,
             None,
             'a training step (forward, backward, optimizer)'),
    SetupKey('optimizer', 'optimizer', '--optimizer', 'sgd|momentum|adam|adamw', False, False,
             None,
             '(default adam)'),
    SetupKey('precision', 'precision', '--precision', 'fp32|tf32|fp16-mixed|bf16-mixed|bf16', False, False,
             None,
             '(default fp32)'),
    SetupKey('zero', 'zero', '--zero', '0|1|2|3', False, False,
             ('fsdp', '--fsdp', '3'),
             'ZeRO stage (default 0); --fsdp is --zero 3'),
    SetupKey('world-size', 'world_size', '--world-size', 'N', False, False,
             None,
             "ranks in all (default: the mesh's product, 1); alone, the data-parallel degree (dp-shard under --zero 1..3, dp-replicate under --zero 0); with mesh degrees that multiply to another number, exit 2"),
    SetupKey('dp-replicate', 'dp_replicate', '--dp-replicate', 'N', False, False,
             None,
             "data-parallel replicas (DDP; HSDP's replicate dimension with --dp-shard): gradients all-reduced across them (default 1)"),
    SetupKey('dp-shard', 'dp_shard', '--dp-shard', 'N', False, False,
             None,
             "data-parallel ranks the model states are sharded over: FSDP2's fully_shard on each repeated block plus the root (default 1); with --zero K, DeepSpeed's ZeRO-K over these ranks; -1: the ranks the world size leaves (torchtitan's data_parallel_shard_degree -1)"),
    SetupKey('tp', 'tp', '--tp', 'N', False, False,
             None,
             "tensor-parallel degree (default 1): DTensor's colwise/ rowwise plan of the model's family (or --tp-plan) shards weights, activations and matmuls"),
    SetupKey('pp', 'pp', '--pp', 'N', False, False,
             None,
             'pipeline-parallel stages (default 1); see --pp-schedule, --microbatches'),
    SetupKey('cp', 'cp', '--cp', 'N', False, False,
             None,
             'context-parallel degree: the sequence sharded (ring attention; default 1)'),
    SetupKey('ep', 'ep', '--ep', 'N', False, False,
             None,
             'expert-parallel degree (default 1): experts sharded over ep ranks of dp-shard x cp, as torchtitan does; it does not multiply the world size'),
    SetupKey('sequence-parallel', 'sequence_parallel', '--sequence-parallel', '', True, False,
             None,
             "Megatron's sequence parallelism with --tp (default auto: on when tp > 1; --sequence-parallel=false off): norms and dropout on a sequence shard, all-gather + reduce-scatter per block instead of an all-reduce"),
    SetupKey('async-tp', 'async_tp', '--async-tp', '', True, False,
             None,
             "async tensor parallelism (torchtitan's async_tp): each tp region's all-gather / reduce-scatter overlaps its own matmuls in tp chunks (needs sequence parallelism)"),
    SetupKey('float8', 'float8', '--float8', 'none|tensorwise|rowwise', False, False,
             None,
             "torchao's float8 training (Float8Linear; default none): linears with both dims divisible by 16, but the output layer (output, lm_head), run their three GEMMs at the fp8 peak; each GEMM's operands are cast (amax + scaled cast kernels) per the recipe; needs an fp8 target"),
    SetupKey('float8-all-gather', 'float8_all_gather', '--float8-all-gather', '', True, False,
             None,
             "with --float8 tensorwise and FSDP2 (dp-shard > 1): the converted weights are all-gathered in fp8, 1 byte per element (torchao's enable_fsdp_float8_all_gather)"),
    SetupKey('float8-precompute-scale', 'float8_precompute_scale', '--float8-precompute-scale', '', True, False,
             None,
             "with --float8-all-gather: the weights' scales from one amax all-reduce per step after the optimizer (torchao's precompute_float8_dynamic_scale_for_fsdp), not one per weight per all-gather"),
    SetupKey('tp-plan', 'tp_plan', '--tp-plan', 'GLOB=STYLE', False, True,
             None,
             "a module-path glob's tensor-parallel style (repeatable; colwise, rowwise, sequence, replicate), e.g. --tp-plan '*.attn.qkv=colwise'; tried in order before the default plan of the model's family"),
    SetupKey('pp-schedule', 'pp_schedule', '--pp-schedule', 'gpipe|1f1b|interleaved-1f1b|zbv', False, False,
             None,
             'pipeline schedule with --pp (default 1f1b)'),
    SetupKey('microbatches', 'microbatches', '--microbatches', 'N', False, False,
             None,
             "micro-batches per step with --pp (default pp); the graph's batch is the local batch they split"),
    SetupKey('virtual-stages', 'virtual_stages', '--virtual-stages', 'V', False, False,
             None,
             'model chunks per pipeline rank for interleaved-1f1b (default 2; zbv always 2, gpipe and 1f1b 1)'),
    SetupKey('pp-split-points', 'pp_split_points', '--pp-split-points', 'M1,M2,...', False, False,
             None,
             "the module each pipeline stage after the first starts at (torchtitan's pipeline_parallel_split_points); default: stages balanced by predicted time"),
    SetupKey('capacity-factor', 'capacity_factor', '--capacity-factor', 'C', False, False,
             None,
             'MoE expert capacity over an even share of the tokens (default 1.0): sizes the expert-parallel all-to-all'),
    SetupKey('recompute', 'recompute', '--recompute', 'none|layer|sqrt|selective-op|selective-layer=N', False, False,
             None,
             "activation checkpointing (default none): layer (alias full) checkpoints each repeated layer, as torch.utils.checkpoint around every block; sqrt cuts the graph into ~sqrt(n) segments; selective-op keeps torchtitan's save list (every other matmul, attention, reduce-scatter, max) in each layer and recomputes the rest; selective-layer=N checkpoints every N-th layer (torchtitan's ac_freq, default 2); the recomputed forward is added to the backward"),
    SetupKey('gpus-per-node', 'gpus_per_node', '--gpus-per-node', 'G', False, False,
             None,
             'ranks per node (default 8)'),
    SetupKey('intra', 'intra', '--intra', 'NAME', False, False,
             None,
             "interconnect inside a node (default: the target's; docs/hardware.md)"),
    SetupKey('inter', 'inter', '--inter', 'NAME', False, False,
             None,
             "interconnect between nodes (default: the target's; docs/hardware.md)"),
)
