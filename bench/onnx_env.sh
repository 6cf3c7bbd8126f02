#!/usr/bin/env bash
# What the ONNX benchmark scripts need, installed only when missing (sourced by onnx_check.sh and
# onnx_compare.sh):
#   mxlite_bench_python_deps   Debian python3-torch, python3-torchvision (for /usr/bin/python3)
#   mxlite_bench_binary        sets build_dir (MXLITE_BUILD_DIR or build) and mxlite (its
#                              bin/mxlite, absolute), or stops saying how to build it
#   mxlite_bench_venv DIR [PACKAGE...]
#                              a virtual environment over /usr/bin/python3 (so it sees torch and
#                              numpy) with onnxruntime and the PACKAGEs (import names = PyPI
#                              names: openvino, ncnn, pnnx) from PyPI; prints its python
mxlite_bench_python_deps() {
  if ! /usr/bin/python3 -c "import torch, torchvision, numpy" 2>/dev/null; then
    echo "[mxlite] installing python3-torch python3-torchvision" >&2
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-torch python3-torchvision \
      python3-numpy >/dev/null
  fi
}

mxlite_bench_binary() {
  build_dir=${MXLITE_BUILD_DIR:-build}
  mxlite=$(realpath -m "$build_dir/bin/mxlite")
  if [ ! -x "$mxlite" ]; then
    echo "no $mxlite: build it first (cmake --build $build_dir --target mxlite_cli)" >&2
    exit 1
  fi
}

mxlite_bench_venv() {
  local venv=$1
  shift
  local packages=(onnxruntime "$@")
  local imports
  imports=$(IFS=,; echo "${packages[*]}")
  if ! "$venv/bin/python" -c "import torch, numpy, $imports" 2>/dev/null; then
    echo "[mxlite] installing ${packages[*]} into $venv" >&2
    [ -x "$venv/bin/pip" ] || /usr/bin/python3 -m venv --system-site-packages "$venv"
    # numpy stays Debian's (torch is built against it): pip must not replace it.
    "$venv/bin/pip" install -q "${packages[@]}" "numpy==$(/usr/bin/python3 -c 'import numpy; print(numpy.__version__)')" >&2
  fi
  echo "$venv/bin/python"
}
