// Moving an activation between layouts (ops/activation_layout.h) on the CPU: the kernel of the
// layout_transform op and of the planner's timed transforms (scheduler/planning/layout_costs.h).
//
//   // NCHW (2, 32, 7, 7) -> NCHW16c (2, 2, 7, 7, 16)
//   TransformLayout(in, Shape{2, 32, 7, 7}, ActivationLayout::kNCHW, ActivationLayout::kNCHW16c,
//                   out, DType::kFloat32);
//
// Every pair of layouts is one permutation of a view of the tensor (NCHW -> NCHW16c transposes
// each block's 16 x (H*W) channel planes into (H*W) x 16; NHWC <-> NCHW16c moves whole 16-channel
// vectors), run by TransposeAxes (ops/cpu/transpose.h): tiled, over the intra-op pool, any dtype.
// `in` and `out` must not overlap; equal layouts copy. Errors name the shape when it is not 4-D or
// a blocked layout cannot hold its channels.
#pragma once

#include "core/dtype.h"
#include "core/shape.h"
#include "ops/activation_layout.h"

namespace mxlite::cpu {

// `in` holds a tensor of NCHW shape `nchw_shape` laid out as `from`; `out` receives it laid out
// as `to`.
void TransformLayout(const void* in, const Shape& nchw_shape, ActivationLayout from,
                     ActivationLayout to, void* out, DType dtype);

}  // namespace mxlite::cpu
