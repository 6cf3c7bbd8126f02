#!/usr/bin/env bash
# A system tuning DB for this machine type, built from the torchvision zoo: every model of
# bench/onnx_models.py (or the MODELs given) tuned and planned at each batch size and thread count
# by `mxlite tune --system-db`, into one file to install on machines with the same CPU and
# library versions (MXNET_TUNING_SYSTEM_DB_PATH). Not checked in: it is specific to the CPU model
# named in its entries, and large.
#
#   bench/system_db.sh [--out FILE] [--batches "1 8"] [--threads "1 2"] [--training] [MODEL ...]
#
# --training tunes each model a second time for training (`mxlite tune --training`: the forward
# pass without prepared weights, backward_data and backward_filter), after the inference tuning.
#
# Default out: build/system-db/<CPU model>.sqlite. An existing file is added to, not replaced.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/onnx_env.sh
mxlite_bench_python_deps

batches="1 8" thread_counts="1 2" out="" training=0
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --batches) batches=$2; shift 2 ;;
    --threads) thread_counts=$2; shift 2 ;;
    --training) training=1; shift ;;
    *) break ;;
  esac
done
mxlite_bench_binary
models=${*:-$(cd bench && /usr/bin/python3 -c 'import onnx_models; print(*onnx_models.MODELS)')}
if [ -z "$out" ]; then
  cpu=$(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//; s/[^A-Za-z0-9.-]\+/_/g')
  out=$build_dir/system-db/${cpu:-cpu}.sqlite
fi
mkdir -p "$(dirname "$out")" "$build_dir/onnx-bench"
files=()
for model in $models; do
  file=$build_dir/onnx-bench/$model.onnx
  [ -f "$file" ] || (cd bench && /usr/bin/python3 onnx_models.py "../$build_dir/onnx-bench" "$model" >&2)
  files+=("$file")
done
for threads in $thread_counts; do
  for batch in $batches; do
    echo "[mxlite] batch $batch, $threads thread(s)" >&2
    "$mxlite" tune --system-db "$out" "${files[@]}" --batch "$batch" --threads "$threads"
    if [ "$training" = 1 ]; then
      echo "[mxlite] batch $batch, $threads thread(s), training" >&2
      "$mxlite" tune --system-db "$out" "${files[@]}" --batch "$batch" --threads "$threads" \
        --training
    fi
  done
done
echo "install: export MXNET_TUNING_SYSTEM_DB_PATH=$(realpath "$out")"
