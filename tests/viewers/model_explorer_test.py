"""--emit-model-explorer against Google's Model Explorer (docs/viewers.md).

For each model and setup, graphlint writes the JSON report and the Model
Explorer folder. The package's own readers must take every file:
- graph.json, through dacite's strict from_dict into model_explorer's
  GraphCollection (graph_builder.py: the loader its node data provider
  runner uses for graphs, here refusing any key the dataclasses lack), and
  through the web app's JSON-loader rule (a collection is an object with
  `label` and `graphs`); every edge names a node of its graph and an output
  that node declares;
- each overlay, through from_dict into node_data_builder.py's GraphNodeData
  for every graph, and back through ModelNodeData.to_json_string, which must
  write every field the file has unchanged (the file is what the package
  writes, less the defaults);
  its results name nodes of the graph, and the predicted times and bytes at
  the peak add up to the report's compute time and peak allocated bytes;
- the server: `model-explorer graph.json --node_data_paths=...
  --no_open_in_browser` (the package's CLI) starts, serves the web app, and
  serves the graph and every overlay back, unchanged, through
  /api/v1/read_text_file, the route the web app loads local files from.
Run by GRAPHLINT_TORCH2_PYTHON; GRAPHLINT_CLI is the binary. Exit 77 when
model_explorer cannot be imported.
"""
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

try:
    import dacite
    from model_explorer.graph_builder import GraphCollection
    from model_explorer.node_data_builder import GraphNodeData, ModelNodeData
except ImportError as e:
    print(f"SKIP: model_explorer cannot be imported ({e}); pip install ai-edge-model-explorer")
    sys.exit(77)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.environ["GRAPHLINT_CLI"]
OVERLAYS = ["fusion_group", "predicted_time", "peak_bytes", "findings"]
STRICT = dacite.Config(strict=True)

CASES = [
    ("models/resnet18.onnx", ["--dim", "batch=8", "--train"]),
    ("models/control_flow.onnx", []),
    ("tests/fixtures/fx/tiny_llama.train.fx.json", ["--train", "--precision", "bf16-mixed"]),
]


def emit(model, flags, out):
    cmd = [CLI, os.path.join(ROOT, model), "--format", "json", "--exit-zero", "--emit-model-explorer", out] + flags
    report = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.loads(report)["files"][0]


def check_graph(doc):
    assert doc.get("label") and isinstance(doc.get("graphs"), list), "not a graph collection the web app loads"
    collection = dacite.from_dict(data_class=GraphCollection, data=doc, config=STRICT)
    ids = {}
    for g in collection.graphs:
        nodes = {n.id: n for n in g.nodes}
        assert len(nodes) == len(g.nodes), f"{g.id}: repeated node ids"
        for n in g.nodes:
            for e in n.incomingEdges:
                src = nodes.get(e.sourceNodeId)
                assert src is not None, f"{g.id}: {n.id} reads unknown node {e.sourceNodeId}"
                outs = {m.id for m in src.outputsMetadata}
                assert e.sourceNodeOutputId in outs, f"{g.id}: {n.id} reads output {e.sourceNodeOutputId} of {src.id}"
        ids[g.id] = set(nodes)
    for g in collection.graphs:
        for n in g.nodes:
            for sub in n.subgraphIds:
                assert sub in ids, f"{g.id}: {n.id} names unknown subgraph {sub}"
    return collection, ids


def check_overlay(name, data, ids):
    assert set(data) == set(ids), f"{name}: graphs {sorted(data)} vs {sorted(ids)}"
    parsed = {}
    for gid, gd in data.items():
        parsed[gid] = dacite.from_dict(data_class=GraphNodeData, data=gd, config=STRICT)
        unknown = set(parsed[gid].results) - ids[gid]
        assert not unknown, f"{name}/{gid}: results for unknown nodes {sorted(unknown)[:5]}"
    # What the package writes of it (its defaults filled in) reads back the same.
    written = json.loads(ModelNodeData(graphsData=parsed).to_json_string())
    again = {k: dacite.from_dict(GraphNodeData, v, config=STRICT) for k, v in written.items()}
    assert again == parsed, f"{name}: ModelNodeData does not write the same node data back"
    for gid, gd in data.items():
        for key, value in gd.items():
            assert written[gid][key] == value, f"{name}/{gid}: {key} changed through ModelNodeData"


