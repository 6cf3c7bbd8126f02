// What `mxlite run` and `mxlite bench` share: the --device / --engine / integer flags, and an ONNX
// model imported and bound for inference on given input tensors.
//
// Errors are mxlite::Errors that name the flag or the input and say what was expected. Functions
// touch process-wide state only where they say so (the engine type, the intra-op thread count);
// one thread (the command's) calls them.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/graph/executor.h"
#include "scheduler/onnx/onnx_import.h"
#include "tools/mxlite/command_line.h"

namespace mxlite::cli {

// The flags both commands take, for their FlagSpec lists.
FlagSpec DeviceFlag();
FlagSpec EngineFlag();

// --device: "cpu" (also when absent), "gpu" or "gpu:N". A GPU needs a CUDA build and a visible GPU;
// otherwise the error says which is missing.
Context ParseDevice(const std::optional<std::string>& value);

// --engine: sets MXNET_ENGINE_TYPE for this process (an invalid value lists the allowed ones) and
// starts the engine. Without the flag the setting (environment or default) applies. Throws if
// the engine had already started as another type (commands called in-process, as tests do).
void ApplyEngine(const std::optional<std::string>& value);

// The value of an integer flag, `fallback` when absent; errors name the flag and the range.
int64_t IntFlag(const ParsedArgs& args, const std::string& flag, int64_t fallback, int64_t min,
                int64_t max);

// The model's single positional argument, checked to be an existing file.
std::string ModelPath(const ParsedArgs& args, const std::string& command);

// Checks `given` against the model's declared inputs: every input given, no unknown name, each
// tensor of the declared dtype and shape. Errors name the input, what the model expects and what
// was given (and, for an unknown name, list the model's inputs).
void CheckInputs(const std::string& model_path, const std::vector<OnnxInputInfo>& declared,
                 const std::map<std::string, HostTensor>& given,
                 const std::map<std::string, std::string>& sources);

// The shape an input gets when a command sets the batch: the declared dims, with the first
// input's first dim (and any dynamic first dim) set to `batch`. Other dynamic dims, a missing
// shape or a scalar first input are errors naming the input and `command`.
Shape BatchedInputShape(const OnnxInputInfo& input, bool first_input, int64_t batch,
                        const std::string& command);

struct BoundModel {
  ImportedModel model;
  std::unique_ptr<Executor> executor;
};

// How a command binds an imported model.
struct OnnxBinding {
  Context ctx = Context::CPU();
  // Also give the importer the inputs' values, for what ONNX needs at load (e.g. a Reshape's
  // shape given as an input).
  bool fold_inputs = false;
  std::optional<ConvPlanKind> conv_plan = std::nullopt;  // unset: MXNET_CONV_PLAN
  bool training = false;  // plan backward too (gradients of every parameter)
  // The dtype the model's body computes in (scheduler/onnx/onnx_precision.h): float32 as imported,
  // float16 (GPU) or float64; inputs and outputs stay as the file declares them.
  DType dtype = DType::kFloat32;
};

// Imports `model` with the inputs' shapes, binds it per `binding` and copies the input values in.
BoundModel BindOnnxModel(const OnnxModelFile& model,
                         const std::map<std::string, HostTensor>& inputs,
                         const OnnxBinding& binding);

// --dtype: float32 (default), float16 or float64 (an error naming the flag otherwise).
FlagSpec DTypeFlag();
DType ParseDTypeFlag(const ParsedArgs& args);

// --plan: none, local or global (an error naming the flag otherwise); unset when absent.
FlagSpec PlanFlag();
std::optional<ConvPlanKind> ParsePlanFlag(const ParsedArgs& args);

// Runs one forward pass and waits for every output (rethrowing an op's error).
void RunForward(Executor& executor);
// One training step without the update: forward in training mode, backward from head gradients
// of ones, waiting for every parameter gradient.
void RunForwardBackward(Executor& executor);

// A copy of `array` in host memory.
HostTensor ToHostTensor(const NDArray& array);

}  // namespace mxlite::cli
