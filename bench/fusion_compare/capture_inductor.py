"""What TorchInductor (CPU) fuses: compile one corpus model with
torch.compile(backend="inductor") and record, per graph Inductor lowers,

- the aten graph itself (the post-grad FX graph `GraphLowering` runs), written
  with graphlint-export's JSON writer (graphlint.export.fx_json), so
  graphlint plans exactly the nodes Inductor lowered, under the same names;
- the kernels: each C++ kernel the CPU backend flushes (its scheduler nodes'
  origins, mapped to FX node names) and each extern kernel call (aten mm/conv);
- the scheduler's refusals (`WhyNoFuse`, the TORCH_LOGS="fusion" log).

Codegen runs (so `metrics.generated_kernel_count` is Inductor's own count), but
the generated C++ is never compiled: `_compile_to_module` stops after codegen
and the graph runs eagerly instead, so a model costs its lowering time only.

Usage: capture_inductor.py MODEL OUTDIR   (writes OUTDIR/MODEL.inductor.json
and OUTDIR/MODEL.g<N>.fx.json per graph).
"""

import json
import operator
import os
import sys
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))

import torch  # noqa: E402
import torch._inductor.config as iconfig  # noqa: E402
from torch._inductor import graph as igraph  # noqa: E402
from torch._inductor import metrics, scheduler  # noqa: E402
from torch._inductor.codegen import cpp  # noqa: E402
from torch._inductor.virtualized import V  # noqa: E402

from graphlint.export.fx_capture import Capture  # noqa: E402   (python/, from PYTHONPATH: compare.py sets it)
from graphlint.export.fx_json import Writer  # noqa: E402
from graphlint.export.fx_record import tensor_meta  # noqa: E402
from graphlint.export.fx_symbols import SizeNamer  # noqa: E402

import zoo  # noqa: E402


class StopAfterCodegen(Exception):
    pass


class Recorder:
    def __init__(self):
        self.graphs = []
        self.current = None
        self.train = False  # forward + backward: see compile_to_module
        self.write_now = None  # (gm, index) -> (nodes, file): write each graph when lowered

    def start(self):
        self.current = {"kernels": [], "refusals": []}

    def kernel(self, kind, snodes):
        names, ops = [], []
        for sn in snodes:
            node = getattr(sn, "node", None)
            if node is None:
                continue
            for o in node.get_origins():
                if o.op == "call_function" and o.name not in names:
                    names.append(o.name)
        writes = []  # the FX nodes whose realized output this kernel writes
        for sn in snodes:
            node = getattr(sn, "node", None)
            outs = node.get_outputs() if node is not None and hasattr(node, "get_outputs") else [node]
            for b in outs:
                o = b.get_origin_node() if b is not None and hasattr(b, "get_origin_node") else None
                if o is not None and o.name not in writes:
                    writes.append(o.name)
        self.current["kernels"].append({"kind": kind, "origins": names, "writes": writes,
                                        "buffers": [sn.get_name() for sn in snodes]})


REC = Recorder()


def _patch():
    orig_flush = cpp.CppScheduling.flush

    def flush(self):
        if self.kernel_group.scheduled_nodes and REC.current is not None:
            REC.kernel("cpp", list(self.kernel_group.scheduled_nodes))
        return orig_flush(self)

    cpp.CppScheduling.flush = flush

    orig_extern = scheduler.ExternKernelSchedulerNode.codegen

    def extern_codegen(self, wrapper):
        if REC.current is not None:
            REC.kernel("extern:" + str(getattr(self.node, "python_kernel_name", "") or type(self.node).__name__),
                       [self])
        return orig_extern(self, wrapper)

    scheduler.ExternKernelSchedulerNode.codegen = extern_codegen

    orig_why = scheduler.WhyNoFuse.__call__

    def why(self, reason, *args):
        if REC.current is not None:
            try:
                text = reason % args
            except Exception:
                text = reason
            REC.current["refusals"].append({"node1": self.name1, "node2": self.name2, "reason": reason,
                                            "text": text})
        return orig_why(self, reason, *args)

    scheduler.WhyNoFuse.__call__ = why

    def compile_to_module(self):
        REC.start()
        before = metrics.generated_kernel_count
        self.codegen()
        g = REC.current
        g["generated_kernel_count"] = metrics.generated_kernel_count - before
        g["scheduler_nodes"] = []
        buf_to_fx = {}
        for sn in self.scheduler.nodes:
            members = sn.get_nodes()
            origins = []
            for m in members:
                node = getattr(m, "node", None)
                if node is not None:
                    for o in node.get_origins():
                        if o.op == "call_function" and o.name not in origins:
                            origins.append(o.name)
                buf_to_fx[m.get_name()] = origins
            g["scheduler_nodes"].append({"type": type(sn).__name__, "name": sn.get_name(), "origins": origins})
        g["buffer_origins"] = buf_to_fx
        if REC.write_now:
            # (a training step runs on after codegen, and later compiles can
            # rewrite the graph: write it while it is the one just lowered)
            g["fx_nodes"], g["fx_file"] = REC.write_now(self.module, len(REC.graphs))
        else:
            g["gm"] = self.module
        REC.graphs.append(g)
        REC.current = None
        if REC.train:
            # A training step needs its forward partition to run for autograd
            # to reach the backward one: the lowered graph runs eagerly in
            # place of the generated module (which is never compiled).
            gm = self.module

            def call(args):
                out = gm(*args)
                args.clear()
                return out

            return types.SimpleNamespace(call=call, __file__=os.devnull)
        raise StopAfterCodegen()

    igraph.GraphLowering._compile_to_module = compile_to_module


