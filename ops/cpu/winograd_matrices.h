// The Winograd F(M x M, 3x3) transform matrices (Lavin & Gray 2015), M = 2 or 4, alpha = M + 2:
//   input  V = B^T d B   (kBT: alpha x alpha)
//   weight U = G g G^T   (kG:  alpha x 3)
//   output Y = A^T m A   (kAT: M x alpha)
// Shared by the portable kernels (conv_winograd.cc) and the AVX2 ones (conv_winograd_avx2.cc).
#pragma once

namespace mxlite::cpu {

template <int M>
struct WinogradMatrices;

template <>
struct WinogradMatrices<2> {
  static constexpr double kBT[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
  static constexpr double kG[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  static constexpr double kAT[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};
};

template <>
struct WinogradMatrices<4> {
  static constexpr double kBT[6][6] = {{4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0},
                                       {0, 4, -4, -1, 1, 0}, {0, -2, -1, 2, 1, 0},
                                       {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
  static constexpr double kG[6][3] = {{1.0 / 4, 0, 0},
                                      {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                      {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                      {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                      {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                      {0, 0, 1}};
  static constexpr double kAT[4][6] = {
      {1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}};
};

}  // namespace mxlite::cpu
