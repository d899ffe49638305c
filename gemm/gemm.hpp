// DGEMM variants: column-major C = alpha * op(A) * op(B) + beta * C with BLAS semantics, for any M, N, K >= 0,
// op(X) = X or X^T, and leading dimensions checked against the stored shapes as BLAS does: A is M x K (op N)
// or K x M (op T), so lda >= max(1, M) or max(1, K); B is K x N or N x K, ldb >= max(1, K) or max(1, N);
// ldc >= max(1, M).
//
// A variant declares the op(A) op(B) combinations it runs natively (GemmVariant::ops); run() refuses the others
// with a message, never transposing a copy behind the caller's back. The teaching steps take NN only.
//
// The family's entry point is run(). It checks the arguments and applies the rules every BLAS user relies on
// that need no product: M or N zero, nothing to do; alpha zero or K zero, C = beta * C without reading A or B
// (beta zero: C = 0 without reading C). Every other call reaches the variant's launch with M, N, K >= 1 and
// alpha != 0; each variant handles partial (edge) tiles itself, and never reads C when beta == 0, so NaN in
// C does not propagate.
#pragma once

#include "common/exec_context.hpp"
#include "common/registry.hpp"
#include "gemm/limits.hpp"
#include "gemm/ops.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ks::gemm {

// Op, op_bit, kOpsNN, kOpsAll and ops_name: gemm/ops.hpp.
// The combinations of `ops` (a set of op_bit bits) by name, comma separated: "NN" or "NN,NT,TN,TT".
std::string ops_names(unsigned ops);
#if !defined(KS_HIP)  // cuBLAS: the CUDA build only
inline cublasOperation_t cublas_op(Op o) { return o == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T; }
#endif
// BLAS's transa / transb character: 'N' or 'n' is N; 'T', 't', 'C', 'c' are T. Anything else throws
// std::invalid_argument.
Op parse_op(char c);

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
  Op transa = Op::N, transb = Op::N;
  // Element (i, k) of op(A) is A[a_index(i, k)]; (k, j) of op(B) is B[b_index(k, j)].
  __host__ __device__ size_t a_index(int i, int k) const {
    return transa == Op::N ? i + static_cast<size_t>(k) * lda : k + static_cast<size_t>(i) * lda;
  }
  __host__ __device__ size_t b_index(int k, int j) const {
    return transb == Op::N ? k + static_cast<size_t>(j) * ldb : j + static_cast<size_t>(k) * ldb;
  }
};

// Rows of the stored A (B): M or K (K or N) as op says.
inline int a_rows(const GemmArgs& a) { return a.transa == Op::N ? a.M : a.K; }
inline int b_rows(const GemmArgs& a) { return a.transb == Op::N ? a.K : a.N; }

// The family's error bound: a correct result satisfies, element-wise,
//   |C - C_ref| <= kBoundFactor (K + 2) eps (|alpha| (|A||B|) + |beta| |C0|) + DBL_MIN.
// Each side's dot product in any summation order is within (K + 2) eps of the exact product of the bracketed
// magnitudes (Higham, Accuracy and Stability, 3.5), so their difference is within twice that.
constexpr double kBoundFactor = 2.0;


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
  unsigned ops = kOpsNN;  // the op(A) op(B) combinations its launch takes (op_bit)
  bool runs(Op a, Op b) const { return (ops & op_bit(a, b)) != 0; }
};

using GemmRegistry = Registry<GemmVariant>;
GemmRegistry& registry();

// What the HIP build (AMD GPUs) leaves out of the ladder, and why: one row per ladder entry, with the variants it
// declares in the CUDA build. The HIP build's `kbench list` prints it; the tests of both builds check it against
// their registry (CUDA: every variant is built for HIP or named here; HIP: none named here is built).
struct LeftOut {
  std::string entry;               // "gemm/06_dmma.cu"
  std::vector<std::string> names;  // its variants, or the part of the entry left out
  std::string why;
};
const std::vector<LeftOut>& hip_left_out();

// Refuses (std::invalid_argument) a combination of ops `v` does not declare; checks `a`, applies the BLAS rules
// above, and otherwise enqueues `v` on ctx.stream() (a new launch of the context: its scratch starts over).
void run(const GemmVariant& v, const GemmArgs& a, ExecContext& ctx);

// 2 * M * N * K: the conventional operation count.
inline double flops(int M, int N, int K) { return 2.0 * M * N * K; }

}  // namespace ks::gemm

// Declares a DGEMM variant from this file: KS_GEMM_VARIANT({.info = {.name = ..., ...}, .launch = ...});
#define KS_GEMM_VARIANT(...) KS_DECLARE_VARIANT(::ks::gemm::registry(), ::ks::gemm::GemmVariant __VA_ARGS__)
// Declares the variants of a table (one per row), from this file: KS_GEMM_VARIANTS(fn), `fn` returning a
// std::vector<GemmVariant>.
#define KS_GEMM_VARIANTS(...) KS_DECLARE_VARIANTS(::ks::gemm::registry(), __VA_ARGS__)
