#!/usr/bin/env python3
"""Writes synthetic ONNX graphs of a given node count for the scaling benchmark.

Two shapes of graph, both opset 17, input `x` float [batch, 64]:
  chain  one long pointwise chain cycling Add/Relu/Mul/Sigmoid/Sub/Tanh/Div/Abs;
         the binary ops read one of a few broadcast constants ([64], [1,64], []).
  wide   WIDTH parallel chains; every binary op also reads the neighbouring
         branch (fan-out 2 on every tensor), merged by one Sum at the end.
NodeProtos are appended to the repeated field directly: onnx.helper.make_node
is several times slower and 1M nodes must build in well under a minute.
"""
import argparse
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

UNARY = ("Relu", "Sigmoid", "Tanh", "Abs")
BINARY = ("Add", "Mul", "Sub", "Div")
# Binary and unary ops alternate, so every other node reads a constant.
CYCLE = ("Add", "Relu", "Mul", "Sigmoid", "Sub", "Tanh", "Div", "Abs")
HIDDEN = 64


def constants(graph):
    rng = np.random.default_rng(0)
    shapes = {"c_vec": [HIDDEN], "c_row": [1, HIDDEN], "c_scalar": []}
    for name, shape in shapes.items():
        a = (rng.random(shape, dtype=np.float32) + 0.5).astype(np.float32)
        graph.initializer.append(numpy_helper.from_array(a, name))
    return list(shapes)


def chain(graph, nodes):
    consts = constants(graph)
    prev = "x"
    add = graph.node.add
    for i in range(nodes):
        op = CYCLE[i % len(CYCLE)]
        out = f"t{i}"
        n = add()
        n.op_type = op
        n.name = f"n{i}"
        n.input.append(prev)
        if op in BINARY:
            n.input.append(consts[(i // 2) % len(consts)])
        n.output.append(out)
        prev = out
    return prev


def wide(graph, nodes, width):
    consts = constants(graph)
    prev = ["x"] * width
    add = graph.node.add
    k, layer = 0, 0
    while k < nodes - 1:
        op = CYCLE[layer % len(CYCLE)]
        # The last layer may be partial so that the node count is exact.
        for b in range(min(width, nodes - 1 - k)):
            out = f"t{layer}_{b}"
            n = add()
            n.op_type = op
            n.name = f"n{k}"
            n.input.append(prev[b])
            if op in BINARY:
                # Neighbour branch on every fourth layer, a broadcast constant otherwise.
                n.input.append(prev[(b + 1) % width] if layer % 4 == 0 else consts[b % len(consts)])
            n.output.append(out)
            prev[b] = out
            k += 1
        layer += 1
    n = add()
    n.op_type = "Sum"
    n.name = f"n{k}"
    n.input.extend(prev)
    n.output.append("y_sum")
    return "y_sum"


def build(kind, nodes, width):
    graph = onnx.GraphProto()
    graph.name = f"synthetic_{kind}_{nodes}"
    graph.input.append(helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", HIDDEN]))
    last = chain(graph, nodes) if kind == "chain" else wide(graph, nodes, width)
    graph.output.append(helper.make_tensor_value_info(last, TensorProto.FLOAT, ["batch", HIDDEN]))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="graphlint-bench")
    model.ir_version = 8
    return model


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kind", choices=("chain", "wide"), default="chain")
    ap.add_argument("--nodes", type=int, required=True)
    ap.add_argument("--width", type=int, default=64, help="branches of the wide graph")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    t0 = time.perf_counter()
    model = build(a.kind, a.nodes, a.width)
    data = model.SerializeToString()
    with open(a.out, "wb") as f:
        f.write(data)
    print(f"{a.out}: {a.kind}, {len(model.graph.node)} nodes, {len(data)} bytes, "
          f"{time.perf_counter() - t0:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
