/* The C API of mxlite: what the Python package (python_stub/mxlite) calls through ctypes, and what
 * any other language can bind to. It is compiled into libmxlite.so.
 *
 * Errors. Every MX... function returns 0 on success and -1 on failure; then MXGetLastError()
 * returns the message (an mxlite::Error's text, e.g. "scheduler/graph/graph.cc:40: Error: unknown
 * op 'Convolutio'; known ops: ..."). No C++ exception crosses this boundary. Output parameters are
 * written only on success.
 *
 * Handles. NDArrayHandle, GraphBuilderHandle, GraphHandle, OnnxModelHandle, ExecutorHandle and
 * OptimizerHandle are opaque pointers created by the functions named ...Create/...Build/...Bind/
 * ...Load/...Get... below and owned by the caller, who frees each exactly once with its ...Free
 * function (freeing NULL is a no-op). Handles are independent: freeing a graph does not invalidate
 * an executor bound from it, and an NDArray handle from an executor stays valid (and shares the
 * executor's memory) after the executor is freed.
 *
 * Returned strings. A `const char*` (or array of them) returned through an output parameter points
 * to storage owned by the library and private to the calling thread; it stays valid until the next
 * MX... call on the same thread. Copy it before calling again. Static strings (dtype names) are
 * marked as such.
 *
 * Symbols. A GraphBuilder hands out symbols as small integers (MXSymbol) that index its own table;
 * they are valid for that builder only and live as long as it does.
 *
 * Contexts are strings: "cpu", "cpu(0)", "gpu(1)", "cpu_pinned(0)". DTypes are NumPy names:
 * "float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8".
 *
 * Thread safety. The settings, version, engine and profiler functions may be called from any
 * thread. One handle must not be used from two threads at once (except reading NDArrays that
 * nothing writes). Work is asynchronous underneath: Forward/Backward/Update return once their ops
 * are pushed to the engine; copying an NDArray to host memory waits for the ops that write it and
 * reports their errors.
 */
#ifndef MXLITE_PYTHON_STUB_C_API_H_
#define MXLITE_PYTHON_STUB_C_API_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MXLITE_C_API __attribute__((visibility("default")))

/* The most dimensions an NDArray has (mxlite::Shape::kMaxDims). */
#define MX_MAX_DIMS 6

typedef void* NDArrayHandle;
typedef void* GraphBuilderHandle;
typedef void* GraphHandle;
typedef void* OnnxModelHandle;
typedef void* ExecutorHandle;
typedef void* OptimizerHandle;
typedef int MXSymbol;

/* ---- Errors and build ------------------------------------------------------------------------ */

/* The message of the last failed call on this thread ("" when none failed). Never NULL. */
MXLITE_C_API const char* MXGetLastError(void);

/* The library version, e.g. "0.1.0". */
MXLITE_C_API int MXGetVersion(const char** out_version);

/* Facts about this build and machine as one JSON object: version, compiler, build_type,
 * cuda_enabled, cuda/cudnn/cublas versions, gpus (id, name, compute capability, memory), cpu_model,
 * cpu_features, hardware_threads, gemm (the CPU GEMM in use and why), onnx_enabled. */
MXLITE_C_API int MXGetBuildInfo(const char** out_json);

/* ---- Settings (core/settings.h) -------------------------------------------------------------- */

/* The effective value of a setting and where it came from ("program", "environment", "default").
 * Fails for an unknown name (naming the closest known one) or an invalid environment value. */
MXLITE_C_API int MXSettingGet(const char* name, const char** out_value, const char** out_source);

/* Sets the program value of a setting; fails, naming the variable, the value and what is allowed,
 * when the value is invalid. Settings read once at start (MXNET_ENGINE_TYPE, thread counts) affect
 * only what is created after the call. */
MXLITE_C_API int MXSettingSet(const char* name, const char* value);

/* Removes the program value; the environment or the default applies again. */
MXLITE_C_API int MXSettingReset(const char* name);

/* Every setting's name, in the registry's order. */
MXLITE_C_API int MXSettingList(uint32_t* out_count, const char*** out_names);

/* What a setting is: its type ("bool", "int", "enum", "string", "path"), built-in default, allowed
 * values (as text) and one-line description. */
