#!/usr/bin/env bash
# Two mxlite binaries side by side: each with a tuning DB of its own (a fresh MXNET_HOME, warmed
# by one untimed run per model and thread count, so both bind with their own picks and plans),
# then `mxlite bench` alternating binary by binary (the order swapped every round) for R rounds,
# batch 1 on 1 and 2 threads. Prints one line per run: round, model, threads, side, p50 ms; then
# the Markdown table of medians and ratios.
#
#   bench/ab_binaries.sh BEFORE/bin/mxlite AFTER/bin/mxlite [ROUNDS] [MODEL ...]
#
# Models: keys of bench/onnx_models.py (default resnet18 mobilenet_v2 googlenet), exported to
# build/onnx-bench/ when missing. Build both binaries alike (e.g. -DCMAKE_BUILD_TYPE=Release
# -DMXLITE_USE_CUDA=OFF --target mxlite_cli in a git worktree of each commit).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { sed -n '2,12p' "$0"; exit 2; }
before=$(realpath "$1") after=$(realpath "$2") rounds=${3:-8}
shift $(($# < 3 ? $# : 3))
models=${*:-resnet18 mobilenet_v2 googlenet}
out=build/onnx-bench
homes=$(mktemp -d)
trap 'rm -rf "$homes"' EXIT
bench() {  # bench SIDE MODEL THREADS WARMUP ITERS
  local binary=$before
  [ "$1" = after ] && binary=$after
  MXNET_HOME=$homes/$1 "$binary" bench "$out/$2.onnx" --batch 1 --threads "$3" --warmup "$4" \
    --iters "$5" 2>&1
}
for model in $models; do
  [ -f "$out/$model.onnx" ] || (cd bench && /usr/bin/python3 onnx_models.py "../$out" "$model" >&2)
  for threads in 1 2; do
    for side in before after; do bench $side "$model" "$threads" 1 1 > /dev/null; done
  done
done
log=$(mktemp)
for ((round = 0; round < rounds; ++round)); do
  order="before after"
  ((round % 2)) && order="after before"
  for threads in 1 2; do
    for model in $models; do
      for side in $order; do
        p50=$(bench $side "$model" "$threads" 20 100 | grep -o "p50: [0-9.]*" | cut -d' ' -f2)
        echo "$round $model $threads $side $p50" | tee -a "$log"
      done
    done
  done
done
/usr/bin/python3 - "$log" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    rnd, model, threads, side, p50 = line.split()
    runs[(model, threads)].setdefault(side, {})[int(rnd)] = float(p50)
print("| model | threads | before, median | after, median | after / before (medians) |"
      " best run before / after | median of per-round ratios |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for (model, threads), sides in runs.items():
    b, a = sides["before"], sides["after"]
    mb, ma = statistics.median(b.values()), statistics.median(a.values())
    ratio = statistics.median(a[r] / b[r] for r in b)
    print(f"| {model} | {threads} | {mb:.2f} | {ma:.2f} | {ma / mb:.3f} |"
          f" {min(b.values()):.2f} / {min(a.values()):.2f} | {ratio:.3f} |")
PY
rm -f "$log"
