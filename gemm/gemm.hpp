// DGEMM variants: column-major C = alpha * A * B + beta * C with BLAS semantics, for any M, N, K >= 0 and
// leading dimensions lda >= max(1, M), ldb >= max(1, K), ldc >= max(1, M).
//
// The family's entry point is run(). It checks the arguments and applies the rules every BLAS user relies on
// that need no product: M or N zero, nothing to do; alpha zero or K zero, C = beta * C without reading A or B
// (beta zero: C = 0 without reading C). Every other call reaches the variant's launch with M, N, K >= 1 and
// alpha != 0; each variant handles partial (edge) tiles itself, and never reads C when beta == 0, so NaN in
// C does not propagate.
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

// The family's error bound: a correct result satisfies, element-wise,
//   |C - C_ref| <= kBoundFactor (K + 2) eps (|alpha| (|A||B|) + |beta| |C0|) + DBL_MIN.
// Each side's dot product in any summation order is within (K + 2) eps of the exact product of the bracketed
// magnitudes (Higham, Accuracy and Stability, 3.5), so their difference is within twice that.
constexpr double kBoundFactor = 2.0;

// The largest M, N or K: INT_MAX less a margin for the kernels' int tile arithmetic.
constexpr int kDimMargin = 1024;
constexpr int kMaxDim = 2147483647 - kDimMargin;

// Throws std::invalid_argument naming the first violated rule. A and B may be null where they are not read
// (alpha or K zero, or an empty C), C where it is empty.
void check_args(const GemmArgs& a);

// Enqueues the product on ctx.stream(); never synchronises, except ozaki, which reads statistics of its inputs
// back (one wait on the stream; none under stream capture). Called only through run().
using GemmLaunch = std::function<void(const GemmArgs&, ExecContext&)>;

// The launch modes (gemm/host/modes.hpp) a benchmark's default suite times a variant in at its largest size, besides
// device mode: none, every mode (the copies' cost beside the anchor and a teaching step), or the pipelined modes.
enum class SuiteModes { DeviceOnly, All, Pipelined };

struct GemmVariant {
  VariantInfo info{};
  GemmLaunch launch{};
  SuiteModes suite_modes = SuiteModes::DeviceOnly;
};

using GemmRegistry = Registry<GemmVariant>;
GemmRegistry& registry();

// Checks `a`, applies the BLAS rules above, and otherwise enqueues `v` on ctx.stream() (a new launch of the
// context: its scratch starts over).
void run(const GemmVariant& v, const GemmArgs& a, ExecContext& ctx);

// 2 * M * N * K: the conventional operation count.
inline double flops(int M, int N, int K) { return 2.0 * M * N * K; }

}  // namespace ks::gemm

// Declares a DGEMM variant from this file: KS_GEMM_VARIANT({.info = {.name = ..., ...}, .launch = ...});
#define KS_GEMM_VARIANT(...) KS_DECLARE_VARIANT(::ks::gemm::registry(), ::ks::gemm::GemmVariant __VA_ARGS__)
// Declares the variants of a table (one per row), from this file: KS_GEMM_VARIANTS(fn), `fn` returning a
// std::vector<GemmVariant>.
#define KS_GEMM_VARIANTS(...) KS_DECLARE_VARIANTS(::ks::gemm::registry(), __VA_ARGS__)
