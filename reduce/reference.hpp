// Host references and validation for reductions and the integral.
#pragma once

#include "reduce/reduce.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace ks::reduce {

// A result as the device delivers it: int64 for both integer types, else the element type (kept in double).
struct Value {
  DType dtype = DType::F64;
  std::int64_t i = 0;
  double f = 0;
  std::string str() const;
  bool bitwise_equal(const Value& o) const;
};

// Reads the result bytes (result_size(dtype) of them).
Value value_from_bytes(DType t, const void* bytes);

// The exact answer for integers (wrapping int64 arithmetic, like the variants), and for floating point a
// compensated (Neumaier) sum in long double of the transformed elements, with sum |x_i| for the bound.
struct Reference {
  Value value;
  long double exact = 0;    // floating point only
  long double abs_sum = 0;  // floating point only: sum of |transform(x_i)|
};
Reference host_reference(DType t, Op op, const void* data, std::size_t n);

struct ReduceCheck {
  bool ok = false;
  std::string report;
};

// Integers: exact. Floating point: |got - exact| <= n * eps * sum |transform(x_i)| (n - 1 roundings of the
// sum plus one of each squaring). NaN/Inf fail. The report carries the seed.
ReduceCheck check_result(const Reference& ref, const Value& got, std::size_t n, std::uint64_t seed);

// ---- the integral of sin^2(2x) cos^2(x) ----
// F(x) = x/4 + sin(2x)/16 - sin(4x)/16 - sin(6x)/48 is an antiderivative (f = 1/4 + cos(2x)/8 - cos(4x)/4
// - cos(6x)/8 after the product-to-sum identities).
double integral_exact(double a, double b);

// A rigorous bound on |computed - exact| for the midpoint rule with n points in arithmetic of precision eps:
//   E_mid  = (b - a) h^2 / 24 * max|f''|,   max|f''| <= 16                  (midpoint rule's error term)
//   E_eval = (b - a) * (max|f'| * 4 eps * max(|a|,|b|) + 8 eps * max|f|)   (abscissa rounding: 4 roundings
//            of x = a + (i + 1/2) h, h included; sin/cos within 2 ulp and 3 products; max|f'| <= 3, |f| <= 1)
//   E_sum  = (n - 1) eps (b - a) max|f|                                    (any summation order)
// For double at n = 1e8 over [0, 40000 pi] this is about 4.3e-6 relative (E_mid dominates): a real check
// that catches a lost block of terms or a wrong step h, though not one lost term. For float it exceeds
// the result itself (n eps > 1), so float results are additionally held to kFloatIntegralRelTol (below).
double integral_bound(DType t, double a, double b, std::int64_t n);
// The float check: a relative tolerance, not derived: the rigorous float bound above is vacuous. It is
// loose for tree- and block-shaped float summation (measured errors: docs/reduce-notes.md) and tight
// enough to fail a summation that stalls (terms below half an ulp of the running sum).
constexpr double kFloatIntegralRelTol = 1e-3;

// ---- the tutorial's host reductions, for the CPU baseline ----
// Recursive interleaved pairs on a scratch copy (the tutorial's recursiveReduce), Eigen's sum, an OpenMP loop.
double host_recursive_interleaved(const double* x, std::size_t n);
double host_eigen_sum(const double* x, std::size_t n);
double host_openmp_sum(const double* x, std::size_t n);

}  // namespace ks::reduce
