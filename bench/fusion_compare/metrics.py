"""Agreement between two partitions of a graph's compute nodes into kernels
(graphlint's plan vs the compiler's), defined in docs/validation.md:

- compute nodes: the nodes both sides run inside a kernel, minus views and
  metadata ops (an aten op whose output aliases its input; ONNX Reshape,
  Squeeze, Unsqueeze, Flatten, Identity, Shape, Size, Constant, Dropout),
  which neither side launches a kernel for; nodes only one side runs in a
  kernel are counted apart (only_graphlint / only_compiler);
- co-membership agreement: over all pairs of compute nodes, the share that is
  in one kernel on both sides or in different kernels on both sides;
- edge agreement: the same over producer -> consumer edges between compute
  nodes (looking through views), the stricter figure;
- boundaries: graphlint's boundaries between compute nodes, and how many of
  them the compiler splits too; for Inductor, how many of those whose kernel
  pair the scheduler logged a refusal for carry the matching reason.
"""

import collections

ONNX_NO_KERNEL = {"Reshape", "Squeeze", "Unsqueeze", "Flatten", "Identity", "Shape", "Size", "Constant", "Dropout"}

# Inductor's WhyNoFuse reasons, in graphlint's vocabulary (None: not a
# producer -> consumer refusal graphlint models).
INDUCTOR_REASONS = {
    "intermediate nodes between node1 & node2": "multi_consumer",
    "will create cycle": "multi_consumer",
    "node1 must go before node2": "multi_consumer",
    "device mismatch (%s vs %s)": "cross_device",
    "exceeds max fusion": "reduction_boundary",
    "invalid loop order": "reduction_boundary",
    "nodes numel/rnumel incompatibility": "reduction_boundary",
    "memory deps did not match": "reduction_boundary",
    "node2 is extern or nop": "reduction_boundary",
    "node1 is nop": "reduction_boundary",
    "no shared data": None,
    "Nodes are too far away. Fusing them may increase peak memory.": None,
}


def _pairs(n):
    return n * (n - 1) // 2


def partition_agreement(a, b, nodes):
    """Pairwise co-membership agreement (Rand index) of two labelings."""
    n = len(nodes)
    if n < 2:
        return 1.0
    ca = collections.Counter(a[x] for x in nodes)
    cb = collections.Counter(b[x] for x in nodes)
    cab = collections.Counter((a[x], b[x]) for x in nodes)
    ta = sum(_pairs(c) for c in ca.values())
    tb = sum(_pairs(c) for c in cb.values())
    both = sum(_pairs(c) for c in cab.values())
    return 1.0 - (ta + tb - 2 * both) / _pairs(n)


def _edges(nodes, producer_of, inputs_of, is_view, view_source):
    edges = []
    for n in nodes:
        for v in inputs_of(n):
            p = producer_of.get(v)
            hops = 0
            while p is not None and p not in nodes and is_view(p) and hops < 64:
                src = view_source(p)
                p = producer_of.get(src) if src else None
                hops += 1
            if p is not None and p in nodes and p != n:
                edges.append((p, n))
    return sorted(set(edges))


def _score(gl, comp, nodes, edges, boundaries, refusal_of=None):
    edge_ok = sum((gl[p] == gl[c]) == (comp[p] == comp[c]) for p, c in edges)
    split = checked = match = 0
    mismatches = collections.Counter()
    counted = 0
    for b in boundaries:
        p, c = b["producer"], b["node"]
        if p not in nodes or c not in nodes or gl[p] == gl[c]:
            continue
        counted += 1
        if comp[p] != comp[c]:
            split += 1
            if refusal_of:
                why = refusal_of(comp[p], comp[c])
                if why is not None:
                    checked += 1
                    match += why == b["reason"]
                    if why != b["reason"]:
                        mismatches[f"{b['reason']} vs {why}"] += 1
    return {"agreement": partition_agreement(gl, comp, sorted(nodes)),
            "edge_agreement": edge_ok / len(edges) if edges else 1.0, "edges": len(edges),
            "boundaries": counted, "boundaries_split": split, "reason_checked": checked, "reason_match": match,
            "reason_mismatches": dict(mismatches)}


def _graphlint_groups(plan):
    """Node -> the kernel launch graphlint predicts it runs in: a group's
    `launch` (inductor-cpu: the C++ function several groups' loop nests share),
    for groups that run in a kernel (shape-only groups do not)."""
    gl = {}
    for grp in plan["groups"]:
        launch = grp.get("launch", grp["id"])
        if grp["kernels"] > 0 or launch != grp["id"]:
            for n in grp["nodes"]:
                gl[n] = launch
    return gl


