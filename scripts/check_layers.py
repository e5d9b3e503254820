#!/usr/bin/env python3
"""Checks every `#include "graphlint/..."` against the layers of
docs/ARCHITECTURE.md (Structure): a source file may include headers of its own
layer and of the layers its layer may use, nothing else. Exits 1 listing each
wrong include as FILE:LINE: LAYER -> LAYER (HEADER); run by CTest
(layer_includes) so a wrong arrow fails the build's tests, not a review.

  scripts/check_layers.py [REPO_ROOT]
"""
import os
import re
import sys

# Which layer may include which (besides itself).
ALLOWED = {
    "ir": set(),
    "onnx": {"ir"},
    "fx": {"ir"},
    "base": {"ir"},
    "analyses": {"ir", "base"},
    "rules": {"ir", "base", "analyses"},
    "engine": {"ir", "onnx", "fx", "base", "analyses", "rules"},
    "report": {"ir", "base", "analyses", "rules", "engine"},
    "verify": {"ir", "onnx", "base", "analyses", "engine", "report"},
    "cli": {"ir", "onnx", "fx", "base", "analyses", "rules", "engine", "report", "verify"},
}

# Headers of include/graphlint/lint/ by layer (ir/ and verify/ go by folder).
LINT_HEADERS = {
    "base": {"Setup", "SetupKeys", "HardwareProfile", "EnumNames", "Diagnostic"},
    "analyses": {"Analysis", "CachingAllocator", "Liveness", "Collectives", "ComputeModel", "Contraction", "DataDependence",
                 "FusionPlan", "MemoryPlan", "MemorySummary", "OpFlops", "StepTimeline", "StorageAliases",
                 "TrainableParams", "Provenance"},
    "rules": {"Rule"},
    "report": {"Reporters"},
    "engine": {"Baseline", "Config", "CostSummary", "Driver", "FusionSummary", "Glob", "Grouping", "OutputFiles",
               "Paths", "Session", "SourceLines"},
}

# Sources of lint/ outside analyses/ that belong to a lower layer.
LINT_SOURCES = {"Setup": "base", "SetupKeys": "base", "HardwareProfile": "base", "Diagnostic": "base",
                "Collectives": "analyses"}

# Known wrong arrows, each to be removed: (file, header).
EXCEPTIONS = {
    # GL302 folds layer indices with the grouping pass's helper.
    ("rules/OversizedParameter.cpp", "lint/Grouping.h"),
    # GL005 reports unused config suppressions: it reads the config's types.
    ("rules/UnusedSuppression.cpp", "lint/Config.h"),
    # Baselines store messages as the reporters format them.
    ("lint/Baseline.cpp", "lint/Reporters.h"),
}


def layer_of_source(rel):
    if rel.startswith("ir/onnx/"):
        return "onnx"
    if rel.startswith(("ir/fx/", "ir/pt2/")):
        return "fx"
    if rel.startswith("ir/"):
        return "ir"
    if rel.startswith("lint/analyses/"):
        return "analyses"
    if rel.startswith("lint/reporters/"):
        return "report"
    if rel.startswith("lint/verify/"):
        return "verify"
    if rel.startswith("lint/"):
        return LINT_SOURCES.get(os.path.splitext(os.path.basename(rel))[0], "engine")
    if rel.startswith("rules/"):
        return "rules"
    if rel.startswith("tools/"):
        return "cli"
    if rel.startswith("include/graphlint/"):
        return layer_of_header(rel[len("include/graphlint/"):])
    return None


def layer_of_header(h):
    folder, _, name = h.partition("/")
    stem = os.path.splitext(name)[0]
    if folder == "ir":
        return "ir"
    if folder == "verify":
        return "verify"
    if folder == "lint":
        for layer, names in LINT_HEADERS.items():
            if stem in names:
                return layer
    return None


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    include = re.compile(r'^\s*#\s*include\s+"graphlint/([^"]+)"')
    problems, unknown, used = [], [], set()
    for top in ("ir", "lint", "rules", "tools", "include/graphlint"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if not f.endswith((".cpp", ".h", ".cu", ".inc")):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, root)
                src = layer_of_source(rel)
                if src is None:
                    unknown.append(f"{rel}: no layer")
                    continue
                with open(path, encoding="utf-8", errors="replace") as fh:
                    for n, line in enumerate(fh, 1):
                        m = include.match(line)
                        if not m:
                            continue
                        header = m.group(1)
                        dst = layer_of_header(header)
                        if dst is None:
                            unknown.append(f"{rel}:{n}: graphlint/{header} belongs to no layer")
                            continue
                        if dst == src or dst in ALLOWED[src]:
                            continue
                        if (rel, header) in EXCEPTIONS:
                            used.add((rel, header))
                            continue
                        problems.append(f"{rel}:{n}: {src} -> {dst} (graphlint/{header})")
    stale = sorted(EXCEPTIONS - used)
    for p in problems + unknown:
        print(p)
    for f, h in stale:
        print(f"scripts/check_layers.py: exception {f} -> {h} is no longer needed: remove it")
    if problems or unknown or stale:
        print(f"{len(problems)} wrong include(s), {len(unknown)} unassigned file(s) or header(s), "
              f"{len(stale)} stale exception(s); the layers are in docs/ARCHITECTURE.md (Structure)")
        return 1
    print(f"layer includes ok ({len(EXCEPTIONS)} known exceptions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
