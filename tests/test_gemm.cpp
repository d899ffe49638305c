#include "gemm/cublasxt.hpp"
#include "gemm/dmma_shapes.hpp"
#include "gemm/stream_k.hpp"
#include "gemm/gemm.hpp"
#include "gemm/modes.hpp"
#include "gemm/problem.hpp"
#include "gpu_test.hpp"

#include "common/random.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <random>
#include <tuple>

namespace ks::gemm {

void PrintTo(Mode m, std::ostream* os) { *os << to_string(m); }

namespace {

// ---- host-only: the validator itself ----

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
  // A corner is always among the samples; just past its bound, it fails.
  c(59, 39) += 1.01 * p.expected().bound(59, 39);
  const GemmCheck corner = validate_sampled(p, c.data(), 4);
  EXPECT_FALSE(corner.ok);
  EXPECT_NE(corner.report.find("C(59, 39)"), std::string::npos) << corner.report;
  // With 25 samples per element, any one broken element is found (a miss has probability e^-25).
  c = host_result(p);
  c(37, 11) = std::nan("");
  EXPECT_FALSE(validate_sampled(p, c.data(), 25 * 60 * 40).ok);
  // Written padding in a sampled column fails too.
  c = host_result(p);
  c(60, 0) = 1.0;
  EXPECT_FALSE(validate_sampled(p, c.data(), 4).ok);
}

TEST(PipelinedPlan, AResidentWhenItFitsAndTheLinkBound) {
  pipelined::PlanInput in{.M = 4096, .N = 4096, .K = 4096, .budget_bytes = std::size_t(70) << 30, .h2d_gbs = 55,
                          .d2h_gbs = 50, .tflops = 55};
  const pipelined::Plan p = pipelined::plan(in);
  EXPECT_EQ(p.mt, 4096);  // all of A stays: it crosses once
  EXPECT_EQ(p.row_blocks, 1);
  EXPECT_DOUBLE_EQ(p.h2d_bytes, 2.0 * 8 * 4096 * 4096);  // A and B once each: the minimum
  EXPECT_NEAR(p.link_ms, p.h2d_bytes / 55e6, 1e-9);
  EXPECT_GE(p.predicted_ms, p.link_ms);
  // Above the link by what cannot overlap: C's return (2.7 ms here) waits for all of A (2.4 ms).
  EXPECT_LT(p.predicted_ms, 1.25 * p.link_ms);
  EXPECT_LE(p.device_bytes, in.budget_bytes);
  EXPECT_EQ(p.col_panels, (4096 + p.nt - 1) / p.nt);
  // beta != 0: C crosses too.
  in.beta_nonzero = true;
  EXPECT_DOUBLE_EQ(pipelined::plan(in).h2d_bytes, 3.0 * 8 * 4096 * 4096);
}

TEST(PipelinedPlan, ABudgetBelowAMakesBlocksAndSendsBOncePerBlock) {
  const std::size_t a_bytes = std::size_t(8) * 6000 * 3000;
  pipelined::PlanInput in{.M = 6000, .N = 5000, .K = 3000, .budget_bytes = pipelined::kDeviceOverheadBytes + a_bytes / 3,
                          .h2d_gbs = 50, .d2h_gbs = 50, .tflops = 50};
  const pipelined::Plan p = pipelined::plan(in);
  EXPECT_LT(p.mt, 6000);
  EXPECT_EQ(p.mt % 64, 0);
  EXPECT_EQ(p.row_blocks, (6000 + p.mt - 1) / p.mt);
  EXPECT_GE(p.row_blocks, 3);
  EXPECT_DOUBLE_EQ(p.h2d_bytes, 8.0 * 6000 * 3000 + p.row_blocks * 8.0 * 3000 * 5000);
  EXPECT_LE(p.device_bytes, in.budget_bytes);
  // Not even a 64-row block with two 64-column panels: a clear error.
  in.budget_bytes = pipelined::kDeviceOverheadBytes + 1024;
  try {
    pipelined::plan(in);
    ADD_FAILURE() << "a 1 KiB budget was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("holds not even one"), std::string::npos) << e.what();
  }
}

TEST(PipelinedPlan, DevicesSplitThePanelsAndFasterLinksPredictLess) {
  pipelined::PlanInput in{.M = 16384, .N = 16384, .K = 16384, .budget_bytes = std::size_t(70) << 30, .h2d_gbs = 50,
                          .d2h_gbs = 50, .tflops = 55};
  const pipelined::Plan one = pipelined::plan(in);
  in.devices = 2;
  const pipelined::Plan two = pipelined::plan(in);
  EXPECT_DOUBLE_EQ(two.h2d_bytes, 8.0 * 16384 * 16384 * 1.5);  // all of A, half of B, per device
  EXPECT_NEAR(two.compute_ms * 2, one.compute_ms, one.compute_ms * 0.05);
  EXPECT_LT(two.predicted_ms, 0.6 * one.predicted_ms);  // compute-bound at this size: close to 2x
  in.devices = 1;
  in.h2d_gbs = 100;
  EXPECT_LE(pipelined::plan(in).predicted_ms, one.predicted_ms);
}

// The rule simulates every candidate's schedule, so it bounds the tiles per device: a product wider than 8192 x
// kMaxTiles columns takes panels wider than 8192, and one that would need more tiles at every width is refused
// with the figures (370000^3 in 1 GiB: 16.7 million tiles), rather than simulated for minutes.
TEST(PipelinedPlan, TilesPerDeviceBoundedWiderPanelsOrAClearError) {
  pipelined::PlanInput in{.M = 1000, .N = 2000000000, .K = 1000, .budget_bytes = std::size_t(78) << 30,
                          .h2d_gbs = 55, .d2h_gbs = 55, .tflops = 60};
  const pipelined::Plan wide = pipelined::plan(in);
  EXPECT_GT(wide.nt, 8192) << wide.str();
  EXPECT_LE(static_cast<long long>(wide.row_blocks) * wide.col_panels, pipelined::kMaxTiles) << wide.str();
  EXPECT_LE(wide.device_bytes, in.budget_bytes);
  in.N = 8192 * 1000;  // 1000 panels of 8192 at most: no width past 8192
  EXPECT_LE(pipelined::plan(in).nt, 8192);
  in = {.M = 370000, .N = 370000, .K = 370000, .budget_bytes = std::size_t(1) << 30, .h2d_gbs = 55, .d2h_gbs = 55,
        .tflops = 60};
  try {
    const pipelined::Plan p = pipelined::plan(in);
    ADD_FAILURE() << "planned: " << p.str();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("tiles of C per device, more than the 32768"), std::string::npos) << e.what();
  }
  in.budget_bytes = std::size_t(24) << 30;  // 83 x 181 tiles: planned
  const pipelined::Plan big = pipelined::plan(in);
  EXPECT_LE(static_cast<long long>(big.row_blocks) * big.col_panels, pipelined::kMaxTiles) << big.str();
}

