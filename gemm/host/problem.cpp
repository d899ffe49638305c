#include "gemm/host/problem.hpp"

#include "common/random.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <vector>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

namespace ks::gemm {

GemmShape GemmShape::resolved() const {
  GemmShape s = *this;
  if (s.lda == 0) s.lda = std::max(1, a_rows());
  if (s.ldb == 0) s.ldb = std::max(1, b_rows());
  if (s.ldc == 0) s.ldc = std::max(1, M);
  return s;
}

GemmShape GemmShape::with_ops(Op a, Op b) const {
  GemmShape s = *this;
  s.transa = a;
  s.transb = b;
  if (lda != 0) s.lda = lda - std::max(1, a_rows()) + std::max(1, s.a_rows());
  if (ldb != 0) s.ldb = ldb - std::max(1, b_rows()) + std::max(1, s.b_rows());
  return s;
}

std::string GemmShape::str() const {
  const GemmShape r = resolved();
  std::ostringstream os;
  os << M << "x" << N << "x" << K;
  if (transa != Op::N || transb != Op::N) os << " " << ops_name(transa, transb);
  if (r.lda != std::max(1, a_rows()) || r.ldb != std::max(1, b_rows()) || r.ldc != std::max(1, M))
    os << " (lda " << r.lda << ", ldb " << r.ldb << ", ldc " << r.ldc << ")";
  return os.str();
}

namespace {

// ld x cols, the first `rows` rows drawn as `fill` says, the rest NaN. With fill.pow2, row i (scale_rows) or
// column j is multiplied by 2^s_i (s_j) from its own seeded stream.
Eigen::MatrixXd random_padded(int ld, int rows, int cols, std::uint64_t seed, const Operands& fill, bool scale_rows) {
  Eigen::MatrixXd m(ld, cols);
  const std::size_t n = static_cast<std::size_t>(m.size());
  if (fill.kind == Operands::Kind::NaN) {
    m.setConstant(std::numeric_limits<double>::quiet_NaN());
    return m;
  }
  // One seeded stream per block of 2^20 elements: the same operands for a seed, filled on every core.
  constexpr std::size_t kBlock = std::size_t(1) << 20;
  const long long blocks = static_cast<long long>((n + kBlock - 1) / kBlock);
#pragma omp parallel for schedule(static)
  for (long long b = 0; b < blocks; ++b) {
    const std::size_t first = static_cast<std::size_t>(b) * kBlock;
    const std::size_t count = std::min(kBlock, n - first);
    const std::uint64_t block_seed = seed ^ (0x9E3779B97F4A7C15ull * (b + 1));
    if (fill.kind == Operands::Kind::Uniform) {
      fill_random(m.data() + first, count, block_seed);
    } else {
      std::mt19937_64 rng(block_seed);
      std::uniform_real_distribution<double> u(0.0, 1.0);
      std::normal_distribution<double> g(0.0, 1.0);
      for (std::size_t e = 0; e < count; ++e) {
        const double x = u(rng) - 0.5;
        m.data()[first + e] = x * std::exp(fill.phi * g(rng));
      }
    }
  }
  if (fill.pow2 > 0) {
    std::mt19937_64 rng(seed ^ 0x51CA1E5ull);
    std::uniform_int_distribution<int> s(-fill.pow2, fill.pow2);
    if (scale_rows) {
      for (int i = 0; i < rows; ++i) m.row(i) *= std::ldexp(1.0, s(rng));
    } else {
      for (int j = 0; j < cols; ++j) m.col(j) *= std::ldexp(1.0, s(rng));
    }
  }
  if (ld > rows) m.bottomRows(ld - rows).setConstant(std::numeric_limits<double>::quiet_NaN());
  return m;
}
}  // namespace

GemmProblem make_problem(const GemmShape& shape, double alpha, double beta, std::uint64_t seed, const Operands& ab) {
  GemmProblem p;
  p.shape = shape.resolved();
  p.alpha = alpha;
  p.beta = beta;
  p.seed = seed;
  const GemmShape& s = p.shape;
  // pow2 scales rows of op(A) (stored columns of A^T) and columns of op(B) (stored rows of B^T).
  p.A = random_padded(s.lda, s.a_rows(), s.a_cols(), seed, ab, s.transa == Op::N);
  p.B = random_padded(s.ldb, s.b_rows(), s.b_cols(), seed + 1, ab, s.transb == Op::T);
  if (beta != 0.0) p.C0 = random_padded(s.ldc, s.M, s.N, seed + 2, Operands::uniform(), false);
  return p;
}

GemmArgs GemmProblem::args(const double* a, const double* b, double* c) const {
  const GemmShape& s = shape;
  GemmArgs g{s.M, s.N, s.K, alpha, a, s.lda, b, s.ldb, beta, c, s.ldc};
  g.transa = s.transa;
  g.transb = s.transb;
  return g;
}

namespace {

// ref = alpha op(A) op(B) and mag = |alpha| |op(A)| |op(B)|, with op(A) and op(B) as Eigen views of the stored
// arrays (no transposed copies). Eigen evaluates |op(A)| into a temporary for the product: it is taken over
// blocks of rows, so that a large A (the tests past 2^31 elements) costs one block more, not a second A.
template <class OpA, class OpB>
void reference_product(const OpA& a, const OpB& b, double alpha, Eigen::MatrixXd& ref, Eigen::MatrixXd& mag) {
  ref.noalias() = alpha * (a * b);
  const Eigen::MatrixXd b_abs = b.cwiseAbs();
  constexpr Eigen::Index kRows = 4096;
  for (Eigen::Index r = 0; r < a.rows(); r += kRows) {
    const Eigen::Index h = std::min(kRows, a.rows() - r);
    mag.middleRows(r, h).noalias() = std::abs(alpha) * (a.middleRows(r, h).cwiseAbs() * b_abs);
  }
}

}  // namespace

const GemmExpected& GemmProblem::expected() const {
  if (!expected_) {
    const auto a = A.topRows(shape.a_rows());
    const auto b = B.topRows(shape.b_rows());
    auto e = std::make_shared<GemmExpected>();
    e->ref = Eigen::MatrixXd::Zero(shape.M, shape.N);
    Eigen::MatrixXd mag = Eigen::MatrixXd::Zero(shape.M, shape.N);
    if (alpha != 0.0 && shape.K > 0) {
      const bool ta = shape.transa == Op::T, tb = shape.transb == Op::T;
      if (ta && tb) reference_product(a.transpose(), b.transpose(), alpha, e->ref, mag);
      else if (ta) reference_product(a.transpose(), b, alpha, e->ref, mag);
      else if (tb) reference_product(a, b.transpose(), alpha, e->ref, mag);
      else reference_product(a, b, alpha, e->ref, mag);
    }
    if (beta != 0.0) {
      e->ref += beta * C0.topRows(shape.M);
      mag += std::abs(beta) * C0.topRows(shape.M).cwiseAbs();
    }
    const double scale = kBoundFactor * (shape.K + 2) * std::numeric_limits<double>::epsilon();
    e->bound = (scale * mag).array() + std::numeric_limits<double>::min();
    expected_ = std::move(e);
  }
  return *expected_;
}

SampledExpectation sampled_expectation(const GemmProblem& p, int i, int j, long double dot, long double mag) {
  const long double eps = std::numeric_limits<double>::epsilon();
  long double want = static_cast<long double>(p.alpha) * dot, scale = std::fabs(static_cast<long double>(p.alpha)) * mag;
  if (p.beta != 0.0) {
    want += static_cast<long double>(p.beta) * p.C0(i, j);
    scale += std::fabs(static_cast<long double>(p.beta) * p.C0(i, j));
  }
  return {want, kBoundFactor * (p.shape.K + 2) * eps * scale + std::numeric_limits<double>::min()};
}

GemmCheck validate_sampled(const GemmProblem& p, const double* C, int samples) {
  const GemmShape& s = p.shape;
  std::vector<std::pair<int, int>> at;
  if (s.M == 0 || s.N == 0) return validate_at(p, C, at);
  if (static_cast<long long>(s.M) * s.N <= samples) {  // no more elements than samples: each of them once
    for (int j = 0; j < s.N; ++j)
      for (int i = 0; i < s.M; ++i) at.push_back({i, j});
  } else {
    at = {{0, 0}, {s.M - 1, 0}, {0, s.N - 1}, {s.M - 1, s.N - 1}};
    std::mt19937_64 rng(p.seed ^ 0x5A17ED);
    std::uniform_int_distribution<int> row(0, s.M - 1), col(0, s.N - 1);
    while (static_cast<int>(at.size()) < samples) at.push_back({row(rng), col(rng)});
  }
  return validate_at(p, C, at);
}

GemmCheck validate_at(const GemmProblem& p, const double* C, const std::vector<std::pair<int, int>>& at) {
  const GemmShape& s = p.shape;
  GemmCheck r;
  std::ostringstream os;
  os.precision(17);
  for (const auto& [i, j] : at)
    if (i < 0 || i >= s.M || j < 0 || j >= s.N)
      throw std::invalid_argument("validate_at: C(" + std::to_string(i) + ", " + std::to_string(j) + ") is outside " +
                                  s.str());
  if (at.empty()) {
    r.ok = true;
    return r;
  }
  // The dot products, on every core, in runs of samples that share a row of op(A) or a column of op(B). A row of A
  // as stored (op(A) = A) or a column of B^T is K loads one leading dimension apart, a cache line each: such an
  // operand is gathered into a contiguous copy once per run where the runs follow it (by rows, unless op(B) alone is
  // strided or both are and N < M), else once per sample. Read in place, 4096 samples of 128 x 128 x 262144 take 23 s on
  // two cores, most of it waiting on memory; gathered, 1.2 s. Each sum runs k = 0 .. K - 1 in long double, so the
  // result does not depend on the threads.
  std::vector<long double> dots(at.size(), 0), mags(at.size(), 0);
  const bool a_strided = s.transa == Op::N, b_strided = s.transb == Op::T;
  const bool by_row = !b_strided || (a_strided && s.M <= s.N);
  auto key = [&](std::size_t e) { return by_row ? at[e].first : at[e].second; };
  std::vector<std::size_t> order(at.size());
  for (std::size_t e = 0; e < order.size(); ++e) order[e] = e;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return key(x) < key(y); });
  std::vector<std::size_t> runs;  // the first sample (in `order`) of each run, then the end
  for (std::size_t e = 0; e < order.size(); ++e)
    if (e == 0 || key(order[e]) != key(order[e - 1])) runs.push_back(e);
  runs.push_back(order.size());
  constexpr int kGatherMaxK = 1 << 22;  // longer rows are read where they lie (a copy is K doubles a thread)
  const bool gather = s.K <= kGatherMaxK;
  const long long run_count = static_cast<long long>(runs.size()) - 1;
  if (p.alpha != 0.0) {
#pragma omp parallel
    {
      // op(A)'s row i and op(B)'s column j as contiguous K doubles; null: read in place. Each is line `x` of its
      // stored operand m: a row (op(A) = A, op(B) = B^T), gathered into `copy`, or a column, read where it lies. The
      // copies are sized on a thread's first gather, so only threads that take a run hold one.
      std::vector<double> a_row, b_col;
      auto line = [&](const Eigen::MatrixXd& m, bool strided, int x, std::vector<double>& copy) -> const double* {
        if (!gather) return nullptr;
        if (!strided) return m.data() + static_cast<std::size_t>(x) * m.rows();
        copy.resize(static_cast<std::size_t>(s.K));
        for (int k = 0; k < s.K; ++k) copy[k] = m(x, k);
        return copy.data();
      };
      auto row_of_a = [&](int i) { return line(p.A, a_strided, i, a_row); };
      auto column_of_b = [&](int j) { return line(p.B, b_strided, j, b_col); };
#pragma omp for schedule(dynamic)
      for (long long g = 0; g < run_count; ++g) {
        const auto [i0, j0] = at[order[runs[g]]];
        const double* fixed = by_row ? row_of_a(i0) : column_of_b(j0);  // the run's shared operand
        for (std::size_t e = runs[g]; e < runs[g + 1]; ++e) {
          const auto [i, j] = at[order[e]];
          const double* a = by_row ? fixed : row_of_a(i);
          const double* b = by_row ? column_of_b(j) : fixed;
          long double dot = 0, mag = 0;
          for (int k = 0; k < s.K; ++k) {
            const long double x = a ? a[k] : p.op_a(i, k), y = b ? b[k] : p.op_b(k, j);
            dot += x * y;
            mag += std::fabs(x * y);
          }
          dots[order[e]] = dot;
          mags[order[e]] = mag;
        }
      }
    }
  }
  int shown = 0;
  std::set<int> padded_columns;
  for (std::size_t e = 0; e < at.size(); ++e) {
    const auto [i, j] = at[e];
    const auto [want, bound] = sampled_expectation(p, i, j, dots[e], mags[e]);
    const double got = C[i + static_cast<std::size_t>(j) * s.ldc];
    const long double err = std::fabs(static_cast<long double>(got) - want);
    if (!std::isfinite(got) || !(err <= bound)) {
      ++r.bad;
      if (shown++ < 5)
        os << "\n  C(" << i << ", " << j << "): got " << got << ", want " << static_cast<double>(want) << ", bound "
           << static_cast<double>(bound);
    } else {
      r.worst = std::max(r.worst, static_cast<double>(err / bound));
    }
    if (padded_columns.insert(j).second)  // each sampled column's padding once
      for (int pad = s.M; pad < s.ldc; ++pad)
        if (!std::isnan(C[pad + static_cast<std::size_t>(j) * s.ldc])) {
          ++r.bad;
          if (shown++ < 5) os << "\n  C(" << pad << ", " << j << ") is padding (row >= M) but was written";
        }
  }
  r.ok = r.bad == 0;
  if (!r.ok) {
    std::ostringstream head;
    head << r.bad << " bad element(s) among " << at.size() << " checked of " << s.str() << " (seed " << p.seed
         << ", alpha " << p.alpha << ", beta " << p.beta << ")";
    r.report = head.str() + os.str();
  }
  return r;
}

