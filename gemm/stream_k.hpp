// The work schedule of the persistent TMA kernel (gemm/08_dmma_tma.cu): data-parallel tiles, then stream-K.
// Host and device code, so that the host tests walk exactly the units the kernel walks.
//
// Why. One block per SM walks whole 128 x 128 tiles; when the tile count is not a multiple of the blocks, the
// last wave leaves SMs idle: 3% at 2048^3, 4096^3 and 8192^3 (256, 1024, 4096 tiles on 132 SMs), 13% at
// 3000^3 (576 tiles: 4 waves and 48 tiles), 52% at 1024^3 (64 tiles). Stream-K ("Stream-K: Work-centric
// Parallel Decomposition for Dense Matrix-Matrix Multiplication on the GPU", Osama et al., 2023) gives every
// block an equal share of the k-iterations of the tiles instead; the blocks that share a tile sum their
// partial accumulators. As in its "data-parallel + two-tile stream-K" hybrid, only the last full wave and the
// remainder are shared (each block's share is then at least one tile deep, so a tile has at most two
// pieces); the waves before run whole tiles. Either only where the predicted time, each partial priced at
// kPartialCost k-tiles, beats whole tiles (plan() below).
//
// Split-K. Where C has fewer tiles than blocks (a small C over a deep K: 256 x 256 x 65536 is 8 tiles of
// 128 x 64), each tile's K is split into S equal shares, one block each (S up to kMaxSplits outside clusters, up to
// the resident blocks in clusters): tile t's shares are blocks t S .. t S + S - 1, so a block touches one tile.
// Summing S partials in the last block would cost it S - 1 reads of a whole tile from L2 one after another
// (15 x 64 KiB at 16 ways, about 9 us of one SM's L2 bandwidth against a 150 us product); instead the shares
// combine in a Fenwick tree over i = 1 .. S (the share's index + 1): share i adds the partials of shares i - 1,
// i - 2, i - 4, ... i - lowbit(i) / 2, each already the sum of its own range, so that it holds shares
// (i - lowbit(i), i]; the last share (the tile's owner) then adds the roots S - lowbit(S), ... of the prefix
// before its range and stores C. The longest chain of reads is about 2 log2(S), every read is of a lower
// ticket, and the order is fixed (deterministic). From kScatterMinSplits ways, where the shares are resident at once
// (a cooperative launch), each share sums its own S-th of the tile over all S partials instead (Plan::scatters()), which
// the plans price as it costs (scatter_combine_k_tiles).
//
// The walk of block v (its ticket: blocks take tickets in the order they start, so a block only ever waits
// for blocks that started before it and are resident or done):
//   1. the data-parallel tiles v, v + grid, ... below dp_tiles, whole;
//   2. its share [begin(v), begin(v + 1)) of the stream-K iterations (tile-major, k minor, over the tiles from
//      dp_tiles on), as one piece per tile it touches, from its last tile back to its first. The piece that
//      ends at a tile's last k-tile is the tile's owner; a piece that ends before is a partial: its block writes
//      the accumulators (with split-K, after adding its sources') to its slot of scratch and raises a flag.
//      Only a block's last tile can hold such a piece, and it is walked first, so partials are written early;
//      the owner waits for each source's flag, adds the partials in a fixed order, and stores C.
#pragma once

#ifdef __CUDACC__
#define KS_SK_HD __host__ __device__
#else
#define KS_SK_HD
#endif

#include <algorithm>

