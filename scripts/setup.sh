#!/usr/bin/env bash
# Sets up a Debian 12 machine for graphlint and builds it: installs the Debian
# packages it needs (only those missing, so reruns are cheap), configures with
# CMake and builds into ./build. Safe to run again at any time.
#
#   scripts/setup.sh            install + configure + build (Release)
#   scripts/setup.sh --deps     install packages only
#   scripts/setup.sh --no-venv  skip the torch 2.x environments
#   scripts/setup.sh --fuzz     install only the fuzzing toolchain (clang +
#                               libFuzzer runtime) for scripts/fuzz.sh
#
# Python: Debian's /usr/bin/python3 carries torch 1.13 (python3-torch); the
# torch 2.x environments are virtual environments under the build folder
# (scripts/requirements/*.txt): build/venv (torch 2.13 CPU, transformers,
# ONNX Runtime) and build/venv-vision (torch 2.14 + torchvision, timm).
# GRAPHLINT_VENV / GRAPHLINT_VENV_VISION put them elsewhere (worktrees can
# share one).
#
# CUDA: where the CUDA 13 toolkit is (nvcc on PATH or in /usr/local/cuda), the
# cuda backend of `graphlint verify` is built too; its cuBLAS and cuDNN come
# from NVIDIA's wheels (scripts/requirements/cuda-libs.txt), installed into
# build/cuda-libs (GRAPHLINT_CUDA_LIBS puts them elsewhere) before CMake runs.
#   BUILD_DIR=out scripts/setup.sh
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=${BUILD_DIR:-build}
BUILD_TYPE=${BUILD_TYPE:-Release}

# Build and test dependencies. python3-onnx/numpy generate ONNX's backend node
# tests for the corpus test; graphviz renders --emit-dot output; python3-torch
# and python3-torchvision are the torch 1.13 line the FX tests capture with;
# libzip-dev reads torch.export's .pt2 archives; zlib1g-dev gzipped profiler
# traces; chromium (headless) loads the predicted snapshot and trace in real
# viewers (tests/viewers/*_chromium_test.py).
PACKAGES=(cmake ninja-build g++ pkg-config
          libonnx-dev libprotobuf-dev protobuf-compiler
          llvm-14-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev
          python3-onnx python3-numpy pre-commit python3-jsonschema ccache
          python3-torch python3-torchvision graphviz libzip-dev zlib1g-dev chromium)

# Only for the libFuzzer targets (scripts/fuzz.sh, docs/robustness.md): the
# normal build and test setup does not need them.
FUZZ_PACKAGES=(clang-14 libclang-rt-14-dev)

# install_missing PACKAGE...: apt-get install of those not installed yet.
install_missing() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  echo "setup: installing ${missing[*]}"
  local SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
if [ "${1:-}" = "--fuzz" ]; then
  install_missing "${FUZZ_PACKAGES[@]}"
  exit 0
fi
install_missing "${PACKAGES[@]}"
[ "${1:-}" = "--deps" ] && exit 0

# make_venv DIR REQUIREMENTS: (re)creates DIR when its requirements changed.
make_venv() {
  local dir=$1 req=$2
  if [ -f "$dir/.requirements" ] && cmp -s "$req" "$dir/.requirements"; then return; fi
  echo "setup: creating $dir from $req"
  rm -rf "$dir"
  python3 -m venv "$dir"
  "$dir/bin/pip" install -q --disable-pip-version-check -r "$req"
  cp "$req" "$dir/.requirements"
}
# make_viewers_web: the viewers' npm packages (tests/viewers/web/package.json,
# pinned by its package-lock.json) into $BUILD_DIR/viewers-web, again only when
# the lock file changed. npm comes with Debian's nodejs and npm where it is missing.
make_viewers_web() {
  local dir=$BUILD_DIR/viewers-web lock=tests/viewers/web/package-lock.json
  if cmp -s "$lock" "$dir/.installed" 2>/dev/null; then return; fi
  command -v npm >/dev/null || install_missing nodejs npm
  echo "setup: installing the viewers' npm packages into $dir"
  rm -rf "$dir"
  mkdir -p "$dir"
  cp tests/viewers/web/package.json "$lock" "$dir/"
  (cd "$dir" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error)
  cp "$lock" "$dir/.installed"
}
make_viewers_web

