// The pipelined modes: the tile rule's plans and schedules (host), and the executor on the GPU (small budgets,
// both pageable ways, two devices, a budget below one panel).
#include "gemm_fixtures.hpp"
#if !defined(KS_HIP)
#include "gemm/host/cublasxt.hpp"
#endif

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

// Forced chunks and lead panels are refused before a schedule of more than kMaxOps steps is built; a forced width
// wider than C is C's width.
TEST(PipelinedPlan, ForcedChunksAndLeadBoundedAndWidthClampedToC) {
  pipelined::PlanInput in{.M = 60000, .N = 60000, .K = 60000, .budget_bytes = std::size_t(80) << 30, .h2d_gbs = 55,
                          .d2h_gbs = 55, .tflops = 60, .nt = 64, .lead = 1000000, .chunks = 1000000};
  try {
    const pipelined::Plan p = pipelined::plan(in);
    ADD_FAILURE() << "planned: " << p.str();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("steps, more than the 2097152 the rule simulates"), std::string::npos)
        << e.what();
  }
  in = {.M = 100, .N = 100, .K = 100, .budget_bytes = std::size_t(80) << 30, .h2d_gbs = 55, .d2h_gbs = 55,
        .tflops = 60, .nt = 8192};
  const pipelined::Plan p = pipelined::plan(in);
  EXPECT_EQ(p.nt, 100) << p.str();
  EXPECT_EQ(p.col_panels, 1);
  EXPECT_LT(p.device_bytes, pipelined::kDeviceOverheadBytes + (std::size_t(1) << 20)) << p.str();
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
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      Tile& t = op.kind == Op::SendA ? tiles[{-1, -1}] : tiles[{op.r0, op.c0}];  // (-1, -1): no tile, erased below
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
          // The A chunk it waits for covers its range, and the chunks come in order on one stream.
          EXPECT_EQ(ops[op.deps[1]].kind, Op::SendA);
          EXPECT_GE(ops[op.deps[1]].k1, op.k1);
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
                pipelined::PlanInput in{.M = M, .N = N, .K = K, .beta_nonzero = beta,
                                        .budget_bytes = pipelined::kDeviceOverheadBytes + (budget_mib << 20),
                                        .h2d_gbs = 50, .d2h_gbs = 45, .tflops = 50, .devices = devices,
                                        .lead = lead, .chunks = lead == 3 ? 7 : 0};
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
                  const pipelined::Share share = pipelined::share_of(p.col_panels, devices, d);
                  check_schedule(p, in, share.first, share.count, rng);
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
        Runner runner(*registry().find(kTrusted), mode, p, ctx, o);
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
        Runner runner(*registry().find(kFast), mode, p, ctx, o);
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
  Runner runner(*registry().find(kFast), Mode::PageablePipelined, p, ctx, o);
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
  for (const char* name : {kTrusted, kFast}) {
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
#if !defined(KS_HIP)
  {
    CublasXt xt({1, 0});
    const GemmShape& s = p.shape;
    std::vector<double> c(p.C0.data(), p.C0.data() + p.c_count());
    xt.run(p.args(p.A.data(), p.B.data(), c.data()));
    const GemmCheck check = validate(p, Eigen::Map<const Eigen::MatrixXd>(c.data(), s.ldc, s.N));
    EXPECT_TRUE(check.ok) << check.report;
  }
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  EXPECT_EQ(current, 0) << "cuBLASXt left the caller on another device";
#endif
}

TEST(GemmPipelined, ABudgetBelowOnePanelIsAClearError) {
  KS_REQUIRE_GPU();
  const GemmProblem p = make_problem({300, 300, 5000}, 1.0, 0.0, choose_seed());
  PipelineOptions o;
  o.config.budget_bytes = pipelined::kDeviceOverheadBytes + 4096;
  Stream stream;
  ExecContext ctx(stream.get());
  EXPECT_THROW(Runner(*registry().find(kTrusted), Mode::PinnedPipelined, p, ctx, o), std::invalid_argument);
}

}  // namespace
}  // namespace ks::gemm
