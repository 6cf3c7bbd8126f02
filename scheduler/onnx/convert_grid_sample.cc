// ONNX GridSample imports to mxlite's grid_sample (ops/grid_sample.h). Opsets 16-19 name the
// modes bilinear, nearest and bicubic and take 4-D data; from 20 they are linear, nearest and
// cubic on data of any rank (mxlite: 1 to 3 spatial axes). A grid of another float dtype than the
// data is cast to the data's. AffineGrid (opset 20), the grids a spatial transformer samples
// with, is the product of the output's base coordinates (a constant at load) with theta.
#include <vector>

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

// AffineGrid: theta (N, 2, 3) or (N, 3, 4) and size (N, C, H, W) or (N, C, D, H, W) (known at
// load) give the grid (N, H, W, 2) or (N, D, H, W, 3) whose point (d, h, w) is theta times
// (x_w, y_h[, z_d], 1): each coordinate of index i on an axis of n is -1 + 2 i / (n - 1) with
// align_corners (-1 where n is 1), else (2 i + 1) / n - 1. One MatMul of the base points (1,
// points, k + 1) with theta transposed (N, k + 1, k).
void ConvertAffineGrid(OnnxNode& node) {
  const std::string& where = node.where();
  const std::vector<int64_t> size = node.RequireConstant(1, "size").ToInt64s(where + " size");
  MX_CHECK(size.size() == 4 || size.size() == 5)
      << where << ": size holds " << size.size() << " values; expected (N, C, H, W) or (N, C, D, "
      << "H, W)";
  const int k = static_cast<int>(size.size()) - 2;  // spatial axes
  const Shape theta = node.InputShape(0);
  MX_CHECK(theta == Shape({size[0], k, k + 1}))
      << where << ": theta has shape " << theta << "; for size " << Tuple(size) << " expected ("
      << size[0] << ", " << k << ", " << k + 1 << ")";
  const bool aligned = node.attrs().Int("align_corners", 0) != 0;
  const auto coordinate = [&](int64_t i, int64_t n) {
    if (aligned) return n == 1 ? -1.0 : -1.0 + 2.0 * static_cast<double>(i) / (n - 1);
    return (2.0 * static_cast<double>(i) + 1.0) / static_cast<double>(n) - 1.0;
  };
  const std::vector<int64_t> extents(size.begin() + 2, size.end());  // (D,) H, W
  int64_t points = 1;
  for (int64_t e : extents) points *= e;
  std::vector<double> base;
  base.reserve(static_cast<size_t>(points * (k + 1)));
  for (int64_t p = 0; p < points; ++p) {
    std::vector<int64_t> index(static_cast<size_t>(k));  // of point p, the last axis fastest
    int64_t below = 1;
    for (int a = k - 1; a >= 0; --a) {
      index[a] = p / below % extents[a];
      below *= extents[a];
    }
    for (int a = k - 1; a >= 0; --a) base.push_back(coordinate(index[a], extents[a]));  // x first
    base.push_back(1.0);
  }
  const NodeEntry points_entry = node.NewConstant(
      "_base", HostTensorOf(node.InputDType(0), Shape({1, points, k + 1}), base, where));
  const NodeEntry theta_t =
      node.Emit("transpose", {{"axes", "(0,2,1)"}}, {node.Input(0)}, "_theta_t");
  const NodeEntry grid = node.Emit("MatMul", {}, {points_entry, theta_t}, "_points");
  std::vector<int64_t> dims = {size[0]};
  dims.insert(dims.end(), extents.begin(), extents.end());
  dims.push_back(k);
  node.SetOutput(0, node.Emit("Reshape", {{"shape", Tuple(dims)}}, {grid}));
}

}  // namespace

MXLITE_REGISTER_ONNX_CONVERTER(GridSample, 16, 19, ConvertGridSample16);
MXLITE_REGISTER_ONNX_CONVERTER(GridSample, 20, kMaxOnnxOpset, ConvertGridSample20);
MXLITE_REGISTER_ONNX_CONVERTER(AffineGrid, 20, kMaxOnnxOpset, ConvertAffineGrid);

}  // namespace mxlite
