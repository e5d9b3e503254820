#!/usr/bin/env python3
"""Published multi-GPU training runs against graphlint's prediction (issue 41).

    python validation/published_runs.py [--graphlint build/tools/graphlint] [--rows ID,ID] [--json OUT]

Reads validation/published_runs.yaml; for each row maps the published setup to
graphlint's setup flags (the issue 41 contract: --dp-replicate, --dp-shard,
--tp, --pp, --cp, --ep, --pp-schedule, --microbatches, --recompute
selective-op|selective-layer=N|full, --float8, --async-tp, --backend
inductor|eager, --world-size, --target, --precision bf16-mixed, -D batch/seq),
captures the model once per model (graphlint-export --model
validation/published_models.py:FACTORY, meta device, symbolic batch and seq,
cached under --cache), runs graphlint --format json and prints predicted vs
published peak reserved memory (memory.peak_reserved_bytes) and tokens/s/GPU
(communication.tokens_per_second_per_gpu, or derived from
communication.step_time_s), with signed errors, and the published orderings.

A row is never approximated: when the binary does not accept a flag the row
needs (read from `graphlint --help`), the row says `not expressible: FLAG`;
when the source leaves a setup field unstated that the prediction depends on,
`setup unstated: FIELD`; when no model factory exists for it, `no model`.
Values the script takes from a documented default (a TOML of the source's
commit) are listed under the row as assumptions. Exit 0 unless the YAML or
the tools are unusable (the table is a report, not a gate, until the mesh
flags exist).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# The exporter package (python/graphlint/export), imported through PYTHONPATH or the install.
EXPORTER = ["-m", "graphlint.export"]
GIB = 2 ** 30

# Model name in the YAML -> factory in published_models.py (None: no factory,
# because no source read for this work gives the model's dims).
FACTORIES = {
    "llama3.1-8b": "llama3_8b", "llama3-8b": "llama3_8b",
    "llama3.1-70b": "llama3_70b", "llama3-70b": "llama3_70b",
    "llama3.1-405b": "llama3_405b",
    "mpt-7b": "mpt_7b", "mpt-30b": "mpt_30b",
    "qwen3-30b-a3b": "qwen3_30b_a3b", "qwen3-235b-a22b": "qwen3_235b_a22b",
    "gpt-oss-120b": "gpt_oss_120b", "deepseek-v3-16b": "deepseek_v3_16b",
}
# The symbols' sizes at capture; every row rebinds them with -D.
CAPTURE_DIMS = {"batch": 2, "seq": 256}
# Factories whose parameters depend on the sequence length (a learned position
# table of that many rows): captured once per (model, seq) as FACTORY_sSEQ.
SEQ_SIZED = {"mpt_7b", "mpt_30b"}


def unknown(v):
    return v is None or (isinstance(v, str) and v.startswith("unknown"))


class Binary:
    """What the graphlint binary accepts, read from its --help."""

    def __init__(self, path):
        self.path = path
        p = subprocess.run([path, "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.help = p.stdout

    def accepts(self, flag, value=None):
        if not re.search(r"(^|[\s,\[])" + re.escape(flag) + r"\b", self.help, re.M):
            return False
        if flag == "--recompute" and value is not None:
            word = value.split("=")[0]
            return re.search(r"\b" + re.escape(word) + r"\b", self.help) is not None
        return True


def setup_flags(row):
    """([(flag, value or None)], [unstated fields], [assumptions]) for a row."""
    flags, unstated, assumed = [], [], []
    par = row.get("parallelism", {})
    hw = row["hardware"]
    flags.append(("--train", None))
    flags.append(("--optimizer", "adamw"))
    flags.append(("--precision", "bf16-mixed"))
    flags.append(("--target", hw["target"]))
    flags.append(("--world-size", str(hw["count"])))
    flags.append(("--gpus-per-node", str(hw.get("gpus_per_node", 8))))
    fsdp1 = par.get("fsdp") == 1 and all(int(par.get(k, 1)) == 1 for k in ("dp_replicate", "tp", "pp", "cp", "ep"))
    if fsdp1:
        flags.append(("--fsdp", None))   # FSDP1 FULL_SHARD over every rank: the spelling FSDP1 users keep
    for key, flag in (("dp_replicate", "--dp-replicate"), ("dp_shard", "--dp-shard"), ("tp", "--tp"),
                      ("pp", "--pp"), ("cp", "--cp"), ("ep", "--ep")):
        if fsdp1 and key == "dp_shard":
            continue
        n = par.get(key, 1)
        if unknown(n):
            unstated.append(key)
        elif int(n) > 1:
            flags.append((flag, str(n)))
    if par.get("async_tp"):
        flags.append(("--async-tp", None))
    pp = par.get("pp", 1)
    batch = row.get("batch", {})
    if not unknown(pp) and int(pp) > 1:
        flags.append(("--pp-schedule", par.get("pp_schedule", "1f1b")))
        mb = par.get("microbatches")
        if unknown(mb) and row["source"].startswith("tt-2412"):
            mb = int(pp)
            assumed.append(f"microbatches {mb}: torchtitan 9dec370's default (the number of pipeline stages) "
                           "when the source does not set it")
        if unknown(mb):
            unstated.append("microbatches")
        else:
            flags.append(("--microbatches", str(mb)))
        vs = par.get("virtual_stages")
        if par.get("pp_schedule") == "interleaved-1f1b":
            if unknown(vs) and row["source"].startswith("tt-2412"):
                # torchtitan 9dec370 parallelisms/pipelining_utils.py,
                # generate_split_points: a multi-stage schedule without
                # pipeline_parallel_split_points (the llama3 TOMLs set none)
                # gets num_stages_per_rank = 2.
                vs = 2
                assumed.append("virtual stages 2: torchtitan 9dec370's default for a looped schedule "
                               "without split points (generate_split_points)")
            if unknown(vs):
                unstated.append("virtual_stages")
            else:
                flags.append(("--virtual-stages", str(vs)))
    rec = row.get("recompute")
    if unknown(rec):
        unstated.append("recompute")
    else:
        flags.append(("--recompute", rec))
    f8 = str(row.get("precision", {}).get("float8", "none"))
    if f8 in ("tensorwise", "rowwise"):
        flags.append(("--float8", f8))
    elif f8 == "unknown-recipe":
        flags.append(("--float8", "tensorwise"))
        assumed.append("float8 tensorwise: the source says Float8 without a recipe (torchao's default at the date)")
    elif f8.startswith("FP8-CS"):
        flags.append(("--float8", "tensorwise"))
        assumed.append("float8 tensorwise for Transformer Engine's per-tensor current scaling (FP8-CS)")
    prec = row.get("precision", {})
    if prec.get("float8_all_gather") is True:
        flags.append(("--float8-all-gather", None))
    if prec.get("float8_precompute_scale") is True:
        flags.append(("--float8-precompute-scale", None))
    comp = row.get("compile")
    flags.append(("--backend", "inductor" if comp is True else "eager"))
    # Per data-parallel rank per optimizer step: torchtitan's local batch, or
    # Megatron/Composer's micro-batch x accumulation.
    local = batch.get("local")
    if unknown(local) and not unknown(batch.get("micro")) and batch.get("micro") is not None:
        local = int(batch["micro"]) * int(batch.get("grad_accum", 1))
        if int(batch.get("grad_accum", 1)) > 1 and (unknown(pp) or int(pp) == 1):
            local = int(batch["micro"])
            assumed.append(f"batch {local}: one micro-batch; {batch['grad_accum']} accumulation steps share one "
                           "optimizer step (not modelled)")
    if local is None and not unknown(batch.get("per_dp")):
        local = batch["per_dp"]
    if row.get("default_from") and unknown(local):
        m = re.search(r"local_batch_size (\d+), seq_len (\d+)", row["default_from"])
        if m:
            local = int(m.group(1))
            batch = dict(batch, seq=int(m.group(2)))
            assumed.append(f"local batch {m.group(1)}, seq {m.group(2)}: {row['default_from'].split(':')[0]}")
    if unknown(local):
        unstated.append("batch")
    else:
        flags.append(("-D", f"batch={local}"))
    if unknown(batch.get("seq")):
        unstated.append("seq")
    else:
        flags.append(("-D", f"seq={batch['seq']}"))
    return flags, unstated, assumed, (None if unknown(local) else int(local)), batch.get("seq")


def capture_name(row, factory):
    """The capture a row is predicted on: a run whose parameters compute in bf16
    is captured in bf16 (its fp32 upcasts recorded), an autocast run (amp_bf16)
    in fp32, the policy narrowing it; a sequence-sized factory at the row's seq."""
    if factory in SEQ_SIZED:
        factory = f"{factory}_s{row['batch']['seq']}"
    if str(row.get("precision", {}).get("params", "")).startswith("bf16"):
        factory += "_bf16"
    return factory


