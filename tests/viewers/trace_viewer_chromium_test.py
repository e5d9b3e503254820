"""--emit-trace in real trace viewers, in headless Chromium (docs/viewers.md).

    trace_viewer_chromium_test.py catapult | speedscope

catapult: the Trace Viewer of chrome://tracing (catapult's trace_viewer_full.html),
as TensorBoard's PyTorch profiler plugin ships it (PyPI torch-tb-profiler,
scripts/requirements/torch2.txt), with the Web Components v0 polyfill it
needs from npm (webcomponents.js). The trace goes through its importer into
a tr.Model, which must hold, with no import warning and no console error:
every process and thread of the file under its name, every complete event
as a slice on its thread, and the "GPU memory" counter with all its samples.

speedscope: speedscope's app from npm, which imports Chrome trace JSON into
one flame chart per thread, and refuses events that do not nest. Loaded with
#profileURL=, it must show the file's title and a profile per thread that
holds complete events, with no error.

For each case graphlint writes the trace; the first case's view is saved as a
PNG: GRAPHLINT_SCREENSHOTS=docs/images keeps it (docs/images/
trace_<viewer>_<case>.png), without it it goes to a temporary folder.
Skips (77) without chromium, the npm packages (GRAPHLINT_VIEWERS_WEB,
scripts/setup.sh) or torch-tb-profiler. GRAPHLINT_CLI is the binary.
"""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import browser  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.environ["GRAPHLINT_CLI"]

# The setups of docs/viewers.md's overlap table (resnet18 under DDP x8, the tiny
# GPT under DDP x16 on two nodes, the tiny Llama under ZeRO-3, mobilenet under
# ZeRO-2) and one without communication.
CASES = [
    ("models/resnet18.onnx", ["--dim", "batch=32", "--train", "--world-size", "8", "--intra", "pcie-gen4"],
     "resnet18_ddp8"),
    ("models/gpt_tiny.onnx", ["--dim", "batch=8", "--dim", "seq=256", "--train", "--world-size", "16",
                             "--gpus-per-node", "8"], "gpt_tiny_ddp16"),
    ("tests/fixtures/fx/tiny_llama.train.fx.json", ["--train", "--precision", "bf16-mixed", "--zero", "3",
                                                    "--world-size", "8"], "tiny_llama_zero3"),
    ("models/mobilenet_v3_small.onnx", ["--dim", "batch=64", "--train", "--zero", "2", "--world-size", "8"],
     "mobilenet_v3_small_zero2"),
    ("models/resnet18.onnx", ["--dim", "batch=1"], "resnet18_inference"),
]


def expected(trace):
    """What a viewer must find in the file: names, slices per thread, counter samples."""
    events = trace["traceEvents"]
    meta = {(e["name"], e["pid"], e.get("tid")): e["args"] for e in events if e.get("ph") == "M"}
    slices = Counter(f"{e['pid']}:{e['tid']}" for e in events if e.get("ph") == "X")
    return {
        "processes": {str(pid): a["name"] for (n, pid, _), a in meta.items() if n == "process_name"},
        "threads": {f"{pid}:{tid}": a["name"] for (n, pid, tid), a in meta.items() if n == "thread_name"
                    and f"{pid}:{tid}" in slices},
        "slices": dict(slices),
        "counters": dict(Counter(f"{e['pid']}:{e['name']}" for e in events if e.get("ph") == "C")),
    }


# --- catapult's Trace Viewer -------------------------------------------------

