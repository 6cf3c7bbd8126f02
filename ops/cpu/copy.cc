#include "ops/cpu/copy.h"

#include <algorithm>
#include <cstring>

#include "core/settings.h"
#include "ops/cpu/parallel.h"

namespace mxlite::cpu {

int64_t CopyParts(int64_t elements) {
  if (elements < settings().GetInt("MXNET_CPU_PARALLEL_COPY_SIZE")) return 1;
  return std::max<int64_t>(1, std::min<int64_t>(IntraOpThreads(), elements));
}

void CopyElements(const void* from, void* to, int64_t elements, size_t element_bytes) {
  if (from == to || elements <= 0) return;
  const char* source = static_cast<const char*>(from);
  char* target = static_cast<char*>(to);
  const int64_t parts = CopyParts(elements);
  if (parts == 1) {
    std::memcpy(target, source, static_cast<size_t>(elements) * element_bytes);
    return;
  }
  // Equal shares, one per thread: a memcpy is bound by memory, not by who copies which bytes.
  const int64_t share = (elements + parts - 1) / parts;
  ParallelFor(parts, [&](int64_t part) {
    const int64_t begin = part * share;
    const int64_t end = std::min(elements, begin + share);
    if (begin >= end) return;
    std::memcpy(target + begin * element_bytes, source + begin * element_bytes,
                static_cast<size_t>(end - begin) * element_bytes);
  });
}

}  // namespace mxlite::cpu
