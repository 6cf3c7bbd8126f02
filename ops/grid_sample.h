// grid_sample (ONNX's GridSample, PyTorch's torch.nn.functional.grid_sample): data of shape
// (N, C, D1, ..., Dr), r = 1 to 3 spatial axes, sampled at the points of `grid` (N, O1, ..., Or,
// r) whose last axis holds normalised coordinates in [-1, 1], the first the LAST spatial axis (x,
// then y, then z). Output (N, C, O1, ..., Or).
//
//   mode           nearest, linear (bilinear / trilinear) or cubic (Keys, a = -0.75), separable
//   padding_mode   zeros (taps outside read 0), border (the edge value), reflection (mirrored
//                  at the borders below)
//   align_corners  -1 and 1 are the centres of the corner elements (true) or their outer edges
//                  (false, the default)
//
// On each spatial axis of extent n, a normalised g becomes c = (g + 1) / 2 * (n - 1) (aligned)
// or ((g + 1) * n - 1) / 2; nearest rounds c half to even. The borders are [0, n - 1] (aligned)
// or [-0.5, n - 0.5]; a c outside them is clamped to [0, n - 1] (border) or reflected into them
// (reflection; 0 where they are one point). The taps around c (linear floor(c), floor(c) + 1;
// cubic floor(c) - 1 .. floor(c) + 2; nearest c itself) then read the data with the padding
// mode: zeros reads 0 outside [0, n), border the clamped index, reflection the reflected one.
// This is ONNX's reference (onnx.reference.ops.op_grid_sample), which follows PyTorch's; PyTorch's
// cubic differs outside the borders with border or reflection padding (it pads each tap, never
// the coordinate).
//
// Gradients: to the data, each output gradient times each tap's weight added at the tap (on the
// GPU with atomic adds, so the order of the sums varies: MXNET_ENFORCE_DETERMINISM=1 makes the
// GPU's data gradient an error); to the grid, the output gradient times the derivative of the
// sample in c times dc/dg (0 for nearest, and where border padding clamped c; reflection flips
// the sign at each mirroring).
//
// What the CPU kernels (ops/grid_sample.cc) and the GPU kernels (ops/cuda/grid_sample_gpu.cc)
// share: the node's geometry from its attributes and shapes, and the taps (grid_sample_taps.h).
#pragma once

#include <string>

#include "core/shape.h"
#include "ops/attributes.h"
#include "ops/grid_sample_taps.h"

namespace mxlite {

// "grid_sample NODE", for errors.
std::string GridSampleOwner(const std::string& node);

// The geometry of data of shape `data` sampled at `grid`; an error naming `owner` when data has
// not 3 to 5 axes, grid's rank or last extent does not match, or the batches differ.
GridSampleGeometry GridSampleGeometryOf(const Attributes& attrs, const Shape& data,
                                        const Shape& grid, const std::string& owner);

}  // namespace mxlite
