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

from ._binary import GraphlintError, binary_path, path_arg, run
from ._pt2 import export_pt2, is_exported_program, record_python_frames, save_pt2
from ._version import __version__
from .report import (CostSummary, Diagnostic, FusionPlan, LintFailed, MemorySummary, Report,
                     SourceLine)

__all__ = ["check", "lint_file", "save_pt2", "export_pt2", "record_python_frames", "Report", "Diagnostic",
           "SourceLine", "MemorySummary", "CostSummary", "FusionPlan", "LintFailed", "GraphlintError", "binary_path",
           "__version__"]

PathLike = Union[str, "os.PathLike[str]"]


def _setup_args(train: bool, optimizer: Optional[str], precision: Optional[str],
                world_size: Optional[int], zero: Optional[int], fsdp: bool, recompute: Optional[str],
                target: Optional[str], backend: Optional[str], dims: Optional[Mapping[str, int]],
                gpus_per_node: Optional[int], intra: Optional[str], inter: Optional[str],
                select: Optional[Iterable[str]], ignore: Optional[Iterable[str]],
                config: Optional[PathLike], mesh: Optional[Mapping[str, Optional[int]]] = None,
                parallel: Optional[Mapping[str, Any]] = None) -> list:
    args = []
    if train:
        args.append("--train")
    for flag, value in (("--optimizer", optimizer), ("--precision", precision),
                        ("--world-size", world_size), ("--zero", zero), ("--recompute", recompute),
                        ("--target", target), ("--backend", backend), ("--gpus-per-node", gpus_per_node),
                        ("--intra", intra), ("--inter", inter), ("--config", config)):
        if value is not None:
            args += [flag, os.fspath(value) if flag == "--config" else str(value)]
    # The device mesh: dp_replicate=2 -> --dp-replicate 2, tp=8 -> --tp 8.
    for name, degree in (mesh or {}).items():
        if degree is not None:
            args += ["--" + name.replace("_", "-"), str(int(degree))]
    # How the mesh runs: pp_schedule="1f1b" -> --pp-schedule 1f1b, async_tp=True
    # -> --async-tp=true, tp_plan={"*.wq": "colwise"} -> --tp-plan '*.wq=colwise'.
    for name, value in (parallel or {}).items():
        flag = "--" + name.replace("_", "-")
        if value is None:
            continue
        if isinstance(value, bool):
            args.append(f"{flag}={'true' if value else 'false'}")
        elif isinstance(value, Mapping):
            for glob, style in value.items():
                args += [flag, f"{glob}={style}"]
        elif isinstance(value, (list, tuple)):
            args += [flag, ",".join(str(v) for v in value)]
        else:
            args += [flag, str(value)]
    if fsdp:
        args.append("--fsdp")
    for name, size in (dims or {}).items():
        args += ["-D", f"{name}={int(size)}"]
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


