#include "python_stub/c_api/c_api.h"

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/build_info.h"
#include "core/context.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/settings.h"
#include "core/shape.h"
#include "engine/engine.h"
#include "engine/ndarray.h"
#include "engine/profiler.h"
#include "ops/cpu_runtime.h"
#include "scheduler/graph/executor.h"
#include "scheduler/graph/graph_builder.h"
#include "scheduler/train/initializer.h"
#include "scheduler/train/optimizer.h"
#ifdef MXLITE_HAS_ONNX
#include "scheduler/onnx/onnx_import.h"
#include "scheduler/onnx/onnx_tensor.h"
#endif

using namespace mxlite;

namespace {

// ---- Errors and returned strings ------------------------------------------------------------

thread_local std::string last_error;

// Strings handed to the caller live here until the thread's next MX call (the contract in c_api.h).
// Deques, so that adding one never moves the ones already handed out.
struct ReturnStore {
  std::deque<std::string> strings;
  std::deque<std::vector<const char*>> lists;

  void Clear() {
    strings.clear();
    lists.clear();
  }
  const char* Keep(std::string text) { return strings.emplace_back(std::move(text)).c_str(); }
  const char** KeepList(const std::vector<std::string>& items) {
    std::vector<const char*>& list = lists.emplace_back();
    for (const std::string& item : items) list.push_back(Keep(item));
    return list.data();
  }
};

thread_local ReturnStore return_store;

// Runs `body`, turning every exception into -1 and the thread's last error: nothing escapes.
template <typename Body>
int Guarded(Body&& body) {
  return_store.Clear();
  try {
    body();
    return 0;
  } catch (const std::exception& error) {
    last_error = error.what();
  } catch (...) {
    last_error = "unknown C++ exception (not derived from std::exception)";
  }
  return -1;
}

// ---- Argument checks --------------------------------------------------------------------------

template <typename T>
T* Checked(void* handle, const char* what) {
  MX_CHECK(handle != nullptr) << what << " is NULL";
  return static_cast<T*>(handle);
}

void CheckOut(const void* out, const char* what) {
  MX_CHECK(out != nullptr) << "output parameter " << what << " is NULL";
}

std::string Text(const char* text, const char* what) {
  MX_CHECK(text != nullptr) << what << " is NULL";
  return text;
}

Shape ShapeOf(const int64_t* dims, int ndim, const std::string& what) {
  MX_CHECK(ndim >= 0 && ndim <= Shape::kMaxDims)
      << what << ": ndim " << ndim << " is outside 0.." << Shape::kMaxDims;
  MX_CHECK(ndim == 0 || dims != nullptr) << what << ": dims is NULL for ndim " << ndim;
  return Shape(std::vector<int64_t>(dims, dims + ndim));
}

// The (name, ndim, flat dims) triple of MXOnnxLoad and MXExecutorBind as a map.
std::map<std::string, Shape> ShapeMap(uint32_t count, const char** names, const int* ndims,
                                      const int64_t* dims) {
  std::map<std::string, Shape> shapes;
  if (count == 0) return shapes;
  MX_CHECK(names != nullptr && ndims != nullptr) << "input shapes: names or ndims is NULL";
  size_t offset = 0;
  for (uint32_t i = 0; i < count; ++i) {
    const std::string name = Text(names[i], "input shape name");
    shapes[name] = ShapeOf(dims == nullptr ? nullptr : dims + offset, ndims[i],
                           "shape of input '" + name + "'");
    offset += static_cast<size_t>(ndims[i]);
  }
  return shapes;
}

std::vector<std::string> TextList(uint32_t count, const char** items, const char* what) {
  std::vector<std::string> list;
  MX_CHECK(count == 0 || items != nullptr) << what << " is NULL";
  for (uint32_t i = 0; i < count; ++i) list.push_back(Text(items[i], what));
  return list;
}

double ParseNumber(const std::string& text, const std::string& what) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  MX_CHECK(!text.empty() && end == text.c_str() + text.size())
      << "invalid value '" << text << "' for " << what << ": expected a number";
  return value;
}

