// NDArray: a dense tensor (shape, dtype, context) whose storage comes from memory/ and whose
// reads and writes are ordered by one engine var.
//
//   NDArray a = NDArray::FromVector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3}, Context::CPU());
//   NDArray g = a.CopyTo(Context::GPU(0));   // pushed to the engine (GPU copy threads)
//   std::vector<float> back = g.ToVector<float>();  // waits, copies back
//   std::cout << a.Slice(1, 2);                // shares storage and var with `a`
//
// Ownership. Copies of an NDArray share one chunk (storage + var + engine); the chunk is released
// when the last NDArray using it goes: a DeleteVariable is pushed that frees the storage after
// every op already pushed on it. A slice shares its parent's chunk, so ops on a slice and on its
// parent are ordered by the same var. The chunk holds a reference to its engine, so arrays that
// outlive the global engine's static keep it alive.
//
// Access. Ops that use an array push with var() among their reads or writes and touch data() only
// inside the op. Outside ops, WaitToRead() before reading host data and WaitToWrite() before
// writing it; both rethrow an error of the op that last wrote the array (see engine.h). Host
// access (data(), ToVector, printing) needs a host context (cpu, cpu_pinned) unless noted.
//
// Thread safety: an NDArray object is a value; distinct objects (even sharing a chunk) may be used
// from different threads. Mutating one object from two threads needs external locking.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/shape.h"
#include "engine/engine.h"

namespace mxlite {

class NDArray {
 public:
  // An empty handle (is_none()).
  NDArray() = default;
  // Uninitialised storage for `shape` on `ctx`, ordered by `engine` (default: the global one).
  NDArray(const Shape& shape, Context ctx, DType dtype = DType::kFloat32,
          std::shared_ptr<Engine> engine = nullptr);

  // An array filled with `values` (shape.size() of them), copied in before this returns.
  template <typename T>
  static NDArray FromVector(const std::vector<T>& values, const Shape& shape, Context ctx,
                            std::shared_ptr<Engine> engine = nullptr) {
    MX_CHECK_EQ(static_cast<int64_t>(values.size()), shape.size()) << "values for " << shape;
    NDArray array(shape, ctx, DTypeOf<T>::value, std::move(engine));
    array.SyncCopyFromCPU(values.data(), values.size() * sizeof(T));
    return array;
  }
  // An array of zeros; the fill is pushed to the engine.
  static NDArray Zeros(const Shape& shape, Context ctx, DType dtype = DType::kFloat32,
                       std::shared_ptr<Engine> engine = nullptr);

  bool is_none() const { return chunk_ == nullptr; }
  const Shape& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  Context ctx() const;
  int64_t size() const { return shape_.size(); }
  size_t bytes() const { return static_cast<size_t>(shape_.size()) * DTypeSize(dtype_); }
  VarHandle var() const;
  Engine& engine() const;
  // Address of the first element (device memory for GPU arrays). Use inside ops or after a wait.
  void* data() const;
  template <typename T>
  T* data() const {
    MX_CHECK(DTypeOf<T>::value == dtype_)
        << "array of " << dtype_ << " read as " << DTypeOf<T>::value;
    return static_cast<T*>(data());
  }

  // What this handle refers to: its storage (with its var) and first element. An executor keeps
  // the identities of the arrays its prepared ops captured and checks them every pass. Holds no
  // storage (the array may be freed meanwhile) yet pins the chunk's address, so no later array
  // can match a freed one.
  struct Identity {
    std::weak_ptr<const void> chunk;
    size_t byte_offset = 0;
  };
  Identity identity() const { return {chunk_, byte_offset_}; }
  // Whether this handle refers to what `identity` was taken from (empty handles match each
  // other). Compares pointers only: no read of the chunk, so a check over many arrays stays cheap.
  bool Is(const Identity& identity) const {
    return identity.byte_offset == byte_offset_ && !identity.chunk.owner_before(chunk_) &&
           !chunk_.owner_before(identity.chunk);
  }

  // Block until pending writes (WaitToRead) or all pending uses (WaitToWrite) are done; the
  // engine waits for every earlier op on the var in both cases.
  void WaitToRead() const;
  void WaitToWrite() const;

  // Rows [begin, end) of the first axis; shares storage and var with this array.
  NDArray Slice(int64_t begin, int64_t end) const;
  // A new array on `ctx` with a copy of this one (pushed; not waited for).
  NDArray CopyTo(Context ctx) const;

  // Synchronous host copies: write this array from host memory / read it into host memory.
  // `bytes` must equal bytes(). Work for any context (GPU arrays go through a copy op).
  void SyncCopyFromCPU(const void* source, size_t bytes);
  void SyncCopyToCPU(void* destination, size_t bytes) const;
  template <typename T>
  std::vector<T> ToVector() const {
    MX_CHECK(DTypeOf<T>::value == dtype_)
        << "array of " << dtype_ << " read as " << DTypeOf<T>::value;
    std::vector<T> values(size());
    SyncCopyToCPU(values.data(), bytes());
    return values;
  }

  // "NDArray (2,3) float32 @cpu(0)" then the values, nested by axis (long axes elided). Waits.
  std::string ToString() const;

 private:
  struct Chunk;

  std::shared_ptr<Chunk> chunk_;
  Shape shape_;
  DType dtype_ = DType::kFloat32;
  size_t byte_offset_ = 0;  // of the first element inside the chunk's storage
};

// Pushes a copy of `from` into `to` (same shape and dtype, any contexts). Copies between the CPU
// and a GPU run on that GPU's copy threads; the copy is an imperative op for the profiler.
void CopyFromTo(const NDArray& from, const NDArray& to, int priority = 0);

std::ostream& operator<<(std::ostream& out, const NDArray& array);

}  // namespace mxlite
