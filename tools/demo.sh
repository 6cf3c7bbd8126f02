#!/usr/bin/env bash
# Installs what is missing, builds mxlite in Release and runs the main demo. Until the training
# demo lands, the demo is `mxlite info`: every setting with its value and source, and the build.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/install_deps.sh
mxlite_install_deps

build_dir=${MXLITE_BUILD_DIR:-build}
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build_dir" -j "${MXLITE_JOBS:-2}" --target mxlite_cli
"$build_dir/bin/mxlite" info
