#!/usr/bin/env bash
# Device check for `graphlint verify` (docs/verify.md, docs/validation.md).
#
#   tools/device-check.sh bundle [BUILD_DIR] [BUNDLE_DIR]
#       On the build machine: copy graphlint, graphlint_unit_tests, the bundled
#       models and the shared libraries they need that a bare GPU machine lacks
#       (from ldd: everything except the C runtime and the CUDA toolkit's own
#       libraries) into BUNDLE_DIR (default BUILD_DIR/device-bundle, BUILD_DIR
#       default build). Small enough to carry to the device machine (~35 MB).
#       cuBLAS and cuDNN (NVIDIA's wheels, 1.5 GB: libcublasLt alone is 540 MB)
#       stay out: the GPU machine's image has them as Python packages (its
#       torch's nvidia-cublas and nvidia-cudnn-cu13), which `run` finds.
#       BUNDLE_CUDA_LIBS=1 copies them in as well, for a GPU machine without
#       them where a 1.5 GB bundle can travel.
#
#   tools/device-check.sh run [BUNDLE_OR_BUILD_DIR] [RESULT_FILE]
#       On the GPU machine: run `graphlint verify` on the bundled models (random
#       weights, batch 8 CNNs, gpt_tiny batch 8 x seq 32) in text and JSON, and
#       the cuda-vs-cpu test, writing everything to RESULT_FILE (default
#       $OUT/device-check.txt when $OUT is set, else device-check.txt). Then,
#       where python3 has torch, torch's own measurements of real training
#       steps (validation/device_measure.py: step time by CUDA events, peak
#       memory, one step's profiler trace and memory snapshot, and
#       `graphlint compare` on them; single-GPU slices of the launch-scale
#       setups included) into RESULT_FILE's folder, measure/. With no
#       bundle it configures and builds BUNDLE_OR_BUILD_DIR with CMake first.
#       cuBLAS and cuDNN are looked for in the bundle's lib/, in
#       GRAPHLINT_CUDA_LIBS (a folder holding nvidia/cu13/lib, nvidia/cudnn/lib,
#       as pip install --target makes it) and in python3's nvidia packages.
#       DEVICE=cpu runs the same flow on the cpu backend (a dry run without a
#       GPU); TARGET names the hardware profile (default H200); MEASURE=0
#       skips the torch measurements, MEASURE_ONLY="case ..." picks some.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode="${1:-run}"

