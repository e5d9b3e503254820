#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Generate ONNX backend *node* tests from the installed onnx package and
write a dtype/shape ground-truth file for them.

Usage:
    /usr/bin/python3 tests/corpus/gen_node_tests.py --out DIR
    /usr/bin/python3 tests/corpus/gen_node_tests.py --truth-only NODE_DIR --truth-out FILE

Produces
    DIR/node/test_*/model.onnx
    DIR/node/test_*/test_data_set_0/{input,output}_N.pb
    DIR/node/.gen_node_tests.stamp      (onnx version; written last)
    DIR/node_io_truth.jsonl             (one JSON object per test)

If DIR/node holds a stamp for the installed onnx version, the tests are not
regenerated (use --force); the truth file is always rewritten (< 1 s).
Generation needs onnx (tested with 1.12) and numpy; numpy >= 1.24 is patched
for the aliases (np.float, ...) that onnx 1.12's test cases still use.

node_io_truth.jsonl uses the same format as
../shared/corpus/onnx-backend/node_io_truth.jsonl:

    {"test": "test_abs", "opset": {"ai.onnx": 13}, "ops": ["Abs"],
     "inputs":  [{"name": "x", "declared": {...}, "actual": {...}}, ...],
     "outputs": [...]}

  * "opset": the model's opset_import in model order; the default domain ""
    is written as "ai.onnx".
  * "ops": sorted, de-duplicated op_types of the top-level graph nodes
    (nodes inside If/Loop/Scan bodies are not listed).
  * "declared" (from the graph's value_info):
      tensor    -> {"kind": "tensor", "dtype": NAME, "shape": [dims]}
                   dim: int (dim_value), str (dim_param) or null (neither);
                   "shape": null when the type carries no shape at all.
      sequence  -> {"kind": "sequence_type"}
      optional  -> {"kind": "optional_type"}
      map       -> {"kind": "map_type"};  sparse -> {"kind": "sparse_tensor_type"}
  * "actual" (from the .pb file; the proto kind is chosen from the declared
    type, exactly as onnx.backend.test.cmd_tools writes it):
      TensorProto   -> {"kind": "tensor", "dtype": NAME, "shape": [dims]}
      SequenceProto -> {"kind": "sequence", "elems": [{"dtype", "shape"}, ...]}
      OptionalProto -> {"kind": "optional", "has": elem_type}
                       (OptionalProto.DataType: 0 empty, 1 tensor, 3 sequence...)
      MapProto      -> {"kind": "map", "key_dtype": NAME, "n": count}
  * "declared_differs": true is appended to an input or output whose declared
    tensor type does not match the actual one: dtype differs, rank differs, or
    an int/unknown dim differs (a symbolic dim_param matches any size). With
    onnx 1.12 this marks its bfloat16 tests, whose .pb data are UINT16 tensors
    while the model declares BFLOAT16, and CastLike-to-BFLOAT16's "like" input
    (declared [3, 4], data [1]).
  * missing .pb (no data for a graph value) -> "actual": null.
"""

import argparse
import json
import os
import shutil
import sys
import time

STAMP_NAME = ".gen_node_tests.stamp"

# TensorProto.DataType names. onnx 1.12 knows 0..16; later ones are listed so a
# corpus made by a newer onnx (read with --truth-only) still gets names.
_DTYPE_NAMES = {
    0: "UNDEFINED", 1: "FLOAT", 2: "UINT8", 3: "INT8", 4: "UINT16", 5: "INT16",
    6: "INT32", 7: "INT64", 8: "STRING", 9: "BOOL", 10: "FLOAT16",
    11: "DOUBLE", 12: "UINT32", 13: "UINT64", 14: "COMPLEX64",
    15: "COMPLEX128", 16: "BFLOAT16", 17: "FLOAT8E4M3FN",
    18: "FLOAT8E4M3FNUZ", 19: "FLOAT8E5M2", 20: "FLOAT8E5M2FNUZ",
    21: "UINT4", 22: "INT4", 23: "FLOAT4E2M1", 24: "FLOAT8E8M0",
    25: "UINT2", 26: "INT2",
}


def _patch_numpy():
    """numpy >= 1.24 removed the builtin-type aliases that onnx 1.12's test
    case modules still use. Must run before importing onnx.backend.test."""
    import numpy as np
    for name, val in (("float", float), ("int", int), ("bool", bool),
                      ("object", object), ("complex", complex), ("str", str)):
        if name not in np.__dict__:
            setattr(np, name, val)


def dtype_name(code):
    return _DTYPE_NAMES.get(code, str(code))


# --------------------------------------------------------------------------
# generation
# --------------------------------------------------------------------------

def _write_value(path, value, vtype, name):
    from onnx import numpy_helper
    # Same dispatch as onnx.backend.test.cmd_tools.generate_data.
    if vtype.HasField("map_type"):
        proto = numpy_helper.from_dict(value, name)
    elif vtype.HasField("sequence_type"):
        proto = numpy_helper.from_list(value, name)
    elif vtype.HasField("optional_type"):
        proto = numpy_helper.from_optional(value, name)
    else:
        assert vtype.HasField("tensor_type"), name
        proto = numpy_helper.from_array(value, name)
    with open(path, "wb") as f:
        f.write(proto.SerializeToString())


def generate_node_tests(node_dir):
    """Write every node test case into node_dir (which must not exist)."""
    import warnings
    import numpy as np
    _patch_numpy()
    np.random.seed(0)  # test cases draw random data; keep reruns identical
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import onnx.backend.test.case.node as node_test
        cases = node_test.collect_testcases(None)
    os.makedirs(node_dir)
    n = 0
    for case in cases:
        if case.kind != "node":
            continue
        out = os.path.join(node_dir, case.name)
        if os.path.exists(out):
            shutil.rmtree(out)
        os.makedirs(out)
        with open(os.path.join(out, "model.onnx"), "wb") as f:
            f.write(case.model.SerializeToString())
        graph = case.model.graph
        for i, (inputs, outputs) in enumerate(case.data_sets):
            ds = os.path.join(out, "test_data_set_%d" % i)
            os.makedirs(ds)
            for j, v in enumerate(inputs):
                _write_value(os.path.join(ds, "input_%d.pb" % j), v,
                             graph.input[j].type, graph.input[j].name)
            for j, v in enumerate(outputs):
                _write_value(os.path.join(ds, "output_%d.pb" % j), v,
                             graph.output[j].type, graph.output[j].name)
        n += 1
    return n


# --------------------------------------------------------------------------
# truth
# --------------------------------------------------------------------------

def _declared(tp):
    which = tp.WhichOneof("value")
    if which == "tensor_type":
        tt = tp.tensor_type
        shape = None
        if tt.HasField("shape"):
            shape = []
            for d in tt.shape.dim:
                w = d.WhichOneof("value")
                if w == "dim_value":
                    shape.append(d.dim_value)
                elif w == "dim_param":
                    shape.append(d.dim_param)
                else:
                    shape.append(None)
        return {"kind": "tensor", "dtype": dtype_name(tt.elem_type),
                "shape": shape}
    if which is None:
        return {"kind": "none"}
    return {"kind": which}


def _tensor_info(t):
    return {"dtype": dtype_name(t.data_type), "shape": list(t.dims)}


def _actual(path, tp):
    import onnx
    which = tp.WhichOneof("value")
    with open(path, "rb") as f:
        data = f.read()
    if which == "sequence_type":
        p = onnx.SequenceProto()
        p.ParseFromString(data)
        # tensor sequences only in node tests
        return {"kind": "sequence",
                "elems": [_tensor_info(t) for t in p.tensor_values]}
    if which == "optional_type":
        p = onnx.OptionalProto()
        p.ParseFromString(data)
        return {"kind": "optional", "has": p.elem_type}
    if which == "map_type":
        p = onnx.MapProto()
        p.ParseFromString(data)
        return {"kind": "map", "key_dtype": dtype_name(p.key_type),
                "n": len(p.keys) + len(p.string_keys)}
    p = onnx.TensorProto()
    p.ParseFromString(data)
    d = {"kind": "tensor"}
    d.update(_tensor_info(p))
    return d


def _differs(decl, act):
    if decl.get("kind") != "tensor" or act.get("kind") != "tensor":
        return False
    if decl["dtype"] != act["dtype"]:
        return True
    ds, as_ = decl["shape"], act["shape"]
    if ds is None:
        return False
    if len(ds) != len(as_):
        return True
    for d, a in zip(ds, as_):
        if isinstance(d, str):
            continue
        if d != a:  # int mismatch or unknown (None) dim
            return True
    return False


def truth_for_test(test_dir):
    import onnx
    name = os.path.basename(test_dir.rstrip("/"))
    model = onnx.load(os.path.join(test_dir, "model.onnx"))
    g = model.graph
    opset = {}
    for o in model.opset_import:
        opset[o.domain or "ai.onnx"] = o.version
    ops = sorted({n.op_type for n in g.node})
    ds = os.path.join(test_dir, "test_data_set_0")

    def side(values, prefix):
        res = []
        for j, vi in enumerate(values):
            decl = _declared(vi.type)
            pb = os.path.join(ds, "%s_%d.pb" % (prefix, j))
            act = _actual(pb, vi.type) if os.path.exists(pb) else None
            e = {"name": vi.name, "declared": decl, "actual": act}
            if act is not None and _differs(decl, act):
                e["declared_differs"] = True
            res.append(e)
        return res

    return {"test": name, "opset": opset, "ops": ops,
            "inputs": side(g.input, "input"),
            "outputs": side(g.output, "output")}


def write_truth(node_dir, out_path):
    names = sorted(d for d in os.listdir(node_dir)
                   if d.startswith("test_")
                   and os.path.isfile(os.path.join(node_dir, d, "model.onnx")))
    tmp = out_path + ".tmp"
    with open(tmp, "w") as f:
        for n in names:
            f.write(json.dumps(truth_for_test(os.path.join(node_dir, n))))
            f.write("\n")
    os.replace(tmp, out_path)
    return len(names)


# --------------------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", help="output directory (gets node/ and node_io_truth.jsonl)")
    ap.add_argument("--force", action="store_true", help="regenerate even if the stamp matches")
    ap.add_argument("--truth-only", metavar="NODE_DIR",
                    help="only write the truth file for an existing node/ directory")
    ap.add_argument("--truth-out", metavar="FILE", help="truth file path for --truth-only")
    args = ap.parse_args(argv)

    import onnx
    t0 = time.time()

    if args.truth_only:
        if not args.truth_out:
            ap.error("--truth-only needs --truth-out")
        n = write_truth(args.truth_only, args.truth_out)
        print("truth: %d lines from %s (%.1fs)" % (n, args.truth_only, time.time() - t0))
        return 0
    if not args.out:
        ap.error("--out is required")

    out = os.path.abspath(args.out)
    node_dir = os.path.join(out, "node")
    stamp_path = os.path.join(node_dir, STAMP_NAME)
    stamp = "onnx %s\n" % onnx.__version__
    os.makedirs(out, exist_ok=True)

    regenerated = False
    have = None
    if os.path.isfile(stamp_path):
        with open(stamp_path) as f:
            have = f.read()
    if args.force or have != stamp:
        if os.path.exists(node_dir):
            shutil.rmtree(node_dir)
        tmp_dir = os.path.join(out, ".node.partial")
        if os.path.exists(tmp_dir):
            shutil.rmtree(tmp_dir)
        generate_node_tests(tmp_dir)
        with open(os.path.join(tmp_dir, STAMP_NAME), "w") as f:
            f.write(stamp)
        os.rename(tmp_dir, node_dir)
        regenerated = True

    n_tests = sum(1 for d in os.listdir(node_dir)
                  if os.path.isfile(os.path.join(node_dir, d, "model.onnx")))
    truth_path = os.path.join(out, "node_io_truth.jsonl")
    # Always rewritten: reading the .pb headers takes well under a second.
    n_truth = write_truth(node_dir, truth_path)
    print("node tests: %d (%s, onnx %s); truth lines: %d -> %s; %.1fs"
          % (n_tests, "generated" if regenerated else "up to date",
             onnx.__version__, n_truth, truth_path, time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
