// dmma_tma: DGEMM on the FP64 tensor cores with a Hopper-native main loop (compute capability 9.0, code built
// for sm_90a). The tensor memory accelerator (TMA) copies the k-tiles of A and B into shared memory; one
// producer warp issues those copies, per-stage mbarriers tell the consumer warps when a stage has landed and
// the producer when a stage has been read; the consumers issue mma.sync.m16n8k16 f64 (SASS DMMA.16x8x16;
// Hopper has no wgmma for f64) and keep their accumulators in registers. `setmaxnreg` moves registers from the
// producer warpgroup, which needs few, to the consumers. The grid is persistent (one block per resident
// slot, each walking tiles in the grouped order of gemm/kernel_common.cuh, the last wave shared by stream-K),
// so the producer fills the next tile's stages while the consumers write the last tile's C.
//
// Two tile forms (struct Tile): the consumer warps cover the tile once and all read every stage (128 x 128, eight
// warps of 64 x 32; 128 x 64 and 64 x 128, eight warps of 32 x 32: one tile per SM where C has about as many tiles
// as SMs, as at 1024^3, without a split-K partial in global memory), or two k-groups of warps each cover the whole
// tile and take alternate stages, adding their accumulators through shared memory at the tile's end (the 32-wide
// tiles 128 x 32 and 32 x 128, four warps of 32 x 32 a group, for C of 9 to 32 columns or rows, where the product
// streams the large operand from DRAM and 64-wide tiles would double the tensor cores' work on padding;
// docs/gemm-notes.md, step 37; and 128 x 64 with two groups of four 64 x 32 warps, a tuning variant that the
// one-group form replaced in the rule, step 62). In the one-group tiles of 32 x 32 warps each warp waits for its next
// stage and loads that stage's first fragments ahead of the current stage's last MMAs (Tile::kLead, step 63).
//
// Shared memory, one stage (BM x BK of op(A), BK x BN of op(B)), everything in 128-byte rows swizzled by the
// TMA's 128-byte pattern (the 16-byte chunk c of row r lands at chunk c ^ (r % 8); rows grouped in 1024-byte
// aligned blocks). Each operand keeps the orientation it has in global memory, so all four op(A) op(B)
// combinations load with plain TMA boxes and the transposition is absorbed in the fragment loads:
//   op(A) = A:   BM / 16 boxes of 16 rows (m) x BK (k): row k holds A(m0 .. m0 + 15, k).
//   op(A) = A^T: BK / 16 boxes of 16 (k) x BM (m): row m holds op(A)(m, k0 .. k0 + 15).
//   op(B) = B:   BK / 16 boxes of 16 (k) x BN (n): row n holds B(k0 .. k0 + 15, n).
//   op(B) = B^T: BN / 16 boxes of 16 rows (n) x BK (k): row k holds op(B)(k, n0 .. n0 + 15).
// A box of A (as stored) is exactly one 16-row mma tile. The box shapes follow from the swizzle: the TMA
// swizzles only boxes whose inner extent is at most 128 bytes, i.e. 16 doubles.
//
// Conflict-free fragment loads. A warp's fragment load (mma.m16n8k16 f64: lane 4g + t reads A(g (+8), t + 4j)
// and B(t + 4j, g)) moves 32 doubles; shared memory serves 64-bit loads a half-warp (16 lanes: g = 0..3 or
// 4..7, t = 0..3) per wavefront, so the minimum is 2 wavefronts, reached when each half-warp's 16 doubles
// fall in 16 distinct 8-byte banks. With k in natural order they do not: A's 4 m values of a half-warp sit in
// 2 chunks of a row, and rows k = 0..3 XOR them onto only 4 chunks (a 2-way conflict, which a model of the
// whole warp misses). The k order inside a 16-deep step is free (A and B only have to agree), so the mma's k index
// t + 4j reads shared-memory row tma_kperm(t, j) = 8 (t / 2) + t % 2 + 2 ((j + t) % 4). For each j the four t
// then read rows r whose (r % 8) / 2 are 0, 1, 2, 3 (A: chunks {c, c ^ 1} XOR r % 8 cover all 8) and whose
// (r / 8, r % 2) are all different (B: row n = g XORs chunk r / 2 within its group of 4, and the group and the
// double within the chunk separate the t). Both are conflict-free; a test checks every load against this
// model. The transposed layouts are the same two patterns with the operands' roles exchanged: op(A) = A^T is
// read as B is (row m = g, element r), op(B) = B^T as A is (row r, element n = g).
//
// Work schedule (gemm/stream_k.hpp): whole tiles in waves, then the last full wave and the remainder shared
// by all blocks in equal runs of k-tiles (stream-K), or, where C has fewer tiles than SMs, each tile's K split
// (split-K: up to 64 ways with the shares summed in a Fenwick tree, from 8 ways each share summing its own piece of
// the tile over all the partials at once (scatter_combine), or where the plan says, in clusters of 4 blocks through
// distributed shared memory, as far as the clusters stay resident: cluster_combine); a block that
// ends inside a tile writes its accumulators to scratch (one slot per block, stored in fragment order so each
// store is one coalesced 256-byte row) and raises a flag per warp of the tile (with two k-groups, after their
// exchange, the first group's); the blocks above it that take its partial wait for the flags, add, and store C
// or pass the sum on.
//
// Any shape: the TMA zero-fills what lies outside A and B (edge tiles, the K tail), and the stores to C are
// guarded (tiles inside C take an unguarded store). The TMA needs lda and ldb even (16-byte strides) and A, B
// 16-byte aligned: an operand that is not so is copied first into scratch with a padded leading dimension, where
// the rule prices the copy below `dmma`'s 8-byte loads (gemm/dmma_shapes.hpp, tma_copy_factor). Devices other than
// compute capability 9.0 and builds without sm_90a run `dmma` (the rule says which, and kbench reports it per row
// in the note dmma_tma_path). C of at most 8 rows or columns runs the
// skinny kernel on the FP64 FMA units instead (gemm/skinny.hpp: there the tensor cores' tiles would be mostly
// padding, and the time is the stream of the large operand).
//
// Measurements and what limits it: docs/gemm-notes.md.
// Run: build/bench/kbench run --suite gemm --variants dmma_tma --sizes 1024,2048,4096,8192
#include "common/dispatch.hpp"
#include "common/per_device.hpp"
#include "gemm/cp_async_pipeline.cuh"
#include "gemm/dmma_mma.cuh"
#include "gemm/dmma_shapes.hpp"
#include "gemm/hopper.cuh"
#include "gemm/stream_k.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <cstdint>
#include <array>
#include <string>
#include <type_traits>
#include <vector>

