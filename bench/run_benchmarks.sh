#!/usr/bin/env bash
# Performance benchmark of graphlint against the Python ONNX pipeline
# (onnx.load + checker.check_model(full_check=True) + infer_shapes(data_prop=True)).
# Builds graphlint unless GRAPHLINT is given, generates the inputs (resnet50 with
# embedded weights, synthetic chain/wide graphs), runs everything and prints
# markdown tables on stdout (progress on stderr). See docs/performance.md.
#
# Usage: bench/run_benchmarks.sh [--quick]
#   --quick   skip the 1M-node graphs and the Python pipeline on graphs > 20k nodes
# Environment:
#   GRAPHLINT=path    use this binary instead of building build-bench/tools/graphlint
#   PYTHON=path       interpreter with onnx/torch/torchvision (default /usr/bin/python3)
#   BENCH_DATA=dir    where generated inputs go (default build-bench/bench-data; never commit them)
#   RUNS=n            warm runs per input (default 7; 3 for 1M-node graphs)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
QUICK=0
for arg in "$@"; do
  case "$arg" in
    --quick) QUICK=1 ;;
    -h|--help) sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run_benchmarks.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

PYTHON=${PYTHON:-/usr/bin/python3}
BUILD=$ROOT/build-bench
DATA=${BENCH_DATA:-$BUILD/bench-data}
RUNS=${RUNS:-7}
log() { echo "[bench] $*" >&2; }

if ! "$PYTHON" -c 'import onnx, torch, torchvision, numpy' 2>/dev/null; then
  echo "run_benchmarks.sh: $PYTHON lacks onnx/torch/torchvision/numpy (install python3-onnx python3-torch" \
       "python3-torchvision, or set PYTHON=)" >&2
  exit 2
fi

if [[ -z "${GRAPHLINT:-}" ]]; then
  log "building graphlint (Release) in $BUILD"
  gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
  [[ -f $BUILD/CMakeCache.txt ]] || cmake -S "$ROOT" -B "$BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release >&2
  cmake --build "$BUILD" --target graphlint -j "$(nproc)" >&2
  GRAPHLINT=$BUILD/tools/graphlint
fi
[[ -x "$GRAPHLINT" ]] || { echo "run_benchmarks.sh: no graphlint binary at '$GRAPHLINT'" >&2; exit 2; }
if grep -q '^CMAKE_BUILD_TYPE:STRING=Debug' "$(dirname "$(dirname "$GRAPHLINT")")/CMakeCache.txt" 2>/dev/null; then
  log "warning: $GRAPHLINT is a Debug build; numbers will not be representative"
fi

mkdir -p "$DATA/full" "$DATA/weightless" "$DATA/synthetic"
RESNET=$DATA/full/resnet50.onnx
if [[ ! -s $RESNET ]]; then
  log "exporting resnet50 with embedded weights (~100 MB, ~20 s)"
  "$PYTHON" "$ROOT/models/export_models.py" --only resnet50 --full-dir "$DATA/full" --out "$DATA/weightless" >&2
fi

SIZES=(1000 10000 20000 100000)
(( QUICK )) || SIZES+=(1000000)
SYN=()
for kind in chain wide; do
  for n in "${SIZES[@]}"; do
    f=$DATA/synthetic/${kind}_$n.onnx
    if [[ ! -s $f ]]; then
      log "generating $kind graph, $n nodes"
      "$PYTHON" "$ROOT/bench/gen_synthetic.py" --kind "$kind" --nodes "$n" --out "$f"
    fi
    SYN+=("$kind:$n:$f")
  done
done

FLOOR=$DATA/synthetic/chain_1.onnx
[[ -s $FLOOR ]] || "$PYTHON" "$ROOT/bench/gen_synthetic.py" --nodes 1 --out "$FLOOR"

PY_MAX=100000
(( QUICK )) && PY_MAX=20000
log "running (warm runs: $RUNS; Python pipeline on synthetic graphs up to $PY_MAX nodes)"
"$PYTHON" "$ROOT/bench/bench.py" --graphlint "$GRAPHLINT" --python "$PYTHON" --resnet50 "$RESNET" --floor "$FLOOR" \
  --synthetic "${SYN[@]}" --python-max-nodes "$PY_MAX" --runs "$RUNS"
