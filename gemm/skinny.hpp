// The skinny DGEMM (gemm/09_skinny.cu): C with a few rows or a few columns, on the FP64 FMA units, streaming the
// large operand once. Host and device declarations without the CUDA kernels, so that the canonical form can be
// tested on the host.
//
// Where C has S <= kMaxSide rows (or columns) and L of the other, the product reads L x K elements of one
// operand and S x K of the other: 8 bytes of the large operand per 2 S flops. At S = 16 that is 4 flops a
// byte, 12.3 TFLOP/s at the H100's read ceiling (about 3.1 TB/s), inside the 33 TFLOP/s of its FP64 FMA units;
// the tensor-core kernels' smallest tile (64 rows) would spend four to sixty-four times the flops on padding.
//
// Every op(A) op(B) combination and both orientations of C reduce to one canonical form,
//   out(s, l) = sum_k X(s, k) Y(l, k),   s < S (the small side), l < L (the large side),
// where each of X, Y, out is a strided view (element (r, c) at base + r rs + c cs). Y is the large operand;
// it is contiguous along k (a dot product per element of C: dot form) or along l (a sum of scaled columns:
// axpy form), whichever op and C's orientation make it.
#pragma once

#include "gemm/gemm.hpp"

#include <string>

namespace ks::gemm::skinny {

// The small side one pass of the kernels takes; a C with more rows and more columns runs in passes of this
// many (correct, but the large operand is read once per pass: the rule sends only C with a side this small).
constexpr int kMaxSide = 16;

// A strided view of a matrix: element (r, c) at p[r * rs + c * cs].
template <class T>
struct View {
  T* p = nullptr;
  long long rs = 0, cs = 0;
  __host__ __device__ T* at(long long r, long long c) const { return p + r * rs + c * cs; }
};

struct Form {
  View<const double> x;  // X(s, k)
  View<const double> y;  // Y(l, k)
  View<double> out;      // out(s, l)
  int S = 0, L = 0, K = 0;
  double alpha = 1.0, beta = 0.0;
  bool dot() const { return y.cs == 1; }  // Y contiguous along k; otherwise along l (y.rs == 1)
};

// `a` in the canonical form: the small side is M (rows) where M <= N, N otherwise.
Form canonical(const GemmArgs& a);

// Whether canonical() gives the dot form for these ops (Y contiguous along k): op(B) = B for C of few rows,
// op(A) = A^T for C of few columns. (A leading dimension of 1 on the long side could make the other form
// contiguous too; the rule's long sides rule that out.)
constexpr bool dot_form(int M, int N, Op transa, Op transb) { return M <= N ? transb == Op::N : transa == Op::T; }

// Whether launch() runs `f` (one pass) in the split dot form (gemm/09_skinny.cu): S <= 2, the dot form, Y's columns
// 16-byte aligned, X contiguous along k (or, at S = 2, its two rows interleaved).
bool split_form(const Form& f);

// The tensor-core forms (gemm/09_skinny.cu) take a pass of kTcMinS to kTcMaxS rows or columns (not in the split dot
// form), each element of Y once; tc_form says whether launch() runs `f` (one pass) in one of them.
constexpr int kTcMinS = 3, kTcMaxS = 8;
bool tc_form(const Form& f);

// Whether a pass in the tensor-core dot form may run its bulk-copy kernel (gemm/09_skinny.cu; on compute capability
// 9.0 or later with code compiled for it): Y's columns start on 16-byte boundaries (an even stride, an aligned base).
bool bulk_form(const Form& f);

// How many blocks of a tensor-core form split K for each of `groups` groups of C (`chunks` chunks of k) with
// `resident` blocks of `warps` warps resident at once: 1 where the groups are at least half a wave, else as many
// as two waves of blocks hold, each warp at least four chunks.
int tc_parts(int groups, int chunks, int resident, int warps);

// Enqueues the product (any shape, any op; M, N, K >= 1, as gemm::run passes them).
void launch(const GemmArgs& a, ExecContext& ctx);

// "dot form, 8 x 16384 (S x L), 1 pass": what launch() runs for `a`.
std::string describe(const GemmArgs& a);

}  // namespace ks::gemm::skinny