def check(model: Any, example_inputs: Optional[Sequence[Any]] = None, *, train: bool = False,
          optimizer: Optional[str] = None, precision: Optional[str] = None,
          world_size: Optional[int] = None, zero: Optional[int] = None, fsdp: bool = False,
          dp_replicate: Optional[int] = None, dp_shard: Optional[int] = None, tp: Optional[int] = None,
          pp: Optional[int] = None, cp: Optional[int] = None, ep: Optional[int] = None,
          pp_schedule: Optional[str] = None, microbatches: Optional[int] = None,
          virtual_stages: Optional[int] = None, pp_split_points: Optional[Sequence[str]] = None,
          sequence_parallel: Optional[bool] = None, async_tp: Optional[bool] = None,
          tp_plan: Optional[Mapping[str, str]] = None, capacity_factor: Optional[float] = None,
          recompute: Optional[str] = None, target: Optional[str] = None, backend: Optional[str] = None,
          dims: Optional[Mapping[str, int]] = None, gpus_per_node: Optional[int] = None,
          intra: Optional[str] = None, inter: Optional[str] = None,
          select: Optional[Iterable[str]] = None, ignore: Optional[Iterable[str]] = None,
          config: Optional[PathLike] = None, device: Optional[str] = None,
          capture: Optional[str] = None, export_path: Optional[PathLike] = None,
          export_dims: Optional[Mapping[str, int]] = None) -> Report:
    """Captures (for an nn.Module) and lints a model; returns a typed Report.

    model          an nn.Module, a torch.export ExportedProgram (linted as a .pt2 whose sizes keep
                   their torch.export.Dim names), or the path of a .onnx / .fx.json / .pt2 file
    example_inputs the inputs of one forward call (a tensor or a tuple of tensors); for a module only
    train, optimizer, precision, world_size, zero, fsdp, recompute, target, backend, gpus_per_node,
    intra, inter   the training setup, as the CLI flags of the same names (docs/cli.md)
    dp_replicate, dp_shard, tp, pp, cp, ep
                   the device mesh (--dp-replicate, --dp-shard, --tp, --pp, --cp, --ep); the world
                   size is dp_replicate x dp_shard x cp x tp x pp
    pp_schedule, microbatches, virtual_stages, pp_split_points, sequence_parallel, async_tp,
    tp_plan, capacity_factor
                   how the mesh runs (--pp-schedule, --microbatches, --virtual-stages,
                   --pp-split-points, --sequence-parallel, --async-tp, --tp-plan GLOB=STYLE per
                   entry of the mapping, --capacity-factor)
    dims           symbolic dims to bind, {"batch": 8} (the CLI's -D batch=8)
    select, ignore rule selection (codes, names or prefixes)
    config         a .graphlint.yaml to use instead of the discovered one
    device         "cuda": record the module on cuda:0 even without a GPU (the exporter's --device)
    capture        the exporter's capture mode (graphlint-export --help)
    export_path    keep the captured graph at this path (default: a temporary file)
    export_dims    the exporter's --dim NAME=SIZE: which traced sizes become symbols
    """
    setup = _setup_args(train, optimizer, precision, world_size, zero, fsdp, recompute, target,
                        backend, dims, gpus_per_node, intra, inter, select, ignore, config,
                        {"dp_replicate": dp_replicate, "dp_shard": dp_shard, "tp": tp, "pp": pp, "cp": cp,
                         "ep": ep},
                        {"pp_schedule": pp_schedule, "microbatches": microbatches,
                         "virtual_stages": virtual_stages, "pp_split_points": pp_split_points,
                         "sequence_parallel": sequence_parallel, "async_tp": async_tp, "tp_plan": tp_plan,
                         "capacity_factor": capacity_factor})
    if isinstance(model, (str, os.PathLike)):
        if example_inputs is not None:
            raise TypeError("example_inputs is only for an nn.Module; a model file already has its inputs")
        return lint_file(model, *setup)
    if is_exported_program(model):
        if example_inputs is not None:
            raise TypeError("example_inputs is only for an nn.Module; an ExportedProgram already has its inputs")
        tmp = tempfile.TemporaryDirectory(prefix="graphlint-")
        out = os.fspath(export_path) if export_path is not None else os.path.join(tmp.name, "program.pt2")
        save_pt2(model, out)
        report = lint_file(out, *setup)
        report._keepalive = tmp
        return report

    from ._export import exporter
    exp = exporter()
    if example_inputs is None:
        raise TypeError("check(module, example_inputs): a module needs its example inputs")
    inputs = example_inputs if isinstance(example_inputs, (tuple, list)) else (example_inputs,)
    kwargs: Dict[str, Any] = {"train": train, "dims": list((export_dims or {}).items()), "device": device}
    if capture is not None:
        kwargs["capture"] = capture
    if export_path is not None:
        out = os.fspath(export_path)
        _capture(exp, model, inputs, out, kwargs)
        return lint_file(out, *setup)
    # The export lives as long as the report (it is removed when the report
    # is garbage-collected), so str(report) and to_sarif() can render it.
    tmp = tempfile.TemporaryDirectory(prefix="graphlint-")
    out = os.path.join(tmp.name, f"{type(model).__name__}.fx.json")
    _capture(exp, model, inputs, out, kwargs)
    report = lint_file(out, *setup)
    report._keepalive = tmp
    return report


def _capture(exp, model, inputs, out, kwargs) -> None:
    from ._binary import check_fx_version
    check_fx_version(exp.FORMAT_VERSION)
    try:
        exp.export_module(model, inputs, out, **kwargs)
    except exp.ExportError as e:
        raise GraphlintError(str(e)) from None