// Walks a device's schedule as its three streams would run it, with random durations: the ops it waits for and
// its stream's order are all that order them. Every tile's products must cover k once, in order, beta on the
// first; each tile goes home once, after its last product; and no buffer is written while an earlier use of it
// may still run. A missing wait shows up as an overlap for some durations.
void check_schedule(const pipelined::Plan& p, const pipelined::PlanInput& in, int first_panel, int panels,
                    std::mt19937_64& rng) {
  using pipelined::Op;
  const std::vector<Op> ops = pipelined::schedule(p, in, first_panel, panels);
  SCOPED_TRACE(p.str() + ", panels " + std::to_string(first_panel) + "+" + std::to_string(panels));
  if (panels == 0) {
    EXPECT_TRUE(ops.empty());
    return;
  }
  struct Use {  // a buffer busy from begin to end
    double begin, end;
  };
  for (int trial = 0; trial < 20; ++trial) {
    std::uniform_real_distribution<double> dur(0.1, 10.0);
    std::vector<double> start(ops.size()), end(ops.size());
    double stream_end[3] = {0, 0, 0};
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const int s = Op::stream(ops[i].kind);
      start[i] = stream_end[s];
      for (int d : ops[i].deps) {
        ASSERT_LT(d, static_cast<int>(i));
        if (d >= 0) start[i] = std::max(start[i], end[d]);
      }
      end[i] = stream_end[s] = start[i] + dur(rng);
    }
    // Per tile (block row, panel column): its B, its C, its products, its return.
    struct Tile {
      int slot = -1, b = -1, c = -1, ret = -1, next_k = 0, products = 0;
      double last_product_end = 0, first_write = 0;
    };
    std::map<std::pair<int, int>, Tile> tiles;
    std::map<int, std::vector<Use>> b_uses, c_uses;  // per slot
    std::map<int, int> a_sent;                       // per block row: A's columns [0, k) sent so far
    std::map<int, Use> block_a;                      // A's buffer: a block's first chunk to its last product
    std::set<int> prepared_blocks;                   // blocks whose Prepare op came (plans that prepare A)
    std::map<int, int> prepared_products;            // per block, its products from the preparation
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      const bool block_op = op.kind == Op::SendA || op.kind == Op::Prepare;
      Tile& t = block_op ? tiles[{-1, -1}] : tiles[{op.r0, op.c0}];  // (-1, -1): no tile, erased below
      switch (op.kind) {
        case Op::SendA: {
          auto [it, fresh] = block_a.try_emplace(op.r0, Use{start[i], end[i]});
          if (!fresh) it->second.end = std::max(it->second.end, end[i]);
          EXPECT_EQ(op.k0, a_sent[op.r0]) << "A's chunks in order";
          a_sent[op.r0] = op.k1;
          break;
        }
        case Op::SendB:
          EXPECT_EQ(t.b, -1) << "a panel sent twice for one block";
          t.b = static_cast<int>(i);
          t.slot = op.slot;
          EXPECT_EQ(op.k1 - op.k0, in.K);
          break;
        case Op::SendC:
          EXPECT_TRUE(in.beta_nonzero);
          t.c = static_cast<int>(i);
          t.first_write = start[i];
          break;
        case Op::Multiply:
          ASSERT_NE(t.b, -1) << "a product before its panel was sent";
          EXPECT_EQ(op.slot, t.slot);
          EXPECT_GE(start[i], end[t.b]) << "a product before its panel arrived";
          EXPECT_EQ(op.k0, t.next_k) << "the products' ranges of k in order, each once";
          EXPECT_EQ(op.first, t.products == 0);
          if (t.products == 0 && !in.beta_nonzero) t.first_write = start[i];
          if (t.products == 0 && in.beta_nonzero) {
            EXPECT_GE(start[i], end[t.c]) << "C's tile before it arrived";
          }
          t.next_k = op.k1;
          ++t.products;
          t.last_product_end = end[i];
          block_a[op.r0].end = std::max(block_a[op.r0].end, end[i]);
          EXPECT_GE(start[i], end[op.deps[1]]);
          EXPECT_EQ(ops[op.deps[1]].r0, op.r0);
          if (op.prepared) {  // from the block's preparation, over all of k
            EXPECT_TRUE(p.prepared);
            EXPECT_EQ(ops[op.deps[1]].kind, Op::Prepare);
            EXPECT_EQ(op.k0, 0);
            EXPECT_EQ(op.k1, in.K);
            ++prepared_products[op.r0];
          } else {  // the A chunk it waits for covers its range, and the chunks come in order on one stream
            EXPECT_EQ(ops[op.deps[1]].kind, Op::SendA);
            EXPECT_GE(ops[op.deps[1]].k1, op.k1);
          }
          break;
        case Op::Prepare:  // once per block, after all of its A
          EXPECT_TRUE(p.prepared);
          EXPECT_EQ(a_sent[op.r0], in.K) << "a block prepared before all of its A was sent";
          EXPECT_EQ(prepared_blocks.count(op.r0), 0u) << "a block prepared twice";
          prepared_blocks.insert(op.r0);
          EXPECT_GE(start[i], end[op.deps[0]]);
          EXPECT_EQ(ops[op.deps[0]].kind, Op::SendA);
          EXPECT_EQ(ops[op.deps[0]].k1, in.K);
          block_a[op.r0].end = std::max(block_a[op.r0].end, end[i]);
          break;
        case Op::Return:
          EXPECT_EQ(t.next_k, in.K) << "a tile went home before all of k";
          EXPECT_EQ(t.ret, -1) << "a tile went home twice";
          EXPECT_GE(start[i], t.last_product_end);
          t.ret = static_cast<int>(i);
          b_uses[t.slot].push_back({start[t.b], t.last_product_end});
          c_uses[t.slot].push_back({t.first_write, end[i]});
          break;
      }
    }
    tiles.erase({-1, -1});
    // Every tile of every block went home; the columns are this device's panels.
    std::set<int> rows, cols;
    for (const auto& [key, t] : tiles) {
      EXPECT_NE(t.ret, -1) << "tile at row " << key.first << ", column " << key.second << " never went home";
      rows.insert(key.first);
      cols.insert(key.second);
    }
    EXPECT_EQ(static_cast<int>(rows.size()), p.row_blocks);
    for (int r0 : prepared_blocks) EXPECT_GT(prepared_products[r0], 0) << "a block prepared for no product";
    EXPECT_EQ(static_cast<int>(cols.size()), panels);
    EXPECT_EQ(*cols.begin(), first_panel * p.nt);
    for (auto* uses : {&b_uses, &c_uses})
      for (auto& [slot, u] : *uses) {
        EXPECT_LT(slot, p.slots);
        std::sort(u.begin(), u.end(), [](const Use& x, const Use& y) { return x.begin < y.begin; });
        for (std::size_t j = 1; j < u.size(); ++j)
          EXPECT_GE(u[j].begin, u[j - 1].end) << "slot " << slot << " reused while in use (trial " << trial << ")";
      }
    std::vector<Use> blocks;
    for (const auto& [r0, u] : block_a) blocks.push_back(u);
    for (std::size_t j = 1; j < blocks.size(); ++j)
      EXPECT_GE(blocks[j].begin, blocks[j - 1].end) << "A's buffer refilled while the last block multiplied";
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(PipelinedSchedule, EveryTileOnceInOrderAndNoBufferReusedEarly) {
  std::mt19937_64 rng(20261123);
  int walked = 0;
  for (int M : {1, 300, 1000, 4096})
    for (int N : {1, 700, 5000})
      for (int K : {0, 1, 333, 3000})
        for (bool beta : {false, true})
          for (std::size_t budget_mib : {std::size_t(4), std::size_t(64), std::size_t(1) << 16})
            for (int devices : {1, 3})
              for (int lead : {0, 1, 3, 100}) {
                // every other case with a compute step that prepares A (ozaki's residues: 20 bytes per element)
                const bool prepare = (M + N + K + lead + devices + static_cast<int>(budget_mib) + beta) % 2 == 0;
                pipelined::PlanInput in{.M = M, .N = N, .K = K, .beta_nonzero = beta,
                                        .budget_bytes = pipelined::kDeviceOverheadBytes + (budget_mib << 20),
                                        .h2d_gbs = 50, .d2h_gbs = 45, .tflops = 50, .devices = devices,
                                        .lead = lead, .chunks = lead == 3 ? 7 : 0,
                                        .prepared_tflops = prepare ? 80.0 : 0.0, .prepare_gbs = 500,
                                        .prepared_a_bytes = 20, .prepared_b_bytes = 20, .prepared_c_bytes = 80};
                pipelined::Plan p;
                try {
                  p = pipelined::plan(in);
                } catch (const std::invalid_argument&) {
                  continue;  // the budget holds no block (its own test)
                }
                if (lead > 0) {
                  EXPECT_EQ(p.lead, std::min(lead, (p.col_panels + devices - 1) / devices));
                }
                EXPECT_LE(p.device_bytes, in.budget_bytes);
                for (int d = 0; d < devices; ++d) {
                  const int first = static_cast<int>(static_cast<long long>(p.col_panels) * d / devices);
                  const int count = static_cast<int>(static_cast<long long>(p.col_panels) * (d + 1) / devices) - first;
                  check_schedule(p, in, first, count, rng);
                  ++walked;
                  if (HasFailure()) return;
                }
              }
  EXPECT_GT(walked, 1000);
}

