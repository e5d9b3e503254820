#!/usr/bin/env python3
"""Writes data/aten_ops.inc, the op registry's table of every aten (and prims)
operator torch declares, from torch's own schema list
(torch._C._jit_get_all_schemas(), i.e. native_functions.yaml and the ops
registered beside it) of each Python given, merged by name.

The reviewed table in src/ir/OpRegistry.cpp stays authoritative; this one makes
every other standard op known (GL002 is then for custom ops only) with a kind
read off its schema and name:

- a return that aliases an argument without writing it (`Tensor(a) self ->
  Tensor(a)`): a view (shape-only, aliasing input 0), e.g. view_as_real;
- an op returning nothing and writing nothing (_assert_async): shape-only;
- data-dependent output sizes (nonzero-like, bincount, unique-like):
  data-dependent-output with a host sync;
- contractions by name (mm, conv, attention, fft, linalg factorizations, rnn);
- reductions by name (sum, mean, median, norm, pool, loss, sort, cumsum, ...);
- tensor factories (no tensor argument): pointwise, like zeros/ones;
- otherwise one tensor argument: pointwise; two or more: broadcast when the
  op is a binary elementwise one by its argument names (self, other), else
  injective (a kernel of its own; gather/scatter/index-like data movement).

Deterministic: sorted by name, one line per name, kinds chosen from the
overloads (default, Tensor, then by name). Run it after a torch upgrade:

    scripts/gen_aten_ops.py --python /usr/bin/python3 --python build/venv/bin/python \
        --python build/venv-vision/bin/python
"""
import argparse
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "data", "aten_ops.inc")

DUMP = r"""
import json, torch
rows = []
for s in torch._C._jit_get_all_schemas():
    ns, _, name = s.name.partition("::")
    if ns not in ("aten", "prims"):
        continue
    args = [{"name": a.name, "type": str(a.type),
             "write": bool(a.alias_info is not None and a.alias_info.is_write)} for a in s.arguments]
    rets = [{"type": str(r.type),
             "alias": bool(r.alias_info is not None and not r.alias_info.is_write)} for r in s.returns]
    rows.append({"ns": ns, "name": name, "overload": s.overload_name, "args": args, "returns": rets})
print(json.dumps({"torch": torch.__version__.split("+")[0], "schemas": rows}))
"""

SYNC = re.compile(r"^(nonzero|nonzero_numpy|argwhere|masked_select|unique.*|_unique.*|bincount|"
                  r"_local_scalar_dense|item|equal|is_nonzero)$")
CONTRACTION = re.compile(r"(^|_)(mm|bmm|addmm|addbmm|baddbmm|matmul|mv|addmv|dot|vdot|inner|outer|ger|einsum|"
                         r"tensordot|kron|chain_matmul|linear|bilinear|conv[123]d|conv_transpose[123]d|"
                         r"convolution.*|conv_tbc.*|conv_depthwise.*|cudnn_convolution.*|"
                         r"mkldnn_convolution.*|miopen.*|thnn_conv.*|slow_conv.*|.*attention.*|.*attn.*|"
                         r"lstm.*|gru.*|rnn.*|fft.*|stft|istft|cholesky.*|lu.*|qr|svd.*|eig.*|eigh|eigvals.*|"
                         r"inverse|inv.*|solve.*|lstsq|det|slogdet|logdet|pinv|matrix_.*|triangular_solve|"
                         r"householder_product|orgqr|ormqr|geqrf|cdist|_cdist_forward|pdist|cosine_similarity|"
                         r"embedding_bag|_embedding_bag.*|int_mm|_int_mm|scaled_mm|_scaled_mm|grouped_mm)($|_)")
REDUCTION = re.compile(r"(^|_)(sum|nansum|mean|nanmean|median|nanmedian|mode|kthvalue|quantile|nanquantile|max|min|"
                       r"amax|amin|aminmax|argmax|argmin|prod|var|std|var_mean|std_mean|norm|.*_norm|"
                       r"renorm|logsumexp|logcumsumexp|any|all|count_nonzero|cumsum|cumprod|cummax|cummin|"
                       r"cummaxmin|topk|sort|argsort|msort|softmax|log_softmax|_softmax.*|_log_softmax.*|"
                       r"softmin|.*pool.*|.*loss.*|ctc_.*|trace|diff|gradient|searchsorted|bucketize|"
                       r"batch_norm.*|_batch_norm.*|instance_norm|group_norm|layer_norm|rms_norm|.*_norm_.*|"
                       r"weight_norm.*|_weight_norm.*|embedding_dense_backward|embedding_backward|"
                       r"_embedding_bag_backward)($|_)")


def dump(python):
    out = subprocess.run([python, "-c", DUMP], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         check=False)
    if out.returncode != 0:
        raise SystemExit(f"{python}: cannot list torch's schemas: {out.stderr.strip().splitlines()[-1:]}")
    return json.loads(out.stdout)


def kind_of(name, overloads):
    """(kind, flags) for one op name from its overloads (sorted)."""
    base = name.lstrip("_")
    if SYNC.match(name) or SYNC.match(base):
        return "DataDependentOutput", "Sync"
    first = overloads[0]
    tensor_args = [a for a in first["args"] if "Tensor" in a["type"]]
    if first["returns"] and first["returns"][0]["alias"] and not any(a["write"] for a in first["args"]):
        return "ShapeOnly", "View"
    if not first["returns"] and not any(a["write"] for o in overloads for a in o["args"]):
        return "ShapeOnly", "None"
    if CONTRACTION.search(base):
        return "Contraction", "None"
    if REDUCTION.search(base):
        return "Reduction", "None"
    if not tensor_args:
        return "Pointwise", "None"
    names = [a["name"] for a in first["args"]]
    if len(tensor_args) == 1:
        return ("Pointwise", "None") if not any(n in ("dim", "dims", "index", "indices", "size", "shape",
                                                           "pad", "padding", "output_size") for n in names) \
            else ("Injective", "None")
    if names[:2] == ["self", "other"] or all(a["type"] in ("Tensor", "Scalar") for a in first["args"]):
        return "Broadcast", "None"
    return "Injective", "None"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", action="append", required=True, help="a Python with torch (repeatable)")
    ap.add_argument("-o", "--output", default=OUT)
    args = ap.parse_args()
    by_name, versions = {}, []
    for py in args.python:
        d = dump(py)
        versions.append(d["torch"])
        for s in d["schemas"]:
            by_name.setdefault((s["ns"], s["name"]), {})[s["overload"]] = s
    lines = [f"// Generated by scripts/gen_aten_ops.py from torch {', '.join(sorted(set(versions)))}'s schema list"
             f" (torch._C._jit_get_all_schemas()); do not edit.",
             "// {domain, name, kind, flags}: every aten/prims op torch declares, by name (in-place variants "
             "included).",
             f"// {len(by_name)} ops."]
    for (ns, name) in sorted(by_name):
        # The default overload first, then the Tensor one, then the rest by name.
        order = sorted(by_name[(ns, name)], key=lambda k: (k != "", k != "Tensor", k))
        overloads = [by_name[(ns, name)][k] for k in order]
        kind, flags = kind_of(name, overloads)
        lines.append(f'{{"{ns}", "{name}", K::{kind}, {flags}, 0}},')
    with open(args.output, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"{args.output}: {len(by_name)} ops from torch {', '.join(versions)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
