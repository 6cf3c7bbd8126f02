#include "ops/cpu/reduce.h"

#include <algorithm>
#include <limits>

#include "core/error.h"
#include "ops/cpu/elementwise.h"
#include "ops/cpu/parallel.h"
#include "ops/cpu/softmax.h"  // ForEachRowRange

namespace mxlite::cpu {

ReduceRuns MergeRuns(const Shape& shape, const std::vector<bool>& reduced) {
  ReduceRuns runs;
  for (int axis = 0; axis < shape.ndim(); ++axis) {
    const int64_t extent = shape[axis];
    if (reduced[static_cast<size_t>(axis)]) runs.group *= extent;
    if (extent == 1) continue;  // belongs to no run: it changes no index
    if (!runs.extents.empty() && runs.reduced.back() == reduced[static_cast<size_t>(axis)]) {
      runs.extents.back() *= extent;
    } else {
      runs.extents.push_back(extent);
      runs.reduced.push_back(reduced[static_cast<size_t>(axis)]);
    }
  }
  if (runs.extents.empty()) {  // a scalar, or extents of 1 only
    runs.extents.push_back(1);
    runs.reduced.push_back(false);
  }
  return runs;
}

namespace {

template <typename T>
T Identity(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kSum:
      return T(0);
    case ReduceKind::kProd:
      return T(1);
    case ReduceKind::kMax:
      return std::numeric_limits<T>::lowest();
    case ReduceKind::kMin:
      return std::numeric_limits<T>::max();
  }
  return T(0);
}

template <typename T>
T Combine(ReduceKind kind, T a, T b) {
  switch (kind) {
    case ReduceKind::kSum:
      return a + b;
    case ReduceKind::kProd:
      return a * b;
    case ReduceKind::kMax:
      return std::max(a, b);
    case ReduceKind::kMin:
      return std::min(a, b);
  }
  return a;
}

// reduce(x[0..n)) with Eigen's vectorised reductions.
template <typename T>
T ReduceRow(ReduceKind kind, const T* x, int64_t n) {
  if (n == 0) return Identity<T>(kind);
  const auto row = EigenArray<const T>(x, n);
  switch (kind) {
    case ReduceKind::kSum:
      return row.sum();
    case ReduceKind::kProd:
      return row.prod();
    case ReduceKind::kMax:
      return row.maxCoeff();
    case ReduceKind::kMin:
      return row.minCoeff();
  }
  return T(0);
}

// acc[0..n) = acc op x[0..n).
template <typename T>
void CombineRows(ReduceKind kind, T* acc, const T* x, int64_t n) {
  EigenArray<T> a(acc, n);
  const auto b = EigenArray<const T>(x, n);
  switch (kind) {
    case ReduceKind::kSum:
      a += b;
      break;
    case ReduceKind::kProd:
      a *= b;
      break;
    case ReduceKind::kMax:
      a = a.max(b);
      break;
    case ReduceKind::kMin:
      a = a.min(b);
      break;
  }
}

// Rows shorter than this are not split among threads.
constexpr int64_t kSplitRowLength = 4 * kElementwiseGrain;

// y[o] = reduce(x[o * r .. (o + 1) * r)): contiguous rows.
template <typename T>
void ReduceRows(ReduceKind kind, int64_t outer, int64_t r, const T* x, T* y) {
  const int64_t threads = IntraOpThreads();
  if (outer >= threads || r < kSplitRowLength) {
    ForEachRowRange(outer, r, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) y[o] = ReduceRow(kind, x + o * r, r);
    });
    return;
  }
  // Few long rows (a global reduction): each row in `parts` pieces, then the pieces combined.
  const int64_t parts = std::min<int64_t>(threads * 4, r / kElementwiseGrain);
  const int64_t piece = (r + parts - 1) / parts;
  std::vector<T> partial(static_cast<size_t>(outer * parts));
  ParallelFor(outer * parts, [&](int64_t task) {
    const int64_t o = task / parts;
    const int64_t begin = (task % parts) * piece;
    const int64_t end = std::min(r, begin + piece);
    partial[static_cast<size_t>(task)] =
        begin < end ? ReduceRow(kind, x + o * r + begin, end - begin) : Identity<T>(kind);
  });
  for (int64_t o = 0; o < outer; ++o) {
    T result = Identity<T>(kind);
    for (int64_t p = 0; p < parts; ++p) {
      result = Combine(kind, result, partial[static_cast<size_t>(o * parts + p)]);
    }
    y[o] = result;
  }
}