namespace ks::gemm {
namespace tma {

// KGROUPS: how many groups of consumer warps share each tile's k-tiles. 1: the consumer warps cover the tile
// once and read every stage. 2: two groups each cover the whole tile and take alternate stages (stage % 2), then
// add their accumulators through shared memory (in kRedRounds rounds through a buffer of kRedBytes). The second
// form gives a 128 x 64 tile the eight consumer warps of a 128 x 128 one, with the same 64 x 32 warp tile, so one
// block per SM runs half the tile with no split-K partial in global memory (1024^3: 128 tiles for 132 SMs); eight
// warps of 32 x 32 in one group (WARP_ROWS 32) do the same without the exchange, and ran faster (step 62).
// TA, TB: op(A) = A^T, op(B) = B^T (the header's layouts).
// STORE_TMA: the consumers write C into shared memory and TMA stores take it to global memory (store_tile_tma).
// WARP_ROWS: the rows of a warp's piece of C (0: kWarpRows's default below).
template <int BM_, int BN_, int BK_, int STAGES_, int MIN_BLOCKS_, int KGROUPS_ = 1, bool STORE_TMA_ = false,
          bool TA_ = false, bool TB_ = false, int WARP_ROWS_ = 0>
struct Tile {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, STAGES = STAGES_, kMinBlocks = MIN_BLOCKS_, KGROUPS = KGROUPS_;
  static constexpr bool TA = TA_, TB = TB_, kStoreTma = STORE_TMA_;
  // A group's warps, each a kWarpRows x 32 piece of C: 64 rows, or 32 in the 32-wide tiles (128 x 32 and 32 x 128,
  // for C of 9 to 32 columns or rows, where 64-wide pieces would be half padding and double the tensor cores' work on
  // a DRAM-bound product), so that those have four warps a group as well (a 128 x 32 tile of two 64 x 32 warps ran
  // up to 15% slower than the 32 x 128 one; docs/gemm-notes.md, step 37).
  static constexpr int kWarpRows = WARP_ROWS_ ? WARP_ROWS_ : BM == 32 || BN == 32 ? 32 : 64;
  static constexpr int WARPS_M = BM / kWarpRows, WARPS_N = BN / 32;
  static constexpr int MT = kWarpRows / 16, NT = 4;           // 16x8 mma tiles per consumer warp
  static constexpr int kWarpAcc = MT * NT * 4;                // accumulators per lane
  // Each stage's first fragments loaded at the end of the stage before (struct Lead): in one group of 32 x 32 warps
  // (16 MMAs a warp a stage) 1-5 points of cuBLAS faster on an H200; with 64 x 32 warps (32 MMAs a stage, 128
  // accumulator registers) 1-11 points slower, in NN with spills and in TN with next to none (docs/gemm-notes.md,
  // step 63).
  static constexpr bool kLead = KGROUPS == 1 && MT == 2;
  static constexpr int kTileWarps = WARPS_M * WARPS_N;        // one group: the warps that read a stage
  static constexpr int kConsumerWarps = kTileWarps * KGROUPS;
  static constexpr int kThreads = 128 + 32 * kConsumerWarps;  // the producer warpgroup, then the consumers
  static constexpr int kABytes = BM * BK * 8, kBBytes = BN * BK * 8, kStageBytes = kABytes + kBBytes;
  static constexpr int kRedRounds = 2;
  static constexpr int kRedBytes = KGROUPS > 1 ? kTileWarps * 32 * kWarpAcc * 8 / kRedRounds : 0;
  static constexpr int kStoreBytes = kStoreTma ? BM * BN * 8 : 0;  // C staged for the TMA stores, a warp's 16 KB each
  static constexpr int kSmemBytes = STAGES * kStageBytes + kRedBytes + kStoreBytes + 1024;  // + alignment to 1024
  // Registers per thread after setmaxnreg: the producer keeps 24 (the least), the consumers take the rest of the
  // block's allocation at launch (each thread's share of the register file, a multiple of 8). setmaxnreg only moves
  // registers within that allocation: the consumers' increase waits until the producer's decrease has freed enough,
  // so together they must fit it, or the increase never returns and the launch hangs (docs/gemm-notes.md, step 58).
  static constexpr int kProducerRegs = 24;
  static constexpr int kLaunchRegs = 65536 / (kThreads * kMinBlocks) / 8 * 8;
  static constexpr int kConsumerRegs =
      std::min(256, (kLaunchRegs * kThreads - 128 * kProducerRegs) / (32 * kConsumerWarps) / 8 * 8);
  static_assert(128 * kProducerRegs + 32 * kConsumerWarps * kConsumerRegs <= kLaunchRegs * kThreads,
                "the consumers' added registers come from the producer's");
  static_assert((BM % 64 == 0 || BM == 32) && BN % 32 == 0 && BK % 16 == 0 && BN <= 256, "whole warp tiles and boxes");
  static_assert(kConsumerWarps % 4 == 0, "consumers form whole warpgroups (setmaxnreg)");
  static_assert(KGROUPS == 1 || (KGROUPS == 2 && STAGES % 2 == 0 && MT % kRedRounds == 0),
                "two groups take alternate stages of an even count");
  static_assert(STAGES > KGROUPS, "with kLead a warp waits for its next stage before it releases the one it reads");
  static_assert(!kStoreTma || (KGROUPS == 1 && MT == 4), "C staged by the one group that covers the tile, 64 x 32 a warp");
};

using dmma::tma_kperm;
using dmma::tma_swizzled;

// ---- stream-K partials: slot o, warp cw of the tile (kTileWarps of them: with two k-groups, group 0's, which
// holds the block's sum), accumulator q of lane l at ((o * warps + cw) * 64 + q) * 32 + l; flag of (o, cw) at
// sync[1 + o * warps + cw] (sync[0] is the ticket counter), raised to 1, reset by the owner ----

// Accumulator q of a consumer warp, in the order partials, the two groups' exchange and the clusters keep them in:
// acc[q / (NT x 4)][q / 4 % NT][q % 4] (fragment_place says where in C).
template <class T, class A>
__device__ __forceinline__ auto& acc_q(A& acc, int q) {
  return acc[q / (T::NT * 4)][q / 4 % T::NT][q % 4];
}

template <class T>
__device__ __forceinline__ double* partial_slot(double* partials, int o, int cw) {
  return partials + (static_cast<size_t>(o) * T::kTileWarps + cw) * (T::kWarpAcc * 32);
}

// The flag of (block v, warp cw of the tile).
template <class T>
__device__ __forceinline__ unsigned* flag_of(unsigned* sync, int v, int cw) {
  return sync + 1 + v * T::kTileWarps + cw;
}

// Spins until `flag` is raised; its acquire makes what the raising warp stored before the release visible here.
__device__ __forceinline__ void wait_flag(const unsigned* flag) {
  for (;;) {
    unsigned up;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(up) : "l"(flag) : "memory");
    if (up) break;
    __nanosleep(64);
  }
}

// The warp's stores (each lane's, to global memory) before the flag of (block v, warp cw) rises: the warp barrier
// orders every lane's stores before lane 0's release store, which is cumulative over what it orders. (A
// __threadfence before it, a sequentially consistent MEMBAR.SC.GPU per warp, cost 2-4 points of cuBLAS at 256 x 256
// x 16384 and 65536; docs/gemm-notes.md, step 36.)
__device__ __forceinline__ void release_flag(unsigned* flag, unsigned value) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;\n" ::"l"(flag), "r"(value) : "memory");
}
template <class T>
__device__ __forceinline__ void raise_flag(unsigned* sync, int v, int cw, int lane) {
  __syncwarp();
  if (lane == 0) release_flag(flag_of<T>(sync, v, cw), 1u);
}

// Waits for the flag of (block o, warp cw), then lowers it (consumed: the counters are zero again when the kernel
// ends). Every lane acquires the flag itself, so each may then read what the raising warp stored, past L1.
template <class T>
__device__ __forceinline__ void take_flag(unsigned* sync, int o, int cw, int lane) {
  unsigned* flag = flag_of<T>(sync, o, cw);
  wait_flag(flag);
  __syncwarp();
  if (lane == 0) *flag = 0;
}

// Warp cw's accumulators into block v's slot, past L1.
template <class T>
__device__ __forceinline__ void store_partial(const double (&acc)[T::MT][T::NT][4], double* partials, int v, int cw,
                                              int lane) {
  double* slot = partial_slot<T>(partials, v, cw);
#pragma unroll
  for (int q = 0; q < T::kWarpAcc; ++q) __stcg(slot + q * 32 + lane, acc_q<T>(acc, q));
}

template <class T>
__device__ __forceinline__ void write_partial(const double (&acc)[T::MT][T::NT][4], double* partials, unsigned* sync,
                                              int v, int cw, int lane) {
  store_partial<T>(acc, partials, v, cw, lane);
  raise_flag<T>(sync, v, cw, lane);
}

template <class T>
__device__ __forceinline__ void add_partial(double (&acc)[T::MT][T::NT][4], double* partials, unsigned* sync, int o,
                                            int cw, int lane) {
  take_flag<T>(sync, o, cw, lane);
  const double* slot = partial_slot<T>(partials, o, cw);
#pragma unroll
  for (int q = 0; q < T::kWarpAcc; ++q) acc_q<T>(acc, q) += __ldcg(slot + q * 32 + lane);
}

// ---- split-K in clusters (gemm/stream_k.hpp, kClusterSize): the blocks of a cluster hold consecutive shares of one
// tile; each puts its accumulators in its own shared memory, in the partials' fragment order, and sums one slice
// (a kClusterSize-th) of the tile over every block of the cluster through distributed shared memory ----

__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
// The address in block `rank`'s shared memory of what is at `addr` in this block's.
__device__ __forceinline__ uint32_t cluster_map(uint32_t addr, uint32_t rank) {
  uint32_t out;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(out) : "r"(addr), "r"(rank));
  return out;
}
__device__ __forceinline__ double cluster_load(uint32_t addr) {
  double v;
  asm volatile("ld.shared::cluster.f64 %0, [%1];\n" : "=d"(v) : "r"(addr) : "memory");
  return v;
}
__device__ __forceinline__ void cluster_store(uint32_t addr, uint32_t v) {
  asm volatile("st.shared::cluster.u32 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
}
// Every thread of every block of the cluster (all of them alive: the kernel's start).
__device__ __forceinline__ void cluster_sync_all() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
// One arrive on mbarrier `bar` (this block's address) of every block of the cluster, ordered after what this
// block's threads wrote or read before (the caller's barrier) at cluster scope.
__device__ __forceinline__ void cluster_arrive_all(uint32_t bar) {
  asm volatile("fence.acq_rel.cluster;\n" ::: "memory");
  for (uint32_t r = 0; r < stream_k::kClusterSize; ++r)
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(cluster_map(bar, r)) : "memory");
}
__device__ __forceinline__ void cluster_bar_wait(uint32_t bar) {
  asm volatile(
      "{\n .reg .pred p;\n"
      "WAIT_%=:\n"
      " mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%0], 0;\n"
      " @!p bra WAIT_%=;\n}\n" ::"r"(bar)
      : "memory");
}

