#!/usr/bin/env bash
# The cuda backend module as built (docs/verify.md, "cuda backend"), on any
# machine, GPU or not: it exists, every library it needs resolves (cuBLAS,
# cuDNN and the sub-libraries libcudnn.so.9 opens at run time, CUPTI), and
# `graphlint verify --device cuda` loads it and runs its entry point: on a
# machine without a device that ends in the module's own one-line "no CUDA
# device is available (WHY)" and exit 2, not in a loader error ("...: cannot
# load the cuda backend") or a crash; with a device, in a run.
#
#   cuda_module_test.sh GRAPHLINT MODULE|none MODELS_DIR [WHY_NONE]
#
# Skips (77) when the build has no cuda backend (MODULE is "none"; WHY_NONE
# says why, as CMake found it).
set -uo pipefail
cli=$1 module=$2 models=$3 why_none=${4:-}

if [[ "$module" == none ]]; then
  echo "skipped: this build has no cuda backend: $why_none"
  exit 77
fi
fail() { echo "FAIL: $*"; exit 1; }

[[ -f "$module" ]] || fail "the cuda backend module $module was not built"

# Every NEEDED library of the module resolves, and so does every library of
# the folders they come from outside the system (cuDNN's sub-libraries are
# opened by libcudnn.so.9 only when a handle is created, which needs a GPU).
deps=$(ldd "$module") || fail "ldd $module failed"
echo "$deps"
grep -q 'not found' <<<"$deps" && fail "a library the module needs is not found (above)"
for lib in libcublas.so libcublasLt.so libcudnn.so libcupti.so; do
  grep -q "$lib" <<<"$deps" || fail "the module does not link $lib"
done
while read -r dir; do
  for sub in "$dir"/libcudnn*.so.* "$dir"/libcublas*.so.*; do
    [[ -f "$sub" ]] || continue
    missing=$(ldd "$sub" | grep 'not found') && fail "$sub: $missing"
  done
done < <(awk '/=> \// && /libcu(dnn|blas)/ {print $3}' <<<"$deps" | xargs -r -n1 dirname | sort -u)

# graphlint dlopens the module with RTLD_NOW: a symbol it cannot bind (from
# cuBLAS, cuDNN, CUPTI or graphlint itself) would fail the load right here.
errfile=$(mktemp)
out=$("$cli" verify --device cuda --random-weights -D batch=1 -D seq=8 "$models/gpt_tiny.onnx" 2>"$errfile")
rc=$?
err=$(cat "$errfile")
rm -f "$errfile"
echo "exit $rc"
echo "stderr: $err"
# With a device the module ran the model: every node (0) or up to one it
# declines (1); how well is VerifyCuda.BundledModelsMatchTheCpuReference's job.
if [[ $rc -eq 0 || $rc -eq 1 ]]; then
  echo "a CUDA device is available: the module loaded and ran gpt_tiny (exit $rc)"
  exit 0
fi
[[ $rc -eq 2 ]] || fail "verify --device cuda exited $rc, not 0, 1 or 2"
[[ "$err" == *"cannot start the cuda backend"* ]] && fail "the module loaded but could not start on this device"
[[ -z "$out" ]] || fail "verify --device cuda printed to stdout: $out"
[[ $(printf '%s\n' "$err" | wc -l) -eq 1 ]] || fail "more than one line on stderr"
# The module's factory writes "available (WHY)"; the loader "available: WHY".
[[ "$err" == "graphlint: verify: no CUDA device is available ("*")" ]] ||
  fail "not the module's own no-device line (did the module load?)"
echo "ok: the module loaded and reported that there is no device"