// y[o, i] = reduce_k x[o, k, i]: rows of `inner` combined element-wise, in column blocks.
template <typename T>
void ReduceColumns(ReduceKind kind, int64_t outer, int64_t r, int64_t inner, const T* x, T* y) {
  constexpr int64_t kColumns = 512;
  const int64_t blocks = (inner + kColumns - 1) / kColumns;
  ForEachRowRange(outer * blocks, r * std::min(inner, kColumns), [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t o = item / blocks;
      const int64_t i0 = (item % blocks) * kColumns;
      const int64_t width = std::min(kColumns, inner - i0);
      T* acc = y + o * inner + i0;
      const T* rows = x + o * r * inner + i0;
      if (r == 0) {
        std::fill(acc, acc + width, Identity<T>(kind));
        continue;
      }
      std::copy(rows, rows + width, acc);
      for (int64_t k = 1; k < r; ++k) CombineRows(kind, acc, rows + k * inner, width);
    }
  });
}

template <typename T>
void ReducePass(ReduceKind kind, int64_t outer, int64_t r, int64_t inner, const T* x, T* y) {
  if (outer == 0 || inner == 0) return;
  if (inner == 1) {
    ReduceRows(kind, outer, r, x, y);
  } else {
    ReduceColumns(kind, outer, r, inner, x, y);
  }
}

int64_t Product(const std::vector<int64_t>& extents, size_t begin, size_t end) {
  int64_t product = 1;
  for (size_t i = begin; i < end; ++i) product *= extents[i];
  return product;
}

// Iterates the elements of a tensor of `runs` in order, tracking each one's output index.
class OutputIndex {
 public:
  OutputIndex(const ReduceRuns& runs, int64_t element) : runs_(runs) {
    const size_t n = runs.extents.size();
    index_.assign(n, 0);
    stride_.assign(n, 0);
    int64_t kept_stride = 1;
    for (size_t d = n; d-- > 0;) {
      if (!runs.reduced[d]) {
        stride_[d] = kept_stride;
        kept_stride *= runs.extents[d];
      }
    }
    for (size_t d = n; d-- > 0;) {
      index_[d] = element % runs.extents[d];
      element /= runs.extents[d];
      output_ += index_[d] * stride_[d];
    }
  }
  int64_t output() const { return output_; }
  void Next() {
    for (size_t d = index_.size(); d-- > 0;) {
      output_ += stride_[d];
      if (++index_[d] < runs_.extents[d]) return;
      output_ -= stride_[d] * index_[d];
      index_[d] = 0;
    }
  }

 private:
  const ReduceRuns& runs_;
  std::vector<int64_t> index_, stride_;
  int64_t output_ = 0;
};

int64_t Elements(const ReduceRuns& runs) { return Product(runs.extents, 0, runs.extents.size()); }

// fn(element, output index) for every element, in chunks on the intra-op threads.
template <typename Fn>
void ForEachElement(const ReduceRuns& runs, Fn&& fn) {
  ForEachChunk(Elements(runs), [&](int64_t begin, int64_t end) {
    OutputIndex at(runs, begin);
    for (int64_t e = begin; e < end; ++e, at.Next()) fn(e, at.output());
  });
}

}  // namespace

