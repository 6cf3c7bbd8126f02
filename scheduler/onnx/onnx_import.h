// ONNX import: reads an ONNX model (a ModelProto file) into mxlite's Graph IR.
//
//   ImportedModel model = ImportOnnx("resnet18.onnx", {.input_shapes = {{"input", {8, 3, 224,
//   224}}}}); BindOptions bind{.arrays = ParameterArrays(model, Context::CPU())}; auto exec =
//   Executor::Bind(model.graph, bind);
//
// Nodes map to mxlite ops with MXNet-style attributes (Conv -> Convolution, Gemm -> Gemm, Add ->
// broadcast_add, ...), opsets 1-21 of the default domain, each through the converter its op type
// registers for the model's opset (scheduler/onnx/onnx_converter.h; the families are in
// scheduler/onnx/convert_*.cc). Initialisers (and Constant nodes)
// become parameter variables — BatchNormalization's mean and variance auxiliary ones — whose
// values the model returns as host tensors to bind. Graph inputs that are not initialisers become
// input variables with their declared shapes; a dynamic dim must be given in
// ImportOptions::input_shapes. Values that must be known at load (Reshape's shape, Clip's bounds,
// Pad's pads, the Shape -> Gather -> Unsqueeze -> Concat chains exporters emit) are folded at
// import; with static shapes, Shape of a computed value folds too.
//
// The file is untrusted: a truncated or malformed protobuf, tensors whose data does not match
// their dims, absurd shapes, cycles, values no node defines, external data outside the model's
// folder, and unsupported ops (all listed at once, with node names) are mxlite::Errors naming the
// file and the node or tensor — never a crash or an unbounded allocation.
//
// Thread safety: the functions share no state; each call builds its own model.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/ndarray.h"
#include "scheduler/graph/graph.h"
#include "scheduler/onnx/onnx_tensor.h"

namespace onnx {
class ModelProto;
}  // namespace onnx

namespace mxlite {

struct ImportOptions {
  // Shapes for graph inputs (replacing the declared ones, e.g. to fix a dynamic batch dim).
  std::map<std::string, Shape> input_shapes = {};
  // Values of graph inputs, used where ONNX needs a value known at load (Reshape's shape, Clip's
  // bounds, Pad's pads, folded shape arithmetic). An input consumed only that way does not become
  // a graph input; one also consumed as data still does.
  std::map<std::string, HostTensor> constant_inputs = {};
  // Import the formulas exporters write for LayerNorm and GELU as those ops (onnx_patterns.h);
  // unset: MXNET_ONNX_FUSE_FORMULAS.
  std::optional<bool> fuse_formulas = std::nullopt;
};

struct ImportedModel {
  Graph graph;
  // Values of the parameter and auxiliary variables, by variable name.
  std::map<std::string, HostTensor> parameters;
  // Input variables: ONNX graph input name -> variable name in `graph` (usually the same).
  std::map<std::string, std::string> inputs;
  // ONNX graph output names, in the order of graph.outputs().
  std::vector<std::string> output_names;
  int64_t opset = 0;
  std::string producer;  // "pytorch 2.1", for messages
};

ImportedModel ImportOnnx(const std::string& path, const ImportOptions& options = {});
// The same from serialised bytes; `display_name` names the model in errors, and external data
// is read relative to `model_dir` (empty: refused).
ImportedModel ImportOnnxBytes(const std::string& bytes, const std::string& display_name,
                              const std::string& model_dir, const ImportOptions& options = {});

// A graph input the caller feeds (initialisers that are also listed as inputs are left out), as
// the file declares it: what `mxlite run` checks given tensors against and `mxlite bench` fills.
struct OnnxInputInfo {
  std::string name;
  DType dtype = DType::kFloat32;
  bool has_shape = false;               // false: the file declares no shape (any rank)
  std::vector<int64_t> dims;            // -1 where a dim is dynamic
  std::vector<std::string> dim_params;  // a dynamic dim's name ("batch"), else ""

  // "float32 (batch,3,224,224)"; "?" for an unnamed dynamic dim, "float32 (any shape)".
  std::string ToString() const;
  // Whether `shape` fits the declaration (same rank, equal static dims).
  bool Accepts(const Shape& shape) const;
};

// The graph inputs of the model at `path`, in declaration order. Checks only what this needs
// (a parsable model with a graph, tensor-typed inputs of supported dtypes).
std::vector<OnnxInputInfo> ReadOnnxInputs(const std::string& path);

// A model file read and parsed once, for a caller that looks at its inputs before importing it
// (`mxlite run` checks the given tensors first): Inputs() is ReadOnnxInputs and Import() is
// ImportOnnx, without reading the file again.
class OnnxModelFile {
 public:
  explicit OnnxModelFile(const std::string& path);  // errors name `path`
  ~OnnxModelFile();
  const std::string& path() const { return path_; }
  std::vector<OnnxInputInfo> Inputs() const;
  ImportedModel Import(const ImportOptions& options = {}) const;

 private:
  std::string path_, dir_;
  std::shared_ptr<const onnx::ModelProto> model_;
};

// The model's parameter values as arrays on `ctx`, for BindOptions::arrays.
std::map<std::string, NDArray> ParameterArrays(const ImportedModel& model, Context ctx);
// One host tensor as an array on `ctx`.
NDArray ToNDArray(const HostTensor& tensor, Context ctx);

}  // namespace mxlite
