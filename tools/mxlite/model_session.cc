#include "tools/mxlite/model_session.h"

#include <charconv>
#include <filesystem>

#include "core/build_info.h"
#include "core/error.h"
#include "core/settings.h"
#include "engine/engine.h"
#include "scheduler/onnx/onnx_precision.h"

namespace mxlite::cli {

FlagSpec DeviceFlag() { return {"device", true, "cpu (default), gpu or gpu:N"}; }

FlagSpec EngineFlag() {
  return {"engine", true,
          "MXNET_ENGINE_TYPE for this run: ThreadedEnginePerDevice, ThreadedEngine, NaiveEngine"};
}

namespace {

// The whole of `text` as an integer, or nullopt.
std::optional<int64_t> ParseInt(const std::string& text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end) return std::nullopt;
  return value;
}

}  // namespace

Context ParseDevice(const std::optional<std::string>& value) {
  const std::string device = value.value_or("cpu");
  if (device == "cpu") return Context::CPU();
  int ordinal = 0;
  if (device != "gpu") {
    std::optional<int64_t> parsed =
        device.starts_with("gpu:") ? ParseInt(device.substr(4)) : std::nullopt;
    MX_CHECK(parsed && *parsed >= 0 && *parsed < 1024)
        << "--device '" << device << "' is not a device; use cpu, gpu or gpu:N";
    ordinal = static_cast<int>(*parsed);
  }
  const BuildInfo build = GetBuildInfo();
  MX_CHECK(build.cuda_enabled) << "--device " << device
                               << ": this mxlite was built without CUDA; use --device cpu";
  MX_CHECK(ordinal < static_cast<int>(build.gpus.size()))
      << "--device " << device << ": " << build.gpus.size() << " GPU(s) visible"
      << (build.gpus.empty() ? " (" + build.gpu_probe_error + ")" : std::string());
  return Context::GPU(ordinal);
}

void ApplyEngine(const std::optional<std::string>& value) {
  if (value) settings().Set("MXNET_ENGINE_TYPE", *value);
  const std::string wanted = settings().GetString("MXNET_ENGINE_TYPE");
  const EngineType running = Engine::Get().type();
  MX_CHECK(wanted == EngineTypeName(running))
      << "--engine " << wanted << ": the engine of this process has already started as "
      << EngineTypeName(running);
}

int64_t IntFlag(const ParsedArgs& args, const std::string& flag, int64_t fallback, int64_t min,
                int64_t max) {
  const std::optional<std::string> text = args.Value(flag);
  if (!text) return fallback;
  const std::optional<int64_t> value = ParseInt(*text);
  MX_CHECK(value && *value >= min && *value <= max)
      << "--" << flag << " '" << *text << "' must be an integer from " << min << " to " << max;
  return *value;
}

std::string ModelPath(const ParsedArgs& args, const std::string& command) {
  const std::vector<std::string>& positional = args.positional();
  MX_CHECK(!positional.empty()) << "'" << command << "' needs a model: " << command
                                << " MODEL.onnx ... (see " << command << " --help)";
  MX_CHECK(positional.size() == 1)
      << "'" << command << "' takes one model, got " << positional.size() << " arguments ('"
      << positional[0] << "', '" << positional[1] << "', ...)";
  MX_CHECK(std::filesystem::is_regular_file(positional[0]))
      << "model '" << positional[0] << "' does not exist or is not a file";
  return positional[0];
}

namespace {

std::string ListInputs(const std::vector<OnnxInputInfo>& declared) {
  if (declared.empty()) return "(none)";
  std::string text;
  for (const OnnxInputInfo& input : declared) {
    text += (text.empty() ? "" : ", ") + ("'" + input.name + "' " + input.ToString());
  }
  return text;
}

std::string Describe(const HostTensor& tensor) {
  return std::string(DTypeName(tensor.dtype)) + " " + tensor.shape.ToString();
}

}  // namespace

