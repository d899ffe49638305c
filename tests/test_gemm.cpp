#include "gemm/dmma.hpp"
#include "gemm/gemm.hpp"
#include "gemm/modes.hpp"
#include "gemm/problem.hpp"
#include "gpu_test.hpp"

#include "common/random.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
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
  const GemmProblem p = make_problem({3, 2, 2, 5, 4, 6}, 1.0, 0.0, 42);
  EXPECT_TRUE(std::isnan(p.A(3, 0)) && std::isnan(p.A(4, 1)));
  EXPECT_TRUE(std::isnan(p.B(2, 0)) && std::isnan(p.C0(5, 1)));
  EXPECT_NE(p.A(0, 0), p.A(1, 0));
  const GemmProblem q = make_problem({3, 2, 2, 5, 4, 6}, 1.0, 0.0, 43);
  EXPECT_NE(p.A(0, 0), q.A(0, 0));
}

TEST(GemmArgsTest, RejectsBadShapesAndLeadingDimensions) {
  double x = 0;
  GemmArgs a{4, 4, 4, 1.0, &x, 4, &x, 4, 0.0, &x, 4};
  EXPECT_NO_THROW(check_args(a));
  GemmArgs b = a;
  b.M = 0;
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
}

TEST(DmmaRule, PicksTheTileThatFillsTheGpuBestElseSplitK) {
  const dmma::Target h100;  // 132 SMs, sm_90 code; 1, 2, 3 resident blocks of the three shapes
  // Large C: 128x128 tiles fill whole waves (1024 tiles = 7.8 waves of 132), the odd sizes included.
  for (int n : {2048, 4095, 4096, 4097, 8192}) {
    const dmma::Config c = dmma::choose(n, n, n, h100, n % 2 == 0);  // odd n: odd lda, 8-byte copies
    EXPECT_EQ(dmma::variant_for(c), "dmma_128x128_k32") << n;
    EXPECT_EQ(c.splits, 1);
    EXPECT_EQ(c.instr, dmma::Instr::K16);
  }
  // 3000: 128-wide tiles waste 2.4% per side on padding and fill 4.4 waves of 5; 64x64 wastes 0.3% and
  // fills 5.6 of 6 (the autotune table's fastest).
  EXPECT_EQ(dmma::variant_for(dmma::choose(3000, 3000, 3000, h100)), "dmma_64x64");
  // 1024: 64 big tiles on 132 SMs; 256 small ones fill more of them.
  EXPECT_EQ(dmma::variant_for(dmma::choose(1024, 1024, 1024, h100)), "dmma_64x64");
  // 16 small tiles: split K to fill the 3 x 132 resident slots in one wave (24 ways), capped at kMaxSplits;
  // the K4 instruction below sm_90.
  dmma::Config c = dmma::choose(256, 256, 4096, h100);
  EXPECT_EQ(c.bm, 64);
  EXPECT_EQ(c.splits, dmma::kMaxSplits);
  EXPECT_EQ(dmma::variant_for(c), "dmma_64x64_splitk");
  dmma::Target a100{108, 80, 0, 1, 2};  // 128x128x32's 207 KiB does not fit in 164 KiB
  EXPECT_EQ(dmma::choose(256, 256, 4096, a100).instr, dmma::Instr::K4);
  EXPECT_NE(dmma::variant_for(dmma::choose(8192, 8192, 8192, a100)), "dmma_128x128_k32");
  // Nothing fits: the 64x64 fallback (its launch then says why).
  EXPECT_EQ(dmma::choose(4096, 4096, 4096, {132, 90, 0, 0, 0}).bm, 64);
  // 64 tiles: 6 splits, 384 blocks in the 396 slots (7 would take a second wave).
  EXPECT_EQ(dmma::choose(64, 4096, 4096, h100).splits, 6);
  EXPECT_EQ(dmma::choose(4096, 64, 4096, h100).splits, 6);
  // The resident blocks the split count reads: the three measured shapes; nothing known of any other.
  EXPECT_EQ(dmma::resident(h100, 64, 64, 16), 3);
  EXPECT_EQ(dmma::resident(h100, 128, 128, 32), 1);
  EXPECT_EQ(dmma::resident(h100, 128, 128, 16), 0);
  // One resident block per SM: at least one block per SM (2 splits of 100 tiles, two waves of equal work).
  EXPECT_EQ(dmma::split_count(640, 640, 4096, 64, 64, 132, 1), 2);
  // Splits never go below kMinSplitDepth of K each, nor above kMaxSplits.
  EXPECT_EQ(dmma::split_count(64, 64, 300, 64, 64, 132, 3), 1);
  EXPECT_EQ(dmma::split_count(64, 64, 1 << 20, 64, 64, 132, 3), dmma::kMaxSplits);
}

