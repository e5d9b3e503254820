#!/usr/bin/env python3
"""Graph breaks against the real thing (docs/validation.md): for each model,
torch._dynamo.explain's break reasons and user lines (torch 2.x, the model run
for real at a small size), beside graphlint's GL112 / GL121 / GL123 findings
on a fake capture of the same model. Run with a torch 2.x Python:

    build/venv/bin/python bench/graph_breaks.py [--only breaks,gpt2] [--out DIR]

Prints one JSON object per model: {"model", "dynamo": [[reason, file, line]],
"graphlint": [[code, file, line]]}.
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "models"))
sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures", "fx"))
# The exporter package (python/graphlint/export) of this checkout: the child's PYTHONPATH names python/.
EXPORTER = ["-m", "graphlint.export"]
EXPORT_ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(
    p for p in (os.path.join(ROOT, "python"), os.environ.get("PYTHONPATH")) if p))
GRAPHLINT = os.environ.get("GRAPHLINT_CLI", os.path.join(ROOT, "build", "tools", "graphlint"))
CODES = ("GL112", "GL121", "GL123")

# name: (exporter arguments, cwd, factory for explain, inputs for explain)
FIXTURES = ["breaks", "hazards", "parity"]
CORPUS_SMALL = {   # the corpus models at a size explain can run for real
    "gpt2": (["input_ids:int64[1,64]", "labels:int64[1,64]"]),
    "bert_base": (["input_ids:int64[1,64]", "labels:int64[1,64]"]),
    "llama_small": (["input_ids:int64[1,64]", "labels:int64[1,64]"]),
    "t5_small": (["input_ids:int64[1,64]", "labels:int64[1,16]"]),
    "vit_base": (["pixel_values:float32[1,3,224,224]"]),
    "whisper_base": (["input_features:float32[1,80,3000]", "labels:int64[1,16]"]),
    "mixtral_small": (["input_ids:int64[1,64]", "labels:int64[1,64]"]),
    "timm_resnet50": (["input0:float32[1,3,224,224]"]),
    "timm_convnext_tiny": (["input0:float32[1,3,224,224]"]),
    "timm_efficientnet_b0": (["input0:float32[1,3,224,224]"]),
    "timm_vit_base": (["input0:float32[1,3,224,224]"]),
}


def rel(path):
    path = os.path.abspath(path)
    return os.path.relpath(path, ROOT) if path.startswith(ROOT + os.sep) else path


def dynamo_breaks(module, args, kwargs):
    import torch
    import torch._dynamo
    torch._dynamo.reset()
    out = torch._dynamo.explain(module)(*args, **kwargs)
    rows = []
    for r in out.break_reasons:
        stack = [f for f in (r.user_stack or []) if "torch/" not in f.filename]
        where = stack[-1] if stack else (r.user_stack[-1] if r.user_stack else None)
        reason = r.reason.splitlines()[0][:160]
        rows.append([reason, rel(where.filename) if where else None, where.lineno if where else None])
    return rows, out.graph_count


def make_inputs(specs):
    import torch
    from graphlint.export.fx_build import InputSpec   # imports torch: only for an --input spec
    args, kwargs = [], {}
    for s in specs:
        spec = InputSpec.parse(s)
        shape = spec.sizes({})
        t = torch.randn(*shape, dtype=spec.dtype) if spec.dtype.is_floating_point else torch.zeros(*shape, dtype=spec.dtype)
        if spec.name.startswith("input") and spec.name[5:].isdigit():
            args.append(t)
        else:
            kwargs[spec.name] = t
    return args, kwargs


def graphlint_findings(export_args, cwd, out):
    p = subprocess.run([sys.executable, *EXPORTER, *export_args, "-o", out], cwd=cwd, env=EXPORT_ENV, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip().splitlines()[-1]
    g = subprocess.run([GRAPHLINT, "--no-color", "--format", "json", out], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    doc = json.loads(g.stdout)
    rows = []
    for d in doc["files"][0]["diagnostics"]:
        if d["code"] in CODES:
            src = (d.get("location") or {}).get("source") or {}
            rows.append([d["code"], src.get("file"), src.get("line")])
    with open(out) as f:
        exported = json.load(f)
    diags = [[d["kind"], (d.get("source") or {}).get("file"), (d.get("source") or {}).get("line")]
             for d in exported.get("diagnostics", [])]
    return rows, diags


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "graph-breaks"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    names = args.only.split(",") if args.only else FIXTURES + list(CORPUS_SMALL)
    for name in names:
        out = os.path.join(args.out, f"{name}.fx.json")
        try:
            if name in FIXTURES:
                mod = __import__(name)
                module, inputs = mod.model().eval(), mod.example_inputs()
                call_args, call_kwargs = list(inputs), {}
                export_args, cwd = [f"{name}.py"], os.path.join(ROOT, "tests", "fixtures", "fx")
            else:
                import capture_corpus
                module = getattr(capture_corpus, name)().eval()
                call_args, call_kwargs = make_inputs(CORPUS_SMALL[name])
                export_args = ["--model", f"capture_corpus:{name}"]
                for s in CORPUS_SMALL[name]:
                    export_args += ["--input", s]
                cwd = os.path.join(ROOT, "models")
            breaks, graphs = dynamo_breaks(module, call_args, call_kwargs)
            found, diags = graphlint_findings(export_args, cwd, out)
            row = {"model": name, "dynamo_graphs": graphs, "dynamo": breaks, "graphlint": found,
                   "export_diagnostics": diags}
        except Exception as e:   # a model explain cannot run is a row too
            row = {"model": name, "error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
