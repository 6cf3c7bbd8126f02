// TensorView: a non-owning view of a dense, row-major tensor — pointer, shape, dtype, device.
// Kernels receive views; owners (NDArray, the executor's memory plan, tests) keep the memory alive.
//
// ScratchSpace: temporary memory for one kernel call (im2col buffers, workspaces), taken from a
// TempSpace when the caller has one, else from the pooled allocator — never from fresh mallocs,
// whose pages fault on first touch — and given back when the ScratchSpace is destroyed (on a GPU
// after the call's stream is synchronised, since kernels may still be using it). Not thread-safe:
// one per kernel call; a kernel asks for its memory before it goes parallel.
//
// TempSpace: a persistent buffer that the kernels of one executor share one at a time (the
// executor orders them with an engine variable; MXNET_EXEC_NUM_TEMP of them per executor). A
// call that needs more than it holds takes the rest from the pool, and the TempSpace grows to the
// high-water mark when the call ends, so steady state allocates nothing.
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

class TempSpace {
 public:
  explicit TempSpace(Context ctx) : ctx_(ctx) {}
  ~TempSpace();
  TempSpace(const TempSpace&) = delete;
  TempSpace& operator=(const TempSpace&) = delete;
  size_t capacity() const { return block_.size; }
  // The current block (null before the first call that needed one); valid until it grows.
  const void* data() const { return block_.ptr; }

 private:
  friend class ScratchSpace;
  Context ctx_;
  StorageHandle block_;  // owned; replaced by a larger one when a call needed more
};

class ScratchSpace {
 public:
  // `stream`: the call's cudaStream_t on a GPU. `backing`: the TempSpace to draw from, if any.
  explicit ScratchSpace(Context ctx, void* stream = nullptr, TempSpace* backing = nullptr)
      : ctx_(ctx), stream_(stream), backing_(backing) {}
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
  size_t bytes_requested() const { return bytes_asked_; }

 private:
  Context ctx_;
  void* stream_;
  TempSpace* backing_;
  size_t backing_used_ = 0;  // bytes handed out from backing_
  size_t bytes_asked_ = 0;   // all bytes handed out, aligned (the high-water mark for backing_)
  std::vector<StorageHandle> blocks_;  // from the pool
};

// Waits for the work queued on a GPU stream (nothing for the CPU).
void SynchronizeStream(Context ctx, void* stream);

// One case of a dtype switch: `body` with `T` bound to `type` (for the switches below and the
// GPU's in ops/cuda/cuda_util.h).
#define MXLITE_DTYPE_CASE(enumerator, type, T, ...) \
  case ::mxlite::DType::enumerator: {               \
    using T = type;                                 \
    __VA_ARGS__;                                    \
    break;                                          \
  }

// Runs `body` with `T` bound to the C++ type of a floating dtype (float32 or float64); other
// dtypes are an error naming the op.
#define MXLITE_FLOAT_TYPE_SWITCH(dtype, T, op_name, ...)                                    \
  switch (dtype) {                                                                          \
    MXLITE_DTYPE_CASE(kFloat32, float, T, __VA_ARGS__)                                      \
    MXLITE_DTYPE_CASE(kFloat64, double, T, __VA_ARGS__)                                     \
    default:                                                                                \
      MX_THROW() << op_name << ": dtype " << (dtype) << " is not supported on this device " \
                 << "(float32 and float64 are)";                                            \
  }

}  // namespace mxlite
