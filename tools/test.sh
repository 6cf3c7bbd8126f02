#!/usr/bin/env bash
# Installs what is missing, builds mxlite (CUDA code included when the toolkit is present) and runs
# every test with CTest (the Python package's pytest suite included). GPU tests skip with a
# message when no GPU is visible. Then the concurrency-heavy parts (the memory and engine modules,
# the intra-op pool) are built again under ThreadSanitizer and their tests run there.
#
#   tools/test.sh                      # build/ in Release, all tests, then the TSAN stage
#   MXLITE_SKIP_TSAN=1 tools/test.sh   # without the TSAN stage
#   MXLITE_SKIP_FUZZ=1 tools/test.sh   # without the libFuzzer smoke test of the ONNX loader
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/install_deps.sh
mxlite_install_deps

build_dir=${MXLITE_BUILD_DIR:-build}
jobs=${MXLITE_JOBS:-2}
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build_dir" -j "$jobs"
tools/fetch_onnx_node_tests.sh "$build_dir"  # ONNX's node tests of opsets 18-21 (PyPI's onnx)
ctest --test-dir "$build_dir" --output-on-failure -j "$jobs"

# libFuzzer smoke test: the ONNX loader on mutated models for 60 s (clang, ASan + UBSan). Only the
# library and the fuzz target are built.
if [ "${MXLITE_SKIP_FUZZ:-0}" != "1" ]; then
  fuzz_dir="$build_dir-fuzz"
  cmake -S . -B "$fuzz_dir" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DMXLITE_BUILD_FUZZ=ON -DMXLITE_USE_CUDA=OFF -DMXLITE_BUILD_TESTS=OFF \
    -DMXLITE_BUILD_BENCH=OFF >/dev/null
  cmake --build "$fuzz_dir" -j "$jobs" --target onnx_import_fuzzer
  tests/fuzz/seed_corpus.sh "$fuzz_dir/onnx_corpus"
  echo "[mxlite] libFuzzer: onnx_import_fuzzer, 60 s"
  "$fuzz_dir/bin/onnx_import_fuzzer" -max_total_time=60 -timeout=10 -rss_limit_mb=4096 \
    -print_final_stats=1 "$fuzz_dir/onnx_corpus"
fi

# ThreadSanitizer: the pools, the engine and the intra-op pool are shared by many threads.
if [ "${MXLITE_SKIP_TSAN:-0}" != "1" ]; then
  tsan_modules=(memory engine)
  tsan_dir="$build_dir-tsan"
  cmake -S . -B "$tsan_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMXLITE_SANITIZE=thread \
    -DMXLITE_USE_CUDA=OFF -DMXLITE_BUILD_BENCH=OFF >/dev/null
  cmake --build "$tsan_dir" -j "$jobs" --target "${tsan_modules[@]/%/_test}" parallel_test
  for module in "${tsan_modules[@]}"; do
    echo "[mxlite] ThreadSanitizer: ${module}_test"
    TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" "$tsan_dir/tests/$module/${module}_test" \
      --gtest_brief=1
  done
  echo "[mxlite] ThreadSanitizer: parallel_test (the intra-op pool, 20 repeats)"
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" "$tsan_dir/tests/ops/parallel_test" \
    --gtest_brief=1 --gtest_repeat=20
fi