MXLITE_C_API int MXSettingDescribe(const char* name, const char** out_type,
                                   const char** out_default, const char** out_allowed,
                                   const char** out_doc);

/* ---- NDArray (engine/ndarray.h) ---------------------------------------------------------------
 */

/* A new array of zeros. `dims` holds `ndim` extents (ndim 0: a scalar). */
MXLITE_C_API int MXNDArrayCreate(const int64_t* dims, int ndim, const char* dtype,
                                 const char* context, NDArrayHandle* out);

/* A new array holding a copy of `bytes` bytes of host memory in the dtype's layout and C
 * (row-major) order; `bytes` must equal the array's size. Waits until the copy is done. */
MXLITE_C_API int MXNDArrayCreateFromCPU(const int64_t* dims, int ndim, const char* dtype,
                                        const char* context, const void* data, size_t bytes,
                                        NDArrayHandle* out);

/* Copies `bytes` bytes of host memory into the array, in the array's dtype and C (row-major) order;
 * `bytes` must equal the array's size in bytes. Waits until the copy is done. */
MXLITE_C_API int MXNDArraySyncCopyFromCPU(NDArrayHandle array, const void* data, size_t bytes);

/* Copies the array into `bytes` bytes of host memory (must equal its size in bytes). Waits for the
 * ops that write the array and reports their errors. */
MXLITE_C_API int MXNDArraySyncCopyToCPU(NDArrayHandle array, void* data, size_t bytes);

/* The shape: *out_ndim extents written to out_dims, which holds MX_MAX_DIMS entries. */
MXLITE_C_API int MXNDArrayGetShape(NDArrayHandle array, int* out_ndim, int64_t* out_dims);

/* The dtype's name (a static string). */
MXLITE_C_API int MXNDArrayGetDType(NDArrayHandle array, const char** out_dtype);

/* The context, e.g. "cpu(0)". */
MXLITE_C_API int MXNDArrayGetContext(NDArrayHandle array, const char** out_context);

/* Blocks until the ops that write the array are done; reports their errors. */
MXLITE_C_API int MXNDArrayWaitToRead(NDArrayHandle array);

/* Reads a file holding one ONNX TensorProto (the ONNX test data format) into a new CPU array;
 * *out_name is the tensor's name. Fails when mxlite was built without ONNX. */
MXLITE_C_API int MXNDArrayLoadTensorProto(const char* path, NDArrayHandle* out,
                                          const char** out_name);

MXLITE_C_API int MXNDArrayFree(NDArrayHandle array);

/* ---- Graph building (scheduler/graph/graph_builder.h)
 * -----------------------------------------------
 */

MXLITE_C_API int MXGraphBuilderCreate(GraphBuilderHandle* out);
MXLITE_C_API int MXGraphBuilderFree(GraphBuilderHandle builder);

/* An input variable (data or labels) with its shape and dtype. */
MXLITE_C_API int MXGraphBuilderInput(GraphBuilderHandle builder, const char* name,
                                     const int64_t* dims, int ndim, const char* dtype,
                                     MXSymbol* out);

/* A parameter variable; ndim < 0 leaves its shape to inference. */
MXLITE_C_API int MXGraphBuilderParameter(GraphBuilderHandle builder, const char* name,
                                         const int64_t* dims, int ndim, MXSymbol* out);

/* Applies a registered op to `inputs` with attributes in MXNet spelling ("kernel" = "(5,5)",
 * "no_bias" = "true"). Parameters the op declares but the call does not pass are created and named
 * "<node>_<input>". `name` may be NULL or "" for an automatic name ("conv0"). The symbol is the
 * op's output 0. Unknown ops, unknown or invalid attributes and wrong input counts fail, naming the
 * node (and listing the known ops or attributes). */
MXLITE_C_API int MXGraphBuilderOp(GraphBuilderHandle builder, const char* op, uint32_t num_inputs,
                                  const MXSymbol* inputs, uint32_t num_attrs,
                                  const char** attr_keys, const char** attr_values,
                                  const char* name, MXSymbol* out);

/* The visible outputs of the node behind `symbol`: *out_count symbols written to out_symbols,
 * which holds `capacity` entries (fails when it is too small, saying how many are needed). */