// Where the products take about as long as the link (8192^3 on an H100: 19.7 ms each), multiplying only the
// first panel while A crosses leaves most products for after it; a wider lead is predicted well faster.
TEST(PipelinedPlan, ALeadOfPanelsWhereProductsMatchTheLink) {
  pipelined::PlanInput in{.M = 8192, .N = 8192, .K = 8192, .budget_bytes = std::size_t(70) << 30, .h2d_gbs = 54.4,
                          .d2h_gbs = 55, .tflops = 64};
  const pipelined::Plan best = pipelined::plan(in);
  EXPECT_GT(best.lead, 1) << best.str();
  in.nt = best.nt;
  in.lead = 1;
  const pipelined::Plan one = pipelined::plan(in);
  EXPECT_LT(best.predicted_ms, 0.92 * one.predicted_ms) << best.str() << " against " << one.str();
  // Never below what must cross, nor below the products.
  EXPECT_GE(best.predicted_ms, best.link_ms);
  EXPECT_GE(best.predicted_ms, best.compute_ms);
}

// A compute step that prepares each block of A once (ozaki's scaling and residues) multiplies every tile after A
// at its own rate, the lead's products over chunks at the plain one; what it keeps counts against the budget.
TEST(PipelinedPlan, APreparedBlockMultipliesAfterItsPreparationAndCountsItsBytes) {
  pipelined::PlanInput in{.M = 8192, .N = 8192, .K = 8192, .budget_bytes = std::size_t(70) << 30, .h2d_gbs = 54.9,
                          .d2h_gbs = 54.9, .tflops = 60};
  const pipelined::Plan plain = pipelined::plan(in);
  EXPECT_FALSE(plain.prepared);
  in.prepared_tflops = 90;
  in.prepare_gbs = 580;
  in.prepared_a_bytes = in.prepared_b_bytes = 20;
  in.prepared_c_bytes = 80;
  const pipelined::Plan p = pipelined::plan(in);
  ASSERT_TRUE(p.prepared);
  EXPECT_LT(p.predicted_ms, 0.95 * plain.predicted_ms) << p.str() << " against " << plain.str();
  EXPECT_GE(p.predicted_ms, p.link_ms);
  EXPECT_GE(p.device_bytes, std::size_t(20) * 8192 * 8192 + std::size_t(8) * 8192 * 8192);
  using pipelined::Op;
  const std::vector<Op> ops = pipelined::schedule(p, in, 0, p.col_panels);
  int prepares = 0, prepared = 0, chunked = 0, sent_a = 0;
  for (const Op& op : ops) {
    if (op.kind == Op::SendA) {
      EXPECT_EQ(prepares, 0) << "A's chunks all before the preparation";
      ++sent_a;
    }
    if (op.kind == Op::Prepare) ++prepares;
    if (op.kind != Op::Multiply) continue;
    if (op.prepared) {
      EXPECT_EQ(prepares, 1);
      EXPECT_EQ(op.k1 - op.k0, in.K);
      ++prepared;
    } else {
      EXPECT_LT(op.k1 - op.k0, in.K) << "only the lead's products over chunks of A skip the preparation";
      ++chunked;
    }
  }
  EXPECT_EQ(prepares, 1);
  EXPECT_EQ(sent_a, p.a_chunks);
  EXPECT_EQ(prepared, p.col_panels - p.lead) << p.str();  // every panel but the lead's
  EXPECT_EQ(chunked, p.lead * p.a_chunks);
  // The residues do not fit beside A in 1.5 GiB; A alone does: blocks of A only where A is prepared.
  in.budget_bytes = pipelined::kDeviceOverheadBytes + (std::size_t(3) << 29);
  EXPECT_GT(pipelined::plan(in).row_blocks, 1);
  in.prepared_tflops = 0;
  EXPECT_EQ(pipelined::plan(in).row_blocks, 1);
  in.prepared_tflops = 90;
  in.prepare_gbs = 0;
  EXPECT_THROW(pipelined::plan(in), std::invalid_argument);
}

TEST(GemmModes, ParseAndPrintRoundTrip) {
  for (Mode m : all_modes()) EXPECT_EQ(parse_mode(to_string(m)), m);
  EXPECT_THROW(parse_mode("zero-copy"), std::invalid_argument);
}

TEST(GemmRegistryTest, HoldsTheLadderAndTheAnchor) {
  for (const char* name : {"naive", "shared", "coalesced", "register_tiled", "warp_tiled", "dmma", "cublas"})
    EXPECT_NE(registry().find(name), nullptr) << name;
  // cp.async and the FP64 tensor cores: compute capability 8.0; the FFMA register tiling runs everywhere.
  EXPECT_EQ(registry().find("register_tiled")->info.min_cc, 0);
  EXPECT_EQ(registry().find("warp_tiled")->info.min_cc, 80);
  EXPECT_EQ(registry().find("dmma")->info.min_cc, 80);
  ASSERT_NE(registry().anchor(), nullptr);
  EXPECT_EQ(registry().anchor()->info.name, "cublas");
  EXPECT_EQ(registry().all().front()->info.name, "cublas");  // step 00
}

// Every numbered file (or folder) of gemm/ declares a variant, and no name is declared twice.
TEST(GemmRegistryTest, EveryLadderEntryDeclaresAndNoNameTwice) {
  test::expect_ladder_declared(registry(), {
#include "ladder/gemm_entries.inc"
  });
}

// An H100 as the rule sees it: 132 SMs, sm_90 code, and the blocks per SM the occupancy calculator reported
// there for each row of the shape table (docs/gemm-notes.md, step 7).
dmma::Target h100() {
  dmma::Target t{.sm_count = 132, .code_arch = 90};
  for (int s = 0; s < dmma::kShapeCount; ++s) {
    const dmma::Shape& sh = dmma::kShapes[s];
    t.blocks_per_sm[s] = sh.bm == 128 && sh.bn == 128 ? 1 : sh.bm == 128 ? 2 : 3;
  }
  return t;
}

TEST(DmmaShapes, TheTableIsConsistent) {
  int split_shapes = 0;
  for (int s = 0; s < dmma::kShapeCount; ++s) {
    const dmma::Shape& sh = dmma::kShapes[s];
    EXPECT_EQ(sh.bk % 16, 0) << dmma::shape_name(s);
    EXPECT_EQ(sh.bm % (16 * sh.warps_m), 0) << dmma::shape_name(s);
    EXPECT_EQ(sh.bn % (8 * sh.warps_n), 0) << dmma::shape_name(s);
    EXPECT_LE(dmma::smem_bytes(sh), 227 * 1024) << dmma::shape_name(s);  // fits an H100's block
    EXPECT_EQ(dmma::shape_index(sh.bm, sh.bn, sh.bk), s);
    split_shapes += sh.split_k;
    // Every shape runs alone as a tuning variant of that name, and variant_for maps back to it.
    const GemmVariant* v = registry().find(dmma::variant_name(s));
    ASSERT_NE(v, nullptr) << dmma::variant_name(s);
    EXPECT_TRUE(v->info.tuning);
    EXPECT_EQ(v->info.min_cc, 80);
    EXPECT_EQ(dmma::variant_for({.shape = s}), dmma::variant_name(s));
  }
  EXPECT_EQ(split_shapes, 1);
  for (const dmma::Extra& e : dmma::kExtras) {
    ASSERT_GE(e.shape, 0);
    EXPECT_NE(registry().find(dmma::variant_name(e.shape) + e.suffix), nullptr) << e.suffix;
  }
  EXPECT_FALSE(registry().find("dmma")->info.tuning);
}

