// TensorView: a non-owning view of a dense, row-major tensor — pointer, shape, dtype, device.
// Kernels receive views; owners (NDArray, the executor's memory plan, tests) keep the memory alive.
//
// ScratchSpace: temporary memory for one kernel call (im2col buffers, workspaces), taken from the
// pooled allocator — never from fresh mallocs, whose pages fault on first touch — and given back
// when the ScratchSpace is destroyed. Not thread-safe: one per kernel call.
#pragma once

#include <cstdint>
#include <vector>

#include "core/context.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/shape.h"
#include "memory/pooled_storage_manager.h"

namespace mxlite {

struct TensorView {
  void* data = nullptr;
  Shape shape;
  DType dtype = DType::kFloat32;
  Context ctx;

  int64_t size() const { return shape.size(); }
  size_t bytes() const { return static_cast<size_t>(size()) * DTypeSize(dtype); }

  // Typed pointer; throws when T does not match the dtype.
  template <typename T>
  T* data_as() const {
    MX_CHECK(DTypeOf<T>::value == dtype)
        << "tensor of dtype " << dtype << " read as " << DTypeOf<T>::value;
    return static_cast<T*>(data);
  }
  // The same memory seen with another shape of the same element count.
  TensorView Reshaped(const Shape& new_shape) const {
    MX_CHECK_EQ(new_shape.size(), shape.size())
        << "cannot view " << shape << " as " << new_shape;
    return {data, new_shape, dtype, ctx};
  }
};

class ScratchSpace {
 public:
  explicit ScratchSpace(Context ctx) : ctx_(ctx) {}
  ~ScratchSpace();
  ScratchSpace(const ScratchSpace&) = delete;
  ScratchSpace& operator=(const ScratchSpace&) = delete;

  // `bytes` bytes aligned to 64, valid until this ScratchSpace is destroyed.
  void* Get(size_t bytes);
  template <typename T>
  T* GetArray(int64_t count) {
    return static_cast<T*>(Get(static_cast<size_t>(count) * sizeof(T)));
  }
  Context context() const { return ctx_; }
  // Bytes requested through Get so far, each request rounded up to the 64-byte alignment (what
  // the convolution algorithms' WorkspaceBytes promise; tests compare the two).
  size_t bytes_requested() const { return bytes_requested_; }

 private:
  Context ctx_;
  std::vector<StorageHandle> blocks_;
  size_t bytes_requested_ = 0;
};

// Runs `body` with `T` bound to the C++ type of a floating dtype (float32 or float64); other
// dtypes are an error naming the op.
#define MXLITE_FLOAT_TYPE_SWITCH(dtype, T, op_name, ...)                                     \
  switch (dtype) {                                                                           \
    case ::mxlite::DType::kFloat32: {                                                        \
      using T = float;                                                                       \
      __VA_ARGS__;                                                                           \
      break;                                                                                 \
    }                                                                                        \
    case ::mxlite::DType::kFloat64: {                                                        \
      using T = double;                                                                      \
      __VA_ARGS__;                                                                           \
      break;                                                                                 \
    }                                                                                        \
    default:                                                                                 \
      MX_THROW() << op_name << ": dtype " << (dtype) << " is not supported on this device "  \
                 << "(float32 and float64 are)";                                             \
  }

}  // namespace mxlite