bundle() {
  local build="${1:-$here/build}" out="${2:-${1:-$here/build}/device-bundle}"
  [[ -x "$build/tools/graphlint" ]] || { echo "device-check: no $build/tools/graphlint; build first" >&2; exit 2; }
  rm -rf "$out"
  mkdir -p "$out/bin" "$out/lib" "$out/models" "$out/data"
  cp "$build/tools/graphlint" "$out/bin/"
  [[ -x "$build/tests/graphlint_unit_tests" ]] && cp "$build/tests/graphlint_unit_tests" "$out/bin/"
  # The cuda backend is a module graphlint dlopens from its own directory.
  [[ -f "$build/tools/libgraphlint_cuda.so" ]] || { echo "device-check: no $build/tools/libgraphlint_cuda.so (built without CUDA?)" >&2; exit 2; }
  cp "$build/tools/libgraphlint_cuda.so" "$out/bin/"
  cp "$here"/models/*.onnx "$out/models/"
  cp "$here/data/hardware.yaml" "$out/data/"
  local cuda_root
  cuda_root="$(readlink -f /usr/local/cuda 2>/dev/null || echo /usr/local/cuda)"
  for exe in "$out"/bin/*; do
    ldd "$exe" | awk '/=>/ {print $3}'
  done | sort -u | while read -r lib; do
    [[ -z "$lib" || ! -e "$lib" ]] && continue
    case "$(readlink -f "$lib")" in
      "$cuda_root"/*|/usr/local/cuda*) continue ;;  # the GPU machine has the toolkit
    esac
    case "$(basename "$lib")" in
      libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|libutil.so.*|ld-linux*) continue ;;
      libcublas*|libcudnn*) continue ;;  # NVIDIA's wheels: the GPU machine's python3 has them
    esac
    cp -L "$lib" "$out/lib/"
  done
  # The wheel libraries the module links, and cuDNN's sub-libraries, which
  # libcudnn.so.9 opens beside itself at run time.
  local wheel_dirs
  wheel_dirs=$(ldd "$out/bin/libgraphlint_cuda.so" | awk '/=> \// && /libcu(blas|dnn)/ {print $3}' | xargs -r -n1 dirname | sort -u)
  ldd "$out/bin/libgraphlint_cuda.so" | awk '/libcu(blas|dnn)/ {print $1}' >"$out/lib/cuda-wheel-libs.txt"
  if [[ "${BUNDLE_CUDA_LIBS:-0}" == 1 ]]; then
    for d in $wheel_dirs; do
      cp -L "$d"/libcublas*.so.* "$d"/libcudnn*.so.* "$out/lib/" 2>/dev/null
    done
    rm -f "$out/lib/libnvblas.so."*
  fi
  du -sh "$out"
  echo "carry: ${out#$here/}"
}

# wheel_roots: folders holding NVIDIA's wheels as nvidia/<package>/lib, first
# GRAPHLINT_CUDA_LIBS, then python3's site-packages (the GPU image's torch
# depends on nvidia-cublas and nvidia-cudnn-cu13).
wheel_roots() {
  [[ -n "${GRAPHLINT_CUDA_LIBS:-}" ]] && echo "$GRAPHLINT_CUDA_LIBS"
  python3 -c 'import nvidia, os; print("\n".join(os.path.dirname(p) for p in nvidia.__path__))' 2>/dev/null
}

# wheel_lib_dirs: their library folders for cuBLAS, cuDNN and NVRTC (which
# cuDNN's runtime-compiled engines open), CUDA 13 and 12 layouts.
wheel_lib_dirs() {
  local root sub
  wheel_roots | while read -r root; do
    for sub in cu13/lib cublas/lib cudnn/lib cuda_nvrtc/lib; do
      [[ -d "$root/nvidia/$sub" ]] && echo "$root/nvidia/$sub"
    done
  done
}

run() {
  local dir="${1:-$here/build/device-bundle}"
  local result="${2:-${OUT:+$OUT/}device-check.txt}"
  local device="${DEVICE:-cuda}" target="${TARGET:-H200}"
  local bin tests
  if [[ -x "$dir/bin/graphlint" ]]; then
    bin="$dir/bin/graphlint"
    tests="$dir/bin/graphlint_unit_tests"
    local cuda_lib=""
    for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/extras/CUPTI/lib64 $(wheel_lib_dirs); do
      [[ -d "$d" ]] && cuda_lib="$cuda_lib:$d"
    done
    export LD_LIBRARY_PATH="$dir/lib$cuda_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export GRAPHLINT_HARDWARE_FILE="$dir/data/hardware.yaml"
  else
    local wheels
    wheels=$(wheel_roots | head -1)
    cmake -S "$here" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release ${wheels:+-DGRAPHLINT_CUDA_LIBS_DIR="$wheels"} >/dev/null &&
      cmake --build "$dir" -j"$(nproc)" --target graphlint graphlint_unit_tests >/dev/null ||
      { echo "device-check: build failed" >&2; exit 2; }
    bin="$dir/tools/graphlint"
    tests="$dir/tests/graphlint_unit_tests"
  fi
  local models="$here/models"
  [[ -f "$dir/models/resnet18.onnx" ]] && models="$dir/models"
  mkdir -p "$(dirname "$result")"
  {
    echo "# graphlint device check, $(date -u +%Y-%m-%dT%H:%M:%SZ), device=$device target=$target"
    command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    "$bin" --version
    # What the cuda backend module resolves to here (cuBLAS and cuDNN from the
    # bundle or this machine's NVIDIA wheels, CUPTI from the toolkit).
    local module
    module="$(dirname "$bin")/libgraphlint_cuda.so"
    if [[ "$device" == cuda && -f "$module" ]]; then
      ldd "$module" | grep -E 'libcu|not found'
      ldd "$module" | grep -q 'not found' &&
        echo "device-check: the cuda backend needs the libraries marked 'not found' (cuBLAS 13, cuDNN 9: set GRAPHLINT_CUDA_LIBS)"
    fi
    for spec in "resnet18 -D batch=8" "mobilenet_v3_small -D batch=8" "gpt_tiny -D batch=8 -D seq=32"; do
      set -- $spec
      local name="$1"
      shift
      echo
      echo "## $name ($*)"
      "$bin" verify --device "$device" --random-weights --target "$target" "$@" "$models/$name.onnx"
      echo "exit: $?"
      "$bin" verify --device "$device" --random-weights --target "$target" --format json "$@" \
        -o "${result%.txt}.$name.json" "$models/$name.onnx"
    done
    if [[ -x "$tests" && "$device" == cuda ]]; then
      echo
      echo "## cuda backend vs cpu reference"
      GRAPHLINT_MODELS_DIR="$models" "$tests" --gtest_filter='VerifyCuda.*' 2>&1 | tail -20
    fi
    if [[ "${MEASURE:-1}" != 0 ]] && python3 -c 'import torch' 2>/dev/null; then
      echo
      echo "## torch's own measurements beside the predictions (validation/device_measure.py)"
      # shellcheck disable=SC2086
      PYTHONPATH="$here/python${PYTHONPATH:+:$PYTHONPATH}" python3 "$here/validation/device_measure.py" \
        --graphlint "$bin" --out "$(dirname "$result")/measure" --device "$device" \
        ${TARGET:+--target "$TARGET"} ${MEASURE_ONLY:+--only $MEASURE_ONLY}
      echo "exit: $?"
    fi
  } >"$result" 2>&1
  cat "$result"
}

case "$mode" in
  bundle) shift; bundle "$@" ;;
  run) shift; run "$@" ;;
  *) echo "usage: tools/device-check.sh bundle [BUILD_DIR] [BUNDLE_DIR] | run [BUNDLE_OR_BUILD_DIR] [RESULT_FILE]" >&2; exit 2 ;;
esac
