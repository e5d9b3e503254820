#!/usr/bin/python3
"""Measure the memory PyTorch really holds for real models, export the same
models to ONNX, and compare with graphlint's memory plan (docs/memory.md,
docs/validation.md "Memory").

  /usr/bin/python3 validation/validate_memory.py [--out DIR] [--only NAME ...]
      [--graphlint BIN] [--small]

Needs torch 1.13 / torchvision 0.14 / onnx 1.12 (Debian's /usr/bin/python3);
no GPU, no network (weights=None: memory does not depend on weight values).

Method (CPU). A TorchDispatchMode sees every aten op of the forward pass, of
autograd's backward and of the optimizer step. It tracks every tensor storage
it sees (op inputs and outputs, plus the parameters, buffers, inputs and
optimizer state registered up front) through a c10 weak reference to the
StorageImpl (torch.multiprocessing.reductions.StorageWeakRef), so a storage
counts as live exactly as long as anything holds it: a Python variable, a
tensor autograd saved for backward, a gradient buffer. After each op returns
(its inputs still referenced by the call) the bytes of all live storages are
summed; the maximum over the run is the measured peak allocated. Inference
runs under torch.no_grad() in eval mode; a training step is forward, backward
from a ones-gradient on the output, torch.optim.Adam (single-tensor path)
step and zero_grad(set_to_none=True), in train mode, starting from allocated
optimizer state (one warm-up step) and no gradients. Temporaries that an op
allocates and frees internally are not seen (the same holds for the
prediction), except inside the fused kernels of eager's fast paths
(FUSED_FAST_PATHS): torch disables those paths while make_fx traces, so the
captured graph holds their decomposition and the prediction counts its
temporaries; the fused kernel's own allocations, which a GPU's
max_memory_allocated counts too, are read from the profiler's allocation
events and added to the live bytes the kernel started from. On a GPU (--cuda, when one is available) the script reports
torch.cuda.max_memory_allocated / max_memory_reserved instead.

Models are exported with opset 17 and static shapes, in eval mode with
training=PRESERVE so BatchNormalization stays a node (as PyTorch runs it)
instead of being folded into the convolution, and weightless (external data
that is not written). The script writes DIR/NAME.onnx and DIR/measured.json;
with a graphlint binary it also prints the predicted-vs-measured table for
inference and for the training step (graphlint --train --optimizer adam
--precision fp32, the setup measured here); the C++ test MemoryValidation
reads measured.json and compares both modes too.
"""

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings

import torch
from torch.multiprocessing.reductions import StorageWeakRef
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
from gpt_tiny import GPTTiny  # noqa: E402   (models/, from PYTHONPATH: tests/CMakeLists.txt)


# Kernels eager's fast paths call (nn.MultiheadAttention and
# nn.TransformerEncoderLayer in eval under no_grad) that make_fx never records:
# the fast path is off while it traces.
FUSED_FAST_PATHS = ("_native_multi_head_attention", "_transformer_encoder_layer_fwd")


