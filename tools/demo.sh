#!/usr/bin/env bash
# Installs what is missing, builds mxlite in Release and runs the main demo: one epoch of the
# Fashion-MNIST convnet (examples/train_fashion_mnist.cc), after `mxlite info`.
#
#   tools/demo.sh                 # one epoch
#   tools/demo.sh --epochs 5      # flags go to the example
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/install_deps.sh
mxlite_install_deps

build_dir=${MXLITE_BUILD_DIR:-build}
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build_dir" -j "${MXLITE_JOBS:-2}" --target mxlite_cli train_fashion_mnist
"$build_dir/bin/mxlite" info
if [ "$#" -eq 0 ]; then set -- --epochs 1; fi
"$build_dir/bin/train_fashion_mnist" --checkpoint "$build_dir/fashion_mnist.mxckpt" "$@"
