#!/usr/bin/env bash
# Regenerates the FX figures of docs/validation.md ("FX frontend"): exports
# torchvision resnet50, vit_b_16 and a GPT-2-small-style decoder (models/fx/)
# with graphlint-export, forward and --train, then lints each export and
# prints one markdown table row per export: export time, file size, nodes
# (forward / backward), lint time and the findings by rule.
#   models/export_fx_validation.sh [BUILD_DIR]   (default build; exports in BUILD_DIR/tmp/fx-validation)
# Needs /usr/bin/python3 with torch and torchvision. Traced on the CPU as if on
# cuda:0 (--device cuda) with the batch dim named (--dim batch=7).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
OUT="$BUILD/tmp/fx-validation"
GL="$BUILD/tools/graphlint"
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"   # graphlint.export from the checkout
mkdir -p "$OUT"
cd "$ROOT/models/fx"
for m in resnet50 vit_b_16 gpt_decoder; do
  for mode in forward train; do
    flags=(--device cuda --dim batch=7)
    [[ $mode == train ]] && flags+=(--train)
    if [[ ! -f "$OUT/$m.$mode.fx.json" ]]; then  # delete an export to redo it
      start=$(date +%s.%N)
      /usr/bin/python3 -m graphlint.export "$m.py" -o "$OUT/$m.$mode.fx.json" "${flags[@]}" 2> "$OUT/$m.$mode.log" || true
      end=$(date +%s.%N)
      echo "$start $end" > "$OUT/$m.$mode.time"
    fi
    if [[ -f "$OUT/$m.$mode.fx.json" ]]; then
      lstart=$(date +%s.%N)
      "$GL" --format json --exit-zero "$OUT/$m.$mode.fx.json" > "$OUT/$m.$mode.lint.json" || true
      lend=$(date +%s.%N)
      echo "$lstart $lend" > "$OUT/$m.$mode.linttime"
    fi
  done
done
/usr/bin/python3 - "$OUT" <<'PY'
import collections, json, os, sys
out = sys.argv[1]
print("| model | mode | export s (incl. torch import) | file | nodes fwd / bwd | params (MB) | lint s | findings |")
print("|---|---|---|---|---|---|---|---|")
for m in ("resnet50", "vit_b_16", "gpt_decoder"):
    for mode in ("forward", "train"):
        base = f"{out}/{m}.{mode}"
        if not os.path.exists(base + ".fx.json"):
            print(f"| {m} | {mode} | export failed: {open(base + '.log').read().strip().splitlines()[-1]} |")
            continue
        s, e = map(float, open(base + ".time").read().split())
        ls, le = map(float, open(base + ".linttime").read().split())
        doc = json.load(open(base + ".fx.json"))
        phases = collections.Counter(n.get("phase", "forward") for n in doc["nodes"])
        f = json.load(open(base + ".lint.json"))["files"][0]
        if f.get("error"):
            print(f"| {m} | {mode} | lint failed: {f['error']} |")
            continue
        codes = collections.Counter(d["code"] for d in f.get("diagnostics", []))
        st = f.get("stats", {})
        size = os.path.getsize(base + ".fx.json")
        bw = doc.get("backward")
        note = "" if not bw or bw.get("traced") else " (backward not traced)"
        print(f"| {m} | {mode}{note} | {e - s:.1f} | {size / 1024:.0f} KiB | {phases['forward']} / {phases['backward']} | "
              f"{st.get('params', '?')} ({st.get('param_bytes', 0) / 1e6:.1f}) | {le - ls:.2f} | "
              + (", ".join(f"{c} {n}" for c, n in sorted(codes.items())) or "none") + " |")
PY
