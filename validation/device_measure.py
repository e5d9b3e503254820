#!/usr/bin/env python3
"""torch's own measurements of real training steps beside graphlint's
predictions (tools/device-check.sh `measure`; docs/validation.md "On the
device").

For each case: capture the training step with graphlint's exporter (fake
tensors, the joint forward + backward graph of the model and its loss), then
run the real step on the device: warm-up steps (the optimizer's state exists,
gradients are None, as the plan starts), then

- step time: the mean of N steps between CUDA events, after a synchronize;
- peak memory: torch.cuda.max_memory_allocated / max_memory_reserved over
  one step, from the bytes held when it starts;
- one step under torch.profiler (CUDA activity, profile_memory) written as
  NAME.trace.json, and a memory snapshot of the same step
  (torch.cuda.memory._record_memory_history) as NAME.pickle;

and run `graphlint compare NAME.fx.json --trace NAME.trace.json --snapshot
NAME.pickle` under the case's setup, so the measured run's own trace and
snapshot are read by graphlint as a user's would be. Writes OUT/results.json
and prints the markdown table for docs/validation.md.

The cases include single-GPU slices of the launch-scale setups of
docs/validation.md: Llama 3.1 8B's decoder at full width with 2 layers, the
per-GPU micro-batch torchtitan runs (1 x 8192), bf16 mixed precision (fp32
master weights, autocast) and AdamW, as one GPU of an 8-way FSDP run holds
its unsharded working set during a layer.

  validation/device_measure.py --graphlint BIN --out DIR [--device cuda|cpu] [--only NAME ...] [--steps N]

--device cpu is a dry run of the same flow with small shapes (no CUDA
events, no snapshot: the CPU allocator keeps no history).
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

from compare_cpu import classifier_step, lm_step  # noqa: E402  (this folder; no torch at import)

# name: (precision, optimizer, builder); builders take the device kind
# ("cuda" or "cpu": the CPU dry run uses small shapes).
CASES = {}


def case(name, precision, optimizer):
    def register(fn):
        CASES[name] = (precision, optimizer, fn)
        return fn
    return register


@case("resnet50_b64_fp32", "fp32", "sgd")
def resnet50(device):
    import torchvision
    return classifier_step(torchvision.models.resnet50(weights=None), 64 if device == "cuda" else 2,
                           224 if device == "cuda" else 64)


@case("vit_b16_b64_bf16", "bf16-mixed", "adamw")
def vit(device):
    import timm
    return classifier_step(timm.create_model("vit_base_patch16_224", pretrained=False), 64 if device == "cuda" else 2)


@case("gpt2_124m_8x1024_bf16", "bf16-mixed", "adamw")
def gpt2(device):
    import transformers as tf
    seq = 1024 if device == "cuda" else 64
    cfg = tf.GPT2Config(n_positions=seq, vocab_size=50257) if device == "cuda" else \
        tf.GPT2Config(n_layer=2, n_embd=128, n_head=4, n_positions=seq, vocab_size=1000)
    return lm_step(tf.GPT2LMHeadModel(cfg), 8 if device == "cuda" else 2, seq, cfg.vocab_size)


@case("llama3_8b_2layers_1x8192_bf16", "bf16-mixed", "adamw")
def llama_slice(device):
    """One GPU's slice of torchtitan's Llama 3.1 8B: the 8B decoder at full
    width, 2 of its 32 layers, the full vocabulary, micro-batch 1 x 8192."""
    import transformers as tf
    if device == "cuda":
        cfg = tf.LlamaConfig(hidden_size=4096, intermediate_size=14336, num_hidden_layers=2, num_attention_heads=32,
                             num_key_value_heads=8, vocab_size=128256, max_position_embeddings=8192,
                             rope_theta=500000.0, attn_implementation="sdpa")
        seq = 8192
    else:
        cfg = tf.LlamaConfig(hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=4,
                             num_key_value_heads=2, vocab_size=1000, max_position_embeddings=128,
                             attn_implementation="sdpa")
        seq = 128
    return lm_step(tf.LlamaForCausalLM(cfg), 1, seq, cfg.vocab_size)


def optimizer_for(name, params):
    import torch
    if name == "sgd":
        return torch.optim.SGD(params, lr=0.01, momentum=0.9)
    return torch.optim.AdamW(params, lr=1e-4, foreach=True)


def measure(name, device, steps, out, graphlint, target):
    import torch
    from graphlint.export import cli as exporter
    precision, opt_name, build = CASES[name]
    torch.manual_seed(0)
    module, inputs = build(device)
    module.train()
    fx = os.path.join(out, f"{name}.fx.json")
    t0 = time.time()
    exporter.export_module(module, inputs, fx, train=True)
    capture_s = time.time() - t0

    dev = torch.device(device)
    module.to(dev)
    inputs = tuple(t.to(dev) for t in inputs)
    opt = optimizer_for(opt_name, module.parameters())
    autocast = torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=precision == "bf16-mixed")

    def step():
        with autocast:
            loss = module(*inputs)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    def sync():
        if device == "cuda":
            torch.cuda.synchronize()

    for _ in range(3):
        step()
    sync()
    result = {"case": name, "precision": precision, "optimizer": opt_name, "capture_s": capture_s,
              "torch": torch.__version__, "device": torch.cuda.get_device_name() if device == "cuda" else "cpu"}

    # Step time.
    if device == "cuda":
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(steps):
            step()
        end.record()
        sync()
        result["step_s"] = start.elapsed_time(end) / 1e3 / steps
    else:
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        result["step_s"] = (time.perf_counter() - t0) / steps

    # Peak memory over one step, from what it starts with.
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
        result["start_allocated_bytes"] = torch.cuda.memory_allocated()
        step()
        sync()
        result["peak_allocated_bytes"] = torch.cuda.max_memory_allocated()
        result["peak_reserved_bytes"] = torch.cuda.max_memory_reserved()

    # One step's trace and snapshot, for graphlint compare.
    from torch.profiler import ProfilerActivity, profile, record_function
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    snapshot = os.path.join(out, f"{name}.pickle")
    if device == "cuda":
        torch.cuda.memory._record_memory_history(max_entries=1_000_000)
    with profile(activities=activities, profile_memory=True, record_shapes=True, with_stack=True) as prof:
        with record_function("ProfilerStep#1"):
            step()
        sync()
    trace = os.path.join(out, f"{name}.trace.json")
    prof.export_chrome_trace(trace)
    if device == "cuda":
        torch.cuda.memory._dump_snapshot(snapshot)
        torch.cuda.memory._record_memory_history(enabled=None)

    setup = ["--train", "--precision", precision, "--optimizer", opt_name, "--backend", "eager",
             "--target", target]
    cmd = [graphlint, "compare", fx, "--trace", trace, "--format", "json", *setup]
    if device == "cuda":
        cmd += ["--snapshot", snapshot]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        result["compare_error"] = r.stderr.strip()
    else:
        result["compare"] = json.loads(r.stdout)
    r = subprocess.run([graphlint, fx, "--format", "json", "--exit-zero", *setup], capture_output=True, text=True)
    if r.returncode == 0:
        doc = json.loads(r.stdout)
        f = doc["files"][0] if "files" in doc else doc
        result["predicted_peak_allocated_bytes"] = f.get("memory", {}).get("peak_allocated_bytes")
        result["predicted_peak_reserved_bytes"] = f.get("memory", {}).get("peak_reserved_bytes")
        result["predicted_step_s"] = f.get("communication", {}).get("step_time_s")
    else:
        result["lint_error"] = r.stderr.strip()
    del module, opt, inputs
    if device == "cuda":
        torch.cuda.empty_cache()
    return result


def pct(p, m):
    return f"{100 * (p - m) / m:+.1f}%" if p is not None and m else "-"


def table(results):
    rows = ["| case | device | step predicted | step measured (events) | error | peak alloc predicted | measured | error |",
            "|---|---|---|---|---|---|---|---|"]
    for r in results:
        if "error" in r:
            rows.append(f"| {r['case']} | - | failed: {r['error']} | | | | | |")
            continue
        ps, ms = r.get("predicted_step_s"), r.get("step_s")
        pa, ma = r.get("predicted_peak_allocated_bytes"), r.get("peak_allocated_bytes")
        gib = lambda b: f"{b / 2**30:.2f} GiB" if b else "-"
        rows.append(f"| {r['case']} | {r['device']} | {ps * 1e3 if ps else 0:.2f} ms | {ms * 1e3:.2f} ms | "
                    f"{pct(ps, ms)} | {gib(pa)} | {gib(ma)} | {pct(pa, ma)} |")
    return "\n".join(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graphlint", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    ap.add_argument("--target", default=None, help="graphlint's hardware profile (default from the device's name)")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--only", nargs="*")
    args = ap.parse_args()
    import torch
    if args.device == "cuda" and not torch.cuda.is_available():
        print("device_measure: torch sees no CUDA device", file=sys.stderr)
        return 2
    target = args.target
    if target is None:
        name = torch.cuda.get_device_name() if args.device == "cuda" else ""
        target = "H200" if "H200" in name else "H100-SXM" if "H100" in name else "A100-80GB" if "A100" in name else "H100-SXM"
    os.makedirs(args.out, exist_ok=True)
    results = []
    for name in args.only or list(CASES):
        t0 = time.time()
        try:
            r = measure(name, args.device, args.steps, args.out, args.graphlint, target)
        except Exception as e:  # one case's failure (an OOM, a missing package) is its row, not the run's end
            r = {"case": name, "error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:200]}
            if args.device == "cuda":
                torch.cuda.empty_cache()
        r["wall_s"] = time.time() - t0
        results.append(r)
        print(json.dumps({k: v for k, v in r.items() if k != "compare"}), flush=True)
    json.dump({"target": target, "results": results}, open(os.path.join(args.out, "results.json"), "w"), indent=1)
    print(table(results))
    return 0 if all("error" not in r for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
