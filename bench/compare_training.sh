#!/usr/bin/env bash
# One Fashion-MNIST training run of N batches (batch 64), mxlite beside PyTorch, 1 and 2 threads.
#
#   bench/compare_training.sh [batches]      # default 300; needs build/bin/train_fashion_mnist
#
# PyTorch runs twice per thread count: as given, and at its best (jemalloc without decay,
# OPENBLAS_CORETYPE unset, OPENBLAS_NUM_THREADS set) as docs/design.md (Testing and benchmarks) asks. mxlite runs as a user
# runs it. Each line reports images/s; compare them within one run of this script.
set -euo pipefail
cd "$(dirname "$0")/.."
batches=${1:-300}
for threads in 1 2; do
  line=$(build/bin/train_fashion_mnist --epochs 1 --max-batches "$batches" --threads "$threads" \
           --checkpoint /tmp/compare_training.mxckpt 2>&1 | grep "epoch 1 done")
  echo "mxlite threads=$threads batches=$batches ${line#*accuracy*, }"
  OPENBLAS_NUM_THREADS=$threads /usr/bin/python3 bench/fashion_mnist_torch.py \
    --threads "$threads" --batches "$batches" | sed 's/^pytorch/pytorch(as given)/'
  env -u OPENBLAS_CORETYPE OPENBLAS_NUM_THREADS=$threads LD_PRELOAD=libjemalloc.so.2 \
    MALLOC_CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1 \
    /usr/bin/python3 bench/fashion_mnist_torch.py --threads "$threads" --batches "$batches" |
    sed 's/^pytorch/pytorch(best)/'
done
