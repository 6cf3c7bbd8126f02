#!/usr/bin/env bash
# Installs what is missing, builds mxlite (CUDA code included when the toolkit is present) and runs
# every test with CTest. GPU tests skip with a message when no GPU is visible.
#
#   tools/test.sh                 # build/ in Release, all tests
#   MXLITE_BUILD_DIR=out tools/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/install_deps.sh
mxlite_install_deps

build_dir=${MXLITE_BUILD_DIR:-build}
jobs=${MXLITE_JOBS:-2}
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build_dir" -j "$jobs"
ctest --test-dir "$build_dir" --output-on-failure -j "$jobs"
