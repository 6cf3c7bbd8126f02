// grid_sample (ops/grid_sample.h): the OpDef and the CPU kernels. Per batch item, the points'
// tap combinations (offset into a data plane, weight) are computed once, split over the intra-op
// threads, then every channel reads (forward) or scatters into (the data gradient; threads own
// channels, so no two write one element) its plane through them. The grid gradient goes point by
// point over the channels.
#include "ops/grid_sample.h"

#include <algorithm>
#include <vector>

#include "core/error.h"
#include "ops/cpu/elementwise.h"
#include "ops/operator.h"

namespace mxlite {

std::string GridSampleOwner(const std::string& node) { return "grid_sample " + node; }

GridSampleGeometry GridSampleGeometryOf(const Attributes& attrs, const Shape& data,
                                        const Shape& grid, const std::string& owner) {
  MX_CHECK(data.ndim() >= 3 && data.ndim() <= 2 + kGridSampleMaxAxes)
      << owner << ": data has shape " << data << "; expected (N, C) and 1 to " << kGridSampleMaxAxes
      << " spatial axes";
  const int axes = data.ndim() - 2;
  MX_CHECK(grid.ndim() == data.ndim() && grid[grid.ndim() - 1] == axes)
      << owner << ": grid has shape " << grid << "; for data " << data << " it must be (N, "
      << "O1, ..., O" << axes << ", " << axes << ")";
  MX_CHECK(grid[0] == data[0]) << owner << ": grid's batch " << grid[0] << " differs from data's "
                               << data[0];
  GridSampleGeometry g;
  g.axes = axes;
  g.batch = data[0];
  g.channels = data[1];
  for (int a = 0; a < axes; ++a) g.extent[a] = data[2 + a];
  g.points = grid.size(1, grid.ndim() - 1);
  const std::string mode = attrs.GetString("mode");
  g.mode = mode == "nearest" ? GridSampleMode::kNearest
           : mode == "cubic" ? GridSampleMode::kCubic
                             : GridSampleMode::kLinear;
  const std::string padding = attrs.GetString("padding_mode");
  g.padding = padding == "border"       ? GridSamplePadding::kBorder
              : padding == "reflection" ? GridSamplePadding::kReflection
                                        : GridSamplePadding::kZeros;
  g.align_corners = attrs.GetBool("align_corners");
  for (int a = 0; a < axes; ++a) {
    MX_CHECK(g.extent[a] > 0 || g.points == 0)
        << owner << ": data " << data << " has an empty spatial axis to sample";
  }
  return g;
}

namespace {

// Every point's tap combinations for one batch item: offset[p * combos + k] into a data plane (-1
// reads zero) with weight[p * combos + k].
template <typename T>
struct PointTable {
  int combos = 0;
  int64_t* offset = nullptr;
  T* weight = nullptr;
};

// A table for every point of one batch item, in the call's scratch memory.
template <typename T>
PointTable<T> NewTable(const OpContext& ctx, const GridSampleGeometry& g) {
  PointTable<T> table;
  table.combos = GridCombinations(g);
  const int64_t entries = std::max<int64_t>(g.points * table.combos, 1);
  table.offset = ctx.scratch->GetArray<int64_t>(entries);
  table.weight = ctx.scratch->GetArray<T>(entries);
  return table;
}

// Fills `table` with the taps of the points of one batch item's grid.
template <typename T>
void FillTable(const GridSampleGeometry& g, const T* grid, const PointTable<T>& table) {
  cpu::ForEachRowRange(g.points, 8 * table.combos, [&](int64_t first, int64_t last) {
    GridAxisTaps<T> taps[kGridSampleMaxAxes];
    int tap[kGridSampleMaxAxes];
    for (int64_t p = first; p < last; ++p) {
      GridPointTaps<T>(g, grid + p * g.axes, taps);
      for (int k = 0; k < table.combos; ++k) {
        const int64_t at = p * table.combos + k;
        table.offset[at] = GridCombination(g, taps, k, tap);
        table.weight[at] = GridCombinationWeight(g, taps, tap);
      }
    }
  });
}

template <typename T>
void Forward(const OpContext& ctx, const GridSampleGeometry& g, const T* data, const T* grid,
             T* out) {
  const int64_t plane = g.plane();
  const PointTable<T> table = NewTable<T>(ctx, g);
  const int combos = table.combos;
  for (int64_t n = 0; n < g.batch; ++n) {
    FillTable(g, grid + n * g.points * g.axes, table);
    cpu::ForEachRowRange(g.channels, g.points * combos, [&](int64_t first, int64_t last) {
      for (int64_t c = first; c < last; ++c) {
        const T* in = data + (n * g.channels + c) * plane;
        T* y = out + (n * g.channels + c) * g.points;
        for (int64_t p = 0; p < g.points; ++p) {
          const int64_t* offset = table.offset + p * combos;
          const T* weight = table.weight + p * combos;
          T sum = T(0);
          for (int k = 0; k < combos; ++k) {
            if (offset[k] >= 0) sum += weight[k] * in[offset[k]];
          }
          y[p] = sum;
        }
      }
    });
  }
}

template <typename T>
void DataGradient(const OpContext& ctx, const GridSampleGeometry& g, const T* grid, const T* dy,
                  T* dx) {
  const int64_t plane = g.plane();
  std::fill(dx, dx + g.batch * g.channels * plane, T(0));
  const PointTable<T> table = NewTable<T>(ctx, g);
  const int combos = table.combos;
  for (int64_t n = 0; n < g.batch; ++n) {
    FillTable(g, grid + n * g.points * g.axes, table);
    cpu::ForEachRowRange(g.channels, g.points * combos, [&](int64_t first, int64_t last) {
      for (int64_t c = first; c < last; ++c) {
        T* target = dx + (n * g.channels + c) * plane;
        const T* grad = dy + (n * g.channels + c) * g.points;
        for (int64_t p = 0; p < g.points; ++p) {
          const int64_t* offset = table.offset + p * combos;
          const T* weight = table.weight + p * combos;
          for (int k = 0; k < combos; ++k) {
            if (offset[k] >= 0) target[offset[k]] += weight[k] * grad[p];
          }
        }
      }
    });
  }
}

// d out / d c on each axis, through the weights' slopes, summed over the channels with dy.
template <typename T>
void GridGradient(const GridSampleGeometry& g, const T* data, const T* grid, const T* dy,
                  T* dgrid) {
  const int64_t plane = g.plane();
  const int combos = GridCombinations(g);
  cpu::ForEachRowRange(
      g.batch * g.points, g.channels * combos * g.axes, [&](int64_t first, int64_t last) {
        GridAxisTaps<T> taps[kGridSampleMaxAxes];
        int tap[kGridSampleMaxAxes];
        for (int64_t np = first; np < last; ++np) {
          const int64_t n = np / g.points, p = np % g.points;
          GridPointTaps<T>(g, grid + np * g.axes, taps);
          T slope[kGridSampleMaxAxes] = {};
          for (int k = 0; k < combos; ++k) {
            const int64_t offset = GridCombination(g, taps, k, tap);
            if (offset < 0) continue;
            // Sum over the channels of dy times the tap's value.
            T weighted = T(0);
            for (int64_t c = 0; c < g.channels; ++c) {
              const int64_t plane_index = n * g.channels + c;
              weighted += dy[plane_index * g.points + p] * data[plane_index * plane + offset];
            }
            for (int a = 0; a < g.axes; ++a) {
              slope[a] += GridCombinationSlope(g, taps, tap, a) * weighted;
            }
          }
          // The grid's last axis lists x (the data's last spatial axis) first.
          for (int a = 0; a < g.axes; ++a) {
            dgrid[np * g.axes + (g.axes - 1 - a)] = slope[a] * taps[a].coordinate_slope;
          }
        }
      });
}

GridSampleGeometry GeometryOf(const OpContext& ctx, const Attributes& attrs, const Shape& data,
                              const Shape& grid) {
  return GridSampleGeometryOf(attrs, data, grid, GridSampleOwner(ctx.node_name));
}

void ForwardCpu(const OpContext& ctx, const Attributes& attrs,
                const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const GridSampleGeometry g = GeometryOf(ctx, attrs, inputs[0].shape, inputs[1].shape);
  MXLITE_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, GridSampleOwner(ctx.node_name), {
    Forward<T>(ctx, g, inputs[0].data_as<T>(), inputs[1].data_as<T>(), outputs[0].data_as<T>());
  });
}

void BackwardCpu(const OpContext& ctx, const Attributes& attrs,
                 const std::vector<TensorView>& output_grads, const std::vector<TensorView>& inputs,
                 const std::vector<TensorView>&, const std::vector<TensorView>& input_grads,
                 const std::vector<WriteMode>& req) {
  const GridSampleGeometry g = GeometryOf(ctx, attrs, inputs[0].shape, inputs[1].shape);
  MXLITE_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, GridSampleOwner(ctx.node_name), {
    const T* dy = output_grads[0].data_as<T>();
    if (req[0] != WriteMode::kNull) {
      DataGradient<T>(ctx, g, inputs[1].data_as<T>(), dy, input_grads[0].data_as<T>());
    }
    if (req[1] != WriteMode::kNull) {
      GridGradient<T>(g, inputs[0].data_as<T>(), inputs[1].data_as<T>(), dy,
                      input_grads[1].data_as<T>());
    }
  });
}

}  // namespace

