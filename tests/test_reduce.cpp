#include "reduce/reduce.hpp"
#include "reduce/reference.hpp"
#include "reduce/runner.hpp"
#include "gpu_test.hpp"

#include "common/random.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <numeric>
#include <tuple>

namespace ks::reduce {

void PrintTo(DType t, std::ostream* os) { *os << to_string(t); }
void PrintTo(Op op, std::ostream* os) { *os << to_string(op); }

namespace {

// ---- host-only ----

TEST(ReduceReference, Int64SumsWrapLikeTwosComplement) {
  const std::int64_t x[] = {std::numeric_limits<std::int64_t>::max(), 1, 5};
  const Reference r = host_reference(DType::I64, Op::Sum, x, 3);
  EXPECT_EQ(r.value.i, std::numeric_limits<std::int64_t>::min() + 5);
}

TEST(ReduceReference, Int32SumsIntoInt64WithoutOverflow) {
  const std::int32_t x[] = {std::numeric_limits<std::int32_t>::max(), std::numeric_limits<std::int32_t>::max()};
  EXPECT_EQ(host_reference(DType::I32, Op::Sum, x, 2).value.i, 2ll * std::numeric_limits<std::int32_t>::max());
  EXPECT_EQ(host_reference(DType::I32, Op::SumSquares, x, 1).value.i,
            static_cast<std::int64_t>(std::numeric_limits<std::int32_t>::max()) *
                std::numeric_limits<std::int32_t>::max());
}

TEST(ReduceReference, CompensatedFloatSumIsExactOnCancellation) {
  const double x[] = {1e16, 1.0, -1e16, 3.0};
  EXPECT_EQ(host_reference(DType::F64, Op::Sum, x, 4).value.f, 4.0);
}

TEST(ReduceCheckTest, CatchesADeliberatelyWrongResult) {
  const std::uint64_t seed = choose_seed();
  ReduceData ints(DType::I32, Op::Sum, 1000, seed);
  Value wrong = ints.reference().value;
  EXPECT_TRUE(check_result(ints.reference(), wrong, 1000, seed).ok);
  wrong.i += 1;
  const ReduceCheck c = check_result(ints.reference(), wrong, 1000, seed);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.report.find("seed"), std::string::npos);

