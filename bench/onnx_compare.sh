#!/usr/bin/env bash
# `mxlite bench` beside ONNX Runtime and PyTorch (CPU) on ResNet-18 and MobileNet-V2, batch 1 and 8,
# 1 and 2 threads, side by side in one run; prints a Markdown table of median p50 latencies and
# ratios (see bench/onnx_compare.py for the method). Extra arguments go to onnx_compare.py, e.g.
#
#   bench/onnx_compare.sh                          # everything, 3 rounds
#   bench/onnx_compare.sh --models resnet18 --batches 8 --rounds 5
#
# Needs build/bin/mxlite (MXLITE_BUILD_DIR overrides build). Installs what is missing: Debian
# python3-torch / python3-torchvision, and onnxruntime from PyPI into build/onnx-bench/venv (a
# virtual environment over /usr/bin/python3, so torch and numpy are Debian's). Models are exported
# to build/onnx-bench/ (gitignored) when absent.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/onnx_env.sh
mxlite_bench_python_deps

mxlite_bench_binary
out=$(realpath -m "$build_dir/onnx-bench")
[ -f "$out/models.json" ] || (cd bench && /usr/bin/python3 onnx_models.py "$out")
python=$(mxlite_bench_venv "$out/venv")

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)," \
     "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-(unset)}, onnxruntime $("$python" -c 'import onnxruntime; print(onnxruntime.__version__)')," \
     "torch $(/usr/bin/python3 -c 'import torch; print(torch.__version__)')"
"$python" bench/onnx_compare.py --models-dir "$out" --mxlite "$mxlite" "$@"
echo "# done $(date -u '+%H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