GemmCheck validate(const GemmProblem& p, const Eigen::MatrixXd& C) {
  const GemmShape& s = p.shape;
  GemmCheck r;
  std::ostringstream os;
  os.precision(17);
  if (C.rows() != s.ldc || C.cols() != s.N) {
    os << "result has shape " << C.rows() << "x" << C.cols() << ", want " << s.ldc << "x" << s.N;
    r.bad = 1;
    r.report = os.str();
    return r;
  }
  const Eigen::MatrixXd& ref = p.expected().ref;
  const Eigen::MatrixXd& bounds = p.expected().bound;
  int shown = 0;
  auto note = [&](int i, int j, double got, double want, double bound) {
    if (shown++ < 5)
      os << "\n  C(" << i << ", " << j << "): got " << got << ", want " << want << ", bound " << bound;
  };
  for (int j = 0; j < s.N; ++j) {
    for (int i = 0; i < s.M; ++i) {
      const double got = C(i, j), want = ref(i, j);
      const double bound = bounds(i, j);
      const double err = std::abs(got - want);
      if (!std::isfinite(got) || !(err <= bound)) {
        ++r.bad;
        note(i, j, got, want, bound);
      } else {
        r.worst = std::max(r.worst, err / bound);
      }
    }
    for (int i = s.M; i < s.ldc; ++i) {
      if (!std::isnan(C(i, j))) {
        ++r.bad;
        if (shown++ < 5) os << "\n  C(" << i << ", " << j << ") is padding (row >= M) but was written: " << C(i, j);
      }
    }
  }
  r.ok = r.bad == 0;
  if (!r.ok) {
    std::ostringstream head;
    head << r.bad << " bad element(s) of " << s.str() << " (seed " << p.seed << ", alpha " << p.alpha
         << ", beta " << p.beta << ")";
    r.report = head.str() + os.str();
  }
  return r;
}

}  // namespace ks::gemm
