// dmma_tma's stream-K work schedule: every k-tile once and every partial owned (host), and both TMA kernels'
// schedules on the GPU, repeated on one context.
#include "gemm_fixtures.hpp"
#include "gemm/dmma_shapes.hpp"
#include "gemm/stream_k.hpp"

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


// The TMA kernels' stream-K schedules on the GPU (test_gemm_variants' shapes reach the split ones only): the last
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

}  // namespace
}  // namespace ks::gemm