def capture(factory, cache, python, timings):
    out = os.path.join(cache, f"{factory}.fx.json")
    if os.path.exists(out):
        return out, None
    os.makedirs(cache, exist_ok=True)
    cmd = [python, *EXPORTER, "--model", f"published_models:{factory}", "--input", "input_ids:int64[batch,seq]",
           "--input", "labels:int64[batch,seq]", "--train", "-o", out]
    for k, v in CAPTURE_DIMS.items():
        cmd += ["--dim", f"{k}={v}"]
    start = time.perf_counter()
    p = subprocess.run(cmd, cwd=HERE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    timings[factory] = time.perf_counter() - start
    if p.returncode != 0:
        return None, (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
    return out, None


def predict(binary, fx, flags):
    cmd = [binary.path, fx, "--format", "json", "--exit-zero"]
    for f, v in flags:
        cmd += [f] if v is None else [f, v]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        return None, (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
    doc = json.loads(p.stdout)
    return doc["files"][0], None


def err(pred, pub):
    return None if pred is None or pub is None else 100.0 * (pred - pub) / pub


def fmt(v, spec):
    width = int(re.match(r"[+]?(\d+)", spec).group(1))
    return "-".rjust(width) if v is None else format(v, spec)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graphlint", default=os.environ.get("GRAPHLINT_CLI", os.path.join(ROOT, "build", "tools", "graphlint")))
    ap.add_argument("--python", default=sys.executable, help="Python with torch 2.x + transformers, for the capture")
    ap.add_argument("--cache", default=os.path.join(ROOT, "build", "tmp", "published-runs"),
                    help="folder for the captured graphs (one per model, reused)")
    ap.add_argument("--rows", help="comma-separated row ids (default: all)")
    ap.add_argument("--json", help="also write the results as JSON")
    args = ap.parse_args(argv)

    with open(os.path.join(HERE, "published_runs.yaml")) as f:
        data = yaml.safe_load(f)
    rows = data["rows"]
    if args.rows:
        want = set(args.rows.split(","))
        rows = [r for r in rows if r["id"] in want]
    if not os.access(args.graphlint, os.X_OK):
        print(f"published_runs: no graphlint binary at {args.graphlint} (--graphlint)", file=sys.stderr)
        return 2
    binary = Binary(args.graphlint)
    timings, captured, results = {}, {}, {}

    for row in rows:
        flags, unstated, assumed, local, seq = setup_flags(row)
        res = {"id": row["id"], "role": row["role"], "assumed": assumed, "published": row.get("published", {})}
        results[row["id"]] = res
        missing = sorted({f for f, v in flags if not binary.accepts(f, v if f == "--recompute" else None)},
                         key=lambda f: [x for x, _ in flags].index(f))
        rec = next((v for f, v in flags if f == "--recompute"), None)
        if "--recompute" not in missing and rec is not None and not binary.accepts("--recompute", rec):
            missing.append(f"--recompute {rec}")
        elif "--recompute" in missing:
            missing[missing.index("--recompute")] = f"--recompute {rec}"
        res["flags"] = " ".join(f if v is None else f"{f} {v}" for f, v in flags)
        factory = FACTORIES.get(row["model"]["name"])
        if factory is None:
            res["status"] = f"no model: no factory for {row['model']['name']} (its dims are not recorded from a source)"
            continue
        if unstated:
            res["status"] = "setup unstated: " + ", ".join(unstated)
            continue
        if missing:
            res["status"] = "not expressible: " + ", ".join(missing)
            continue
        factory = capture_name(row, factory)
        if factory not in captured:
            captured[factory] = capture(factory, args.cache, args.python, timings)
        fx, why = captured[factory]
        if fx is None:
            res["status"] = f"capture failed: {why}"
            continue
        out, why = predict(binary, fx, flags)
        if out is None:
            res["status"] = f"graphlint failed: {why}"
            continue
        mem, comm = out.get("memory", {}), out.get("communication", {})
        par = row.get("parallelism", {})
        shards = 1
        for k in ("tp", "pp", "cp"):
            shards *= int(par.get(k, 1))
        tps = comm.get("tokens_per_second_per_gpu")
        if tps is None and comm.get("step_time_s") and local and seq:
            tps = local * int(seq) / comm["step_time_s"] / shards
        res.update(status="predicted", peak_reserved_gib=mem.get("peak_reserved_bytes", 0) / GIB,
                   capacity_gib=mem.get("device_capacity_bytes", 0) / GIB, tokens_per_s_per_gpu=tps,
                   step_time_s=comm.get("step_time_s"),
                   # model_flops is the whole model's step on one data-parallel
                   # rank's batch: the tp x pp x cp ranks share it.
                   model_tflops_per_gpu=(comm["model_flops"] / shards / comm["step_time_s"] / 1e12
                                         if comm.get("model_flops") and comm.get("step_time_s") else None))

    # ------------------------------------------------------------------ table
    print(f"published runs: {len(rows)} rows ({sum(r['role'] == 'calibrate' for r in rows)} calibration), "
          f"graphlint {args.graphlint}")
    head = f"{'row':34} {'role':9} {'mem pub':>8} {'pred':>8} {'err':>7} {'tok/s pub':>10} {'pred':>10} {'err':>7}  status"
    print(head)
    print("-" * len(head))
    for row in rows:
        r = results[row["id"]]
        pub = r["published"]
        pm, pt = pub.get("memory_gib"), pub.get("tokens_per_s_per_gpu")
        m, t = r.get("peak_reserved_gib"), r.get("tokens_per_s_per_gpu")
        extra = ""
        if pub.get("oom"):
            extra = " (published: OOM)"
            if m is not None:
                extra += f"; predicted {'does not fit' if m > r['capacity_gib'] else 'FITS'}"
        if pub.get("model_tflops_per_gpu") is not None:
            extra += f" (published {pub['model_tflops_per_gpu']} model TFLOP/s/GPU" + (
                f", predicted {r['model_tflops_per_gpu']:.0f})" if r.get("model_tflops_per_gpu") else ")")
        print(f"{row['id']:34} {row['role']:9} {fmt(pm, '8.1f')} {fmt(m, '8.1f')} {fmt(err(m, pm), '+7.1f')} "
              f"{fmt(pt, '10.1f')} {fmt(t, '10.1f')} {fmt(err(t, pt), '+7.1f')}  {r['status']}{extra}")
        for a in r["assumed"]:
            print(f"{'':34}   assumed: {a}")

    # -------------------------------------------------------------- orderings
    print("\npublished orderings:")
    for o in data.get("orderings", []):
        if "oom" in o:
            r = results.get(o["oom"])
            verdict = "not evaluated (row not predicted)"
            if r and r.get("peak_reserved_gib") is not None:
                verdict = "reproduced" if r["peak_reserved_gib"] > r["capacity_gib"] else "NOT reproduced"
            print(f"  {o['name']}: {verdict}")
            continue
        key = "peak_reserved_gib" if "smaller" in o else "tokens_per_s_per_gpu"
        a, b = (o["smaller"], o["larger"]) if "smaller" in o else (o["faster"], o["slower"])
        ra, rb = results.get(a, {}), results.get(b, {})
        va, vb = ra.get(key), rb.get(key)
        if va is None or vb is None:
            verdict = "not evaluated (" + ", ".join(x for x, v in ((a, va), (b, vb)) if v is None) + " not predicted)"
        else:
            ok = va < vb if key == "peak_reserved_gib" else va > vb
            verdict = f"{'reproduced' if ok else 'NOT reproduced'} ({va:.1f} vs {vb:.1f})"
        print(f"  {o['name']}: {verdict}")

    if timings:
        print("\ncapture times (graphlint-export, meta device, --train, symbolic batch and seq):")
        for k, v in timings.items():
            print(f"  {k}: {v:.1f} s")
    counts = {}
    for r in results.values():
        counts[r["status"].split(":")[0]] = counts.get(r["status"].split(":")[0], 0) + 1
    print("\nrows by status: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": list(results.values()), "capture_s": timings}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
