// The dmma and dmma_tma rules: the tile table, the picks and their scores, split-K, the TMA fragment layout.
#include "gemm_fixtures.hpp"
#include "gemm/dmma_shapes.hpp"
#include "gemm/stream_k.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <iterator>
#include <set>
#include <string>
#include <tuple>

namespace ks::gemm {
namespace {

// An H100 as the rule sees it: 132 SMs, sm_90 code, and the blocks per SM the occupancy calculator reported
// there for each row of the shape table.
dmma::Target h100() {
  dmma::Target t{.sm_count = 132, .code_arch = 90, .l2_bytes = 50LL << 20};
  for (int s = 0; s < dmma::kShapeCount; ++s) {
    const dmma::Shape& sh = dmma::kShapes[s];
    t.blocks_per_sm[s] = sh.bm == 128 && sh.bn == 128 ? 1 : sh.bm == 128 ? 2 : 3;
  }
  return t;
}

// The first row of dmma::kTmaTiles that `pred` accepts (kTmaTileCount where none does).
template <class Pred>
int tma_tile_where(Pred pred) {
  return static_cast<int>(std::find_if(std::begin(dmma::kTmaTiles), std::end(dmma::kTmaTiles), pred) -
                          std::begin(dmma::kTmaTiles));
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

TEST(DmmaTmaTiles, TheTableIsConsistent) {
  std::set<std::string> names;
  for (int i = 0; i < dmma::kTmaTileCount; ++i) {
    const dmma::TmaTile& t = dmma::kTmaTiles[i];
    EXPECT_EQ(t.bk % 16, 0) << t.name;
    EXPECT_TRUE(t.bm % 64 == 0 || t.bm == 32) << t.name;  // consumer warps hold 64 x 32 or 32 x 32 pieces of C
    EXPECT_EQ(t.bn % 32, 0) << t.name;
    EXPECT_GE(t.stages, t.kgroups) << t.name;  // each group takes alternate stages
    EXPECT_TRUE(names.insert(t.variant).second) << t.variant;
    // Every kernel runs alone as a tuning variant of that name.
    const GemmVariant* v = registry().find(dmma::tma_variant_name(i));
    ASSERT_NE(v, nullptr) << t.variant;
    EXPECT_TRUE(v->info.tuning);
    EXPECT_EQ(v->info.min_cc, 90);
  }
  // The rule's candidates come first: the kernels it picks from are the rows with a speed.
  EXPECT_GT(dmma::kTmaTiles[0].speed, 0);
  for (const dmma::TmaExtra& e : dmma::kTmaExtras) {
    ASSERT_GE(e.tile, 0);
    ASSERT_LT(e.tile, dmma::kTmaTileCount);
    EXPECT_NE(registry().find(dmma::tma_variant_name(e.tile) + e.suffix), nullptr) << e.suffix;
  }
  EXPECT_FALSE(registry().find("dmma_tma")->info.tuning);
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

// The wavefronts of a warp's 64-bit shared-memory access where lane 4g + t touches the double offset(g, t): one
// half-warp per wavefront, each as many as the most doubles that share an 8-byte bank.
template <class F>
int wavefronts(F offset) {
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

// The staging of C for the TMA stores (store_tma tiles): lane (g, t)'s store of accumulator [mt][nt][r] writes row
// 16 mt + g + 8 (r / 2), column 8 nt + 2 t + r % 2 of its warp's 64 x 32 piece; each of those 64 stores must take
// 2 wavefronts (the same model as the loads above), and the staging must hold the piece once, in four boxes of
// 16 rows whose columns are 128-byte rows swizzled as the TMA's SWIZZLE_128B reads them.
TEST(DmmaTmaLayout, EveryStagingStoreOfCIsConflictFreeAndTheBoxesAreTheTmas) {
  std::set<int> seen;
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < 32; ++j) {
      const int at = dmma::tma_c_staged(i, j);
      EXPECT_TRUE(seen.insert(at).second) << i << ", " << j;
      EXPECT_EQ(at / 512, i / 16);                 // box i / 16, 4 KB
      EXPECT_EQ(at % 512 / 16, j);                 // column j is the box's 128-byte row j
      EXPECT_EQ(at % 16 / 2, (i % 16 / 2) ^ (j % 8));  // 16-byte chunk (i % 16) / 2, XOR the row's index mod 8
      EXPECT_EQ(at % 2, i % 2);
    }
  EXPECT_EQ(seen.size(), 64u * 32u);
  EXPECT_EQ(*seen.rbegin(), 64 * 32 - 1);
  for (int mt = 0; mt < 4; ++mt)
    for (int nt = 0; nt < 4; ++nt)
      for (int r = 0; r < 4; ++r)
        EXPECT_EQ(wavefronts([&](int g, int t) {
                    return dmma::tma_c_staged(16 * mt + g + 8 * (r / 2), 8 * nt + 2 * t + r % 2);
                  }),
                  2)
            << "store " << mt << ", " << nt << ", " << r;
  // Columns of 64 doubles unswizzled (64 rows contiguous) would conflict: the model can fail.
  EXPECT_GT(wavefronts([](int g, int t) { return 64 * 2 * t + g; }), 2);
}

// A and B evict-last exactly where their 8 (MK + KN) bytes fit in the L2 (none where its size is unknown).
TEST(DmmaTmaRule, KeepsAAndBWhereTheyFitInTheL2) {
  const dmma::Target t = h100();  // 50 MiB
  EXPECT_TRUE(dmma::tma_keeps_ab(4096, 4096, 64, t));     // 4 MiB
  EXPECT_TRUE(dmma::tma_keeps_ab(8192, 8192, 256, t));    // 32 MiB
  EXPECT_FALSE(dmma::tma_keeps_ab(8192, 8192, 512, t));   // 64 MiB
  EXPECT_FALSE(dmma::tma_keeps_ab(4096, 4096, 4096, t));  // 256 MiB
  EXPECT_FALSE(dmma::tma_keeps_ab(128, 128, 262144, t));  // 512 MiB: small C, deep K
  // The boundary: 1024 x 1024 with K = 3200 is 8 x 2 x 1024 x 3200 bytes, 50 MiB exactly.
  EXPECT_TRUE(dmma::tma_keeps_ab(1024, 1024, 3200, t));
  EXPECT_FALSE(dmma::tma_keeps_ab(1024, 1024, 3201, t));
  EXPECT_FALSE(dmma::tma_keeps_ab(1024, 1024, 3200, dmma::Target{.sm_count = 132}));
  // No overflow where M K alone passes 2^31.
  EXPECT_FALSE(dmma::tma_keeps_ab(65536, 1, 65536, t));
}

// The TMA-store tile in the shallow tile's place: K above kTmaStoreMinDepth, C of more than one tile a SM and at most
// kTmaStoreMaxTilesPerSm, or K at most kTmaStoreAnyTilesDepth, C's stores the TMA's, its kernel loaded; every other
// pick as it was.
TEST(DmmaTmaRule, TmaStoreTileInTheShallowTilesPlaceWhereItLeads) {
  const dmma::Target t = h100();  // 132 SMs
  const int shallow = dmma::tma_shallow_tile(), store = dmma::tma_store_tile();
  ASSERT_NE(shallow, store);
  EXPECT_TRUE(dmma::kTmaTiles[store].store_tma);
  EXPECT_FALSE(dmma::kTmaTiles[shallow].store_tma);
  bool all[dmma::kTmaTileCount], no_store[dmma::kTmaTileCount];
  std::fill(std::begin(all), std::end(all), true);
  std::fill(std::begin(no_store), std::end(no_store), true);
  no_store[store] = false;
  const auto swap = [&](int M, int N, int K, int pick = dmma::tma_shallow_tile(), bool c_by_tma = true) {
    return dmma::tma_store_swap(M, N, K, t, all, pick, c_by_tma);
  };
  EXPECT_EQ(swap(4096, 4096, 33), store);
  EXPECT_EQ(swap(4096, 4096, dmma::kTmaStoreMinDepth), shallow);
  EXPECT_EQ(swap(4096, 4096, 16), shallow);
  EXPECT_EQ(swap(4096, 4096, dmma::kTmaShallowDepth), store);
  EXPECT_EQ(swap(4096, 4096, dmma::kTmaShallowDepth + 1), shallow);
  // 48 x 55 tiles is 20 a SM exactly; one column more is past it, where only K of at most 64 swaps.
  EXPECT_EQ(swap(6144, 7040, 96), store);
  EXPECT_EQ(swap(6144, 7041, 96), shallow);
  EXPECT_EQ(swap(6144, 7041, dmma::kTmaStoreAnyTilesDepth), store);
  EXPECT_EQ(swap(16384, 16384, 48), store);
  EXPECT_EQ(swap(16384, 16384, 32), shallow);
  EXPECT_EQ(swap(8192, 8192, 128), shallow);  // 31 tiles a SM
  // One tile a SM or fewer (132 tiles: 11 x 12): no block has a next tile; 133 and more swap.
  EXPECT_EQ(swap(11 * 128, 12 * 128, 64), shallow);
  EXPECT_EQ(swap(1280, 1280, 256), shallow);
  EXPECT_EQ(swap(7 * 128, 19 * 128, 64), store);  // 133 tiles
  // C's stores not the TMA's, the kernel not loaded, another pick: unchanged.
  EXPECT_EQ(swap(4096, 4096, 64, shallow, false), shallow);
  EXPECT_EQ(dmma::tma_store_swap(4096, 4096, 64, t, no_store, shallow, true), shallow);
  EXPECT_EQ(swap(4096, 4096, 64, 0), 0);
  EXPECT_EQ(swap(4096, 4096, 64, -1), -1);
  // tma_pick's choice at the sweep's shallow cells, then the swap.
  std::string why;
  EXPECT_EQ(dmma::tma_pick(4096, 4096, 64, t, all, 0, &why), shallow) << why;
  EXPECT_EQ(swap(4096, 4096, 64), store);
  EXPECT_EQ(dmma::tma_pick(5000, 3000, 200, t, all, 0, &why), shallow) << why;
  EXPECT_EQ(swap(5000, 3000, 200), store);
}

TEST(DmmaTmaRule, TmaWhereItScoresAboveDmmaAndCanRun) {
  const dmma::Target t = h100();
  // Every kernel loads; only the first loads; none does.
  bool both[dmma::kTmaTileCount], first[dmma::kTmaTileCount] = {true}, none[dmma::kTmaTileCount] = {};
  std::fill(std::begin(both), std::end(both), true);
  std::string why;
  for (int n : {2048, 3000, 4096, 8192}) {
    EXPECT_EQ(dmma::tma_pick(n, n, n, t, both, 0, &why), 0) << n << ": " << why;
    EXPECT_EQ(why.rfind("tma 128x128x32", 0), 0u) << why;
  }
  // 1024^3: 64 tiles of 128 x 128 would leave half of the SMs idle; split two ways along K they fill 128 of 132,
  // and the score counts the partial each owner reads: 1.05 x 64 x 32 / (132 x (16 + kPartialCost)). The
  // 128 x 64 kernel (eight 32 x 32 warps) runs 128 whole tiles of 32 k-tiles, one per SM: 1.00 x 128 / 132.
  EXPECT_NEAR(dmma::tma_score(1024, 1024, 1024, t, true, true, 0),
              dmma::kTmaTiles[0].speed * 64 * 32 / (132.0 * (16 + stream_k::kPartialCost)), 1e-12);
  EXPECT_NEAR(dmma::tma_score(1024, 1024, 1024, t, true, true, 1), dmma::kTmaTiles[1].speed * 128 / 132.0, 1e-12);
  EXPECT_EQ(dmma::tma_pick(1024, 1024, 1024, t, both, 0, &why), 1) << why;
  EXPECT_EQ(why.rfind("tma 128x64x32, 32x32 warps", 0), 0u) << why;
  // Where the 128 x 64 kernel does not load, the 128 x 128 one still beats dmma there.
  EXPECT_EQ(dmma::tma_pick(1024, 1024, 1024, t, first, 0, &why), 0) << why;
  // Small C: dmma splits K over 64 x 64 tiles in a second kernel (256 x 256: 16 tiles x 16 splits, 256 blocks in
  // 396 slots: 0.92 x 256 / 396); the TMA kernels split a tile's K up to 64 ways in the same kernel, paying for the
  // combine: from 8 ways one round of reads summed scattered (kScatterReads partials). K = 4096 (128 k-tiles of 8
  // tiles of 128 x 64, 16 ways: 8 + 1.5 reads of 4) is too shallow for that, its combine 27% of the time; K = 65536
  // (2048 k-tiles) is deep enough: the 128 x 128 kernel, 4 tiles split 33 ways (63 k-tiles + 1.5 reads of 4; measured
  // 102.1-102.9% of cuBLAS, as the 128 x 64 kernel's 16 ways, 102.9%; docs/gemm-notes.md, step 52).
  EXPECT_NEAR(dmma::split_score(256, 256, dmma::choose(256, 256, 4096, t), t, true), 0.92 * 256 / 396, 1e-12);
  EXPECT_NEAR(dmma::tma_score(256, 256, 4096, t, true, true, 1),
              8.0 * 128 / (132 * (8 + stream_k::kScatterReads * stream_k::kPartialCost)), 1e-12);
  EXPECT_EQ(dmma::tma_pick(256, 256, 4096, t, both, 0, &why), -1);
  EXPECT_NE(why.find("too finely"), std::string::npos) << why;
  EXPECT_NEAR(dmma::tma_score(256, 256, 65536, t, true, true, 1),
              8.0 * 2048 / (132 * (128 + stream_k::kScatterReads * stream_k::kPartialCost)), 1e-12);
  EXPECT_EQ(dmma::tma_pick(256, 256, 65536, t, both, 0, &why), 0) << why;
  // K = 16384: the 128 x 32 kernel, 16 tiles split 8 ways summed scattered, at the 128 x 64 tiles' speed where K is
  // split and its 128-long side has no partial tile (64 + 1.5 reads: 0.887), above the 128 x 64 kernel's 8 tiles
  // split 16 ways (32 + 1.5 reads: 0.817) and dmma's split-K. Measured 96.3-98.6% of cuBLAS against 92.7-93.1%
  // (docs/gemm-notes.md, step 53).
  const int cols32 = tma_tile_where([](const dmma::TmaTile& x) { return x.bn == dmma::kTmaThinSide; });
  const int rows32 = tma_tile_where([](const dmma::TmaTile& x) { return x.bm == dmma::kTmaThinSide; });
  ASSERT_LT(cols32, dmma::kTmaTileCount);
  ASSERT_LT(rows32, dmma::kTmaTileCount);
  EXPECT_NEAR(dmma::tma_score(256, 256, 16384, t, true, true, cols32),
              dmma::kTmaThinSplitSpeed * 16 * 512 / (132 * (64 + stream_k::kScatterReads * stream_k::kPartialCost)), 1e-12);
  EXPECT_GT(dmma::tma_score(256, 256, 16384, t, true, true, 1), dmma::split_score(256, 256, dmma::choose(256, 256, 16384, t), t, true));
  bool wide_tiles[dmma::kTmaTileCount];
  for (int i = 0; i < dmma::kTmaTileCount; ++i)
    wide_tiles[i] = dmma::kTmaTiles[i].bm != dmma::kTmaThinSide && dmma::kTmaTiles[i].bn != dmma::kTmaThinSide;
  EXPECT_EQ(dmma::tma_pick(256, 256, 16384, t, wide_tiles, 0, &why), 1) << why;
  EXPECT_EQ(dmma::tma_pick(256, 256, 16384, t, both, 0, &why), cols32) << why;
  // Full speed only where the tile's 128-long side divides C's: at 200 x 1024 x 8192 the 128 x 32 tile pads 200 rows
  // to 256 and keeps its 0.85 (measured 76.5% of cuBLAS against the 128 x 64 kernel's 99.0%); the 32 x 128 tile
  // (1024 columns) would be at full speed, but reads B (64 MiB) once per row of tiles (tma_reads_once).
  EXPECT_TRUE(dmma::tma_thin_full_speed(256, 256, cols32));
  EXPECT_TRUE(dmma::tma_thin_full_speed(256, 256, rows32));
  EXPECT_FALSE(dmma::tma_thin_full_speed(200, 1024, cols32));
  EXPECT_TRUE(dmma::tma_thin_full_speed(200, 1024, rows32));
  EXPECT_FALSE(dmma::tma_thin_full_speed(1024, 200, rows32));
  EXPECT_FALSE(dmma::tma_thin_full_speed(256, 256, 0));  // not a 32-wide tile
  EXPECT_NEAR(dmma::tma_score(200, 1024, 8192, t, true, true, cols32),
              dmma::kTmaTiles[cols32].speed * (200.0 * 1024 / (128 * 32)) * 256 / (132 * 128.0 + 132 * stream_k::kPartialCost), 1e-12);
  EXPECT_EQ(dmma::tma_pick(200, 1024, 8192, t, both, 0, &why), 1) << why;
  // The 32-wide tiles read one of A and B (32 MiB each) once per tile row or column; both fit in the L2, so the
  // rereads stay there.
  EXPECT_TRUE(dmma::tma_reads_once(256, 256, 16384, t, cols32));
  // C of 9 to 32 columns or rows: the 32-wide tiles, one tile across C's narrow side (64 tiles split 2 ways, where the
  // 64-wide ones did twice the tensor-core work on padding: 98.8% of cuBLAS against 92.8% at 8192 x 32 x 8192).
  EXPECT_EQ(dmma::tma_pick(8192, 32, 8192, t, both, 0, &why), cols32) << why;
  EXPECT_EQ(dmma::tma_pick(32, 8192, 8192, t, both, 0, &why), rows32) << why;
  EXPECT_EQ(dmma::tma_pick(16384, 16, 16384, t, both, 0, &why), cols32) << why;
  // 96 rows would be three tiles of 32 rows, each reading B (512 MiB, past the L2) on its own: not the 32-row tile
  // (67.8% of cuBLAS measured) but the 128 x 128 one (106.4%). Without an L2, only one tile across.
  EXPECT_FALSE(dmma::tma_reads_once(96, 8192, 8192, t, rows32));
  EXPECT_TRUE(dmma::tma_reads_once(96, 8192, 8192, t, cols32));  // A again per column of tiles, but A is 6 MiB
  EXPECT_NE(dmma::tma_pick(96, 8192, 8192, t, both, 0, &why), rows32) << why;
  EXPECT_FALSE(dmma::tma_reads_once(8192, 96, 8192, t, cols32));
  dmma::Target no_l2 = t;
  no_l2.l2_bytes = 0;
  EXPECT_FALSE(dmma::tma_reads_once(256, 256, 16384, no_l2, cols32));
  EXPECT_TRUE(dmma::tma_reads_once(8192, 32, 8192, no_l2, cols32));
  EXPECT_EQ(dmma::tma_pick(128, 128, 262144, t, both, 0, &why), 1) << why;  // 2 tiles, 64 ways: 128 + 3.5 reads
  // dmma's split-K score priced for its second kernel (kDmmaSplitKPrice): among the 64- and 128-wide tiles, at 128 x
  // 1024 x 16384 its 0.892 becomes 0.776, below the TMA kernels' 0.887 (measured: 103.9% of cuBLAS against 93.7%),
  // and likewise for the transpose and 512 x 256 x 16384; at 256 x 256 x 8192 dmma stays (97.9% against 75.4%). With
  // the 32-wide tiles (0.913 there, 0.817 at 256 x 256 x 8192: 96.8% against dmma's 95.7%) the TMA kernels win outright.
  for (const auto& [M, N, K] : {std::tuple{128, 1024, 16384}, {1024, 128, 16384}, {512, 256, 16384}}) {
    EXPECT_GE(dmma::tma_pick(M, N, K, t, wide_tiles, 0, &why), 0) << M << "x" << N << "x" << K << ": " << why;
    double tma = 0;
    for (int i = 0; i < dmma::kTmaTileCount; ++i)
      if (wide_tiles[i]) tma = std::max(tma, dmma::tma_score(M, N, K, t, true, true, i));
    EXPECT_GT(dmma::split_score(M, N, dmma::choose(M, N, K, t), t, true), tma)
        << "the price, not the fill, decides: " << M << "x" << N << "x" << K;
    EXPECT_GE(dmma::tma_pick(M, N, K, t, both, 0, &why), 0) << M << "x" << N << "x" << K << ": " << why;
  }
  EXPECT_NEAR(dmma::kDmmaSplitKPrice * dmma::split_score(128, 1024, dmma::choose(128, 1024, 16384, t), t, true), 0.776,
              0.001);
  EXPECT_EQ(dmma::tma_pick(256, 256, 8192, t, wide_tiles, 0, &why), -1) << why;
  EXPECT_EQ(dmma::tma_pick(256, 256, 8192, t, both, 0, &why), cols32) << why;
  // The combine cap gives way where the TMA kernel leads dmma's split-K by more than kCombineCapLead: at 128 x 128 x
  // 16384 the 128 x 32 tile's 4 tiles split 32 ways (16 k-tiles + 1.5 reads: a combine of 27%) score 0.705 against
  // dmma's 2 x 2 tiles of 64 x 64 split 16 ways, 64 blocks of 396 slots (0.87 x 0.92 x 64 / 396 = 0.129); measured
  // 76-83% of cuBLAS against 54% (step 53). At 256 x 256 x 4096 (above) the lead is 1.36 and dmma stays.
  EXPECT_NEAR(dmma::kDmmaSplitKPrice * dmma::split_score(128, 128, dmma::choose(128, 128, 16384, t), t, true),
              0.87 * 0.92 * 64 / 396, 1e-12);
  EXPECT_NEAR(dmma::tma_score(128, 128, 16384, t, true, true, cols32),
              4.0 * 512 / (132 * (16 + stream_k::kScatterReads * stream_k::kPartialCost)), 1e-12);
  EXPECT_EQ(dmma::tma_pick(128, 128, 16384, t, both, 0, &why), cols32) << why;
  // Where the TMA plan sums scattered, the rule prices that combine, not the tree's chain: at 300 x 200 x 9000 (10
  // tiles of 64 x 128 split 13 ways) the TMA kernel now beats dmma's split-K (87-88% of cuBLAS against 72-79%), as at
  // 128 x 300 x 9000 (95-96% against 64%) and 64 x 300 x 65536 (81% against 47%; step 52).
  for (const auto& [M, N, K] : {std::tuple{300, 200, 9000}, {128, 300, 9000}, {64, 300, 65536}, {200, 300, 20000}})
    EXPECT_GE(dmma::tma_pick(M, N, K, t, both, 0, &why), 0) << M << "x" << N << "x" << K << ": " << why;
  // C of 64 rows: the 64 x 128 kernel's 128 whole tiles, one per SM, against 128-row tiles half padding.
  const int rows64 = tma_tile_where([](const dmma::TmaTile& x) { return x.bm == 64; });
  ASSERT_LT(rows64, dmma::kTmaTileCount);
  EXPECT_NEAR(dmma::tma_score(64, 16384, 16384, t, true, true, rows64), dmma::kTmaTiles[rows64].speed * 128 / 132.0, 1e-12);
  EXPECT_EQ(dmma::tma_pick(64, 16384, 16384, t, both, 0, &why), rows64) << why;
  // ... and its transpose, 64 columns, on the 128 x 64 kernel.
  EXPECT_EQ(dmma::tma_pick(16384, 64, 16384, t, both, 0, &why), 1) << why;
  // Operands the TMA cannot describe (odd lda or ldb): the TMA tile after copying them where the copy, priced by
  // tma_copy_factor, leaves it ahead of dmma's 8-byte loads, and the note says what the copies cost.
  // 8192^3, A and B copied: 2 x 8192^2 elements, 16 bytes each at kTmaFlopsPerCopiedByte, against 2 x 8192^3 flops
  // at the tile's score: 1 / (1 + 16 x 22 x score / 8192).
  const double s8192 = dmma::tma_score(8192, 8192, 8192, t, true, true, 0);
  EXPECT_NEAR(dmma::tma_copy_factor(8192, 8192, 8192, s8192, 2LL * 8192 * 8192),
              1 / (1 + 16 * dmma::kTmaFlopsPerCopiedByte * s8192 / 8192), 1e-12);
  EXPECT_EQ(dmma::tma_copy_factor(8192, 8192, 8192, s8192, 0), 1.0);
  EXPECT_EQ(dmma::tma_pick(8192, 8192, 8192, t, both, 2LL * 8192 * 8192, &why), 0) << why;
  EXPECT_NE(why.find("after copying"), std::string::npos) << why;
  // 777 x 1234 x 5555 (both odd; measured: dmma 0.363 ms, the TMA tile on even ones 0.211 ms) copies both.
  EXPECT_GE(dmma::tma_pick(777, 1234, 5555, t, both, 777LL * 5555 + 5555LL * 1234, &why), 0) << why;
  // C of 128 columns: copying an 8192 x 8192 A costs more than the TMA tile gains (16 x 22 x score / 128 of the
  // product's time): dmma with 8-byte loads, and the note says why.
  EXPECT_EQ(dmma::tma_pick(8192, 128, 8192, t, both, 8192LL * 8192, &why), -1) << why;
  EXPECT_NE(why.find("16-byte"), std::string::npos) << why;
  // No sm_90a code: dmma, whatever the size, and the note says why.
  EXPECT_EQ(dmma::tma_pick(8192, 8192, 8192, t, none, 0, &why), -1);
  EXPECT_NE(why.find("sm_90a"), std::string::npos) << why;
  // 4096^3: 1024 tiles of 128 k-tiles; 6 waves whole (792 tiles), the last wave and the remainder (232 tiles)
  // shared, at most 225 k-tiles a block: 768 + 225 + one partial, against 8 waves (1024) without stream-K.
  EXPECT_NEAR(dmma::tma_score(4096, 4096, 4096, t, true, true),
              dmma::kTmaTiles[0].speed * 1024 * 128 / (132.0 * (993 + stream_k::kPartialCost)), 1e-12);
  // 4224^2 (33 x 33 = 1089 tiles, 8.25 waves) shallow: K = 96 is 3 k-tiles, too few to share; the wave fill.
  EXPECT_NEAR(dmma::tma_score(4224, 4224, 96, t, true, true), dmma::kTmaTiles[0].speed * 1089.0 / (9 * 132), 1e-12);
  EXPECT_EQ(dmma::tma_score(4096, 4096, 4096, t, true, false), 0.0);
  EXPECT_EQ(dmma::tma_score(4096, 4096, 4096, t, true, false, 1), 0.0);
  // K of at most kTmaShallowDepth: the 128 x 128 x 16 kernel (shallow speed 1.10, measured ahead of the k32 tiles
  // where writing C is most of the time); deeper, the k32 tiles as before.
  const int k16 = tma_tile_where([](const dmma::TmaTile& x) { return x.bm == 128 && x.bn == 128 && x.bk == 16; });
  ASSERT_LT(k16, dmma::kTmaTileCount);
  for (const auto& [M, N, K] : {std::tuple{4096, 4096, 32}, {4096, 4096, 64}, {8192, 8192, 128}, {5000, 3000, 200},
                                {8192, 8192, dmma::kTmaShallowDepth}})
    EXPECT_EQ(dmma::tma_pick(M, N, K, t, both, 0, &why), k16) << M << "x" << N << "x" << K << ": " << why;
  EXPECT_EQ(dmma::tma_pick(8192, 8192, dmma::kTmaShallowDepth + 32, t, both, 0, &why), 0) << why;
  EXPECT_EQ(dmma::tma_score(8192, 8192, 8192, t, true, true, k16), 0.0);
  // A kernel without a speed is never the rule's: it scores 0 wherever it could run.
  for (int i = 0; i < dmma::kTmaTileCount; ++i)
    if (dmma::kTmaTiles[i].speed == 0) {
      EXPECT_EQ(dmma::tma_score(8192, 8192, 8192, t, true, true, i), 0.0) << i;
    }
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
  std::printf("target: %d SMs, compute_%d, %.1f bytes of memory a SM and clock; resident blocks per SM:", t.sm_count,
              t.code_arch, t.dram_bytes_per_sm_cycle);
  for (int s = 0; s < dmma::kShapeCount; ++s) std::printf(" %s %d", dmma::shape_name(s).c_str(), t.blocks_per_sm[s]);
  std::printf("\n");
  EXPECT_GT(t.sm_count, 0);
  EXPECT_GT(t.dram_bytes_per_sm_cycle, 1.0);  // the skinny rule's boundaries depend on it
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

// The skinny kernel's canonical form (gemm/skinny.hpp) names every element of op(A), op(B) and C where GemmArgs
// does, in all four op combinations, for C of few rows (s = i) and of few columns (s = j), with padded leading
// dimensions; the form is dot exactly where the large operand is contiguous along k.
TEST(SkinnyForm, NamesEveryElementOfTheOperandsAndC) {
  static const double a_base[1] = {}, b_base[1] = {};
  static double c_base[1] = {};
  for (const auto& [M, N, K] : {std::tuple{3, 5, 4}, std::tuple{6, 2, 3}, std::tuple{1, 1, 7}})
    for (Op ta : {Op::N, Op::T})
      for (Op tb : {Op::N, Op::T}) {
        GemmArgs a{.M = M, .N = N, .K = K, .A = a_base, .B = b_base, .C = c_base, .transa = ta, .transb = tb};
        a.lda = (ta == Op::N ? M : K) + 3;
        a.ldb = (tb == Op::N ? K : N) + 2;
        a.ldc = M + 1;
        const skinny::Form f = skinny::canonical(a);
        const bool rows = M <= N;  // C of few rows: s is i
        const std::string where = std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K) + " " +
                                  ops_name(ta, tb);
        EXPECT_EQ(f.S, rows ? M : N) << where;
        EXPECT_EQ(f.L, rows ? N : M) << where;
        EXPECT_EQ(f.K, K) << where;
        EXPECT_EQ(f.dot(), rows ? tb == Op::N : ta == Op::T) << where;
        EXPECT_EQ(f.dot(), skinny::dot_form(M, N, ta, tb)) << where;
        EXPECT_TRUE(f.dot() ? f.y.cs == 1 : f.y.rs == 1) << where;
        for (int i = 0; i < M; ++i)
          for (int j = 0; j < N; ++j) {
            const int s = rows ? i : j, l = rows ? j : i;
            EXPECT_EQ(f.out.at(s, l), c_base + i + static_cast<std::ptrdiff_t>(j) * a.ldc) << where;
            for (int k = 0; k < K; ++k) {
              EXPECT_EQ(rows ? f.x.at(s, k) : f.y.at(l, k), a_base + a.a_index(i, k)) << where;
              EXPECT_EQ(rows ? f.y.at(l, k) : f.x.at(s, k), b_base + a.b_index(k, j)) << where;
            }
          }
      }
}

// dmma_tma's rule sends C of at most 8 rows or columns to the skinny kernel where K is at least 1024 and the other
// side gives every SM enough of it: 64 for 1 or 2 rows or columns; for 3 to 8, where the memory delivers at least
// kSkinnyTcBytesPerSmCycle per SM and clock (an H200), kSkinnyTcAxpyLongPerSm in the axpy form and
// kSkinnyTcDotLongPerSm in the dot form, TN included; elsewhere (an H100, an unknown memory) 64 for 3 and 4, and for
// 5 to 8 256 in the dot form and 96 in the axpy form. Everything else keeps the tensor-core rule.
TEST(SkinnyRule, ThinCWithALongSideAndDeepK) {
  dmma::Target h100, h200, unknown;
  h100.sm_count = h200.sm_count = unknown.sm_count = 132;
  h100.dram_bytes_per_sm_cycle = 2.0 * 2619e3 * 640 / (1980e3 * 132);  // 3.35 TB/s, 132 SMs at 1980 MHz
  h200.dram_bytes_per_sm_cycle = 2.0 * 3201e3 * 752 / (1980e3 * 132);  // 4.81 TB/s (a bus of 6016 bits)
  EXPECT_NEAR(h100.dram_bytes_per_sm_cycle, 12.8, 0.1);
  EXPECT_NEAR(h200.dram_bytes_per_sm_cycle, 18.4, 0.1);
  const auto pick = [](int M, int N, int K, Op ta, Op tb, const dmma::Target& t) {
    return dmma::skinny_pick(M, N, K, ta, tb, t);
  };
  constexpr Op n = Op::N, t = Op::T;
  for (const dmma::Target* g : {&h100, &h200, &unknown}) {
    EXPECT_TRUE(pick(16384, 1, 16384, n, n, *g));
    EXPECT_TRUE(pick(1, 8448, 1024, n, n, *g));
    EXPECT_TRUE(pick(65536, 2, 32769, n, t, *g));
    EXPECT_TRUE(pick(2, 8448, 4096, t, n, *g));     // TN at 1 or 2: the FMA forms
    EXPECT_FALSE(pick(2, 8447, 16384, n, n, *g));   // under 64 a SM of the long side
    EXPECT_FALSE(pick(9, 16384, 16384, n, n, *g));  // a side of 9: the tensor-core tiles
    EXPECT_FALSE(pick(16384, 16, 16384, n, n, *g));
    EXPECT_FALSE(pick(16384, 4, 1023, n, n, *g));   // K under 1024
    EXPECT_FALSE(pick(8, 8, 1 << 20, n, n, *g));    // small C over deep K: split-K's
  }
  dmma::Target two = h100;
  two.sm_count = 2;
  EXPECT_TRUE(pick(2, 2 * 64, 4096, n, n, two));  // the long side scales with the SMs
  // Fast memory, 3 to 8 rows or columns: the tensor-core forms' boundaries.
  const int axpy = dmma::kSkinnyTcAxpyLongPerSm * 132, dot = dmma::kSkinnyTcDotLongPerSm * 132;
  for (int S : {3, 4, 5, 8}) {
    // The axpy form: NT and TT for few rows, NN and NT for few columns.
    for (const auto& [ta, tb] : {std::pair{n, t}, {t, t}}) {
      EXPECT_TRUE(pick(S, axpy, 1024, ta, tb, h200)) << S;
      EXPECT_FALSE(pick(S, axpy - 1, 4096, ta, tb, h200)) << S;
      EXPECT_FALSE(pick(S, axpy, 1023, ta, tb, h200)) << S;
    }
    for (const auto& [ta, tb] : {std::pair{n, n}, {n, t}}) {
      EXPECT_TRUE(pick(axpy, S, 4096, ta, tb, h200)) << S;
      EXPECT_FALSE(pick(axpy - 1, S, 4096, ta, tb, h200)) << S;
    }
    // The dot form: NN and TN for few rows, TN and TT for few columns.
    for (const auto& [ta, tb] : {std::pair{n, n}, {t, n}}) {
      EXPECT_TRUE(pick(S, dot, 2048, ta, tb, h200)) << S;
      EXPECT_FALSE(pick(S, dot - 1, 2048, ta, tb, h200)) << S;
      EXPECT_FALSE(pick(S, dot, 1023, ta, tb, h200)) << S;
    }
    for (const auto& [ta, tb] : {std::pair{t, n}, {t, t}}) {
      EXPECT_TRUE(pick(dot, S, 2048, ta, tb, h200)) << S;
      EXPECT_FALSE(pick(dot - 1, S, 2048, ta, tb, h200)) << S;
    }
    EXPECT_TRUE(pick(S, 1 << 20, 16384, t, n, h200)) << S;
    EXPECT_TRUE(pick(1 << 20, S, 16384, t, n, h200)) << S;
  }
  EXPECT_TRUE(pick(8, 16384, 16384, n, n, h200));
  EXPECT_TRUE(pick(16384, 8, 16384, n, n, h200));
  EXPECT_LT(dmma::kSkinnyTcDotLongPerSm, dmma::kSkinnyTcAxpyLongPerSm);
  // Elsewhere: 3 and 4 from 64 a SM in either form; 5 to 8 from 256 in the dot form and 96 in the axpy form.
  for (const dmma::Target* g : {&h100, &unknown}) {
    EXPECT_TRUE(pick(65536, 4, 32769, n, t, *g));
    EXPECT_TRUE(pick(4, 8448, 4096, n, n, *g));
    EXPECT_TRUE(pick(3, 8448, 4096, t, n, *g));
    EXPECT_FALSE(pick(4, 8447, 4096, n, n, *g));
    EXPECT_FALSE(pick(8, 16384, 16384, n, n, *g));   // the dot form under 256 a SM
    EXPECT_FALSE(pick(16384, 8, 16384, t, t, *g));
    EXPECT_FALSE(pick(5, 33791, 4096, t, n, *g));
    EXPECT_TRUE(pick(5, 33792, 4096, t, n, *g));
    EXPECT_TRUE(pick(33792, 8, 4096, t, n, *g));
    EXPECT_TRUE(pick(16384, 8, 16384, n, n, *g));    // the axpy form from 96 a SM
    EXPECT_TRUE(pick(8, 16384, 16384, t, t, *g));
    EXPECT_TRUE(pick(7, 12672, 2048, n, t, *g));
    EXPECT_FALSE(pick(7, 12671, 2048, n, t, *g));
    EXPECT_FALSE(pick(8448, 6, 4096, n, n, *g));
  }
}

// The tensor-core forms take a pass of 3 to 8 rows or columns in either form, not the split dot form's 1 and 2; their
// K split: none where the groups of C fill half a wave, else a whole number of parts a group within two waves, each
// warp four chunks at least.
TEST(SkinnyForm, TensorCoreFormsAndTheirKSplit) {
  alignas(16) static const double base[2] = {};
  static double c[1] = {};
  const auto form = [&](int M, int N, Op ta, Op tb) {
    GemmProblem layout;
    layout.shape = GemmShape{M, N, 4096, 0, 0, 0, ta, tb}.resolved();
    return skinny::canonical(layout.args(base, base, c));
  };
  for (Op ta : {Op::N, Op::T})
    for (Op tb : {Op::N, Op::T}) {
      for (int S = 3; S <= 8; ++S) {
        EXPECT_TRUE(skinny::tc_form(form(S, 5000, ta, tb))) << S << ops_name(ta, tb);
        EXPECT_TRUE(skinny::tc_form(form(5000, S, ta, tb))) << S << ops_name(ta, tb);
      }
      EXPECT_FALSE(skinny::tc_form(form(9, 5000, ta, tb))) << ops_name(ta, tb);
      EXPECT_FALSE(skinny::tc_form(form(5000, 16, ta, tb))) << ops_name(ta, tb);
      EXPECT_FALSE(skinny::tc_form(form(1, 5000, ta, tb))) << ops_name(ta, tb);
      EXPECT_FALSE(skinny::tc_form(form(2, 5000, ta, tb))) << ops_name(ta, tb);
    }
  EXPECT_EQ(skinny::tc_parts(256, 4096, 264, 8), 1);    // 8 x 4096 x 131072, dot form: the groups fill a wave
  EXPECT_EQ(skinny::tc_parts(132, 4096, 264, 8), 4);    // half a wave: two waves of 4 parts a group (528)
  EXPECT_EQ(skinny::tc_parts(64, 1024, 264, 8), 8);     // 8 x 1024 x 32768
  EXPECT_EQ(skinny::tc_parts(64, 64, 264, 8), 2);       // K = 2048: four chunks of 32 k a warp, eight warps
  EXPECT_EQ(skinny::tc_parts(64, 16, 264, 8), 1);       // too shallow to split
  EXPECT_EQ(skinny::tc_parts(128, 512, 528, 4), 8);     // axpy form, L = 4096, K = 8192
  EXPECT_EQ(skinny::tc_parts(512, 1024, 528, 4), 1);
  EXPECT_EQ(skinny::tc_parts(0, 1024, 528, 4), 1);
  for (int groups = 1; groups < 600; groups += 7)
    for (int resident : {132, 264, 528}) {
      const int parts = skinny::tc_parts(groups, 1 << 12, resident, 4);
      EXPECT_GE(parts, 1);
      if (parts > 1) {
        EXPECT_LE(groups * parts, 2 * resident) << groups << " " << resident;  // within two waves
      }
    }
}

// The tensor-core dot form by bulk copies (skinny::bulk_form): 3 to 8 rows or columns in the dot form (NN and TN for
// few rows, TN and TT for few columns) with the large operand's columns on 16-byte boundaries; not the axpy form, an
// odd stride of the large operand, its address 8 bytes off, or 1, 2 and 9 rows.
TEST(SkinnyForm, BulkDotFormWhereYsColumnsAreAligned) {
  alignas(16) static const double base[4] = {};
  static double c[1] = {};
  const auto form = [&](int M, int N, Op ta, Op tb, int lda = 0, int ldb = 0, int offset = 0) {
    GemmProblem layout;
    layout.shape = GemmShape{M, N, 4096, lda, ldb, 0, ta, tb}.resolved();
    return skinny::canonical(layout.args(base + offset, base + offset, c));
  };
  constexpr Op n = Op::N, t = Op::T;
  for (int S = 3; S <= 8; ++S) {
    EXPECT_TRUE(skinny::bulk_form(form(S, 5000, n, n))) << S;
    EXPECT_TRUE(skinny::bulk_form(form(S, 5000, t, n))) << S;
    EXPECT_TRUE(skinny::bulk_form(form(5000, S, t, n))) << S;
    EXPECT_TRUE(skinny::bulk_form(form(5000, S, t, t))) << S;
    EXPECT_FALSE(skinny::bulk_form(form(S, 5000, n, t))) << S;  // the axpy form
    EXPECT_FALSE(skinny::bulk_form(form(5000, S, n, n))) << S;
    EXPECT_FALSE(skinny::bulk_form(form(S, 5000, n, n, 0, 4097))) << S;     // ldb odd
    EXPECT_FALSE(skinny::bulk_form(form(5000, S, t, n, 4097, 0))) << S;     // lda odd
    EXPECT_FALSE(skinny::bulk_form(form(S, 5000, n, n, 0, 0, 1))) << S;    // 8 bytes off
  }
  for (int S : {1, 2, 9})
    EXPECT_FALSE(skinny::bulk_form(form(S, 5000, n, n, 0, 0))) << S;
}

// C of 1 or 2 rows or columns in the split dot form (skinny::split_form) goes to the skinny kernel from
// kSkinnySplitLongPerSm of the long side a SM, K at least 1024; the same shapes with the large operand's leading
// dimension odd, its address not 16-byte aligned, the small operand strided along k, 3 rows, or the axpy form keep
// skinny_pick's boundary.
TEST(SkinnyRule, SplitDotFormFromAShorterLongSide) {
  alignas(16) static const double base[4] = {};
  static double c[1] = {};
  const int per_sm = dmma::kSkinnySplitLongPerSm, sms = 132, L = per_sm * sms;
  // C (M x N) = op(A) op(B); ld 0: tight (the stored rows).
  const auto pick = [&](int M, int N, int K, Op ta, Op tb, int lda = 0, int ldb = 0, int b_offset = 0) {
    GemmProblem layout;
    layout.shape = GemmShape{M, N, K, lda, ldb, 0, ta, tb}.resolved();
    return dmma::skinny_split_pick(layout.args(base, base + b_offset, c), sms);
  };
  constexpr Op n = Op::N, t = Op::T;
  ASSERT_LT(L, dmma::kSkinnyLongPerSm * sms);  // shorter than skinny_pick's
  EXPECT_TRUE(pick(1, L, 4096, n, n));
  EXPECT_TRUE(pick(1, L, 4096, t, n));
  EXPECT_TRUE(pick(2, L, 1024, n, n));          // X's two rows interleaved (lda 2)
  EXPECT_TRUE(pick(L, 1, 2050, t, n));          // C of one column: Y = op(A) = A^T
  EXPECT_TRUE(pick(L, 2, 2050, t, n));
  EXPECT_FALSE(pick(1, L - 1, 4096, n, n));     // under the boundary
  EXPECT_FALSE(pick(1, L, 1023, n, n));         // K under 1024
  EXPECT_FALSE(pick(1, L, 4095, n, n));         // ldb odd: Y's columns not 16-byte aligned
  EXPECT_FALSE(pick(1, L, 4096, n, n, 0, 0, 1));  // B's address not 16-byte aligned
  EXPECT_FALSE(pick(1, L, 4096, n, n, 3));      // X(0, k) three elements apart
  EXPECT_FALSE(pick(2, L, 4096, n, n, 3));      // X's rows 3 apart along k
  EXPECT_FALSE(pick(3, L, 4096, n, n));         // 3 rows: the dot form
  EXPECT_FALSE(pick(1, L, 4096, n, t));         // the axpy form
  EXPECT_FALSE(pick(L, 1, 4096, n, n));
}

}  // namespace
}  // namespace ks::gemm