def allocations_peak(run):
    """(run()'s result, the high-water mark of the bytes it allocated and had
    not freed yet), from the profiler's allocation events."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        out = run()
    events = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    events.sort(key=lambda e: e.start_ns() if hasattr(e, "start_ns") else e.start_us())
    live = high = 0
    for e in events:
        live += e.nbytes()
        high = max(high, live)
    return out, high


class LiveStorages(TorchDispatchMode):
    """Bytes of every live tensor storage at each op boundary (and inside the
    fused kernels of FUSED_FAST_PATHS)."""

    def __init__(self):
        super().__init__()
        self.live = {}  # data_ptr -> (weakref, nbytes)
        self.peak = 0
        self.peak_op = None
        self.samples = []

    def track(self, obj):
        for t in tree_flatten(obj)[0]:
            if not isinstance(t, torch.Tensor) or t.device.type == "meta":
                continue
            st = storage_of(t)
            ptr = st.data_ptr()
            if ptr == 0 or st.nbytes() == 0:
                continue
            old = self.live.get(ptr)
            if old is None or old[0].expired():
                self.live[ptr] = (StorageWeakRef(st), st.nbytes())

    def total(self):
        dead = [p for p, (w, _) in self.live.items() if w.expired()]
        for p in dead:
            del self.live[p]
        return sum(n for _, n in self.live.values())

    def sample(self, label):
        b = self.total()
        self.samples.append((label, b))
        if b > self.peak:
            self.peak, self.peak_op = b, label

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = str(func.overloadpacket.__name__)
        if name in FUSED_FAST_PATHS:
            self.track(args)
            start = self.total()
            out, inside = allocations_peak(lambda: func(*args, **(kwargs or {})))
            self.samples.append((name + " (inside)", start + inside))
            if start + inside > self.peak:
                self.peak, self.peak_op = start + inside, name + " (inside)"
        else:
            out = func(*args, **(kwargs or {}))
        self.track(args)
        self.track(kwargs)
        self.track(out)
        self.sample(name)
        return out


def storage_of(t):
    # torch 2.x: untyped_storage (t.storage() warns that TypedStorage is deprecated).
    return t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()


def storages_bytes(tensors):
    seen = {}
    for t in tensors:
        st = storage_of(t)
        seen[st.data_ptr()] = st.nbytes()
    return sum(seen.values())


def measure_inference(model, x):
    model.eval()
    gc.collect()
    with torch.no_grad():
        mode = LiveStorages()
        mode.track(list(model.parameters()) + list(model.buffers()) + [x])
        mode.sample("start")
        with mode:
            out = model(x)
        del out
    return {"peak_allocated_bytes": mode.peak, "peak_op": mode.peak_op, "ops": len(mode.samples),
            "resident_bytes": mode.samples[0][1]}


def train_step(model, opt, x, mode=None):
    out = model(x)
    out.backward(torch.ones_like(out))
    del out
    if mode is not None:
        mode.sample("backward-end")
        mode.backward_end = len(mode.samples)
    opt.step()
    opt.zero_grad(set_to_none=True)


def measure_training(model, x):
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4, foreach=False)
    train_step(model, opt, x)  # allocates the optimizer state
    gc.collect()
    state = [t for s in opt.state.values() for t in s.values() if isinstance(t, torch.Tensor)]
    mode = LiveStorages()
    mode.track(list(model.parameters()) + list(model.buffers()) + [x] + state)
    mode.sample("start")
    with mode:
        train_step(model, opt, x, mode)
    params = storages_bytes(list(model.parameters()))
    return {"peak_allocated_bytes": mode.peak, "peak_op": mode.peak_op, "ops": len(mode.samples),
            "forward_backward_peak_bytes": max(b for _, b in mode.samples[:mode.backward_end]),
            "params_bytes": params, "optimizer_bytes": storages_bytes(state), "resident_bytes": mode.samples[0][1]}


def measure_loss_step(model, inputs):
    """measure_training for a model that takes several inputs and returns its
    scalar loss: `model(*inputs).backward()`, Adam (single-tensor), one
    warm-up step for the optimizer state, then every live storage summed at
    every aten op of the second step. The peak and the op it was reached at."""
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4, foreach=False)

    def step():
        model(*inputs).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    step()
    gc.collect()
    state = [t for s in opt.state.values() for t in s.values() if isinstance(t, torch.Tensor)]
    mode = LiveStorages()
    mode.track(list(model.parameters()) + list(model.buffers()) + list(inputs) + state)
    mode.sample("start")
    with mode:
        step()
    return {"peak_allocated_bytes": mode.peak, "peak_op": mode.peak_op}


def measure_cuda(model, x, training):
    model = model.cuda()
    x = x.cuda()
    torch.cuda.synchronize()
    if training:
        model.train()
        opt = torch.optim.Adam(model.parameters(), lr=1e-4, foreach=False)
        train_step(model, opt, x)
        torch.cuda.reset_peak_memory_stats()
        train_step(model, opt, x)
    else:
        model.eval()
        torch.cuda.reset_peak_memory_stats()
        with torch.no_grad():
            model(x)
    torch.cuda.synchronize()
    return {"max_memory_allocated": torch.cuda.max_memory_allocated(),
            "max_memory_reserved": torch.cuda.max_memory_reserved()}


def torchvision_model(name, size=224):
    def build(batch):
        import torchvision
        torch.manual_seed(0)
        return getattr(torchvision.models, name)(weights=None), torch.randn(batch, 3, size, size)
    return build


def gpt(vocab, d_model, n_head, n_layer, seq):
    def build(batch):
        torch.manual_seed(0)
        m = GPTTiny(vocab=vocab, d_model=d_model, n_head=n_head, n_layer=n_layer, max_seq=seq)
        return m, torch.randint(0, vocab, (batch, seq))
    return build


# name -> (builder, batches)
MODELS = {
    "resnet18": (torchvision_model("resnet18"), [1, 4]),
    "resnet50": (torchvision_model("resnet50"), [1, 2]),
    "mobilenet_v3_small": (torchvision_model("mobilenet_v3_small"), [1, 4]),
    "efficientnet_b0": (torchvision_model("efficientnet_b0"), [1, 2]),
    "densenet121": (torchvision_model("densenet121"), [1, 2]),
    "convnext_tiny": (torchvision_model("convnext_tiny"), [1, 2]),
    "vit_b_16": (torchvision_model("vit_b_16"), [1, 2]),
    "gpt_decoder": (gpt(vocab=2048, d_model=256, n_head=4, n_layer=4, seq=128), [1, 4]),
}
# Small enough for the committed fixtures of the C++ test.
SMALL = {
    "resnet18_32": (torchvision_model("resnet18", 32), [2]),
    "mobilenet_v3_small_64": (torchvision_model("mobilenet_v3_small", 64), [2]),
    "gpt_small": (gpt(vocab=256, d_model=64, n_head=4, n_layer=2, seq=32), [2]),
    # One and two decoder layers: their difference is one layer's saved
    # activations (the 34sbh + 5as^2b check of the C++ test).
    "gpt_layer1": (gpt(vocab=256, d_model=256, n_head=4, n_layer=1, seq=64), [2]),
    "gpt_layer2": (gpt(vocab=256, d_model=256, n_head=4, n_layer=2, seq=64), [2]),
}


def export_onnx(model, x, path, name):
    import onnx
    import export_models  # make_weightless
    model.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with tempfile.TemporaryDirectory() as tmp:
            full = os.path.join(tmp, "full.onnx")
            torch.onnx.export(model, (x,), full, opset_version=17, do_constant_folding=True,
                              training=torch.onnx.TrainingMode.PRESERVE,
                              input_names=["input"], output_names=["output"])
            m = onnx.load(full)
            weightless, _, weights = export_models.make_weightless(m, name, tmp)
    onnx.save(weightless, path)


def predict(graphlint, path, training):
    setup = ["--train", "--optimizer", "adam", "--precision", "fp32"] if training else []
    r = subprocess.run([graphlint, "--format", "json", "--exit-zero"] + setup + [path], capture_output=True, text=True)
    if r.returncode != 0:
        return None
    return json.loads(r.stdout)["files"][0].get("memory")


# The FX path (--fx): the configurations of issue 15's table, exported with
# graphlint-export by the interpreter running this script (forward in eval()
# for inference, --train for the joint forward + backward graph).
# The exporter package (python/graphlint/export), imported through PYTHONPATH or the install.
EXPORTER = ["-m", "graphlint.export"]
FX_MODELS = {
    "resnet18": (torchvision_model("resnet18"), 2, ["--model", "torchvision.models:resnet18"]),
    "mobilenet_v3_small": (torchvision_model("mobilenet_v3_small"), 4, ["--model", "torchvision.models:mobilenet_v3_small"]),
    "squeezenet1_1": (torchvision_model("squeezenet1_1"), 2, ["--model", "torchvision.models:squeezenet1_1"]),
    "densenet121": (torchvision_model("densenet121"), 1, ["--model", "torchvision.models:densenet121"]),
    "gpt_small": (gpt(vocab=2048, d_model=256, n_head=4, n_layer=4, seq=128), 2,
                  [os.path.join(REPO, "models", "fx", "gpt_small.py")]),
}
# Checked only: never looked at while the FX path was tuned (docs/validation.md).
FX_CHECK_ONLY = {
    "efficientnet_b0": (torchvision_model("efficientnet_b0"), 1, ["--model", "torchvision.models:efficientnet_b0"]),
}
FX_TOLERANCE = 0.03  # of the peak beyond the resident states (parameters, buffers, inputs, optimizer state)


def export_fx(spec, batch, path, train):
    cmd = [sys.executable, *EXPORTER] + spec
    if spec[0] == "--model":
        cmd += ["--input", "x:float32[%d,3,224,224]" % batch]
    cmd += ["-o", path] + (["--train"] if train else [])
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("graphlint-export failed: %s" % (r.stderr.strip().splitlines() or ["?"])[-1])


def fx_case(graphlint, name, batch, mode, measured, path):
    mem = predict(graphlint, path, mode == "training")
    if not mem:
        return {"name": name, "batch": batch, "mode": mode, "error": "graphlint failed on " + path}
    resident = mem["params_bytes"] + mem.get("buffers_bytes", 0) + mem["inputs_bytes"] + (mem["optimizer_bytes"] if mode == "training" else 0)
    m, p = measured["peak_allocated_bytes"], mem["peak_allocated_bytes"]
    mb, pb = m - measured["resident_bytes"], p - resident
    err = (pb - mb) / mb if mb > 0 else 0.0
    return {"name": name, "batch": batch, "mode": mode, "measured": m, "predicted": p, "measured_beyond": mb,
            "predicted_beyond": pb, "error_total": (p - m) / m, "error_beyond": err, "target": abs(err) <= FX_TOLERANCE,
            "ok": abs(err) <= FX_TOLERANCE, "predicted_peak_at": "%s %s" % (mem.get("peak_phase", ""),
                                                                          mem.get("peak_node", ""))}


def fx_table(cases):
    mib = 1024.0 * 1024.0
    lines = ["| model | batch | mode | measured (MiB) | predicted (MiB) | error | beyond resident: measured | predicted |"
             " error | within %d%% |" % round(100 * FX_TOLERANCE),
             "|---|---:|---|---:|---:|---:|---:|---:|---:|---|"]
    for c in cases:
        if "error" in c:
            lines.append("| %s | %d | %s | %s |" % (c["name"], c["batch"], c["mode"], c["error"]))
            continue
        lines.append("| %s | %d | %s | %.2f | %.2f | %+.2f%% | %.2f | %.2f | %+.2f%% | %s |" % (
            c["name"], c["batch"], c["mode"], c["measured"] / mib, c["predicted"] / mib, 100 * c["error_total"],
            c["measured_beyond"] / mib, c["predicted_beyond"] / mib, 100 * c["error_beyond"],
            "yes" if c["target"] else "**no**"))
    return "\n".join(lines)


def run_fx(a):
    try:
        import torchvision  # noqa: F401
    except ImportError:
        print("validate_memory --fx: SKIP: %s has torch %s but no torchvision" % (sys.executable, torch.__version__))
        return 77
    if not os.path.exists(a.graphlint):
        print("validate_memory --fx: no graphlint binary at %s" % a.graphlint)
        return 2
    # The measured truth, per model, batch and torch version: measured once
    # (minutes on a busy CPU), then read back (tests/fixtures/memory/fx-*.json).
    truth_path = a.truth or os.path.join(a.out, "fx-measured.json")
    truth = {}
    if os.path.exists(truth_path) and not a.remeasure:
        with open(truth_path) as f:
            truth = json.load(f)
    if truth and truth.get("torch") != torch.__version__:
        # A truth is checked on the torch it was measured with, or the test fails.
        print("validate_memory --fx: FAIL: %s was measured with torch %s, but %s has torch %s: it cannot be checked "
              "here (run it with torch %s, or --remeasure)" % (truth_path, truth.get("torch"), sys.executable,
                                                               torch.__version__, truth.get("torch")))
        return 1
    truth.update({"torch": torch.__version__, "device": "cpu"})
    measured_all = truth.setdefault("models", {})
    cases = []
    for name, (build, batch, spec) in list(FX_MODELS.items()) + list(FX_CHECK_ONLY.items()):
        if a.only and name not in a.only:
            continue
        t0 = time.time()
        key = "%s_b%d" % (name, batch)
        if key not in measured_all and a.truth and a.check:
            cases += [{"name": name, "batch": batch, "mode": mode, "error": "no measured truth in %s (measure it "
                       "with --remeasure or without --check)" % truth_path} for mode in ("inference", "training")]
            continue
        if key not in measured_all:
            model, x = build(batch)
            measured_all[key] = {"inference": measure_inference(model, x), "training": measure_training(model, x)}
            del model
            with open(truth_path, "w") as f:
                json.dump(truth, f, indent=1, sort_keys=True)
        measured = measured_all[key]
        for mode, train in (("inference", False), ("training", True)):
            path = os.path.join(a.out, "%s_b%d.%s.fx.json" % (name, batch, "train" if train else "fwd"))
            try:
                export_fx(spec, batch, path, train)
                cases.append(fx_case(a.graphlint, name, batch, mode, measured[mode], path))
            except RuntimeError as e:
                cases.append({"name": name, "batch": batch, "mode": mode, "error": str(e)})
        print("%s: %.1f s" % (name, time.time() - t0), flush=True)
    with open(os.path.join(a.out, "fx-results.json"), "w") as f:
        json.dump({"torch": torch.__version__, "python": sys.executable, "tolerance": FX_TOLERANCE, "cases": cases},
                  f, indent=1, sort_keys=True)
    print("\nFX path, torch %s (%s), CPU, fp32, Adam; error of the peak beyond the resident states, tolerance %d%%:\n"
          % (torch.__version__, sys.executable, round(100 * FX_TOLERANCE)))
    print(fx_table(cases))
    print("\n%d of %d cases within %d%% (failed cases included)" % (sum(1 for c in cases if c.get("target")),
                                                                    len(cases), round(100 * FX_TOLERANCE)))
    bad = [c for c in cases if not c.get("ok")]
    for c in bad:
        print("MISS: %s batch %d %s: %s" % (c["name"], c["batch"], c["mode"], c.get("error") or
                                             "%+.2f%% beyond resident" % (100 * c["error_beyond"])))
    return 1 if bad and a.check else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(REPO, "build", "tmp", "memory-validation"))
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--small", action="store_true", help="the small models of the committed test fixtures")
    ap.add_argument("--graphlint", default=os.path.join(REPO, "build", "tools", "graphlint"))
    ap.add_argument("--cuda", action="store_true", help="also measure on the GPU when one is available")
    ap.add_argument("--fx", action="store_true", help="the FX path: graphlint-export forward and --train exports of "
                    "FX_MODELS (this interpreter's torch), predicted against the measured peaks")
    ap.add_argument("--check", action="store_true", help="--fx: exit 1 when a case misses its tolerance")
    ap.add_argument("--truth", help="--fx: the measured peaks (read when present, else measured and written); "
                    "default OUT/fx-measured.json")
    ap.add_argument("--remeasure", action="store_true", help="--fx: measure again even when --truth has the model")
    a = ap.parse_args(argv)
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    os.makedirs(a.out, exist_ok=True)
    if a.fx:
        return run_fx(a)
    models = SMALL if a.small else MODELS
    results = []
    for name, (build, batches) in models.items():
        if a.only and name not in a.only:
            continue
        for batch in batches:
            tag = "%s_b%d" % (name, batch)
            t0 = time.time()
            model, x = build(batch)
            path = os.path.join(a.out, tag + ".onnx")
            export_onnx(model, x, path, tag)
            entry = {"name": tag, "model": name, "batch": batch, "onnx": tag + ".onnx",
                     "inference": measure_inference(model, x),
                     "training": measure_training(model, x)}
            if a.cuda and torch.cuda.is_available():
                entry["cuda"] = {"inference": measure_cuda(*build(batch), False),
                                 "training": measure_cuda(*build(batch), True)}
            results.append(entry)
            print("%-28s inference %10d  training %11d  (%.1f s)" % (
                tag, entry["inference"]["peak_allocated_bytes"], entry["training"]["peak_allocated_bytes"],
                time.time() - t0), flush=True)
    with open(os.path.join(a.out, "measured.json"), "w") as f:
        json.dump({"torch": torch.__version__, "device": "cpu", "models": results}, f, indent=1, sort_keys=True)
    if os.path.exists(a.graphlint):
        for mode in ("inference", "training"):
            print("\n%-28s %14s %14s %8s" % ("model (%s)" % mode, "measured", "predicted", "error"))
            for e in results:
                mem = predict(a.graphlint, os.path.join(a.out, e["onnx"]), mode == "training")
                if not mem:
                    continue
                m, p = e[mode]["peak_allocated_bytes"], mem["peak_allocated_bytes"]
                print("%-28s %14d %14d %+7.1f%%" % (e["name"], m, p, 100.0 * (p - m) / m))
    return 0


if __name__ == "__main__":
    sys.exit(main())
