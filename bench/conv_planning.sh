#!/usr/bin/env bash
# Local vs global convolution planning on whole networks, CPU inference: ResNet-18,
# ResNet-50, VGG-16 and GoogLeNet (Inception v1) exported from torchvision to ONNX, batch 1 and 16,
# 2 intra-op threads. For each: `mxlite bench --compare-plan` (bind + tune + plan under the local
# plan, time it, then the same under the global plan), then a Markdown table of measured median
# latency next to the planner's prediction for both plans, and the speedup. Run on a quiet machine:
#
#   bench/conv_planning.sh                  # MXLITE_BUILD_DIR=build-dev to use another build
#   bench/conv_planning.sh resnet18:1       # only some model:batch pairs
#
# Models are exported to $build/planning-bench/ when absent (Debian python3-torch and
# python3-torchvision are installed when missing). Tuning and layout-transform timings go to a
# fresh tuning DB in that folder, so the first bind of each model tunes (every layout) and the
# second plan finds everything in the DB.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/onnx_env.sh
mxlite_bench_python_deps

mxlite_bench_binary
out=$(realpath -m "$build_dir/planning-bench")
mkdir -p "$out"
models="resnet18 resnet50 vgg16 googlenet"
for model in $models; do
  [ -f "$out/$model.onnx" ] || (cd bench && /usr/bin/python3 onnx_models.py "$out" "$model" >&2)
done
configs=${*:-"resnet18:1 resnet18:16 resnet50:1 resnet50:16 vgg16:1 vgg16:16 googlenet:1 googlenet:16"}

export MXNET_TUNING_DB_PATH=$out/tuning.sqlite MXNET_LOG_LEVEL=warning
rm -f "$MXNET_TUNING_DB_PATH"*
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, 2 threads, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for config in $configs; do
  model=${config%:*}
  batch=${config#*:}
  # About 2 s of timed passes per plan on this machine; at least 5.
  if [ "$batch" -ge 16 ]; then warmup=1 iters=5; else warmup=3 iters=20; fi
  "$mxlite" bench "$out/$model.onnx" --batch "$batch" --threads 2 --warmup "$warmup" \
    --iters "$iters" --compare-plan 2>/dev/null >"$out/$model.$batch.txt"
  echo "$model batch $batch: $(tail -1 "$out/$model.$batch.txt")" >&2
done
/usr/bin/python3 bench/conv_planning_report.py "$out" $configs
echo "# done $(date -u '+%H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