namespace ks::gemm::stream_k {

// A piece of work: k-tiles [kb, ke) of tile `tile` (its place in the grouped tile order).
enum class Piece : int { Whole, Partial, Owner };
struct Unit {
  long long tile;
  int kb, ke;
  Piece piece;
  long long sk_tile;  // stream-K tiles: the tile's index among them (for the owner's wait), else -1
};

// Fewest k-tiles in one block's share: below it the partial's write and read cost more than the idle SMs.
inline constexpr int kMinShare = 4;
// Most shares of one tile's K outside clusters (the tree, and summed scattered from kScatterMinSplits ways); split-K in
// clusters may split further. Uncapped, one tile split 131 ways summed scattered lost 9.5 points of cuBLAS to 120
// ways in clusters (H100, docs/gemm-notes.md, step 52).
inline constexpr int kMaxSplits = 64;
// Split-K in clusters: where a tile's K is split a multiple of kClusterSize ways and the device can launch
// clusters of that many blocks, each cluster's blocks (consecutive shares of one tile) sum their partials through
// distributed shared memory, each block a kClusterSize-th of the tile, and where a tile has several clusters, the
// last one's blocks add the others' slices from global memory (no tree: one read of a kClusterSize-th of a partial
// per cluster). Measured and modelled in docs/gemm-notes.md, step 35.
inline constexpr int kClusterSize = 4;

// Split-K summed scattered (Plan::scatters()) from this many ways in the tree. Below it the tree's chain is one to three
// reads, and the scatter's wait for every share (and the partial the owner writes too) cost as much or more:
// measured on an H100 (docs/gemm-notes.md, step 51), 2, 4 and 5 ways lost 0.4-5 points of cuBLAS, 7 ways 0.2, and 8
// to 16 ways gained 0.3-6. Clusters keep their own combine (the scattered sum over a tile's clusters' slices gained
// nothing measurable there).
inline constexpr int kScatterMinSplits = 8;
// The scatter's combine in the plans' unit, one partial's read by the tree's owner (partial_cost): measured in a probe
// on an H100 (docs/gemm-notes.md, step 51) at 1.0 to 1.7 of the tree's reads over the combine-free floor (64 ways
// 3.6 us against the tree's 6 reads' 20.5 us, 16 ways 3.1 against 4 reads' 8.4, 8 ways 2.6 against 3 reads' 4.5):
// kScatterReads. Beyond kScatterFlatSplits ways a sixteenth of a read more for each further way: every share polls
// and lowers every share's flag (S^2 flag operations a tile), and 2 tiles split 64 ways scattered lost 1.5-6 points
// of cuBLAS to split-K in clusters (step 52).
inline constexpr double kScatterReads = 1.5;
inline constexpr int kScatterFlatSplits = 32;

// Fenwick-tree helpers for split-K: the lowest set bit of i (i >= 1).
KS_SK_HD inline int lowbit(int i) { return i & -i; }

struct Plan {
  long long tiles = 0;     // all tiles of C
  long long dp_tiles = 0;  // tiles [0, dp_tiles): whole, block v takes v, v + grid, ...
  int k_tiles = 0;         // k-tiles per tile
  int grid = 0;            // blocks launched
  int sk_blocks = 0;       // blocks [0, sk_blocks) share the k-tiles of tiles [dp_tiles, tiles); 0: none
  int cluster = 0;         // split-K in clusters of this many blocks (kClusterSize); 0: the Fenwick tree

  KS_SK_HD long long sk_iters() const { return (tiles - dp_tiles) * k_tiles; }
  // The deepest block's share of the stream-K k-tiles (shares differ by at most one).
  KS_SK_HD long long longest_share() const { return sk_blocks > 0 ? (sk_iters() + sk_blocks - 1) / sk_blocks : 0; }
  // Where C has fewer tiles than blocks, the ways each tile's K is split; 0 for whole tiles and shared waves.
  KS_SK_HD int splits() const { return sk_blocks > 0 && dp_tiles == 0 && tiles < grid ? static_cast<int>(sk_blocks / tiles) : 0; }
  // Whether split-K here sums scattered: every share sums its own piece of the tile (scatter_piece) over all the
  // shares' partials at once, in the Fenwick tree's place; kScatterMinSplits ways or more, no clusters. Needs the
  // grid resident at once (a cooperative launch).
  KS_SK_HD bool scatters() const { return cluster == 0 && splits() >= kScatterMinSplits; }
  // The first stream-K iteration of block v (v in [0, sk_blocks]); shares differ by at most one. With split-K,
  // aligned to the tiles: block v takes share v % S of tile v / S.
  KS_SK_HD long long begin(int v) const {
    const int s = splits();
    if (s > 0) return static_cast<long long>(v / s) * k_tiles + static_cast<long long>(k_tiles) * (v % s) / s;
    return sk_iters() * v / sk_blocks;
  }