void ReturnNames(const std::vector<std::string>& names, uint32_t* out_count,
                 const char*** out_names) {
  CheckOut(out_count, "out_count");
  CheckOut(out_names, "out_names");
  *out_names = return_store.KeepList(names);
  *out_count = static_cast<uint32_t>(names.size());
}

// ---- Handles ----------------------------------------------------------------------------------

NDArray& ArrayOf(NDArrayHandle handle) { return *Checked<NDArray>(handle, "NDArrayHandle"); }

NDArrayHandle NewArrayHandle(const NDArray& array) { return new NDArray(array); }

// A GraphBuilder and the symbols it handed out, which MXSymbol values index.
struct BuilderState {
  GraphBuilder builder;
  std::vector<Symbol> symbols;

  MXSymbol Add(Symbol symbol) {
    symbols.push_back(symbol);
    return static_cast<MXSymbol>(symbols.size() - 1);
  }
  const Symbol& At(MXSymbol symbol) const {
    MX_CHECK(symbol >= 0 && static_cast<size_t>(symbol) < symbols.size())
        << "symbol " << symbol << " does not belong to this GraphBuilder (it has " << symbols.size()
        << " symbols)";
    return symbols[static_cast<size_t>(symbol)];
  }
};

BuilderState& BuilderOf(GraphBuilderHandle handle) {
  return *Checked<BuilderState>(handle, "GraphBuilderHandle");
}
Graph& GraphOf(GraphHandle handle) { return *Checked<Graph>(handle, "GraphHandle"); }
Executor& ExecutorOf(ExecutorHandle handle) { return *Checked<Executor>(handle, "ExecutorHandle"); }
Optimizer& OptimizerOf(OptimizerHandle handle) {
  return *Checked<Optimizer>(handle, "OptimizerHandle");
}

// ---- Build info as JSON -------------------------------------------------------------------------

std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string BuildInfoJson() {
  const BuildInfo info = GetBuildInfo();
  std::ostringstream json;
  json << "{\"version\": " << JsonString(info.version)
       << ", \"compiler\": " << JsonString(info.compiler)
       << ", \"build_type\": " << JsonString(info.build_type)
       << ", \"cuda_enabled\": " << (info.cuda_enabled ? "true" : "false")
       << ", \"cuda_runtime_version\": " << JsonString(info.cuda_runtime_version)
       << ", \"cudnn_version\": " << JsonString(info.cudnn_version)
       << ", \"cublas_version\": " << JsonString(info.cublas_version)
       << ", \"gpu_probe_error\": " << JsonString(info.gpu_probe_error) << ", \"gpus\": [";
  for (size_t i = 0; i < info.gpus.size(); ++i) {
    const GpuInfo& gpu = info.gpus[i];
    json << (i ? ", " : "") << "{\"id\": " << gpu.id << ", \"name\": " << JsonString(gpu.name)
         << ", \"compute_capability\": \"" << gpu.compute_major << "." << gpu.compute_minor
         << "\", \"total_memory\": " << gpu.total_memory << "}";
  }
  json << "], \"cpu_model\": " << JsonString(info.cpu_model) << ", \"cpu_features\": [";
  for (size_t i = 0; i < info.cpu_features.size(); ++i) {
    json << (i ? ", " : "") << JsonString(info.cpu_features[i]);
  }
  json << "], \"hardware_threads\": " << info.hardware_threads
       << ", \"gemm\": " << JsonString(CpuGemmDescription());
#ifdef MXLITE_HAS_ONNX
  json << ", \"onnx_enabled\": true}";
#else
  json << ", \"onnx_enabled\": false}";
#endif
  return json.str();
}

// ---- Initializers and optimizers ---------------------------------------------------------------

Initializer MakeInitializer(const std::string& kind, double value) {
  const bool given = value >= 0;
  if (kind == "xavier") {
    Xavier xavier;
    if (given) xavier.magnitude = value;
    return xavier;
  }
  if (kind == "uniform") return given ? Uniform{value} : Uniform{};
  if (kind == "normal") return given ? Normal{value} : Normal{};
  if (kind == "constant") return Constant{value};
  if (kind == "zeros") return Zeros{};
  MX_THROW() << "unknown initializer '" << kind
             << "'; known: xavier, uniform, normal, constant, zeros";
}