MXLITE_C_API int MXGraphBuilderOutputs(GraphBuilderHandle builder, MXSymbol symbol,
                                       uint32_t capacity, uint32_t* out_count,
                                       MXSymbol* out_symbols);

/* The name of the node behind `symbol` ("conv0"). */
MXLITE_C_API int MXGraphBuilderSymbolName(GraphBuilderHandle builder, MXSymbol symbol,
                                          const char** out_name);

/* The graph of everything `outputs` depend on. The builder stays usable. */
MXLITE_C_API int MXGraphBuilderBuild(GraphBuilderHandle builder, uint32_t num_outputs,
                                     const MXSymbol* outputs, GraphHandle* out);

/* Names of the graph's variables with a role: 0 inputs, 1 parameters, 2 auxiliary states. */
MXLITE_C_API int MXGraphListVariables(GraphHandle graph, int role, uint32_t* out_count,
                                      const char*** out_names);

MXLITE_C_API int MXGraphFree(GraphHandle graph);

/* ---- ONNX (scheduler/onnx/onnx_import.h)
 * ------------------------------------------------------------
 */

/* Imports an ONNX model file. `num_shapes` input shapes may replace the declared ones (for dynamic
 * dims): input `shape_names[i]` gets `shape_ndims[i]` extents, taken in order from `shape_dims`.
 * The file is untrusted: malformed models fail with a message naming the file and node. Fails
 * when mxlite was built without ONNX. */
MXLITE_C_API int MXOnnxLoad(const char* path, uint32_t num_shapes, const char** shape_names,
                            const int* shape_ndims, const int64_t* shape_dims,
                            OnnxModelHandle* out);

/* The model's graph (a new handle). */
MXLITE_C_API int MXOnnxModelGraph(OnnxModelHandle model, GraphHandle* out);

/* Names of the model's parameters (initialisers and constants), its graph inputs (ONNX names) with
 * the graph variables they map to, and its outputs (ONNX names, in output order). */
MXLITE_C_API int MXOnnxModelListParameters(OnnxModelHandle model, uint32_t* out_count,
                                           const char*** out_names);
MXLITE_C_API int MXOnnxModelListInputs(OnnxModelHandle model, uint32_t* out_count,
                                       const char*** out_onnx_names,
                                       const char*** out_variable_names);
MXLITE_C_API int MXOnnxModelListOutputs(OnnxModelHandle model, uint32_t* out_count,
                                        const char*** out_names);

/* A parameter's value as a new array on `context`. */
MXLITE_C_API int MXOnnxModelGetParameter(OnnxModelHandle model, const char* name,
                                         const char* context, NDArrayHandle* out);

MXLITE_C_API int MXOnnxModelFree(OnnxModelHandle model);

/* ---- Executor (scheduler/graph/executor.h)
 * -----------------------------------------------------------
 */

/* Binds a graph to a device. `training` != 0 plans backward (gradients of every parameter and of
 * the inputs named in `grad_input_names`). `arrays` are used for the variables (or parameter
 * gradients, "<name>_grad") named in `array_names` and shared with the caller; the others are
 * created as zeros. Input shapes may be replaced as in MXOnnxLoad. `seed` seeds Dropout. */
MXLITE_C_API int MXExecutorBind(GraphHandle graph, const char* context, int training,
                                uint32_t num_arrays, const char** array_names,
                                const NDArrayHandle* arrays, uint32_t num_grad_inputs,
                                const char** grad_input_names, uint32_t num_shapes,
                                const char** shape_names, const int* shape_ndims,
                                const int64_t* shape_dims, uint64_t seed, ExecutorHandle* out);

/* Pushes forward (is_train != 0: training behaviour of BatchNorm and Dropout). */
MXLITE_C_API int MXExecutorForward(ExecutorHandle executor, int is_train);

/* Pushes backward. `head_gradients`: none (num 0: ones), or one per graph output. */
MXLITE_C_API int MXExecutorBackward(ExecutorHandle executor, uint32_t num_head_gradients,
                                    const NDArrayHandle* head_gradients);

MXLITE_C_API int MXExecutorNumOutputs(ExecutorHandle executor, uint32_t* out_count);

