"""Typed results of a lint: what graphlint.check() returns.

Everything here is read from the binary's versioned JSON report
(docs/output-formats.md); nothing is recomputed in Python, so the API, the CLI
and CI see the same numbers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

from ._binary import GraphlintError, run


@dataclass(frozen=True)
class SourceLine:
    file: str
    line: int
    column: Optional[int] = None
    function: Optional[str] = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" + (f":{self.column}" if self.column else "")


@dataclass(frozen=True)
class Diagnostic:
    code: str
    name: str
    severity: str  # "error" | "warning" | "note"
    message: str
    file: str  # the model file the finding is in
    node: Optional[str] = None
    op_type: Optional[str] = None
    module: Optional[str] = None  # nn.Module path, when the export recorded it
    source: Optional[SourceLine] = None  # the user's line, when the export recorded it
    notes: Sequence[str] = ()
    fusion_id: Optional[int] = None
    reason: Optional[str] = None
    count: int = 1  # places sharing this cause (a line run in 24 layers is one finding, count 24)
    modules: Sequence[str] = ()  # the module paths of every place, in graph order
    fingerprint: Optional[str] = None  # the stable identity baselines use

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Diagnostic":
        loc = d.get("location") or {}
        src = loc.get("source")
        return cls(code=d["code"], name=d["name"], severity=d["severity"], message=d["message"],
                   file=loc.get("file", ""), node=loc.get("node"), op_type=loc.get("op_type"),
                   module=loc.get("module"),
                   source=SourceLine(src["file"], src["line"], src.get("column"), src.get("function"))
                   if src else None,
                   notes=tuple(n["message"] for n in d.get("notes") or ()),
                   fusion_id=d.get("fusion_id"), reason=d.get("reason"), count=d.get("count", 1),
                   modules=tuple(m for m in [loc.get("module")] + [a.get("module") for a in d.get("also_at") or ()]
                                 if m),
                   fingerprint=d.get("fingerprint"))

    def __str__(self) -> str:
        where = str(self.source) if self.source else self.file
        return f"{where}: {self.severity}: {self.message} [{self.code} {self.name}]"


@dataclass(frozen=True)
class MemorySummary:
    """Predicted memory per GPU, in bytes (docs/memory.md)."""
    mode: str  # "inference" | "training"
    params_bytes: int
    grads_bytes: int
    optimizer_bytes: int
    activations_bytes: int
    inputs_bytes: int
    peak_allocated_bytes: int
    peak_reserved_bytes: int
    device_capacity_bytes: int
    peak_phase: Optional[str]
    peak_node: Optional[str]
    setup: Dict[str, Any]
    assumed_dims: Sequence[str]
    caveats: Sequence[str] = ()   # what the figures cannot include (a helper's unseen Python locals)
    # "eager" or "compiled" (torch.compile's memory: a stated inductor backend),
    # and whether the backend was stated at all (docs/memory.md "Compiled execution").
    execution: str = "eager"
    execution_stated: bool = False
    # The caching allocator's reserved bytes beyond the peak allocated, and the
    # segments it needed only because of fragmentation (docs/memory.md).
    reserved_overhead_bytes: int = 0
    fragmented_growth_bytes: int = 0
    # Pipeline ranks (pp > 1): memory.stages[] as JSON objects, worst first in peak.
    stages: Sequence[Dict[str, Any]] = ()
    # Registered buffers (norm running statistics, causal masks): resident like
    # the parameters, never trained; params_bytes leaves them out.
    buffers_bytes: int = 0

    @property
    def fits(self) -> bool:
        """Whether the predicted peak reserved memory fits the target device."""
        return self.peak_reserved_bytes <= self.device_capacity_bytes

    @property
    def headroom_bytes(self) -> int:
        return self.device_capacity_bytes - self.peak_reserved_bytes

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "MemorySummary":
        return cls(mode=d["mode"], params_bytes=d["params_bytes"], grads_bytes=d["grads_bytes"],
                   optimizer_bytes=d["optimizer_bytes"], activations_bytes=d["activations_bytes"],
                   inputs_bytes=d.get("inputs_bytes", 0), peak_allocated_bytes=d["peak_allocated_bytes"],
                   peak_reserved_bytes=d["peak_reserved_bytes"],
                   device_capacity_bytes=d["device_capacity_bytes"], peak_phase=d.get("peak_phase"),
                   peak_node=d.get("peak_node"), setup=dict(d.get("setup") or {}),
                   assumed_dims=tuple(d.get("assumed_dims") or ()), caveats=tuple(d.get("caveats") or ()),
                   execution=d.get("execution", "eager"), execution_stated=bool(d.get("execution_stated", False)),
                   reserved_overhead_bytes=int(d.get("reserved_overhead_bytes", 0)),
                   fragmented_growth_bytes=int(d.get("fragmented_growth_bytes", 0)),
                   stages=tuple(d.get("stages") or ()),
                   buffers_bytes=int(d.get("buffers_bytes", 0)))


@dataclass(frozen=True)
class CostSummary:
    """Predicted compute and communication of one step (docs/cost-model.md)."""
    target: str
    precision: str
    train: bool
    flops_forward: float
    flops_backward: float
    time_forward_s: float
    time_backward_s: float
    kernels_forward: int
    kernels_backward: int
    unknown_groups: int
    step_time_s: Optional[float] = None  # with a training setup
    comm_s: Optional[float] = None
    exposed_comm_s: Optional[float] = None
    overlap_ratio: Optional[float] = None
    mfu: Optional[float] = None
    strategy: Optional[str] = None
    world_size: Optional[int] = None

    @property
    def flops(self) -> float:
        return self.flops_forward + self.flops_backward

    @classmethod
    def from_json(cls, compute: Dict[str, Any], comm: Optional[Dict[str, Any]]) -> "CostSummary":
        comm = comm or {}
        return cls(target=compute["target"], precision=compute["precision"], train=compute["train"],
                   flops_forward=compute["flops_forward"], flops_backward=compute["flops_backward"],
                   time_forward_s=compute["time_forward_s"], time_backward_s=compute["time_backward_s"],
                   kernels_forward=compute["kernels_forward"], kernels_backward=compute["kernels_backward"],
                   unknown_groups=compute.get("unknown_groups", 0), step_time_s=comm.get("step_time_s"),
                   comm_s=comm.get("comm_s"), exposed_comm_s=comm.get("exposed_s"),
                   overlap_ratio=comm.get("overlap_ratio"), mfu=comm.get("mfu"),
                   strategy=comm.get("strategy"), world_size=comm.get("world_size"))


@dataclass(frozen=True)
class FusionGroup:
    id: int
    nodes: Sequence[str]
    raw: Dict[str, Any] = field(repr=False, compare=False, default_factory=dict)


@dataclass(frozen=True)
class FusionPlan:
    """The predicted fusion groups and kernels (docs/fusion.md)."""
    backend: str
    kernels_predicted: int
    groups: Sequence[Dict[str, Any]]
    boundaries_by_reason: Dict[str, int]

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "FusionPlan":
        return cls(backend=d["backend"], kernels_predicted=d["kernels_predicted"],
                   groups=tuple(d.get("groups") or ()),
                   boundaries_by_reason=dict(d.get("boundaries_by_reason") or {}))


class LintFailed(Exception):
    """raise_for_errors(): the report has findings at or above the severity."""

    def __init__(self, report: "Report", findings: List[Diagnostic]):
        self.report = report
        self.findings = findings
        lines = [str(d) for d in findings[:10]]
        more = f"\n... and {len(findings) - 10} more" if len(findings) > 10 else ""
        super().__init__(f"graphlint: {len(findings)} finding(s) block the launch:\n" + "\n".join(lines) + more)


_RANK = {"note": 0, "warning": 1, "error": 2}


class Report:
    """One linted model: diagnostics, memory, cost and fusion, from the JSON report."""

    def __init__(self, path: str, args: Sequence[str], doc: Dict[str, Any], exit_code: int):
        self.path = path
        self._args = list(args)
        self.json = doc
        self.exit_code = exit_code
        files = doc.get("files") or []
        if len(files) != 1:
            raise GraphlintError(f"{path}: expected one file in the report, got {len(files)}")
        f = files[0]
        if f.get("status") == "fatal" or f.get("error"):
            raise GraphlintError(f"{path}: {f.get('error')}")
        self.diagnostics: List[Diagnostic] = [Diagnostic.from_json(d) for d in f.get("diagnostics") or ()]
        self.memory: Optional[MemorySummary] = MemorySummary.from_json(f["memory"]) if f.get("memory") else None
        self.cost: Optional[CostSummary] = (CostSummary.from_json(f["compute"], f.get("communication"))
                                            if f.get("compute") else None)
        self.fusion: Optional[FusionPlan] = FusionPlan.from_json(f["fusion"]) if f.get("fusion") else None
        self.stats: Dict[str, Any] = dict(f.get("stats") or {})
        self._text: Optional[str] = None

    # -- findings ---------------------------------------------------------
    @property
    def errors(self) -> List[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    @property
    def warnings(self) -> List[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "warning"]

    def by_code(self, code: str) -> List[Diagnostic]:
        return [d for d in self.diagnostics if d.code == code]

    def raise_for_errors(self, severity: str = "error") -> "Report":
        """A pre-launch guard: raises LintFailed if any finding is at or above `severity`."""
        if severity not in _RANK:
            raise ValueError(f"severity must be one of {sorted(_RANK)}, got {severity!r}")
        bad = [d for d in self.diagnostics if _RANK[d.severity] >= _RANK[severity]]
        if bad:
            raise LintFailed(self, bad)
        return self

    # -- renderings (the binary's own reporters) ----------------------------
    def _render(self, fmt: str, extra: Sequence[str] = ()) -> str:
        proc = run([*self._args, "--format", fmt, *extra])
        return proc.stdout

    def text(self, memory: bool = True, cost: bool = True, fusion: bool = False) -> str:
        extra = [flag for on, flag in ((memory, "--memory"), (cost, "--cost"), (fusion, "--fusion")) if on]
        return self._render("text", ["--color", "never", *extra])

    def __str__(self) -> str:
        if self._text is None:
            self._text = self.text()
        return self._text

    def __repr__(self) -> str:
        return (f"<graphlint.Report {self.path}: {len(self.errors)} errors, {len(self.warnings)} warnings"
                + (f", peak {self.memory.peak_reserved_bytes / 2**30:.2f} GiB" if self.memory else "") + ">")

    def to_sarif(self, path: str) -> str:
        """Writes the SARIF 2.1.0 report (GitHub code scanning) to `path` and returns it."""
        run([*self._args, "--format", "sarif", "--output", path])
        return path

    def to_json(self) -> str:
        return json.dumps(self.json, indent=2)