// Reads key/value options into the named fields of an options struct; unknown keys are errors.
void ApplyOptions(const std::string& type, const std::map<std::string, double*>& fields,
                  const std::vector<std::string>& keys, const std::vector<std::string>& values) {
  for (size_t i = 0; i < keys.size(); ++i) {
    auto field = fields.find(keys[i]);
    if (field == fields.end()) {
      std::string known;
      for (const auto& [name, unused] : fields) known += (known.empty() ? "" : ", ") + name;
      MX_THROW() << "unknown option '" << keys[i] << "' for optimizer " << type
                 << "; known: " << known;
    }
    *field->second = ParseNumber(values[i], type + " option " + keys[i]);
  }
}

std::unique_ptr<Optimizer> MakeOptimizer(const std::string& type,
                                         const std::vector<std::string>& keys,
                                         const std::vector<std::string>& values) {
  if (type == "sgd") {
    SgdOptions options;
    ApplyOptions(type,
                 {{"learning_rate", &options.learning_rate},
                  {"momentum", &options.momentum},
                  {"wd", &options.wd},
                  {"rescale_grad", &options.rescale_grad},
                  {"clip_gradient", &options.clip_gradient}},
                 keys, values);
    return Optimizer::Sgd(options);
  }
  if (type == "adam") {
    AdamOptions options;
    ApplyOptions(type,
                 {{"learning_rate", &options.learning_rate},
                  {"beta1", &options.beta1},
                  {"beta2", &options.beta2},
                  {"epsilon", &options.epsilon},
                  {"wd", &options.wd},
                  {"rescale_grad", &options.rescale_grad},
                  {"clip_gradient", &options.clip_gradient}},
                 keys, values);
    return Optimizer::Adam(options);
  }
  MX_THROW() << "unknown optimizer '" << type << "'; known: sgd, adam";
}

#ifndef MXLITE_HAS_ONNX
[[noreturn]] void NoOnnx() {
  MX_THROW() << "this libmxlite was built without ONNX import (install libonnx-dev and "
                "libprotobuf-dev, then rebuild)";
}
#endif

}  // namespace

// ---- Errors and build ---------------------------------------------------------------------------

const char* MXGetLastError(void) { return last_error.c_str(); }

int MXGetVersion(const char** out_version) {
  return Guarded([&] {
    CheckOut(out_version, "out_version");
    *out_version = MXLITE_VERSION;
  });
}

int MXGetBuildInfo(const char** out_json) {
  return Guarded([&] {
    CheckOut(out_json, "out_json");
    *out_json = return_store.Keep(BuildInfoJson());
  });
}

// ---- Settings -----------------------------------------------------------------------------------

int MXSettingGet(const char* name, const char** out_value, const char** out_source) {
  return Guarded([&] {
    CheckOut(out_value, "out_value");
    CheckOut(out_source, "out_source");
    const SettingValue value = settings().Get(Text(name, "setting name"));
    *out_value = return_store.Keep(value.text);
    *out_source = SettingSourceName(value.source);
  });
}

int MXSettingSet(const char* name, const char* value) {
  return Guarded([&] { settings().Set(Text(name, "setting name"), Text(value, "setting value")); });
}

int MXSettingReset(const char* name) {
  return Guarded([&] { settings().Reset(Text(name, "setting name")); });
}

int MXSettingList(uint32_t* out_count, const char*** out_names) {
  return Guarded([&] {
    std::vector<std::string> names;
    for (const SettingSpec& spec : settings().specs()) names.push_back(spec.name);
    ReturnNames(names, out_count, out_names);
  });
}

int MXSettingDescribe(const char* name, const char** out_type, const char** out_default,
                      const char** out_allowed, const char** out_doc) {
  return Guarded([&] {
    CheckOut(out_type, "out_type");
    CheckOut(out_default, "out_default");
    CheckOut(out_allowed, "out_allowed");
    CheckOut(out_doc, "out_doc");
    const SettingSpec& spec = settings().Spec(Text(name, "setting name"));
    *out_type = SettingTypeName(spec.type);
    *out_default = return_store.Keep(spec.default_value);
    *out_allowed = return_store.Keep(spec.AllowedText());
    *out_doc = return_store.Keep(spec.doc);
  });
}

