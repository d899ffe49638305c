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
// once; at most one partial piece per block, walked first; every partial taken exactly once, by a higher ticket of
// the same tile, after that block's own sources (the Fenwick tree of split-K, or the block below in the shared
// waves), so that each tile's owner stores the sum of every k-tile exactly once; shares within one k-tile of each
// other; the grid within the resident slots; with split-K, a block's share inside one tile.
TEST(StreamK, EveryKTileOnceAndEveryPartialSummedOnce) {
  namespace sk = stream_k;
  for (long long tiles : {1LL, 2LL, 3LL, 8LL, 64LL, 131LL, 132LL, 133LL, 256LL, 512LL, 576LL, 1024LL, 1089LL, 4096LL})
    for (int k_tiles : {0, 1, 3, 4, 7, 32, 94, 128, 255, 1025, 2049})
      for (int slots : {1, 2, 132, 264}) {
        const sk::Plan p = sk::plan(tiles, k_tiles, slots, 0.0);  // free partials: stream-K wherever it can
        const std::string at = std::to_string(tiles) + " tiles, " + std::to_string(k_tiles) + " k-tiles, " +
                               std::to_string(slots) + " slots";
        ASSERT_GE(p.grid, 1) << at;
        ASSERT_LE(p.grid, slots) << at;
        ASSERT_LE(p.sk_blocks, p.grid) << at;
        ASSERT_LE(p.splits(), sk::kMaxSplits) << at;
        std::vector<std::vector<int>> covered(tiles, std::vector<int>(k_tiles, 0));
        // Per block, its partial: the tile and how often each of the tile's k-tiles is summed in it.
        std::map<int, std::pair<long long, std::vector<int>>> partial_of;
        std::set<int> taken;
        long long least = -1, most = 0;
        for (int v = 0; v < p.grid; ++v) {
          int partials = 0;
          const sk::Plan::Share sh = p.share(v);
          if (p.splits() > 0) {
            EXPECT_EQ(sh.units, 1) << at << ": block " << v << " touches one tile";
          }
          for (long long u = 0; u < sh.units; ++u) {
            const sk::Unit w = p.unit(v, sh, u);
            ASSERT_TRUE(w.tile >= 0 && w.tile < tiles && 0 <= w.kb && w.ke <= k_tiles &&
                        (w.kb < w.ke || (k_tiles == 0 && w.kb == 0 && w.ke == 0)))
                << at << ": block " << v << " unit " << u;
            std::vector<int> sum(k_tiles, 0);
            for (int k = w.kb; k < w.ke; ++k) ++covered[w.tile][k], ++sum[k];
            if (w.piece == sk::Piece::Whole) {
              EXPECT_TRUE(w.kb == 0 && w.ke == k_tiles) << at;
              continue;
            }
            p.for_each_source(v, sh, w.sk_tile, [&](int o) {
              ASSERT_TRUE(o >= 0 && o < v) << at << ": block " << v << " takes block " << o;
              ASSERT_EQ(partial_of.count(o), 1u) << at << ": block " << v << " takes block " << o << ", no partial";
              EXPECT_EQ(partial_of[o].first, w.tile) << at << ": block " << v << " takes block " << o;
              EXPECT_TRUE(taken.insert(o).second) << at << ": block " << o << "'s partial taken twice";
              for (int k = 0; k < k_tiles; ++k) sum[k] += partial_of[o].second[k];
            });
            if (w.piece == sk::Piece::Partial) {
              ++partials;
              EXPECT_EQ(u, sh.dp) << at << ": a partial is its block's first stream-K piece";
              partial_of[v] = {w.tile, sum};
            } else {  // the owner stores the tile: every k-tile once
              for (int k = 0; k < k_tiles; ++k) ASSERT_EQ(sum[k], 1) << at << ": tile " << w.tile << " k-tile " << k;
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
        EXPECT_EQ(taken.size(), partial_of.size()) << at << ": every partial is taken";
        for (long long t = 0; t < tiles; ++t)
          for (int k = 0; k < k_tiles; ++k) ASSERT_EQ(covered[t][k], 1) << at << ": tile " << t << " k-tile " << k;
      }
}

// Split-K's combine in a Fenwick tree: the owner's longest chain of partial reads, against the tree walked by hand.
TEST(StreamK, SplitCombineChains) {
  namespace sk = stream_k;
  // S = 2: share 2 reads share 1. S = 16: shares 2, 4, 8 are done after 1, 2, 3 reads; the owner adds 15, 14, 12, 8:
  // 4 reads. S = 12: the owner adds 11, 10 (done at once and after one read), then root 8 (done after 3): 4 reads.
  // S = 33: share 32 is done after 5 reads, the owner adds it: 6.
  EXPECT_DOUBLE_EQ(sk::split_combine_k_tiles(10, 2, 1), 11);
  EXPECT_DOUBLE_EQ(sk::split_combine_k_tiles(10, 16, 1), 14);
  EXPECT_DOUBLE_EQ(sk::split_combine_k_tiles(10, 12, 2), 18);
  EXPECT_DOUBLE_EQ(sk::split_combine_k_tiles(10, 33, 1), 16);
  EXPECT_DOUBLE_EQ(sk::split_combine_k_tiles(10, 3, 1), 12);  // adds 2 (done after reading 1)
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
  // One tile: as many ways as pay, at most kMaxSplits, each at least kMinShare deep (partials at 4 k-tiles
  // each; the Fenwick tree's chain below 8 ways, the scatter's round from there). 4000 k-tiles: 64 ways, summed
  // scattered (63 + 3.5 reads = 77 against 32 ways' 125 + 1.5 = 131); 12: 2 ways (6 + 1 beats 4 + 2 and 12); 9:
  // whole (5 + 1 partial is not below 9).
  EXPECT_EQ(sk::plan(1, 4000, 132).sk_blocks, sk::kMaxSplits);
  EXPECT_DOUBLE_EQ(sk::predicted_k_tiles(sk::plan(1, 4000, 132), c), 63 + 3.5 * c);
  EXPECT_EQ(sk::plan(1, 12, 132).sk_blocks, 2);
  EXPECT_EQ(sk::plan(1, 9, 132).sk_blocks, 0);
  // 256 x 256 x 65536 in 128 x 64 tiles: 8 tiles of 2048 k-tiles, 16 ways (128 blocks; 17 would need 136 slots),
  // summed scattered: one round of kScatterReads where the tree's chain was 4 reads.
  p = sk::plan(8, 2048, 132);
  EXPECT_EQ(p.splits(), 16);
  EXPECT_TRUE(p.scatters());
  EXPECT_DOUBLE_EQ(sk::predicted_k_tiles(p, c), 128 + sk::kScatterReads * c);
  // The scatter's price: flat to kScatterFlatSplits ways, a sixteenth of a read more for each way beyond.
  EXPECT_DOUBLE_EQ(sk::scatter_combine_k_tiles(10, 8, c), 10 + 1.5 * c);
  EXPECT_DOUBLE_EQ(sk::scatter_combine_k_tiles(10, 32, c), 10 + 1.5 * c);
  EXPECT_DOUBLE_EQ(sk::scatter_combine_k_tiles(10, 64, c), 10 + 3.5 * c);

  // Split-K in clusters (cluster_slots: 30 clusters of 4 resident, an H100's): 128 x 128 x 65536 in 128 x 64 tiles,
  // 2 tiles of 2048 k-tiles: 60 ways in clusters (120 blocks: 35 + 2 steps of half a partial) against 64 ways summed
  // scattered (32 + 3.5 reads); with no cluster slots those. 256 x 256 x 16384 in 128 x 128 tiles (4 of 512 k-tiles):
  // 28 ways in clusters would shrink the grid to 112 of 132 blocks (cluster_fills): 32 ways summed scattered.
  p = sk::plan(2, 2048, 132, c, true, 120);
  EXPECT_EQ(p.splits(), 60);
  EXPECT_EQ(p.cluster, sk::kClusterSize);
  EXPECT_DOUBLE_EQ(sk::predicted_k_tiles(p, c), 35 + 2 * sk::kClusterStepShare * c);
  EXPECT_EQ(sk::plan(2, 2048, 132, c, true, 0).cluster, 0);
  EXPECT_EQ(sk::plan(2, 2048, 132, c, true, 0).splits(), 64);
  EXPECT_TRUE(sk::plan(2, 2048, 132, c, true, 0).scatters());
  p = sk::plan(4, 512, 132, c, true, 120);
  EXPECT_EQ(p.cluster, 0);
  EXPECT_EQ(p.splits(), 32);
  EXPECT_TRUE(p.scatters());
  EXPECT_FALSE(sk::cluster_fills(4, 28, 132));
  EXPECT_TRUE(sk::cluster_fills(2, 60, 132));
}

// Every split-K plan in clusters: S a multiple of kClusterSize, the grid resident in clusters, and each cluster's
// blocks (consecutive tickets) shares of one tile, its last cluster the tile's last shares.
TEST(StreamK, ClusterPlansKeepEachClusterInOneTile) {
  namespace sk = stream_k;
  int clustered = 0;
  for (long long tiles : {1, 2, 3, 6, 8, 16, 30})
    for (int k_tiles : {16, 100, 512, 4000})
      for (int cluster_slots : {0, 64, 120, 132}) {
        const sk::Plan p = sk::plan(tiles, k_tiles, 132, sk::kPartialCost, true, cluster_slots);
        if (p.cluster == 0) continue;
        ++clustered;
        const int S = p.splits();
        ASSERT_GT(S, 0);
        EXPECT_EQ(S % sk::kClusterSize, 0);
        EXPECT_LE(p.grid, cluster_slots);
        EXPECT_EQ(p.grid % sk::kClusterSize, 0);
        for (int v = 0; v < p.grid; ++v) {
          const sk::Plan::Share sh = p.share(v);
          EXPECT_EQ(sh.units, 1);
          EXPECT_EQ(sh.split, v % S + 1);
          EXPECT_EQ(v / S, (v / sk::kClusterSize * sk::kClusterSize) / S) << "cluster of block " << v << " spans tiles";
        }
      }
  EXPECT_GE(clustered, 6);
  // Clusters split one tile further than the tree may (their combine is two steps at any S): 938 k-tiles (100 x 1 x
  // 30000 in 128 x 128 x 32 tiles) 120 ways in 30 clusters, 8 k-tiles a share; the tree alone stops at kMaxSplits.
  const sk::Plan deep = sk::plan(1, 938, 132, sk::kPartialCost, true, 120);
  EXPECT_EQ(deep.cluster, sk::kClusterSize);
  EXPECT_EQ(deep.splits(), 120);
  EXPECT_GT(deep.splits(), sk::kMaxSplits);
  EXPECT_LE(sk::plan(1, 938, 132, sk::kPartialCost, true, 0).splits(), sk::kMaxSplits);
}

// Split-K summed scattered (Plan::scatters()): which plans take it (kScatterMinSplits ways or more, not in clusters),
// and the shares' pieces (scatter_piece), which partition a partial's elements in runs that differ by at most one,
// in share order. The kernel's member of piece i is share i of the tile, blocks v - (split - 1) onward: every block
// of a split-K plan holds one share of one tile (EveryKTileOnceAndEveryPartialSummedOnce).
TEST(StreamK, ScatteredSharesEachSumOnePieceOfTheTile) {
  namespace sk = stream_k;
  int scattered = 0, treed = 0;
  for (long long tiles : {1, 2, 3, 6, 8, 16, 18, 24, 32, 40, 66})
    for (int k_tiles : {8, 16, 100, 512, 4000})
      for (int cluster_slots : {0, 120}) {
        const sk::Plan p = sk::plan(tiles, k_tiles, 132, sk::kPartialCost, true, cluster_slots);
        const int S = p.splits();
        const std::string at = std::to_string(tiles) + " tiles, " + std::to_string(k_tiles) + " k-tiles, " +
                               std::to_string(cluster_slots) + " cluster slots";
        scattered += p.scatters();
        treed += S > 1 && p.cluster == 0 && !p.scatters();
        for (int v = 0; v < p.grid; ++v)  // the kernel branches on its block's share
          EXPECT_EQ(p.share(v).scatter, p.scatters()) << at << ": block " << v;
        if (!p.scatters()) continue;
        EXPECT_EQ(p.cluster, 0) << at;
        EXPECT_GE(S, sk::kScatterMinSplits) << at;
        for (int v = 0; v < p.grid; ++v) {
          const sk::Plan::Share sh = p.share(v);
          EXPECT_EQ(sh.splits, S) << at;
          EXPECT_EQ(v - (sh.split - 1), v / S * S) << at << ": block " << v << "'s tile starts elsewhere";
        }
        for (int elems : {1024, 4096, 16384, 4097}) {
          int next = 0, least = elems, most = 0;
          for (int piece = 0; piece < S; ++piece) {
            int lo, hi;
            sk::scatter_piece(elems, S, piece, lo, hi);
            EXPECT_EQ(lo, next) << at << ": " << elems << " elements, piece " << piece;
            least = std::min(least, hi - lo);
            most = std::max(most, hi - lo);
            next = hi;
          }
          EXPECT_EQ(next, elems) << at;
          EXPECT_LE(most - least, 1) << at;
        }
      }
  EXPECT_GE(scattered, 5);
  EXPECT_GE(treed, 5);  // 2 to 7 ways stay in the tree
}

// The TMA kernels' stream-K schedules on the GPU (test_gemm_variants' shapes reach the split ones only): the last
// wave and the remainder shared, K split from 2 to 120 ways (the Fenwick tree's combine with and without prefix
// roots below 8 ways, summed scattered from 8 to 43, and in clusters of 4: 15 and 30 to a tile), and whole tiles; odd edges, padded leading dimensions, beta != 0 and beta == 0 (NaN in C's
// destination). The 128 x 128 kernel, the 128 x 64 one and its transpose 64 x 128 in both forms: eight 32 x 32
// warps (the rule's), and two k-groups, whose partials are the first group's sum after the groups' exchange. Each
// product runs three times on one context from a poisoned C: the flags and the ticket counter must be zero again
// after every launch, or a later owner reads a stale partial.
struct StreamKCase {
  GemmShape shape;
  double beta;
  const char* schedule;  // the start of the note dmma_tma_schedule on 132 SMs
};

void expect_schedules_pass(const char* variant, std::initializer_list<StreamKCase> cases) {
  KS_REQUIRE_GPU();
  if (test::current_cc() != 90) GTEST_SKIP() << "the TMA kernel runs on compute capability 9.0";
  const GemmVariant* v = registry().find(variant);
  ASSERT_NE(v, nullptr) << variant;
  const bool sms_132 = dmma::current_target().sm_count == 132;  // the schedules are an H100's or H200's
  for (const StreamKCase& c : cases) {
    const GemmProblem p = make_problem(c.shape, 1.25, c.beta, choose_seed());
    std::map<std::string, std::string> notes = expect_repeated_runs(*v, p, 3);
    // The schedule, where the GPU is the one the cases were written for: 132 SMs, and for split-K, 30 clusters of
    // stream_k::kClusterSize resident (an H100's GPCs; split-K in clusters needs its grid resident in clusters).
    const auto clusters = notes.find("dmma_tma_clusters");
    if (sms_132 && (clusters == notes.end() || clusters->second == "30 clusters of 4 resident")) {
      EXPECT_EQ(notes["dmma_tma_schedule"].rfind(c.schedule, 0), 0u)
          << variant << " " << p.shape.str() << ": " << notes["dmma_tma_schedule"];
    }
  }
}

TEST(DmmaTmaStreamK, EverySchedulePassesRepeatedly) {
  expect_schedules_pass("dmma_tma_128x128_k32",
                        {{{2900, 3000, 300, 2902, 302, 2901}, 0.5, "stream-K: 396 whole tiles, 156 shared by 132 blocks"},
                         {{640, 1000, 2000}, 0.0, "40 tiles, K split 3 ways"},
                         {{2048, 64, 4000}, -1.0, "16 tiles, K split 8 ways"},
                         {{300, 200, 9000, 302, 9002, 301}, 0.5, "6 tiles, K split 22 ways"},
                         {{256, 200, 30000, 257, 30001, 258}, -1.0, "4 tiles, K split 33 ways, summed scattered"},
                         {{100, 1, 30000}, 0.0, "1 tiles, K split 120 ways in clusters of 4"},
                         {{200, 100, 30000, 201, 30001, 202}, 0.5, "2 tiles, K split 60 ways in clusters of 4"},
                         {{1400, 1536, 200, 1402}, 0.0, "132 whole tiles"}});
}

TEST(DmmaTmaStreamK, HalfTilesEverySchedulePassesRepeatedly) {
  for (const char* variant : {"dmma_tma_128x64_k32_w32", "dmma_tma_128x64_k32_2g"})
    expect_schedules_pass(variant,
                        {{{2900, 3000, 300, 2902, 302, 2901}, 0.5, "stream-K: 924 whole tiles, 157 shared by 132 blocks"},
                         {{640, 512, 2000}, 0.0, "40 tiles, K split 3 ways"},
                         {{130, 60, 30000, 131, 30002, 133}, -1.0, "2 tiles, K split 60 ways in clusters of 4"},
                         {{100, 50, 30000, 101, 30001, 103}, 0.5, "1 tiles, K split 120 ways in clusters of 4"},
                         {{2048, 64, 4000}, -1.0, "16 tiles, K split 8 ways"},
                         {{200, 130, 20000, 202, 20002, 203}, -1.0, "6 tiles, K split 22 ways"},
                         {{300, 60, 30000, 301, 30001, 303}, 0.5, "3 tiles, K split 43 ways, summed scattered"},
                         {{1400, 1536, 200, 1402}, 0.0, "264 whole tiles"},
                         {{1000, 1000, 1000, 1002, 1004, 1003}, 0.0, "128 whole tiles on 128 blocks"}});
}

TEST(DmmaTmaStreamK, SixtyFourRowsEverySchedulePassesRepeatedly) {
  for (const char* variant : {"dmma_tma_64x128_k32_w32", "dmma_tma_64x128_k32_2g"})
    expect_schedules_pass(variant,
                        {{{2900, 3000, 300, 2902, 302, 2901}, 0.5, "stream-K: 924 whole tiles, 180 shared by 132 blocks"},
                         {{64, 3000, 300}, 0.0, "24 tiles, K split 2 ways"},
                         {{40, 200, 30000, 41, 30001, 43}, 0.5, "2 tiles, K split 60 ways in clusters of 4"},
                         {{40, 700, 20000, 42, 20002, 41}, 0.5, "6 tiles, K split 22 ways"},
                         {{1400, 1536, 200, 1402}, 0.0, "264 whole tiles"},
                         {{1, 3000, 5000, 2}, -1.0, "24 tiles, K split 5 ways"},  // lda even: the TMA's
                         {{1000, 1000, 1000, 1002, 1004, 1003}, 0.0, "128 whole tiles on 128 blocks"}});
}

// The 32-wide tiles (C of 9 to 32 columns or rows): 128 x 32 with two k-groups of four warps, and 32 x 128 with two
// of four warps whose pieces of C are 32 x 32 (the partials' and clusters' fragment order at two mma rows a warp).
TEST(DmmaTmaStreamK, ThirtyTwoColumnsEverySchedulePassesRepeatedly) {
  expect_schedules_pass("dmma_tma_128x32_k32_2g",
                        {{{2900, 3000, 300, 2902, 302, 2901}, 0.5, "stream-K: 1980 whole tiles, 182 shared by 132 blocks"},
                         {{640, 64, 2000}, 0.0, "10 tiles, K split 13 ways"},
                         {{130, 30, 30000, 131, 30002, 133}, -1.0, "2 tiles, K split 60 ways in clusters of 4"},
                         {{2048, 20, 4000}, -1.0, "16 tiles, K split 8 ways"},
                         {{200, 70, 20000, 202, 20002, 203}, -1.0, "6 tiles, K split 22 ways"},
                         {{1400, 1536, 200, 1402}, 0.0, "528 whole tiles on 132 blocks"},
                         {{3000, 1, 5000, 3000, 5001}, 0.5, "24 tiles, K split 5 ways"}});
}

TEST(DmmaTmaStreamK, ThirtyTwoRowsEverySchedulePassesRepeatedly) {
  expect_schedules_pass("dmma_tma_32x128_k32_2g",
                        {{{3000, 2900, 300, 3002, 302, 3001}, 0.5, "stream-K: 1980 whole tiles, 182 shared by 132 blocks"},
                         {{64, 640, 2000}, 0.0, "10 tiles, K split 13 ways"},
                         {{30, 130, 30000, 31, 30002, 33}, 0.5, "2 tiles, K split 60 ways in clusters of 4"},
                         {{20, 2048, 4000}, -1.0, "16 tiles, K split 8 ways"},
                         {{70, 200, 20000, 72, 20002, 71}, -1.0, "6 tiles, K split 22 ways"},
                         {{1536, 1400, 200, 1538}, 0.0, "528 whole tiles on 132 blocks"},
                         {{1, 3000, 5000, 2}, -1.0, "24 tiles, K split 5 ways"}});
}

}  // namespace
}  // namespace ks::gemm
