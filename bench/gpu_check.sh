#!/usr/bin/env bash
# The whole GPU check in one command, for a GPU machine lent without mxlite's Debian dependencies
# or a package registry (see bench/gpu_bundle.sh, run first on the build machine):
#   1. every GoogleTest binary of the CUDA-enabled build (GPU tests included) on that machine;
#   2. ResNet-18 and ResNet-50 exported there (bench/onnx_models.py): `mxlite run --device gpu`
#      checked against PyTorch's output, `mxlite tune --device gpu` twice (cuDNN Find, then the
#      tuning DB), `mxlite bench --device gpu` beside PyTorch with cuDNN autotuning, batch 1/16/64,
#      each in float32 (mxlite's default; PyTorch with TF32 off) and with TF32 convolutions
#      (MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION=1; PyTorch's default), mxlite under the
#      convolution plans none (NCHW as written) and global (NCHW/NHWC planned), and one profiled
#      ResNet-50 run (bench/profile_summary.py); ResNet-50 training steps under both plans;
#   3. examples/train_fashion_mnist --gpu beside PyTorch on the same GPU (bench/fashion_mnist_torch.py);
#   4. (stage `fp16`, not in the default set) ResNet-18 and ResNet-50 with the body in float16
#      (`--dtype float16`): `mxlite run` against PyTorch's float32 output, `mxlite bench` under the
#      plans none and global beside PyTorch's model.half(), batch 1/16/64, and ResNet-50 training
#      steps in float16 under both plans;
#   5. (stage `layers`, not in the default set) the ResNet-50 layer set one convolution at a time:
#      the tuned cuDNN pick and one mxlite pass beside PyTorch's (bench/gpu_conv_layers.py);
#   6. (stage `nccl`) the dist_sync_device KVStore (NCCL bootstrapped through MPI) under mpirun with
#      the Open MPI runtime of the bundle: the data-parallel training check (every rank's weights
#      bit-identical, equal to one process on the combined batch) at 1 rank and at 2 ranks (one GPU:
#      NCCL refuses two ranks on one device, and every rank must report that, not hang), and the
#      Fashion-MNIST example trained through the store;
#   7. (stage `planning`, not in the default set) local vs global convolution planning on
#      ResNet-18, ResNet-50, VGG-16 and GoogLeNet, batch 1 and 16, fp32 and tf32: `mxlite bench
#      --compare-plan --device gpu` (both plans bound, timed pass by pass in turn), tabled by
#      bench/conv_planning_report.py; and ResNet-50 training steps (batch 16) under both plans.
#
#   8. (stage `explain`, not in the default set) ResNet-18 batch 1, fp32 and TF32, under the plans
#      none, local and global, each pass profiled step by step: the planner's prediction beside the
#      measured time node by node (bench/profile_compare.py), for plans that mispredict; each plan's
#      latency also with the convolution fusions off, and PyTorch's beside them;
#   9. (stage `fusion`, not in the default set) ResNet-18 and ResNet-50 batch 1 with the
#      convolution fusions (MXNET_CONV_FUSE_ACTIVATION / _RESIDUAL) on and off, in turn,
#      FUSION_ROUNDS times (default 3);
#
#  10. (stage `graphs`, not in the default set) GRAPH_PARTS in order (default ResNet-18,
#      ResNet-50, training, MobileNet-V2, GoogLeNet; parts that would start after GRAPHS_BUDGET_S
#      seconds are skipped): each model at batch 1, 16, 64 in fp32, TF32 and fp16, `mxlite bench
#      --plan global` with CUDA graphs off and on (MXNET_ENABLE_CUDA_GRAPHS) in turn, and PyTorch
#      eager and CUDA-graphed beside them (bench/torch_gpu_table.py); `training`: ResNet-50
#      training steps at batch 32 and 128, fp32 and float16, beside PyTorch's; then `mxlite tune`
#      again on each model (the tuning DB: nothing left to tune);
#
#  11. (stage `zoo`, not in the default set) the torchvision zoo on the GPU: ZOO_MODELS (default:
#      models that together use every op the zoo's ONNX files hold, each family and 3-D
#      convolution included) exported at opset 17 by this machine's PyTorch, run with `mxlite run
#      --device gpu` and checked against PyTorch's CPU output (bench/onnx_zoo.py --device gpu,
#      ZOO_JOBS at once, started beside the tests stage); then ZOO_BENCH_MODELS in turn while the
#      run is under ZOO_BUDGET_S seconds: `mxlite bench --device gpu --plan global` with CUDA
#      graphs at ZOO_BATCHES (default 1 16) in ZOO_MATHS (default fp32 fp16), and PyTorch
#      (bench/torch_gpu_table.py, eager and CUDA-graphed) beside them;
#
#   bench/gpu_check.sh [STAGE ...]     # stages: tests nccl onnx train (default), fp16, layers,
#                                      # planning, explain, fusion, graphs, zoo
#
# $OUT (default /tmp/gpu_check) gets summary.txt, logs.tar.gz (every log) and the profile summary;
# the tail of the output is the summary. Python is the machine's python3 (PyTorch with CUDA).
set -uo pipefail
cd "$(dirname "$0")/.."
results=${OUT:-/tmp/gpu_check}
out=/tmp/gpu_check_work
rm -rf "$out"
mkdir -p "$out" "$results"
stages=${*:-"tests nccl onnx train"}
summary=$out/summary.txt
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
models=$out/models
# Exports (bench/onnx_models.py) those of the named models that an earlier stage of this run has
# not; a failed export ends the run.
ensure_models() {
  local missing=() model
  for model in "$@"; do [ -f "$models/$model.onnx" ] || missing+=("$model"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  (cd bench && timeout 300 python3 onnx_models.py "$models" "${missing[@]}") >>"$out/export.log" 2>&1 ||
    { note "export of ${missing[*]} failed: $(tail -3 "$out/export.log")"; exit 1; }
}

# --- the bundle and the machine's CUDA libraries ---------------------------------------------
tar -xJf .gpu/bundle.tar.xz -C .
# The bundle's Open MPI (mpirun, and orted for an MPI singleton), relocated to a folder of its
# own: the machine may have another Open MPI's plugins where Debian puts them.
if [ -f .gpu/openmpi.tar.xz ]; then
  mpi_root=/tmp/mxlite_openmpi
  rm -rf "$mpi_root" && mkdir -p "$mpi_root" && tar -xJf .gpu/openmpi.tar.xz -C "$mpi_root"
  ln -sf orterun "$mpi_root/usr/bin/mpirun"  # Debian's mpirun is an alternatives link
  export OPAL_PREFIX=$mpi_root/usr
  export PATH=$mpi_root/usr/bin:$PATH
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Tests find their fixtures under the source path compiled in (MXLITE_SOURCE_DIR).
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
library_path=$PWD/lib
for dir in /usr/local/cuda/lib64 /usr/local/cuda/lib \
           $(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null); do
  [ -d "$dir" ] || continue
  if [ -d "$dir/nvidia" ]; then
    for lib in "$dir"/nvidia/*/lib; do library_path=$library_path:$lib; done
  else
    library_path=$library_path:$dir
  fi
done
export LD_LIBRARY_PATH=$library_path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | sed 's/^/gpu: /' | tee -a "$summary"
missing=$(ldd build/tests/ops/ops_test build/bin/mxlite | grep "not found" | sort -u)
[ -z "$missing" ] || { note "missing libraries: $missing"; exit 1; }
ldd build/bin/mxlite | grep -E "cudnn|cublas\.|cudart|nccl" | sed 's/^\s*/linked: /' | tee -a "$summary"
export MXNET_HOME=$out/mxnet_home MXNET_TUNING_REPORT=off

# --- 11a. the zoo's correctness on the GPU, beside the tests (CPU work: exports, references) ------
zoo_check_pid=
if [[ " $stages " == *" zoo "* ]]; then
  zoo_models=${ZOO_MODELS-"alexnet convnext_tiny densenet121 efficientnet_b0 efficientnet_v2_s
    googlenet inception_v3 maxvit_t mnasnet0_5 mobilenet_v2 mobilenet_v3_large regnet_y_400mf
    resnet18 resnext50_32x4d shufflenet_v2_x1_0 squeezenet1_1 swin_t swin_v2_t vgg11_bn vit_b_16
    fcn_resnet50 deeplabv3_mobilenet_v3_large lraspp_mobilenet_v3_large r3d_18 mc3_18
    r2plus1d_18 s3d mvit_v1_b"}
  if [ -n "${zoo_models// /}" ]; then  # ZOO_MODELS= (empty) checks none
    # shellcheck disable=SC2086  # the list is words
    timeout "${ZOO_CHECK_S:-300}" python3 bench/onnx_zoo.py "$out/zoo" --device gpu --opsets 17 \
      --jobs "${ZOO_JOBS:-8}" --models $zoo_models >"$out/zoo-check.log" 2>&1 &
    zoo_check_pid=$!
  fi
fi

# --- 1. tests ------------------------------------------------------------------------------------
if [[ " $stages " == *" tests "* ]]; then
  pids=()
  for binary in build/tests/*/*_test; do
    name=$(basename "$binary")
    # ONNX conformance reads Debian's libonnx-testdata, absent here; MPI tests need mpirun.
    # GPU_TEST_FILTER (a GoogleTest filter) narrows every binary to the tests named. The plan
    # check off, as CTest runs them (tests/CMakeLists.txt): tests assert on the plans they bind.
    (MXNET_HOME=$out/home_$name MXNET_CONV_PLAN_GUARD=0 timeout 240 "$binary" --gtest_brief=1 \
       --gtest_filter="${GPU_TEST_FILTER:--OnnxConformance*}" >"$out/$name.log" 2>&1
     echo "exit $?" >>"$out/$name.log") &
    pids+=($!)
  done
  wait "${pids[@]}"
  for log in "$out"/*_test.log; do
    name=$(basename "$log" .log)
    passed=$(grep -oE "\[  PASSED  \] [0-9]+" "$log" | grep -oE "[0-9]+$")
    skipped=$(grep -oE "\[  SKIPPED \] [0-9]+ test" "$log" | grep -oE "[0-9]+" | head -1)
    note "tests $name: passed ${passed:-?}, skipped ${skipped:-0}, $(tail -1 "$log")"
    grep -E "^\[  FAILED  \] [A-Za-z]" "$log" | sed 's/, where GetParam.*//' | sort -u | head -20 |
      sed 's/^/    /' | tee -a "$summary"
    # What each failure said (source paths dropped), so the summary alone says what broke.
    grep -A4 ": Failure$" "$log" | sed 's|^[^ ]*/||' | cut -c1-240 | head -40 | sed 's/^/      /' |
      tee -a "$summary"
  done
  grep -h -B1 -A3 "Skipped\|SKIPPED" "$out"/*_test.log | grep -iE "gpu|cuda|skip" | sort -u | head -10
fi

# --- 6. dist_sync_device: NCCL between the ranks' GPUs --------------------------------------------
if [[ " $stages " == *" nccl "* ]]; then
  mpirun=(mpirun --oversubscribe -x LD_LIBRARY_PATH -x MXNET_HOME -x MXNET_TUNING_REPORT -x NCCL_DEBUG
          -x OPAL_PREFIX)
  export NCCL_DEBUG=WARN MXNET_KVSTORE_TIMEOUT=30
  note "mpirun: $(mpirun --version 2>&1 | head -1)"
  for ranks in 1 2; do
    log=$out/nccl-train-np$ranks.log
    timeout 120 "${mpirun[@]}" -x MXNET_KVSTORE_TIMEOUT -np $ranks \
      build/tests/scheduler/kvstore_dist_check train_device "$out/nccl_np$ranks" >"$log" 2>&1
    note "kvstore_dist_check train_device -np $ranks (exit $?): $(grep -E 'rank|bit-identical|NCCL|rror' "$log" | sort -u | head -8 | tr '\n' ' ')"
  done
  log=$out/nccl-fashion-np1.log
  timeout 200 "${mpirun[@]}" -np 1 build/bin/train_fashion_mnist --gpu --kvstore dist_sync_device \
    --epochs 1 --data-dir .gpu/fashion-mnist --checkpoint "$out/fashion_nccl.mxckpt" >"$log" 2>&1
  note "train mxlite --gpu --kvstore dist_sync_device -np 1 (exit $?): $(grep -aoE 'epoch 1 done[^;]*;' "$log" | tail -1) $(grep -E '^epoch 1:|rror' "$log" | head -3)"
fi

# --- 2. ONNX networks on the GPU -----------------------------------------------------------------
if [[ " $stages " == *" onnx "* ]]; then
  ensure_models resnet18 resnet50
  for model in resnet18 resnet50; do
    for math in fp32 tf32; do
      conversion=0
      [ $math = tf32 ] && conversion=1
      rm -rf "$out/$model-run-$math"
      MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION=$conversion timeout 120 build/bin/mxlite run \
        "$models/$model.onnx" --device gpu --input "input=$models/${model}_input.pb" \
        --output-dir "$out/$model-run-$math" >"$out/$model-run-$math.log" 2>&1
      # float32 arithmetic: ~1e-6; TF32 (MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION=1): ~1e-3.
      (cd bench && python3 output_error.py "$out/$model-run-$math/output_0.pb" \
         "$models/${model}_expected.pb" "run $model $math --device gpu") 2>&1 | tee -a "$summary"
    done
    for pass in first second; do
      start=$(date +%s%N)
      timeout 240 build/bin/mxlite tune "$models/$model.onnx" --device gpu --batch 16 --verbose \
        >"$out/$model-tune-$pass.log" 2>&1
      status=$?
      note "tune $model --device gpu batch 16 ($pass, exit $status, $(( ($(date +%s%N) - start) / 1000000 )) ms): $(tail -2 "$out/$model-tune-$pass.log" | tr '\n' ' ')"
    done
    for batch in 1 16 64; do
      for math in fp32 tf32; do
        conversion=0; tf32=off
        [ $math = tf32 ] && { conversion=1; tf32=on; }
        log=$out/$model-bench-b$batch-$math
        for plan in none global; do
          MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION=$conversion timeout 120 build/bin/mxlite bench \
            "$models/$model.onnx" --device gpu --batch $batch --warmup 10 --iters 100 --plan $plan \
            >"$log-$plan.log" 2>&1
          note "bench $model b$batch $math mxlite plan $plan: $(grep -E 'p50|throughput|plan:' "$log-$plan.log" | tr '\n' ' ')"
        done
        (cd bench && timeout 120 python3 onnx_peer.py pytorch "$model" --onnx "$models/$model.onnx" \
          --device cuda --tf32 $tf32 --batch $batch --warmup 10 --iters 100) >"$log-torch.log" 2>&1
        note "bench $model b$batch $math pytorch: $(grep -E 'p50|throughput' "$log-torch.log" | tr '\n' ' ')"
      done
    done
  done
  # Training steps (forward + backward) of ResNet-50, batch 32, under both plans.
  for plan in none global; do
    log=$out/resnet50-train-b32-$plan.log
    timeout 150 build/bin/mxlite bench "$models/resnet50.onnx" --device gpu --batch 32 --training \
      --warmup 5 --iters 30 --plan $plan >"$log" 2>&1
    note "bench resnet50 training b32 fp32 mxlite plan $plan: $(grep -E 'p50|plan:' "$log" | tr '\n' ' ')"
  done
  # How much of ResNet-50 batch 16 is the engine: one worker stream, no bulking, the naive engine.
  for variant in MXNET_GPU_WORKER_NTHREADS=1 MXNET_EXEC_BULK_EXEC_INFERENCE=0 MXNET_ENGINE_TYPE=NaiveEngine; do
    log=$out/resnet50-bench-b16-${variant%%=*}.log
    env "$variant" timeout 120 build/bin/mxlite bench "$models/resnet50.onnx" --device gpu --batch 16 \
      --warmup 10 --iters 100 >"$log" 2>&1
    note "bench resnet50 b16 fp32 mxlite $variant: $(grep -E 'p50|throughput' "$log" | tr '\n' ' ')"
  done
  # Where the time goes: one profiled ResNet-50 batch-16 run (operator events, executor ops).
  (cd "$out" && MXNET_PROFILER_AUTOSTART=1 timeout 120 "$OLDPWD/build/bin/mxlite" bench \
     "$models/resnet50.onnx" --device gpu --batch 16 --warmup 0 --iters 10 >resnet50-profile.log 2>&1)
  python3 bench/profile_summary.py "$out/profile.json" >"$results/profile_resnet50_b16.txt" 2>&1
  head -40 "$results/profile_resnet50_b16.txt"
fi

# --- 4. float16 bodies ---------------------------------------------------------------------------
if [[ " $stages " == *" fp16 "* ]]; then
  ensure_models resnet18 resnet50
  for model in resnet18 resnet50; do
    rm -rf "$out/$model-run-fp16"
    timeout 120 build/bin/mxlite run "$models/$model.onnx" --device gpu --dtype float16 \
      --input "input=$models/${model}_input.pb" --output-dir "$out/$model-run-fp16" \
      >"$out/$model-run-fp16.log" 2>&1
    # float16 keeps ~3 significant digits: expect ~1e-3 to 1e-2 of the largest logit.
    (cd bench && python3 output_error.py "$out/$model-run-fp16/output_0.pb" \
       "$models/${model}_expected.pb" "run $model fp16 --device gpu") 2>&1 | tee -a "$summary"
    for batch in 1 16 64; do
      log=$out/$model-bench-b$batch-fp16
      for plan in none global; do
        timeout 120 build/bin/mxlite bench "$models/$model.onnx" --device gpu --dtype float16 \
          --batch $batch --warmup 10 --iters 100 --plan $plan >"$log-$plan.log" 2>&1
        note "bench $model b$batch fp16 mxlite plan $plan: $(grep -E 'p50|throughput|plan:' "$log-$plan.log" | tr '\n' ' ')"
      done
      (cd bench && timeout 120 python3 onnx_peer.py pytorch "$model" --onnx "$models/$model.onnx" \
        --device cuda --half --batch $batch --warmup 10 --iters 100) >"$log-torch.log" 2>&1
      note "bench $model b$batch fp16 pytorch: $(grep -E 'p50|throughput' "$log-torch.log" | tr '\n' ' ')"
    done
  done
  for plan in none global; do
    log=$out/resnet50-train-b32-fp16-$plan.log
    timeout 150 build/bin/mxlite bench "$models/resnet50.onnx" --device gpu --batch 32 --training \
      --dtype float16 --warmup 5 --iters 30 --plan $plan >"$log" 2>&1
    note "bench resnet50 training b32 fp16 mxlite plan $plan: $(grep -E 'p50|plan:' "$log" | tr '\n' ' ')"
  done
fi

# --- 5. the ResNet-50 layer set, one convolution at a time ----------------------------------------
if [[ " $stages " == *" layers "* ]]; then
  layers=$out/layers
  (cd bench && timeout 120 python3 gpu_conv_layers.py export "$layers") >"$out/layers-export.log" 2>&1 ||
    note "layer export failed: $(tail -3 "$out/layers-export.log")"
  for name in $(cat "$layers/layers.txt" 2>/dev/null); do
    for batch in 1 16 64; do
      pick=$(timeout 60 build/bin/mxlite tune "$layers/$name.onnx" --device gpu --batch $batch \
               --plan none 2>/dev/null | grep -m1 -oE " forward: [^,]*" | sed 's/ forward: //')
      mx=$(timeout 60 build/bin/mxlite bench "$layers/$name.onnx" --device gpu --batch $batch \
             --warmup 10 --iters 100 --plan none 2>&1 | grep -oE "p50: [0-9.]+" | grep -oE "[0-9.]+$")
      pt=$(cd bench && timeout 60 python3 gpu_conv_layers.py torch "$name" $batch --tf32 off 2>&1 |
             grep -oE "p50: [0-9.]+" | grep -oE "[0-9.]+$")
      note "layer $name b$batch fp32: mxlite pass ${mx:-?} ms (pick $pick), pytorch pass ${pt:-?} ms"
    done
  done
fi

# --- 7. local vs global planning on the GPU -------------------------------------------------------
if [[ " $stages " == *" planning "* ]]; then
  ensure_models resnet18 resnet50 vgg16 googlenet
  # PLANNING_CONFIGS, PLANNING_MATHS and PLANNING_ROUNDS (repeats, each its own table) narrow or
  # repeat the comparison.
  configs=${PLANNING_CONFIGS:-"resnet18:1 resnet18:16 resnet50:1 resnet50:16 vgg16:1 vgg16:16 googlenet:1 googlenet:16"}
  for round in $(seq "${PLANNING_ROUNDS:-1}"); do
    for math in ${PLANNING_MATHS:-fp32 tf32}; do
      conversion=0
      [ $math = tf32 ] && conversion=1
      dir=$out/planning-$math-round$round
      mkdir -p "$dir"
      for config in $configs; do
        model=${config%:*} batch=${config#*:}
        iters=200
        [ "$batch" -ge 16 ] && iters=100
        MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION=$conversion timeout 150 build/bin/mxlite bench \
          "$models/$model.onnx" --device gpu --batch "$batch" --warmup 10 --iters $iters \
          --compare-plan >"$dir/$model.$batch.txt" 2>&1
      done
      note "planning $math round $round (mxlite bench --compare-plan --device gpu, p50 of alternating passes):"
      python3 bench/conv_planning_report.py "$dir" $configs | tee -a "$summary"
    done
  done
  if [ "${PLANNING_ROUNDS:-1}" -gt 1 ]; then
    for math in ${PLANNING_MATHS:-fp32 tf32}; do
      note "planning $math, the rounds together (median speedup of global over local):"
      python3 bench/conv_planning_report.py --rounds \
        "$(ls -d "$out"/planning-$math-round* | paste -sd,)" $configs | tee -a "$summary"
    done
  fi
  if [ -z "${PLANNING_CONFIGS:-}" ]; then  # a narrowed run skips the training comparison
    log=$out/planning-resnet50-train-b16.txt
    timeout 200 build/bin/mxlite bench "$models/resnet50.onnx" --device gpu --batch 16 --training \
      --warmup 5 --iters 40 --compare-plan >"$log" 2>&1
    note "planning resnet50 training b16 fp32: $(grep -E '^(local|global|speedup)' "$log" | tr '\n' ' ')"
  fi
fi

# --- 8. predictions against profiled passes, node by node ---------------------------------------
if [[ " $stages " == *" explain "* ]]; then
  ensure_models resnet18
  for math in ${EXPLAIN_MATHS:-tf32 fp32}; do
    conversion=0
    [ $math = tf32 ] && conversion=1
    for plan in none local global; do
      dir=$out/explain-$math-$plan
      mkdir -p "$dir"
      # Unprofiled first (the plan's real latency), then profiled (per-step synchronised).
      MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION=$conversion timeout 120 build/bin/mxlite bench \
        "$models/resnet18.onnx" --device gpu --batch 1 --warmup 10 --iters 200 --plan $plan \
        >"$dir/latency.log" 2>&1
      (cd "$dir" && MXNET_TUNING_REPORT=layers MXNET_PROFILER_AUTOSTART=1 \
         MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION=$conversion timeout 120 \
         "$OLDPWD/build/bin/mxlite" bench "$models/resnet18.onnx" --device gpu --batch 1 \
         --warmup 0 --iters 50 --plan $plan >report.log 2>&1)
      note "explain resnet18 b1 $math plan $plan: $(grep -E 'p50|plan:' "$dir/latency.log" | tr '\n' ' ')"
      # The same plan with the convolution fusions off (relu and residual additions as steps).
      MXNET_CONV_FUSE_ACTIVATION=0 MXNET_CONV_FUSE_RESIDUAL=0 \
        MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION=$conversion timeout 120 build/bin/mxlite bench \
        "$models/resnet18.onnx" --device gpu --batch 1 --warmup 10 --iters 200 --plan $plan \
        >"$dir/unfused.log" 2>&1
      note "explain resnet18 b1 $math plan $plan, fusions off: $(grep -E 'p50' "$dir/unfused.log")"
    done
    tf32=off
    [ $math = tf32 ] && tf32=on
    (cd bench && timeout 120 python3 onnx_peer.py pytorch resnet18 --onnx "$models/resnet18.onnx" \
      --device cuda --tf32 $tf32 --batch 1 --warmup 10 --iters 200) >"$out/explain-$math-torch.log" 2>&1
    note "explain resnet18 b1 $math pytorch: $(grep -E 'p50' "$out/explain-$math-torch.log")"
    python3 bench/profile_compare.py none="$out/explain-$math-none" local="$out/explain-$math-local" \
      global="$out/explain-$math-global" | tee -a "$summary"
  done
fi

# --- 9. the convolution fusions on and off, in turn ----------------------------------------------
if [[ " $stages " == *" fusion "* ]]; then
  ensure_models resnet18 resnet50
  for model in resnet18 resnet50; do
    for round in $(seq "${FUSION_ROUNDS:-3}"); do
      for fuse in 1 0; do
        p50=$(MXNET_CONV_FUSE_ACTIVATION=$fuse MXNET_CONV_FUSE_RESIDUAL=$fuse timeout 120 \
                build/bin/mxlite bench "$models/$model.onnx" --device gpu --batch 1 --warmup 20 \
                --iters 300 2>&1 | grep -oE "p50: [0-9.]+ ms")
        note "fusion $model b1 fp32 round $round fusions $fuse: $p50"
      done
    done
  done
fi

# --- 10. CUDA graphs: the inference table beside PyTorch ------------------------------------------
# GRAPH_MODELS x batch 1, 16, 64 x fp32 / tf32 / fp16: `mxlite bench --plan global` with
# MXNET_ENABLE_CUDA_GRAPHS=0 and =1 in turn, then PyTorch (bench/torch_gpu_table.py: eager with
# cudnn.benchmark, and the same pass captured as a CUDA graph) in one process per model.
# One model's rows: mxlite with graphs off and on in turn, then PyTorch in one process.
graphs_inference() {
  local model=$1 math conversion dtype batch iters graphs log
  ensure_models "$model"
  for math in fp32 tf32 fp16; do
    conversion=0; dtype=float32
    [ $math = tf32 ] && conversion=1
    [ $math = fp16 ] && dtype=float16
    for batch in 1 16 64; do
      iters=100
      [ $batch -ge 16 ] && iters=60
      [ $batch -ge 64 ] && iters=30
      for graphs in 0 1; do
        log=$out/graphs-$model-b$batch-$math-g$graphs.log
        MXNET_ENABLE_CUDA_GRAPHS=$graphs MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION=$conversion \
          timeout 120 build/bin/mxlite bench "$models/$model.onnx" --device gpu --batch $batch \
          --dtype $dtype --warmup 10 --iters $iters --plan global >"$log" 2>&1
        note "graphs $model b$batch $math mxlite graphs=$graphs: $(grep -oE 'p50: [0-9.]+ ms' "$log") $(grep -E '^CUDA graphs' "$log")"
        grep -m2 "without a CUDA graph" "$log" | sed 's/^/    /' | tee -a "$summary"
      done
    done
  done
  (cd bench && timeout 200 python3 torch_gpu_table.py "$model" --batches 1 16 64 \
     --maths fp32 tf32 fp16 --graphs) >"$out/graphs-$model-torch.log" 2>&1
  sed 's/^/graphs /' "$out/graphs-$model-torch.log" | grep -E "pytorch|Error" | tee -a "$summary"
}

# ResNet-50 training steps (forward + backward, no update), batch 32 and 128, fp32 and the float16
# body, beside PyTorch's (model.half() for fp16: the same arithmetic, not autocast).
graphs_training() {
  local math dtype batch log
  ensure_models resnet50
  for math in fp32 fp16; do
    dtype=float32
    [ $math = fp16 ] && dtype=float16
    for batch in 32 128; do
      log=$out/graphs-resnet50-train-b$batch-$math.log
      timeout 150 build/bin/mxlite bench "$models/resnet50.onnx" --device gpu --batch $batch \
        --training --dtype $dtype --warmup 5 --iters 20 --plan global >"$log" 2>&1
      note "graphs resnet50 training b$batch $math mxlite: $(grep -oE 'p50: [0-9.]+ ms' "$log")"
    done
  done
  (cd bench && timeout 150 python3 torch_gpu_table.py resnet50 --training --batches 32 128 \
     --maths fp32 fp16 --warmup 5 --iters 20) >"$out/graphs-resnet50-train-torch.log" 2>&1
  sed 's/^/graphs /' "$out/graphs-resnet50-train-torch.log" | grep -E "pytorch|Error" | tee -a "$summary"
}

if [[ " $stages " == *" graphs "* ]]; then
  # Most important first; a part that would start after GRAPHS_BUDGET_S seconds of this script is
  # skipped (and said so), so that a lease's fixed time ends with a summary.
  budget=${GRAPHS_BUDGET_S:-100000}
  parts=${GRAPH_PARTS:-"resnet18 resnet50 training mobilenet_v2 googlenet"}
  tuned=()
  for part in $parts; do
    if [ "$SECONDS" -ge "$budget" ]; then
      note "graphs $part: skipped (${SECONDS} s into the run, budget ${budget} s)"
      continue
    fi
    if [ "$part" = training ]; then graphs_training; else graphs_inference "$part"; tuned+=("$part"); fi
  done
  # The tuning DB on this card: the binds above stored every problem, so these tune nothing.
  for model in "${tuned[@]}"; do
    timeout 60 build/bin/mxlite tune "$models/$model.onnx" --device gpu --batch 16 \
      >"$out/graphs-$model-tune-again.log" 2>&1
    note "graphs tune $model --device gpu batch 16 again (exit $?): $(tail -1 "$out/graphs-$model-tune-again.log")"
  done
fi

# --- 11b. the zoo on the GPU: its check (started above), then its speed beside PyTorch ----------
zoo_bench() {
  local model=$1 math dtype conversion batch iters log
  # In a subshell: a model that does not export here is a line of the summary, not the run's end.
  (ensure_models "$model") || return 0
  for math in ${ZOO_MATHS:-fp32 fp16}; do
    conversion=0; dtype=float32
    [ "$math" = tf32 ] && conversion=1
    [ "$math" = fp16 ] && dtype=float16
    for batch in ${ZOO_BATCHES:-1 16}; do
      iters=50
      [ "$batch" -ge 16 ] && iters=30
      log=$out/zoo-$model-b$batch-$math.log
      MXNET_ENABLE_CUDA_GRAPHS=1 MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION=$conversion \
        timeout 90 build/bin/mxlite bench "$models/$model.onnx" --device gpu --batch "$batch" \
        --dtype $dtype --warmup 10 --iters $iters --plan global >"$log" 2>&1
      note "zoo $model b$batch $math mxlite (exit $?): $(grep -oE 'p50: [0-9.]+ ms' "$log") $(grep -iE '^CUDA graphs|error' "$log" | head -2 | tr '\n' ' ')"
      grep -m2 "without a CUDA graph" "$log" | sed 's/^/    /' | tee -a "$summary"
    done
  done
  # shellcheck disable=SC2086
  (cd bench && timeout 120 python3 torch_gpu_table.py "$model" --batches ${ZOO_BATCHES:-1 16} \
     --maths ${ZOO_MATHS:-fp32 fp16} --warmup 10 --iters 30 --graphs) \
    >"$out/zoo-$model-torch.log" 2>&1
  sed 's/^/zoo /' "$out/zoo-$model-torch.log" | grep -E "pytorch|Error" | tee -a "$summary"
}

if [[ " $stages " == *" zoo "* ]]; then
  if [ -n "$zoo_check_pid" ]; then
    wait "$zoo_check_pid"
    note "zoo check (exit $?, opset 17, --device gpu): $(tail -1 "$out/zoo-check.log")"
    grep -E "^\|" "$out/zoo-check.log" | sed 's/^/zoo /' | tee -a "$summary"
  fi
  # Where the time goes: ZOO_PROFILE_MODELS at batch 16 fp32, each pass profiled op by op (graphs
  # off, so that every op is an event), summed by op type into $OUT/profile_zoo_MODEL_b16.txt.
  for model in ${ZOO_PROFILE_MODELS:-}; do
    (ensure_models "$model") || continue
    rm -f "$out/profile.json"
    (cd "$out" && MXNET_PROFILER_AUTOSTART=1 MXNET_ENABLE_CUDA_GRAPHS=0 timeout 90 \
       "$OLDPWD/build/bin/mxlite" bench "$models/$model.onnx" --device gpu --batch 16 --warmup 2 \
       --iters 5 --plan global >"zoo-$model-profile.log" 2>&1)
    python3 bench/profile_summary.py "$out/profile.json" >"$results/profile_zoo_${model}_b16.txt" 2>&1
    note "zoo profile $model b16 fp32: $(head -12 "$results/profile_zoo_${model}_b16.txt" | tr '\n' ';' | tr -s ' ')"
  done
  budget=${ZOO_BUDGET_S:-100000}
  bench_models=${ZOO_BENCH_MODELS:-"efficientnet_b0 convnext_tiny vit_b_16 swin_t densenet121
    regnet_y_400mf mobilenet_v3_small inception_v3 shufflenet_v2_x1_0 resnext50_32x4d
    efficientnet_v2_s deeplabv3_mobilenet_v3_large"}
  for model in $bench_models; do
    if [ "$SECONDS" -ge "$budget" ]; then
      note "zoo bench $model: skipped (${SECONDS} s into the run, budget ${budget} s)"
      continue
    fi
    zoo_bench "$model"
  done
fi

# --- 3. Fashion-MNIST training on the GPU --------------------------------------------------------
if [[ " $stages " == *" train "* ]]; then
  timeout 200 build/bin/train_fashion_mnist --gpu --epochs 1 --data-dir .gpu/fashion-mnist \
    --checkpoint "$out/fashion.mxckpt" >"$out/train_mxlite.log" 2>&1
  note "train mxlite --gpu (exit $?): $(grep -aoE 'epoch 1 done[^;]*;' "$out/train_mxlite.log" | tail -1) $(grep -E '^epoch 1:' "$out/train_mxlite.log")"
  timeout 200 build/bin/train_fashion_mnist --gpu --epochs 1 --batchnorm --data-dir .gpu/fashion-mnist \
    --checkpoint "$out/fashion_bn.mxckpt" >"$out/train_mxlite_bn.log" 2>&1
  note "train mxlite --gpu --batchnorm (exit $?): $(grep -aoE 'epoch 1 done[^;]*;' "$out/train_mxlite_bn.log" | tail -1) $(grep -E '^epoch 1:' "$out/train_mxlite_bn.log")"
  timeout 120 python3 bench/fashion_mnist_torch.py --device cuda --batches 900 \
    --data-dir .gpu/fashion-mnist >"$out/train_torch.log" 2>&1
  note "train $(tail -1 "$out/train_torch.log")"
fi

cp "$summary" "$results/"
tar -czf "$results/logs.tar.gz" -C "$out" --exclude='*.mxckpt' --exclude=models --exclude='*home*' \
  --exclude=zoo \
  --exclude=profile.json .
echo "===== summary ====="
cat "$summary"
