#!/usr/bin/env bash
# mxlite against PyTorch on real networks: exports ResNet-18, MobileNet-V2, ResNet-50, VGG-16 and
# GoogLeNet (torchvision, random weights from a fixed seed) to ONNX, runs each through `mxlite run`
# on the exported input under each convolution plan (MXNET_CONV_PLAN none, local, global), and
# checks mxlite's output against PyTorch's:
#
#   relative error = max |mxlite - pytorch| / max |pytorch|  over all logits, must be <= 1e-4.
#
#   bench/onnx_check.sh                       # models and outputs go to build/onnx-bench/
#   bench/onnx_check.sh resnet18 googlenet    # some models only
#
# Installs python3-torch and python3-torchvision with apt when /usr/bin/python3 lacks them.
# MXLITE_BUILD_DIR (default build) says where bin/mxlite is.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/onnx_env.sh
mxlite_bench_python_deps

build_dir=${MXLITE_BUILD_DIR:-build}
out=$build_dir/onnx-bench
mxlite=$build_dir/bin/mxlite
[ -x "$mxlite" ] || { echo "no $mxlite: build it first (cmake --build $build_dir --target mxlite_cli)" >&2; exit 1; }

models=${*:-"resnet18 mobilenet_v2 resnet50 vgg16 googlenet"}
(cd bench && /usr/bin/python3 onnx_models.py "../$out" $models)
status=0
for model in $models; do
 for plan in none local global; do
  rm -rf "$out/$model-run"
  MXNET_CONV_PLAN=$plan "$mxlite" run "$out/$model.onnx" --input "input=$out/${model}_input.pb" \
    --output-dir "$out/$model-run"
  (cd bench && /usr/bin/python3 - "../$out/$model-run/output_0.pb" "../$out/${model}_expected.pb" "$model plan $plan") <<'PY' || status=1
import sys
import numpy as np
import tensor_pb
_, actual = tensor_pb.read(sys.argv[1])
_, expected = tensor_pb.read(sys.argv[2])
assert actual.shape == expected.shape, f"shape {actual.shape}, expected {expected.shape}"
error = np.abs(actual.astype(np.float64) - expected).max() / np.abs(expected).max()
ok = error <= 1e-4
print(f"{sys.argv[3]}: output {actual.shape}, max|mxlite-pytorch|/max|pytorch| = {error:.2e} "
      f"({'ok' if ok else 'FAIL'}: limit 1e-4); argmax equal: "
      f"{bool((actual.argmax(1) == expected.argmax(1)).all())}")
sys.exit(0 if ok else 1)
PY
 done
done
exit $status