def compare_fx(fx, plan, g):
    """One Inductor graph: fx is the lowered graph's FX JSON, g the kernels."""
    nodes = {n["name"]: n for n in fx["nodes"]}
    producer_of = {o["name"]: n["name"] for n in fx["nodes"] for o in n["outputs"]}

    def is_view(name):
        return any(a >= 0 for a in nodes[name].get("aliases", []))

    # MultiOutput unpacks an extern kernel's tuple result: no launch.
    g = dict(g, kernels=[k for k in g["kernels"] if k["kind"] != "extern:MultiOutput"])
    comp, written = {}, {}
    for kid, k in enumerate(g["kernels"]):
        for w in k["writes"]:
            written.setdefault(w, kid)
    comp.update(written)
    for kid, k in enumerate(g["kernels"]):
        if k["kind"] == "cpp":
            for o in k["origins"]:
                comp.setdefault(o, kid)  # inlined into the first kernel that reads it
    recomputed = sum(1 for name in nodes if sum(name in k["origins"] for k in g["kernels"] if k["kind"] == "cpp") > 1
                     and name not in written)
    gl = _graphlint_groups(plan)
    compute = {n for n in nodes if not is_view(n)}
    both = {n for n in compute if n in gl and n in comp}
    edges = _edges(both, producer_of, lambda n: [v for v in nodes[n]["inputs"] if v], is_view,
                   lambda n: nodes[n]["inputs"][0] if nodes[n]["inputs"] else None)
    kid_of_buf = {}
    for kid, k in enumerate(g["kernels"]):
        for b in k["buffers"]:
            kid_of_buf[b] = kid
    refusals = {}
    for r in g["refusals"]:
        cat = INDUCTOR_REASONS.get(r["reason"], "other:" + r["reason"])
        ka = {kid_of_buf[x] for x in r["node1"].split("_") if x in kid_of_buf}
        kb = {kid_of_buf[x] for x in r["node2"].split("_") if x in kid_of_buf}
        for x in ka:
            for y in kb:
                if cat is not None:
                    refusals.setdefault(frozenset((x, y)), cat)
    def refusal_of(a, b):
        # Inductor never offers an extern library call (mm, convolution, SDPA)
        # for fusion: its boundaries are contraction boundaries by construction.
        if g["kernels"][a]["kind"].startswith("extern") or g["kernels"][b]["kind"].startswith("extern"):
            return "reduction_boundary"
        return refusals.get(frozenset((a, b)))

    row = _score(gl, comp, both, edges, plan["boundaries"], refusal_of)
    row.update({"kernels_graphlint": plan["kernels_predicted"], "kernels_compiler": len(g["kernels"]),
                "cpp_kernels": g["generated_kernel_count"], "compute_nodes": len(both),
                "only_graphlint": len({n for n in compute if n in gl and n not in comp}),
                "only_compiler": len({n for n in compute if n in comp and n not in gl}),
                "recomputed": recomputed, "pairs": _pairs(len(both))})
    return row


def compare_onnx(source, plan, level):
    nodes = {n["name"]: n for n in source}
    producer_of = {o: n["name"] for n in source for o in n["outputs"] if o}
    opt = level["optimized"]
    comp = {name: idx for name, idx in level["assign"].items() if idx is not None and opt[idx]["kernel"]}
    gl = _graphlint_groups(plan)

    def is_view(name):
        return nodes[name]["op"] in ONNX_NO_KERNEL

    compute = {n for n in nodes if not is_view(n)}
    both = {n for n in compute if n in gl and n in comp}
    edges = _edges(both, producer_of, lambda n: [v for v in nodes[n]["inputs"] if v], is_view,
                   lambda n: nodes[n]["inputs"][0] if nodes[n]["inputs"] else None)
    row = _score(gl, comp, both, edges, plan["boundaries"])
    row.update({"kernels_graphlint": plan["kernels_predicted"], "kernels_compiler": level["kernels"],
                "compute_nodes": len(both), "only_graphlint": len({n for n in compute if n in gl and n not in comp}),
                "only_compiler": len({n for n in compute if n in comp and n not in gl}), "pairs": _pairs(len(both)),
                "optimized_ops": level["op_counts"]})
    return row


def combine(rows, name, profile, compile_s=None):
    """Several graphs of one model (graph breaks) as one row: kernels and
    boundaries add up, agreements are weighted by pairs and edges."""
    out = {"model": name, "profile": profile, "graphs": len(rows)}
    for key in ("kernels_graphlint", "kernels_compiler", "compute_nodes", "only_graphlint", "only_compiler", "edges",
                "boundaries", "boundaries_split", "reason_checked", "reason_match", "pairs", "cpp_kernels",
                "recomputed"):
        out[key] = sum(r.get(key, 0) for r in rows)
    pairs = out["pairs"]
    out["agreement"] = sum(r["agreement"] * r["pairs"] for r in rows) / pairs if pairs else 1.0
    out["edge_agreement"] = (sum(r["edge_agreement"] * r["edges"] for r in rows) / out["edges"]
                             if out["edges"] else 1.0)
    kc = out["kernels_compiler"]
    out["kernel_error"] = (out["kernels_graphlint"] - kc) / kc if kc else 0.0
    mism = collections.Counter()
    for r in rows:
        mism.update(r.get("reason_mismatches", {}))
    out["reason_mismatches"] = dict(mism)
    if "optimized_ops" in rows[0]:
        out["optimized_ops"] = rows[0]["optimized_ops"]
    if compile_s is not None:
        out["compile_s"] = compile_s
    return out