// The tile warps' named barrier (with two k-groups, the first group's; the second has left).
template <class T>
__device__ __forceinline__ void tile_sync() {
  asm volatile("barrier.sync 2, %0;\n" ::"n"(T::kTileWarps * 32) : "memory");
}

// C(i, j) of fragment-order element e of tile (tm, tn) (write_partial's layout: ((warp * kWarpAcc + q) * 32 + lane)).
template <class T>
__device__ __forceinline__ void fragment_place(int e, int tm, int tn, int& i, int& j) {
  const int lane = e % 32, q = e / 32 % T::kWarpAcc, w = e / (T::kWarpAcc * 32);
  const int mt = q / (T::NT * 4), nt = q / 4 % T::NT, r = q % 4;
  i = tm * T::BM + (w % T::WARPS_M) * T::kWarpRows + mt * 16 + 8 * (r / 2) + lane / 4;
  j = tn * T::BN + (w / T::WARPS_M) * 32 + nt * 8 + 2 * (lane % 4) + r % 2;
}

// ---- split-K summed scattered (Plan::scatters(); gemm/stream_k.hpp): a reduce-scatter over the tile's S shares ----
// The shares of a tile are all resident at once (the launch is cooperative), so each can wait for every other: each
// writes its partial to its slot, raises its flag, waits for every share's flag, and sums its own piece (an S-th of
// the partial's elements, stream_k::scatter_piece) over the S partials in share order, then stores that piece of C.
// One round of reads for every share at once, where the Fenwick tree's owner reads a chain of about log2 S partials
// one after another (docs/gemm-notes.md, step 51).
//
// A share's flag is raised to the number of warps that will read it (S x kTileWarps), and each reading warp lowers
// every flag it has seen by one (a reduction: no round trip), so the flags are zero again when the kernel ends, as
// ExecContext::zeroed_counters asks; a flag not yet seen by a warp is at least one, so none misses it.
template <class T>
__device__ __forceinline__ void scatter_combine(const GemmArgs& a, const double (&acc)[T::MT][T::NT][4], double* partials,
                                                unsigned* sync, int v, const stream_k::Plan::Share& share, int tm, int tn,
                                                int tw, int lane) {
  constexpr int kParts = T::kTileWarps * 32 * T::kWarpAcc, kThreads = T::kTileWarps * 32, kChunk = 8;
  const int members = share.splits, first = v - (share.split - 1), i = tw * 32 + lane;
  store_partial<T>(acc, partials, v, tw, lane);
  // Every thread of the tile has stored its part: the tile barrier orders those stores before thread 0's release,
  // which is cumulative over them.
  tile_sync<T>();
  if (i == 0) release_flag(flag_of<T>(sync, v, 0), static_cast<unsigned>(members * T::kTileWarps));
  for (int m = lane; m < members; m += 32) {
    unsigned* f = flag_of<T>(sync, first + m, 0);
    wait_flag(f);
    asm volatile("red.relaxed.gpu.global.add.u32 [%0], %1;\n" ::"l"(f), "r"(~0u) : "memory");  // seen: one less
  }
  // The warp barrier orders each lane's acquire before every lane's loads below (as raise_flag's orders the stores
  // before the release).
  __syncwarp();
  const double* slots = partial_slot<T>(partials, first, 0);
  int lo, hi;
  stream_k::scatter_piece(kParts, members, share.split - 1, lo, hi);
  for (int e = lo + i; e < hi; e += kThreads) {
    double sum = 0.0;
    // kChunk shares' loads in flight, added in share order.
    for (int m0 = 0; m0 < members; m0 += kChunk) {
      double x[kChunk];
#pragma unroll
      for (int k = 0; k < kChunk; ++k)
        x[k] = m0 + k < members ? __ldcg(slots + static_cast<size_t>(m0 + k) * kParts + e) : 0.0;
#pragma unroll
      for (int k = 0; k < kChunk; ++k)
        if (m0 + k < members) sum = m0 + k == 0 ? x[k] : sum + x[k];
    }
    int ci, cj;
    fragment_place<T>(e, tm, tn, ci, cj);
    if (ci < a.M && cj < a.N) store_c(a, ci, cj, sum);
  }
}

// The end of a split-K share in a cluster (every block of it has exactly this one unit). `part`: this block's
// stages, free now; ready and done: its two cluster mbarriers (kClusterSize arrives each). Each block sums its
// slice over the cluster in rank order; a tile's last cluster (share index above the others') adds the other
// clusters' slices from global memory in share order and stores C, the others write their slices there and raise
// their flags. Deterministic: every sum in a fixed order.
template <class T>
__device__ __forceinline__ void cluster_combine(const GemmArgs& a, const double (&acc)[T::MT][T::NT][4], double* part,
                                                uint32_t ready, uint32_t done, double* partials, unsigned* sync, int v,
                                                const stream_k::Plan::Share& share, int tm, int tn, int tw, int lane) {
  constexpr int kParts = T::kTileWarps * 32 * T::kWarpAcc, kThreads = T::kTileWarps * 32;
  constexpr int kSlice = kParts / stream_k::kClusterSize, kPer = kSlice / kThreads;
  static_assert(kPer * kThreads * stream_k::kClusterSize == kParts, "whole slices");
  static_assert(kParts * 8 <= T::STAGES * T::kStageBytes + T::kRedBytes + T::kStoreBytes, "a partial fits the stages");
  tile_sync<T>();  // every warp's last fragment loads are done: the stages can be overwritten
#pragma unroll
  for (int q = 0; q < T::kWarpAcc; ++q)
    part[(tw * T::kWarpAcc + q) * 32 + lane] = acc_q<T>(acc, q);
  tile_sync<T>();
  const int i = tw * 32 + lane;
  if (i == 0) cluster_arrive_all(ready);
  cluster_bar_wait(ready);
  const uint32_t rank = cluster_rank();
  double sum[kPer];
  const uint32_t mine = smem_addr(part) + 8u * (rank * kSlice + i);
#pragma unroll
  for (int k = 0; k < kPer; ++k) sum[k] = cluster_load(cluster_map(mine + 8u * k * kThreads, 0));
  for (uint32_t r = 1; r < stream_k::kClusterSize; ++r)
#pragma unroll
    for (int k = 0; k < kPer; ++k) sum[k] += cluster_load(cluster_map(mine + 8u * k * kThreads, r));
  tile_sync<T>();  // this block's reads of the others' shared memory are done
  if (i == 0) cluster_arrive_all(done);
  // Across the tile's clusters: cluster c (0 .. per_tile - 1) of the tile; slot v holds block v's slice.
  const int per_tile = share.splits / stream_k::kClusterSize, c = (share.split - 1) / stream_k::kClusterSize;
  if (c < per_tile - 1) {
#pragma unroll
    for (int k = 0; k < kPer; ++k) __stcg(partials + static_cast<size_t>(v) * kSlice + i + k * kThreads, sum[k]);
    raise_flag<T>(sync, v, tw, lane);
  } else {
    // Every other cluster's flag first, one lane each, all polled at once; then their slices in share order, each
    // cluster's kPer loads in flight together. Taking one flag and then its slice per cluster cost two round trips
    // a cluster, one after another (docs/gemm-notes.md, step 38); more than one cluster's loads in flight made
    // ptxas spill (160-270 bytes of stack a thread at two).
    for (int o = lane; o < c; o += 32) {
      unsigned* flag = flag_of<T>(sync, v - (c - o) * stream_k::kClusterSize, tw);
      wait_flag(flag);
      *flag = 0;  // consumed: the counters are zero again when the kernel ends
    }
    // The warp barrier orders each lane's acquire before every lane's loads below (as raise_flag's orders the
    // stores before the release).
    __syncwarp();
    for (int o = 0; o < c; ++o) {
      const double* slice = partials + static_cast<size_t>(v - (c - o) * stream_k::kClusterSize) * kSlice + i;
#pragma unroll
      for (int k = 0; k < kPer; ++k) sum[k] += __ldcg(slice + k * kThreads);
    }
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      int ci, cj;
      fragment_place<T>(static_cast<int>(rank) * kSlice + i + k * kThreads, tm, tn, ci, cj);
      if (ci < a.M && cj < a.N) store_c(a, ci, cj, sum[k]);
    }
  }
  cluster_bar_wait(done);  // no block leaves while another reads its shared memory
}

