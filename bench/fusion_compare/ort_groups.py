"""What ONNX Runtime (CPU EP) fuses: optimize one ONNX model with
`SessionOptions.optimized_model_filepath` at ORT_ENABLE_EXTENDED and
ORT_ENABLE_ALL, and with onnxruntime.transformers.optimizer for the
transformer models; map every optimized node back to the source nodes it
replaced and write the groups.

Mapping: a source node belongs to the optimized node that produces one of its
output names (fused nodes keep the source value names at their boundaries);
a source node whose outputs all disappeared was absorbed into the node that
reads them (followed forward to the first surviving value); one whose inputs
are all constants was folded at session init (no kernel).

Usage: ort_groups.py MODEL.onnx OUT.json [--transformer gpt2|bert NUM_HEADS HIDDEN]
"""

import collections
import json
import os
import sys
import tempfile

import onnx
import onnxruntime as ort

# Ops that launch no kernel on the CPU EP: shape metadata and views ORT
# executes by aliasing the input buffer.
NO_KERNEL = {"Reshape", "Squeeze", "Unsqueeze", "Flatten", "Identity", "Shape", "Size", "Constant", "Dropout"}


def host_values(graph):
    """Values computed on the host from shapes and small constants (the same
    rule graphlint uses for shape-only groups)."""
    host = set()
    for init in graph.initializer:
        n = 1
        for d in init.dims:
            n *= d
        if n <= 64:
            host.add(init.name)
    for node in graph.node:
        ins = [i for i in node.input if i]
        if node.op_type in ("Shape", "Size", "Constant") or (ins and all(i in host for i in ins)):
            host.update(o for o in node.output if o)
    return host


def optimized_groups(src, opt):
    """source node name -> index of the optimized node that computes it (or None)."""
    produced = {}
    for i, n in enumerate(opt.graph.node):
        for o in n.output:
            if o:
                produced[o] = i
    consumers = collections.defaultdict(list)
    for n in src.graph.node:
        for i in n.input:
            consumers[i].append(n)
    constants = {i.name for i in src.graph.initializer}
    for n in src.graph.node:
        if n.op_type == "Constant" or (n.input and all((not i) or i in constants for i in n.input)):
            constants.update(n.output)
    assign = {}
    for n in reversed(list(src.graph.node)):
        if n.op_type == "Constant" or all(o in constants for o in n.output if o):
            assign[n.name] = None  # folded at session init
            continue
        hit = next((produced[o] for o in n.output if o in produced), None)
        if hit is None:
            for o in n.output:
                for c in consumers.get(o, []):
                    if assign.get(c.name) is not None:
                        hit = assign[c.name]
                        break
                if hit is not None:
                    break
        assign[n.name] = hit
    return assign


def summarize(src, opt, label):
    host = host_values(opt.graph)
    kernels = []
    for i, n in enumerate(opt.graph.node):
        ins = [x for x in n.input if x]
        is_kernel = n.op_type not in NO_KERNEL and not (ins and all(x in host for x in ins))
        kernels.append(is_kernel)
    assign = optimized_groups(src, opt)
    ops = collections.Counter(n.op_type for n in opt.graph.node)
    return {"level": label, "nodes": len(opt.graph.node), "kernels": sum(kernels),
            "op_counts": dict(sorted(ops.items())),
            "optimized": [{"name": n.name, "op": n.op_type, "domain": n.domain, "kernel": k}
                          for n, k in zip(opt.graph.node, kernels)],
            "assign": assign}


def run_level(path, level, label, tmp):
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    so.intra_op_num_threads = 1
    out = os.path.join(tmp, f"{label}.onnx")
    so.optimized_model_filepath = out
    ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return onnx.load(out, load_external_data=False)


def transformer_stats(path, model_type, heads, hidden, tmp):
    from onnxruntime.transformers import optimizer
    m = optimizer.optimize_model(path, model_type=model_type, num_heads=heads, hidden_size=hidden,
                                 opt_level=0, use_gpu=False)
    stats = m.get_fused_operator_statistics()
    out = os.path.join(tmp, "transformers.onnx")
    m.save_model_to_file(out)
    return stats, onnx.load(out, load_external_data=False)


def main():
    path, out = sys.argv[1], sys.argv[2]
    src = onnx.load(path, load_external_data=False)
    doc = {"model": os.path.basename(path), "ort": ort.__version__, "source_nodes": len(src.graph.node),
           "source": [{"name": n.name, "op": n.op_type, "inputs": list(n.input), "outputs": list(n.output)}
                      for n in src.graph.node],
           "levels": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for level, label in ((ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED, "extended"),
                             (ort.GraphOptimizationLevel.ORT_ENABLE_ALL, "all")):
            doc["levels"][label] = summarize(src, run_level(path, level, label, tmp), label)
        if len(sys.argv) > 3 and sys.argv[3] == "--transformer":
            model_type, heads, hidden = sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
            try:
                stats, opt = transformer_stats(path, model_type, heads, hidden, tmp)
                doc["transformer_fusions"] = {k: v for k, v in sorted(stats.items())}
                doc["levels"]["transformers"] = summarize(src, opt, "transformers")
            except Exception as e:  # the optimizer's pattern code is not robust to every export
                doc["transformer_error"] = f"{type(e).__name__}: {e}"
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
    ext = doc["levels"]["extended"]
    print(f"{os.path.basename(path)}: {doc['source_nodes']} nodes -> extended {ext['nodes']} nodes, "
          f"{ext['kernels']} kernels", file=sys.stderr)


if __name__ == "__main__":
    main()
