// The validator and the problem: the Eigen reference, the element-wise bound, sampled validation, NaN padding,
// the operand distributions, the BLAS argument rules; and the validator on a real GPU result.
#include "gemm_fixtures.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

namespace ks::gemm {
namespace {

Eigen::MatrixXd host_result(const GemmProblem& p) {
  const GemmShape& s = p.shape;
  Eigen::MatrixXd c = Eigen::MatrixXd::Constant(s.ldc, s.N, std::nan(""));
  Eigen::MatrixXd v = p.alpha * (p.A.topRows(s.M) * p.B.topRows(s.K));
  if (s.M == 0 || s.N == 0) return c;
  if (p.beta != 0.0) v += p.beta * p.C0.topRows(s.M);
  c.topRows(s.M) = v;
  return c;
}

TEST(GemmValidator, AcceptsTheReferenceItself) {
  const GemmProblem p = make_problem({37, 23, 51, 40, 60, 41}, 1.5, -0.75, choose_seed());
  const GemmCheck c = validate(p, host_result(p));
  EXPECT_TRUE(c.ok) << c.report;
}

TEST(GemmValidator, CatchesOneBrokenElement) {
  const GemmProblem p = make_problem({64, 48, 100}, 1.0, 0.0, choose_seed());
  Eigen::MatrixXd c = host_result(p);
  // The smallest change that matters: a few ulp beyond the bound of one element.
  const double bound = kBoundFactor * (p.shape.K + 2) * 2.2e-16 *
                       (p.A.row(17).cwiseAbs() * p.B.col(9).cwiseAbs())(0, 0);
  c(17, 9) += 4 * bound;
  const GemmCheck r = validate(p, c);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.bad, 1);
  EXPECT_NE(r.report.find("C(17, 9)"), std::string::npos) << r.report;
  EXPECT_NE(r.report.find("seed"), std::string::npos) << r.report;
}

TEST(GemmValidator, CatchesNaNAndUnwrittenElements) {
  const GemmProblem p = make_problem({5, 7, 3}, 2.0, 0.5, choose_seed());
  Eigen::MatrixXd c = host_result(p);
  c(4, 6) = std::nan("");
  EXPECT_FALSE(validate(p, c).ok);
  c = host_result(p);
  c(0, 0) = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(validate(p, c).ok);
}

TEST(GemmValidator, CatchesWritesIntoPaddingRows) {
  const GemmProblem p = make_problem({10, 4, 6, 0, 0, 13}, 1.0, 0.0, choose_seed());
  Eigen::MatrixXd c = host_result(p);
  c(11, 2) = 0.0;  // row 11 >= M = 10: padding
  const GemmCheck r = validate(p, c);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.report.find("padding"), std::string::npos) << r.report;
}

TEST(GemmValidator, RejectsWrongShape) {
  const GemmProblem p = make_problem({4, 4, 4}, 1.0, 0.0, 1);
  EXPECT_FALSE(validate(p, Eigen::MatrixXd::Zero(3, 4)).ok);
}

TEST(GemmProblemTest, PaddingIsNaNAndInputsAreRandom) {
  const GemmProblem p = make_problem({3, 2, 2, 5, 4, 6}, 1.0, 0.5, 42);
  EXPECT_EQ(make_problem({3, 2, 2}, 1.0, 0.0, 42).C0.size(), 0);  // beta 0: C is never read, so there is no C0
  EXPECT_TRUE(std::isnan(p.A(3, 0)) && std::isnan(p.A(4, 1)));
  EXPECT_TRUE(std::isnan(p.B(2, 0)) && std::isnan(p.C0(5, 1)));
  EXPECT_NE(p.A(0, 0), p.A(1, 0));
  const GemmProblem q = make_problem({3, 2, 2, 5, 4, 6}, 1.0, 0.5, 43);
  EXPECT_NE(p.A(0, 0), q.A(0, 0));
}