// A consumer warp's fragments (mma.m16n8k16: lane 4g + t) in a stage at `as` (op(A)) or `bs` (op(B)): element i of
// A's mma tile mt, or of B's mma tile nt, in the 16-deep step ks. a_off[j] is element (k = r_j, m = g) of a box
// of A as stored (row r_j), b_off[j] element (n = g, k = r_j) of a box of B as stored (row g); the transposed
// operands read with the other's offsets (header).
template <class T>
__device__ __forceinline__ double a_frag(const double* as, int ks, int mt, int i, const int (&a_off)[4],
                                         const int (&b_off)[4]) {
  return T::TA ? as[ks * T::BM * 16 + mt * 256 + 128 * (i % 2) + b_off[i / 2]]
               : as[mt * 16 * T::BK + ks * 256 + (a_off[i / 2] ^ (8 * (i % 2)))];
}
template <class T>
__device__ __forceinline__ double b_frag(const double* bs, int ks, int nt, int i, const int (&a_off)[4],
                                         const int (&b_off)[4]) {
  return T::TB ? bs[(nt / 2) * 16 * T::BK + ks * 256 + (a_off[i] ^ (8 * (nt % 2)))]
               : bs[ks * T::BN * 16 + nt * 8 * 16 + b_off[i]];
}

// The fragments a stage's first MMA reads (A's mma tile 0 and B's mma tile 0 of its first 16-deep step), loaded at the
// end of the warp's stage before, ahead of that stage's last MMAs (Tile::kLead): the first MMA of a stage then waits
// neither for the full barrier nor for shared memory after the warp has released the stage before.
struct Lead {
  double a[8], b[4];
};

template <class T, int S>
__device__ __forceinline__ void load_lead(Lead& lead, const double* a_warp, const double* b_warp, const int (&a_off)[4],
                                          const int (&b_off)[4]) {
  const double* as = a_warp + S * (T::kStageBytes / 8);
  const double* bs = b_warp + S * (T::kStageBytes / 8);
#pragma unroll
  for (int i = 0; i < 4; ++i) lead.b[i] = b_frag<T>(bs, 0, 0, i, a_off, b_off);
#pragma unroll
  for (int i = 0; i < 8; ++i) lead.a[i] = a_frag<T>(as, 0, 0, i, a_off, b_off);
}

// One stage's MMAs of a consumer warp: BK / 16 steps of 16 deep, the first MMA's fragments from `lead`. Where the
// warp's next stage SN is in the same unit (`more`), it waits for that stage (`full_next`, parity `parity_next`) and
// loads its lead fragments before the last mma tile's MMAs. The stages are template parameters so that their
// offsets are part of every load's immediate: with a run-time stage the fragment addresses changed every stage, and
// ptxas, short of registers, recomputed them from the thread index each time (about 90 instructions and an S2R
// ahead of each stage's first load).
template <class T, int S, int SN>
__device__ __forceinline__ void consume(double (&acc)[T::MT][T::NT][4], const double* a_warp, const double* b_warp,
                                        const int (&a_off)[4], const int (&b_off)[4], Lead& lead, bool more,
                                        uint32_t full_next, uint32_t parity_next) {
  const double* as = a_warp + S * (T::kStageBytes / 8);
  const double* bs = b_warp + S * (T::kStageBytes / 8);
#pragma unroll
  for (int ks = 0; ks < T::BK / 16; ++ks) {  // no wait inside: step ks + 1's loads overlap step ks
    double bf[T::NT][4];
#pragma unroll
    for (int nt = 0; nt < T::NT; ++nt)
#pragma unroll
      for (int i = 0; i < 4; ++i)
        bf[nt][i] = T::kLead && ks == 0 && nt == 0 ? lead.b[i] : b_frag<T>(bs, ks, nt, i, a_off, b_off);
#pragma unroll
    for (int mt = 0; mt < T::MT; ++mt) {
      double af[8];
#pragma unroll
      for (int i = 0; i < 8; ++i)
        af[i] = T::kLead && ks == 0 && mt == 0 ? lead.a[i] : a_frag<T>(as, ks, mt, i, a_off, b_off);
      if (T::kLead && ks == T::BK / 16 - 1 && mt == T::MT - 1 && more) {
        bar_wait(full_next, parity_next);
        load_lead<T, SN>(lead, a_warp, b_warp, a_off, b_off);
      }
#pragma unroll
      for (int nt = 0; nt < T::NT; ++nt) dmma::mma_16x8x16<dmma::Instr::K16>(acc[mt][nt], af, bf[nt]);
    }
  }
}

// f(std::integral_constant<int, S>) for S = 0 .. N - 1, in order.
template <int N, int S = 0, class F>
__device__ __forceinline__ void for_stages(F&& f) {
  if constexpr (S < N) {
    f(std::integral_constant<int, S>{});
    for_stages<N, S + 1>(f);
  }
}

// The consumer warps' named barrier (barrier 0 is __syncthreads; the producer warpgroup has left by then). Not
// `bar.sync` (barrier.sync.aligned): each k-group runs its own copy of the code, so the two groups reach the
// barrier at different instructions, which .aligned forbids (compute-sanitizer's synccheck flags it).
template <class T>
__device__ __forceinline__ void consumers_sync() {
  asm volatile("barrier.sync 1, %0;\n" ::"n"(T::kConsumerWarps * 32) : "memory");
}

// Two k-groups: group 1 hands its accumulators to group 0 through shared memory, in kRedRounds rounds of
// MT / kRedRounds mma rows. Thread i of a group (tile warp x 32 + lane) owns column i of the buffer `red`, so a
// warp's store or load is 256 contiguous bytes (two wavefronts, no conflict). Group 0 then holds the tile's sum.
template <class T, int G>
__device__ __forceinline__ void add_groups(double (&acc)[T::MT][T::NT][4], double* red, int i) {
  constexpr int kRows = T::MT / T::kRedRounds, kPer = kRows * T::NT * 4, kCols = T::kTileWarps * 32;
#pragma unroll
  for (int round = 0; round < T::kRedRounds; ++round) {
    if constexpr (G == 1) {
#pragma unroll
      for (int q = 0; q < kPer; ++q) red[q * kCols + i] = acc_q<T>(acc, round * kPer + q);
    }
    consumers_sync<T>();
    if constexpr (G == 0) {
#pragma unroll
      for (int q = 0; q < kPer; ++q) acc_q<T>(acc, round * kPer + q) += red[q * kCols + i];
    }
    consumers_sync<T>();  // read before the next round's (or the next tile's) stores
  }
}

// A consumer warp's kWarpRows x 32 piece of C: accumulator [mt][nt][r] is C(i0 + 16 mt + 8 (r / 2), j0 + 8 nt + r % 2).
// Tiles inside C (`inside`) take 8 column pointers and the elements at immediate offsets, beta tested once: the
// guarded form, each element with its own bounds test and 64-bit address, is 2,750 instructions of straight-line
// code that every warp runs once and waits for in the instruction cache. Edge tiles
// keep it.
template <class T>
__device__ __forceinline__ void store_tile(const GemmArgs& a, const double (&acc)[T::MT][T::NT][4], int i0, int j0,
                                           bool inside) {
  if (inside) {
    const bool beta0 = a.beta == 0.0;
#pragma unroll
    for (int nt = 0; nt < T::NT; ++nt)
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        double* col = a.C + i0 + static_cast<size_t>(j0 + nt * 8 + c) * a.ldc;
        if (beta0) {
#pragma unroll
          for (int mt = 0; mt < T::MT; ++mt)
#pragma unroll
            for (int h = 0; h < 2; ++h) col[mt * 16 + 8 * h] = a.alpha * acc[mt][nt][2 * h + c];
        } else {
#pragma unroll
          for (int mt = 0; mt < T::MT; ++mt)
#pragma unroll
            for (int h = 0; h < 2; ++h)
              col[mt * 16 + 8 * h] = a.alpha * acc[mt][nt][2 * h + c] + a.beta * col[mt * 16 + 8 * h];
        }
      }
    return;
  }
#pragma unroll
  for (int mt = 0; mt < T::MT; ++mt)
