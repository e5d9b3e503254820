#!/usr/bin/env bash
# The sanitizer half of CI (docs/robustness.md), run after the normal suite:
#   1. the unit, CLI and corpus suite under AddressSanitizer + UBSan (gcc) in
#      build-asan/, with LeakSanitizer on: sanitizer builds tear every Model
#      down (lint/Driver.cpp), so a leak report is a real leak;
#   2. a bounded smoke run of every libFuzzer target (scripts/fuzz.sh, clang,
#      build-fuzz/), failing on any crash, leak, timeout or OOM.
#
#   scripts/ci-sanitizers.sh                 both, 60 s per fuzz target
#   CI_FUZZ_SECONDS=120 scripts/ci-sanitizers.sh
#   scripts/ci-sanitizers.sh --asan-only | --fuzz-only
set -euo pipefail
cd "$(dirname "$0")/.."

what=${1:-all}
FUZZ_SECONDS=${CI_FUZZ_SECONDS:-60}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(cd .. && pwd)}
status=0
t0=$(date +%s)

if [ "$what" != "--fuzz-only" ]; then
  SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # -O1: the suite's speed matters less than the build's on two cores.
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug "${launcher[@]}" \
    -DCMAKE_C_FLAGS_DEBUG="-O1 -g" -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" \
    -DCMAKE_C_FLAGS="$SAN" -DCMAKE_CXX_FLAGS="$SAN" -DCMAKE_EXE_LINKER_FLAGS="$SAN" \
    -DGRAPHLINT_BUILD_BENCH=OFF -DGRAPHLINT_ENABLE_CUDA=OFF >/dev/null
  cmake --build build-asan -j"$(nproc)"
  t1=$(date +%s)
  echo "ci-sanitizers: build-asan built in $((t1 - t0)) s"
  # halt_on_error: the first report fails the test that caused it. The
  # Python-driven tests (torch capture and its repeated blocks, the wheel
  # build, the compiler comparison, the memory matrix and the rule parity
  # exports, which the truth set and MemoryValidationFx already cover here)
  # exercise Python, not graphlint's memory safety, and the
  # replay's address-space limit cannot hold ASan's shadow memory: they run
  # in the normal suite; the reproducers run here through the gtest suites
  # (RobustnessTest, InputLimitsTest, RobustnessIoCases) and fuzz regressions.
  ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j2 \
      -E '^(PythonPackage\.|FxCapture\.|FxRepeatedBlocks\.|MemoryMatrix\.|RuleParity\.|fusion_compare_smoke$|robustness_replay_|export_cost_validation_models$)' || status=1
  t2=$(date +%s)
  echo "ci-sanitizers: ASan+UBSan suite ran in $((t2 - t1)) s"
fi

if [ "$what" != "--asan-only" ]; then
  t3=$(date +%s)
  scripts/fuzz.sh --seconds "$FUZZ_SECONDS" || status=1
  echo "ci-sanitizers: fuzz smoke run (build + ${FUZZ_SECONDS} s per target) took $(( $(date +%s) - t3 )) s"
fi
echo "ci-sanitizers: total $(( $(date +%s) - t0 )) s"
exit $status
