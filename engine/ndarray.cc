#include "engine/ndarray.h"

#include <cstring>
#include <sstream>

#include "core/half.h"
#include "memory/storage.h"

#if MXLITE_USE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace mxlite {

// Storage and var shared by an array, its copies and its slices. Destroying the last reference
// pushes the var's deletion, which frees the storage once every earlier op on it has run.
struct NDArray::Chunk {
  std::shared_ptr<Engine> engine;
  StorageHandle storage;
  VarHandle var = nullptr;

  Chunk(std::shared_ptr<Engine> owner, size_t bytes, Context ctx)
      : engine(std::move(owner)), storage(Storage::Global().Alloc(bytes, ctx)) {
    storage.ctx = ctx;  // a null handle (0 bytes) still knows where it lives
    var = engine->NewVar();
  }
  ~Chunk() {
    StorageHandle handle = storage;
    engine->DeleteVariable([handle](RunContext) { Storage::Global().Free(handle); }, handle.ctx,
                           var);
  }
  Chunk(const Chunk&) = delete;
  Chunk& operator=(const Chunk&) = delete;
};

namespace {

std::shared_ptr<Engine> EngineOrGlobal(std::shared_ptr<Engine> engine) {
  return engine ? std::move(engine) : Engine::GetShared();
}

// Copies `bytes` between two buffers of the given contexts on the op's stream (null for CPU).
void CopyBytes(void* to, Context to_ctx, const void* from, Context from_ctx, size_t bytes,
               void* stream) {
  if (bytes == 0) return;
  if (to_ctx.is_host() && from_ctx.is_host()) {
    std::memcpy(to, from, bytes);
    return;
  }
#if MXLITE_USE_CUDA
  cudaMemcpyKind kind = from_ctx.is_host() ? cudaMemcpyHostToDevice
                        : to_ctx.is_host() ? cudaMemcpyDeviceToHost
                                           : cudaMemcpyDeviceToDevice;
  cudaError_t status =
      (to_ctx.is_gpu() && from_ctx.is_gpu() && to_ctx != from_ctx)
          ? cudaMemcpyPeerAsync(to, to_ctx.device_id, from, from_ctx.device_id, bytes,
                                static_cast<cudaStream_t>(stream))
          : cudaMemcpyAsync(to, from, bytes, kind, static_cast<cudaStream_t>(stream));
  if (status != cudaSuccess) {
    cudaGetLastError();
    MX_THROW() << "copy " << from_ctx << " -> " << to_ctx << " of " << bytes
               << " bytes: " << cudaGetErrorString(status);
  }
#else
  (void)stream;
  MX_THROW() << "copy " << from_ctx << " -> " << to_ctx << ": mxlite was built without CUDA";
#endif
}

void PrintElement(std::ostream& out, const uint8_t* element, DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      out << *reinterpret_cast<const float*>(element);
      break;
    case DType::kFloat64:
      out << *reinterpret_cast<const double*>(element);
      break;
    case DType::kInt32:
      out << *reinterpret_cast<const int32_t*>(element);
      break;
    case DType::kInt64:
      out << *reinterpret_cast<const int64_t*>(element);
      break;
    case DType::kUInt8:
      out << static_cast<int>(*element);
      break;
    case DType::kFloat16: {
      uint16_t half;
      std::memcpy(&half, element, sizeof(half));
      out << HalfToFloat(half);
      break;
    }
    case DType::kBFloat16: {
      uint16_t half;
      std::memcpy(&half, element, sizeof(half));
      uint32_t bits = static_cast<uint32_t>(half) << 16;
      float value;
      std::memcpy(&value, &bits, sizeof(value));
      out << value;
      break;
    }
  }
}

// Prints axis `axis` of the block at `data`, NumPy style; axes longer than 2 * kEdge + 1 show
// their first and last kEdge entries.
void PrintAxis(std::ostream& out, const uint8_t* data, const Shape& shape, int axis, DType dtype) {
  constexpr int64_t kEdge = 3;
  if (axis == shape.ndim()) {
    PrintElement(out, data, dtype);
    return;
  }
  const int64_t extent = shape[axis];
  const size_t stride = static_cast<size_t>(shape.size(axis + 1, shape.ndim())) * DTypeSize(dtype);
  out << '[';
  for (int64_t i = 0; i < extent; ++i) {
    if (extent > 2 * kEdge + 1 && i == kEdge) {
      out << "..., ";
      i = extent - kEdge - 1;
      continue;
    }
    PrintAxis(out, data + i * stride, shape, axis + 1, dtype);
    if (i + 1 < extent) out << (axis + 1 == shape.ndim() ? ", " : ",\n ");
  }
  out << ']';
}

}  // namespace

NDArray::NDArray(const Shape& shape, Context ctx, DType dtype, std::shared_ptr<Engine> engine)
    : chunk_(std::make_shared<Chunk>(EngineOrGlobal(std::move(engine)),
                                     static_cast<size_t>(shape.size()) * DTypeSize(dtype), ctx)),
      shape_(shape),
      dtype_(dtype) {}

NDArray NDArray::Zeros(const Shape& shape, Context ctx, DType dtype,
                       std::shared_ptr<Engine> engine) {
  NDArray array(shape, ctx, dtype, std::move(engine));
  void* data = array.data();
  size_t bytes = array.bytes();
  array.engine().PushSync(
      [data, bytes](RunContext rctx) {
        if (bytes == 0) return;
        if (rctx.ctx.is_host()) {
          std::memset(data, 0, bytes);
          return;
        }
#if MXLITE_USE_CUDA
        cudaError_t status =
            cudaMemsetAsync(data, 0, bytes, static_cast<cudaStream_t>(rctx.stream));
        MX_CHECK(status == cudaSuccess) << "cudaMemsetAsync: " << cudaGetErrorString(status);
#endif
      },
      ctx, {}, {array.var()}, 0, "zeros");
  return array;
}