CATAPULT_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Trace Viewer</title>
<script src="/npm/webcomponents.js/webcomponents.min.js"></script>
<link rel="import" href="/tbp/trace_viewer_full.html">
<style>html, body { margin: 0; width: 100%; height: 100%; overflow: hidden; }
#trace-viewer { width: 100%; height: 100%; }</style>
<script>
'use strict';
window.__hideTraceViewerPolyfillWarning = true;
// As torch-tb-profiler's trace_embedding.html builds the view.
document.addEventListener('WebComponentsReady', () => {
  const container = document.createElement('track-view-container');
  container.id = 'track_view_container';
  const viewer = document.createElement('tr-ui-timeline-view');
  viewer.track_view_container = container;
  Polymer.dom(viewer).appendChild(container);
  viewer.id = 'trace-viewer';
  viewer.globalMode = true;
  Polymer.dom(document.body).appendChild(viewer);
  window.viewer = viewer;
});
// Imports the trace at url into the view; resolves to what the model holds.
window.loadTrace = async (url, title) => {
  const text = await (await fetch(url)).text();
  const model = new tr.Model();
  await new tr.importer.Import(model).importTracesWithProgressDialog([text]);
  viewer.model = model;
  viewer.viewTitle = title;
  const out = {processes: {}, threads: {}, slices: {}, counters: {},
               warnings: model.importWarnings.map(w => w.type + ': ' + w.message)};
  for (const p of Object.values(model.processes)) {
    out.processes[p.pid] = p.name;
    for (const t of Object.values(p.threads)) {
      out.threads[p.pid + ':' + t.tid] = t.name;
      out.slices[p.pid + ':' + t.tid] = t.sliceGroup.slices.length;
    }
    for (const c of Object.values(p.counters))
      out.counters[p.pid + ':' + c.name] = c.numSamples;
  }
  return out;
};
// Selects the first slice whose title starts with prefix, as a click does: the
// panel below the tracks then shows its args.
window.selectSlice = prefix => {
  for (const t of viewer.model.getAllThreads())
    for (const s of t.sliceGroup.slices)
      if (s.title.startsWith(prefix)) {
        viewer.brushingStateController.changeSelectionFromTimeline(new tr.model.EventSet([s]));
        return s.title;
      }
  return null;
};
</script></head><body></body></html>
"""


def catapult_static():
    spec = importlib.util.find_spec("torch_tb_profiler")
    if not spec or not spec.submodule_search_locations:
        return None
    static = os.path.join(spec.submodule_search_locations[0], "static")
    return static if os.path.isfile(os.path.join(static, "trace_viewer_full.html")) else None


def open_catapult(chrome, server, path, name):
    url = server.put("/catapult.html", CATAPULT_PAGE)
    chrome.goto(url)
    if not chrome.wait_for("!!window.viewer", timeout=60):
        return None
    got = chrome.evaluate(f"loadTrace({json.dumps(path)}, {json.dumps(name)})", timeout=120)
    # The view draws on the next frames: wait for its tracks before a screenshot.
    chrome.wait_for("document.querySelector('#trace-viewer') && "
                    "document.querySelector('#trace-viewer').querySelectorAll('*').length > 50", timeout=30)
    chrome.evaluate("selectSlice('ncclDevKernel')")
    chrome.evaluate("new Promise(r => setTimeout(r, 500))")
    return got


# --- speedscope ----------------------------------------------------------------

# speedscope names each imported thread "<process name> <thread name>" or by pid
# and tid; its profile picker lists them. Counted from the picker's entries.
SPEEDSCOPE_STATE = """(() => {
  if (!document.title.endsWith(' - speedscope')) return null;
  const text = document.body.innerText;
  const m = text.match(/\\((\\d+)\\/(\\d+)\\)/);
  return m ? {title: document.title, profile: +m[1], profiles: +m[2]} : null;
})()"""


def speedscope_app():
    root = browser.web_root()
    app = root and os.path.join(root, "speedscope", "dist", "release")
    return app if app and os.path.isfile(os.path.join(app, "index.html")) else None


def open_speedscope(chrome, server, path, name):
    chrome.goto(f"{server.url}/speedscope/index.html#profileURL={path}&title={name}")
    got = chrome.wait_for(SPEEDSCOPE_STATE, timeout=60)
    chrome.evaluate("new Promise(r => setTimeout(r, 500))")
    return got


def check(viewer, chrome, server, model, flags, name, shot, tmp):
    path = os.path.join(tmp, f"{name}.pt.trace.json")
    subprocess.run([CLI, os.path.join(ROOT, model), "--exit-zero", "--emit-trace", path] + flags,
                   capture_output=True, text=True, check=True)
    with open(path, "rb") as f:
        data = f.read()
    want = expected(json.loads(data))
    served = f"/trace/{name}.pt.trace.json"
    server.put(served, data, "application/json")
    start = time.monotonic()
    line = f"{model} {' '.join(flags)}"
    if viewer == "catapult":
        got = open_catapult(chrome, server, served, name)
        # It says so whatever it loads, on every Chromium since Web Components v0 went (M80).
        chrome.warnings = [w for w in chrome.warnings if "running with WebComponentsV0 polyfill" not in w]
        ok = got is not None and not chrome.errors and not chrome.warnings and not got["warnings"] and all(
            got[k] == want[k] for k in want)
        summary = got and (f"{len(got['processes'])} processes, {len(got['threads'])} threads, "
                           f"{sum(got['slices'].values())} slices, counters {got['counters']}, "
                           f"import warnings {got['warnings']}")
    else:
        got = open_speedscope(chrome, server, served, name)
        threads = len(want["slices"])
        ok = got is not None and not chrome.errors and not chrome.warnings and got["profiles"] == threads
        summary = got and f"title '{got['title']}', {got['profiles']} profiles (want {threads}, one per thread)"
    if ok and shot:
        summary += f", screenshot {shot} ({chrome.screenshot(shot) // 1024} KiB)"
    print(f"{'ok ' if ok else 'BAD'} {line}: {summary or 'nothing loaded'}, {time.monotonic() - start:.1f} s"
          + (f"; console: {chrome.errors + chrome.warnings}" if chrome.errors or chrome.warnings else ""))
    if not ok and got and viewer == "catapult":
        for k in want:
            if got[k] != want[k]:
                print(f"    {k}: viewer {got[k]} vs file {want[k]}")
    return ok


def main():
    viewer = sys.argv[1] if len(sys.argv) > 1 else ""
    if viewer not in ("catapult", "speedscope"):
        sys.exit("usage: trace_viewer_chromium_test.py catapult|speedscope")
    chromium = browser.find_chromium()
    if not chromium:
        browser.skip("chromium is not installed (scripts/setup.sh installs Debian's chromium; or set GRAPHLINT_CHROMIUM)")
    if not browser.web_root():
        browser.skip("the viewers' npm packages are not installed: run scripts/setup.sh (npm ci of tests/viewers/web "
                     "into build/viewers-web, GRAPHLINT_VIEWERS_WEB)")
    server = browser.FileServer()
    server.mount("/npm", browser.web_root())
    if viewer == "catapult":
        static = catapult_static()
        if not static:
            browser.skip(f"{sys.executable} has no torch_tb_profiler (scripts/requirements/torch2.txt), "
                         "whose static/trace_viewer_full.html is catapult's Trace Viewer")
        server.mount("/tbp", static)
        where = f"catapult Trace Viewer from {static}"
    else:
        app = speedscope_app()
        if not app:
            browser.skip("speedscope is not installed (tests/viewers/web/package.json)")
        server.mount("/speedscope", app)
        with open(os.path.join(app, "..", "..", "package.json")) as f:
            where = f"speedscope {json.load(f)['version']}"
    print(f"{browser.chromium_version(chromium)}, {where}")
    chrome = browser.Chromium(chromium, 1280, 720)
    bad = 0
    try:
        with tempfile.TemporaryDirectory() as tmp:
            out = os.environ.get("GRAPHLINT_SCREENSHOTS") or tmp
            for i, (model, flags, name) in enumerate(CASES):
                shot = os.path.join(out, f"trace_{viewer}_{name}.png") if i == 0 else None
                bad += not check(viewer, chrome, server, model, flags, name, shot, tmp)
    finally:
        chrome.close()
        server.close()
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
