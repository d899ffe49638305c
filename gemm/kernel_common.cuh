// Pieces every hand-written DGEMM kernel shares.
#pragma once

#include "gemm/gemm.hpp"

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace ks::gemm {

// C(i, j) = alpha * acc + beta * C(i, j); C is not read when beta == 0.
__device__ __forceinline__ void store_c(const GemmArgs& a, int i, int j, double acc) {
  double* c = a.C + i + static_cast<size_t>(j) * a.ldc;
  *c = a.beta == 0.0 ? a.alpha * acc : a.alpha * acc + a.beta * *c;
}

__host__ __device__ constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Grid of tiles over (rows, cols) with rows on x; the y dimension is limited to 65535 blocks.
inline dim3 tile_grid(int rows, int rows_per_block, int cols, int cols_per_block) {
  const dim3 g(ceil_div(rows, rows_per_block), ceil_div(cols, cols_per_block));
  if (g.y > 65535u)
    throw std::invalid_argument("DGEMM: " + std::to_string(cols) + " exceeds this kernel's grid limit (" +
                                std::to_string(65535 * cols_per_block) + ")");
  return g;
}

}  // namespace ks::gemm
