// The launch modes: names, the graph launched twice, and a Runner's first run right after construction.
#include "gemm_fixtures.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <tuple>

namespace ks::gemm {
namespace {

TEST(GemmModes, ParseAndPrintRoundTrip) {
  for (Mode m : all_modes()) EXPECT_EQ(parse_mode(to_string(m)), m);
  EXPECT_THROW(parse_mode("zero-copy"), std::invalid_argument);
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

// A library user's first run() right after construction, with no reset_output() between, must compute
// alpha A B + beta C0 in every mode: whatever the Runner ran while setting up (the graph's capture, the pageable
// pipelined way's choice, which runs the product three times in place) must not leave C changed. beta != 0, so
// a C left at alpha A B + beta C0 from set-up, or unwritten device memory, is read and fails.
TEST(GemmModes, RunRightAfterConstructionStartsFromC0) {
  KS_REQUIRE_GPU();
  const GemmProblem p = make_problem({1100, 900, 400}, 1.5, 0.5, choose_seed());
  for (Mode mode : all_modes()) {
    Stream stream;
    ExecContext ctx(stream.get());
    Runner runner(*registry().find(kTrusted), mode, p, ctx);
    runner.run();
    const GemmCheck c = validate(p, runner.result());
    EXPECT_TRUE(c.ok) << to_string(mode) << ": " << c.report;
  }
}

#if !defined(KS_HIP)
// cuBLASXt through the Runner, on the pinned and pageable modes' host buffers: C poisoned or set to C0 by
// reset_output(), the product right after construction and after its block size is chosen; other modes refused.
TEST(GemmModes, CublasXtRunsOnTheHostModesBuffers) {
  KS_REQUIRE_GPU();
  const GemmProblem p = make_problem({700, 500, 300}, -1.25, 0.75, choose_seed());
  Stream stream;
  ExecContext ctx(stream.get());
  CublasXt xt({0});
  for (Mode mode : {Mode::Pinned, Mode::Pageable}) {
    Runner runner(xt, mode, p, ctx);
    runner.run();
    GemmCheck c = validate(p, runner.result());
    EXPECT_TRUE(c.ok) << to_string(mode) << ": " << c.report;
    const std::map<int, double> sweep = xt.choose_block_dim([&] { runner.run(); });
    EXPECT_EQ(sweep.size(), CublasXt::block_dims().size());
    EXPECT_EQ(sweep.count(xt.block_dim()), 1u);
    runner.reset_output();
    EXPECT_EQ(runner.host_result()[0], p.C0(0, 0));  // beta != 0: C starts from C0
    runner.run();
    c = validate(p, runner.result());
    EXPECT_TRUE(c.ok) << to_string(mode) << " after the sweep: " << c.report;
  }
  for (Mode mode : {Mode::Device, Mode::Graph, Mode::Mapped, Mode::PinnedPipelined})
    EXPECT_THROW(Runner(xt, mode, p, ctx), std::invalid_argument) << to_string(mode);
}
#endif
}  // namespace
}  // namespace ks::gemm
