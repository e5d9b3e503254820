"""Headless Chromium and a local file server, for loading real viewers in tests.

The viewer tests (tests/viewers/*_chromium_test.py, docs/viewers.md) open the
pages people open graphlint's files in, served from this machine only, and
read back what the page built. Chromium is driven over the DevTools protocol
on a pipe (--remote-debugging-pipe: NUL-terminated JSON on fds 3 and 4), so
no WebSocket client is needed: the standard library is enough.
"""
import base64
import fcntl
import functools
import http.server
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time

SKIP = 77  # ctest's SKIP_RETURN_CODE for these tests


def skip(why):
    print(f"SKIP: {why}")
    sys.exit(SKIP)


def find_chromium():
    """Debian's chromium (scripts/setup.sh installs it), or GRAPHLINT_CHROMIUM; None if neither."""
    path = os.environ.get("GRAPHLINT_CHROMIUM") or shutil.which("chromium")
    return path if path and os.access(path, os.X_OK) else None


def chromium_version(path):
    out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    return out.strip().splitlines()[-1] if out.strip() else "chromium (version unknown)"


class FileServer:
    """Serves directories under URL prefixes and in-memory files on 127.0.0.1.

    `imports` lets an ES module ask for "./bisect" where the file is
    "bisect.js", as bundlers allow and d3 v5's sources do: a missing path
    that exists with ".js" appended is served as JavaScript.
    """

    TYPES = {".js": "text/javascript", ".mjs": "text/javascript", ".json": "application/json",
             ".html": "text/html", ".css": "text/css", ".wasm": "application/wasm", ".png": "image/png",
             ".svg": "image/svg+xml", ".woff2": "font/woff2", ".pickle": "application/octet-stream"}

    def __init__(self):
        self.roots = {}
        self.files = {}
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                found = server.lookup(self.path.split("?")[0].split("#")[0])
                if found is None:
                    self.send_error(404)
                    return
                body, ctype = found
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}"
        self.put("/favicon.ico", b"", "image/x-icon")  # asked for by every page; a 404 would log an error
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def mount(self, prefix, directory):
        self.roots[prefix.rstrip("/") + "/"] = os.path.realpath(directory)

    def put(self, path, body, ctype=None):
        data = body.encode() if isinstance(body, str) else body
        self.files[path] = (data, ctype or self.TYPES.get(os.path.splitext(path)[1], "application/octet-stream"))
        return self.url + path

    def lookup(self, path):
        if path in self.files:
            return self.files[path]
        for prefix, root in self.roots.items():
            if not path.startswith(prefix):
                continue
            rel = path[len(prefix):]
            for candidate in (rel, rel + ".js"):
                full = os.path.realpath(os.path.join(root, candidate))
                if full.startswith(root + os.sep) and os.path.isfile(full):
                    with open(full, "rb") as f:
                        return f.read(), self.TYPES.get(os.path.splitext(full)[1], "application/octet-stream")
        return None

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class Chromium:
    """One headless Chromium with one page, driven by DevTools protocol commands.

    `errors` collects what a person would see in the console as an error:
    uncaught exceptions, console.error calls, and failed loads; `warnings`
    the console.warn calls.
    """

    def __init__(self, path, width=1280, height=800, webgl=False):
        self.profile = tempfile.mkdtemp(prefix="graphlint-chromium-")
        cmd_r, self._cmd_w = os.pipe()
        self._resp_r, resp_w = os.pipe()
        # Above 9, so that the redirections to 3 and 4 (bash: dash takes one-digit fds only) clobber neither.
        cmd_r, resp_w = (self._above_9(fd) for fd in (cmd_r, resp_w))
        args = [path, "--headless=new", "--remote-debugging-pipe", f"--user-data-dir={self.profile}",
                "--no-sandbox",  # CI runs as root, where Chromium's sandbox refuses to start
                # WebGL (Model Explorer draws its graph with three.js) in software: SwiftShader,
                # which Chromium no longer falls back to by itself.
                *(["--use-angle=swiftshader", "--enable-unsafe-swiftshader"] if webgl else ["--disable-gpu"]),
                "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-extensions", "--hide-scrollbars", "--mute-audio", "--font-render-hinting=none",
                f"--window-size={width},{height}", "about:blank"]
        # The pipe must be fds 3 (commands in) and 4 (answers out) in the child.
        shell = f'exec "$0" "$@" 3<&{cmd_r} 4>&{resp_w} {cmd_r}<&- {resp_w}>&-'
        self.proc = subprocess.Popen(["bash", "-c", shell] + args, pass_fds=(cmd_r, resp_w),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(cmd_r)
        os.close(resp_w)
        self._next_id = 0
        self._answers = queue.Queue()
        self.errors = []
        self.warnings = []  # console.warn: what a viewer says of input it could read only in part
        self.session = None
        threading.Thread(target=self._read, daemon=True).start()
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable")
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    @staticmethod
    def _above_9(fd):
        high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(fd)
        return high

    def _read(self):
        buf = b""
        while True:
            chunk = os.read(self._resp_r, 1 << 16)
            if not chunk:
                self._answers.put(None)
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                self._answers.put(json.loads(raw))

    def _event(self, msg):
        method, params = msg.get("method"), msg.get("params", {})
        if method == "Runtime.exceptionThrown":
            d = params["exceptionDetails"]
            self.errors.append((d.get("exception") or {}).get("description") or d.get("text"))
        elif method == "Runtime.consoleAPICalled" and params["type"] in ("error", "warning"):
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params["args"])
            (self.errors if params["type"] == "error" else self.warnings).append(text)
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            e = params["entry"]
            self.errors.append(f"{e['text']} {e.get('url', '')}".strip())

    def send(self, method, params=None, timeout=60):
        self._next_id += 1
        msg = {"id": self._next_id, "method": method, "params": params or {}}
        if self.session:
            msg["sessionId"] = self.session
        os.write(self._cmd_w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            try:
                answer = self._answers.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise TimeoutError(f"chromium did not answer {method} in {timeout} s")
            if answer is None:
                raise RuntimeError(f"chromium exited (code {self.proc.poll()}) during {method}")
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            self._event(answer)

    def goto(self, url):
        # By way of about:blank: a URL that differs only in its #fragment would
        # not load the page again.
        self.send("Page.navigate", {"url": "about:blank"})
        self.wait_for("document.readyState === 'complete' && location.href === 'about:blank'")
        self.errors.clear()
        self.warnings.clear()
        self.send("Page.navigate", {"url": url})

    def evaluate(self, expression, timeout=60):
        """The JSON value of a JavaScript expression (awaited if it is a promise)."""
        r = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                           "awaitPromise": True}, timeout=timeout)
        if "exceptionDetails" in r:
            d = r["exceptionDetails"]
            raise RuntimeError((d.get("exception") or {}).get("description") or d.get("text"))
        return r["result"].get("value")

    def wait_for(self, expression, timeout=30):
        """Polls until the expression is truthy and returns it; None when the time runs out
        or the page has logged an error."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not self.errors:
            try:
                value = self.evaluate(expression)
            except RuntimeError:
                value = None  # the page is still navigating
            if value:
                return value
            time.sleep(0.1)
        return None

    def screenshot(self, path):
        png = base64.b64decode(self.send("Page.captureScreenshot", {"format": "png"})["data"])
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "wb") as f:
            f.write(png)
        return len(png)

    def close(self):
        try:
            self.session = None
            self.send("Browser.close", timeout=10)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._cmd_w)
        os.close(self._resp_r)
        shutil.rmtree(self.profile, ignore_errors=True)


@functools.lru_cache(maxsize=None)
def web_root():
    """The npm packages scripts/setup.sh installs (tests/viewers/web/package.json), or None."""
    root = os.environ.get("GRAPHLINT_VIEWERS_WEB", "")
    modules = os.path.join(root, "node_modules")
    return modules if root and os.path.isdir(modules) else None
