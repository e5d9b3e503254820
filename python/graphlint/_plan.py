"""graphlint.plan(): which setup to launch, searched from the model's own graph.

    import graphlint
    result = graphlint.plan("llama3_8b.fx.json", target=["H100-SXM", "A100-80GB"],
                            gpus=[8, 16], global_batch=64, dims={"seq": 8192}, objective="cost")
    best = result.best                 # a dict of the JSON contract: setup, fits, step_time_s, ...
    best["setup"]["tp"], best["usd_per_million_tokens"]
    result.launch["torchtitan_toml"]   # the job config of the top pick

It runs `graphlint plan ... --format json` (docs/plan.md describes the JSON:
`candidates[]` best first, each with `setup`, `fits`, `reason`,
`peak_reserved_bytes`, `step_time_s`, `tokens_per_second_per_gpu`,
`usd_per_million_tokens`; and `evaluated`).
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from ._binary import GraphlintError, path_arg, run

PathLike = Union[str, "os.PathLike[str]"]


class PlanResult:
    """The JSON of `graphlint plan`, with the fields users read most as attributes."""

    def __init__(self, doc: Dict[str, Any], args: List[str]):
        self.doc = doc
        self.args = args

    @property
    def candidates(self) -> List[Dict[str, Any]]:
        """Every evaluated setup: those that fit by the objective, best first, then those that do not."""
        return self.doc["candidates"]

    @property
    def fitting(self) -> List[Dict[str, Any]]:
        return [c for c in self.candidates if c["fits"]]

    @property
    def best(self) -> Optional[Dict[str, Any]]:
        """The top pick, or None when no setup fits."""
        first = self.candidates[0] if self.candidates else None
        return first if first is not None and first["fits"] else None

    @property
    def evaluated(self) -> int:
        return self.doc["evaluated"]

    @property
    def launch(self) -> Optional[Dict[str, str]]:
        """torchrun, the torchtitan TOML and the lint command line of the top pick."""
        return self.doc.get("launch")

    @property
    def runner_up(self) -> Optional[str]:
        return self.doc.get("runner_up")

    def __repr__(self) -> str:
        b = self.best
        return (f"PlanResult(evaluated={self.evaluated}, fitting={self.doc['fitting']}, "
                f"best={b['setup'] if b else None})")


def _list(value: Union[None, str, int, Iterable[Any]]) -> Optional[str]:
    if value is None:
        return None
    if isinstance(value, (str, int)):
        return str(value)
    return ",".join(str(v) for v in value)


def plan(model: PathLike, *, target: Union[None, str, Sequence[str]] = None,
         gpus: Union[None, int, str, Sequence[int]] = None, max_gpus: Optional[int] = None,
         global_batch: Union[None, int, str] = None, objective: Optional[str] = None,
         fix: Optional[Mapping[str, Any]] = None, top: Optional[int] = None,
         dims: Optional[Mapping[str, int]] = None, train: Optional[bool] = None,
         precision: Optional[str] = None, optimizer: Optional[str] = None,
         gpus_per_node: Optional[int] = None, config: Optional[PathLike] = None,
         jobs: Optional[int] = None, pareto: Optional[PathLike] = None,
         extra_args: Sequence[str] = ()) -> PlanResult:
    """Searches the setups of `model` (a .fx.json, .pt2 or .onnx file) and ranks those that fit.

    target        a GPU name or a list of them ("H100-SXM", ["H100-SXM", "L4"])
    gpus          a GPU count, a list of counts, or a range string "8..512" (doubling)
    max_gpus      GPU counts 1, 2, 4, ... up to this (instead of gpus)
    global_batch  samples (256) or a tokens string ("4Mtokens")
    objective     "time", "cost" (default) or "tokens-per-dollar"
    fix           keys of the setup to pin, {"tp": 8, "recompute": "selective-op"}
    top           how many setups the text report shows (the JSON has every one)
    dims          sizes to bind, {"seq": 8192} (-D; the batch is searched, not given)
    train, precision, optimizer
                  the training setup (plan's defaults: a training step, bf16-mixed, adamw)
    pareto        write the memory-vs-throughput Pareto chart (SVG) there
    extra_args    more `graphlint plan` flags, as on the command line
    """
    args: List[str] = ["plan", path_arg(os.fspath(model)), "--format", "json"]
    for flag, value in (("--target", _list(target)), ("--gpus", _list(gpus)), ("--max-gpus", max_gpus),
                        ("--global-batch", global_batch), ("--objective", objective), ("--top", top),
                        ("--precision", precision), ("--optimizer", optimizer),
                        ("--gpus-per-node", gpus_per_node), ("--jobs", jobs)):
        if value is not None:
            args += [flag, str(value)]
    if train is not None:
        args.append("--train" if train else "--train=false")
    if config is not None:
        args += ["--config", os.fspath(config)]
    if pareto is not None:
        args += ["--pareto", os.fspath(pareto)]
    for key, value in (fix or {}).items():
        args += ["--fix", f"{key}={value}"]
    for name, size in (dims or {}).items():
        args += ["-D", f"{name}={int(size)}"]
    args += list(extra_args)
    proc = run(args)
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise GraphlintError(f"{os.fspath(model)}: graphlint plan printed no JSON: {proc.stderr.strip()[:200]}") from None
    return PlanResult(doc, args)
