"""graphlint from Python: lint a model before launching a training job.

    import graphlint
    report = graphlint.check(model, example_inputs, train=True, optimizer="adam",
                             precision="bf16-mixed", world_size=8, zero=3,
                             target="H100-SXM", dims={"batch": 8})
    print(report)                # the text report, memory and cost included
    report.memory.fits           # typed results: diagnostics, memory, cost, fusion
    report.raise_for_errors()    # a pre-launch guard

`model` is an nn.Module (captured with graphlint's exporter, never run for
real beyond what the exporter does) or a path to a model file (.onnx,
.fx.json, .pt2). The numbers come from the graphlint binary that ships in the
same wheel; docs/python.md describes every argument.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Dict, Iterable, Mapping, Optional, Sequence, Union

from ._binary import GraphlintError, binary_path, check_fx_version, path_arg, run
from ._pt2 import export_pt2, is_exported_program, record_python_frames, save_pt2
from ._version import __version__
from .export import FORMAT_VERSION as FX_FORMAT_VERSION
from ._plan import PlanResult, plan
from ._setup_keys import SETUP_KEYS
from .report import (CostSummary, Diagnostic, FusionPlan, LintFailed, MemorySummary, Report,
                     SourceLine)

__all__ = ["check", "plan", "PlanResult", "setup_from_torchtitan", "lint_file", "save_pt2", "export_pt2", "record_python_frames", "Report", "Diagnostic",
           "SourceLine", "MemorySummary", "CostSummary", "FusionPlan", "LintFailed", "GraphlintError", "binary_path",
           "__version__"]

PathLike = Union[str, "os.PathLike[str]"]


def _setup_args(values: Mapping[str, Any], select: Optional[Iterable[str]], ignore: Optional[Iterable[str]],
                config: Optional[PathLike]) -> list:
    """The flags of check()'s setup keywords that are not None, one loop over the setup-key
    table (SETUP_KEYS, generated from the C++ table by scripts/gen_setup_keys.py): `world_size=8`
    -> `--world-size 8`, `train=True` -> `--train=true`, `dims={"batch": 8}` -> `--dim batch=8`,
    `tp_plan={"*.wq": "colwise"}` -> `--tp-plan *.wq=colwise`, `pp_split_points=["layers.8"]` ->
    `--pp-split-points layers.8`, `fsdp=True` -> `--fsdp`."""
    args = []
    for key in SETUP_KEYS:
        if key.preset and values.get(key.preset[0]):
            args.append(key.preset[1])
        value = values.get(key.python)
        if value is None:
            continue
        if key.switch or isinstance(value, bool):
            args.append(f"{key.flag}={'true' if value else 'false'}")
        elif key.mapping:
            for name, entry in value.items():
                args += [key.flag, f"{name}={int(entry) if key.key == 'dims' else entry}"]
        elif isinstance(value, (list, tuple)):
            args += [key.flag, ",".join(str(v) for v in value)]
        else:
            args += [key.flag, str(value)]
    if config is not None:
        args += ["--config", os.fspath(config)]
    for flag, rules in (("--select", select), ("--ignore", ignore)):
        if rules:
            args += [flag, ",".join([rules] if isinstance(rules, str) else list(rules))]
    return args


def lint_file(path: PathLike, *setup_args: str) -> Report:
    """Lints one model file with raw command-line arguments (see `graphlint --help`)."""
    path = os.fspath(path)
    args = [path_arg(path), *setup_args]
    proc = run([*args, "--format", "json"])
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise GraphlintError(f"{path}: graphlint printed no JSON report: {proc.stderr.strip()[:200]}") from None
    return Report(path, args, doc, proc.returncode)


def check(model: Any, example_inputs: Optional[Sequence[Any]] = None, *,
          kwargs: Optional[Mapping[str, Any]] = None, loss_output: Optional[str] = None, train: Optional[bool] = None,
          optimizer: Optional[str] = None, precision: Optional[str] = None,
          world_size: Optional[int] = None, zero: Optional[int] = None, fsdp: bool = False,
          dp_replicate: Optional[int] = None, dp_shard: Optional[int] = None, tp: Optional[int] = None,
          pp: Optional[int] = None, cp: Optional[int] = None, ep: Optional[int] = None,
          pp_schedule: Optional[str] = None, microbatches: Optional[int] = None,
          virtual_stages: Optional[int] = None, pp_split_points: Optional[Sequence[str]] = None,
          sequence_parallel: Optional[bool] = None, async_tp: Optional[bool] = None,
          tp_plan: Optional[Mapping[str, str]] = None, capacity_factor: Optional[float] = None,
          recompute: Optional[str] = None, float8: Optional[str] = None,
          float8_all_gather: Optional[bool] = None, float8_precompute_scale: Optional[bool] = None,
          target: Optional[str] = None, backend: Optional[str] = None, kernels: Optional[str] = None,
          dims: Optional[Mapping[str, int]] = None, gpus_per_node: Optional[int] = None,
          intra: Optional[str] = None, inter: Optional[str] = None,
          select: Optional[Iterable[str]] = None, ignore: Optional[Iterable[str]] = None,
          config: Optional[PathLike] = None, launch_config: Optional[PathLike] = None,
          nnodes: Optional[int] = None, nproc_per_node: Optional[int] = None, device: Optional[str] = None,
          capture: Optional[str] = None, export_path: Optional[PathLike] = None,
          export_dims: Optional[Mapping[str, int]] = None) -> Report:
    """Captures (for an nn.Module) and lints a model; returns a typed Report.

    model          an nn.Module, a torch.export ExportedProgram (linted as a .pt2 whose sizes keep
                   their torch.export.Dim names), or the path of a .onnx / .fx.json / .pt2 file
    example_inputs the positional inputs of one forward call (a tensor or a tuple of tensors); for a
                   module only
    kwargs         the keyword inputs of that call, {"input_ids": ids, "labels": labels}: the module
                   runs forward(*example_inputs, **kwargs); for a module only
    loss_output    with train=True, the output to back-propagate alone (the exporter's --loss-output:
                   a key of a dict or ModelOutput, an index of a tuple); default: a scalar "loss"
                   beside other outputs alone, else every output
    train, optimizer, precision, world_size, zero, fsdp, recompute, target, backend, kernels,
    gpus_per_node, intra, inter
                   the training setup, as the CLI flags of the same names (docs/commands/lint.md); every
                   setup keyword is a key of `graphlint config --keys` (graphlint._setup_keys);
                   None leaves the key to the config file and the defaults
    dp_replicate, dp_shard, tp, pp, cp, ep
                   the device mesh (--dp-replicate, --dp-shard, --tp, --pp, --cp, --ep); the world
                   size is dp_replicate x dp_shard x cp x tp x pp
    pp_schedule, microbatches, virtual_stages, pp_split_points, sequence_parallel, async_tp,
    tp_plan, capacity_factor
                   how the mesh runs (--pp-schedule, --microbatches, --virtual-stages,
                   --pp-split-points, --sequence-parallel, --async-tp, --tp-plan GLOB=STYLE per
                   entry of the mapping, --capacity-factor)
    float8, float8_all_gather, float8_precompute_scale
                   torchao's float8 training: "none", "tensorwise" or "rowwise" (--float8), FSDP2's
                   fp8 all-gather and precomputed scales (--float8-all-gather, --float8-precompute-scale)
    dims           symbolic dims to bind, {"batch": 8} (the CLI's -D batch=8)
    select, ignore rule selection (codes, names or prefixes)
    config         a .graphlint.yaml to use instead of the discovered one
    launch_config  a DeepSpeed ds_config.json, accelerate config or torchtitan job config TOML read
                   as the setup (--launch-config; the other arguments here win over it)
    nnodes, nproc_per_node
                   torchrun's --nnodes/--nproc-per-node: world size nnodes x nproc_per_node
    device         "cuda": record the module on cuda:0 even without a GPU (the exporter's --device)
    capture        the exporter's capture mode (graphlint-export --help)
    export_path    keep the captured graph at this path (default: a temporary file)
    export_dims    the exporter's --dim NAME=SIZE: which traced sizes become symbols
    """
    values = dict(locals())  # the setup keywords, read through the table (_setup_args)
    setup = _setup_args(values, select, ignore, config)
    # The launch config is a layer under every flag, wherever it is written.
    for flag, value in (("--launch-config", launch_config), ("--nnodes", nnodes),
                        ("--nproc-per-node", nproc_per_node)):
        if value is not None:
            setup += [flag, os.fspath(value) if flag == "--launch-config" else str(int(value))]
    module_only = [name for name, value in (("example_inputs", example_inputs), ("kwargs", kwargs),
                                            ("loss_output", loss_output)) if value is not None]
    if isinstance(model, (str, os.PathLike)):
        if module_only:
            raise TypeError(f"{module_only[0]} is only for an nn.Module; a model file already has its inputs")
        return lint_file(model, *setup)
    if is_exported_program(model):
        if module_only:
            raise TypeError(f"{module_only[0]} is only for an nn.Module; an ExportedProgram already has its inputs")
        tmp = tempfile.TemporaryDirectory(prefix="graphlint-")
        out = os.fspath(export_path) if export_path is not None else os.path.join(tmp.name, "program.pt2")
        save_pt2(model, out)
        report = lint_file(out, *setup)
        report._keepalive = tmp
        return report

    if example_inputs is None and not kwargs:
        raise TypeError("check(module, example_inputs, kwargs=...): a module needs its example inputs")
    if example_inputs is None:
        inputs: Sequence[Any] = ()
    else:
        inputs = example_inputs if isinstance(example_inputs, (tuple, list)) else (example_inputs,)
    options: Dict[str, Any] = {"train": bool(train), "dims": list((export_dims or {}).items()), "device": device,
                               "kwargs": dict(kwargs or {}), "loss_output": loss_output}
    if capture is not None:
        options["capture"] = capture
    if export_path is not None:
        out = os.fspath(export_path)
        _capture(model, inputs, out, options)
        return lint_file(out, *setup)
    # The export lives as long as the report (it is removed when the report
    # is garbage-collected), so str(report) and to_sarif() can render it.
    tmp = tempfile.TemporaryDirectory(prefix="graphlint-")
    out = os.path.join(tmp.name, f"{type(model).__name__}.fx.json")
    _capture(model, inputs, out, options)
    report = lint_file(out, *setup)
    report._keepalive = tmp
    return report


def _capture(model, inputs, out, options) -> None:
    check_fx_version(FX_FORMAT_VERSION)
    # The exporter imports torch: loaded when a module is captured, never by `import graphlint`.
    from .export.cli import ExportError, export_module
    try:
        export_module(model, inputs, out, **options)
    except ExportError as e:
        raise GraphlintError(str(e)) from None


def _torchtitan_get(config: Any, *paths: str) -> Any:
    """The first of `paths` ("parallelism.tensor_parallel_degree") that `config` has, else None."""
    for path in paths:
        obj = config
        for part in path.split("."):
            obj = getattr(obj, part, None)
            if obj is None:
                break
        if obj is not None:
            return obj
    return None


def _unmodelled(what: str) -> None:
    import warnings
    warnings.warn(f"torchtitan config: {what} is not modelled by graphlint; ignored", stacklevel=3)


def setup_from_torchtitan(config: Any) -> Dict[str, Any]:
    """Keyword arguments of check() from a torchtitan Trainer.Config / JobConfig (duck-typed).

    Reads the attributes the TOML job configs hold (docs/configuration.md, "Launch configs"):
    parallelism.*_degree, pipeline_parallel_schedule / _microbatch_size / _split_points,
    enable_async_tensor_parallel, training.local_batch_size (or batch_size) and seq_len as dims,
    training.mixed_precision_param, activation_checkpoint.mode, compile.enable, optimizer.name.
    torchtitan is not imported. data_parallel_shard_degree -1 (the rest of the ranks) is passed
    as dp_shard=-1, which needs the world size (nnodes/nproc_per_node or world_size).
    A value graphlint does not model is a warning naming the attribute (and is left out); a degree
    or micro-batch size that cannot be a mesh raises ValueError naming it.
    """
    out: Dict[str, Any] = {"train": True}

    def degree(name: str) -> Optional[int]:
        v = _torchtitan_get(config, "parallelism." + name, "training." + name)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, int) or (v < 1 and not (v == -1 and name.startswith(
                "data_parallel_shard"))):
            raise ValueError(f"torchtitan config: parallelism.{name} = {v!r} is not a degree graphlint reads")
        return int(v)

    for name, key in (("data_parallel_replicate_degree", "dp_replicate"),
                      ("data_parallel_shard_degree", "dp_shard"), ("tensor_parallel_degree", "tp"),
                      ("pipeline_parallel_degree", "pp"), ("context_parallel_degree", "cp"),
                      ("expert_parallel_degree", "ep")):
        v = degree(name)
        if v is not None:
            out[key] = v
    schedules = {"gpipe": "gpipe", "1f1b": "1f1b", "interleaved1f1b": "interleaved-1f1b",
                 "zbvzerobubble": "zbv"}
    sched = _torchtitan_get(config, "parallelism.pipeline_parallel_schedule")
    if sched is not None:
        if str(sched).lower() not in schedules:
            _unmodelled(f"parallelism.pipeline_parallel_schedule = {sched!r}")
        else:
            out["pp_schedule"] = schedules[str(sched).lower()]
    split = _torchtitan_get(config, "parallelism.pipeline_parallel_split_points")
    if split:
        out["pp_split_points"] = [str(p) for p in split]
    async_tp = _torchtitan_get(config, "parallelism.enable_async_tensor_parallel")
    if async_tp is not None:
        out["async_tp"] = bool(async_tp)
    # torchao's float8 training: model.converters ["float8"] (older: float8.enable_float8_linear),
    # float8.recipe_name (torchao's default tensorwise), the FSDP2 fp8 all-gather options.
    converters = _torchtitan_get(config, "model.converters") or []
    if "float8" in [str(c) for c in converters] or _torchtitan_get(config, "float8.enable_float8_linear"):
        out["float8"] = str(_torchtitan_get(config, "float8.recipe_name") or "tensorwise").lower()
        for key, name in (("float8.enable_fsdp_float8_all_gather", "float8_all_gather"),
                          ("float8.precompute_float8_dynamic_scale_for_fsdp", "float8_precompute_scale")):
            v = _torchtitan_get(config, key)
            if v is not None:
                out[name] = bool(v)
    dims: Dict[str, int] = {}
    batch = _torchtitan_get(config, "training.local_batch_size", "training.batch_size")
    if batch is not None:
        dims["batch"] = int(batch)
    seq = _torchtitan_get(config, "training.seq_len")
    if seq is not None:
        dims["seq"] = int(seq)
    if dims:
        out["dims"] = dims
    mb = _torchtitan_get(config, "parallelism.pipeline_parallel_microbatch_size")
    if mb is not None and out.get("pp", 1) > 1:
        if batch is None or int(mb) < 1 or int(batch) % int(mb):
            raise ValueError(f"torchtitan config: parallelism.pipeline_parallel_microbatch_size = {mb!r} does "
                             f"not divide training.local_batch_size = {batch!r}")
        out["microbatches"] = int(batch) // int(mb)
    precisions = {"bfloat16": "bf16-mixed", "float16": "fp16-mixed", "float32": "fp32"}
    param = _torchtitan_get(config, "training.mixed_precision_param")
    if param is not None:
        if str(param) not in precisions:
            _unmodelled(f"training.mixed_precision_param = {param!r}")
        else:
            out["precision"] = precisions[str(param)]
    mode = _torchtitan_get(config, "activation_checkpoint.mode")
    if mode is not None:
        if mode == "none" or mode == "full":
            out["recompute"] = "none" if mode == "none" else "layer"
        else:
            option = _torchtitan_get(config, "activation_checkpoint.selective_ac_option")
            _unmodelled(f"activation_checkpoint.mode = {mode!r} (selective_ac_option {option!r})")
    compiled = _torchtitan_get(config, "compile.enable")
    if compiled is not None and not isinstance(compiled, (str, bytes)):
        out["backend"] = "inductor" if compiled else "eager"
    opt = _torchtitan_get(config, "optimizer.name")
    if opt is not None:
        if str(opt).lower() not in ("adam", "adamw", "sgd"):
            _unmodelled(f"optimizer.name = {opt!r}")
        else:
            out["optimizer"] = str(opt).lower()
    return out