TEST(DmmaRule, ReadsThisGpu) {
  KS_REQUIRE_GPU();
  if (test::current_cc() < 80) GTEST_SKIP() << "dmma needs compute capability 8.0";
  const dmma::Target t = dmma::current_target();
  std::printf("target: %d SMs, compute_%d; resident blocks 128x128x32 %d, 128x64x16 %d, 64x64x16 %d\n", t.sm_count,
              t.code_arch, t.blocks_128x128, t.blocks_128x64, t.blocks_64x64);
  EXPECT_GT(t.sm_count, 0);
  EXPECT_GE(t.blocks_64x64, 1);  // 74 KiB of shared memory fits every CC 8.x/9.x GPU
  EXPECT_GE(t.blocks_128x64, 1);
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

TEST(GemmRegistryTest, TuningConfigurationsAreMarked) {
  for (const char* name : {"dmma_128x128", "dmma_128x128_k32", "dmma_128x64", "dmma_64x64", "dmma_64x64_splitk",
                           "dmma_128x128_m8n8k4"}) {
    const GemmVariant* v = registry().find(name);
    ASSERT_NE(v, nullptr) << name;
    EXPECT_TRUE(v->info.tuning) << name;
    EXPECT_EQ(v->info.min_cc, 80) << name;
  }
  ASSERT_NE(registry().find("dmma"), nullptr);
  EXPECT_FALSE(registry().find("dmma")->info.tuning);
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

class GemmCase : public ::testing::TestWithParam<Param> {};

TEST_P(GemmCase, MatchesEigenReference) {
  KS_REQUIRE_GPU();
  const auto& [name, mode, shape_index] = GetParam();
  const GemmVariant* v = registry().find(name);
  ASSERT_NE(v, nullptr);
  if (test::current_cc() < v->info.min_cc) GTEST_SKIP() << name << " needs compute capability " << v->info.min_cc;
  const ShapeCase& sc = shape_cases()[shape_index];
  const std::uint64_t seed = choose_seed();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> scalar(-2.0, 2.0);
  const double alpha = scalar(rng);
  const double beta = sc.beta_zero ? 0.0 : scalar(rng);
  const GemmProblem p = make_problem(sc.shape, alpha, beta, seed);
  Stream stream;
  ExecContext ctx(stream.get());
  Runner runner(*v, mode, p, ctx);
  runner.reset_output();
  runner.run();
  const GemmCheck c = validate(p, runner.result());
  EXPECT_TRUE(c.ok) << name << " / " << to_string(mode) << ": " << c.report;
}

INSTANTIATE_TEST_SUITE_P(
    Variants, GemmCase,
    ::testing::Combine(::testing::ValuesIn(variant_names()), ::testing::ValuesIn(all_modes()),
                       ::testing::Range<std::size_t>(0, shape_cases().size())),
    case_name);

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
  Stream stream;
  ExecContext ctx(stream.get());
  for (const GemmVariant* v : registry().all()) {
    if (v->info.tuning || test::current_cc() < v->info.min_cc) continue;
    Runner runner(*v, Mode::Device, p, ctx);
    runner.reset_output();
    runner.run();
    const GemmCheck c = validate(p, runner.result());
    EXPECT_TRUE(c.ok) << v->info.name << ": " << c.report;
  }
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
  c(50, 50) *= 1.0 + 1e-9;
  EXPECT_FALSE(validate(p, c).ok);
}

}  // namespace
}  // namespace ks::gemm
