// ops/cpu/row_window.h: every window copies, gathered and scattered, what a plain walk over its
// rows copies, across thread counts and element sizes; Simplified() merges what continues.
#include "ops/cpu/row_window.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "ops/cpu/parallel.h"

namespace mxlite::cpu {
namespace {

cpu::RowWindow Window(std::vector<int64_t> extents, std::vector<int64_t> steps, int64_t base,
                      int64_t row) {
  RowWindow w;
  w.outer = static_cast<int>(extents.size());
  for (int d = 0; d < w.outer; ++d) {
    w.extents[d] = extents[static_cast<size_t>(d)];
    w.steps[d] = steps[static_cast<size_t>(d)];
  }
  w.base = base;
  w.row = row;
  return w;
}

// The rows walked one by one: dense row r at window offset base + sum_d i_d * steps[d].
template <typename E>
void ReferenceCopy(const RowWindow& w, const std::vector<E>& from, std::vector<E>* to,
                   bool scatter) {
  int64_t rows = 1;
  for (int d = 0; d < w.outer; ++d) rows *= w.extents[d];
  for (int64_t r = 0; r < rows; ++r) {
    int64_t rest = r, offset = w.base;
    for (int d = w.outer - 1; d >= 0; --d) {
      offset += (rest % w.extents[d]) * w.steps[d];
      rest /= w.extents[d];
    }
    for (int64_t e = 0; e < w.row; ++e) {
      if (scatter) {
        (*to)[offset + e] = from[r * w.row + e];
      } else {
        (*to)[r * w.row + e] = from[offset + e];
      }
    }
  }
}

struct Case {
  const char* what;
  RowWindow window;
  int64_t window_elements;
};

std::vector<Case> Cases() {
  return {
      {"rows 2..3 of (4, 6)", Window({2}, {6}, 12, 6), 24},
      {"head split (5, 4, 8) -> (4, 5, 8)", Window({4, 5}, {8, 32}, 0, 8), 160},
      {"columns 1..3 of (4, 6)", Window({4}, {6}, 1, 3), 24},
      {"every other element reversed", Window({3, 4}, {-10, -2}, 29, 1), 30},
      {"a slab: (3, 7, 2) from (6, 7, 2)", Window({3, 7}, {14, 2}, 28, 2), 84},
      {"extent-1 axes", Window({1, 3, 1, 4}, {99, 12, 7, 3}, 2, 3), 40},
      {"many short rows", Window({40, 30}, {64, 2}, 5, 2), 2600},
      {"one element", Window({}, {}, 5, 1), 9},
  };
}

template <typename E>
void CheckEveryCase() {
  std::mt19937 random(3);
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.what);
    int64_t rows = 1;
    for (int d = 0; d < c.window.outer; ++d) rows *= c.window.extents[d];
    const size_t dense_size = static_cast<size_t>(rows * c.window.row);
    std::vector<E> window(static_cast<size_t>(c.window_elements)), dense(dense_size);
    for (E& v : window) v = static_cast<E>(random());
    for (E& v : dense) v = static_cast<E>(random());
    for (bool scatter : {false, true}) {
      std::vector<E> want = scatter ? window : dense, got = want;
      const std::vector<E>& from = scatter ? dense : window;
      ReferenceCopy(c.window, from, &want, scatter);
      CopyRowWindow(c.window, from.data(), got.data(), sizeof(E), scatter);
      EXPECT_EQ(got, want) << (scatter ? "scatter" : "gather");
    }
  }
}

TEST(RowWindowTest, CopiesWhatAPlainWalkCopies) {
  for (int threads : {1, 3}) {
    ScopedIntraOpThreads scope(threads);
    CheckEveryCase<uint8_t>();
    CheckEveryCase<uint16_t>();
    CheckEveryCase<uint32_t>();
    CheckEveryCase<uint64_t>();
  }
}

TEST(RowWindowTest, SimplifiedMergesWhatContinues) {
  const RowWindow slab = Simplified(Window({3, 7}, {14, 2}, 28, 2));
  EXPECT_EQ(slab.outer, 0);
  EXPECT_EQ(slab.row, 42);
  EXPECT_EQ(slab.base, 28);
  const RowWindow head_split = Simplified(Window({4, 5}, {8, 32}, 0, 8));
  EXPECT_EQ(head_split.outer, 2);
  EXPECT_EQ(head_split.row, 8);
  const RowWindow columns = Simplified(Window({2, 3, 4}, {72, 24, 6}, 1, 3));
  EXPECT_EQ(columns.outer, 1);  // (2, 3, 4) rows of 3 every 6: one axis of 24
  EXPECT_EQ(columns.extents[0], 24);
  EXPECT_EQ(columns.steps[0], 6);
  const RowWindow ones = Simplified(Window({1, 1}, {5, 3}, 4, 1));
  EXPECT_EQ(ones.outer, 0);
  EXPECT_EQ(ones.row, 1);
}

}  // namespace
}  // namespace mxlite::cpu