TEST(GemmArgsTest, BlasRulesForShapesLeadingDimensionsAndPointers) {
  double x = 0;
  GemmArgs a{4, 4, 4, 1.0, &x, 4, &x, 4, 0.0, &x, 4};
  EXPECT_NO_THROW(check_args(a));
  GemmArgs b = a;
  b.M = -1;
  EXPECT_THROW(check_args(b), std::invalid_argument);
  b = a;
  b.K = -1;
  EXPECT_THROW(check_args(b), std::invalid_argument);
  // Zero dimensions are legal BLAS (a quick return); leading dimensions are then at least 1.
  b = a;
  b.M = 0;
  b.lda = b.ldc = 1;
  EXPECT_NO_THROW(check_args(b));
  b.lda = 0;
  EXPECT_THROW(check_args(b), std::invalid_argument);
  b = a;
  b.K = 0;
  b.ldb = 1;
  b.A = b.B = nullptr;  // K zero: A and B are not read
  EXPECT_NO_THROW(check_args(b));
  b = a;
  b.alpha = 0.0;
  b.A = b.B = nullptr;  // alpha zero: A and B are not read
  EXPECT_NO_THROW(check_args(b));
  b.alpha = 1.0;
  EXPECT_THROW(check_args(b), std::invalid_argument);
  b = a;
  b.lda = 3;
  EXPECT_THROW(check_args(b), std::invalid_argument);
  b = a;
  b.ldb = 3;
  EXPECT_THROW(check_args(b), std::invalid_argument);
  b = a;
  b.ldc = 2;
  EXPECT_THROW(check_args(b), std::invalid_argument);
  b = a;
  b.C = nullptr;
  EXPECT_THROW(check_args(b), std::invalid_argument);
  // Dimensions near INT_MAX would overflow the kernels' int tile arithmetic (i0 + BM past the last tile).
  b = a;
  b.M = b.lda = b.ldc = kMaxDim;
  EXPECT_NO_THROW(check_args(b));
  b.M = b.lda = b.ldc = kMaxDim + 1;
  EXPECT_THROW(check_args(b), std::invalid_argument);
  b = a;
  b.N = 2147483647;
  EXPECT_THROW(check_args(b), std::invalid_argument);
  b = a;
  b.K = b.ldb = kMaxDim + 1;
  EXPECT_THROW(check_args(b), std::invalid_argument);
}

// op(A) = A^T stores A as K x M, op(B) = B^T stores B as N x K: BLAS checks the leading dimensions against those.
TEST(GemmArgsTest, TransposedOperandsCheckTheirStoredShapes) {
  double x = 0;
  GemmArgs a{4, 6, 5, 1.0, &x, 4, &x, 5, 0.0, &x, 4};  // NN: lda >= M, ldb >= K
  EXPECT_NO_THROW(check_args(a));
  a.transa = Op::T;  // A is 5 x 4: lda >= K = 5
  EXPECT_THROW(check_args(a), std::invalid_argument);
  a.lda = 5;
  EXPECT_NO_THROW(check_args(a));
  a.transb = Op::T;  // B is 6 x 5: ldb >= N = 6
  try {
    check_args(a);
    ADD_FAILURE() << "ldb 5 < N accepted for op(B) = B^T";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("ldb (5) < max(1, N)"), std::string::npos) << e.what();
  }
  a.ldb = 6;
  EXPECT_NO_THROW(check_args(a));
  a.transa = Op::N;  // back to A as 4 x 5 with lda 5 (padded): legal
  EXPECT_NO_THROW(check_args(a));
  EXPECT_EQ(parse_op('n'), Op::N);
  EXPECT_EQ(parse_op('T'), Op::T);
  EXPECT_EQ(parse_op('c'), Op::T);  // conjugate transpose: T for real data
  EXPECT_THROW(parse_op('X'), std::invalid_argument);
  EXPECT_EQ(ops_name(Op::T, Op::N), "TN");
  EXPECT_EQ(ops_names(kOpsAll), "NN,NT,TN,TT");
  EXPECT_EQ(ops_names(kOpsNN | op_bit(Op::T, Op::T)), "NN,TT");
}

