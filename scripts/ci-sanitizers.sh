#!/usr/bin/env bash
# The sanitizer half of CI (docs/robustness.md), run after the normal suite,
# in one clang-14 AddressSanitizer + UBSan tree, build-asan/ (Debug at -O1,
# assertions on, line tables only, the library instrumented for libFuzzer as
# well), built once for both parts:
#   1. the unit, CLI and corpus suite, with LeakSanitizer on: sanitizer builds
#      tear every Model down (src/engine/Driver.cpp), so a leak report is a real
#      leak;
#   2. a bounded smoke run of every libFuzzer target (scripts/fuzz.sh
#      --no-build on that tree), failing on any crash, leak, timeout or OOM.
# One tree instead of a gcc ASan tree and a clang fuzz tree saves CI a whole
# build of the library on two cores.
#
#   scripts/ci-sanitizers.sh                 both, 30 s per fuzz target
#   CI_FUZZ_SECONDS=120 scripts/ci-sanitizers.sh
#   scripts/ci-sanitizers.sh --asan-only | --fuzz-only
set -euo pipefail
cd "$(dirname "$0")/.."

what=${1:-all}
# 30 s per target keeps the whole of .ci/run well inside its 45 minutes on two
# cores; every seed and fuzz/regressions input still runs first, and long
# campaigns are scripts/fuzz.sh's job (docs/robustness.md).
FUZZ_SECONDS=${CI_FUZZ_SECONDS:-30}
B=build-asan
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(cd .. && pwd)}
status=0
t0=$(date +%s)

scripts/setup.sh --fuzz
SAN="-fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# -O1 and line tables (-g1): the build's speed on two cores matters more than
# the suite's, and line tables are all a sanitizer report needs. No cuda
# backend here (GRAPHLINT_ENABLE_CUDA=OFF): past loading, its code runs only on
# a GPU, which CI has not; the normal tree builds it and checks that it loads
# (docs/verify.md, cuda backend).
cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Debug "${launcher[@]}" \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
  -DCMAKE_C_FLAGS_DEBUG="-O1 -g1" -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
  -DCMAKE_C_FLAGS="$SAN" -DCMAKE_CXX_FLAGS="$SAN" -DCMAKE_EXE_LINKER_FLAGS="$SAN" \
  -DGRAPHLINT_BUILD_FUZZERS=ON -DGRAPHLINT_BUILD_BENCH=OFF -DGRAPHLINT_ENABLE_CUDA=OFF >/dev/null
if [ "$what" = "--fuzz-only" ]; then
  cmake --build "$B" -j"$(nproc)" --target graphlint graphlint_fuzzers
else
  cmake --build "$B" -j"$(nproc)"
fi
t1=$(date +%s)
echo "ci-sanitizers: $B built in $((t1 - t0)) s"

if [ "$what" != "--fuzz-only" ]; then
  # halt_on_error: the first report fails the test that caused it. The
  # Python-driven tests (torch capture and its repeated blocks, the wheel
  # build, the compiler comparison, the memory matrix and the rule parity
  # exports, which the truth set and MemoryValidationFx already cover here)
  # exercise Python, not graphlint's memory safety, and the
  # replay's address-space limit cannot hold ASan's shadow memory: they run
  # in the normal suite; the reproducers run here through the gtest suites
  # (RobustnessTest, InputLimitsTest, RobustnessIoCases) and fuzz regressions.
  ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir "$B" --output-on-failure -j2 \
      -E '^(PythonPackage\.|FxCapture\.|FxRepeatedBlocks\.|MemoryMatrix\.|RuleParity\.|fusion_compare_smoke$|robustness_replay_|export_cost_validation_models$)' || status=1
  t2=$(date +%s)
  echo "ci-sanitizers: ASan+UBSan suite ran in $((t2 - t1)) s"
fi

if [ "$what" != "--asan-only" ]; then
  t3=$(date +%s)
  FUZZ_BUILD_DIR=$B scripts/fuzz.sh --no-build --seconds "$FUZZ_SECONDS" || status=1
  echo "ci-sanitizers: fuzz smoke run (${FUZZ_SECONDS} s per target) took $(( $(date +%s) - t3 )) s"
fi
echo "ci-sanitizers: total $(( $(date +%s) - t0 )) s"
exit $status
