// Running an imported model in another floating dtype, MXNet's float16 recipe: the float32 data
// goes through a Cast into the body, the body computes in `dtype`, and every output comes back
// through a Cast to float32.
//
//   ImportedModel half = CastModelTo(ImportOnnx("resnet50.onnx"), DType::kFloat16);
//   // bind half.graph with ParameterArrays(half, Context::GPU(0)) as usual
//
// Float32 parameters lose their declared dtype and take the one their consumer infers: float16
// for weights, float32 for BatchNorm's statistics (ops/batch_norm.cc); their values are
// converted (float16 rounds to nearest even). Inputs, outputs and ONNX names are unchanged, so
// callers feed and read float32 as before; integer inputs and parameters are left alone.
// `dtype`: float16 or float64 (float32 returns the model as it is); others are an error.
#pragma once

#include "core/dtype.h"
#include "scheduler/onnx/onnx_import.h"

namespace mxlite {

ImportedModel CastModelTo(const ImportedModel& model, DType dtype);

}  // namespace mxlite
