// The fast reductions' own demands: any element-aligned start, every internal boundary, bitwise
// reproducibility, and the compensated variant's accuracy on ill-conditioned input.
#include "reduce/reduce.hpp"
#include "reduce/reference.hpp"
#include "reduce/runner.hpp"
#include "gpu_test.hpp"

#include "common/random.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

namespace ks::reduce {
namespace {

// Lengths around the vector width, the per-thread unrolled step, the block's and the resident grid's share, the
// rule's one-block limits (1024 and 4096 vectors), the cluster path's blocks (1024 threads, up to 16) and the
// rule's switch from the cluster path to the grid (256 KiB).
std::vector<std::size_t> boundary_lengths(DType t) {
  const std::size_t w = 16 / size_of(t);
  int dev = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  std::set<std::size_t> n;
  for (std::size_t base : {w, 4 * w, 256 * w, 1024 * w, 4096 * w, 16 * 1024 * w, 16 * 4096 * w, (std::size_t(256) << 10) / size_of(t),
                           std::size_t(sms) * 1024 * w, std::size_t(sms) * 8 * 1024 * w})
    for (std::size_t k : {base - 1, base, base + 1, 2 * base + 1})
      if (k >= 1) n.insert(k);
  for (std::size_t k = 1; k <= 2 * w + 1; ++k) n.insert(k);
  return {n.begin(), n.end()};
}

class FastReduce : public ::testing::TestWithParam<std::tuple<std::string, DType>> {};

TEST_P(FastReduce, AnyStartAndLengthMatchesTheReference) {
  KS_REQUIRE_GPU();
  const ReduceVariant& v = *registry().find(std::get<0>(GetParam()));
  const DType t = std::get<1>(GetParam());
  const auto lengths = test::small_if_asked(boundary_lengths(t));
  const std::size_t max_n = lengths.back();
  Stream stream;
  ExecContext ctx(stream.get());
  DeviceBuffer<std::int64_t> out(1);
  for (Op op : {Op::Sum, Op::SumSquares}) {
    ReduceData data(t, op, max_n + 16, choose_seed());
    const auto* host = static_cast<const unsigned char*>(data.host());
    const auto* dev = static_cast<const unsigned char*>(data.device());
    for (std::size_t n : lengths) {
      for (std::size_t offset = 0; offset < 16; ++offset) {
        if (n > 100000 && offset % 4 != 1) continue;  // large lengths: a few offsets suffice
        const Reference ref = host_reference(t, op, host + offset * size_of(t), n);
        run(v, ReduceCall{t, op, dev + offset * size_of(t), n, out.data(), kDefaultBlock}, ctx);
        const ReduceCheck c = check_result(ref, read_value(t, out.data(), stream.get()), n, data.seed());
        ASSERT_TRUE(c.ok) << v.info.name << " " << to_string(op) << " n " << n << " offset " << offset << ": "
                          << c.report;
      }
    }
  }
}

TEST_P(FastReduce, HundredRunsAreBitwiseIdentical) {
  KS_REQUIRE_GPU();
  const ReduceVariant& v = *registry().find(std::get<0>(GetParam()));
  const DType t = std::get<1>(GetParam());
  Stream stream;
  ExecContext ctx(stream.get());
  ReduceData data(t, Op::Sum, test::small_sizes_only() ? 4097 : (1u << 24) + 3, choose_seed());
  ReduceRunner r(v, data, kDefaultBlock, ctx);
  r.reset_output();
  r.run();
  const Value first = r.result();
  ASSERT_TRUE(r.check().ok) << r.check().report;
  for (int i = 0; i < 100; ++i) {
    r.reset_output();
    r.run();
    const Value again = r.result();
    ASSERT_TRUE(again.bitwise_equal(first)) << "run " << i << ": " << again.str() << " vs " << first.str();
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, FastReduce,
                         ::testing::Combine(::testing::Values("fast", "fast_compensated", "fast_grid", "fast_grid_counted",
                                                              "fast_cluster"),
                                            ::testing::ValuesIn(all_dtypes())),
                         [](const ::testing::TestParamInfo<std::tuple<std::string, DType>>& info) {
                           return std::get<0>(info.param) + "_" + to_string(std::get<1>(info.param));
                         });

// The grid path's two handovers (tagged slots on sm_90, stored partials and a count elsewhere) merge the
// partials in the same order, so they give the same bits; both leave the context's counters (and the slots
// among them) zero, so that either (or any other user of the counters) can follow the other.
TEST(FastGrid, SlotAndCountedHandoversGiveTheSameBitsAndLeaveTheCountersZero) {
  KS_REQUIRE_GPU();
  const ReduceVariant& slots = *registry().find("fast_grid");
  const ReduceVariant& counted = *registry().find("fast_grid_counted");
  int dev = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  Stream stream;
  ExecContext ctx(stream.get());
  DeviceBuffer<std::int64_t> out(1);
  auto expect_counters_zero = [&](const std::string& what) {
    const std::vector<unsigned> c = test::zeroed_counters_now(ctx);
    ASSERT_FALSE(c.empty()) << what;
    for (std::size_t i = 0; i < c.size(); ++i) ASSERT_EQ(c[i], 0u) << what << ": counter word " << i;
  };
  for (DType t : all_dtypes()) {
    const std::size_t per_block = 256 * 4 * (16 / size_of(t));  // a grid block's share: 256 threads, 4 vectors
    // Grids of 1, 2, 33 and 258 blocks (two slots for some of the last block's threads), then the resident grid
    // over more than its share (grid-stride loops), with ragged ends.
    const std::vector<std::size_t> lengths = test::small_if_asked(std::vector<std::size_t>{
        per_block - 3, per_block + 1, 33 * per_block - 5, 257 * per_block + 7, std::size_t(sms) * 8 * per_block + 9});
    ReduceData data(t, Op::Sum, lengths.back(), choose_seed());
    for (std::size_t n : lengths) {
      const std::string what = std::string(to_string(t)) + " n " + std::to_string(n);
      Value got[2];
      int k = 0;
      for (const ReduceVariant* v : {&slots, &counted, &slots}) {
        run(*v, ReduceCall{t, Op::Sum, data.device(), n, out.data(), kDefaultBlock}, ctx);
        const Value value = read_value(t, out.data(), stream.get());
        expect_counters_zero(what + " after " + v->info.name);
        if (k < 2) got[k] = value;
        else EXPECT_TRUE(value.bitwise_equal(got[0])) << what << ": the second slot run " << value.str();
        ++k;
      }
      EXPECT_TRUE(got[0].bitwise_equal(got[1])) << what << ": slots " << got[0].str() << ", counted " << got[1].str();
      const Reference ref = host_reference(t, Op::Sum, data.host(), n);
      const ReduceCheck c = check_result(ref, got[0], n, data.seed());
      EXPECT_TRUE(c.ok) << what << ": " << c.report;
    }
  }
}

TEST(FastCompensated, WithinAFewUlpOnIllConditionedInput) {
  KS_REQUIRE_GPU();
  // Pairs +a, -a with |a| up to 1e4 hide a small sum (|S| ~ 1e2-1e3) among cancelling large terms:
  // condition number sum|x| / |S| ~ 1e7.
  const std::size_t pairs = 1u << 20;
  const std::uint64_t seed = choose_seed();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> big(-1e4, 1e4), small(-1, 1);
  std::vector<double> x;
  x.reserve(3 * pairs);
  for (std::size_t i = 0; i < pairs; ++i) {
    const double a = big(rng);
    x.push_back(a);
    x.push_back(small(rng));
    x.push_back(-a);
  }
  std::shuffle(x.begin(), x.end(), rng);
  const long double exact = host_reference(DType::F64, Op::Sum, x.data(), x.size()).exact;
  DeviceBuffer<double> dx(x.size());
  upload_now(dx.data(), x.data(), x.size() * sizeof(double));
  Stream stream;
  ExecContext ctx(stream.get());
  DeviceBuffer<double> out(1);
  run(*registry().find("fast_compensated"), ReduceCall{DType::F64, Op::Sum, dx.data(), x.size(), out.data(), kDefaultBlock}, ctx);
  const double got = read_value(DType::F64, out.data(), stream.get()).f;
  const double ulp = std::nextafter(std::fabs(static_cast<double>(exact)), INFINITY) - std::fabs(static_cast<double>(exact));
  const double err_ulps = std::fabs(static_cast<long double>(got) - exact) / ulp;
  EXPECT_LE(err_ulps, 4.0) << "got " << got << ", exact " << static_cast<double>(exact) << " (seed " << seed << ")";
  std::cout << "fast_compensated: " << err_ulps << " ulp from the exact sum\n";
}

}  // namespace
}  // namespace ks::reduce