def backend(example_inputs_of_model):
    from torch._inductor.compile_fx import compile_fx

    def run(gm, example_inputs):
        try:
            return compile_fx(gm, example_inputs)
        except StopAfterCodegen:
            return gm.forward
        except Exception as e:  # BackendCompilerFailed wraps ours
            if "StopAfterCodegen" in repr(e) or isinstance(getattr(e, "inner_exception", None), StopAfterCodegen):
                return gm.forward
            raise

    return run


# Post-grad lowering patterns whose lowering returns its list input unchanged
# (fx_passes/post_grad.py: split_with_sizes(cat(xs)) -> xs). In the graph they
# are calls with the list as a keyword argument; Inductor lowers them to
# nothing, so the graph written for graphlint reads the list directly.
IDENTITY_LOWERINGS = ("cat_splitwithsizes_replace",)


def inline_identity_lowerings(gm):
    for n in list(gm.graph.nodes):
        if n.op != "call_function" or getattr(n.target, "__name__", "") not in IDENTITY_LOWERINGS:
            continue
        items = n.kwargs.get("input_", n.args[-1] if n.args else None)
        if not isinstance(items, (list, tuple)):
            continue
        for u in list(n.users):
            if u.op == "call_function" and u.target is operator.getitem and isinstance(u.args[1], int):
                u.replace_all_uses_with(items[u.args[1]])
                gm.graph.erase_node(u)
        if not n.users:
            gm.graph.erase_node(n)


def write_graph(gm, inputs, path):
    """The lowered graph as graphlint FX JSON. Placeholders whose shape and
    dtype match an example input are inputs, the rest parameters."""
    inline_identity_lowerings(gm)
    flat = torch.utils._pytree.tree_flatten(inputs)[0]
    want = [(tuple(t.shape), t.dtype) for t in flat if isinstance(t, torch.Tensor)]
    placeholders = []
    for n in gm.graph.nodes:
        if n.op == "call_function" or n.op == "placeholder":
            val = n.meta.get("val")
            if isinstance(val, torch.Tensor):
                n.meta["graphlint_val"] = tensor_meta(val)
            elif isinstance(val, (list, tuple)):
                for u in n.users:
                    uv = u.meta.get("val")
                    if isinstance(uv, torch.Tensor):
                        u.meta["graphlint_val"] = tensor_meta(uv)
        if n.op == "placeholder":
            val = n.meta.get("val")
            key = (tuple(val.shape), val.dtype) if isinstance(val, torch.Tensor) else None
            if key in want:
                want.remove(key)
                placeholders.append(("input", n.name, val))
            else:
                placeholders.append(("parameter", n.name, val))
    writer = Writer(Capture(gm, placeholders, set(), None, []), SizeNamer([]))
    params, graph_inputs, nodes, outputs = writer.run()
    doc = {"format": "graphlint-fx", "version": 2,
           "producer": {"name": "bench/fusion_compare", "version": "1", "torch": torch.__version__,
                        "capture": "inductor-post-grad"},
           "model": {"file": "", "class": "GraphModule"}, "mode": "forward",
           "params": params, "inputs": graph_inputs, "nodes": nodes, "outputs": outputs}
    with open(path, "w") as f:
        json.dump(doc, f, separators=(",", ":"), allow_nan=False)
    return len(nodes)


def main():
    name, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    iconfig.fx_graph_cache = False
    iconfig.autotune_local_cache = False
    iconfig.compile_threads = 1
    try:
        iconfig.autograd_cache = False
    except Exception:
        pass
    torch._dynamo.config.cache_size_limit = 64
    # Static shapes on recompiles: every graph is written with concrete sizes.
    torch._dynamo.config.automatic_dynamic_shapes = False
    _patch()
    # Graph breaks (data-dependent ops, unsupported calls) go to the log next
    # to the result: docs/validation.md reads them for data_dependent_shape.
    torch._logging.set_logs(graph_breaks=True)
    start = time.perf_counter()
    train = name.endswith("-train")  # forward + backward: Inductor lowers both graphs
    REC.train = train
    model, inputs = zoo.build(name[:-len("-train")] if train else name)
    compiled = torch.compile(model, backend=backend(inputs))
    if train:
        def write_now(gm, i):
            path = os.path.join(outdir, f"{name}.g{i}.fx.json")
            return write_graph(gm, inputs, path), os.path.basename(path)

        REC.write_now = write_now
        model.train()
        out = compiled(*inputs)
        out = getattr(out, "last_hidden_state", out)
        out.float().sum().backward()
    else:
        with torch.no_grad():
            compiled(*inputs)
    took = time.perf_counter() - start
    graphs = []
    for i, g in enumerate(REC.graphs):
        if "gm" not in g:
            graphs.append(g)
            continue
        gm = g.pop("gm")
        fx_path = os.path.join(outdir, f"{name}.g{i}.fx.json")
        g["fx_nodes"] = write_graph(gm, inputs, fx_path)
        g["fx_file"] = os.path.basename(fx_path)
        graphs.append(g)
    doc = {"model": name, "torch": torch.__version__, "compile_s": round(took, 1), "graphs": graphs}
    with open(os.path.join(outdir, f"{name}.inductor.json"), "w") as f:
        json.dump(doc, f, indent=1)
    print(f"{name}: {len(graphs)} graph(s), {sum(g['generated_kernel_count'] for g in graphs)} cpp kernels, "
          f"{took:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
