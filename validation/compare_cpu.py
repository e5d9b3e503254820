#!/usr/bin/env python3
"""graphlint compare on CPU traces recorded here (docs/validation.md
"compare on measured CPU traces", docs/viewers.md#compare).

For each model: capture the training step with graphlint's exporter (the
joint forward + backward graph of the model and its loss), run one real
training step on the CPU under torch.profiler (profile_memory=True; a warm-up
step first, so Adam's state exists and the gradients are None, as the plan
starts), write the Chrome trace, and run

    graphlint compare MODEL.fx.json --trace MODEL.trace.json --train
        --optimizer adam --precision fp32 --kernels cpu --backend eager
        --target cpu-here --format json

with `cpu-here` a hardware profile of this machine measured here by
microbenchmarks before any model runs (an fp32 matmul's FLOP/s, a large copy's
bytes/s, one tiny op's time as the launch overhead; efficiencies 1 since these
are achieved rates): the prediction is not fitted to any model. Writes
DIR/results.json and prints the markdown table for docs/validation.md.

  validation/compare_cpu.py --graphlint build/graphlint --out /tmp/compare-cpu \\
      [--vision-python build/venv-vision/bin/python] [--hf-python build/venv/bin/python] [--only NAME ...]

Each model runs in its own process, under the interpreter that has its
library (torchvision and timm: venv-vision; transformers: venv).
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name: (environment, batch, build code)
MODELS = {
    "resnet18": ("vision", 4),
    "mobilenet_v3_small": ("vision", 8),
    "efficientnet_b0": ("vision", 4),
    "timm_vit_tiny": ("vision", 4),
    "timm_convnext_atto": ("vision", 4),
    "gpt2_tiny": ("hf", 4),
    "llama_tiny": ("hf", 4),
    "bert_tiny": ("hf", 4),
}


def classifier_step(net, batch, size=224):
    """(loss module, inputs) of an image classifier's training step: the
    module returns the cross-entropy of its logits."""
    import torch
    import torch.nn.functional as F

    class ClassifierLoss(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.net = net

        def forward(self, x, y):
            return F.cross_entropy(self.net(x), y)

    return ClassifierLoss(), (torch.randn(batch, 3, size, size), torch.randint(0, 1000, (batch,)))


def lm_step(net, batch, seq, vocab):
    """(loss module, inputs) of a transformers language model's training
    step: the module returns the model's own loss on its inputs as labels."""
    import torch

    class LmLoss(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.net = net

        def forward(self, ids, labels):
            return self.net(input_ids=ids, labels=labels).loss

    net.config.use_cache = False
    ids = torch.randint(0, vocab, (batch, seq))
    return LmLoss(), (ids, ids.clone())


def build(name, batch):
    """(loss module, inputs): the module returns the scalar loss."""
    import torch
    torch.manual_seed(0)
    if name in ("resnet18", "mobilenet_v3_small", "efficientnet_b0"):
        import torchvision
        return classifier_step(getattr(torchvision.models, name)(weights=None), batch)
    if name.startswith("timm_"):
        import timm
        arch = {"timm_vit_tiny": "vit_tiny_patch16_224", "timm_convnext_atto": "convnext_atto"}[name]
        return classifier_step(timm.create_model(arch, pretrained=False), batch)
    import transformers as tf
    seq, vocab = 128, 1000
    if name == "gpt2_tiny":
        net = tf.GPT2LMHeadModel(tf.GPT2Config(n_layer=2, n_embd=128, n_head=4, vocab_size=vocab, n_positions=seq))
    elif name == "llama_tiny":
        net = tf.LlamaForCausalLM(tf.LlamaConfig(hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                                                 num_attention_heads=4, num_key_value_heads=2, vocab_size=vocab,
                                                 max_position_embeddings=seq))
    elif name == "bert_tiny":
        net = tf.BertForMaskedLM(tf.BertConfig(hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                                               num_attention_heads=4, vocab_size=vocab, max_position_embeddings=seq))
    else:
        raise SystemExit(f"unknown model {name}")
    return lm_step(net, batch, seq, vocab)


def storages_bytes(tensors):
    seen = {}
    for t in tensors:
        st = t.untyped_storage()
        seen[st.data_ptr()] = st.nbytes()
    return sum(seen.values())


def run_one(name, out):
    """Capture, measure and write NAME.fx.json and NAME.trace.json under out."""
    import torch
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from graphlint.export import cli as exporter
    env, batch = MODELS[name]
    module, inputs = build(name, batch)
    module.train()
    fx = os.path.join(out, f"{name}.fx.json")
    t0 = time.time()
    exporter.export_module(module, inputs, fx, train=True)
    capture_s = time.time() - t0
    opt = torch.optim.Adam(module.parameters())

    def step():
        loss = module(*inputs)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    step()  # warm-up: Adam's state exists, gradients are None
    state = [t for s in opt.state.values() for t in s.values() if torch.is_tensor(t)]
    start = storages_bytes(list(module.parameters()) + list(module.buffers()) + state + list(inputs))
    from torch.profiler import ProfilerActivity, profile, record_function
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True, with_stack=True) as prof:
        with record_function("ProfilerStep#1"):
            step()
    trace = os.path.join(out, f"{name}.trace.json")
    prof.export_chrome_trace(trace)
    json.dump({"start_bytes": start, "capture_s": capture_s, "torch": torch.__version__},
              open(os.path.join(out, f"{name}.meta.json"), "w"))


