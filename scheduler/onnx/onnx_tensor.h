// ONNX TensorProto <-> host tensors, with the checks an untrusted file needs.
//
// A HostTensor is a plain value (dtype, shape, little-endian bytes) owned by whoever holds it; it
// is what the ONNX importer returns for initialisers and what the conformance runner reads from
// the ONNX test data (test_data_set_*/input_*.pb). Reading never trusts the file: dims must be
// non-negative, their product must not overflow nor exceed kMaxOnnxTensorElements, the data
// (raw_data, the typed fields or an external file) must hold exactly that many elements, and
// external data must lie inside the model's folder. Every failure is an mxlite::Error that names
// the file and the tensor. Functions are free of shared state and safe to call from any thread.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/shape.h"

namespace onnx {
class TensorProto;
}

namespace mxlite {

// The most elements one tensor of a model may have (8 GiB of float32): larger is refused before
// anything is allocated.
inline constexpr int64_t kMaxOnnxTensorElements = int64_t{1} << 31;
// The most elements of a constant the importer computes itself from a node's attributes and
// shapes (EyeLike, ConstantOfShape): what a model writes there is a mask or a filler, not a
// parameter, and a shape of a billion elements is a malformed file, not a model.
inline constexpr int64_t kMaxGeneratedConstantElements = int64_t{1} << 26;

struct HostTensor {
  DType dtype = DType::kFloat32;
  Shape shape;
  std::vector<uint8_t> bytes;  // shape.size() * DTypeSize(dtype) bytes, little-endian

  int64_t num_elements() const { return shape.size(); }
  // The elements as int64 (integer dtypes only; throws naming `what` otherwise).
  std::vector<int64_t> ToInt64s(const std::string& what) const;
  // The elements as double (float32/64 and the integer dtypes; throws naming `what` otherwise).
  std::vector<double> AsDoubles(const std::string& what) const;

  template <typename T>
  static HostTensor From(const std::vector<T>& values, const Shape& shape) {
    HostTensor tensor{DTypeOf<T>::value, shape, std::vector<uint8_t>(values.size() * sizeof(T))};
    if (!values.empty()) std::memcpy(tensor.bytes.data(), values.data(), tensor.bytes.size());
    return tensor;
  }
};

// A tensor of `dtype` holding `values` (values computed at load: folded shape arithmetic, Cast of
// a constant). Floating values stored in an integer dtype are truncated toward zero, as C++'s
// conversion does; float16 and bfloat16 are refused, naming `what`.
bool ComputableAtLoad(DType dtype);  // float32, float64, int32, int64, uint8
HostTensor HostTensorOf(DType dtype, const Shape& shape, const std::vector<double>& values,
                        const std::string& what);
HostTensor HostTensorOf(DType dtype, const Shape& shape, const std::vector<int64_t>& values,
                        const std::string& what);

// The Shape of declared dims, checked: rank <= Shape::kMaxDims, every dim >= 0, the element count
// representable and <= kMaxOnnxTensorElements. `where` names the tensor in the error.
Shape CheckedOnnxShape(const std::vector<int64_t>& dims, const std::string& where);
// `shape` when a constant of it may be generated at load (kMaxGeneratedConstantElements), else an
// error naming `where`.
const Shape& CheckedGeneratedShape(const Shape& shape, const std::string& where);

// The mxlite dtype of an ONNX TensorProto.DataType, or an error naming `where` and the type.
DType DTypeFromOnnx(int32_t onnx_type, const std::string& where);
// The dtype a value of ONNX element type `onnx_type` is held in: DTypeFromOnnx's, and uint8 0 / 1
// for BOOL (mxlite has no bool dtype; masks and conditions are uint8).
DType ValueDTypeFromOnnx(int32_t onnx_type, const std::string& where);
int32_t DTypeToOnnx(DType dtype);

// Converts a TensorProto. `where` names it in errors ("model.onnx: initializer 'w'");
// `model_dir` is the folder external data must stay inside (empty: external data is refused).
// BOOL tensors are read as uint8 0 / 1 (mxlite has no bool dtype; bools are computed at load).
HostTensor TensorFromProto(const onnx::TensorProto& proto, const std::string& where,
                           const std::string& model_dir);

// Reads a file holding one serialised TensorProto (the ONNX test-data format); returns its name
// in `name` when given.
HostTensor ReadTensorFile(const std::string& path, std::string* name = nullptr);
// Writes `tensor` as a TensorProto file named `name` inside (raw_data).
void WriteTensorFile(const std::string& path, const HostTensor& tensor, const std::string& name);

// Reads a whole file of at most `max_bytes` bytes (a clear error naming it otherwise).
std::string ReadFileBytes(const std::string& path, uint64_t max_bytes);

}  // namespace mxlite