def close(a, b):
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1e-30)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url, timeout=10):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode("utf-8")


def check_server(folder):
    """model-explorer's CLI on the folder: the web app and every file come back."""
    paths = [os.path.join(folder, "graph.json")] + [os.path.join(folder, f"{o}.json") for o in OVERLAYS]
    exe = os.path.join(os.path.dirname(sys.executable), "model-explorer")
    port = free_port()
    cmd = [exe, paths[0], f"--node_data_paths={','.join(paths[1:])}", "--no_open_in_browser",
           "--host", "127.0.0.1", "--port", str(port)]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        url, lines = None, []
        deadline = time.time() + 120
        while time.time() < deadline and url is None:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            m = re.search(r"(http://127\.0\.0\.1:\d+/\?data=\S+)", line)
            url = m.group(1) if m else None
        assert url, "model-explorer did not start:\n" + "".join(lines)
        data = json.loads(urllib.parse.unquote(urllib.parse.parse_qs(urllib.parse.urlparse(url).query)["data"][0]))
        assert [m["url"] for m in data["models"]] == [os.path.abspath(paths[0])], data
        assert data["nodeData"] == [os.path.abspath(p) for p in paths[1:]], data
        base = f"http://127.0.0.1:{port}"
        assert get(base + "/check_health") == "model_explorer_ok"
        index = get(base + "/")
        scripts = re.findall(r'src="(main-[^"]+\.js)"', index)
        assert scripts, "the web app's index.html names no main script"
        assert "builtin_json" in get(f"{base}/{scripts[0]}", timeout=30), "the web app has no JSON graph loader"
        for p in paths:
            served = json.loads(get(base + "/api/v1/read_text_file?path=" + urllib.parse.quote(os.path.abspath(p))))
            assert "error" not in served, served
            with open(p, encoding="utf-8") as f:
                assert served["content"] == f.read(), f"{p} served changed"
        return len(paths)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def check(model, flags, tmp, serve):
    folder = os.path.join(tmp, os.path.basename(model).split(".")[0])
    report = emit(model, flags, folder)
    with open(os.path.join(folder, "graph.json"), encoding="utf-8") as f:
        collection, ids = check_graph(json.load(f))
    overlays = {}
    for o in OVERLAYS:
        with open(os.path.join(folder, f"{o}.json"), encoding="utf-8") as f:
            overlays[o] = json.load(f)
        check_overlay(o, overlays[o], ids)
    main = collection.graphs[0].id
    seconds = sum(r["value"] for r in overlays["predicted_time"][main]["results"].values())
    compute = report["compute"]
    predicted = compute["time_forward_s"] + (compute.get("time_backward_s") or 0)
    peak = sum(r["value"] for r in overlays["peak_bytes"][main]["results"].values())
    ok = close(seconds, predicted) and peak == report["memory"]["peak_allocated_bytes"]
    served = check_server(folder) if serve else 0
    nodes = sum(len(g.nodes) for g in collection.graphs)
    print(f"{'ok ' if ok else 'BAD'} {model} {' '.join(flags)}: {len(collection.graphs)} graph(s), {nodes} nodes; "
          f"times {seconds:.6g} s vs compute {predicted:.6g} s; bytes at the peak {peak:.0f} vs "
          f"{report['memory']['peak_allocated_bytes']}; {served} files served back")
    return ok


def main():
    with tempfile.TemporaryDirectory() as tmp:
        # The server is started on the first case's folder only.
        results = [check(model, flags, tmp, serve=i == 0) for i, (model, flags) in enumerate(CASES)]
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