TEST(DmmaRule, PicksTheBestScoringShapeElseSplitK) {
  const dmma::Target t = h100();
  const int split = dmma::split_k_shape();
  std::mt19937_64 rng(choose_seed());
  std::uniform_int_distribution<int> dim(1, 9000);
  for (int i = 0; i < 2000; ++i) {
    const int M = dim(rng), N = dim(rng), K = dim(rng);
    const bool wide = i % 2;
    const dmma::Config c = dmma::choose(M, N, K, t, wide);
    EXPECT_EQ(c.instr, dmma::Instr::K16);
    const dmma::Shape& s = dmma::kShapes[split];
    const long long split_tiles = static_cast<long long>((M + s.bm - 1) / s.bm) * ((N + s.bn - 1) / s.bn);
    if (split_tiles < t.sm_count) {
      // Too few tiles for the GPU even at the smallest shape: split K, within its stated bounds.
      EXPECT_EQ(c.shape, split) << M << "x" << N << "x" << K;
      EXPECT_GE(c.splits, 1);
      EXPECT_LE(c.splits, dmma::kMaxSplits);
      EXPECT_TRUE(c.splits == 1 || K / c.splits >= dmma::kMinSplitDepth) << M << "x" << N << "x" << K;
      continue;
    }
    EXPECT_EQ(c.splits, 1);
    for (int other = 0; other < dmma::kShapeCount; ++other)  // nothing scores higher than the pick
      EXPECT_LE(dmma::score(M, N, other, t, wide), dmma::score(M, N, c.shape, t, wide)) << M << "x" << N;
    EXPECT_GT(dmma::kShapes[c.shape].speed_wide, 0.0);
  }
  // Below sm_90 the m8n8k4 instruction; a shape that does not fit is never picked.
  dmma::Target a100 = t;
  a100.code_arch = 80;
  a100.blocks_per_sm[dmma::shape_index(128, 128, 32)] = 0;
  EXPECT_EQ(dmma::choose(256, 256, 4096, a100).instr, dmma::Instr::K4);
  EXPECT_NE(dmma::choose(8192, 8192, 8192, a100).shape, dmma::shape_index(128, 128, 32));
  // Nothing fits: the split-K shape (its launch then says why).
  dmma::Target none = t;
  none.blocks_per_sm.fill(0);
  EXPECT_EQ(dmma::choose(4096, 4096, 4096, none).shape, split);
}

TEST(DmmaRule, ScoreIsWaveFillTimesSpeed) {
  const dmma::Target t = h100();
  const int big = dmma::shape_index(128, 128, 32);
  // 4096^2 in 128x128 tiles: 1024 tiles in 8 waves of 132 slots (1056): 1024/1056 of the slots are useful.
  EXPECT_NEAR(dmma::score(4096, 4096, big, t, true), 1024.0 / 1056.0, 1e-12);
  // 8-byte copies: the narrow speed.
  EXPECT_NEAR(dmma::score(4096, 4096, big, t, false), 0.95 * 1024.0 / 1056.0, 1e-12);
  // A shape the rule does not pick scores 0.
  EXPECT_EQ(dmma::score(4096, 4096, dmma::shape_index(128, 128, 16), t, true), 0.0);
}

// The TMA kernel's fragment loads (gemm/08_dmma_tma.cu): shared memory serves a 64-bit warp load one
// half-warp per wavefront, so a load takes 2 wavefronts when each half-warp's 16 doubles sit in 16 distinct
// 8-byte banks, and more otherwise. Every A load (8 per 16-deep step: rows g and g + 8, k groups j) and every
// B load (4: k groups j) of the layout must take 2. The k order must be a permutation of the 16 rows.
TEST(DmmaTmaLayout, EveryFragmentLoadIsConflictFree) {
  std::vector<int> rows;
  for (int t = 0; t < 4; ++t)
    for (int j = 0; j < 4; ++j) rows.push_back(dmma::tma_kperm(t, j));
  std::sort(rows.begin(), rows.end());
  for (int r = 0; r < 16; ++r) EXPECT_EQ(rows[r], r);
  auto wavefronts = [](auto offset) {  // offset(g, t): the double a lane reads
    int total = 0;
    for (int half = 0; half < 2; ++half) {
      std::map<int, std::set<int>> banks;
      for (int lane = 16 * half; lane < 16 * half + 16; ++lane) {
        const int off = offset(lane / 4, lane % 4);
        banks[off % 16].insert(off);
      }
      int worst = 0;
      for (const auto& [bank, words] : banks) worst = std::max(worst, static_cast<int>(words.size()));
      total += worst;
    }
    return total;
  };
  for (int i = 0; i < 8; ++i)  // A: lane (g, t) reads A(g + 8 (i % 2), t + 4 (i / 2))
    EXPECT_EQ(wavefronts([&](int g, int t) { return dmma::tma_swizzled(dmma::tma_kperm(t, i / 2), g + 8 * (i % 2)); }), 2)
        << "A load " << i;
  for (int i = 0; i < 4; ++i)  // B: lane (g, t) reads B(t + 4 i, g); B's rows are n
    EXPECT_EQ(wavefronts([&](int g, int t) { return dmma::tma_swizzled(g, dmma::tma_kperm(t, i)); }), 2) << "B load " << i;
  // The natural k order (row t + 4 j) conflicts: the model can fail.
  EXPECT_GT(wavefronts([](int g, int t) { return dmma::tma_swizzled(t, g); }), 2);
  // The kernel's shortcut for row g + 8 of A.
  for (int r = 0; r < 16; ++r)
    for (int g = 0; g < 8; ++g) EXPECT_EQ(dmma::tma_swizzled(r, g + 8), dmma::tma_swizzled(r, g) ^ 8);
}

TEST(DmmaTmaRule, TmaWhereItScoresAboveDmmaAndCanRun) {
  const dmma::Target t = h100();
  const bool both[dmma::kTmaTileCount] = {true, true}, first[dmma::kTmaTileCount] = {true, false},
             none[dmma::kTmaTileCount] = {false, false};
  std::string why;
  for (int n : {2048, 3000, 4096, 8192}) {
    EXPECT_EQ(dmma::tma_pick(n, n, n, t, both, true, &why), 0) << n << ": " << why;
    EXPECT_EQ(why.rfind("tma 128x128x32", 0), 0u) << why;
  }
  // 1024^3: 64 tiles of 128 x 128 would leave half of the SMs idle; split two ways along K they fill 128 of 132,
  // and the score counts the partial each owner reads: 1.05 x 64 x 32 / (132 x (16 + kPartialCost)). The
  // 128 x 64 kernel with two k-groups runs 128 whole tiles of 32 k-tiles, one per SM: 1.00 x 128 / 132.
  EXPECT_NEAR(dmma::tma_score(1024, 1024, 1024, t, true, true, 0),
              dmma::kTmaTiles[0].speed * 64 * 32 / (132.0 * (16 + stream_k::kPartialCost)), 1e-12);
  EXPECT_NEAR(dmma::tma_score(1024, 1024, 1024, t, true, true, 1), dmma::kTmaTiles[1].speed * 128 / 132.0, 1e-12);
  EXPECT_EQ(dmma::tma_pick(1024, 1024, 1024, t, both, true, &why), 1) << why;
  EXPECT_EQ(why.rfind("tma 128x64x32, 2 k-groups", 0), 0u) << why;
  // Where the two-group kernel does not load, the 128 x 128 one still beats dmma there.
  EXPECT_EQ(dmma::tma_pick(1024, 1024, 1024, t, first, true, &why), 0) << why;
  // Small C with deep K: dmma splits K 16 ways over 64x64 tiles; the TMA kernels split a tile at most 4 ways.
  EXPECT_EQ(dmma::tma_pick(256, 256, 4096, t, both, true, &why), -1);
  EXPECT_NE(why.find("too small"), std::string::npos) << why;
  // Operands the TMA cannot describe, and no sm_90a code: dmma, whatever the size, and the note says why.
  EXPECT_EQ(dmma::tma_pick(8192, 8192, 8192, t, both, false, &why), -1);
  EXPECT_NE(why.find("16-byte"), std::string::npos) << why;
  EXPECT_EQ(dmma::tma_pick(8192, 8192, 8192, t, none, true, &why), -1);
  EXPECT_NE(why.find("sm_90a"), std::string::npos) << why;
  // 4096^3: 1024 tiles of 128 k-tiles; 6 waves whole (792 tiles), the last wave and the remainder (232 tiles)
  // shared, at most 225 k-tiles a block: 768 + 225 + one partial, against 8 waves (1024) without stream-K.
  EXPECT_NEAR(dmma::tma_score(4096, 4096, 4096, t, true, true),
              dmma::kTmaTiles[0].speed * 1024 * 128 / (132.0 * (993 + stream_k::kPartialCost)), 1e-12);
  // 4224^2 (33 x 33 = 1089 tiles, 8.25 waves) shallow: K = 96 is 3 k-tiles, too few to share; the wave fill.
  EXPECT_NEAR(dmma::tma_score(4224, 4224, 96, t, true, true), dmma::kTmaTiles[0].speed * 1089.0 / (9 * 132), 1e-12);
  EXPECT_EQ(dmma::tma_score(4096, 4096, 4096, t, true, false), 0.0);
  EXPECT_EQ(dmma::tma_score(4096, 4096, 4096, t, true, false, 1), 0.0);
}

