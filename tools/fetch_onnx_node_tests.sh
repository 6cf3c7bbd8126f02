#!/usr/bin/env bash
# Writes out ONNX's node tests of opsets 18 to 21, which Debian's libonnx-testdata (ONNX 1.12,
# opsets up to 17) does not have, for the conformance test (tests/scheduler/onnx_conformance_test.cc).
#
#   tools/fetch_onnx_node_tests.sh [BUILD_DIR]     # default build/
#
# They come from PyPI's onnx 1.16.2, the last release whose newest opset is 21: its wheel carries
# the node tests, each model exported at the newest opset its op had then. The wheel goes into a
# virtual environment under BUILD_DIR/onnx-node-tests/venv; the tests whose model imports opset
# 18 to 21 of the default domain are copied to BUILD_DIR/onnx-node-tests/opset18-21 (about 550
# tests, 15 MB). Nothing is done when that folder exists. Without network access the script says
# so and exits 0: the conformance test then skips the opset 18-21 lists with a message.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
root="$build_dir/onnx-node-tests"
target="$root/opset18-21"
[ -d "$target" ] && exit 0

mkdir -p "$root"
venv="$root/venv"
skip() {
  echo "[mxlite] $1: the opset 18-21 node tests will be skipped"
  exit 0
}
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" || skip "could not make a Python virtual environment"
fi
if ! "$venv/bin/python" -c "import onnx" 2>/dev/null; then
  echo "[mxlite] installing onnx==1.16.2 from PyPI (its node tests of opsets 18-21)"
  "$venv/bin/pip" install -q "onnx==1.16.2" "numpy<2.3" || skip "could not install onnx from PyPI"
fi

"$venv/bin/python" - "$target" <<'EOF' || skip "could not write the tests out"
import os
import shutil
import sys

import onnx

source = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")
target = sys.argv[1]
partial = target + ".partial"  # renamed into place once complete
shutil.rmtree(partial, ignore_errors=True)
os.makedirs(partial)
copied = 0
for test in sorted(os.listdir(source)):
    model = onnx.load(os.path.join(source, test, "model.onnx"), load_external_data=False)
    opsets = [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")]
    if opsets and 18 <= opsets[0] <= 21:
        shutil.copytree(os.path.join(source, test), os.path.join(partial, test))
        copied += 1
os.rename(partial, target)
print(f"[mxlite] {copied} ONNX node tests of opsets 18-21 (onnx {onnx.__version__}) in {target}")
EOF
