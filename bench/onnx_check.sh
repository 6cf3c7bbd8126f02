#!/usr/bin/env bash
# mxlite against PyTorch on real networks: exports torchvision models (by default ResNet-18,
# MobileNet-V2, ResNet-50, VGG-16 and GoogLeNet; any key of MODELS in bench/onnx_models.py; random
# weights from a fixed seed) to ONNX, runs each through `mxlite run` on the exported input under
# each convolution plan (MXNET_CONV_PLAN none, local, global), and checks mxlite's output against
# PyTorch's:
#
#   relative error = max |mxlite - pytorch| / max |pytorch|  over all logits, must be <= 1e-4.
#
#   bench/onnx_check.sh                       # models and outputs go to build/onnx-bench/
#   bench/onnx_check.sh resnet18 googlenet    # some models only
#   bench/onnx_check.sh $(cd bench && /usr/bin/python3 -c 'import onnx_models; print(*onnx_models.MODELS)')
#                                             # the whole zoo
#
# Installs python3-torch and python3-torchvision with apt when /usr/bin/python3 lacks them.
# MXLITE_BUILD_DIR (default build) says where bin/mxlite is.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/onnx_env.sh
mxlite_bench_python_deps

mxlite_bench_binary
out=$build_dir/onnx-bench

models=${*:-"resnet18 mobilenet_v2 resnet50 vgg16 googlenet"}
(cd bench && /usr/bin/python3 onnx_models.py "../$out" $models)
status=0
for model in $models; do
 for plan in none local global; do
  rm -rf "$out/$model-run"
  MXNET_CONV_PLAN=$plan "$mxlite" run "$out/$model.onnx" --input "input=$out/${model}_input.pb" \
    --output-dir "$out/$model-run"
  (cd bench && /usr/bin/python3 output_error.py "../$out/$model-run/output_0.pb" \
     "../$out/${model}_expected.pb" "$model plan $plan" --limit 1e-4) || status=1
 done
done
exit $status