// ---- NDArray ------------------------------------------------------------------------------------

int MXNDArrayCreate(const int64_t* dims, int ndim, const char* dtype, const char* context,
                    NDArrayHandle* out) {
  return Guarded([&] {
    CheckOut(out, "out");
    const Shape shape = ShapeOf(dims, ndim, "MXNDArrayCreate");
    NDArray array = NDArray::Zeros(shape, Context::Parse(Text(context, "context")),
                                   ParseDType(Text(dtype, "dtype")));
    *out = NewArrayHandle(array);
  });
}

namespace {
void CopyIn(NDArray& target, const void* data, size_t bytes) {
  MX_CHECK(bytes == target.bytes())
      << "copying " << bytes << " bytes into an array " << target.shape() << " " << target.dtype()
      << " of " << target.bytes() << " bytes";
  MX_CHECK(data != nullptr || bytes == 0) << "host data is NULL";
  target.SyncCopyFromCPU(data, bytes);
}
}  // namespace

int MXNDArrayCreateFromCPU(const int64_t* dims, int ndim, const char* dtype, const char* context,
                           const void* data, size_t bytes, NDArrayHandle* out) {
  return Guarded([&] {
    CheckOut(out, "out");
    const Shape shape = ShapeOf(dims, ndim, "MXNDArrayCreateFromCPU");
    NDArray array(shape, Context::Parse(Text(context, "context")),
                  ParseDType(Text(dtype, "dtype")));
    CopyIn(array, data, bytes);
    *out = NewArrayHandle(array);
  });
}

int MXNDArraySyncCopyFromCPU(NDArrayHandle array, const void* data, size_t bytes) {
  return Guarded([&] { CopyIn(ArrayOf(array), data, bytes); });
}

int MXNDArraySyncCopyToCPU(NDArrayHandle array, void* data, size_t bytes) {
  return Guarded([&] {
    const NDArray& source = ArrayOf(array);
    MX_CHECK(bytes == source.bytes())
        << "copying an array " << source.shape() << " " << source.dtype() << " of "
        << source.bytes() << " bytes into " << bytes << " bytes of host memory";
    MX_CHECK(data != nullptr || bytes == 0) << "host data is NULL";
    source.SyncCopyToCPU(data, bytes);
  });
}

int MXNDArrayGetShape(NDArrayHandle array, int* out_ndim, int64_t* out_dims) {
  return Guarded([&] {
    CheckOut(out_ndim, "out_ndim");
    CheckOut(out_dims, "out_dims");
    const Shape& shape = ArrayOf(array).shape();
    for (int axis = 0; axis < shape.ndim(); ++axis) out_dims[axis] = shape[axis];
    *out_ndim = shape.ndim();
  });
}

int MXNDArrayGetDType(NDArrayHandle array, const char** out_dtype) {
  return Guarded([&] {
    CheckOut(out_dtype, "out_dtype");
    *out_dtype = DTypeName(ArrayOf(array).dtype());
  });
}

int MXNDArrayGetContext(NDArrayHandle array, const char** out_context) {
  return Guarded([&] {
    CheckOut(out_context, "out_context");
    *out_context = return_store.Keep(ArrayOf(array).ctx().ToString());
  });
}

int MXNDArrayWaitToRead(NDArrayHandle array) {
  return Guarded([&] { ArrayOf(array).WaitToRead(); });
}

int MXNDArrayLoadTensorProto(const char* path, NDArrayHandle* out, const char** out_name) {
  return Guarded([&] {
    CheckOut(out, "out");
    CheckOut(out_name, "out_name");
#ifdef MXLITE_HAS_ONNX
    std::string name;
    const HostTensor tensor = ReadTensorFile(Text(path, "path"), &name);
    NDArray array = ToNDArray(tensor, Context::CPU());
    *out_name = return_store.Keep(name);
    *out = NewArrayHandle(array);
#else
    (void)path;
    NoOnnx();
#endif
  });
}

