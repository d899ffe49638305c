#include "gemm/problem.hpp"

#include "common/random.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace ks::gemm {

GemmShape GemmShape::resolved() const {
  GemmShape s = *this;
  if (s.lda == 0) s.lda = std::max(1, M);
  if (s.ldb == 0) s.ldb = std::max(1, K);
  if (s.ldc == 0) s.ldc = std::max(1, M);
  return s;
}

std::string GemmShape::str() const {
  const GemmShape r = resolved();
  std::ostringstream os;
  os << M << "x" << N << "x" << K;
  if (r.lda != std::max(1, M) || r.ldb != std::max(1, K) || r.ldc != std::max(1, M)) os << " (lda " << r.lda << ", ldb " << r.ldb << ", ldc " << r.ldc << ")";
  return os.str();
}

namespace {
Eigen::MatrixXd random_padded(int ld, int rows, int cols, std::uint64_t seed, Operands fill) {
  Eigen::MatrixXd m(ld, cols);
  if (fill == Operands::NaN) {
    m.setConstant(std::numeric_limits<double>::quiet_NaN());
    return m;
  }
  fill_random(m.data(), static_cast<std::size_t>(m.size()), seed);
  m.bottomRows(ld - rows).setConstant(std::numeric_limits<double>::quiet_NaN());
  return m;
}
}  // namespace

GemmProblem make_problem(const GemmShape& shape, double alpha, double beta, std::uint64_t seed, Operands ab) {
  GemmProblem p;
  p.shape = shape.resolved();
  p.alpha = alpha;
  p.beta = beta;
  p.seed = seed;
  const GemmShape& s = p.shape;
  p.A = random_padded(s.lda, s.M, s.K, seed, ab);
  p.B = random_padded(s.ldb, s.K, s.N, seed + 1, ab);
  p.C0 = random_padded(s.ldc, s.M, s.N, seed + 2, Operands::Uniform);
  return p;
}

const GemmExpected& GemmProblem::expected() const {
  if (!expected_) {
    const auto a = A.topRows(shape.M);
    const auto b = B.topRows(shape.K);
    auto e = std::make_shared<GemmExpected>();
    e->ref = Eigen::MatrixXd::Zero(shape.M, shape.N);
    Eigen::MatrixXd mag = Eigen::MatrixXd::Zero(shape.M, shape.N);
    if (alpha != 0.0 && shape.K > 0) {
      e->ref = alpha * (a * b);
      mag = std::abs(alpha) * (a.cwiseAbs() * b.cwiseAbs());
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
