#!/usr/bin/env bash
# What convolution tuning buys on the CPU, beside PyTorch, in one run:
#   1. per layer and direction of the ResNet-50 layer set: im2col alone, the tuned pick, the
#      heuristic's pick (tuning off), PyTorch's forward (bench/conv_torch.py), 1 and 2 threads;
#   2. whole networks (the Fashion-MNIST demo net, ResNet-18): im2col only, heuristic, tuned;
#   3. startup of a ResNet-18 forward (bind + first forward, a new process each) with a cold DB,
#      a warm DB and tuning off, 3 rounds, medians.
# Prints the Markdown tables of bench/RESULTS.md ("Convolution tuning"). Run on a quiet machine:
#
#   tools/test.sh >/dev/null            # or any Release build with bench/ in build/
#   bench/conv_tuning.sh                # MXLITE_BUILD_DIR=build-dev to use another build
set -euo pipefail
cd "$(dirname "$0")/.."
build=${MXLITE_BUILD_DIR:-build}
bench=$build/bin/conv_tuning_bench
[ -x "$bench" ] || { echo "missing $bench: build the bench target first" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export MXNET_HOME=$work/home MXNET_LOG_LEVEL=warning

echo "load before: $(uptime)"
"$bench" layers --threads 1,2 >"$work/layers.jsonl"
/usr/bin/python3 bench/conv_torch.py --threads 1 2 --json "$work/torch.jsonl" >/dev/null
"$bench" networks --threads 1,2 >"$work/networks.jsonl"
for threads in 1 2; do
  for round in 1 2 3; do
    for plan in cold warm off; do
      MXNET_OMP_MAX_THREADS=$threads "$bench" startup --plan "$plan" --db "$work/startup.sqlite"
    done
  done
done >"$work/startup.jsonl"
echo "load after: $(uptime)"
/usr/bin/python3 bench/conv_tuning_report.py "$work"