int MXNDArrayFree(NDArrayHandle array) {
  return Guarded([&] { delete static_cast<NDArray*>(array); });
}

// ---- Graph building -----------------------------------------------------------------------------

int MXGraphBuilderCreate(GraphBuilderHandle* out) {
  return Guarded([&] {
    CheckOut(out, "out");
    *out = new BuilderState();
  });
}

int MXGraphBuilderFree(GraphBuilderHandle builder) {
  return Guarded([&] { delete static_cast<BuilderState*>(builder); });
}

int MXGraphBuilderInput(GraphBuilderHandle builder, const char* name, const int64_t* dims, int ndim,
                        const char* dtype, MXSymbol* out) {
  return Guarded([&] {
    CheckOut(out, "out");
    BuilderState& state = BuilderOf(builder);
    const std::string input = Text(name, "input name");
    const Shape shape = ShapeOf(dims, ndim, "shape of input '" + input + "'");
    *out = state.Add(state.builder.Input(input, shape, ParseDType(Text(dtype, "dtype"))));
  });
}

int MXGraphBuilderParameter(GraphBuilderHandle builder, const char* name, const int64_t* dims,
                            int ndim, MXSymbol* out) {
  return Guarded([&] {
    CheckOut(out, "out");
    BuilderState& state = BuilderOf(builder);
    const std::string parameter = Text(name, "parameter name");
    std::optional<Shape> shape;
    if (ndim >= 0) shape = ShapeOf(dims, ndim, "shape of parameter '" + parameter + "'");
    *out = state.Add(state.builder.Parameter(parameter, shape));
  });
}

int MXGraphBuilderOp(GraphBuilderHandle builder, const char* op, uint32_t num_inputs,
                     const MXSymbol* inputs, uint32_t num_attrs, const char** attr_keys,
                     const char** attr_values, const char* name, MXSymbol* out) {
  return Guarded([&] {
    CheckOut(out, "out");
    BuilderState& state = BuilderOf(builder);
    MX_CHECK(num_inputs == 0 || inputs != nullptr) << "inputs is NULL";
    std::vector<Symbol> input_symbols;
    for (uint32_t i = 0; i < num_inputs; ++i) input_symbols.push_back(state.At(inputs[i]));
    const std::vector<std::string> keys = TextList(num_attrs, attr_keys, "attribute key");
    const std::vector<std::string> values = TextList(num_attrs, attr_values, "attribute value");
    std::map<std::string, std::string> attrs;
    for (size_t i = 0; i < keys.size(); ++i) attrs[keys[i]] = values[i];
    *out = state.Add(
        state.builder.Op(Text(op, "op name"), input_symbols, attrs, name == nullptr ? "" : name));
  });
}

int MXGraphBuilderOutputs(GraphBuilderHandle builder, MXSymbol symbol, uint32_t capacity,
                          uint32_t* out_count, MXSymbol* out_symbols) {
  return Guarded([&] {
    CheckOut(out_count, "out_count");
    BuilderState& state = BuilderOf(builder);
    const std::vector<Symbol> outputs = state.builder.Outputs(state.At(symbol));
    MX_CHECK(outputs.size() <= capacity)
        << "the node has " << outputs.size() << " outputs but room was given for " << capacity;
    MX_CHECK(out_symbols != nullptr || outputs.empty()) << "out_symbols is NULL";
    for (size_t i = 0; i < outputs.size(); ++i) out_symbols[i] = state.Add(outputs[i]);
    *out_count = static_cast<uint32_t>(outputs.size());
  });
}

int MXGraphBuilderSymbolName(GraphBuilderHandle builder, MXSymbol symbol, const char** out_name) {
  return Guarded([&] {
    CheckOut(out_name, "out_name");
    BuilderState& state = BuilderOf(builder);
    const NodeEntry entry = state.At(symbol).entry;
    *out_name = return_store.Keep(state.builder.graph().node(entry.node).name);
  });
}

