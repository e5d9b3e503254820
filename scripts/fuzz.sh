#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, docs/robustness.md) with clang,
# AddressSanitizer and UndefinedBehaviorSanitizer into build-fuzz/, seeds each
# target's corpus from the repository's models and fixtures, runs each target
# for a bounded time, merges (minimises) its corpus, and fails on any crash,
# leak, timeout or out-of-memory finding.
#
#   scripts/fuzz.sh                      build + 60 s per target
#   scripts/fuzz.sh --seconds 3600       an hour per target
#   scripts/fuzz.sh --targets "onnx fx"  some targets only (onnx fx config baseline hardware pt2 argv)
#   scripts/fuzz.sh --build-only         just build build-fuzz/
#   scripts/fuzz.sh --no-build           reuse build-fuzz/ as it is
#   FUZZ_BUILD_DIR=... FUZZ_NICE=10 FUZZ_RSS_MB=2048 FUZZ_TIMEOUT=10
#
# Findings go to build-fuzz/findings/<target>/ (crash-*, leak-*, timeout-*,
# oom-*); the evolving corpus to build-fuzz/corpus/<target>/; one log per
# target to build-fuzz/logs/<target>.log. One fuzzing process at a time.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

SECONDS_PER_TARGET=60
TARGETS="onnx fx config baseline hardware pt2 argv"
BUILD=1
RUN=1
while (($#)); do
  case "$1" in
    --seconds) SECONDS_PER_TARGET=$2; shift 2 ;;
    --targets) TARGETS=$2; shift 2 ;;
    --build-only) RUN=0; shift ;;
    --no-build) BUILD=0; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "fuzz.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
B=${FUZZ_BUILD_DIR:-build-fuzz}
NICE=${FUZZ_NICE:-10}
RSS_MB=${FUZZ_RSS_MB:-2048}
TIMEOUT=${FUZZ_TIMEOUT:-10}

if ((BUILD)); then
  scripts/setup.sh --fuzz
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(cd .. && pwd)}
  SAN="-fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 "${launcher[@]}" \
    -DCMAKE_C_FLAGS="$SAN" -DCMAKE_CXX_FLAGS="$SAN" \
    -DGRAPHLINT_BUILD_FUZZERS=ON -DGRAPHLINT_BUILD_TESTS=OFF -DGRAPHLINT_BUILD_BENCH=OFF \
    -DGRAPHLINT_ENABLE_CUDA=OFF >/dev/null
  nice -n "$NICE" cmake --build "$B" -j"${FUZZ_BUILD_JOBS:-2}" \
    $(for t in $TARGETS; do echo "--target graphlint_fuzz_$t"; done) --target graphlint
fi
((RUN)) || exit 0

