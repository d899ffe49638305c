// Pieces every hand-written DGEMM kernel shares.
#pragma once

#include "gemm/gemm.hpp"

#include "common/gpu_runtime.hpp"

#include <stdexcept>
#include <string>
#include <type_traits>

namespace ks::gemm {

// *c = alpha * acc + beta * *c; *c is not read when beta == 0 (BLAS: C may hold NaN then).
__device__ __forceinline__ void scale_store(double* c, double alpha, double beta, double acc) {
  *c = beta == 0.0 ? alpha * acc : alpha * acc + beta * *c;
}

// C(i, j) = alpha * acc + beta * C(i, j); C is not read when beta == 0.
__device__ __forceinline__ void store_c(const GemmArgs& a, int i, int j, double acc) {
  scale_store(a.C + i + static_cast<size_t>(j) * a.ldc, a.alpha, a.beta, acc);
}

__host__ __device__ constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Tile order for L2 reuse: consecutive tiles walk kGroupM tile rows of C before moving to the next tile
// column, so the blocks resident at one time share A and B panels in L2 (the plain row-fastest order streams
// all of A through L2 once per wave of tile columns). `linear`: the tile's place in that order.
constexpr int kGroupM = 8;

__device__ __forceinline__ void grouped_tile(long long linear, long long tiles_m, long long tiles_n, int& tile_m,
                                             int& tile_n) {
  const long long per_group = kGroupM * tiles_n;
  const long long first_m = linear / per_group * kGroupM;
  const long long rows = min(static_cast<long long>(kGroupM), tiles_m - first_m);  // the last group may be short
  const long long within = linear % per_group;
  tile_m = static_cast<int>(first_m + within % rows);
  tile_n = static_cast<int>(within / rows);
}

// Grid of tiles over (rows, cols) with rows on x; the y dimension is limited to 65535 blocks.
inline dim3 tile_grid(int rows, int rows_per_block, int cols, int cols_per_block) {
  const dim3 g(ceil_div(rows, rows_per_block), ceil_div(cols, cols_per_block));
  if (g.y > 65535u)
    throw std::invalid_argument("DGEMM: " + std::to_string(cols) + " exceeds this kernel's grid limit (" +
                                std::to_string(65535 * cols_per_block) + ")");
  return g;
}

// Calls f(std::bool_constant<TA>{}, std::bool_constant<TB>{}) with TA = (op(A) is A^T), TB = (op(B) is B^T):
// a kernel templated on its operands' orientation, instantiated for the four combinations.
template <class F>
void with_ops(const GemmArgs& a, F&& f) {
  const bool ta = a.transa == Op::T, tb = a.transb == Op::T;
  if (ta && tb) f(std::true_type{}, std::true_type{});
  else if (ta) f(std::true_type{}, std::false_type{});
  else if (tb) f(std::false_type{}, std::true_type{});
  else f(std::false_type{}, std::false_type{});
}

}  // namespace ks::gemm
