"""--emit-model-explorer in Google's Model Explorer web app, in headless Chromium (docs/viewers.md).

The 1.3B GPT of issue 14 (models/fx/gpt_1_3b.py, 24 layers, batch 8 x seq
2048) is captured for a training step by graphlint-export on fake tensors,
linted with --emit-model-explorer (both timed), and the folder is opened as
a user opens it: the package's own server (`model-explorer graph.json
--node_data_paths=...`), its web app in Chromium with WebGL in software
(SwiftShader), one layer expanded (blocks.1's attention) and the predicted
time overlay selected, through the app's `uiState` URL parameter. Once the
app has laid the graph out, the page must show the file's node count, the
expanded layer with its children, and every overlay by its name, with no
console error but the web fonts' (fonts.gstatic.com, unreachable offline;
the graph's labels use the app's bundled fonts). The view is saved as a PNG:
GRAPHLINT_SCREENSHOTS=docs/images keeps it (docs/images/
model_explorer_gpt_1_3b_train.png), without it it goes to a temporary folder.

Skips (77) without chromium or the model_explorer package (scripts/requirements/
torch2.txt). Run by GRAPHLINT_TORCH2_PYTHON; GRAPHLINT_CLI is the binary.
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import browser  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.environ["GRAPHLINT_CLI"]
MODEL = "models/fx/gpt_1_3b.py"
EXPAND = "blocks/blocks.1/attn"
# The web app selects the overlay loaded last.
OVERLAYS = ["fusion_group", "peak_bytes", "findings", "predicted_time"]
FONTS = "fonts.gstatic.com"
# The graph is laid out and the selected layer's panel is up: the page's text.
SHOWN = ("document.body && document.body.innerText.includes('LAYER INFO') && "
         "!document.body.innerText.includes('Processing graph') && document.body.innerText")


def timed(cmd):
    start = time.monotonic()
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return time.monotonic() - start


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(folder):
    """The package's `model-explorer` CLI on the folder; its process and port."""
    exe = os.path.join(os.path.dirname(sys.executable), "model-explorer")
    port = free_port()
    paths = [os.path.join(folder, f"{o}.json") for o in OVERLAYS]
    proc = subprocess.Popen([exe, os.path.join(folder, "graph.json"), "--node_data_paths=" + ",".join(paths),
                             "--no_open_in_browser", "--host", "127.0.0.1", "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=dict(os.environ, PYTHONUNBUFFERED="1"))
    for line in proc.stdout:
        if re.search(r"http://127\.0\.0\.1:\d+/", line):
            return proc, port
    raise RuntimeError(f"model-explorer did not start (exit {proc.wait()})")


def app_url(port, folder, label, graph):
    pane = {"selectedGraphId": graph, "selectedCollectionLabel": label, "widthFraction": 1, "selected": True,
            "deepestExpandedGroupNodeIds": [EXPAND + "___group___"], "selectedNodeId": EXPAND + "___group___"}
    data = {"models": [{"url": os.path.join(folder, "graph.json"), "adapterId": "builtin_json"}],
            "nodeData": [os.path.join(folder, f"{o}.json") for o in OVERLAYS],
            "nodeDataTargets": [""] * len(OVERLAYS), "uiState": {"paneStates": [pane]}}
    return f"http://127.0.0.1:{port}/?data={urllib.parse.quote(json.dumps(data))}&renderer=webgl"


def main():
    chromium = browser.find_chromium()
    if not chromium:
        browser.skip("chromium is not installed (scripts/setup.sh installs Debian's chromium; or set GRAPHLINT_CHROMIUM)")
    try:
        import model_explorer  # noqa: F401
    except ImportError as e:
        browser.skip(f"model_explorer cannot be imported ({e}): pip install ai-edge-model-explorer")
    with tempfile.TemporaryDirectory() as tmp:
        fx = os.path.join(tmp, "gpt_1_3b_train.fx.json")
        folder = os.path.join(tmp, "me")
        capture = timed([sys.executable, "-m", "graphlint.export", os.path.join(ROOT, MODEL), "--train", "-o", fx])
        lint = timed([CLI, fx, "--train", "--precision", "bf16-mixed", "--exit-zero", "-q",
                      "--emit-model-explorer", folder])
        size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
        with open(os.path.join(folder, "graph.json"), encoding="utf-8") as f:
            doc = json.load(f)
        graph = doc["graphs"][0]
        names = []
        for o in OVERLAYS:
            with open(os.path.join(folder, f"{o}.json"), encoding="utf-8") as f:
                names.append(json.load(f)[graph["id"]]["name"])
        children = {n["namespace"] for n in graph["nodes"] if n["namespace"].startswith(EXPAND)}
        print(f"{browser.chromium_version(chromium)}; {MODEL} --train: capture {capture:.1f} s, "
              f"--emit-model-explorer lint {lint:.2f} s, {len(graph['nodes'])} nodes, {size} bytes")

        server, port = start_server(folder)
        chrome = browser.Chromium(chromium, 1600, 1000, webgl=True)
        ok = False
        try:
            start = time.monotonic()
            chrome.goto(app_url(port, folder, doc["label"], graph["id"]))
            text = None
            while not text and time.monotonic() - start < 240:
                # wait_for stops at a console error: the web fonts' failed loads are let pass.
                chrome.errors = [e for e in chrome.errors if FONTS not in e]
                if chrome.errors:
                    break
                text = chrome.wait_for(SHOWN, timeout=2)
            shown = time.monotonic() - start
            chrome.errors = [e for e in chrome.errors if FONTS not in e]
            checks = {
                "node count": text and f"{len(graph['nodes'])} nodes" in text,
                "expanded layer": text and "attn" in text and "blocks/blocks.1" in text,
                "overlays": text and all(n in text for n in names),
                "webgl canvas": chrome.evaluate("!!document.querySelector('canvas')"),
                "no console error": not chrome.errors,
            }
            ok = all(checks.values())
            chrome.evaluate("new Promise(r => setTimeout(r, 1000))")  # the camera's move to the layer ends
            out = os.environ.get("GRAPHLINT_SCREENSHOTS") or tmp
            shot = os.path.join(out, "model_explorer_gpt_1_3b_train.png")
            saved = f", screenshot {shot} ({chrome.screenshot(shot) // 1024} KiB)" if text else ""
            print(f"{'ok ' if ok else 'BAD'} shown in {shown:.1f} s ({len(children)} layers under {EXPAND}): "
                  + ", ".join(f"{k} {'yes' if v else 'NO'}" for k, v in checks.items()) + saved
                  + (f"; console: {chrome.errors}" if chrome.errors else ""))
            if not ok:
                print("page text:", (text or "")[:600].replace("\n", " | "))
        finally:
            chrome.close()
            server.terminate()
            server.wait(10)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