#pragma unroll
    for (int nt = 0; nt < T::NT; ++nt)
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int i = i0 + mt * 16 + 8 * (r / 2), j = j0 + nt * 8 + r % 2;
        if (i < a.M && j < a.N) store_c(a, i, j, acc[mt][nt][r]);
      }
}

// The same piece through shared memory: the warp writes it into its 16 KB of staging (gemm/dmma_shapes.hpp,
// tma_c_staged: four boxes of 16 rows x 32 columns), and one lane hands the boxes to the TMA, which clips what lies
// outside C. The consumers go on to the next tile's k-tiles while the TMA drains the staging to L2; a warp waits
// for its last stores to have read the staging only when it next writes there. With the register stores of
// store_tile, a tile's 128 KB of C left each SM while its consumers waited (a persistent block computes
// one tile at a time), and writing C is most of the time where K is shallow (docs/gemm-notes.md, step 35).
// i0, j0: the piece's first row and column in C.
template <class T>
__device__ __forceinline__ void store_tile_tma(const GemmArgs& a, const double (&acc)[T::MT][T::NT][4],
                                               const CUtensorMap* map_c, double* staging, int i0, int j0, int lane) {
  const int g = lane / 4, t = lane % 4;
  if (lane == 0) tma_store_wait_read();
  __syncwarp();
  const bool beta0 = a.beta == 0.0;
#pragma unroll
  for (int nt = 0; nt < T::NT; ++nt)
#pragma unroll
    for (int c = 0; c < 2; ++c) {
      const int j = nt * 8 + 2 * t + c;
      const bool in_n = j0 + j < a.N;
      const double* col = a.C + static_cast<size_t>(in_n ? j0 + j : 0) * a.ldc + i0;
#pragma unroll
      for (int mt = 0; mt < T::MT; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int i = mt * 16 + 8 * h + g;
          double v = a.alpha * acc[mt][nt][2 * h + c];
          if (!beta0 && in_n && i0 + i < a.M) v += a.beta * col[i];
          staging[dmma::tma_c_staged(i, j)] = v;
        }
    }
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // the writes, before the TMA reads them
  __syncwarp();
  if (lane == 0) {
    if (j0 < a.N) {
#pragma unroll
      for (int mt = 0; mt < T::MT; ++mt)
        if (i0 + mt * 16 < a.M) tma_store(map_c, i0 + mt * 16, j0, smem_addr(staging + mt * 512));
    }
    tma_store_commit();
  }
}

// ---- the kernel ----

template <class T>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocks)
    tma_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
               const __grid_constant__ CUtensorMap map_c, bool c_by_tma, bool keep_ab, GemmArgs a,
               stream_k::Plan plan, double* partials, unsigned* sync) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ unsigned char smem_raw[];
  __shared__ __align__(8) uint64_t full[T::STAGES], empty[T::STAGES], cl_ready, cl_done;
  __shared__ int ticket;
  __shared__ stream_k::Plan::Share share;
  // The 128-byte swizzle repeats every 1024 bytes of shared-memory address: align the stages to that.
  const uint32_t raw = smem_addr(smem_raw);
  const uint32_t base = (raw + 1023u) & ~1023u;
  const double* smem = reinterpret_cast<const double*>(smem_raw + (base - raw));
  double* red = reinterpret_cast<double*>(smem_raw + (base - raw) + T::STAGES * T::kStageBytes);  // KGROUPS > 1
  double* staging = red + T::kRedBytes / 8;  // kStoreTma

  const int tiles_m = ceil_div(a.M, T::BM), tiles_n = ceil_div(a.N, T::BN);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  if (threadIdx.x == 0) {
    for (int s = 0; s < T::STAGES; ++s) {
      bar_init(smem_addr(&full[s]), 1);                      // the producer's arrive; the TMA adds the bytes
      bar_init(smem_addr(&empty[s]), T::kTileWarps);         // one arrive per warp that reads the stage
    }
    if (plan.cluster > 0) {
      bar_init(smem_addr(&cl_ready), stream_k::kClusterSize);  // one arrive from each block of the cluster
      bar_init(smem_addr(&cl_done), stream_k::kClusterSize);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    // With stream-K, blocks wait for blocks of lower tickets: tickets go in the order blocks start, so those
    // are resident or done whatever the hardware's block order. The last ticket resets the counter.
    if (plan.cluster == 0) {  // (in clusters, the first block of each writes every block's ticket below)
      ticket = blockIdx.x;
      if (sync) {
        ticket = static_cast<int>(atomicAdd(&sync[0], 1u));
        if (ticket == static_cast<int>(gridDim.x) - 1) atomicExch(&sync[0], 0u);
      }
    }
  }
  if (plan.cluster > 0) {
    // A cluster's blocks start together: its first block takes a ticket for the cluster and gives block r of it
    // ticket x kClusterSize + r; the barrier also makes every block's mbarriers initialised before any remote arrive.
    if (threadIdx.x == 0 && cluster_rank() == 0) {
      const unsigned q = atomicAdd(&sync[0], 1u);
      if (q == gridDim.x / stream_k::kClusterSize - 1) atomicExch(&sync[0], 0u);
      for (uint32_t r = 0; r < stream_k::kClusterSize; ++r)
        cluster_store(cluster_map(smem_addr(&ticket), r), q * stream_k::kClusterSize + r);
    }
    cluster_sync_all();
  }
  if (threadIdx.x == 0) share = plan.share(ticket);  // the schedule's divisions, once
  __syncthreads();
  const int v = ticket;
  const long long units = share.units;

  if (warp < 4) {  // the producer warpgroup: one thread issues every copy
    regs_dec<T::kProducerRegs>();
    if (threadIdx.x != 0) return;
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&map_a)) : "memory");
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&map_b)) : "memory");
    // Where A and B fit in the L2 together (keep_ab: dmma::tma_keeps_ab), their lines are marked evict-last, so that
    // C's write stream does not evict the panels later tiles read again.
    auto load = [keep_ab](uint32_t dst, const CUtensorMap* map, int c0, int c1, uint32_t bar) {
      if (keep_ab)
        tma_load(dst, map, c0, c1, bar, evict_last_policy());
      else
        tma_load(dst, map, c0, c1, bar);
    };
    int stage = 0;
    uint32_t phase = 0;
    for (long long u = 0; u < units; ++u) {
      const stream_k::Unit w = plan.unit(v, share, u);
      int tm, tn;
      grouped_tile(w.tile, tiles_m, tiles_n, tm, tn);
      for (int kt = w.kb; kt < w.ke; ++kt) {
        bar_wait(smem_addr(&empty[stage]), phase ^ 1);  // the consumers have read this stage's last k-tile
        const uint32_t bar = smem_addr(&full[stage]);
        bar_arrive_expect(bar, T::kStageBytes);         // zero-filled parts of edge boxes count too
        const uint32_t sa = base + stage * T::kStageBytes, sb = sa + T::kABytes;
        // Boxes of 16 along the stored operand's contiguous dimension (m or k of A, k or n of B; header).
        if constexpr (T::TA) {
#pragma unroll
          for (int q = 0; q < T::BK / 16; ++q) load(sa + q * T::BM * 128, &map_a, kt * T::BK + 16 * q, tm * T::BM, bar);
        } else {
#pragma unroll
          for (int b = 0; b < T::BM / 16; ++b) load(sa + b * 16 * T::BK * 8, &map_a, tm * T::BM + 16 * b, kt * T::BK, bar);
        }
        if constexpr (T::TB) {
#pragma unroll
          for (int b = 0; b < T::BN / 16; ++b) load(sb + b * 16 * T::BK * 8, &map_b, tn * T::BN + 16 * b, kt * T::BK, bar);
        } else {
#pragma unroll
          for (int q = 0; q < T::BK / 16; ++q) load(sb + q * T::BN * 128, &map_b, kt * T::BK + 16 * q, tn * T::BN, bar);
        }
        if (++stage == T::STAGES) {
          stage = 0;
          phase ^= 1;
        }
      }
    }
  } else {  // the consumers
    regs_inc<T::kConsumerRegs>();
    const int cw = warp - 4;  // 0 .. kConsumerWarps - 1
    // Each k-group's code is its own instance (G a constant), so that which stages it reads is known at compile
    // time.
    auto consumers = [&](auto group) {
      constexpr int G = decltype(group)::value;
      const int tw = cw - G * T::kTileWarps;  // warp within the tile
      const int wm = tw % T::WARPS_M, wn = tw / T::WARPS_M;
      const int g = lane / 4, t = lane % 4;
      // This thread's fragment offsets inside one 16-deep step of a box (doubles), from the header's layout.
      // Rows g and g + 8 of A differ in chunk bit 2 only: tma_swizzled(r, g + 8) == tma_swizzled(r, g) ^ 8.
      int a_off[4], b_off[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int r = tma_kperm(t, j);
        a_off[j] = tma_swizzled(r, g);
        b_off[j] = tma_swizzled(g, r);
      }
      // This warp's rows of op(A) in stage 0 (boxes of rows, or rows of boxes) and its columns of op(B).
      const double* a_warp = smem + (T::TA ? wm * T::kWarpRows * 16 : wm * T::MT * 16 * T::BK);
      const double* b_warp = smem + T::kABytes / 8 + (T::TB ? wn * 2 * 16 * T::BK : wn * 32 * 16);
      int stage = 0;
      uint32_t phase = 0;
      [[maybe_unused]] Lead lead;
      for (long long u = 0; u < units; ++u) {
        const stream_k::Unit w = plan.unit(v, share, u);
        int tm, tn;
        grouped_tile(w.tile, tiles_m, tiles_n, tm, tn);
        double acc[T::MT][T::NT][4] = {};
        // The k-tiles in rounds over the stages, so that every stage's index is a constant (a run-time index makes
        // ptxas recompute the fragment addresses, or dispatch through a jump table); a unit's
        // first round starts at the stage the last one left off at. The unit's first stage of this group waits and
        // loads its lead fragments here; each later one had them loaded by the stage before (led).
        [[maybe_unused]] bool led = false;
        for (int kt = w.kb; kt < w.ke;) {
          for_stages<T::STAGES>([&](auto s) {
            constexpr int S = decltype(s)::value;
            if (S != stage || kt >= w.ke) return;
            if (T::KGROUPS == 1 || S % T::KGROUPS == G) {  // this group's stage
              constexpr int SN = (S + T::KGROUPS) % T::STAGES;  // the group's next stage
              if constexpr (T::kLead) {
                if (!led) {
                  bar_wait(smem_addr(&full[S]), phase);
                  load_lead<T, S>(lead, a_warp, b_warp, a_off, b_off);
                }
                led = kt + T::KGROUPS < w.ke;
                consume<T, S, SN>(acc, a_warp, b_warp, a_off, b_off, lead, led, smem_addr(&full[SN]),
                                  S + T::KGROUPS >= T::STAGES ? phase ^ 1 : phase);
              } else {
                bar_wait(smem_addr(&full[S]), phase);
                consume<T, S, SN>(acc, a_warp, b_warp, a_off, b_off, lead, false, 0, 0);
              }
              // Every lane's loads of this stage must have returned before the warp releases it: without the fence
              // ptxas issued the arrive ahead of the last MMAs and without waiting for their fragment loads, so a
              // TMA refilling the stage could overwrite data still being read. With it the arrive follows the last
              // MMA (without it, the 128 x 64 kernel sometimes got the accumulators of each warp's last 16 rows, whose
              // A fragments are loaded last, wrong).
              asm volatile("fence.acq_rel.cta;\n" ::: "memory");
              __syncwarp();
              if (lane == 0) bar_arrive(smem_addr(&empty[S]));
            }
            ++kt;
            ++stage;
          });
          if (stage == T::STAGES) {
            stage = 0;
            phase ^= 1;
          }
        }
        if constexpr (T::KGROUPS > 1) {
          add_groups<T, G>(acc, red, tw * 32 + lane);
          if (G != 0) continue;
        }
        if (plan.cluster > 0) {
          cluster_combine<T>(a, acc, const_cast<double*>(smem), smem_addr(&cl_ready), smem_addr(&cl_done), partials,
                             sync, v, share, tm, tn, tw, lane);
          continue;
        }
        if (share.scatter) {  // split-K from kScatterMinSplits ways: in the Fenwick tree's place
          scatter_combine<T>(a, acc, partials, sync, v, share, tm, tn, tw, lane);
          continue;
        }
        // Lower tickets hold the tile's first k-tiles: add their partials (split-K: this share's sources in the
        // Fenwick tree), then hand the sum on where this block's share ends inside the tile.
        if (w.piece != stream_k::Piece::Whole)
          plan.for_each_source(v, share, w.sk_tile, [&](int o) { add_partial<T>(acc, partials, sync, o, tw, lane); });
        if (w.piece == stream_k::Piece::Partial) {
          write_partial<T>(acc, partials, sync, v, tw, lane);
          continue;
        }
        if constexpr (T::kStoreTma) {
          if (c_by_tma) {
            store_tile_tma<T>(a, acc, &map_c, staging + tw * (64 * 32), tm * T::BM + wm * T::kWarpRows, tn * T::BN + wn * 32,
                              lane);
            continue;
          }
        }
        store_tile<T>(a, acc, tm * T::BM + wm * T::kWarpRows + g, tn * T::BN + wn * 32 + 2 * t,
                      (tm + 1) * T::BM <= a.M && (tn + 1) * T::BN <= a.N);
      }
      // The shared memory the TMA stores read must outlive them, and their writes must be done when the kernel is.
      if constexpr (T::kStoreTma)
        if (lane == 0) tma_store_wait();
    };
    if constexpr (T::KGROUPS == 1)
      consumers(std::integral_constant<int, 0>{});
    else if (cw < T::kTileWarps)
      consumers(std::integral_constant<int, 0>{});
    else
      consumers(std::integral_constant<int, 1>{});
  }
