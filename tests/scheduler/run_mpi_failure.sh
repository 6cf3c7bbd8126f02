#!/usr/bin/env bash
# Runs `kvstore_dist_check hang` under mpirun with <ranks> ranks (the last one hangs) and passes
# when every other rank reported the timeout naming the collective, the key, itself and the
# timeout, and the job ended (aborted) well within the test's time limit instead of hanging.
#   run_mpi_failure.sh <mpirun> <ranks> <kvstore_dist_check>
set -uo pipefail
mpirun=$1 ranks=$2 program=$3
output=$(timeout 90 "$mpirun" --allow-run-as-root --oversubscribe -np "$ranks" "$program" hang 2>&1)
status=$?
echo "$output"
if [ "$status" -eq 124 ]; then
  echo "FAIL: the job still ran after 90 s (a rank hangs)"
  exit 1
fi
for ((rank = 0; rank < ranks - 1; ++rank)); do
  expected="allreduce of key 'w' on rank $rank of $ranks did not complete within MXNET_KVSTORE_TIMEOUT=3 s"
  if ! grep -qF "$expected" <<<"$output"; then
    echo "FAIL: rank $rank did not report: $expected"
    exit 1
  fi
done
echo "PASS: every live rank reported the timeout and the job was aborted (mpirun status $status)"