MXLITE_REGISTER_OP(grid_sample) {
  OpDef op;
  op.name = "grid_sample";
  op.doc =
      "data (N, C, D1..Dr) sampled at grid (N, O1..Or, r) of normalised coordinates: nearest, "
      "linear or cubic; zeros, border or reflection padding (ONNX's GridSample, PyTorch's "
      "grid_sample).";
  op.attributes.Enum("mode", {"linear", "nearest", "cubic"}, "the interpolation", Default("linear"))
      .Enum("padding_mode", {"zeros", "border", "reflection"}, "what taps outside the data read",
            Default("zeros"))
      .Bool("align_corners", "-1 and 1 are the corner elements' centres (else their outer edges)",
            Default("false"));
  op.input_names = [](const Attributes&) { return std::vector<std::string>{"data", "grid"}; };
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output"}; };
  op.infer_shape = [](const Attributes& attrs, ShapeInference& shapes) {
    const Shape& data = shapes.Input(0);
    const Shape& grid = shapes.Input(1);
    GridSampleGeometryOf(attrs, data, grid, shapes.op + " " + shapes.node);
    Shape out = grid;
    out[1] = data[1];
    for (int a = 1; a < grid.ndim() - 1; ++a) out[a + 1] = grid[a];
    shapes.AssignOutput(0, out);
  };
  op.backward_dependencies = [](const Attributes&) -> BackwardDependencies {
    return {{true, true}, {false}};
  };
  op.forward[DeviceType::kCPU] = ForwardCpu;
  op.backward[DeviceType::kCPU] = BackwardCpu;
  return op;
}

}  // namespace mxlite
