#!/usr/bin/env bash
# Layout plans across the torchvision zoo: each model's `mxlite bench` p50 latency under
# MXNET_CONV_PLAN none, local and global (global with the plan check at bind, the default), the
# three alternating within each round, with the global plan's prediction and its plan check.
#
#   bench/zoo_plans.sh [--batch N] [--threads T] [--rounds R] [MODEL ...]
#
# Models: keys of MODELS in bench/onnx_models.py (default: all of them), exported to
# build/onnx-bench/ when missing. Each model gets a fresh MXNET_HOME under build/zoo-plans/, whose
# first bind per plan tunes (untimed), so the rounds meet a warm DB. Prints one Markdown table row
# per model: the medians over the rounds, global / none, global / the better of none and local,
# the global plan's predicted time and the plan check's two pass times.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/onnx_env.sh
mxlite_bench_python_deps

batch=1 threads=1 rounds=3
while [ $# -gt 0 ]; do
  case "$1" in
    --batch) batch=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    *) break ;;
  esac
done
mxlite_bench_binary
out=$build_dir/onnx-bench
models=${*:-$(cd bench && /usr/bin/python3 -c 'import onnx_models; print(*onnx_models.MODELS)')}

# One thread runs pinned to the first CPU when taskset is there: a machine's cores can differ (the
# developer box's two vCPUs by up to 1.5x), and the scheduler would otherwise pick per run.
pin=()
if [ "$threads" = 1 ] && command -v taskset >/dev/null; then pin=(taskset -c 0); fi
bench() {  # bench MODEL_FILE HOME PLAN WARMUP ITERS -> p50 ms
  MXNET_HOME=$2 MXNET_CONV_PLAN=$3 "${pin[@]}" "$mxlite" bench "$1" --batch "$batch" \
    --threads "$threads" --warmup "$4" --iters "$5" 2>&1
}

echo "| model | none ms | local ms | global ms | global / none | global / best other | predicted (global) ms | plan check: planned / as written ms |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for model in $models; do
  [ -f "$out/$model.onnx" ] || (cd bench && /usr/bin/python3 onnx_models.py "../$out" "$model" >&2)
  home=$build_dir/zoo-plans/$model
  rm -rf "$home" && mkdir -p "$home"
  global_log=$(mktemp)
  for plan in none local global; do
    bench "$out/$model.onnx" "$home" $plan 1 1 > "$global_log"  # tunes; the last one is global's
  done
  predicted=$(grep -o "predicted [0-9.]* ms" "$global_log" | head -1 | cut -d' ' -f2)
  check=$(grep -o "planned pass [0-9.]* ms, as written [0-9.]* ms" "$global_log" | head -1 |
          awk '{print $3 " / " $7}')
  rm -f "$global_log"
  declare -A times=([none]="" [local]="" [global]="")
  for ((round = 0; round < rounds; ++round)); do
    for plan in none local global; do
      p50=$(bench "$out/$model.onnx" "$home" $plan 3 10 | grep -o "p50: [0-9.]*" | cut -d' ' -f2)
      times[$plan]="${times[$plan]} $p50"
    done
  done
  /usr/bin/python3 - "$model" "${times[none]}" "${times[local]}" "${times[global]}" \
    "${predicted:-?}" "${check:-not run}" <<'EOF'
import statistics, sys
model, none, local, glob, predicted, check = sys.argv[1:]
n, l, g = (statistics.median(float(t) for t in s.split()) for s in (none, local, glob))
print(f"| {model} | {n:.1f} | {l:.1f} | {g:.1f} | {g / n:.2f} | {g / min(n, l):.2f} | {predicted} | {check} |")
EOF
done