  // What block v needs to walk its units without a division (the kernel computes it once per block, before
  // the warps part, and keeps it in shared memory).
  struct Share {
    long long dp;          // whole tiles of the data-parallel waves
    long long lo, hi;      // stream-K k-tiles [lo, hi)
    long long last_tile;   // the stream-K tile holding k-tile hi - 1 (the first one walked)
    long long units;       // dp + stream-K tiles touched
    int split;             // split-K: the share's index i in 1 .. S (the Fenwick tree's); 0 without split-K
    int splits;            // split-K: S; 0 without
    bool scatter;          // split-K summed scattered (scatters())
  };
  KS_SK_HD Share share(int v) const {
    Share s{};
    s.dp = v < dp_tiles ? (dp_tiles - 1 - v) / grid + 1 : 0;
    s.units = s.dp;
    if (v < sk_blocks) {
      s.lo = begin(v);
      s.hi = begin(v + 1);
      if (s.lo < s.hi) {
        s.last_tile = (s.hi - 1) / k_tiles;
        s.units += s.last_tile - s.lo / k_tiles + 1;
      }
      s.splits = splits();
      s.split = s.splits > 0 ? v % s.splits + 1 : 0;
      s.scatter = scatters();
    }
    return s;
  }
  // Unit u (0 .. s.units - 1) of block v, in the order the block walks them.
  KS_SK_HD Unit unit(int v, const Share& s, long long u) const {
    if (u < s.dp) return {v + u * grid, 0, k_tiles, Piece::Whole, -1};
    const long long t = s.last_tile - (u - s.dp);  // from the last tile of the share back to the first
    const long long first = t * k_tiles;
    const int kb = static_cast<int>((s.lo > first ? s.lo : first) - first);
    const int ke = static_cast<int>((s.hi < first + k_tiles ? s.hi : first + k_tiles) - first);
    const Piece p = ke < k_tiles ? Piece::Partial : kb > 0 ? Piece::Owner : Piece::Whole;
    return {dp_tiles + t, kb, ke, p, t};
  }
  // The lower blocks whose partials block v adds to its piece of stream-K tile t before it writes its own partial
  // or (the owner) stores C, in the order it adds them: f(o) for each block o. Shared waves: the block below, where
  // its share ends past the tile's first k-tile (at most one). Split-K: share i's Fenwick children i - 1, i - 2,
  // i - 4, ... (below lowbit(i)), then, for the owner (i = S), the roots of the prefix before its range.
  template <class F>
  KS_SK_HD void for_each_source(int v, const Share& s, long long t, F&& f) const {
    if (s.split == 0) {
      if (s.lo > t * k_tiles) f(v - 1);
      return;
    }
    const int i = s.split, low = lowbit(i);
    for (int d = 1; d < low; d <<= 1) f(v - d);
    if (i == s.splits)
      for (int j = i - low; j > 0; j -= lowbit(j)) f(v - (i - j));
  }
};

// Split-K summed scattered: the elements [lo, hi) of a partial's `elems` that share `piece` (its index, 0 .. S - 1) of
// `members` (S) sums over the S partials (the pieces differ by at most one element).
KS_SK_HD inline void scatter_piece(int elems, int members, int piece, int& lo, int& hi) {
  lo = static_cast<int>(static_cast<long long>(elems) * piece / members);
  hi = static_cast<int>(static_cast<long long>(elems) * (piece + 1) / members);
}

// The time, in k-tiles, until split-K's owner has added every partial: every share `share` deep (they differ by
// at most one), each read of a partial `partial_cost`, a share adding a source when both are done. With equal
// shares, share i (not the owner) is done after log2(lowbit(i)) reads (its children i - d are done after
// log2(d)); the owner then waits for each prefix root in turn.
inline double split_combine_k_tiles(double share, int splits, double partial_cost) {
  auto log2_of = [](int x) {
    int l = 0;
    while (x > 1) x >>= 1, ++l;
    return l;
  };
  const int low = lowbit(splits);
  int reads = log2_of(low);
  for (int j = splits - low; j > 0; j -= lowbit(j)) reads = std::max(reads, log2_of(lowbit(j))) + 1;
  return share + partial_cost * reads;
}

// The same where split-K sums scattered (Plan::scatters): the share, then one round of reads (kScatterReads, and more
// beyond kScatterFlatSplits ways).
inline double scatter_combine_k_tiles(double share, int splits, double partial_cost) {
  const double beyond = splits > kScatterFlatSplits ? (splits - kScatterFlatSplits) / 16.0 : 0.0;
  return share + partial_cost * (kScatterReads + beyond);
}

// The same for split-K in clusters: the exchange inside each cluster, and where a tile has more than one cluster,
// the last cluster's read of the others' slices, each priced at kClusterStepShare of a partial's read.
inline constexpr double kClusterStepShare = 0.5;
inline double cluster_combine_k_tiles(double share, int splits, double partial_cost) {
  return share + partial_cost * kClusterStepShare * (splits > kClusterSize ? 2 : 1);
}

// What sharing a tile costs, in k-tiles 32 deep: the partial's 128 KiB written by one block and read by the
// owner, beside the shared work. Measured on an H100 (docs/gemm-notes.md): 128 x 128 x 32 tiles lost
// about 10 us, 4 to 5 k-tiles, to stream-K over whole tiles at 2048^3 and 3000^3 beyond what the shares saved.
inline constexpr double kPartialCost = 4.0;

// The longest block's time in k-tiles: its whole tiles and its share, plus `partial_cost` for each partial its
// owner reads (one in the shared waves, where each share is at least a tile deep; split-K: the Fenwick tree's
// longest chain, split_combine_k_tiles, or the scatter's round, scatter_combine_k_tiles).
inline double predicted_k_tiles(const Plan& p, double partial_cost) {
  if (p.grid == 0) return 0;
  const long long rounds = (p.dp_tiles + p.grid - 1) / p.grid;  // whole tiles of the busiest block
  double t = static_cast<double>(rounds) * p.k_tiles;
  if (p.sk_blocks > 0) {
    const long long share = p.longest_share();
    if (p.cluster > 0)
      t += cluster_combine_k_tiles(static_cast<double>(share), p.splits(), partial_cost);
    else if (p.scatters())
      t += scatter_combine_k_tiles(static_cast<double>(share), p.splits(), partial_cost);
    else
      t += p.splits() > 0 ? split_combine_k_tiles(static_cast<double>(share), p.splits(), partial_cost)
                          : static_cast<double>(share) + partial_cost;
  }
  return t;
}

// Whether split-K in clusters of `splits` ways keeps the grid within a sixteenth of the most blocks split-K outside
// clusters could run (min(slots, tiles x kMaxSplits)). The clusters' combine is priced below the others, but the
// clusters that fit (an H100: 30 of 4, 120 blocks) can shrink the grid, and the model prices neither well enough to
// weigh the two: measured on an H100 (docs/gemm-notes.md, step 35), 2 tiles split 60 ways in clusters (120 blocks)
// beat 64 ways in the tree (128 blocks) by 1-7 points of cuBLAS, while 4 tiles split 28 ways (112 blocks) and 8 split
// 12 ways (96) lost 1-8 points to the tree's 32 and 16 ways.
inline bool cluster_fills(long long tiles, long long splits, int slots) {
  const long long most = tiles * kMaxSplits < slots ? tiles * kMaxSplits : slots;
  return tiles * splits * 16 >= most * 15;
}

// The schedule for `tiles` tiles of `k_tiles` each on `slots` resident blocks: stream-K where its predicted
// time (partials at `partial_cost` k-tiles each) beats whole tiles; `enabled` false: whole tiles only
// (grid = min(tiles, slots)). Split-K a multiple of kClusterSize ways on at most `cluster_slots` blocks may
// combine in clusters instead of the Fenwick tree, where that is predicted faster.
inline Plan plan(long long tiles, int k_tiles, int slots, double partial_cost = kPartialCost, bool enabled = true,
                 int cluster_slots = 0) {
  Plan whole;
  whole.tiles = tiles;
  whole.k_tiles = k_tiles;
  whole.dp_tiles = tiles;
  whole.grid = static_cast<int>(tiles < slots ? tiles : slots);
  if (!enabled || tiles == 0 || slots <= 1 || tiles % slots == 0 || k_tiles < kMinShare) return whole;
  Plan best = whole;
  double best_time = predicted_k_tiles(whole, partial_cost);
  auto consider = [&](const Plan& p) {
    const double t = predicted_k_tiles(p, partial_cost);
    if (t < best_time) {
      best = p;
      best_time = t;
    }
  };
  if (tiles > slots) {  // the last full wave and the remainder, shared by every block
    Plan p = whole;
    p.dp_tiles = tiles - (tiles % slots + slots);
    p.sk_blocks = slots;
    consider(p);
    return best;
  }
  // Fewer tiles than blocks: split each tile's K evenly, as many ways as pays. Outside clusters at most kMaxSplits
  // ways (the tree's chain of reads grows with log2 S, the scatter's flag operations with S^2); clusters as far as
  // they stay resident (their combine is two steps at any S: one tile of 128 x 128 x 262144 split 120 ways rather
  // than 64).
  for (long long splits = 2; tiles * splits <= slots && splits * kMinShare <= k_tiles; ++splits) {
    Plan p = whole;
    p.dp_tiles = 0;
    p.sk_blocks = static_cast<int>(tiles * splits);
    p.grid = p.sk_blocks;
    if (splits <= kMaxSplits) consider(p);
    if (splits % kClusterSize == 0 && tiles * splits <= cluster_slots && cluster_fills(tiles, splits, slots)) {
      p.cluster = kClusterSize;
      consider(p);
    }
  }
  return best;
}

}  // namespace ks::gemm::stream_k

#undef KS_SK_HD