// The stream-K schedule (gemm/stream_k.hpp), walked as the kernel walks it: every k-tile of every tile exactly
// once; at most one partial piece per block, walked first; every partial tile has one owner, whose wait list
// (partials_of blocks below it) is exactly the blocks that hold the tile's partials; shares within one
// k-tile of each other; the grid within the resident slots.
TEST(StreamK, EveryKTileOnceAndEveryPartialOwned) {
  namespace sk = stream_k;
  for (long long tiles : {1LL, 3LL, 64LL, 131LL, 132LL, 133LL, 256LL, 512LL, 576LL, 1024LL, 1089LL, 4096LL})
    for (int k_tiles : {0, 1, 3, 4, 7, 32, 94, 128, 1025, 2049})
      for (int slots : {1, 2, 132, 264}) {
        const sk::Plan p = sk::plan(tiles, k_tiles, slots, 0.0);  // free partials: stream-K wherever it can
        const std::string at = std::to_string(tiles) + " tiles, " + std::to_string(k_tiles) + " k-tiles, " +
                               std::to_string(slots) + " slots";
        ASSERT_GE(p.grid, 1) << at;
        ASSERT_LE(p.grid, slots) << at;
        ASSERT_LE(p.sk_blocks, p.grid) << at;
        std::vector<std::vector<int>> covered(tiles, std::vector<int>(k_tiles, 0));
        std::map<long long, std::set<int>> partial_blocks;                 // stream-K tile: blocks with a partial
        std::map<long long, std::vector<std::pair<int, std::set<int>>>> owners;  // stream-K tile: (owner, its waits)
        long long least = -1, most = 0;
        for (int v = 0; v < p.grid; ++v) {
          int partials = 0;
          const sk::Plan::Share sh = p.share(v);
          for (long long u = 0; u < sh.units; ++u) {
            const sk::Unit w = p.unit(v, sh, u);
            ASSERT_TRUE(w.tile >= 0 && w.tile < tiles && 0 <= w.kb && w.ke <= k_tiles &&
                        (w.kb < w.ke || (k_tiles == 0 && w.kb == 0 && w.ke == 0)))
                << at << ": block " << v << " unit " << u;
            for (int k = w.kb; k < w.ke; ++k) ++covered[w.tile][k];
            if (w.piece == sk::Piece::Partial) {
              ++partials;
              EXPECT_EQ(u, sh.dp) << at << ": a partial is its block's first stream-K piece";
              partial_blocks[w.sk_tile].insert(v);
            } else if (w.piece == sk::Piece::Owner) {
              std::set<int> waits;
              for (int o = v - 1, n = p.partials_of(sh, w.sk_tile); n > 0; --o, --n) waits.insert(o);
              owners[w.sk_tile].emplace_back(v, waits);
              partial_blocks[w.sk_tile];  // an owner without partials fails below
            } else {
              EXPECT_TRUE(w.kb == 0 && w.ke == k_tiles) << at;
            }
          }
          EXPECT_LE(partials, 1) << at << ": block " << v;
          if (v < p.sk_blocks) {
            const long long share = p.begin(v + 1) - p.begin(v);
            least = least < 0 ? share : std::min(least, share);
            most = std::max(most, share);
          }
        }
        EXPECT_LE(most - std::max(0LL, least), 1) << at;
        for (long long t = 0; t < tiles; ++t)
          for (int k = 0; k < k_tiles; ++k) ASSERT_EQ(covered[t][k], 1) << at << ": tile " << t << " k-tile " << k;
        for (const auto& [t, blocks] : partial_blocks) {
          ASSERT_EQ(owners[t].size(), 1u) << at << ": stream-K tile " << t << " has one owner";
          const auto& [owner, waits] = owners[t].front();
          EXPECT_FALSE(blocks.empty()) << at << ": tile " << t;
          EXPECT_EQ(blocks, waits) << at << ": tile " << t << ": its owner waits for exactly its partials";
          for (int b : blocks) EXPECT_LT(b, owner) << at << ": tile " << t;
        }
      }
}

TEST(StreamK, SharesTheLastWaveWherePredictedFaster) {
  namespace sk = stream_k;
  const double c = sk::kPartialCost;
  // 3000^3 in 128 x 128 x 32 tiles: 576 tiles of 94 k-tiles on 132 SMs: 3 waves whole, 180 tiles shared:
  // 3 x 94 + 129 + one partial, against 5 x 94 whole.
  sk::Plan p = sk::plan(576, 94, 132);
  EXPECT_EQ(p.dp_tiles, 396);
  EXPECT_EQ(p.sk_blocks, 132);
  EXPECT_EQ(p.grid, 132);
  EXPECT_DOUBLE_EQ(sk::predicted_k_tiles(p, c), 3 * 94 + 129 + c);
  EXPECT_DOUBLE_EQ(sk::predicted_k_tiles(sk::plan(576, 94, 132, c, false), c), 5 * 94);
  // 2048^3: 256 tiles of 64 k-tiles: shares of 125 plus a partial are no faster than 2 waves of 64: whole.
  EXPECT_EQ(sk::plan(256, 64, 132).sk_blocks, 0);
  EXPECT_EQ(sk::plan(256, 64, 132, 0.0).sk_blocks, 132);  // free partials would share
  // 1024^3: 64 tiles, 32 k-tiles: split 2 ways (3 would need 192 blocks): 16 + one partial against 32.
  p = sk::plan(64, 32, 132);
  EXPECT_EQ(p.sk_blocks, 128);
  EXPECT_EQ(p.grid, 128);
  EXPECT_DOUBLE_EQ(sk::predicted_k_tiles(p, c), 16 + c);
  // A whole number of waves, too few k-tiles, or stream-K off: whole tiles only.
  for (const sk::Plan& q : {sk::plan(1056, 128, 132), sk::plan(1024, 3, 132), sk::plan(1024, 128, 132, c, false)}) {
    EXPECT_EQ(q.sk_blocks, 0);
    EXPECT_EQ(q.dp_tiles, q.tiles);
  }
  // One tile: as many ways as pay, at most kMaxSplits, each at least kMinShare deep. 1000 k-tiles: 4 ways
  // (250 + 3 partials); 12: 2 ways (6 + 1 beats 4 + 2 and 12); 9: whole (5 + 1 partial is not below 9).
  EXPECT_EQ(sk::plan(1, 1000, 132).sk_blocks, sk::kMaxSplits);
  EXPECT_EQ(sk::plan(1, 12, 132).sk_blocks, 2);
  EXPECT_EQ(sk::plan(1, 9, 132).sk_blocks, 0);
}

