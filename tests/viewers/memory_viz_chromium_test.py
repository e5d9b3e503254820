"""--emit-memory-snapshot in torch's own viewer, MemoryViz.js, in headless Chromium.

MemoryViz.js is the page behind pytorch.org/memory_viz and torch.cuda._memory_viz's
trace_plot HTML. For each case graphlint writes a snapshot; a local page
imports MemoryViz.js (d3 5 from npm instead of its CDN, through an import
map) and hands it the file's bytes as they are on disk, as a drag and drop
does (its own unpickler reads them, not Python's). Then, with no error in
the console:
- "Active Memory Timeline" draws one polygon per allocation (the ones it
  collects from device_traces and the final blocks, plus one for the small
  ones it summarises) and its legend names the snapshot's categories;
- "Allocator State History" lists every trace event (free_requested and
  free_completed merged, as it does) and draws every segment.
Each timeline is saved as a PNG: GRAPHLINT_SCREENSHOTS=docs/images keeps them
(docs/images/memory_viz_*.png, docs/viewers.md); without it they are
written to a temporary folder and thrown away.

torch's wheels do not ship MemoryViz.js: the test looks for it beside
torch/utils/viz/ of the running Python, then at GRAPHLINT_MEMORY_VIZ_JS (a
copy of torch/utils/viz/MemoryViz.js from pytorch's source, with the files
it imports beside it), and skips (77) when it finds neither, as it does
without chromium or the npm packages (GRAPHLINT_VIEWERS_WEB, scripts/setup.sh).
Run by GRAPHLINT_TORCH2_PYTHON; GRAPHLINT_CLI is the binary.
"""
import importlib.util
import json
import os
import pickle
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import browser  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.environ["GRAPHLINT_CLI"]
MAX_ENTRIES = 15000  # MemoryViz draws this many allocations, largest first, and summarises the rest

CASES = [
    ("models/resnet18.onnx", ["--dim", "batch=2", "--train", "--optimizer", "adamw"], "resnet18_train"),
    ("tests/fixtures/fx/tiny_llama.train.fx.json", ["--train", "--precision", "bf16-mixed"], "tiny_llama_bf16"),
]

# MemoryViz.js imports d3 5 and four d3 modules from a CDN; the import map
# points those URLs at d3 5.16.0's ES module sources from npm (d3-scale 2, where
# MemoryViz asks for 1: scaleLinear is the same). One module instance per
# package, so d3.event is the event d3-zoom and d3-brush set.
CDN = {"https://cdn.skypack.dev/d3@5": "d3", "https://cdn.skypack.dev/d3-axis@1": "d3-axis",
       "https://cdn.skypack.dev/d3-scale@1": "d3-scale", "https://cdn.skypack.dev/d3-zoom@1": "d3-zoom",
       "https://cdn.skypack.dev/d3-brush@1": "d3-brush"}


def find_memory_viz():
    spec = importlib.util.find_spec("torch")
    candidates = []
    if spec and spec.submodule_search_locations:
        candidates.append(os.path.join(spec.submodule_search_locations[0], "utils", "viz", "MemoryViz.js"))
    if os.environ.get("GRAPHLINT_MEMORY_VIZ_JS"):
        candidates.append(os.environ["GRAPHLINT_MEMORY_VIZ_JS"])
    for c in candidates:
        if os.path.isfile(c):
            return c
    return None


def import_map(modules):
    entry = {}
    for name in os.listdir(modules):
        if name == "d3" or name.startswith("d3-"):
            with open(os.path.join(modules, name, "package.json")) as f:
                entry[name] = f"/npm/{name}/{json.load(f)['module']}"
    entry.update({url: entry[name] for url, name in CDN.items()})
    return json.dumps({"imports": entry}, indent=1)


PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>MemoryViz</title>
<script type="importmap">{imports}</script></head>
<body><script type="module">
import {{add_remote_files}} from "/viz/MemoryViz.js";
add_remote_files([{{name: "{name}", url: "/snapshot/{name}"}}]);
</script></body></html>
"""


def expected(snap):
    """What MemoryViz builds from the snapshot: its process_alloc_data and annotate_snapshot, counted."""
    trace = snap["device_traces"][0]
    elements, live = 0, set()
    for e in trace:
        if e["action"] == "alloc":
            elements += 1
            live.add(e["addr"])
        elif e["action"] in ("free", "free_completed"):
            if e["addr"] in live:
                live.discard(e["addr"])
            else:
                elements += 1  # freed without its alloc recorded
    for seg in snap["segments"]:
        addr = seg["address"]
        for b in seg["blocks"]:
            if b["state"] == "active_allocated" and addr not in live:
                elements += 1  # held from before recording began
            addr += b["size"]
    merged = sum(1 for a, b in zip(trace, trace[1:]) if a["action"] == "free_requested"
                 and b["action"] == "free_completed" and a["addr"] == b["addr"])
    categories = []
    for e in trace:
        if "category" in e and e["category"] not in categories:
            categories.append(e["category"])
    if categories and "unknown" not in categories:
        categories.append("unknown")
    return {"polygons": min(elements, MAX_ENTRIES) + 1, "events": len(trace) - merged,
            "segments": len(snap["segments"]), "categories": categories}


# Counted in the page, from what MemoryViz drew.
TIMELINE = """(() => {
  const svg = document.querySelector('svg[viewBox="0 0 1024 576"]');
  if (!svg) return null;
  return {polygons: svg.querySelectorAll('polygon').length,
          legend: Array.from(svg.querySelectorAll('text')).map(t => t.textContent)
                       .filter(t => /^[a-z_]+$/.test(t))};
})()"""
SEGMENTS = """(() => {
  const svg = document.querySelector('svg[viewBox="0 0 200 100"]');
  if (!svg || !svg.querySelector('g > g')) return null;
  const pres = svg.parentNode.querySelectorAll(':scope > div pre');
  return {segments: svg.querySelector('g > g').querySelectorAll('rect').length, events: pres.length};
})()"""
SHOW_SEGMENTS = """(() => {
  const view = document.querySelectorAll('select')[1];
  view.value = 'Allocator State History';
  view.dispatchEvent(new Event('change'));
  return true;
})()"""


def check(chrome, server, model, flags, name, shots, tmp):
    pkl = os.path.join(tmp, f"{name}.pickle")
    subprocess.run([CLI, os.path.join(ROOT, model), "--exit-zero", "--emit-memory-snapshot", pkl] + flags,
                   capture_output=True, text=True, check=True)
    with open(pkl, "rb") as f:
        data = f.read()
    want = expected(pickle.loads(data))
    server.put(f"/snapshot/{name}.pickle", data)
    url = server.put(f"/{name}.html", PAGE.format(imports=import_map(browser.web_root()), name=f"{name}.pickle"))
    start = time.monotonic()
    chrome.goto(url)
    drawn = chrome.wait_for(TIMELINE, timeout=30)
    problems = chrome.errors
    if drawn is None or problems:
        print(f"BAD {model} {' '.join(flags)}: the Active Memory Timeline was not drawn; console: {problems}")
        return False
    shot = ""
    if name in shots:
        chrome.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        shot = f", screenshot {shots[name]} ({chrome.screenshot(shots[name]) // 1024} KiB)"
    chrome.evaluate(SHOW_SEGMENTS)
    history = chrome.wait_for(SEGMENTS, timeout=30)
    problems = chrome.errors
    got = {"polygons": drawn["polygons"], "categories": drawn["legend"],
           "events": history and history["events"], "segments": history and history["segments"]}
    ok = got == want and not problems
    print(f"{'ok ' if ok else 'BAD'} {model} {' '.join(flags)}: {got['polygons']} polygons "
          f"(want {want['polygons']}), legend {got['categories']}, {got['events']} events "
          f"(want {want['events']}), {got['segments']} segments (want {want['segments']}), "
          f"{time.monotonic() - start:.1f} s{shot}" + (f"; console: {problems}" if problems else ""))
    if got["categories"] != want["categories"]:
        print(f"    legend {got['categories']} vs {want['categories']}")
    return ok


def main():
    chromium = browser.find_chromium()
    if not chromium:
        browser.skip("chromium is not installed (scripts/setup.sh installs Debian's chromium; or set GRAPHLINT_CHROMIUM)")
    if not browser.web_root():
        browser.skip("d3 is not installed: run scripts/setup.sh (npm ci of tests/viewers/web into build/viewers-web, "
                     "GRAPHLINT_VIEWERS_WEB)")
    viz = find_memory_viz()
    if not viz:
        import torch
        browser.skip(f"torch {torch.__version__}'s wheel does not ship torch/utils/viz/MemoryViz.js (pytorch.org/"
                     "memory_viz serves it from pytorch's source): set GRAPHLINT_MEMORY_VIZ_JS to a copy of it")
    print(f"{browser.chromium_version(chromium)}, MemoryViz.js {viz}")
    server = browser.FileServer()
    server.mount("/viz", os.path.dirname(viz))
    server.mount("/npm", browser.web_root())
    chrome = browser.Chromium(chromium, 1280, 800)
    bad = 0
    try:
        with tempfile.TemporaryDirectory() as tmp:
            out = os.environ.get("GRAPHLINT_SCREENSHOTS") or tmp
            shots = {name: os.path.join(out, f"memory_viz_{name}.png") for _, _, name in CASES}
            for model, flags, name in CASES:
                bad += not check(chrome, server, model, flags, name, shots, tmp)
    finally:
        chrome.close()
        server.close()
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
