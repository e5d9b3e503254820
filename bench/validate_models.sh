#!/usr/bin/env bash
# Regenerates the real-model figures of docs/validation.md ("Fusion planner"):
# exports the models (models/export_validation.py) unless present, lints each
# with every backend (--format json) and prints one markdown table row per
# model: nodes, predicted kernels per backend, boundaries by reason (ort) and
# which rules fire (code x count).
#   bench/validate_models.sh [BUILD_DIR]   (default build; models in BUILD_DIR/tmp/validation)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
OUT="$BUILD/tmp/validation"
GL="$BUILD/tools/graphlint"
MODELS=(resnet50 mobilenet_v3_small efficientnet_b0 vit_b_16 fasterrcnn_mobilenet_v3_large_320_fpn maskrcnn_resnet50_fpn gpt_tiny_fp16)
missing=()
for m in "${MODELS[@]}"; do [[ -f "$OUT/$m.onnx" ]] || missing+=("$m"); done
if ((${#missing[@]})); then
  /usr/bin/python3 "$ROOT/models/export_validation.py" --out "$OUT" --only "${missing[@]}" || true
fi
for m in "${MODELS[@]}"; do
  [[ -f "$OUT/$m.onnx" ]] || { echo "| $m | export failed |"; continue; }
  for b in inductor tensorrt ort; do
    "$GL" --format json --exit-zero --backend "$b" "$OUT/$m.onnx" > "$OUT/$m.$b.json"
  done
done
/usr/bin/python3 - "$OUT" "${MODELS[@]}" <<'PY'
import collections, json, sys
out, models = sys.argv[1], sys.argv[2:]
print("| model | nodes | kernels inductor / tensorrt / ort | ort boundaries by reason | rules fired (default backend) |")
print("|---|---|---|---|---|")
for m in models:
    try:
        runs = {b: json.load(open(f"{out}/{m}.{b}.json"))["files"][0] for b in ("inductor", "tensorrt", "ort")}
    except FileNotFoundError:
        continue
    f = runs["inductor"]
    nodes = f.get("stats", {}).get("nodes", "?")
    kern = " / ".join(str(runs[b]["fusion"].get("kernels_predicted", "?")) for b in ("inductor", "tensorrt", "ort"))
    reasons = collections.Counter(x["reason"] for x in runs["ort"]["fusion"].get("boundaries", []))
    codes = collections.Counter(d["code"] for d in f.get("diagnostics", []))
    print(f"| {m} | {nodes} | {kern} | " + ", ".join(f"{r} {n}" for r, n in reasons.most_common()) +
          " | " + (", ".join(f"{c} x{n}" for c, n in sorted(codes.items())) or "none") + " |")
PY
