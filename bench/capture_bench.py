#!/usr/bin/env python3
"""graphlint-export capture benchmarks (docs/performance.md), each a whole
process (wall, CPU and peak RSS from os.wait4):

- Llama-architecture 7B training graph, batch 1 x seq 4096 (target <= 30 s, <= 2 GB)
- Llama 70B configuration, same (target <= 60 s, <= 4 GB)
- the 1.3B GPT (models/fx/gpt_1_3b.py, 1,315,723,264 parameters), batch 8 x seq 2048,
  --train, on both torch lines: dropout masks saved
- the Llama architecture at a small size (models/capture_corpus.py:llama_small),
  fake and real (--capture real), batch 1 x seq 512, --train
- the 7B and 70B with --repeated-blocks off (every layer traced: the time
  before repeated-block capture; the files must be the same)

    bench/capture_bench.py [--only NAME,...|targets] [--out DIR]

`--only targets` runs the two rows with targets (llama_7b_train, llama_70b_train).
Each row says whether the repeated-block capture was used (`repeated`).
"""
import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
from run_capture_corpus import EXPORTER, LINES, run_measured  # noqa: E402   (beside this script)

LM = ["--input", "input_ids:int64[batch,seq]", "--input", "labels:int64[batch,seq]"]
GPT_DIMS = ["--dynamic", "input0:0=batch", "--dynamic", "input0:1=seq", "--dynamic", "input1:0=batch",
            "--dynamic", "input1:1=seq"]
BENCH = {
    "llama_7b_train": ("venv", ["--model", "capture_corpus:llama_7b", *LM, "--dim", "batch=1", "--dim", "seq=4096",
                                "--train"], "models"),
    "llama_70b_train": ("venv", ["--model", "capture_corpus:llama_70b", *LM, "--dim", "batch=1", "--dim", "seq=4096",
                                 "--train"], "models"),
    "llama_7b_train_full": ("venv", ["--model", "capture_corpus:llama_7b", *LM, "--dim", "batch=1", "--dim",
                                     "seq=4096", "--train", "--repeated-blocks", "off"], "models"),
    "llama_70b_train_full": ("venv", ["--model", "capture_corpus:llama_70b", *LM, "--dim", "batch=1", "--dim",
                                      "seq=4096", "--train", "--repeated-blocks", "off"], "models"),
    "gpt_1_3b_train_torch2": ("venv", ["gpt_1_3b.py", *GPT_DIMS, "--train"], "models/fx"),
    "gpt_1_3b_train_torch113": ("1.13", ["gpt_1_3b.py", *GPT_DIMS, "--train"], "models/fx"),
    "llama_small_train_fake": ("venv", ["--model", "capture_corpus:llama_small", *LM, "--dim", "batch=1",
                                        "--dim", "seq=512", "--train"], "models"),
    "llama_small_train_real": ("venv", ["--model", "capture_corpus:llama_small", *LM, "--dim", "batch=1",
                                        "--dim", "seq=512", "--train", "--capture", "real"], "models"),
}
TARGETS = ["llama_7b_train", "llama_70b_train"]
DROPOUT_OPS = {"aten::native_dropout", "aten::bernoulli_", "aten::bernoulli"}


def _saved_masks(doc):
    """Dropout masks autograd saves: native_dropout's mask output (torch 2.x),
    or on torch 1.13 the in-place div_ that scales a bernoulli_ mask."""
    bern = {o["name"] for n in doc["nodes"] if n["op"] in DROPOUT_OPS for o in n["outputs"]}
    count = 0
    for n in doc["nodes"]:
        if n.get("phase") != "forward" or not any(n.get("saved", [])):
            continue
        if n["op"] == "aten::native_dropout" or (n["op"] == "aten::div_" and n["inputs"] and n["inputs"][0] in bern):
            count += 1
    return count


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "capture-bench"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    only = TARGETS if args.only == "targets" else args.only.split(",") if args.only else BENCH
    unknown = [n for n in only if n not in BENCH]
    if unknown:
        ap.error(f"--only: unknown row {unknown[0]} (rows: targets, {', '.join(BENCH)})")
    for name in only:
        line, argv, cwd = BENCH[name]
        out = os.path.join(args.out, f"{name}.fx.json")
        load = round(os.getloadavg()[0], 1)
        rc, err, wall, cpu, rss = run_measured([LINES[line], *EXPORTER, *argv, "-o", out], os.path.join(ROOT, cwd))
        row = {"bench": name, "line": line, "rc": rc, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
               "rss_mib": round(rss), "load1_start": load, "load1": round(os.getloadavg()[0], 1),
               "repeated": "repeated blocks: " in err and "traced in full" not in err}
        if rc == 0:
            with open(out) as f:
                doc = json.load(f)
            row.update(torch=doc["producer"]["torch"], nodes=len(doc["nodes"]),
                       backward=sum(1 for n in doc["nodes"] if n.get("phase") == "backward"),
                       params=doc["model"]["parameters"],
                       saved=sum(sum(n.get("saved", [])) for n in doc["nodes"]),
                       dropout_masks_saved=_saved_masks(doc),
                       dropout_ops=sum(1 for n in doc["nodes"] if n["op"] in DROPOUT_OPS),
                       inputs=[i["shape"] for i in doc["inputs"]], mib=round(os.path.getsize(out) / 2 ** 20, 1))
        else:
            row["error"] = err.strip().splitlines()[-1] if err.strip() else f"exit {rc}"
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