Context NDArray::ctx() const {
  MX_CHECK(chunk_ != nullptr) << "empty NDArray";
  return chunk_->storage.ctx;
}

VarHandle NDArray::var() const {
  MX_CHECK(chunk_ != nullptr) << "empty NDArray";
  return chunk_->var;
}

Engine& NDArray::engine() const {
  MX_CHECK(chunk_ != nullptr) << "empty NDArray";
  return *chunk_->engine;
}

void* NDArray::data() const {
  MX_CHECK(chunk_ != nullptr) << "empty NDArray";
  if (chunk_->storage.ptr == nullptr) return nullptr;
  return static_cast<uint8_t*>(chunk_->storage.ptr) + byte_offset_;
}

void NDArray::WaitToRead() const { engine().WaitForVar(var()); }
void NDArray::WaitToWrite() const { engine().WaitForVar(var()); }

NDArray NDArray::Slice(int64_t begin, int64_t end) const {
  MX_CHECK(chunk_ != nullptr) << "slice of an empty NDArray";
  MX_CHECK_GE(shape_.ndim(), 1) << "slice of a scalar";
  MX_CHECK(0 <= begin && begin <= end && end <= shape_[0])
      << "slice [" << begin << ", " << end << ") of shape " << shape_;
  NDArray slice = *this;
  slice.shape_[0] = end - begin;
  slice.byte_offset_ += static_cast<size_t>(begin) *
                        static_cast<size_t>(shape_.size(1, shape_.ndim())) * DTypeSize(dtype_);
  return slice;
}

NDArray NDArray::CopyTo(Context ctx) const {
  NDArray copy(shape_, ctx, dtype_, chunk_->engine);
  CopyFromTo(*this, copy);
  return copy;
}

void CopyFromTo(const NDArray& from, const NDArray& to, int priority) {
  MX_CHECK(!from.is_none() && !to.is_none()) << "copy with an empty NDArray";
  MX_CHECK(from.shape() == to.shape()) << "copy " << from.shape() << " into " << to.shape();
  MX_CHECK(from.dtype() == to.dtype()) << "copy " << from.dtype() << " into " << to.dtype();
  MX_CHECK(&from.engine() == &to.engine()) << "copy between arrays of different engines";
  const Context from_ctx = from.ctx(), to_ctx = to.ctx();
  // GPU involved: run on that GPU's copy threads (the source GPU for GPU-to-GPU copies).
  Context run_ctx = Context::CPU();
  FnProperty property = FnProperty::kNormal;
  if (from_ctx.is_gpu()) {
    run_ctx = from_ctx;
    property = FnProperty::kCopyFromGpu;
  } else if (to_ctx.is_gpu()) {
    run_ctx = to_ctx;
    property = FnProperty::kCopyToGpu;
  }
  void* destination = to.data();
  const void* source = from.data();
  size_t bytes = from.bytes();
  from.engine().PushSync(
      [=](RunContext rctx) {
        CopyBytes(destination, to_ctx, source, from_ctx, bytes, rctx.stream);
      },
      run_ctx, {from.var()}, {to.var()}, priority, "CopyFromTo", {property, OpOrigin::kImperative});
}

void NDArray::SyncCopyFromCPU(const void* source, size_t bytes) {
  MX_CHECK_EQ(bytes, this->bytes()) << "SyncCopyFromCPU into " << shape_ << " " << dtype_;
  Context ctx = this->ctx();
  void* destination = data();
  FnProperty property = ctx.is_gpu() ? FnProperty::kCopyToGpu : FnProperty::kNormal;
  engine().PushSync(
      [=](RunContext rctx) {
        CopyBytes(destination, ctx, source, Context::CPU(), bytes, rctx.stream);
      },
      ctx, {}, {var()}, 0, "SyncCopyFromCPU", {property, OpOrigin::kImperative});
  WaitToRead();
}

void NDArray::SyncCopyToCPU(void* destination, size_t bytes) const {
  MX_CHECK_EQ(bytes, this->bytes()) << "SyncCopyToCPU from " << shape_ << " " << dtype_;
  Context ctx = this->ctx();
  const void* source = data();
  FnProperty property = ctx.is_gpu() ? FnProperty::kCopyFromGpu : FnProperty::kNormal;
  // A read poisons nothing, so a failure of the copy itself is carried back here directly.
  std::exception_ptr failure;
  engine().PushSync(
      [=, &failure](RunContext rctx) {
        try {
          CopyBytes(destination, Context::CPU(), source, ctx, bytes, rctx.stream);
        } catch (...) {
          failure = std::current_exception();
        }
      },
      ctx, {var()}, {}, 0, "SyncCopyToCPU", {property, OpOrigin::kImperative});
  WaitToRead();
  if (failure) std::rethrow_exception(failure);
}

std::string NDArray::ToString() const {
  std::ostringstream out;
  if (is_none()) return "NDArray (none)";
  out << "NDArray " << shape_ << " " << dtype_ << " @" << ctx() << "\n";
  std::vector<uint8_t> host(bytes());
  SyncCopyToCPU(host.data(), host.size());
  PrintAxis(out, host.data(), shape_, 0, dtype_);
  return out.str();
}

std::ostream& operator<<(std::ostream& out, const NDArray& array) {
  return out << array.ToString();
}

}  // namespace mxlite