int MXGraphBuilderBuild(GraphBuilderHandle builder, uint32_t num_outputs, const MXSymbol* outputs,
                        GraphHandle* out) {
  return Guarded([&] {
    CheckOut(out, "out");
    BuilderState& state = BuilderOf(builder);
    MX_CHECK(num_outputs == 0 || outputs != nullptr) << "outputs is NULL";
    std::vector<Symbol> output_symbols;
    for (uint32_t i = 0; i < num_outputs; ++i) output_symbols.push_back(state.At(outputs[i]));
    *out = new Graph(state.builder.Build(output_symbols));
  });
}

int MXGraphListVariables(GraphHandle graph, int role, uint32_t* out_count,
                         const char*** out_names) {
  return Guarded([&] {
    const Graph& g = GraphOf(graph);
    MX_CHECK(role >= 0 && role <= 2)
        << "variable role " << role << " is not 0 (inputs), 1 (parameters) or 2 (auxiliary)";
    std::vector<std::string> names;
    for (int id : g.Variables(static_cast<VariableRole>(role))) names.push_back(g.node(id).name);
    ReturnNames(names, out_count, out_names);
  });
}

int MXGraphFree(GraphHandle graph) {
  return Guarded([&] { delete static_cast<Graph*>(graph); });
}

// ---- ONNX ---------------------------------------------------------------------------------------

#ifdef MXLITE_HAS_ONNX
namespace {
ImportedModel& ModelOf(OnnxModelHandle handle) {
  return *Checked<ImportedModel>(handle, "OnnxModelHandle");
}
}  // namespace

int MXOnnxLoad(const char* path, uint32_t num_shapes, const char** shape_names,
               const int* shape_ndims, const int64_t* shape_dims, OnnxModelHandle* out) {
  return Guarded([&] {
    CheckOut(out, "out");
    ImportOptions options;
    options.input_shapes = ShapeMap(num_shapes, shape_names, shape_ndims, shape_dims);
    *out = new ImportedModel(ImportOnnx(Text(path, "path"), options));
  });
}

int MXOnnxModelGraph(OnnxModelHandle model, GraphHandle* out) {
  return Guarded([&] {
    CheckOut(out, "out");
    *out = new Graph(ModelOf(model).graph);
  });
}

int MXOnnxModelListParameters(OnnxModelHandle model, uint32_t* out_count, const char*** out_names) {
  return Guarded([&] {
    std::vector<std::string> names;
    for (const auto& [name, tensor] : ModelOf(model).parameters) names.push_back(name);
    ReturnNames(names, out_count, out_names);
  });
}

int MXOnnxModelListInputs(OnnxModelHandle model, uint32_t* out_count, const char*** out_onnx_names,
                          const char*** out_variable_names) {
  return Guarded([&] {
    CheckOut(out_variable_names, "out_variable_names");
    std::vector<std::string> onnx_names, variable_names;
    for (const auto& [onnx_name, variable] : ModelOf(model).inputs) {
      onnx_names.push_back(onnx_name);
      variable_names.push_back(variable);
    }
    ReturnNames(onnx_names, out_count, out_onnx_names);
    *out_variable_names = return_store.KeepList(variable_names);
  });
}

int MXOnnxModelListOutputs(OnnxModelHandle model, uint32_t* out_count, const char*** out_names) {
  return Guarded([&] { ReturnNames(ModelOf(model).output_names, out_count, out_names); });
}

int MXOnnxModelGetParameter(OnnxModelHandle model, const char* name, const char* context,
                            NDArrayHandle* out) {
  return Guarded([&] {
    CheckOut(out, "out");
    const ImportedModel& imported = ModelOf(model);
    const std::string parameter = Text(name, "parameter name");
    auto it = imported.parameters.find(parameter);
    MX_CHECK(it != imported.parameters.end()) << "the model has no parameter '" << parameter << "'";
    *out = NewArrayHandle(ToNDArray(it->second, Context::Parse(Text(context, "context"))));
  });
}

