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
// pieces); the waves before run whole tiles. Where C has fewer tiles than blocks, each tile's K is split
// into `splits` equal shares, a split-K inside the same kernel.
//
// The walk of block v (its ticket: blocks take tickets in the order they start, so a block only ever waits
// for blocks that started before it and are resident or done):
//   1. the data-parallel tiles v, v + grid, ... below dp_tiles, whole;
//   2. its share [begin(v), begin(v + 1)) of the stream-K iterations (tile-major, k minor, over the tiles from
//      dp_tiles on), as one piece per tile it touches, from its last tile back to its first. The piece that
//      ends at a tile's last k-tile is the tile's owner; a piece that ends before is a partial: its block writes
//      the accumulators to its slot of scratch and raises a flag. Only a block's last tile can hold such a
//      piece, and it is walked first, so partials are written early; the owner (the block with the next
//      higher ticket, or several) waits for each lower block's flag, adds that partial in ticket order
//      (deterministic), and stores C.
#pragma once

#ifdef __CUDACC__
#define KS_SK_HD __host__ __device__
#else
#define KS_SK_HD
#endif

namespace ks::gemm::stream_k {

// A piece of work: k-tiles [kb, ke) of tile `tile` (its place in the grouped tile order).
enum class Piece : int { Whole, Partial, Owner };
struct Unit {
  long long tile;
  int kb, ke;
  Piece piece;
  long long sk_tile;  // stream-K tiles: the tile's index among them (for the owner's wait), else -1
};

struct Plan {
  long long tiles = 0;     // all tiles of C
  long long dp_tiles = 0;  // tiles [0, dp_tiles): whole, block v takes v, v + grid, ...
  int k_tiles = 0;         // k-tiles per tile
  int grid = 0;            // blocks launched
  int sk_blocks = 0;       // blocks [0, sk_blocks) share the k-tiles of tiles [dp_tiles, tiles); 0: none

  KS_SK_HD long long sk_iters() const { return (tiles - dp_tiles) * k_tiles; }
  // The first stream-K iteration of block v (v in [0, sk_blocks]); shares differ by at most one.
  KS_SK_HD long long begin(int v) const { return sk_iters() * v / sk_blocks; }

  KS_SK_HD long long dp_count(int v) const { return v < dp_tiles ? (dp_tiles - 1 - v) / grid + 1 : 0; }
  KS_SK_HD long long unit_count(int v) const {
    long long n = dp_count(v);
    if (v < sk_blocks) {
      const long long lo = begin(v), hi = begin(v + 1);
      if (lo < hi) n += (hi - 1) / k_tiles - lo / k_tiles + 1;
    }
    return n;
  }
  // Unit u (0 .. unit_count(v) - 1) of block v, in the order the block walks them.
  KS_SK_HD Unit unit(int v, long long u) const {
    const long long dp = dp_count(v);
    if (u < dp) return {v + u * grid, 0, k_tiles, Piece::Whole, -1};
    const long long lo = begin(v), hi = begin(v + 1);
    const long long t = (hi - 1) / k_tiles - (u - dp);  // from the last tile of the share back to the first
    const long long first = t * k_tiles;
    const int kb = static_cast<int>((lo > first ? lo : first) - first);
    const int ke = static_cast<int>((hi < first + k_tiles ? hi : first + k_tiles) - first);
    const Piece p = ke < k_tiles ? Piece::Partial : kb > 0 ? Piece::Owner : Piece::Whole;
    return {dp_tiles + t, kb, ke, p, t};
  }
  // The owner of stream-K tile t (block v) adds the partials of blocks v - 1, v - 2, ... while this holds.
  KS_SK_HD bool shares_tile(int u, long long t) const { return u >= 0 && begin(u + 1) > t * k_tiles; }
};

// Fewest k-tiles in one block's share: below it the partial's write and read cost more than the idle SMs.
inline constexpr int kMinShare = 4;
// Most shares of one tile's K where C has fewer tiles than blocks (the owner reads splits - 1 partials).
inline constexpr int kMaxSplits = 4;

// The schedule for `tiles` tiles of `k_tiles` each on `slots` resident blocks; `enabled` false: whole tiles
// only (grid = min(tiles, slots)).
inline Plan plan(long long tiles, int k_tiles, int slots, bool enabled = true) {
  Plan p;
  p.tiles = tiles;
  p.k_tiles = k_tiles;
  p.dp_tiles = tiles;
  p.grid = static_cast<int>(tiles < slots ? tiles : slots);
  if (!enabled || tiles == 0 || slots <= 1 || tiles % slots == 0 || k_tiles < kMinShare) return p;
  if (tiles > slots) {  // the last full wave and the remainder, shared by every block
    p.dp_tiles = tiles - (tiles % slots + slots);
    p.sk_blocks = slots;
    return p;
  }
  long long splits = slots / tiles;  // fewer tiles than blocks: split each tile's K evenly
  if (splits > kMaxSplits) splits = kMaxSplits;
  if (splits > k_tiles / kMinShare) splits = k_tiles / kMinShare;
  if (splits < 2) return p;
  p.dp_tiles = 0;
  p.sk_blocks = static_cast<int>(tiles * splits);
  p.grid = p.sk_blocks;
  return p;
}

// The longest block's work in k-tiles (whole tiles count k_tiles each), for the rule's score.
inline long long longest_share(const Plan& p) {
  long long most = 0;
  for (int v = 0; v < p.grid; ++v) {
    long long n = p.dp_count(v) * p.k_tiles;
    if (v < p.sk_blocks) n += p.begin(v + 1) - p.begin(v);
    if (n > most) most = n;
  }
  return most;
}

}  // namespace ks::gemm::stream_k

#undef KS_SK_HD
