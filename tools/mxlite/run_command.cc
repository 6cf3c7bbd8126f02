// `mxlite run MODEL.onnx --input NAME=FILE.pb ... --output-dir DIR`: one inference pass of an
// ONNX model; each output is written as DIR/output_<i>.pb, an ONNX TensorProto named after the
// graph output (the format of the ONNX test data, so expected outputs compare file to file).
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "core/error.h"
#include "tools/mxlite/command_line.h"
#include "tools/mxlite/commands.h"
#include "tools/mxlite/model_session.h"

namespace mxlite::cli {

namespace {

namespace fs = std::filesystem;

std::vector<FlagSpec> RunFlags() {
  return {
      {"input", true, "NAME=FILE.pb: a model input from a TensorProto file (repeat per input)",
       true},
      {"output-dir", true, "folder for output_0.pb, output_1.pb, ... (created when missing)"},
      DeviceFlag(),
      EngineFlag(),
      DTypeFlag(),
      {"help", false, "show this help"},
  };
}

void PrintHelp() {
  std::cout << "usage: mxlite run MODEL.onnx --input NAME=FILE.pb [--input ...] --output-dir DIR\n"
               "                  [--device cpu|gpu] [--engine TYPE] [--dtype float32|float16|float64]\n\n"
               "Imports an ONNX model, runs one inference pass on the given inputs and writes\n"
               "output i as DIR/output_<i>.pb: an ONNX TensorProto named after the graph output,\n"
               "as in the ONNX test data (test_data_set_*/output_*.pb). Every graph input that\n"
               "is not an initialiser must be given, with the declared dtype and shape (dynamic\n"
               "dims take any size). Files are written under a temporary name and renamed.\n\n"
               "flags:\n"
            << FlagsHelp(RunFlags())
            << "\nexample:\n"
               "  d=/usr/share/libonnx-testdata/data/node/test_conv_with_strides_padding\n"
               "  mxlite run $d/model.onnx --input x=$d/test_data_set_0/input_0.pb \\\n"
               "      --input W=$d/test_data_set_0/input_1.pb --output-dir /tmp/out\n";
}

// Reads every --input NAME=FILE.pb; `sources` gets each name's file, for messages.
std::map<std::string, HostTensor> ReadInputs(const ParsedArgs& args,
                                             std::map<std::string, std::string>& sources) {
  std::map<std::string, HostTensor> inputs;
  for (const std::string& spec : args.Values("input")) {
    const size_t equals = spec.find('=');
    MX_CHECK(equals != std::string::npos && equals > 0 && equals + 1 < spec.size())
        << "--input '" << spec << "' should be NAME=FILE.pb";
    const std::string name = spec.substr(0, equals), file = spec.substr(equals + 1);
    MX_CHECK(!inputs.count(name)) << "input '" << name << "' is given twice (" << sources[name]
                                  << " and " << file << ")";
    inputs[name] = ReadTensorFile(file);
    sources[name] = file;
  }
  return inputs;
}

// Writes `tensor` to dir/file through a temporary name, so a reader never sees half a file.
void WriteOutput(const fs::path& dir, const std::string& file, const HostTensor& tensor,
                 const std::string& name) {
  const fs::path final_path = dir / file;
  const fs::path temporary = dir / ("." + file + ".tmp." + std::to_string(getpid()));
  try {
    WriteTensorFile(temporary.string(), tensor, name);
    fs::rename(temporary, final_path);
  } catch (...) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    throw;
  }
}

}  // namespace

int RunRunCommand(const std::vector<std::string>& args) {
  const std::vector<FlagSpec> flags = RunFlags();
  ParsedArgs parsed = Parse("mxlite run", flags, args);
  if (parsed.Has("help")) {
    PrintHelp();
    return 0;
  }
  const std::string model_path = ModelPath(parsed, "mxlite run");
  const std::optional<std::string> output_dir = parsed.Value("output-dir");
  MX_CHECK(output_dir && !output_dir->empty())
      << "'mxlite run' needs --output-dir DIR (where output_<i>.pb go)";
  const Context ctx = ParseDevice(parsed.Value("device"));
  ApplyEngine(parsed.Value("engine"));

  std::map<std::string, std::string> sources;
  const std::map<std::string, HostTensor> inputs = ReadInputs(parsed, sources);
  const OnnxModelFile model(model_path);  // read and parsed once
  CheckInputs(model_path, model.Inputs(), inputs, sources);

  BoundModel bound = BindOnnxModel(
      model, inputs, {.ctx = ctx, .fold_inputs = true, .dtype = ParseDTypeFlag(parsed)});
  RunForward(*bound.executor);

  const fs::path dir = *output_dir;
  std::error_code error;
  fs::create_directories(dir, error);
  MX_CHECK(!error && fs::is_directory(dir))
      << "--output-dir '" << dir.string() << "' cannot be created: " << error.message();
  const std::vector<NDArray>& outputs = bound.executor->outputs();
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string file = "output_" + std::to_string(i) + ".pb";
    const HostTensor tensor = ToHostTensor(outputs[i]);
    WriteOutput(dir, file, tensor, bound.model.output_names[i]);
    std::cout << (dir / file).string() << ": '" << bound.model.output_names[i] << "' "
              << DTypeName(tensor.dtype) << " " << tensor.shape.ToString() << "\n";
  }
  return 0;
}

}  // namespace mxlite::cli