int MXOnnxModelFree(OnnxModelHandle model) {
  return Guarded([&] { delete static_cast<ImportedModel*>(model); });
}
#else
int MXOnnxLoad(const char*, uint32_t, const char**, const int*, const int64_t*, OnnxModelHandle*) {
  return Guarded([] { NoOnnx(); });
}
int MXOnnxModelGraph(OnnxModelHandle, GraphHandle*) {
  return Guarded([] { NoOnnx(); });
}
int MXOnnxModelListParameters(OnnxModelHandle, uint32_t*, const char***) {
  return Guarded([] { NoOnnx(); });
}
int MXOnnxModelListInputs(OnnxModelHandle, uint32_t*, const char***, const char***) {
  return Guarded([] { NoOnnx(); });
}
int MXOnnxModelListOutputs(OnnxModelHandle, uint32_t*, const char***) {
  return Guarded([] { NoOnnx(); });
}
int MXOnnxModelGetParameter(OnnxModelHandle, const char*, const char*, NDArrayHandle*) {
  return Guarded([] { NoOnnx(); });
}
int MXOnnxModelFree(OnnxModelHandle model) {
  return Guarded([&] { MX_CHECK(model == nullptr) << "an OnnxModelHandle without ONNX support"; });
}
#endif

// ---- Executor -----------------------------------------------------------------------------------

int MXExecutorBind(GraphHandle graph, const char* context, int training, uint32_t num_arrays,
                   const char** array_names, const NDArrayHandle* arrays, uint32_t num_grad_inputs,
                   const char** grad_input_names, uint32_t num_shapes, const char** shape_names,
                   const int* shape_ndims, const int64_t* shape_dims, uint64_t seed,
                   ExecutorHandle* out) {
  return Guarded([&] {
    CheckOut(out, "out");
    BindOptions options;
    options.ctx = Context::Parse(Text(context, "context"));
    options.training = training != 0;
    const std::vector<std::string> names = TextList(num_arrays, array_names, "array name");
    MX_CHECK(num_arrays == 0 || arrays != nullptr) << "arrays is NULL";
    for (uint32_t i = 0; i < num_arrays; ++i) options.arrays[names[i]] = ArrayOf(arrays[i]);
    options.input_gradients = TextList(num_grad_inputs, grad_input_names, "gradient input name");
    options.input_shapes = ShapeMap(num_shapes, shape_names, shape_ndims, shape_dims);
    options.seed = seed;
    *out = Executor::Bind(GraphOf(graph), options).release();
  });
}

int MXExecutorForward(ExecutorHandle executor, int is_train) {
  return Guarded([&] { ExecutorOf(executor).Forward(is_train != 0); });
}

int MXExecutorBackward(ExecutorHandle executor, uint32_t num_head_gradients,
                       const NDArrayHandle* head_gradients) {
  return Guarded([&] {
    Executor& exec = ExecutorOf(executor);
    MX_CHECK(num_head_gradients == 0 || head_gradients != nullptr) << "head_gradients is NULL";
    std::vector<NDArray> heads;
    for (uint32_t i = 0; i < num_head_gradients; ++i) heads.push_back(ArrayOf(head_gradients[i]));
    exec.Backward(heads);
  });
}

int MXExecutorNumOutputs(ExecutorHandle executor, uint32_t* out_count) {
  return Guarded([&] {
    CheckOut(out_count, "out_count");
    *out_count = static_cast<uint32_t>(ExecutorOf(executor).outputs().size());
  });
}

int MXExecutorGetOutput(ExecutorHandle executor, uint32_t index, NDArrayHandle* out) {
  return Guarded([&] {
    CheckOut(out, "out");
    const std::vector<NDArray>& outputs = ExecutorOf(executor).outputs();
    MX_CHECK(index < outputs.size())
        << "output " << index << " does not exist: the graph has " << outputs.size() << " outputs";
    *out = NewArrayHandle(outputs[index]);
  });
}

int MXExecutorGetArg(ExecutorHandle executor, const char* name, NDArrayHandle* out) {
  return Guarded([&] {
    CheckOut(out, "out");
    *out = NewArrayHandle(ExecutorOf(executor).Arg(Text(name, "variable name")));
  });
}