# The environments are made while the C++ build runs (pip waits on the network
# and unpacking, the build on the compiler): on two cores that saves minutes of
# a fresh machine's setup. Their output goes to $BUILD_DIR/setup-venv.log,
# shown when they fail.
venv_pid=""
if [ "${1:-}" != "--no-venv" ]; then
  mkdir -p "$BUILD_DIR"
  (
    make_venv "${GRAPHLINT_VENV:-$BUILD_DIR/venv}" scripts/requirements/torch2.txt
    make_venv "${GRAPHLINT_VENV_VISION:-$BUILD_DIR/venv-vision}" scripts/requirements/torch2-vision.txt
  ) >"$BUILD_DIR/setup-venv.log" 2>&1 &
  venv_pid=$!
fi

# install_cuda_libs DIR REQUIREMENTS: cuBLAS and cuDNN for the cuda backend,
# when there is a CUDA toolkit (the nvcc CMake finds: on PATH, else in
# /usr/local/cuda) of the major version the pinned wheels are for; installed
# again when the requirements changed. Sets cuda_flags for CMake.
cuda_flags=()
install_cuda_libs() {
  local dir=$1 req=$2 nvcc major
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  [ -x "$nvcc" ] || return 0
  major=$("$nvcc" --version | sed -n 's/.*release \([0-9]*\)\..*/\1/p')
  if ! grep -q "^nvidia-cudnn-cu${major}==" "$req"; then
    echo "setup: $req pins no cuBLAS/cuDNN for the CUDA $major toolkit ($nvcc): the cuda backend is not built"
    return 0
  fi
  if ! { [ -f "$dir/.requirements" ] && cmp -s "$req" "$dir/.requirements"; }; then
    echo "setup: installing cuBLAS and cuDNN into $dir from $req"
    rm -rf "$dir"
    python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps --target "$dir" -r "$req"
    cp "$req" "$dir/.requirements"
  fi
  cuda_flags=(-DGRAPHLINT_CUDA_LIBS_DIR="$(cd "$dir" && pwd)" -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
}
mkdir -p "$BUILD_DIR"
install_cuda_libs "${GRAPHLINT_CUDA_LIBS:-$BUILD_DIR/cuda-libs}" scripts/requirements/cuda-libs.txt

# ccache makes rebuilds in other build trees and worktrees of the same
# sources cheap; paths below the checkout's parent are hashed relatively.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(cd .. && pwd)}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" \
  -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache "${cuda_flags[@]}" >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)"
echo "setup: built $BUILD_DIR/tools/graphlint"
if [ -n "$venv_pid" ]; then
  if ! wait "$venv_pid"; then
    cat "$BUILD_DIR/setup-venv.log" >&2
    echo "setup: creating the torch 2.x environments failed (log above, $BUILD_DIR/setup-venv.log)" >&2
    exit 1
  fi
  grep '^setup:' "$BUILD_DIR/setup-venv.log" || true
  # `import graphlint` in the checkout's own build/venv without a second C++
  # build (`pip install .`): a .pth file puts python/ on its path, and the
  # package finds this build's binary (python/graphlint/_binary.py). A venv
  # shared through GRAPHLINT_VENV belongs to another checkout: left alone.
  if [ -z "${GRAPHLINT_VENV:-}" ]; then
    for site in "$BUILD_DIR"/venv/lib/python3*/site-packages; do
      [ -d "$site" ] && echo "$(pwd)/python" >"$site/graphlint-checkout.pth"
    done
    echo "setup: build/venv imports graphlint from $(pwd)/python"
  fi
fi