TEST(DmmaRule, SplitCountFillsTheSlotsWithinBounds) {
  // 16 tiles of 64x64 with 3 resident per SM on 132 SMs: 396 slots, 24 splits fill them; capped at 16.
  EXPECT_EQ(dmma::split_count(256, 256, 4096, 64, 64, 132, 3), dmma::kMaxSplits);
  // 64 tiles: 6 splits put 384 blocks in the 396 slots (7 would take a second wave).
  EXPECT_EQ(dmma::split_count(64, 4096, 4096, 64, 64, 132, 3), 6);
  // One resident block per SM: at least one block per SM (2 splits of 100 tiles).
  EXPECT_EQ(dmma::split_count(640, 640, 4096, 64, 64, 132, 1), 2);
  // Never below kMinSplitDepth of K per split, never above kMaxSplits; 1 once the tiles fill the GPU.
  EXPECT_EQ(dmma::split_count(64, 64, 300, 64, 64, 132, 3), 1);
  EXPECT_EQ(dmma::split_count(64, 64, 1 << 20, 64, 64, 132, 3), dmma::kMaxSplits);
  EXPECT_EQ(dmma::split_count(4096, 4096, 4096, 64, 64, 132, 3), 1);
}

TEST(DmmaRule, ReadsThisGpu) {
  KS_REQUIRE_GPU();
  if (test::current_cc() < 80) GTEST_SKIP() << "dmma needs compute capability 8.0";
  const dmma::Target t = dmma::current_target();
  std::printf("target: %d SMs, compute_%d; resident blocks per SM:", t.sm_count, t.code_arch);
  for (int s = 0; s < dmma::kShapeCount; ++s) std::printf(" %s %d", dmma::shape_name(s).c_str(), t.blocks_per_sm[s]);
  std::printf("\n");
  EXPECT_GT(t.sm_count, 0);
  // 74 KiB and 106 KiB of shared memory fit every CC 8.x/9.x GPU.
  EXPECT_GE(t.blocks_per_sm[dmma::shape_index(64, 64, 16)], 1);
  EXPECT_GE(t.blocks_per_sm[dmma::shape_index(128, 64, 16)], 1);
}

TEST(DmmaRule, SplitsCoverKExactlyInWholeKTiles) {
  for (int K : {1, 15, 16, 17, 255, 1001, 4096, 5000, 65537}) {
    for (int splits : {1, 2, 3, 7, 16}) {
      const int depth = dmma::split_depth(K, splits);
      EXPECT_EQ(depth % 16, 0) << K << " " << splits;
      const int used = (K + depth - 1) / depth;
      EXPECT_LE(used, splits) << K << " " << splits;
      EXPECT_GE(static_cast<long long>(used) * depth, K);
      EXPECT_LT(static_cast<long long>(used - 1) * depth, K);  // no empty split
    }
  }
}

// ---- GPU: every variant x mode over odd shapes ----

struct ShapeCase {
  GemmShape shape;
  bool beta_zero;
};

const std::vector<ShapeCase>& shape_cases() {
  static const std::vector<ShapeCase> c{
      {{1, 1, 1}, false},           {{17, 33, 9}, true},          {{100, 100, 100}, false},
      {{127, 129, 131}, true},      {{256, 256, 256}, false},     {{1000, 1000, 1000}, false},
      {{2048, 64, 512}, true},      {{64, 2048, 512}, false},     {{33, 17, 45, 40, 50, 37}, false},
      {{100, 90, 80, 128, 96, 101}, true},
      // Deep K on a small C: the dmma rule splits K (16 splits here; 3 uneven ones below, odd lda).
      {{96, 80, 5000}, false},      {{70, 50, 1001, 71, 1002, 70}, true},
  };
  return c;
}

std::vector<std::string> variant_names() { return registry().names(); }

using Param = std::tuple<std::string, Mode, std::size_t>;

std::string case_name(const ::testing::TestParamInfo<Param>& info) {
  const std::string& name = std::get<0>(info.param);
  const Mode mode = std::get<1>(info.param);
  return test::sanitize(name + "_" + to_string(mode) + "_" + shape_cases()[std::get<2>(info.param)].shape.str());
}

// `name` in `mode` on `p` once, from a poisoned C, checked against the reference.
GemmCheck run_once(const GemmVariant& v, Mode mode, const GemmProblem& p) {
  Stream stream;
  ExecContext ctx(stream.get());
  Runner runner(v, mode, p, ctx);
  runner.reset_output();
  runner.run();
  return validate(p, runner.result());
}

// The registered variant `name`, or a skip where this GPU is too old for it.
#define KS_VARIANT_OR_SKIP(v, name)                                                                            \
  const GemmVariant* v = registry().find(name);                                                                \
  ASSERT_NE(v, nullptr) << name;                                                                               \
  if (test::current_cc() < v->info.min_cc) GTEST_SKIP() << name << " needs compute capability " << v->info.min_cc

class GemmCase : public ::testing::TestWithParam<Param> {};

TEST_P(GemmCase, MatchesEigenReference) {
  KS_REQUIRE_GPU();
  const auto& [name, mode, shape_index] = GetParam();
  KS_VARIANT_OR_SKIP(v, name);
  const ShapeCase& sc = shape_cases()[shape_index];
  const std::uint64_t seed = choose_seed();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> scalar(-2.0, 2.0);
  const double alpha = scalar(rng);
  const double beta = sc.beta_zero ? 0.0 : scalar(rng);
  const GemmCheck c = run_once(*v, mode, make_problem(sc.shape, alpha, beta, seed));
  EXPECT_TRUE(c.ok) << name << " / " << to_string(mode) << ": " << c.report;
}

INSTANTIATE_TEST_SUITE_P(
    Variants, GemmCase,
    ::testing::Combine(::testing::ValuesIn(variant_names()), ::testing::ValuesIn(all_modes()),
                       ::testing::Range<std::size_t>(0, shape_cases().size())),
    case_name);

// BLAS semantics in every variant and mode: alpha == 0 reads neither A nor B (NaN there must not reach C), and a
// zero M, N or K is a quick return (K == 0: C = beta C).
struct BlasCase {
  GemmShape shape;
  double alpha, beta;
  Operands ab;
  const char* what;
};

const std::vector<BlasCase>& blas_cases() {
  static const std::vector<BlasCase> c{
      {{200, 150, 300}, 0.0, 2.0, Operands::nan(), "alpha0_beta2_nan_ab"},
      {{37, 41, 53}, 0.0, 0.0, Operands::nan(), "alpha0_beta0_nan_ab"},
      {{0, 17, 9}, 1.5, 0.5, Operands::uniform(), "M0"},
      {{17, 0, 9}, 1.5, 0.5, Operands::uniform(), "N0"},
      {{17, 33, 0}, 1.5, 0.5, Operands::uniform(), "K0"},
      {{17, 33, 0}, 1.5, 0.0, Operands::uniform(), "K0_beta0"},
  };
  return c;
}

using BlasParam = std::tuple<std::string, Mode, std::size_t>;

class GemmBlas : public ::testing::TestWithParam<BlasParam> {};

TEST_P(GemmBlas, QuickReturnsAndAlphaZero) {
  KS_REQUIRE_GPU();
  const auto& [name, mode, index] = GetParam();
  KS_VARIANT_OR_SKIP(v, name);
  const BlasCase& bc = blas_cases()[index];
  const GemmCheck c = run_once(*v, mode, make_problem(bc.shape, bc.alpha, bc.beta, choose_seed(), bc.ab));
  EXPECT_TRUE(c.ok) << name << " / " << to_string(mode) << " / " << bc.what << ": " << c.report;
}