void CheckInputs(const std::string& model_path, const std::vector<OnnxInputInfo>& declared,
                 const std::map<std::string, HostTensor>& given,
                 const std::map<std::string, std::string>& sources) {
  std::map<std::string, const OnnxInputInfo*> by_name;
  for (const OnnxInputInfo& input : declared) by_name[input.name] = &input;
  for (const auto& [name, tensor] : given) {
    MX_CHECK(by_name.count(name)) << "unknown input '" << name << "' (from " << sources.at(name)
                                  << "); " << model_path
                                  << " has the inputs: " << ListInputs(declared);
  }
  for (const OnnxInputInfo& input : declared) {
    auto it = given.find(input.name);
    MX_CHECK(it != given.end()) << "missing input '" << input.name << "': " << model_path
                                << " expects " << input.ToString() << "; give it with --input "
                                << input.name << "=FILE.pb";
    const HostTensor& tensor = it->second;
    MX_CHECK(tensor.dtype == input.dtype && input.Accepts(tensor.shape))
        << "input '" << input.name << "': " << model_path << " expects " << input.ToString()
        << ", got " << Describe(tensor) << " from " << sources.at(input.name);
  }
}

BoundModel BindOnnxModel(const OnnxModelFile& model,
                         const std::map<std::string, HostTensor>& inputs,
                         const OnnxBinding& binding) {
  const Context ctx = binding.ctx;
  ImportOptions options;
  for (const auto& [name, tensor] : inputs) {
    options.input_shapes[name] = tensor.shape;
    if (binding.fold_inputs) options.constant_inputs[name] = tensor;
  }
  BoundModel bound{.model = CastModelTo(model.Import(options), binding.dtype)};
  BindOptions bind{.ctx = ctx,
                   .training = binding.training,
                   .arrays = ParameterArrays(bound.model, ctx),
                   .conv_plan = binding.conv_plan};
  for (const auto& [onnx_name, variable] : bound.model.inputs) {
    bind.arrays[variable] = ToNDArray(inputs.at(onnx_name), ctx);
  }
  bound.executor = Executor::Bind(bound.model.graph, bind);
  return bound;
}

void RunForwardBackward(Executor& executor) {
  executor.Forward(/*is_train=*/true);
  executor.Backward();
  for (const std::string& name : executor.ParameterNames()) executor.Gradient(name).WaitToRead();
}

FlagSpec DTypeFlag() {
  return {"dtype", true,
          "what the model's body computes in: float32 (default, as imported), float16 (GPU; "
          "float32 data is cast in and the outputs cast back) or float64"};
}

DType ParseDTypeFlag(const ParsedArgs& args) {
  const std::string value = args.Value("dtype").value_or("float32");
  MX_CHECK(value == "float32" || value == "float16" || value == "float64")
      << "--dtype " << value << ": expected float32, float16 or float64";
  return ParseDType(value);
}

FlagSpec PlanFlag() {
  return {"plan", true,
          "convolution layouts: none (as written), local (each layer its fastest) or global "
          "(least total time with transforms) (default: MXNET_CONV_PLAN)"};
}

std::optional<ConvPlanKind> ParsePlanFlag(const ParsedArgs& args) {
  const std::optional<std::string> value = args.Value("plan");
  if (!value) return std::nullopt;
  try {
    return ParseConvPlanKind(*value);
  } catch (const Error&) {
    MX_THROW() << "--plan " << *value << ": expected none, local or global";
  }
}

void RunForward(Executor& executor) {
  executor.Forward(/*is_train=*/false);
  for (const NDArray& output : executor.outputs()) output.WaitToRead();
}

HostTensor ToHostTensor(const NDArray& array) {
  HostTensor tensor{array.dtype(), array.shape(), std::vector<uint8_t>(array.bytes())};
  array.SyncCopyToCPU(tensor.bytes.data(), tensor.bytes.size());
  return tensor;
}

Shape BatchedInputShape(const OnnxInputInfo& input, bool first_input, int64_t batch,
                        const std::string& command) {
  MX_CHECK(input.has_shape) << "input '" << input.name << "' declares no shape; " << command
                            << " cannot make data for it";
  std::vector<int64_t> dims = input.dims;
  for (size_t axis = 0; axis < dims.size(); ++axis) {
    const bool batch_axis = axis == 0 && (first_input || dims[0] < 0);
    if (batch_axis) dims[0] = batch;
    MX_CHECK(dims[axis] >= 0) << "input '" << input.name << "' " << input.ToString()
                              << " has a dynamic dim at axis " << axis << " that " << command
                              << " cannot size";
  }
  MX_CHECK(!dims.empty() || !first_input)
      << "input '" << input.name << "' is a scalar; it has no batch dim to set";
  return CheckedOnnxShape(dims, "input '" + input.name + "'");
}

}  // namespace mxlite::cli