  ReduceData dbl(DType::F64, Op::Sum, 4097, seed);
  Value v = dbl.reference().value;
  EXPECT_TRUE(check_result(dbl.reference(), v, 4097, seed).ok);
  v.f += 1e-6;  // one element's worth of a wrong index, far above n * eps * sum|x| ~ 4e-10
  EXPECT_FALSE(check_result(dbl.reference(), v, 4097, seed).ok);
  v.f = std::nan("");
  EXPECT_FALSE(check_result(dbl.reference(), v, 4097, seed).ok);
}

TEST(ReduceData, InputsAreSeededWithBothSigns) {
  ReduceData a(DType::I64, Op::Sum, 256, 11), b(DType::I64, Op::Sum, 256, 11), c(DType::I64, Op::Sum, 256, 12);
  EXPECT_EQ(std::memcmp(a.host(), b.host(), a.bytes()), 0);
  EXPECT_NE(std::memcmp(a.host(), c.host(), a.bytes()), 0);
  const auto* x = static_cast<const std::int64_t*>(a.host());
  EXPECT_TRUE(std::any_of(x, x + 256, [](auto v) { return v < 0; }));
  EXPECT_TRUE(std::any_of(x, x + 256, [](auto v) { return v > 0; }));
}

TEST(Integral, ClosedFormMatchesAFineHostQuadrature) {
  // Composite Simpson in long double over a few periods.
  const double a = 0.3, b = 7.9;
  const int n = 200000;
  const long double h = (b - a) / static_cast<long double>(n);
  auto f = [](long double x) {
    const long double s = std::sin(2 * x), c = std::cos(x);
    return s * s * c * c;
  };
  long double sum = f(a) + f(b);
  for (int i = 1; i < n; ++i) sum += f(a + i * h) * (i % 2 ? 4 : 2);
  EXPECT_NEAR(static_cast<double>(sum * h / 3), integral_exact(a, b), 1e-12);
}

TEST(Integral, DoubleBoundIsTightAndFloatBoundIsVacuous) {
  const double b = 40000 * M_PI, exact = integral_exact(0, b);
  EXPECT_LT(integral_bound(DType::F64, 0, b, 100000000) / exact, 5e-6);
  EXPECT_GT(integral_bound(DType::F32, 0, b, 100000000) / exact, 1.0);
}

TEST(HostReductions, SeedsRecursiveEigenAndOpenMPAgree) {
  for (std::size_t n : {1u, 2u, 7u, 1000u, 4097u}) {
    std::vector<double> x(n);
    fill_random(x.data(), n, 5 + n);
    const long double ref = host_reference(DType::F64, Op::Sum, x.data(), n).exact;
    const double tol = n * 2.3e-16 * std::accumulate(x.begin(), x.end(), 0.0, [](double s, double v) { return s + std::fabs(v); });
    EXPECT_NEAR(host_recursive_interleaved(x.data(), n), static_cast<double>(ref), tol) << n;
    EXPECT_NEAR(host_eigen_sum(x.data(), n), static_cast<double>(ref), tol) << n;
    EXPECT_NEAR(host_openmp_sum(x.data(), n), static_cast<double>(ref), tol) << n;
  }
}

TEST(ReduceNames, ParseAndRegistry) {
  for (DType t : all_dtypes()) EXPECT_EQ(parse_dtype(to_string(t)), t);
  EXPECT_THROW(parse_dtype("int16"), std::invalid_argument);
  EXPECT_EQ(parse_op("sumsq"), Op::SumSquares);
  EXPECT_THROW(parse_op("max"), std::invalid_argument);
  for (const char* name : {"neighbored", "neighbored_less", "interleaved", "unroll2", "unroll4", "unroll8",
                           "unroll8_warp", "complete_unroll", "block_shared", "atomic_global", "atomic_shared",
                           "shuffle", "grid_stride", "two_pass", "streams", "copy_reduce", "fast"})
    EXPECT_NE(registry().find(name), nullptr) << name;
  // Step 00, the anchor: CUB's reduction, rocPRIM's in the HIP build.
#if defined(KS_HIP)
  const std::string anchor = "rocprim";
#else
  const std::string anchor = "cub";
#endif
  EXPECT_EQ(registry().anchor()->info.name, anchor);
  EXPECT_EQ(registry().all().front()->info.name, anchor);
}

// Every numbered file of reduce/ declares a variant, and no name is declared twice.
TEST(ReduceNames, EveryLadderEntryDeclaresAndNoNameTwice) {
  test::expect_ladder_declared(registry(), {
#include "ladder/reduce_entries.inc"
  });
}

TEST(ReduceNames, BlockSizesAreDeclaredOnceAndReadEverywhere) {
  const ReduceVariant& v = *registry().find("interleaved");
  EXPECT_EQ(v.block_sizes, kPowerOfTwoBlocks);
  EXPECT_TRUE(v.takes_block(512));
  EXPECT_FALSE(v.takes_block(96));
  // From two warps up: 64 with 32 lanes, 128 with the 64-lane wavefronts of the HIP build.
  EXPECT_EQ(v.block_sizes_text(), kWarpSize == 32 ? "64, 128, 256, 512 or 1024" : "128, 256, 512 or 1024");
  EXPECT_EQ(v.takes_block(64), kWarpSize == 32);
  const ReduceVariant& fast = *registry().find("fast");
  EXPECT_TRUE(fast.block_sizes.empty());
  EXPECT_TRUE(fast.takes_block(96));  // it chooses its own and ignores the request
  EXPECT_EQ(fast.block_sizes_text(), "its own");
}

TEST(ReduceCallChecks, RejectBadArguments) {
  const ReduceVariant& v = *registry().find("interleaved");
  ExecContext ctx(nullptr);
  int x = 0;
  std::int64_t out = 0;
  EXPECT_THROW(run(v, ReduceCall{DType::I32, Op::Sum, &x, 0, &out, 256}, ctx), std::invalid_argument);
  EXPECT_THROW(run(v, ReduceCall{DType::I32, Op::Sum, nullptr, 1, &out, 256}, ctx), std::invalid_argument);
  try {
    run(v, ReduceCall{DType::I32, Op::Sum, &x, 1, &out, 96}, ctx);
    ADD_FAILURE() << "block 96 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(v.block_sizes_text()), std::string::npos) << e.what();
  }
  EXPECT_THROW(run_integral(*registry().find("interleaved"), IntegralCall{DType::F64, 0, 1, 10, &out, 256}, ctx),
               std::invalid_argument);
}

// ---- GPU: every variant x type x operation, over n and block sizes ----

const std::vector<std::size_t> kSizes{1, 2, 31, 32, 33, 1000, 4097, 1u << 20, (1u << 24) + 7};

using Param = std::tuple<std::string, DType, Op>;

std::string case_name(const ::testing::TestParamInfo<Param>& info) {
  return test::sanitize(std::get<0>(info.param) + "_" + to_string(std::get<1>(info.param)) + "_" +
                        to_string(std::get<2>(info.param)));
}

class ReduceCase : public ::testing::TestWithParam<Param> {};

// The smallest, the default and the largest block size the variant declares.
std::vector<int> blocks_to_test(const ReduceVariant& v) {
  if (v.block_sizes.empty()) return {kDefaultBlock};
  std::vector<int> b{v.block_sizes.front()};
  if (v.takes_block(kDefaultBlock) && kDefaultBlock != b.back()) b.push_back(kDefaultBlock);
  if (v.block_sizes.back() != b.back()) b.push_back(v.block_sizes.back());
  return b;
}

TEST_P(ReduceCase, MatchesHostReferenceForEveryNAndBlock) {
  KS_REQUIRE_GPU();
  const ReduceVariant& v = *registry().find(std::get<0>(GetParam()));
  const DType t = std::get<1>(GetParam());
  const Op op = std::get<2>(GetParam());
  Stream stream;
  ExecContext ctx(stream.get());
  for (std::size_t n : test::small_if_asked(kSizes)) {
    ReduceData data(t, op, n, choose_seed());
    for (int block : blocks_to_test(v)) {
      ReduceRunner r(v, data, block, ctx);
      r.reset_output();
      r.run();
      const ReduceCheck c = r.check();
      EXPECT_TRUE(c.ok) << v.info.name << " block " << block << ": " << c.report;
    }
  }
}

TEST_P(ReduceCase, DeterministicVariantsRepeatBitwise) {
  KS_REQUIRE_GPU();
  const ReduceVariant& v = *registry().find(std::get<0>(GetParam()));
  const DType t = std::get<1>(GetParam());
  if (!v.info.deterministic) GTEST_SKIP() << v.info.name << " declares itself non-deterministic";
  Stream stream;
  ExecContext ctx(stream.get());
  ReduceData data(t, std::get<2>(GetParam()), test::small_sizes_only() ? 4097 : (1u << 20) + 3, choose_seed());
  ReduceRunner r(v, data, blocks_to_test(v).front(), ctx);
  r.reset_output();
  r.run();
  const Value first = r.result();
  for (int i = 0; i < 5; ++i) {
    r.reset_output();
    r.run();
    EXPECT_TRUE(r.result().bitwise_equal(first)) << first.str() << " then " << r.result().str();
  }
}

std::vector<std::string> variant_names() { return registry().names(); }

INSTANTIATE_TEST_SUITE_P(Variants, ReduceCase,
                         ::testing::Combine(::testing::ValuesIn(variant_names()), ::testing::ValuesIn(all_dtypes()),
                                            ::testing::Values(Op::Sum, Op::SumSquares)),
                         case_name);

// ---- GPU: the integral ----

using IntegralParam = std::tuple<std::string, DType>;

std::string integral_name(const ::testing::TestParamInfo<IntegralParam>& info) {
  return test::sanitize(std::get<0>(info.param) + "_" + to_string(std::get<1>(info.param)));
}

std::vector<std::string> integral_variants() {
  std::vector<std::string> out;
  for (const ReduceVariant* v : registry().all())
    if (v->integral) out.push_back(v->info.name);
  return out;
}

class IntegralCase : public ::testing::TestWithParam<IntegralParam> {};

TEST_P(IntegralCase, MatchesClosedFormWithinBound) {
  KS_REQUIRE_GPU();
  const ReduceVariant& v = *registry().find(std::get<0>(GetParam()));
  const DType t = std::get<1>(GetParam());
  if (!v.takes_integral(t)) GTEST_SKIP() << v.info.name << " does not fit the " << to_string(t) << " integral";
  Stream stream;
  ExecContext ctx(stream.get());
  // Under KS_SMALL_SIZES the points are too few for the stated bound: the run still goes through the kernel.
  const bool small = test::small_sizes_only();
  // The block size kbench runs the integral with: at 64 threads atomic_shared's float sum takes four times the
  // global atomics and rounds away more than the float tolerance allows (docs/reduce-notes.md).
  IntegralRunner r(v, t, 0.0, 40000 * M_PI, small ? 4097 : 100000000, kDefaultBlock, ctx);
  r.run();
  const IntegralResult res = r.check();
  if (small) return;
  EXPECT_TRUE(res.ok) << res.report;
  std::cout << res.report << "\n";
}

INSTANTIATE_TEST_SUITE_P(Variants, IntegralCase,
                         ::testing::Combine(::testing::ValuesIn(integral_variants()),
                                            ::testing::Values(DType::F32, DType::F64)),
                         integral_name);

}  // namespace
}  // namespace ks::reduce
