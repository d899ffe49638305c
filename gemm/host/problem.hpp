// A DGEMM problem on the host: shape, scalars, seeded random operands (Eigen, column-major, with their
// leading dimensions), and the validator against an Eigen reference.
#pragma once

#include "gemm/gemm.hpp"

#include <Eigen/Dense>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ks::gemm {

struct GemmShape {
  int M = 1, N = 1, K = 1;
  int lda = 0, ldb = 0, ldc = 0;  // 0 means tight: the stored rows of A and B (M or K, K or N), max(1, M)
  Op transa = Op::N, transb = Op::N;
  GemmShape resolved() const;      // with tight leading dimensions filled in
  int a_rows() const { return transa == Op::N ? M : K; }  // of A and B as stored
  int a_cols() const { return transa == Op::N ? K : M; }
  int b_rows() const { return transb == Op::N ? K : N; }
  int b_cols() const { return transb == Op::N ? N : K; }
  std::string str() const;  // "MxNxK", then the ops unless NN ("MxNxK TN"), then any padded leading dimension
  // The same product with op(A) = a and op(B) = b: each given leading dimension keeps its padding beyond the
  // rows of the operand as now stored.
  GemmShape with_ops(Op a, Op b) const;
};

// What A and B hold. Uniform: seeded values in [-1, 1). Exp: (u - 0.5) exp(phi g), u uniform in [0, 1) and g
// standard normal, so the exponents spread wider with phi (the accuracy tests of emulated DGEMM draw phi 0.5,
// 1, 2, 4). Either with pow2 > 0: each row of A and each column of B further scaled by 2^s, s a seeded whole
// number in [-pow2, pow2] (rows and columns of very different scale). NaN: NaN everywhere (for the BLAS rule
// that alpha == 0 reads neither).
struct Operands {
  enum class Kind { Uniform, Exp, NaN };
  Kind kind = Kind::Uniform;
  double phi = 0;  // Exp only
  int pow2 = 0;    // 0 to kMaxPow2
  static constexpr int kMaxPow2 = 400;  // products of two scaled elements stay normal doubles

  static Operands uniform() { return {}; }
  static Operands nan() { return {Kind::NaN}; }
  static Operands exp(double phi) { return {Kind::Exp, phi}; }
  std::string str() const;  // as parse_operands reads it: "uniform", "exp:1", "exp:2,pow2:100"
};

// "uniform" or "exp:PHI" (PHI a number in [0, 8]), optionally followed by ",pow2:S" (S a whole number in
// [0, Operands::kMaxPow2]). Anything else throws std::invalid_argument naming what is wrong.
Operands parse_operands(const std::string& text);

// What a correct result must be close to: the Eigen reference alpha A B + beta C0 and each element's bound
// (see validate below), for the M valid rows. With BLAS semantics: the product term is absent when alpha or K
// is zero (A and B are not read), the C0 term when beta is zero (C is not read).
struct GemmExpected {
  Eigen::MatrixXd ref;
  Eigen::MatrixXd bound;
};

struct GemmProblem {
  GemmShape shape;  // resolved
  double alpha = 1.0, beta = 0.0;
  std::uint64_t seed = 0;
  // Each stored with its leading dimension as the row count. Entries in the padding rows are NaN, so a
  // kernel that reads padding produces NaN and one that writes C's padding is caught.
  Eigen::MatrixXd A;   // lda x K, or lda x M for op(A) = A^T
  Eigen::MatrixXd B;   // ldb x N, or ldb x K for op(B) = B^T
  Eigen::MatrixXd C0;  // ldc x N, C's initial value; empty when beta == 0 (C is then never read)

  double op_a(int i, int k) const { return shape.transa == Op::N ? A(i, k) : A(k, i); }  // op(A)(i, k)
  double op_b(int k, int j) const { return shape.transb == Op::N ? B(k, j) : B(j, k); }  // op(B)(k, j)
  // The arguments of this problem's product with A, B and C at the given addresses.
  GemmArgs args(const double* a, const double* b, double* c) const;

  std::size_t c_count() const { return static_cast<std::size_t>(shape.ldc) * shape.N; }  // C's elements, padding included

  // Computed on first use (two host GEMMs) and kept: every validation of this problem shares it. The
  // problem's operands must not change after the first call.
  const GemmExpected& expected() const;

 private:
  mutable std::shared_ptr<const GemmExpected> expected_;
};

// Operands from `seed` (filled in parallel, a seeded stream per block of elements): C0 uniform in [-1, 1) when
// beta != 0, A and B as `ab` says (pow2 scales the rows of op(A) and the columns of op(B), whatever the ops).
GemmProblem make_problem(const GemmShape& shape, double alpha, double beta, std::uint64_t seed,
                         const Operands& ab = Operands::uniform());

struct GemmCheck {
  bool ok = false;
  long bad = 0;           // elements outside their bound (NaN/Inf included), padding writes included
  double worst = 0;       // max |C - C_ref| / bound over the valid elements
  std::string report;     // seed, shape and the first few (i, j, got, want, bound)
};

// Element-wise, the family's bound (gemm.hpp, kBoundFactor): |C - C_ref| <= kBoundFactor (K + 2) eps (|alpha|
// (|A||B|) + |beta| |C0|) + DBL_MIN. NaN or Inf anywhere fails; C's padding rows must still be NaN.
GemmCheck validate(const GemmProblem& p, const Eigen::MatrixXd& C);

// The same check on `samples` elements of C (ldc x N at `C`), for products too large for the full reference:
// the four corners, then seeded uniform positions (every element once where C has at most `samples`), each
// against a long-double dot product and the bound above (in long double); plus C's padding rows in the sampled
// columns. `samples` >= 4.
GemmCheck validate_sampled(const GemmProblem& p, const double* C, int samples);
// The same check on the elements `at` ((i, j) with 0 <= i < M, 0 <= j < N; std::invalid_argument otherwise), padding
// rows of their columns included: validate_sampled's, on positions of the caller's choosing.
GemmCheck validate_at(const GemmProblem& p, const double* C, const std::vector<std::pair<int, int>>& at);

// What validate_sampled holds C(i, j) to, from op(A)'s row i times op(B)'s column j summed over k = 0 .. K - 1 in long
// double (`dot`, and `mag` the sum of the products' magnitudes): alpha dot + beta C0(i, j), and the bound above.
struct SampledExpectation {
  long double want, bound;
};
SampledExpectation sampled_expectation(const GemmProblem& p, int i, int j, long double dot, long double mag);
// A check's worst ratio (in units of the bound) in units of eps (|alpha| (|A||B|) + |beta| |C0|), the bound
// being kBoundFactor (K + 2) of those (its DBL_MIN aside): kbench's max_error_eps_ab.
constexpr double worst_in_eps_ab(double worst, int K) { return worst * kBoundFactor * (K + 2.0); }
// Above this many multiply-adds (M N K) kbench validates on samples rather than against the full reference.
constexpr double kFullValidationLimit = 137438953472.0;  // 2^37, about 5100^3

}  // namespace ks::gemm