def measure_cpu(path):
    """A hardware profile of this CPU from three microbenchmarks (fp32)."""
    import torch
    torch.manual_seed(0)
    a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
    for _ in range(3):
        a @ b
    t0 = time.perf_counter()
    n = 10
    for _ in range(n):
        a @ b
    flops = n * 2 * 1024 ** 3 / (time.perf_counter() - t0)
    x = torch.randn(64 * 1024 * 1024 // 4)
    y = torch.empty_like(x)
    y.copy_(x)
    t0 = time.perf_counter()
    for _ in range(5):
        y.copy_(x)
    bw = 5 * 2 * x.nbytes / (time.perf_counter() - t0)
    s = torch.ones(1)
    for _ in range(100):
        s.add(s)
    t0 = time.perf_counter()
    for _ in range(2000):
        s.add(s)
    launch = (time.perf_counter() - t0) / 2000
    with open(path, "w") as f:
        f.write(f"""profiles:
  - name: cpu-here
    description: this machine's CPU, measured by validation/compare_cpu.py
    sm_count: {os.cpu_count()}
    memory_gib: 64
    memory_bandwidth_gb_per_s: {bw / 1e9:.3f}
    launch_overhead_us: {launch * 1e6:.3f}
    peak_tflops: {{ fp32: {flops / 1e12:.5f} }}
    compute_efficiency: 1.0
    tensor_core_efficiency: 1.0
    memory_efficiency: 1.0
    source: measured here (1024x1024 fp32 matmul, 256 MiB copy, a one-element add)
""")
    return {"fp32_gflops": flops / 1e9, "bandwidth_gbs": bw / 1e9, "launch_us": launch * 1e6}


def metric(doc, name):
    for m in doc["metrics"]:
        if m["name"] == name:
            return m
    return {}


def pct(p, m):
    return f"{100 * (p - m) / m:+.1f}%" if p is not None and m else "-"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--graphlint", default=os.path.join(ROOT, "build", "graphlint"))
    ap.add_argument("--out", default="/tmp/compare-cpu")
    ap.add_argument("--vision-python", default=os.path.join(ROOT, "build", "venv-vision", "bin", "python"))
    ap.add_argument("--hf-python", default=os.path.join(ROOT, "build", "venv", "bin", "python"))
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--reuse", action="store_true", help="keep the captures and traces already in --out")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--measure-cpu", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        return run_one(a.one, a.out)
    if a.measure_cpu:
        print(json.dumps(measure_cpu(a.measure_cpu)))
        return
    os.makedirs(a.out, exist_ok=True)
    hw = os.path.join(a.out, "cpu-here.yaml")
    cpu = json.loads(subprocess.run([a.hf_python, __file__, "--measure-cpu", hw], check=True, capture_output=True,
                                    text=True).stdout)
    print(f"cpu-here: {cpu['fp32_gflops']:.1f} GFLOP/s fp32, {cpu['bandwidth_gbs']:.2f} GB/s, "
          f"{cpu['launch_us']:.1f} us per op", file=sys.stderr)
    results = {"cpu": cpu, "models": {}}
    for name in a.only or MODELS:
        env, _ = MODELS[name]
        py = a.vision_python if env == "vision" else a.hf_python
        have = all(os.path.exists(os.path.join(a.out, f"{name}.{x}")) for x in ("fx.json", "trace.json", "meta.json"))
        r = subprocess.CompletedProcess([], 0) if a.reuse and have else \
            subprocess.run([py, __file__, "--one", name, "--out", a.out], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"{name}: measuring failed:\n{r.stderr[-2000:]}", file=sys.stderr)
            results["models"][name] = {"error": r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "failed"}
            continue
        meta = json.load(open(os.path.join(a.out, f"{name}.meta.json")))
        cmd = [a.graphlint, "compare", os.path.join(a.out, f"{name}.fx.json"), "--trace",
               os.path.join(a.out, f"{name}.trace.json"), "--train", "--optimizer", "adam", "--precision", "fp32",
               "--kernels", "cpu", "--backend", "eager", "--target", "cpu-here", "--format", "json"]
        c = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, GRAPHLINT_HARDWARE_FILE=hw))
        if c.returncode != 0:
            print(f"{name}: compare failed: {c.stderr}", file=sys.stderr)
            results["models"][name] = {"error": c.stderr.strip()}
            continue
        doc = json.loads(c.stdout)
        doc["meta"] = meta
        results["models"][name] = doc
        print(f"{name}: done", file=sys.stderr)
    json.dump(results, open(os.path.join(a.out, "results.json"), "w"), indent=1)

    print("| model | peak allocated predicted | measured | error | start bytes predicted / measured | step predicted "
          "| measured | error | forward err | backward err | optimizer err | ops matched (measured time share) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, doc in results["models"].items():
        if "error" in doc:
            print(f"| {name} | failed: {doc['error'][:80]} ||||||||||")
            continue
        # Memory: the profiler's CPU peak is relative to the bytes held when
        # it started; the measured start (parameters, buffers, Adam state,
        # inputs) makes it absolute, independent of the prediction.
        pa = metric(doc, "peak_allocated")
        mem = doc["memory"]
        meas_abs = mem["measured_region_peak_bytes"] + doc["meta"]["start_bytes"] if mem["measured_relative"] \
            else pa.get("measured")
        step, fwd, bwd, optm = (metric(doc, k) for k in ("step", "forward", "backward", "optimizer"))
        ops = doc["ops"]
        matched = sum(o["measured_s"] for o in ops)
        share = f"{len([o for o in ops if o['measured_count']])}/{len(ops)} ({100 * matched / step['measured']:.0f}%)" \
            if step.get("measured") else "-"
        gib = lambda b: f"{b / 2**20:.1f} MiB" if b is not None else "-"  # noqa: E731
        ms = lambda s: f"{s * 1e3:.1f} ms" if s is not None else "-"  # noqa: E731
        print(f"| {name} | {gib(pa.get('predicted'))} | {gib(meas_abs)} | "
              f"{pct(pa.get('predicted'), meas_abs)} | {gib(mem['predicted_start_bytes'])} / "
              f"{gib(doc['meta']['start_bytes'])} | {ms(step.get('predicted'))} | {ms(step.get('measured'))} | "
              f"{pct(step.get('predicted'), step.get('measured'))} | {pct(fwd.get('predicted'), fwd.get('measured'))} | "
              f"{pct(bwd.get('predicted'), bwd.get('measured'))} | {pct(optm.get('predicted'), optm.get('measured'))} | "
              f"{share} |")


if __name__ == "__main__":
    main()