#else
  __trap();  // the host launches this kernel only where sm_90a code was built and loaded
#endif
}

// The kernel of row I of dmma::kTmaTiles, for op(A) = A^T where TA and op(B) = B^T where TB.
template <int I, bool TA = false, bool TB = false>
using TileOf = Tile<dmma::kTmaTiles[I].bm, dmma::kTmaTiles[I].bn, dmma::kTmaTiles[I].bk, dmma::kTmaTiles[I].stages,
                    dmma::kTmaTiles[I].min_blocks, dmma::kTmaTiles[I].kgroups, dmma::kTmaTiles[I].store_tma, TA, TB,
                    dmma::kTmaTiles[I].warp_rows>;

}  // namespace tma

// ---- host side ----

namespace {

#if defined(KS_DMMA_TMA_SM90A)
constexpr bool kBuilt = true;
#else
constexpr bool kBuilt = false;
#endif

// A column-major rows x cols matrix with leading dimension ld, read in boxes of 16 rows x box_cols columns.
CUtensorMap tensor_map(const double* p, int rows, int cols, int ld, int box_cols) {
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(rows), static_cast<cuuint64_t>(cols)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(ld) * 8};
  const cuuint32_t box[2] = {16, static_cast<cuuint32_t>(box_cols)};
  return tma::tiled_map(CU_TENSOR_MAP_DATA_TYPE_FLOAT64, 2, p, dims, strides, box, "dmma_tma", [&] {
    return "a " + std::to_string(rows) + " x " + std::to_string(cols) + " matrix, ld " + std::to_string(ld);
  });
}

// A launch of `grid` blocks of tile T's kernel on `stream`, in clusters of stream_k::kClusterSize blocks where
// `in_clusters`, and cooperative (every block resident at once) where `cooperative`; `attrs`: the attributes' storage.
template <class T>
void cluster_launch(cudaLaunchConfig_t& cfg, cudaLaunchAttribute (&attrs)[2], int grid, cudaStream_t stream,
                    bool in_clusters = true, bool cooperative = false) {
  cfg.gridDim = dim3(static_cast<unsigned>(grid));
  cfg.blockDim = dim3(T::kThreads);
  cfg.dynamicSmemBytes = T::kSmemBytes;
  cfg.stream = stream;
  cfg.attrs = attrs;
  cfg.numAttrs = 0;
  if (in_clusters) {
    cudaLaunchAttribute& c = attrs[cfg.numAttrs++];
    c.id = cudaLaunchAttributeClusterDimension;
    c.val.clusterDim.x = stream_k::kClusterSize;
    c.val.clusterDim.y = 1;
    c.val.clusterDim.z = 1;
  }
  if (cooperative) {
    cudaLaunchAttribute& c = attrs[cfg.numAttrs++];
    c.id = cudaLaunchAttributeCooperative;
    c.val.cooperative = 1;
  }
}

// Per device and tile: whether the kernel's code loads there, and its resident blocks per SM.
struct Readiness {
  bool loads = false;
  int sm_count = 0, blocks_per_sm = 0;
  int clusters = 0;  // clusters of stream_k::kClusterSize blocks resident at once (split-K in clusters)
};
using TileReadiness = std::array<Readiness, dmma::kTmaTileCount>;

