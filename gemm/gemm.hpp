// DGEMM variants: column-major C = alpha * A * B + beta * C for any M, N, K >= 1 and leading dimensions
// lda >= M, ldb >= K, ldc >= M. Every variant handles partial (edge) tiles itself. beta == 0 means C is not
// read (BLAS semantics), so NaN in C does not propagate.
#pragma once

#include "common/exec_context.hpp"
#include "common/registry.hpp"

#include <cstdint>
#include <functional>
#include <string>

namespace ks::gemm {

struct GemmArgs {
  int M = 0, N = 0, K = 0;
  double alpha = 1.0;
  const double* A = nullptr;
  int lda = 0;
  const double* B = nullptr;
  int ldb = 0;
  double beta = 0.0;
  double* C = nullptr;
  int ldc = 0;
};

// The largest M, N or K: INT_MAX less a margin for the kernels' int tile arithmetic.
constexpr int kDimMargin = 1024;
constexpr int kMaxDim = 2147483647 - kDimMargin;

// Throws std::invalid_argument naming the first violated rule.
void check_args(const GemmArgs& a);

// Enqueues the product on ctx.stream(); never synchronises.
using GemmLaunch = std::function<void(const GemmArgs&, ExecContext&)>;

struct GemmVariant {
  VariantInfo info;
  GemmLaunch launch;
};

using GemmRegistry = Registry<GemmVariant>;
inline GemmRegistry& registry() { return GemmRegistry::instance(); }

// 2 * M * N * K: the conventional operation count.
inline double flops(int M, int N, int K) { return 2.0 * M * N * K; }

}  // namespace ks::gemm
