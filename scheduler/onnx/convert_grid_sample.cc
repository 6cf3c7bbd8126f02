// ONNX GridSample imports to mxlite's grid_sample (ops/grid_sample.h). Opsets 16-19 name the
// modes bilinear, nearest and bicubic and take 4-D data; from 20 they are linear, nearest and
// cubic on data of any rank (mxlite: 1 to 3 spatial axes). A grid of another float dtype than the
// data is cast to the data's.
#include "core/error.h"
#include "scheduler/onnx/onnx_converter.h"

namespace mxlite {
namespace {

void EmitGridSample(OnnxNode& node, const std::string& mode) {
  const std::string padding = node.attrs().String("padding_mode", "zeros");
  MX_CHECK(padding == "zeros" || padding == "border" || padding == "reflection")
      << node.where() << ": padding_mode '" << padding
      << "' is not one of zeros, border and reflection";
  const int64_t align_corners = node.attrs().Int("align_corners", 0);
  MX_CHECK(align_corners == 0 || align_corners == 1)
      << node.where() << ": align_corners is " << align_corners << "; it must be 0 or 1";
  const DType data = node.InputDType(0);
  const NodeEntry grid =
      node.InputDType(1) == data
          ? node.Input(1)
          : node.Emit("Cast", {{"dtype", DTypeName(data)}}, {node.Input(1)}, "_grid");
  node.SetOutput(0, node.Emit("grid_sample",
                              {{"mode", mode},
                               {"padding_mode", padding},
                               {"align_corners", align_corners == 1 ? "true" : "false"}},
                              {node.Input(0), grid}));
}

// Opsets 16-19: bilinear (the default), nearest, bicubic.
void ConvertGridSample16(OnnxNode& node) {
  const std::string mode = node.attrs().String("mode", "bilinear");
  MX_CHECK(mode == "bilinear" || mode == "nearest" || mode == "bicubic")
      << node.where() << ": mode '" << mode << "' is not one of bilinear, nearest and bicubic";
  EmitGridSample(node, mode == "bilinear" ? "linear" : mode == "bicubic" ? "cubic" : "nearest");
}

// Opsets 20-21: linear (the default), nearest, cubic.
void ConvertGridSample20(OnnxNode& node) {
  const std::string mode = node.attrs().String("mode", "linear");
  MX_CHECK(mode == "linear" || mode == "nearest" || mode == "cubic")
      << node.where() << ": mode '" << mode << "' is not one of linear, nearest and cubic";
  EmitGridSample(node, mode);
}

}  // namespace

MXLITE_REGISTER_ONNX_CONVERTER(GridSample, 16, 19, ConvertGridSample16);
MXLITE_REGISTER_ONNX_CONVERTER(GridSample, 20, kMaxOnnxOpset, ConvertGridSample20);

}  // namespace mxlite