/* A new handle sharing output `index`, a variable's array or a gradient array (by variable name)
 * with the executor: writing it writes the executor's array. */
MXLITE_C_API int MXExecutorGetOutput(ExecutorHandle executor, uint32_t index, NDArrayHandle* out);
MXLITE_C_API int MXExecutorGetArg(ExecutorHandle executor, const char* name, NDArrayHandle* out);
MXLITE_C_API int MXExecutorGetGradient(ExecutorHandle executor, const char* name,
                                       NDArrayHandle* out);

/* Names of the parameters, or of the auxiliary states, in graph order. */
MXLITE_C_API int MXExecutorListParameters(ExecutorHandle executor, uint32_t* out_count,
                                          const char*** out_names);
MXLITE_C_API int MXExecutorListAuxiliary(ExecutorHandle executor, uint32_t* out_count,
                                         const char*** out_names);

/* Initialises every parameter and auxiliary state by MXNet's name rules
 * (scheduler/train/initializer.h): weights from `initializer` — "xavier" (uniform, average fan,
 * magnitude = `value`), "uniform" (scale = `value`), "normal" (sigma = `value`), "constant"
 * (`value`) or "zeros" — biases and betas 0, gammas 1, moving means 0, moving variances 1. A
 * negative `value` takes the initialiser's default (xavier 3, uniform 0.07, normal 0.01). */
MXLITE_C_API int MXExecutorInitParameters(ExecutorHandle executor, const char* initializer,
                                          double value, uint64_t seed);

/* The layers, output shapes, parameter counts and memory plan, as printed by the C++ API. */
MXLITE_C_API int MXExecutorSummary(ExecutorHandle executor, const char** out_text);

/* The convolution tuning report: per layer and direction, the effective mode and where it came
 * from, the pick and whether it came from the cache, the DB or a benchmark; with `verbose` != 0
 * also every candidate with its time and workspace (or why it was skipped). */
MXLITE_C_API int MXExecutorTuningReport(ExecutorHandle executor, int verbose,
                                        const char** out_text);

MXLITE_C_API int MXExecutorFree(ExecutorHandle executor);

/* ---- Optimizers (scheduler/train/optimizer.h)
 * --------------------------------------------------------
 */

/* A new optimizer: `type` "sgd" (learning_rate, momentum, wd, rescale_grad, clip_gradient) or
 * "adam" (learning_rate, beta1, beta2, epsilon, wd, rescale_grad, clip_gradient); options are
 * key/value text ("learning_rate" = "0.01"). Unknown types or keys fail, listing the known ones. */
MXLITE_C_API int MXOptimizerCreate(const char* type, uint32_t num_options, const char** keys,
                                   const char** values, OptimizerHandle* out);

/* One step: pushes the update of every parameter of a training executor from its gradient. */
MXLITE_C_API int MXOptimizerUpdateAll(OptimizerHandle optimizer, ExecutorHandle executor);

/* Pushes the update of one weight from its gradient; `name` keys the optimizer's state for it. */
MXLITE_C_API int MXOptimizerUpdate(OptimizerHandle optimizer, const char* name,
                                   NDArrayHandle weight, NDArrayHandle gradient);

MXLITE_C_API int MXOptimizerSetLearningRate(OptimizerHandle optimizer, double learning_rate);
MXLITE_C_API int MXOptimizerGetLearningRate(OptimizerHandle optimizer, double* out_rate);
MXLITE_C_API int MXOptimizerFree(OptimizerHandle optimizer);

/* ---- Engine and profiler (engine/engine.h, engine/profiler.h) ----------------------------------
 */

/* Blocks until every pushed op is done; reports the first error not yet reported. */
MXLITE_C_API int MXEngineWaitAll(void);

/* Starts recording ops: mode 0 the executor's ops, 1 every op, -1 MXNET_PROFILER_MODE. */
MXLITE_C_API int MXProfilerStart(int mode);
MXLITE_C_API int MXProfilerStop(void);
/* Writes the events recorded so far as a Chrome trace (JSON) file, atomically (temp + rename). */
MXLITE_C_API int MXProfilerDump(const char* path);
/* Drops the recorded events. */
MXLITE_C_API int MXProfilerClear(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MXLITE_PYTHON_STUB_C_API_H_ */