int MXExecutorGetGradient(ExecutorHandle executor, const char* name, NDArrayHandle* out) {
  return Guarded([&] {
    CheckOut(out, "out");
    *out = NewArrayHandle(ExecutorOf(executor).Gradient(Text(name, "variable name")));
  });
}

int MXExecutorListParameters(ExecutorHandle executor, uint32_t* out_count,
                             const char*** out_names) {
  return Guarded([&] { ReturnNames(ExecutorOf(executor).ParameterNames(), out_count, out_names); });
}

int MXExecutorListAuxiliary(ExecutorHandle executor, uint32_t* out_count, const char*** out_names) {
  return Guarded([&] { ReturnNames(ExecutorOf(executor).AuxiliaryNames(), out_count, out_names); });
}

int MXExecutorInitParameters(ExecutorHandle executor, const char* initializer, double value,
                             uint64_t seed) {
  return Guarded([&] {
    InitializeParameters(ExecutorOf(executor),
                         MakeInitializer(Text(initializer, "initializer"), value), seed);
  });
}

int MXExecutorSummary(ExecutorHandle executor, const char** out_text) {
  return Guarded([&] {
    CheckOut(out_text, "out_text");
    *out_text = return_store.Keep(ExecutorOf(executor).Summary());
  });
}

int MXExecutorTuningReport(ExecutorHandle executor, int verbose, const char** out_text) {
  return Guarded([&] {
    CheckOut(out_text, "out_text");
    *out_text = return_store.Keep(ExecutorOf(executor).TuningReport(verbose != 0));
  });
}

int MXExecutorFree(ExecutorHandle executor) {
  return Guarded([&] { delete static_cast<Executor*>(executor); });
}

// ---- Optimizers ---------------------------------------------------------------------------------

int MXOptimizerCreate(const char* type, uint32_t num_options, const char** keys,
                      const char** values, OptimizerHandle* out) {
  return Guarded([&] {
    CheckOut(out, "out");
    *out = MakeOptimizer(Text(type, "optimizer type"), TextList(num_options, keys, "option key"),
                         TextList(num_options, values, "option value"))
               .release();
  });
}

int MXOptimizerUpdateAll(OptimizerHandle optimizer, ExecutorHandle executor) {
  return Guarded([&] { OptimizerOf(optimizer).UpdateAll(ExecutorOf(executor)); });
}

int MXOptimizerUpdate(OptimizerHandle optimizer, const char* name, NDArrayHandle weight,
                      NDArrayHandle gradient) {
  return Guarded([&] {
    OptimizerOf(optimizer).Update(Text(name, "parameter name"), ArrayOf(weight), ArrayOf(gradient));
  });
}

int MXOptimizerSetLearningRate(OptimizerHandle optimizer, double learning_rate) {
  return Guarded([&] { OptimizerOf(optimizer).set_base_learning_rate(learning_rate); });
}

int MXOptimizerGetLearningRate(OptimizerHandle optimizer, double* out_rate) {
  return Guarded([&] {
    CheckOut(out_rate, "out_rate");
    *out_rate = OptimizerOf(optimizer).learning_rate();
  });
}

int MXOptimizerFree(OptimizerHandle optimizer) {
  return Guarded([&] { delete static_cast<Optimizer*>(optimizer); });
}

// ---- Engine and profiler ------------------------------------------------------------------------

int MXEngineWaitAll(void) {
  return Guarded([] { Engine::Get().WaitForAll(); });
}

int MXProfilerStart(int mode) {
  return Guarded([&] {
    MX_CHECK(mode >= -1 && mode <= 1)
        << "profiler mode " << mode << " is not -1 (MXNET_PROFILER_MODE), 0 (executor ops) or 1 "
        << "(every op)";
    if (mode < 0) {
      Profiler::Get().Start();
    } else {
      Profiler::Get().Start(static_cast<ProfilerMode>(mode));
    }
  });
}

int MXProfilerStop(void) {
  return Guarded([] { Profiler::Get().Stop(); });
}

int MXProfilerDump(const char* path) {
  return Guarded([&] { Profiler::Get().Dump(Text(path, "path")); });
}

int MXProfilerClear(void) {
  return Guarded([] { Profiler::Get().Clear(); });
}