TileReadiness read_readiness(int device) {
  TileReadiness out{};
  int major = 0, minor = 0, optin = 0, sm_count = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
  for (int i = 0; i < dmma::kTmaTileCount; ++i)
    with_index<dmma::kTmaTileCount>(i, [&](auto tile) {
      using T = tma::TileOf<decltype(tile)::value>;
      Readiness& r = out[static_cast<std::size_t>(i)];
      r.sm_count = sm_count;
      cudaFuncAttributes fa{};
      // sm_90a code runs on compute capability 9.0 only; elsewhere the kernel has no image (the query fails).
      if (kBuilt && major == 9 && minor == 0 && T::kSmemBytes <= optin &&
          cudaFuncGetAttributes(&fa, tma::tma_kernel<T>) == cudaSuccess) {
        // The four op combinations share the shared-memory size, and so the occupancy read below.
        auto allow = [](auto kernel) {
          CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, T::kSmemBytes));
          CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                          cudaSharedmemCarveoutMaxShared));
        };
        constexpr int I = decltype(tile)::value;
        allow(tma::tma_kernel<T>);
        allow(tma::tma_kernel<tma::TileOf<I, false, true>>);
        allow(tma::tma_kernel<tma::TileOf<I, true, false>>);
        allow(tma::tma_kernel<tma::TileOf<I, true, true>>);
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r.blocks_per_sm, tma::tma_kernel<T>, T::kThreads,
                                                                 T::kSmemBytes));
        r.loads = r.blocks_per_sm > 0;
        cudaLaunchConfig_t cfg{};
        cudaLaunchAttribute attrs[2]{};
        cluster_launch<T>(cfg, attrs, stream_k::kClusterSize * r.sm_count, nullptr);
        if (cudaOccupancyMaxActiveClusters(&r.clusters, tma::tma_kernel<T>, &cfg) != cudaSuccess) r.clusters = 0;
      }
      (void)cudaGetLastError();  // a failed query above leaves its error behind
    }, "dmma_tma tiles");
  return out;
}

// The current device's, read once per device.
TileReadiness readiness() {
  static PerDevice<TileReadiness> cache(read_readiness);
  return cache.get();
}

// The kernel's schedule for `a` (gemm/stream_k.hpp); `shared` false: whole tiles only.
template <class T>
stream_k::Plan plan_for(const GemmArgs& a, const Readiness& r, bool shared) {
  const long long tiles = static_cast<long long>(ceil_div(a.M, T::BM)) * ceil_div(a.N, T::BN);
  // A partial costs the same time whatever the tile (its bytes and a k-tile's work both scale with BM x BN);
  // in this tile's k-tiles it is kPartialCost x 32 / BK.
  const int slots = r.sm_count * r.blocks_per_sm;
  const double cost = stream_k::kPartialCost * 32 / T::BK;
  // Split-K in clusters needs the whole grid resident in clusters at once.
  return stream_k::plan(tiles, ceil_div(a.K, T::BK), slots, cost, shared, r.clusters * stream_k::kClusterSize);
}

std::string describe(const stream_k::Plan& p) {
  if (p.sk_blocks == 0) return std::to_string(p.tiles) + " whole tiles on " + std::to_string(p.grid) + " blocks";
  if (p.splits() > 0)
    return std::to_string(p.tiles) + " tiles, K split " + std::to_string(p.splits()) + " ways" +
           (p.cluster > 0 ? " in clusters of " + std::to_string(p.cluster) : "");
  return "stream-K: " + std::to_string(p.dp_tiles) + " whole tiles, " + std::to_string(p.tiles - p.dp_tiles) +
         " shared by " + std::to_string(p.sk_blocks) + " blocks";
}

// Whether a TMA-store tile writes C by TMA stores: the TMA can describe C (as A and B: 16-byte strides and base) and M
// is even; elsewhere its register stores. With M odd the TMA's stores of the last row of boxes also wrote row M of
// every column, past C but inside ldc (an H200, 2026-11-29: 1999 x 2100 x 72, ldc 2000; docs/gemm-notes.md, step 73).
bool c_by_tma_stores(const GemmArgs& a) { return pipeline::wide_operand(a.C, a.ldc) && a.M % 2 == 0; }

template <class T>
void launch(const GemmArgs& a, ExecContext& ctx, const Readiness& r, bool shared = true) {
  // The operands as stored: A is M x K (K x M for A^T), B is K x N (N x K for B^T); boxes as the header says.
  const CUtensorMap map_a = T::TA ? tensor_map(a.A, a.K, a.M, a.lda, T::BM) : tensor_map(a.A, a.M, a.K, a.lda, T::BK);
  const CUtensorMap map_b = T::TB ? tensor_map(a.B, a.N, a.K, a.ldb, T::BK) : tensor_map(a.B, a.K, a.N, a.ldb, T::BN);
  // C through TMA stores where the tile has them and c_by_tma_stores says so; elsewhere the register stores (the map
  // is then not read).
  const bool described = pipeline::wide_operand(a.C, a.ldc);
  const bool c_by_tma = T::kStoreTma && c_by_tma_stores(a);
  const CUtensorMap map_c = c_by_tma ? tensor_map(a.C, a.M, a.N, a.ldc, 32) : CUtensorMap{};
  if (T::kStoreTma)
    ctx.notes()["dmma_tma_c"] = c_by_tma    ? "TMA stores"
                                : described ? "register stores (M odd)"
                                            : "register stores (ldc odd or C not 16-byte aligned)";
  // A and B read with an L2 evict-last policy where they fit in the L2 together (dmma::tma_keeps_ab).
  const bool keep_ab = dmma::tma_keeps_ab(a.M, a.N, a.K, dmma::current_target());
  ctx.notes()["dmma_tma_l2"] = keep_ab ? "A and B evict-last" : "A and B evict-normal";
  const stream_k::Plan plan = plan_for<T>(a, r, shared);
  double* partials = nullptr;
  unsigned* sync = nullptr;
  if (plan.sk_blocks > 0) {  // the counters are self-resetting: zero before and after every launch
    partials = static_cast<double*>(ctx.device_scratch(sizeof(double) * T::BM * T::BN * static_cast<size_t>(plan.sk_blocks)));
    sync = ctx.zeroed_counters(1 + static_cast<size_t>(plan.sk_blocks) * T::kTileWarps);
  }
  ctx.notes()["dmma_tma_schedule"] = describe(plan) + (plan.scatters() ? ", summed scattered" : "");
  if (plan.splits() > 0)  // split-K in clusters needs the grid resident in clusters at once (plan_for)
    ctx.notes()["dmma_tma_clusters"] = std::to_string(r.clusters) + " clusters of " +
                                       std::to_string(stream_k::kClusterSize) + " resident";
  cudaLaunchConfig_t cfg{};
  cudaLaunchAttribute attrs[2]{};
  cluster_launch<T>(cfg, attrs, plan.grid, ctx.stream(), plan.cluster > 0, plan.scatters());
  CUDA_CHECK(cudaLaunchKernelEx(&cfg, tma::tma_kernel<T>, map_a, map_b, map_c, c_by_tma, keep_ab, a, plan, partials,
                                sync));
  CUDA_CHECK_LAUNCH();
}

// Enqueues row `tile` of dmma::kTmaTiles; `shared` false: whole tiles only (no stream-K).
void launch_tile(int tile, const GemmArgs& a, ExecContext& ctx, const Readiness& r, bool shared) {
  with_ops(a, [&](auto ta, auto tb) {
    with_index<dmma::kTmaTileCount>(tile, [&](auto t) {
      launch<tma::TileOf<decltype(t)::value, decltype(ta)::value, decltype(tb)::value>>(a, ctx, r, shared);
    }, "dmma_tma tiles");
  });
}

// ---- operands the TMA cannot describe as stored (gemm/dmma_shapes.hpp, kTmaCopyPitch) ----

// The TMA reads a stored operand as it is where its strides are whole 16-byte units (an even leading dimension)
// from a 16-byte aligned base: pipeline::wide_operand, the condition of dmma's 16-byte copies.

// The elements of the operands that would have to be copied first (0: none).
long long copied_elements(const GemmArgs& a) {
  long long n = 0;
  if (!pipeline::wide_operand(a.A, a.lda)) n += static_cast<long long>(a.M) * a.K;
  if (!pipeline::wide_operand(a.B, a.ldb)) n += static_cast<long long>(a.K) * a.N;
  return n;
}

