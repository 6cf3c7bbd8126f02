// The catalog: every setting mxlite reads, declared once. Names, values and defaults are MXNet's
// (seed 001, the newer MXNet environment-variable page); settings new in mxlite use the same MXNET_
// style. docs/settings.md's variable table is generated from this list (tests/core/readme_test.cc).
#include "core/settings.h"

namespace mxlite {

namespace {

SettingSpec Bool(std::string name, std::string default_value, std::string doc) {
  return {std::move(name), SettingType::kBool, std::move(default_value), std::move(doc), 0, 1, {}};
}

SettingSpec Int(std::string name, int64_t default_value, int64_t min, int64_t max,
                std::string doc) {
  return {std::move(name), SettingType::kInt, std::to_string(default_value), std::move(doc),
          min, max, {}};
}

SettingSpec Enum(std::string name, std::string default_value, std::vector<SettingChoice> choices,
                 std::string doc) {
  return {std::move(name), SettingType::kEnum, std::move(default_value), std::move(doc),
          INT64_MIN, INT64_MAX, std::move(choices)};
}

SettingSpec Path(std::string name, std::string default_value, std::string doc) {
  return {std::move(name), SettingType::kPath, std::move(default_value), std::move(doc),
          INT64_MIN, INT64_MAX, {}};
}

constexpr int64_t kNoMax = INT64_MAX;

}  // namespace

std::vector<SettingSpec> BuiltinSettingSpecs() {
  return {
      // Engine and threads.
      Enum("MXNET_ENGINE_TYPE", "ThreadedEnginePerDevice",
           {{"ThreadedEnginePerDevice", {}}, {"ThreadedEngine", {}}, {"NaiveEngine", {}}},
           "Execution engine: per-device thread pools, one shared pool, or inline on the caller's "
           "thread (for debugging)."),
      Int("MXNET_CPU_WORKER_NTHREADS", 1, 1, kNoMax,
          "Scheduling threads on the CPU: how many operators may run in parallel."),
      Int("MXNET_CPU_PRIORITY_NTHREADS", 4, 1, kNoMax, "Threads given to prioritised CPU jobs."),
      Int("MXNET_GPU_WORKER_NTHREADS", 2, 1, kNoMax,
          "Worker threads per GPU, each with its own CUDA stream."),
      Int("MXNET_GPU_COPY_NTHREADS", 2, 1, kNoMax,
          "Threads per GPU that run memory copies between devices."),
      Int("MXNET_OMP_MAX_THREADS", 0, 0, kNoMax,
          "Threads one CPU operator (GEMM, convolution) may use; 0 means one per core."),
      Enum("MXNET_CPU_GEMM_KERNEL", "auto",
           {{"auto", {}}, {"avx512", {}}, {"avx2", {}}, {"eigen", {}}},
           "The CPU GEMM's micro-kernel: auto (AVX-512 where this CPU runs a 512-bit FMA at "
           "1.5x or more the work of a 256-bit one, measured at start-up; else AVX2+FMA where "
           "present; else Eigen), or one of them by name; a kernel this CPU cannot run is an "
           "error at first use (new in mxlite)."),
      Int("MXNET_CPU_PARALLEL_COPY_SIZE", 200000, 1, kNoMax,
          "Minimum element count for a CPU copy inside an op (Reshape, Flatten, identity, "
          "Concat) to be split among the intra-op threads."),

      // Executor and memory planning.
      Bool("MXNET_EXEC_ENABLE_INPLACE", "true",
           "Let an op write its output over an input that has no later reader."),
      Int("NNVM_EXEC_MATCH_RANGE", 16, 0, kNoMax,
          "Best-fit range of the memory planner when reusing blocks; 0 disables sharing."),
      Int("MXNET_EXEC_NUM_TEMP", 1, 1, kNoMax, "Temporary workspaces per device."),
      Bool("MXNET_EXEC_BULK_EXEC_INFERENCE", "1",
           "Run the whole inference graph as bulked engine segments."),
      Bool("MXNET_EXEC_BULK_EXEC_TRAIN", "1", "Run training graphs as bulked engine segments."),
      Int("MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN", 15, 0, kNoMax,
          "Most nodes in one bulked segment during training."),
      Bool("MXNET_BACKWARD_DO_MIRROR", "0",
           "Drop cheap activations in forward and recompute them in backward to save memory."),

      // Memory pools.
      Enum("MXNET_GPU_MEM_POOL_TYPE", "Naive", {{"Naive", {}}, {"Round", {}}, {"Unpooled", {}}},
           "GPU memory pool: exact-size buckets, power-of-two rounding, or none."),
      Int("MXNET_GPU_MEM_POOL_RESERVE", 5, 0, 100,
          "Percent of GPU memory kept free for other uses; the pool releases its cache first."),
      Int("MXNET_GPU_MEM_POOL_ROUND_LINEAR_CUTOFF", 24, 20, 34,
          "Round pool: sizes below 2^N round to a power of two, above to a multiple of 2^N."),
      Int("MXNET_GPU_MEM_LARGE_ALLOC_ROUND_SIZE", 2097152, 1, kNoMax,
          "Naive pool: sizes above this round up to a multiple of it (1 disables)."),

      Enum("MXNET_CPU_MEM_POOL_TYPE", "Naive", {{"Naive", {}}, {"Round", {}}, {"Unpooled", {}}},
           "CPU memory pool (same rules as the GPU pool); pooled memory is faulted in once."),
      Int("MXNET_CPU_MEM_POOL_RESERVE", 5, 0, 100,
          "Percent of system memory kept free; the CPU pool releases its cache first."),
      Int("MXNET_CPU_MEM_POOL_ROUND_LINEAR_CUTOFF", 24, 20, 34,
          "CPU Round pool: the cutoff 2^N between power-of-two and linear rounding."),
      Int("MXNET_CPU_MEM_LARGE_ALLOC_ROUND_SIZE", 2097152, 1, kNoMax,
          "CPU Naive pool: sizes above this round up to a multiple of it (2 MiB: huge pages)."),

      // Profiler.
      Bool("MXNET_PROFILER_AUTOSTART", "0",
           "Start the profiler at load and write profile.json (Chrome trace) at exit."),
      Enum("MXNET_PROFILER_MODE", "0", {{"0", {}}, {"1", {}}},
           "0: record the operators the executor runs; 1: also imperative ops and copies."),

      // Convolution tuning and CUDA math.
      Enum("MXNET_CUDNN_AUTOTUNE_DEFAULT", "1",
           {{"0", {"off"}}, {"1", {"limited_workspace"}}, {"2", {"fastest"}}},
           "Default convolution tuning: 0 off (heuristic), 1 time candidates within the "
           "workspace limit, 2 time all candidates."),
      Bool("MXNET_CUDA_ALLOW_TENSOR_CORE", "1", "Allow Tensor Core algorithms in CUDA ops."),
      Bool("MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION", "0",
           "Allow float32 ops to use Tensor Cores through implicit float16 conversion."),
      Bool("MXNET_ENABLE_CUDA_GRAPHS", "0",
           "GPU inference executors capture each pass's work into a CUDA graph and replay it "
           "(one launch instead of a host call per kernel), captured again when a weight or "
           "workspace changes; a pass that cannot be captured runs its steps."),
      Bool("MXNET_ENFORCE_DETERMINISM", "0",
           "Use deterministic algorithms only; an error when none exists."),
      Path("MXNET_TUNING_DB_PATH", "$MXNET_HOME/mxlite/tuning.sqlite",
           "User convolution tuning database (read-write SQLite; folders are created) (new in "
           "mxlite)."),
      Enum("MXNET_TUNING_DB_MODE", "update",
           {{"off", {}}, {"read_only", {}}, {"update", {}}, {"refresh", {}}, {"background", {}}},
           "Tuning database use: off, read_only, update (use hits, store new tunings), refresh "
           "(ignore stored entries, re-tune and overwrite) or background (lookups and stores as "
           "update; a miss runs the heuristic's pick now and is tuned on a background thread for "
           "the next bind) (new in mxlite)."),
      Path("MXNET_TUNING_SYSTEM_DB_PATH", "",
           "Read-only tuning database consulted after the user one; empty: none (new in mxlite)."),
      Enum("MXNET_CONV_PLAN", "global", {{"none", {}}, {"local", {}}, {"global", {}}},
           "How convolutions and pooling choose their layout (NCHW, NHWC, or NCHW16c for CPU "
           "inference with AVX-512) at bind, timed on "
           "the device that runs them: none (as written), local (each layer its own fastest, "
           "transforms where neighbours disagree) or global (least total time, transforms "
           "included) (new in mxlite)."),
      Bool("MXNET_CONV_PLAN_GUARD", "1",
           "Before an inference executor keeps a layout plan that moves layers, it times whole "
           "passes of the planned graph against passes of the graph as written, in turn, and runs "
           "the graph as written when that is more than 3% faster; both times and the decision "
           "are kept in the tuning DB, so a second bind measures nothing. 0 keeps every plan "
           "(new in mxlite)."),
      Bool("MXNET_ONNX_FUSE_FORMULAS", "1",
           "The ONNX importer turns the formulas exporters write out node by node for layer "
           "normalisation (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add) and the "
           "exact GELU (Div, Erf, Add, Mul, Mul) into one LayerNorm or gelu op each; 0 imports "
           "every node as written (new in mxlite)."),
      Bool("MXNET_FUSE_SILU", "1",
           "Executors run x * sigmoid(x) written as two ops (SiLU / swish as exporters write "
           "it) as one silu op, and x * hard_sigmoid(x) (hard swish) as one hard_swish op: one "
           "pass over x instead of two or three; 0 keeps the two ops (new in mxlite)."),
      Bool("MXNET_FUSE_BIAS", "1",
           "Executors fold the addition of a vector along a MatMul's last axis (a Linear layer "
           "as exporters write it: MatMul then Add) into the MatMul: on the CPU the GEMM adds it "
           "as it stores its product (one pass over the output instead of two), on the GPU a "
           "kernel after cuBLAS's (one engine step instead of two); the same bits, training "
           "too. 0 keeps the two ops (new in mxlite)."),
      Bool("MXNET_CONV_FUSE_ACTIVATION", "1",
           "Inference executors fold a relu or clip that alone reads a Convolution's or a "
           "BatchNorm's output into that node (act_min / act_max: on the CPU clamped as the "
           "kernel stores it, "
           "one pass over the output instead of three; on the GPU in one epilogue kernel with "
           "the bias, one engine step instead of two); 0 keeps them separate. Training never "
           "fuses (new in mxlite)."),
      Bool("MXNET_CONV_FUSE_DEPTHWISE", "1",
           "CPU inference executors run a depthwise convolution with the 1x1 convolutions "
           "around it (MobileNet's expansion and projection, NHWC after layout planning) as one "
           "op that walks the rows, so the tensors between them stay in cache instead of going "
           "out to memory and back; 0 runs them one by one. Training never fuses (new in mxlite)."),
      Bool("MXNET_CONV_FUSE_RESIDUAL", "1",
           "Inference executors fold an addition of a Convolution's output and a tensor of its "
           "shape (a residual shortcut) into the convolution, which adds it as it stores its "
           "output (and a relu after it too, with MXNET_CONV_FUSE_ACTIVATION; on the GPU in its "
           "epilogue kernel): one pass over the output instead of two; 0 keeps the addition "
           "separate. Training never fuses (new in mxlite)."),
      Bool("MXNET_FUSE_CONCAT_NORM", "1",
           "CPU inference executors run a BatchNorm of a Concat's output (DenseNet's "
           "normalisation of each join) as one op that normalises every input as it copies it "
           "into the join: one pass over the joined tensor instead of two, the same bits; 0 "
           "runs them one after the other. Training never fuses (new in mxlite)."),
      Bool("MXNET_CONV_TRIM_DEAD_TAPS", "1",
           "Executors cut from each Convolution the kernel taps that read only padding for "
           "the bound shapes (a dilation that reaches past the data, a 3x3 kernel on a 1x1 map): "
           "the weight is sliced to the live taps and the padding shrunk, the same sums without "
           "the products with zero; 0 runs the kernels as written (new in mxlite)."),
      Bool("MXNET_CONV_PREPACK_WEIGHTS", "1",
           "CPU inference executors keep each convolution's weight in the form its kernel "
           "reads (packed for the GEMM, transformed for Winograd, reordered for NCHW16c; more "
           "memory: one more copy of those weights, four for Winograd's), made again only when "
           "the weight is written, and FullyConnected and MatMul keep a constant right-hand "
           "operand packed for the GEMM the same way (packed on the second pass that finds it "
           "unchanged); 0 makes it on every call, as training does (new in mxlite)."),
      Enum("MXNET_TUNING_REPORT", "summary",
           {{"off", {}}, {"summary", {}}, {"layers", {}}, {"verbose", {}}},
           "What binding a network logs about convolution tuning: nothing, a one-line summary, "
           "a line per layer and direction, or every candidate (new in mxlite)."),

      // KVStore (data-parallel training, scheduler/kvstore/).
      Int("MXNET_KVSTORE_REDUCTION_NTHREADS", 4, 1, kNoMax,
          "CPU threads that sum a big array's copies from several devices in one process."),
      Int("MXNET_KVSTORE_BIGARRAY_BOUND", 1000000, 1, kNoMax,
          "Elements from which an array is big: summed with several threads, and in dist_sync "
          "split into allreduces of at most this many; smaller ones are fused into buckets of it."),
      Int("MXNET_KVSTORE_TIMEOUT", 300, 1, kNoMax,
          "Seconds a dist_sync collective may wait for the other ranks before every rank reports "
          "the key, collective and rank and the job is aborted (new in mxlite)."),

      // Files and logging.
      Path("MXNET_HOME", "~/.mxnet",
           "Data folder of mxlite (the user tuning database lives here)."),
      Path("MXNET_LIBRARY_PATH", "",
           "Where the Python package loads libmxlite.so from (a file or a folder)."),
      Enum("MXNET_LOG_LEVEL", "info", {{"debug", {}}, {"info", {}}, {"warning", {}}, {"error", {}}},
           "Lowest level of log lines written to stderr (new in mxlite)."),
  };
}

std::vector<RecognisedUnusedVariable> BuiltinRecognisedUnusedVariables() {
  const std::string no_kvstore = "mxlite's KVStore has no tree reduction or GPU peer-to-peer";
  return {
      {"MXNET_CPU_NNPACK_NTHREADS", "mxlite has no NNPACK; its own CPU algorithms are tuned"},
      {"MXNET_MP_WORKER_NTHREADS", "mxlite has no multiprocess data workers"},
      {"MXNET_MP_OPENCV_NUM_THREADS", "mxlite does not use OpenCV"},
      {"MXNET_GLUON_REPO", "mxlite downloads nothing"},
      {"MXNET_MKLDNN_ENABLED", "mxlite does not use MKL-DNN/oneDNN"},
      {"MXNET_MKLDNN_CACHE_NUM", "mxlite does not use MKL-DNN/oneDNN"},
      {"MXNET_USE_OPERATOR_TUNING", "mxlite has no OpenMP operator tuning"},
      {"MXNET_USE_NUM_CORES_OPERATOR_TUNING", "mxlite has no OpenMP operator tuning"},
      {"MXNET_ENABLE_GPU_P2P", no_kvstore},
      {"MXNET_KVSTORE_USETREE", no_kvstore},
      {"MXNET_KVSTORE_LOGTREE", no_kvstore},
      {"MXNET_KVSTORE_TREE_ARRAY_BOUND", no_kvstore},
      {"MXNET_KVSTORE_TREE_BACKTRACK", no_kvstore},
      {"MXNET_KVSTORE_TREE_LINK_USAGE_PENALTY", no_kvstore},
      {"MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "mxlite has no sparse storage"},
  };
}

}  // namespace mxlite