// A transposed problem stores the transposes, padded with NaN as any other, and its reference, full and sampled,
// is alpha op(A) op(B) + beta C0.
TEST(GemmProblemTest, TransposedOperandsAndTheirReference) {
  for (const auto& [ta, tb] : {std::pair{Op::T, Op::N}, {Op::N, Op::T}, {Op::T, Op::T}}) {
    const GemmShape shape = GemmShape{7, 5, 9, 10, 11, 8}.with_ops(ta, tb);
    const GemmProblem p = make_problem(shape, 1.25, -0.5, choose_seed(), parse_operands("exp:1,pow2:20"));
    SCOPED_TRACE(shape.str());
    EXPECT_EQ(p.A.rows(), shape.lda);
    EXPECT_EQ(p.A.cols(), ta == Op::T ? 7 : 9);
    EXPECT_EQ(p.B.cols(), tb == Op::T ? 9 : 5);
    EXPECT_EQ(shape.lda - shape.a_rows(), 3);  // the padding kept
    EXPECT_EQ(shape.ldb - shape.b_rows(), 2);
    EXPECT_TRUE(std::isnan(p.A(shape.lda - 1, 0)) && std::isnan(p.B(shape.ldb - 1, 0)));
    Eigen::MatrixXd c = Eigen::MatrixXd::Constant(p.shape.ldc, 5, std::nan(""));
    for (int i = 0; i < 7; ++i)
      for (int j = 0; j < 5; ++j) {
        long double dot = 0;
        for (int k = 0; k < 9; ++k) {
          const double a = ta == Op::T ? p.A(k, i) : p.A(i, k), b = tb == Op::T ? p.B(j, k) : p.B(k, j);
          dot += static_cast<long double>(a) * b;
        }
        c(i, j) = static_cast<double>(1.25L * dot - 0.5L * p.C0(i, j));
      }
    const GemmCheck full = validate(p, c);
    EXPECT_TRUE(full.ok) << full.report;
    EXPECT_TRUE(validate_sampled(p, c.data(), 20).ok);
    // One element off is caught.
    Eigen::MatrixXd wrong = c;
    wrong(3, 2) = c(3, 2) + 1e-6 * (1 + std::abs(c(3, 2)));
    EXPECT_FALSE(validate(p, wrong).ok);
    // and by the sampled check (op(A)'s rows and op(B)'s columns read as each op stores them), every element of C
    // among its samples.
    const GemmCheck sampled = validate_sampled(p, wrong.data(), 7 * 5);
    EXPECT_FALSE(sampled.ok);
    EXPECT_NE(sampled.report.find("C(3, 2)"), std::string::npos) << sampled.report;
  }
}

// run() refuses a combination the variant does not declare, before touching the GPU or the operands.
TEST(GemmRunTest, RefusesOpsTheVariantDoesNotDeclare) {
  const GemmVariant* naive = registry().find("naive");
  ASSERT_NE(naive, nullptr);
  EXPECT_EQ(naive->ops, kOpsNN);
#if !defined(KS_HIP)
  EXPECT_EQ(registry().find("cublas")->ops, kOpsAll);
#endif
  ExecContext ctx(nullptr);
  double x = 0;
  GemmArgs a{4, 4, 4, 1.0, &x, 4, &x, 4, 0.0, &x, 4};
  a.transb = Op::T;
  try {
    run(*naive, a, ctx);
    ADD_FAILURE() << "naive ran NT";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("naive runs op(A) op(B) = NN only, not NT"), std::string::npos) << e.what();
  }
}

TEST(GemmProblemTest, ReferenceFollowsBlasWhenAlphaOrKIsZero) {
  const GemmProblem nan_ab = make_problem({7, 5, 9}, 0.0, 2.0, choose_seed(), Operands::nan());
  ASSERT_TRUE(std::isnan(nan_ab.A(0, 0)) && std::isnan(nan_ab.B(0, 0)));
  EXPECT_TRUE(nan_ab.expected().ref.isApprox(2.0 * nan_ab.C0.topRows(7)));
  const GemmProblem k0 = make_problem({6, 4, 0}, 1.5, -0.5, choose_seed());
  EXPECT_EQ(k0.A.cols(), 0);
  EXPECT_TRUE(k0.expected().ref.isApprox(-0.5 * k0.C0.topRows(6)));
  const GemmProblem m0 = make_problem({0, 4, 3}, 1.0, 1.0, choose_seed());
  EXPECT_EQ(m0.shape.ldc, 1);
  EXPECT_EQ(m0.expected().ref.size(), 0);
  EXPECT_TRUE(validate(m0, m0.C0).ok);  // nothing to check but C's padding, which must stay NaN
}

