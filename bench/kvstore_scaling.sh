#!/usr/bin/env bash
# Data-parallel scaling on this machine: Fashion-MNIST training images/s (examples/
# train_fashion_mnist.cc, --max-batches batches of the global batch 64) in one process and in 2
# dist_sync ranks, then the allreduce bandwidth (bench/kvstore_allreduce.cc). Prints tables.
#
#   bench/kvstore_scaling.sh [build-dir] [batches]     (take the build lock while it runs)
set -euo pipefail
build=${1:-build}
batches=${2:-200}
example="$build/bin/train_fashion_mnist"
mpirun=(mpirun --allow-run-as-root --oversubscribe)
export MXNET_HOME=${MXNET_HOME:-$(mktemp -d)}  # one tuning DB for every run

# Training images/s of one run: the rate on its last progress line (the epoch's closing line
# would count the test-set evaluation too).
images_per_second() {
  "$@" --epochs 1 --max-batches "$batches" --checkpoint "$MXNET_HOME/scaling.mxckpt" </dev/null 2>&1 |
    grep ' batch ' | tail -1 | grep -o '[0-9.]* images/s' | cut -d' ' -f1
}

echo "machine: $(nproc) cores; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
images_per_second "$example" --threads 1 >/dev/null  # warm-up: tunes the convolutions into the DB
one_1=$(images_per_second "$example" --threads 1)
one_2=$(images_per_second "$example" --threads 2)
two_1=$(images_per_second "${mpirun[@]}" -np 2 "$example" --kvstore dist_sync --threads 1)
echo
echo "| Run | Cores | Images/s | Scaling |"
echo "| --- | --- | --- | --- |"
echo "| 1 process, 1 thread | 1 | $one_1 | 1.00 |"
echo "| 1 process, 2 threads | 2 | $one_2 | $(echo "scale=2; $one_2 / $one_1" | bc) |"
echo "| 2 ranks (dist_sync), 1 thread each | 2 | $two_1 | $(echo "scale=2; $two_1 / $one_1" | bc) |"
echo
echo "Scaling efficiency of 2 ranks: $(echo "scale=1; 100 * $two_1 / (2 * $one_1)" | bc)%"
echo
"${mpirun[@]}" -np 2 "$build/bin/kvstore_allreduce" $((4 << 20))
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