template <typename T>
void Reduce(ReduceKind kind, const ReduceRuns& runs, const T* x, T* y, double scale) {
  std::vector<int64_t> extents = runs.extents;
  std::vector<bool> reduced = runs.reduced;
  const int64_t outputs = [&] {
    int64_t count = 1;
    for (size_t d = 0; d < extents.size(); ++d) count *= reduced[d] ? 1 : extents[d];
    return count;
  }();
  std::vector<T> buffer, next;
  const T* source = x;
  // The innermost reduced run each pass; its kept neighbours merge after it.
  while (true) {
    size_t last = extents.size();
    int reduced_runs = 0;
    for (size_t d = 0; d < extents.size(); ++d) {
      if (reduced[d]) {
        last = d;
        ++reduced_runs;
      }
    }
    if (reduced_runs == 0) {  // nothing reduced: a copy
      std::copy(source, source + outputs, y);
      break;
    }
    const int64_t outer = Product(extents, 0, last);
    const int64_t inner = Product(extents, last + 1, extents.size());
    T* target = y;
    if (reduced_runs > 1) {
      next.resize(static_cast<size_t>(outer * inner));
      target = next.data();
    }
    ReducePass(kind, outer, extents[last], inner, source, target);
    if (reduced_runs == 1) break;
    buffer.swap(next);
    source = buffer.data();
    extents.erase(extents.begin() + static_cast<ptrdiff_t>(last));
    reduced.erase(reduced.begin() + static_cast<ptrdiff_t>(last));
    if (last > 0 && last < extents.size() && !reduced[last - 1] && !reduced[last]) {
      extents[last - 1] *= extents[last];
      extents.erase(extents.begin() + static_cast<ptrdiff_t>(last));
      reduced.erase(reduced.begin() + static_cast<ptrdiff_t>(last));
    }
  }
  if (kind == ReduceKind::kSum && scale != 1.0) {
    ForEachChunk(outputs, [&](int64_t begin, int64_t end) {
      EigenArray<T>(y + begin, end - begin) *= static_cast<T>(scale);
    });
  }
}

template <typename T>
void ReduceBackward(ReduceKind kind, const ReduceRuns& runs, const T* x, const T* y, const T* dy,
                    T* dx, double scale) {
  switch (kind) {
    case ReduceKind::kSum: {
      const T factor = static_cast<T>(scale);
      ForEachElement(runs, [&](int64_t e, int64_t o) { dx[e] = dy[o] * factor; });
      return;
    }
    case ReduceKind::kMax:
    case ReduceKind::kMin:
      ForEachElement(runs, [&](int64_t e, int64_t o) { dx[e] = x[e] == y[o] ? dy[o] : T(0); });
      return;
    case ReduceKind::kProd:
      break;
  }
  // The product of the others: y / x unless the group holds zeros; then only a lone zero's is
  // non-zero, the product of the group's non-zero elements.
  const int64_t elements = Elements(runs);
  const int64_t outputs = elements / std::max<int64_t>(runs.group, 1);
  std::vector<T> nonzero(static_cast<size_t>(elements)), is_zero(static_cast<size_t>(elements));
  ForEachChunk(elements, [&](int64_t begin, int64_t end) {
    for (int64_t e = begin; e < end; ++e) {
      nonzero[static_cast<size_t>(e)] = x[e] == T(0) ? T(1) : x[e];
      is_zero[static_cast<size_t>(e)] = x[e] == T(0) ? T(1) : T(0);
    }
  });
  std::vector<T> nonzero_product(static_cast<size_t>(outputs)), zeros(static_cast<size_t>(outputs));
  Reduce(ReduceKind::kProd, runs, nonzero.data(), nonzero_product.data(), 1.0);
  Reduce(ReduceKind::kSum, runs, is_zero.data(), zeros.data(), 1.0);
  ForEachElement(runs, [&](int64_t e, int64_t o) {
    const T count = zeros[static_cast<size_t>(o)];
    const T others = nonzero_product[static_cast<size_t>(o)];
    if (x[e] != T(0)) {
      dx[e] = count == T(0) ? dy[o] * (others / x[e]) : T(0);
    } else {
      dx[e] = count == T(1) ? dy[o] * others : T(0);
    }
  });
}

#define MXLITE_INSTANTIATE_REDUCE(T)                                                               \
  template void Reduce<T>(ReduceKind, const ReduceRuns&, const T*, T*, double);                    \
  template void ReduceBackward<T>(ReduceKind, const ReduceRuns&, const T*, const T*, const T*, T*, \
                                  double);
MXLITE_INSTANTIATE_REDUCE(float)
MXLITE_INSTANTIATE_REDUCE(double)
#undef MXLITE_INSTANTIATE_REDUCE

}  // namespace mxlite::cpu