TEST(GemmOperands, ParsesWhatItPrintsAndRefusesTheRest) {
  for (const char* text : {"uniform", "exp:0.5", "exp:4", "exp:2,pow2:100", "uniform,pow2:400", "exp:0"}) {
    const Operands o = parse_operands(text);
    EXPECT_EQ(parse_operands(o.str()).str(), o.str()) << text;
  }
  EXPECT_EQ(parse_operands("exp:1.5").phi, 1.5);
  EXPECT_EQ(parse_operands("exp:2,pow2:30").pow2, 30);
  EXPECT_EQ(parse_operands("uniform").kind, Operands::Kind::Uniform);
  for (const char* bad : {"", "normal", "exp", "exp:", "exp:x", "exp:1x", "exp:-1", "exp:9", "exp:nan", "exp:inf",
                          " exp:1", "uniform,", "uniform,pow2:", "uniform,pow2:401", "uniform,pow2:-1",
                          "uniform,pow2:1.5", "exp:1,scale:3", "exp:1,pow2:3,pow2:4", "nan"}) {
    EXPECT_THROW(parse_operands(bad), std::invalid_argument) << "'" << bad << "'";
  }
}

// The distributions draw what they say: exp:PHI's log-magnitudes spread as PHI says, pow2 scales whole rows of
// A and columns of B by powers of two (element ratios within a row unchanged), and a seed repeats its operands.
TEST(GemmOperands, DrawWhatTheySay) {
  const std::uint64_t seed = choose_seed();
  const GemmShape shape{200, 150, 300, 203, 0, 0};
  auto log_spread = [](const Eigen::MatrixXd& x, int rows) {
    const Eigen::ArrayXXd l = x.topRows(rows).array().abs().log();
    return std::sqrt((l - l.mean()).square().mean());
  };
  const GemmProblem u = make_problem(shape, 1.0, 0.0, seed);
  EXPECT_LE(u.A.topRows(200).cwiseAbs().maxCoeff(), 1.0);
  const double base = log_spread(u.A, 200);  // log|x| of x uniform: standard deviation 1
  double last = 0;
  for (double phi : {0.5, 1.0, 2.0, 4.0}) {
    const GemmProblem p = make_problem(shape, 1.0, 0.0, seed, Operands::exp(phi));
    const double sd = log_spread(p.A, 200);
    // log|(u - 0.5) exp(phi g)| = log|u - 0.5| + phi g: variance 1 + phi^2
    EXPECT_NEAR(sd, std::sqrt(base * base + phi * phi), 0.05 * sd) << "phi " << phi << ", seed " << seed;
    EXPECT_GT(sd, last);
    last = sd;
    EXPECT_TRUE(std::isnan(p.A(201, 3))) << "padding rows stay NaN";
  }
  Operands scaled = Operands::exp(1.0);
  scaled.pow2 = 300;
  const GemmProblem plain = make_problem(shape, 1.0, 0.0, seed, Operands::exp(1.0));
  const GemmProblem wide = make_problem(shape, 1.0, 0.0, seed, scaled);
  int max_e = -10000, min_e = 10000;
  for (int i = 0; i < 200; ++i) {
    const Eigen::ArrayXd r = wide.A.row(i).array() / plain.A.row(i).array();
    int e = 0;
    EXPECT_EQ(std::frexp(r(0), &e), 0.5) << "row " << i << " scaled by a power of two";
    EXPECT_TRUE((r == r(0)).all()) << "row " << i << ": one factor for the whole row";
    max_e = std::max(max_e, e);
    min_e = std::min(min_e, e);
  }
  EXPECT_GT(max_e - min_e, 300) << "rows spread over the range";
  for (int j = 0; j < 150; ++j) {
    const Eigen::ArrayXd r = wide.B.col(j).array() / plain.B.col(j).array();
    EXPECT_TRUE((r == r(0)).all()) << "column " << j << ": one factor for the whole column";
  }
  const GemmProblem again = make_problem(shape, 1.0, 0.0, seed, scaled);
  EXPECT_TRUE(again.A.topRows(200) == wide.A.topRows(200));
  EXPECT_TRUE(again.B == wide.B);
}