# Seeds: generated into the build folder from what the repository holds, never
# duplicated in git. Files larger than max_len are still useful: libFuzzer
# reads their first max_len bytes.
seed() {  # seed TARGET FILE...
  local dir="$B/seeds/$1" f; shift
  mkdir -p "$dir"
  for f in "$@"; do f=${f#./}; [ -f "$f" ] && cp -f "$f" "$dir/$(echo "$f" | tr '/' '_')"; done
  return 0
}
rm -rf "$B/seeds"
seed onnx $(find models tests/fixtures -name '*.onnx' -size -512k)
seed fx $(find models tests/fixtures -name '*.fx.json' -size -512k)
seed config $(find . -path './build*' -prune -o \( -name '.graphlint.yaml' -o -path './tests/fixtures/*.yaml' \) -size -64k -print)
seed hardware data/hardware.yaml
seed pt2 $(find models tests/fixtures -name '*.pt2' -size -64k)
seed argv fuzz/regressions/argv/*  # command lines over the scratch files (fuzz/ArgvFuzzer.cpp)
# The YAML examples of the docs (the full config reference among them).
for doc in docs/configuration.md docs/hardware.md; do
  awk -v out="$B/seeds/$(basename "$doc" .md)" '/^```yaml/{n++; f=out "-" n ".yaml"; next} /^```/{f=""} f{print > f}' "$doc"
done
mv "$B"/seeds/configuration-*.yaml "$B/seeds/config/" 2>/dev/null || true
mv "$B"/seeds/hardware-*.yaml "$B/seeds/hardware/" 2>/dev/null || true
# ONNX text fixtures (tests/fixtures/*.onnxtxt) as binary models, when
# python3-onnx is there to parse them.
python3 - "$B/seeds/onnx" tests/fixtures/*.onnxtxt <<'PY' 2>/dev/null || true
import sys, os, onnx, onnx.parser
for path in sys.argv[2:]:
    try:
        m = onnx.parser.parse_model(open(path).read())
        open(os.path.join(sys.argv[1], os.path.basename(path) + ".onnx"), "wb").write(m.SerializeToString())
    except Exception:
        pass
PY
mkdir -p "$B/seeds/baseline"
for m in models/resnet18.onnx models/gpt_tiny.onnx; do
  [ -f "$m" ] && ASAN_OPTIONS=detect_leaks=1 "$B/tools/graphlint" "$m" -q \
    --write-baseline "$B/seeds/baseline/$(basename "$m" .onnx).json" >/dev/null 2>&1 || true
done
seed baseline $(find tests/fixtures -name '*baseline*.json')

declare -A MAXLEN=([onnx]=65536 [fx]=65536 [config]=8192 [baseline]=32768 [hardware]=16384 [pt2]=65536 [argv]=2048)
declare -A DICT=([onnx]=fuzz/onnx.dict [fx]=fuzz/json.dict [config]=fuzz/yaml.dict [baseline]=fuzz/json.dict
                 [hardware]=fuzz/yaml.dict [pt2]=fuzz/json.dict
                 [argv]=fuzz/argv.dict)
# argv runs the CLI, which prints: its stdout and stderr go to /dev/null.
declare -A EXTRA=([argv]=-close_fd_mask=3)
mkdir -p "$B/logs"
# A wall-clock bound per target: libFuzzer's own timeout handler can
# deadlock in its report (seen under heavy load: a futex wait after
# "ALARM: working on the last Unit"), and a hung fuzzer must fail the run,
# not hang it. Exit 124/137 then reports the target as FAILED.
WALL_LIMIT=$((SECONDS_PER_TARGET * 3 + 120))
failed=0
printf '%-9s %8s %10s %7s %7s %7s  %s\n' target seconds execs cov ft corpus result
for t in $TARGETS; do
  bin="$B/fuzz/graphlint_fuzz_$t"
  corpus="$B/corpus/$t" findings="$B/findings/$t" log="$B/logs/$t.log"
  mkdir -p "$corpus" "$findings"
  rm -f "$findings"/*
  start=$(date +%s)
  rc=0
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
    timeout --kill-after=10 "$WALL_LIMIT" nice -n "$NICE" "$bin" -max_total_time="$SECONDS_PER_TARGET" \
    -max_len="${MAXLEN[$t]}" -timeout="$TIMEOUT" \
    -rss_limit_mb="$RSS_MB" -dict="${DICT[$t]}" -artifact_prefix="$(cd "$findings" && pwd)/" -print_final_stats=1 \
    -reload=0 ${EXTRA[$t]:-} "$corpus" "$B/seeds/$t" "fuzz/regressions/$t" 2>"$log" >/dev/null || rc=$?
  elapsed=$(( $(date +%s) - start ))
  # Minimise the corpus in place: keep only inputs that add coverage.
  if ((rc == 0)); then
    rm -rf "$corpus.merged"; mkdir -p "$corpus.merged"
    nice -n "$NICE" "$bin" -merge=1 -max_len="${MAXLEN[$t]}" -timeout="$TIMEOUT" -rss_limit_mb="$RSS_MB" \
      "$corpus.merged" "$corpus" >>"$B/logs/$t.merge.log" 2>&1 && rm -rf "$corpus" && mv "$corpus.merged" "$corpus"
  fi
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo 0)
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  cov=$(echo "$last" | grep -o 'cov: [0-9]*' | grep -o '[0-9]*' || echo "?")
  ft=$(echo "$last" | grep -o 'ft: [0-9]*' | grep -o '[0-9]*' || echo "?")
  nfind=$(find "$findings" -type f | wc -l)
  result=ok
  if ((rc != 0 || nfind > 0)); then
    result="FAILED (exit $rc; $(ls "$findings" | tr '\n' ' ')see $log)"
    failed=1
  fi
  printf '%-9s %8s %10s %7s %7s %7s  %s\n' "$t" "$elapsed" "$execs" "$cov" "$ft" "$(ls "$corpus" | wc -l)" "$result"
done
exit $failed
