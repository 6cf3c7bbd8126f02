// A std::vector whose storage starts on a 64-byte boundary (a cache line, one AVX-512 vector), for
// kernel operands kept across calls (ops/cpu/conv_gemm.h PreparedConvWeight): a vector load never
// straddles two lines.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace mxlite::cpu {

template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlignment{64};

  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}

  T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlignment)); }
  void deallocate(T* p, size_t) { ::operator delete(p, kAlignment); }
  template <typename U>
  bool operator==(const CacheLineAllocator<U>&) const {
    return true;
  }
};

template <typename T>
using AlignedVector = std::vector<T, CacheLineAllocator<T>>;

}  // namespace mxlite::cpu