TEST(GemmValidator, SampledValidationCatchesWhatItSamples) {
  const GemmProblem p = make_problem({60, 40, 30, 63, 0, 61}, 1.25, 0.5, choose_seed());
  Eigen::MatrixXd c = host_result(p);
  EXPECT_TRUE(validate_sampled(p, c.data(), 4096).ok);
  // A corner is always among the samples; just past its bound, it fails. Placed from the sampled check's own
  // long-double value, not from the host result or the double reference, whose rounding (up to a few hundredths of
  // the bound) could pull it back inside (KS_SEED=1874 did).
  long double dot = 0, mag = 0;
  for (int k = 0; k < p.shape.K; ++k) {
    const long double x = p.op_a(59, k), y = p.op_b(k, 39);
    dot += x * y;
    mag += std::fabs(x * y);
  }
  const SampledExpectation at = sampled_expectation(p, 59, 39, dot, mag);
  c(59, 39) = static_cast<double>(at.want + 1.01L * at.bound);
  ASSERT_GT(std::fabs(static_cast<long double>(c(59, 39)) - at.want), at.bound);
  const GemmCheck corner = validate_sampled(p, c.data(), 4);
  EXPECT_FALSE(corner.ok);
  EXPECT_NE(corner.report.find("C(59, 39)"), std::string::npos) << corner.report;
  // With as many samples as C has elements, each element is checked once: any one broken element is found, once.
  c = host_result(p);
  c(37, 11) = std::nan("");
  const GemmCheck every = validate_sampled(p, c.data(), 60 * 40);
  EXPECT_FALSE(every.ok);
  EXPECT_EQ(every.bad, 1) << every.report;
  EXPECT_NE(every.report.find("C(37, 11)"), std::string::npos) << every.report;
  // Written padding in a sampled column fails too, counted once however many samples share the column.
  c = host_result(p);
  c(60, 0) = 1.0;
  EXPECT_FALSE(validate_sampled(p, c.data(), 4).ok);
  const GemmCheck padding = validate_sampled(p, c.data(), 60 * 40);
  EXPECT_EQ(padding.bad, 1) << padding.report;
}

// validate_at checks the elements it is given and no others, and refuses a position outside C.
TEST(GemmValidator, ValidationAtPositionsChecksThoseElements) {
  const GemmProblem p = make_problem({60, 40, 30, 63, 0, 61}, 1.25, 0.5, choose_seed());
  Eigen::MatrixXd c = host_result(p);
  c(37, 11) = std::nan("");
  const std::vector<std::pair<int, int>> row_37 = {{37, 0}, {37, 11}, {37, 39}}, row_36 = {{36, 0}, {36, 11}};
  const GemmCheck hit = validate_at(p, c.data(), row_37);
  EXPECT_FALSE(hit.ok);
  EXPECT_EQ(hit.bad, 1) << hit.report;
  EXPECT_NE(hit.report.find("C(37, 11)"), std::string::npos) << hit.report;
  const GemmCheck missed = validate_at(p, c.data(), row_36);
  EXPECT_TRUE(missed.ok) << missed.report;
  EXPECT_TRUE(validate_at(p, c.data(), {}).ok);
  EXPECT_THROW(validate_at(p, c.data(), {{60, 0}}), std::invalid_argument) << "row M is padding, not C";
  EXPECT_THROW(validate_at(p, c.data(), {{0, -1}}), std::invalid_argument);
}

TEST(GemmValidatorOnGpu, CatchesOneBrokenElementOfARealResult) {
  KS_REQUIRE_GPU();
  const GemmProblem p = make_problem({100, 100, 100}, 1.0, 0.0, choose_seed());
  Stream stream;
  ExecContext ctx(stream.get());
  Runner runner(*registry().find(kTrusted), Mode::Device, p, ctx);
  runner.reset_output();
  runner.run();
  Eigen::MatrixXd c = runner.result();
  ASSERT_TRUE(validate(p, c).ok);
  // Just past the element's own bound, whatever its size, from the reference (the result's own error could pull an
  // offset from the result back inside).
  c(50, 50) = p.expected().ref(50, 50) + 1.01 * p.expected().bound(50, 50);
  ASSERT_GT(std::abs(c(50, 50) - p.expected().ref(50, 50)), p.expected().bound(50, 50));
  EXPECT_FALSE(validate(p, c).ok);
}

}  // namespace
}  // namespace ks::gemm