INSTANTIATE_TEST_SUITE_P(
    Variants, GemmBlas,
    ::testing::Combine(::testing::ValuesIn(variant_names()), ::testing::ValuesIn(all_modes()),
                       ::testing::Range<std::size_t>(0, blas_cases().size())),
    [](const ::testing::TestParamInfo<BlasParam>& info) {
      return test::sanitize(std::get<0>(info.param) + "_" + to_string(std::get<1>(info.param)) + "_" +
                            blas_cases()[std::get<2>(info.param)].what);
    });

// Every variant on every input distribution kbench's --dist offers (device mode; the modes move bytes, not
// values): wider exponents (exp:PHI) and rows of A and columns of B scaled far apart (pow2) must still meet
// the element-wise bound, whose |A||B| term follows the data.
class GemmDist : public ::testing::TestWithParam<std::string> {};

TEST_P(GemmDist, EveryDistributionMeetsTheBound) {
  KS_REQUIRE_GPU();
  KS_VARIANT_OR_SKIP(v, GetParam());
  for (const char* dist : {"uniform", "exp:0.5", "exp:1", "exp:2", "exp:4", "exp:2,pow2:300", "uniform,pow2:400"}) {
    const std::uint64_t seed = choose_seed();
    const GemmCheck c =
        run_once(*v, Mode::Device, make_problem({127, 129, 131, 130, 0, 0}, 1.25, -0.5, seed, parse_operands(dist)));
    EXPECT_TRUE(c.ok) << GetParam() << " on " << dist << ": " << c.report;
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, GemmDist, ::testing::ValuesIn(variant_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return test::sanitize(info.param); });

// The pipelined modes with a budget that holds a third of A: several row blocks and panels, edges that do not
// divide, pinned and pageable (staged and registered), beta != 0 and beta == 0 with NaN in C's destination.
TEST(GemmPipelined, SmallBudgetBlocksPanelsAndBothPageableWays) {
  KS_REQUIRE_GPU();
  for (double beta : {0.0, -0.75}) {
    const GemmProblem p = make_problem({1000, 700, 500, 1003, 0, 1001}, 1.5, beta, choose_seed());
    PipelineOptions o;
    o.config.budget_bytes = pipelined::kDeviceOverheadBytes + std::size_t(8) * 1000 * 500 / 3;
    for (Mode mode : {Mode::PinnedPipelined, Mode::PageablePipelined}) {
      for (pipelined::Pageable how : {pipelined::Pageable::Stage, pipelined::Pageable::Register}) {
        o.pageable_method = how;
        Stream stream;
        ExecContext ctx(stream.get());
        Runner runner(*registry().find("cublas"), mode, p, ctx, o);
        ASSERT_GE(runner.product()->plan().row_blocks, 3) << runner.product()->plan().str();
        ASSERT_GE(runner.product()->plan().col_panels, 2) << runner.product()->plan().str();
        for (int rep = 0; rep < 2; ++rep) {  // twice: the events and buffers are reused
          runner.reset_output();
          runner.run();
          const GemmCheck c = validate(p, runner.result());
          EXPECT_TRUE(c.ok) << to_string(mode) << " beta " << beta << " " << runner.product()->plan().str() << ": "
                            << c.report;
        }
        if (mode == Mode::PinnedPipelined) break;  // the pageable way does not apply
      }
    }
  }
}

// A lead of panels crossing among A's chunks (each multiplying chunk by chunk), the other panels after them, on
// one row block and on several; pinned and staged pageable, beta 0 (NaN in C's destination) and not.
TEST(GemmPipelined, LeadPanelsAmongAChunks) {
  KS_REQUIRE_GPU();
  for (double beta : {0.0, 1.25}) {
    const GemmProblem p = make_problem({1000, 700, 500, 1003, 0, 1001}, -0.5, beta, choose_seed());
    for (std::size_t budget : {std::size_t(0), pipelined::kDeviceOverheadBytes + std::size_t(8) * 1000 * 500 / 2}) {
      PipelineOptions o;
      o.config.budget_bytes = budget;
      o.config.nt = 64;
      o.config.lead = 5;
      o.config.chunks = 7;
      for (Mode mode : {Mode::PinnedPipelined, Mode::PageablePipelined}) {
        o.pageable_method = pipelined::Pageable::Stage;
        Stream stream;
        ExecContext ctx(stream.get());
        Runner runner(*registry().find("dmma"), mode, p, ctx, o);
        const pipelined::Plan& plan = runner.product()->plan();
        ASSERT_EQ(plan.lead, 5) << plan.str();
        ASSERT_EQ(plan.a_chunks, 7) << plan.str();
        if (budget > 0) {
          ASSERT_GE(plan.row_blocks, 2) << plan.str();
        }
        for (int rep = 0; rep < 2; ++rep) {
          runner.reset_output();
          runner.run();
          const GemmCheck c = validate(p, runner.result());
          EXPECT_TRUE(c.ok) << to_string(mode) << " beta " << beta << " " << plan.str() << ": " << c.report;
        }
      }
    }
  }
}

// Two devices split the panels (here the same GPU twice: the split, the threads and the joins are the same code).
TEST(GemmPipelined, TwoDevicesSplitThePanels) {
  KS_REQUIRE_GPU();
  const GemmProblem p = make_problem({777, 1500, 333}, 1.0, 0.5, choose_seed());
  PipelineOptions o;
  o.config.devices = {0, 0};
  o.config.budget_bytes = pipelined::kDeviceOverheadBytes + (std::size_t(8) << 20);
  Stream stream;
  ExecContext ctx(stream.get());
  Runner runner(*registry().find("dmma"), Mode::PageablePipelined, p, ctx, o);
  runner.reset_output();
  runner.run();
  const GemmCheck c = validate(p, runner.result());
  EXPECT_TRUE(c.ok) << runner.product()->plan().str() << ": " << c.report;
  EXPECT_NE(runner.product()->timeline().find("; device 0"), std::string::npos) << runner.product()->timeline();
}

// Two GPUs where two are visible (the nvidia-h200-x2 host): each device's thread, its copies and its products.
TEST(GemmPipelined, TwoVisibleDevicesSplitThePanels) {
  KS_REQUIRE_GPU();
  if (visible_device_count() < 2) GTEST_SKIP() << "one GPU visible";
  const GemmProblem p = make_problem({1029, 2311, 517}, -0.75, 1.5, choose_seed());
  PipelineOptions o;
  o.config.devices = {0, 1};
  o.config.budget_bytes = pipelined::kDeviceOverheadBytes + (std::size_t(6) << 20);
  Stream stream;
  ExecContext ctx(stream.get());
  for (const char* name : {"cublas", "dmma"}) {
    Runner runner(*registry().find(name), Mode::PinnedPipelined, p, ctx, o);
    runner.reset_output();
    runner.run();
    const GemmCheck c = validate(p, runner.result());
    EXPECT_TRUE(c.ok) << name << ": " << runner.product()->plan().str() << ": " << c.report;
    EXPECT_NE(runner.product()->timeline().find("; device 1:"), std::string::npos) << runner.product()->timeline();
  }
  int current = -1;
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  EXPECT_EQ(current, 0) << "the pipelined mode left the caller on another device";
  {
    CublasXt xt({1, 0});
    const GemmShape& s = p.shape;
    std::vector<double> c(p.C0.data(), p.C0.data() + p.c_count());
    xt.run(s.M, s.N, s.K, p.alpha, p.A.data(), s.lda, p.B.data(), s.ldb, p.beta, c.data(), s.ldc);
    const GemmCheck check = validate(p, Eigen::Map<const Eigen::MatrixXd>(c.data(), s.ldc, s.N));
    EXPECT_TRUE(check.ok) << check.report;
  }
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  EXPECT_EQ(current, 0) << "cuBLASXt left the caller on another device";
}

TEST(GemmPipelined, ABudgetBelowOnePanelIsAClearError) {
  KS_REQUIRE_GPU();
  const GemmProblem p = make_problem({300, 300, 5000}, 1.0, 0.0, choose_seed());
  PipelineOptions o;
  o.config.budget_bytes = pipelined::kDeviceOverheadBytes + 4096;
  Stream stream;
  ExecContext ctx(stream.get());
  EXPECT_THROW(Runner(*registry().find("cublas"), Mode::PinnedPipelined, p, ctx, o), std::invalid_argument);
}

TEST(GemmGraph, LaunchedTwiceGivesTheSameC) {
  KS_REQUIRE_GPU();
  const GemmProblem p = make_problem({127, 129, 131}, 1.25, -0.5, choose_seed());
  Stream stream;
  ExecContext ctx(stream.get());
  Runner runner(*registry().find("coalesced"), Mode::Graph, p, ctx);
  EXPECT_GT(runner.setup_ms(), 0.0);
  runner.reset_output();
  runner.run();
  const Eigen::MatrixXd first = runner.result();
  runner.reset_output();
  runner.run();
  const Eigen::MatrixXd second = runner.result();
  EXPECT_TRUE(validate(p, first).ok);
  // Bitwise, NaN padding included.
  EXPECT_EQ(std::memcmp(first.data(), second.data(), sizeof(double) * first.size()), 0);
}

// Index arithmetic beyond 32 bits: A has M * K = 65536 * 32769 > 2^31 elements, so its last column starts
// at element 2^31. Every variant must index it with 64-bit arithmetic (or be refused); none may be silently
// wrong. Needs about 18 GiB of device memory and 36 GiB of host memory.
TEST(GemmLargeIndex, EveryVariantPastTwoToThe31Elements) {
  KS_REQUIRE_GPU();
  if (test::small_sizes_only()) GTEST_SKIP() << "KS_SMALL_SIZES: large sizes skipped";
  std::size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const GemmShape shape{65536, 4, 32769};
  ASSERT_GT(static_cast<long long>(shape.M) * shape.K, 1LL << 31);
  if (free_bytes < (24ull << 30)) GTEST_SKIP() << "needs 24 GiB of free device memory, " << (free_bytes >> 30) << " GiB free";
  const GemmProblem p = make_problem(shape, 1.0, 0.5, choose_seed());
  for (const GemmVariant* v : registry().all()) {
    if (v->info.tuning || test::current_cc() < v->info.min_cc) continue;
    const GemmCheck c = run_once(*v, Mode::Device, p);
    EXPECT_TRUE(c.ok) << v->info.name << ": " << c.report;
  }
}

// The same for the TMA kernel, which the test above never reaches (K odd there: ldb odd, dmma runs): K even,
// and the TMA variants forced (dmma_tma's rule would pick dmma for a 4-column C).
TEST(GemmLargeIndex, TmaKernelPastTwoToThe31Elements) {
  KS_REQUIRE_GPU();
  if (test::small_sizes_only()) GTEST_SKIP() << "KS_SMALL_SIZES: large sizes skipped";
  if (test::current_cc() != 90) GTEST_SKIP() << "the TMA kernel runs on compute capability 9.0";
  std::size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const GemmShape shape{65536, 4, 32770};
  ASSERT_GT(static_cast<long long>(shape.M) * shape.K, 1LL << 31);
  if (free_bytes < (24ull << 30)) GTEST_SKIP() << "needs 24 GiB of free device memory, " << (free_bytes >> 30) << " GiB free";
  const GemmProblem p = make_problem(shape, 1.0, 0.5, choose_seed());
  for (const char* name : {"dmma_tma_128x128_k32", "dmma_tma_128x64", "dmma_tma_128x64_k32_2g"}) {
    const GemmVariant* v = registry().find(name);
    ASSERT_NE(v, nullptr) << name;
    const GemmCheck c = run_once(*v, Mode::Device, p);
    EXPECT_TRUE(c.ok) << name << ": " << c.report;
  }
}

// The TMA kernels' stream-K schedules on the GPU (the shape list above reaches the split ones only): the last
// wave and the remainder shared, K split 3 and 4 ways, and whole tiles; odd edges, padded leading dimensions,
// beta != 0 and beta == 0 (NaN in C's destination). The 128 x 128 kernel (2900 x 3000: 552 tiles, 396 whole;
// 640 x 1000: 40 tiles) and the 128 x 64 one with two k-groups (1081 tiles, 924 whole; 640 x 512: 40 tiles),
// whose partials are the first group's sum after the groups' exchange. Each product runs three times on one
// context from a poisoned C: the flags and the ticket counter must be zero again after every launch, or a later
// owner reads a stale partial.
struct StreamKCase {
  GemmShape shape;
  double beta;
  const char* schedule;  // the start of the note dmma_tma_schedule on 132 SMs
};

void expect_schedules_pass(const char* variant, std::initializer_list<StreamKCase> cases) {
  const GemmVariant* v = registry().find(variant);
  ASSERT_NE(v, nullptr) << variant;
  const bool sms_132 = dmma::current_target().sm_count == 132;  // the schedules are an H100's or H200's
  for (const StreamKCase& c : cases) {
    const GemmProblem p = make_problem(c.shape, 1.25, c.beta, choose_seed());
    Stream stream;
    ExecContext ctx(stream.get());
    Runner runner(*v, Mode::Device, p, ctx);
    for (int run = 0; run < 3; ++run) {
      runner.reset_output();
      runner.run();
      const GemmCheck check = validate(p, runner.result());
      EXPECT_TRUE(check.ok) << variant << " " << c.shape.str() << " run " << run << ": " << check.report;
      if (sms_132) {
        EXPECT_EQ(ctx.notes()["dmma_tma_schedule"].rfind(c.schedule, 0), 0u)
            << variant << ": " << ctx.notes()["dmma_tma_schedule"];
      }
    }
  }
}

TEST(DmmaTmaStreamK, EverySchedulePassesRepeatedly) {
  KS_REQUIRE_GPU();
  if (test::current_cc() != 90) GTEST_SKIP() << "the TMA kernel runs on compute capability 9.0";
  expect_schedules_pass("dmma_tma_128x128_k32",
                        {{{2900, 3000, 300, 2902, 302, 2901}, 0.5, "stream-K: 396 whole tiles, 156 shared by 132 blocks"},
                         {{640, 1000, 2000}, 0.0, "40 tiles, K split 3 ways"},
                         {{2048, 64, 4000}, -1.0, "16 tiles, K split 4 ways"},
                         {{1400, 1536, 200, 1402}, 0.0, "132 whole tiles"}});
}

TEST(DmmaTmaStreamK, TwoKGroupsEverySchedulePassesRepeatedly) {
  KS_REQUIRE_GPU();
  if (test::current_cc() != 90) GTEST_SKIP() << "the TMA kernel runs on compute capability 9.0";
  expect_schedules_pass("dmma_tma_128x64_k32_2g",
                        {{{2900, 3000, 300, 2902, 302, 2901}, 0.5, "stream-K: 924 whole tiles, 157 shared by 132 blocks"},
                         {{640, 512, 2000}, 0.0, "40 tiles, K split 3 ways"},
                         {{2048, 64, 4000}, -1.0, "16 tiles, K split 4 ways"},
                         {{1400, 1536, 200, 1402}, 0.0, "264 whole tiles"},
                         {{1000, 1000, 1000, 1002, 1004, 1003}, 0.0, "128 whole tiles on 128 blocks"}});
}

TEST(GemmValidatorOnGpu, CatchesOneBrokenElementOfARealResult) {
  KS_REQUIRE_GPU();
  const GemmProblem p = make_problem({100, 100, 100}, 1.0, 0.0, choose_seed());
  Stream stream;
  ExecContext ctx(stream.get());
  Runner runner(*registry().find("cublas"), Mode::Device, p, ctx);
  runner.reset_output();
  runner.run();
  Eigen::MatrixXd c = runner.result();
  ASSERT_TRUE(validate(p, c).ok);
  c(50, 50) += 1.01 * p.expected().bound(50, 50);  // just past the element's own bound, whatever its size
  EXPECT_FALSE(validate(p, c).ok);
}

}  // namespace
}  // namespace ks::gemm
