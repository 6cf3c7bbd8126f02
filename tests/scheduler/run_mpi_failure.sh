#!/usr/bin/env bash
# Runs `kvstore_dist_check <mode>` under mpirun with <ranks> ranks, the last of which fails, and
# passes when the job ends well within the test's time limit instead of hanging, and
#   hang: every other rank reported the timeout naming the collective, the key, itself and the
#         timeout (the last rank hangs; the others abort the job);
#   die:  the job failed (the last rank exits mid-training; mpirun ends the job).
#   run_mpi_failure.sh <mpirun> <ranks> <kvstore_dist_check> hang|die
set -uo pipefail
mpirun=$1 ranks=$2 program=$3 mode=$4
output=$(timeout 90 "$mpirun" --allow-run-as-root --oversubscribe -np "$ranks" "$program" "$mode" 2>&1)
status=$?
echo "$output"
if [ "$status" -eq 124 ]; then
  echo "FAIL: the job still ran after 90 s (a rank hangs)"
  exit 1
fi
if [ "$status" -eq 0 ]; then
  echo "FAIL: the job succeeded although rank $((ranks - 1)) failed"
  exit 1
fi
if [ "$mode" = hang ]; then
  for ((rank = 0; rank < ranks - 1; ++rank)); do
    expected="allreduce of key 'w' on rank $rank of $ranks did not complete within MXNET_KVSTORE_TIMEOUT=3 s"
    if ! grep -qF "$expected" <<<"$output"; then
      echo "FAIL: rank $rank did not report: $expected"
      exit 1
    fi
  done
fi
echo "PASS: the job ended with status $status instead of hanging"