// Copies a rows x cols column-major matrix (leading dimension lds) into one with leading dimension ldd. Block b
// takes columns b, b + gridDim.x, ...; its threads take a column's rows kCopyUnroll at a time, every load issued
// before the first store (evict-first: the source is read once), so each thread keeps kCopyUnroll loads in flight.
// One double a thread and instruction keeps both sides coalesced whatever the source's alignment (an odd lds puts
// every other column 8 bytes off a 16-byte boundary). cudaMemcpy2DAsync does the same job at about 1.6-1.7 TB/s on
// an H100 (docs/gemm-notes.md, step 34).
constexpr int kCopyThreads = 256, kCopyUnroll = 4;

__global__ void __launch_bounds__(kCopyThreads)
    pitched_copy(const double* __restrict__ src, long long lds, double* __restrict__ dst, long long ldd, int rows,
                 int cols) {
  for (long long c = blockIdx.x; c < cols; c += gridDim.x) {
    const double* s = src + c * lds;
    double* d = dst + c * ldd;
    for (int r0 = threadIdx.x; r0 < rows; r0 += kCopyUnroll * kCopyThreads) {
      double v[kCopyUnroll];
#pragma unroll
      for (int u = 0; u < kCopyUnroll; ++u)
        if (r0 + u * kCopyThreads < rows) v[u] = __ldcs(s + r0 + u * kCopyThreads);
#pragma unroll
      for (int u = 0; u < kCopyUnroll; ++u)
        if (r0 + u * kCopyThreads < rows) d[r0 + u * kCopyThreads] = v[u];
    }
  }
}

// Enqueues tile `tile` on `a`, each operand the TMA cannot describe first copied into device scratch with its
// leading dimension rounded up to kTmaCopyPitch doubles (pitched_copy on the launch's stream, so the product
// follows it in stream order). Where something is copied, the note dmma_tma_copies says what, and the phases
// operand_copies and product time the two.
void launch_describable(int tile, const GemmArgs& a, ExecContext& ctx, const Readiness& r, bool shared) {
  GemmArgs b = a;
  std::string copies;
  auto copy = [&](const double*& p, int& ld, int rows, int cols, const char* name) {
    if (pipeline::wide_operand(p, ld)) return;
    const int pitch = (rows + dmma::kTmaCopyPitch - 1) / dmma::kTmaCopyPitch * dmma::kTmaCopyPitch;  // rows <= kMaxDim
    double* to = static_cast<double*>(ctx.device_scratch(sizeof(double) * static_cast<std::size_t>(pitch) * cols));
    const int blocks = static_cast<int>(std::min<long long>(cols, 8LL * r.sm_count));
    pitched_copy<<<blocks, kCopyThreads, 0, ctx.stream()>>>(p, ld, to, pitch, rows, cols);
    CUDA_CHECK_LAUNCH();
    copies += (copies.empty() ? "" : ", ") + std::string(name) + " (" + std::to_string(rows) + " x " +
              std::to_string(cols) + ", ld " + std::to_string(ld) + " -> " + std::to_string(pitch) + ")";
    p = to;
    ld = pitch;
  };
  copy(b.A, b.lda, a_rows(a), a.transa == Op::N ? a.K : a.M, "A");
  copy(b.B, b.ldb, b_rows(a), a.transb == Op::N ? a.N : a.K, "B");
  if (!copies.empty()) {
    ctx.notes()["dmma_tma_copies"] = copies;
    ctx.mark_phase("operand_copies");
  }
  launch_tile(tile, b, ctx, r, shared);
  if (!copies.empty()) ctx.mark_phase("product");
}

// Runs `tile` (copying the operands it cannot describe first), or dmma's rule where the tile has no code for this
// GPU; says which in the note dmma_tma_path (`name` the tile's).
void run_or_fall_back(int tile, const GemmArgs& a, ExecContext& ctx, const char* name, bool shared) {
  const Readiness r = readiness()[static_cast<std::size_t>(tile)];
  if (r.loads) {
    ctx.notes()["dmma_tma_path"] = std::string("tma ") + name;
    launch_describable(tile, a, ctx, r, shared);
    return;
  }
  ctx.notes()["dmma_tma_path"] =
      std::string("dmma: ") + (kBuilt ? "no sm_90a code for this GPU (compute capability 9.0 only)" : "built without sm_90a code");
  dmma::run_rule(a, ctx);
}

// The rule's choice on the current device: the TMA tile to run, or -1 for dmma's configuration.
int rule_pick(const GemmArgs& a, const TileReadiness& r, std::string* why) {
  bool loads[dmma::kTmaTileCount];
  dmma::Target t = dmma::current_target();
  for (int i = 0; i < dmma::kTmaTileCount; ++i) {
    loads[i] = r[static_cast<std::size_t>(i)].loads;
    t.tma_cluster_slots[static_cast<std::size_t>(i)] = r[static_cast<std::size_t>(i)].clusters * stream_k::kClusterSize;
  }
  const int pick = dmma::tma_pick(a.M, a.N, a.K, t, loads, copied_elements(a), why);
  const int swapped = dmma::tma_store_swap(a.M, a.N, a.K, t, loads, pick, c_by_tma_stores(a));
  if (why && swapped != pick)
    *why += std::string("; ") + dmma::kTmaTiles[swapped].name + " in its place (dmma::tma_store_swap)";
  return swapped;
}

void run_skinny(const GemmArgs& a, ExecContext& ctx) {
  const bool tc = skinny::tc_form(skinny::canonical(a));  // one pass: at most kSkinnyMaxSide rows or columns
  ctx.notes()["dmma_tma_path"] = "skinny " + skinny::describe(a) + " (C of at most " +
                                 std::to_string(dmma::kSkinnyMaxSide) + " rows or columns: " +
                                 (tc ? "the FP64 tensor cores" : "FP64 FMA") + ")";
  skinny::launch(a, ctx);
}

// The rule's choice: the skinny kernel for C of a few rows or columns; otherwise a TMA tile where it scores above
// dmma's configuration and can run, dmma otherwise.
void run_rule(const GemmArgs& a, ExecContext& ctx) {
  const dmma::Target t = dmma::current_target();
  if (dmma::skinny_pick(a.M, a.N, a.K, a.transa, a.transb, t) || dmma::skinny_split_pick(a, t.sm_count))
    return run_skinny(a, ctx);
  const TileReadiness r = readiness();
  std::string why;
  const int pick = rule_pick(a, r, &why);
  ctx.notes()["dmma_tma_path"] = why;
  if (pick >= 0)
    launch_describable(pick, a, ctx, r[static_cast<std::size_t>(pick)], true);
  else
    dmma::run_rule(a, ctx);
}

constexpr int kTmaCc = 90;

}  // namespace

bool dmma::tma_rule_runs_tma(const GemmArgs& a) { return rule_pick(a, readiness(), nullptr) >= 0; }

KS_GEMM_VARIANT({.info = {.name = "dmma_tma",
                          .summary = "FP64 tensor cores fed by the TMA: producer warp, mbarrier stages, setmaxnreg, "
                                     "persistent grid, stream-K last wave, split-K for small C summed in a Fenwick tree "
                                     "or in clusters through distributed shared memory; 128x128, 128x64 or 64x128, or 128x32 or 32x128 with two k-groups, or dmma, or the skinny kernel for C of at "
                                     "most 8 rows or columns, where the rule says; operands with an odd leading "
                                     "dimension copied first where that pays",
                          .min_cc = kTmaCc,
                          .phases = true},
                 .launch = run_rule,
                 .ops = kOpsAll});

// Each TMA kernel on its own, for autotuning and testing: one per row of dmma::kTmaTiles, then dmma::kTmaExtras.
KS_GEMM_VARIANTS([] {
  std::vector<GemmVariant> out;
  auto add = [&](int tile, const std::string& suffix, const char* name, const char* summary, bool shared) {
    out.push_back({.info = {.name = dmma::tma_variant_name(tile) + suffix,
                            .summary = summary,
                            .min_cc = kTmaCc,
                            .tuning = true,
                            .phases = true},
                   .launch = [=](const GemmArgs& a, ExecContext& ctx) { run_or_fall_back(tile, a, ctx, name, shared); },
                   .ops = kOpsAll});
  };
  for (int i = 0; i < dmma::kTmaTileCount; ++i) add(i, "", dmma::kTmaTiles[i].name, dmma::kTmaTiles[i].summary, true);
  for (const dmma::TmaExtra& e : dmma::kTmaExtras) add(e.tile, e.suffix, e.name, e.summary, false);
  return out;
});

}  // namespace ks::gemm
