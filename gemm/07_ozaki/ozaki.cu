// ozaki: DGEMM on the INT8 tensor cores (Ozaki scheme II; the scheme, its error and the rule: ozaki.hpp).
//
// One launch, on the context's stream (steps 3 and 4 beside each other from 16384^3: the pipeline below):
//   1. statistics: per row of A and column of B, the largest magnitude (as bits, so NaN wins), the sum of
//      magnitudes and the sum of squares; then per row the exponent e_i and factor m_i (norm scaling: from the sum
//      of squares, ozaki.hpp) and the rule's rho and tau; the host reads
//      A's and B's largest rho and tau and their bins back (one copy and a wait) and decides the moduli count, or
//      native DGEMM. Where a launch before decided for the same operands, step 2 for its decision is enqueued
//      behind the copy, so the GPU does not idle while the host decides, and kept where the decision is the same;
//   2. residues: A and B scaled, rounded to integers and reduced modulo every modulus in one pass each, written
//      K-major as int8 (an operand stored with M or N contiguous is transposed through shared memory) with zeros
//      up to K rounded to 16;
//   3. the INT8 GEMMs A_l^T B_l for every modulus (INT32 accumulation): on compute capability 9.0 by a wgmma
//      kernel of our own that stores each product reduced modulo m_l, one byte an element (residue_products,
//      int8_wgmma.cu); elsewhere by cuBLASLt, INT32 planes, one strided-batched call or one call per modulus, with
//      the algorithm timed fastest for the shape (int8_products);
//   4. recombination: per element, the residues of the products by the CRT in FP64 on 40-bit pieces, exact
//      where it matters (crt_values), then scaled back (divided by m_i n_j, times a power of two), alpha and beta
//      applied. Rows or columns holding Inf or NaN are computed there as plain dot products, so they reach C as in
//      native DGEMM.
// The pipeline (ozaki.hpp, pipeline_width; cuBLASLt's products only, unless forced): C in column blocks, block j's
// products on the context's priority stream and its recombination on the context's stream once they are done,
// beside block j + 1's products.
// With the context's phase timing on, each step ends with a mark: scaling (1), residues (2), int8_products (3),
// recombination (4), or in the pipeline products_and_recombination (3 and 4); or native.
// Under stream capture (CUDA graphs) the statistics cannot be read back: the launch reuses the decision made
// for the same operands (pointers, shape) by an earlier launch of this process, else takes kMaxModuli.
// Run: build/bench/kbench run --suite gemm --variants ozaki --sizes 4096,8192,16384
#include "gemm/07_ozaki/ozaki.hpp"
#include "gemm/07_ozaki/products.hpp"
#include "gemm/gemm.hpp"
#include "gemm/kernel_common.cuh"

#include <algorithm>
#include <climits>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace ks::gemm::ozaki {
namespace dev {

constexpr int kTile = 64;       // rows x k of one residue or statistics block
constexpr int kThreads = 256;   // 32 rows x 8 threads of 8 k each, twice (rows rr and rr + 32)
constexpr int kChunk = 8;       // k per thread and row
constexpr int kBad = INT_MIN;   // the exponent of a row or column holding Inf or NaN
constexpr double kSumScale = 0x1p-20;  // magnitudes summed times this: K < 2^17 sums of < 2^1024 stay finite

// Where element (rr, kk) of a kTile x kTile tile sits in shared memory: row rr at rr kTile, k swizzled by
// kk ^ ((kk / 8) % 8 ^ g(rr)), g(rr) = 8 (rr % 2) + (rr / 2) % 8. In 8-byte banks (16 of them), this keeps
// every access of the tiled kernels at the two wavefronts a warp of doubles needs: the load's stores (32
// consecutive rr at one kk, or 32 consecutive kk at one rr) and the reads (4 rows x 8 threads, each thread
// at kk = 8 j + i for one i: row rr's banks are those with bit 3 ^ bit 0 = i % 2 ^ g(rr) % 2 ^ g(rr) / 8,
// which flips between rr and rr + 1).
__device__ __forceinline__ int tile_swizzle(int rr) { return (rr & 1) << 3 | (rr >> 1 & 7); }
__device__ __forceinline__ int tile_index(int rr, int kk) {
  return rr * kTile + (kk ^ ((kk >> 3 & 7) ^ tile_swizzle(rr)));
}
// The chunk of row rr at kk0 = 8 j: element kk0 + i at base + (i ^ c), i in [0, 8), as tile_index has it.
struct TileChunk {
  int base, c;
};
__device__ __forceinline__ TileChunk tile_chunk(int rr, int kk0) {
  const int g = tile_swizzle(rr), j = kk0 >> 3;
  return {rr * kTile + (kk0 ^ (g & 8)), (j ^ g) & 7};
}

// A kTile x kTile tile of the view (rows r0.., k0..: A's rows, x[r + k ld], or B's columns, x[k + r ld]) into
// shared memory, zero outside R x K. Thread t takes the contiguous index t % kTile at every kSlowStep-th slow
// index from t / kTile, so each warp's load is one run of 256 bytes; all kLoads loads are issued before the
// first store, so that each thread has them all in flight at once.
template <bool KContiguous>
__device__ __forceinline__ void load_tile(double* t, const double* x, int ld, int R, int K, int r0, int k0) {
  constexpr int kSlowStep = kThreads / kTile, kLoads = kTile * kTile / kThreads;
  const int fast = threadIdx.x % kTile, slow0 = threadIdx.x / kTile;
  const int fast_at = (KContiguous ? k0 : r0) + fast, fast_end = KContiguous ? K : R;
  const int slow_at = (KContiguous ? r0 : k0) + slow0, slow_end = KContiguous ? R : K;
  const double* p = x + fast_at + static_cast<std::size_t>(slow_at) * ld;
  const std::size_t step = static_cast<std::size_t>(kSlowStep) * ld;
  const int in_range = fast_at < fast_end ? (slow_end - slow_at + kSlowStep - 1) / kSlowStep : 0;
  double v[kLoads];
#pragma unroll
  for (int n = 0; n < kLoads; ++n, p += step) v[n] = n < in_range ? *p : 0.0;
#pragma unroll
  for (int n = 0; n < kLoads; ++n) {
    const int slow = slow0 + n * kSlowStep;
    t[KContiguous ? tile_index(slow, fast) : tile_index(fast, slow)] = v[n];
  }
}

// Where a block of the tiled kernels (a one-dimensional grid over row_tiles x k_tiles tiles of 64 x 64) works.
// The residue and coarse kernels take the k tiles fastest: the blocks resident at once then cover a few row tiles
// over all of K, so each row's bytes of a plane are written in one run. With the row tiles fastest they wrote one
// 64-byte piece of every row of 14 planes (3.8 GB apart at 16384^3) at a time: the residues took 6.2 ms there
// against 4.3 (H100; docs/gemm-notes.md, step 39). The statistics kernel, which only reads, keeps the row tiles
// fastest: 1.48 ms against 1.63 the other way.
struct TileOrder {
  int row_tiles, k_tiles;
  bool k_fastest;
};
struct TileOrigin {
  int r0, k0;
};
__device__ __forceinline__ TileOrigin tile_origin(const TileOrder& o, int b = blockIdx.x) {
  return o.k_fastest ? TileOrigin{b / o.k_tiles * kTile, b % o.k_tiles * kTile}
                     : TileOrigin{b % o.row_tiles * kTile, b / o.row_tiles * kTile};
}

// This thread's row of the tile in pass 0 or 1 and its first k (kChunk each, 8 threads per row), and their
// place in the view; false where the row or k lies outside R x Kp.
__device__ __forceinline__ bool tile_slot(TileOrigin o, int pass, int R, int Kp, int& rr, int& kk0, int& r, int& k) {
  rr = threadIdx.x / 8 + pass * (kTile / 2);
  kk0 = threadIdx.x % 8 * kChunk;
  r = o.r0 + rr;
  k = o.k0 + kk0;
  return r < R && k < Kp;
}

// A per-row value (the exponents, the factors) of this thread's rows in passes 0 and 1 (`none` where tile_slot says
// none), read before the tile: a kernel that loads e[r] after the tile's barrier makes every warp of the block wait
// out that load's latency once per pass (in the residue kernel, 40% of the warps' stall cycles; ncu, H100).
template <class T>
struct RowValues {
  T pass0, pass1;
  __device__ __forceinline__ T of(int pass) const { return pass ? pass1 : pass0; }
};
template <class T>
__device__ __forceinline__ RowValues<T> row_values(TileOrigin o, int R, int Kp, const T* v, T none) {
  int rr, kk0, r, k;
  RowValues<T> x{none, none};
  if (tile_slot(o, 0, R, Kp, rr, kk0, r, k)) x.pass0 = v[r];
  if (tile_slot(o, 1, R, Kp, rr, kk0, r, k)) x.pass1 = v[r];
  return x;
}

// x 2^d for d in [-2100, 2100] as (x 2^(d/2)) 2^(d - d/2): two multiplications by normal powers of two, the
// same result as ldexp wherever it is at least 2^-1022 in magnitude (where the result is smaller, both are
// below 1/2, which is all the rounding to integers below needs).
struct Pow2 {
  double lo, hi;
};
// 2^e for e in [-1022, 1023] (a normal double), from its bits.
__device__ __forceinline__ double normal_pow2(int e) {
  return __hiloint2double((e + 1023) << 20, 0);
}
// An unsigned or signed 32-bit integer as a double without a conversion instruction (one FP64 add): the double whose
// high word is 0x43300000 is 2^52 plus its low word, so 2^52 + u less 2^52, or 2^52 + 2^31 + h less both offsets.
__device__ __forceinline__ double uint_as_double(unsigned u) {
  return __hiloint2double(0x43300000, static_cast<int>(u)) - 0x1p52;
}
__device__ __forceinline__ double int_as_double(int h) {
  return __hiloint2double(0x43300000, h ^ static_cast<int>(0x80000000)) - 0x1.00000800p52;
}
__device__ __forceinline__ Pow2 pow2(int d) {
  const int h = d / 2;
  return {normal_pow2(h), normal_pow2(d - h)};
}
__device__ __forceinline__ double times(double x, Pow2 p) { return x * p.lo * p.hi; }

// One operand's view for the statistics: its rows (A's, or B's columns), their tiles' order, where each row's
// largest magnitude (as bits) accumulates, and where each tile's sums of magnitudes and of squares go: row r's sums
// over k tile kt at sum[kt stride + r] and sumsq[kt stride + r], each slot written once (sum_slots_kernel adds them
// in k order, so that the sums do not depend on the order the blocks ran in).
struct StatsView {
  const double* x;
  int ld, R;
  TileOrder order;
  unsigned long long* amax;
  double* sum;
  double* sumsq;
  std::size_t stride;
};

// Tile b of one view (t: the block's shared tile).
template <bool KContiguous>
__device__ __forceinline__ void stats_tile(double* t, const StatsView& v, int K, int b) {
  const TileOrigin o = tile_origin(v.order, b);
  const std::size_t slots = static_cast<std::size_t>(o.k0 / kTile) * v.stride;  // this k tile's slots
  load_tile<KContiguous>(t, v.x, v.ld, v.R, K, o.r0, o.k0);
  __syncthreads();
  for (int pass = 0; pass < 2; ++pass) {
    int rr, kk0, r, k;
    tile_slot(o, pass, v.R, K, rr, kk0, r, k);
    const TileChunk ch = tile_chunk(rr, kk0);
    unsigned long long m = 0;
    double s = 0, s2 = 0;
#pragma unroll
    for (int i = 0; i < kChunk; ++i) {
      const double x = fabs(t[ch.base + (i ^ ch.c)]);
      m = max(m, static_cast<unsigned long long>(__double_as_longlong(x)));  // NaN's bits above Inf's
      s += x * kSumScale;
      s2 += (x * kSumScale) * (x * kSumScale);
    }
    for (int o = 1; o < 8; o <<= 1) {
      m = max(m, __shfl_xor_sync(0xffffffffu, m, o));
      s += __shfl_xor_sync(0xffffffffu, s, o);
      s2 += __shfl_xor_sync(0xffffffffu, s2, o);
    }
    if (threadIdx.x % 8 == 0 && r < v.R) {
      atomicMax(v.amax + r, m);  // a maximum: the same whatever the order
      v.sum[slots + r] = s;
      v.sumsq[slots + r] = s2;
    }
  }
}

// The statistics of A's tiles (blocks [0, blocks_a)) and B's (the rest) in one launch: one ramp and one drain of
// the grid instead of two (two launches at 2816^3 ran 26.7 and 26.6 us at 74-75% of DRAM's peak, their SMs busy
// 81-86% of the elapsed cycles; one launch 46-47 us at 82-84%; ncu, H100, docs/gemm-notes.md, step 55).
template <bool KContiguousA, bool KContiguousB>
__global__ void __launch_bounds__(kThreads) stats_kernel(StatsView a, StatsView b, int K, unsigned blocks_a) {
  __shared__ double t[kTile * kTile];
  if (blockIdx.x < blocks_a) stats_tile<KContiguousA>(t, a, K, static_cast<int>(blockIdx.x));
  else stats_tile<KContiguousB>(t, b, K, static_cast<int>(blockIdx.x - blocks_a));
}

// Each row's sums (R rows, k_tiles slots of each, R apart: StatsView's stride) added in k order into sum[r] and
// sumsq[r]: the statistics' bits are then the same on every launch (with atomic adds they could differ in the last
// bits, and a row's exponent, the count or the split with them, where a sum sat at a threshold). A block takes 32
// rows: warp w adds the slots kt = w, w + 8, ... in order, loads coalesced across the rows, and the eight warps'
// sums are then added in warp order.
constexpr int kSumWarps = 8;
__global__ void __launch_bounds__(32 * kSumWarps) sum_slots_kernel(std::size_t R, int k_tiles, const double* slots_sum,
                                                                   const double* slots_sumsq, double* sum,
                                                                   double* sumsq) {
  __shared__ double part[2][kSumWarps][32];
  const int lane = threadIdx.x % 32, w = threadIdx.x / 32;
  const std::size_t r = static_cast<std::size_t>(blockIdx.x) * 32 + lane;
  double s = 0, s2 = 0;
  if (r < R)
    for (int kt = w; kt < k_tiles; kt += kSumWarps) {
      s += slots_sum[kt * R + r];
      s2 += slots_sumsq[kt * R + r];
    }
  part[0][w][lane] = s;
  part[1][w][lane] = s2;
  __syncthreads();
  if (w == 0 && r < R) {
    for (int i = 1; i < kSumWarps; ++i) {
      s += part[0][i][lane];
      s2 += part[1][i][lane];
    }
    sum[r] = s;
    sumsq[r] = s2;
  }
}

// The bits of a non-negative value as a running maximum holds them (NaN as Inf).
__device__ __forceinline__ unsigned long long max_bits(double v) {
  return static_cast<unsigned long long>(__double_as_longlong(isnan(v) ? INFINITY : v));
}

// rho of a finite non-zero row, 2^ex K / (sum |x|) (>= 1; sum as the statistics hold it, times kSumScale).
__device__ __forceinline__ double row_rho(int K, double sum, int ex) {
  return ldexp(static_cast<double>(K) / sum, ex) * kSumScale;
}

// The rows whose tau the statistics measure: largest magnitude in [2^-400, 2^400]. Their sums of squares (times
// kSumScale^2) cannot overflow, and the squares that underflow (elements below 2^-500) weigh less than 2^-180 of
// the largest one's; any other row keeps tau's bound, sqrt(rho).
constexpr double kTauLow = 0x1p-400, kTauHigh = 0x1p400;

// The largest of a warp's values (bits of non-negative doubles, 0 for none) into *at: one atomic a warp, not one a
// row (every row of an operand updates the same word, so per-row atomics queue up: 9 us for 4096 rows on the H100).
__device__ __forceinline__ void warp_atomic_max(unsigned long long* at, unsigned long long bits) {
  for (int o = 16; o > 0; o >>= 1) bits = max(bits, __shfl_xor_sync(0xffffffffu, bits, o));
  if (threadIdx.x % 32 == 0 && bits) atomicMax(at, bits);
}

// The slots of one operand's rho bins (ozaki.hpp, RhoBins): per bin its count, then the bits of its largest rho and
// of its largest tau.
constexpr int kBinSlots = 3 * kRhoBins;

// Each thread's row into its bin: slot is the bin's count's (b for A's bin b, kBinSlots + b for B's; < 0: none).
// The block gathers its rows' bins in shared memory and adds them to the grid's with one atomic per slot in use
// (an operand's rows land in a few bins; an atomic per row or warp on the same few words would queue up). Every
// thread of the block calls it.
__device__ __forceinline__ void block_bin(unsigned long long* bins, int slot, unsigned long long rho_bits,
                                          unsigned long long tau_bits) {
  __shared__ unsigned long long gathered[2 * kBinSlots];
  for (int i = threadIdx.x; i < 2 * kBinSlots; i += blockDim.x) gathered[i] = 0;
  __syncthreads();
  // Each warp's rows per slot first (its rows fall in a few bins): one shared atomic per slot a warp, where one per
  // row queued 256 deep on the same words (exponents_kernel took 11 us over 5632 rows; ncu, H100, step 55).
  for (unsigned pending = __ballot_sync(0xffffffffu, slot >= 0); pending;) {
    const int s = __shfl_sync(0xffffffffu, slot, __ffs(pending) - 1);
    const bool mine = slot == s;
    const unsigned group = __ballot_sync(0xffffffffu, mine);
    unsigned long long rb = mine ? rho_bits : 0, tb = mine ? tau_bits : 0;
    for (int o = 16; o > 0; o >>= 1) {
      rb = max(rb, __shfl_xor_sync(0xffffffffu, rb, o));
      tb = max(tb, __shfl_xor_sync(0xffffffffu, tb, o));
    }
    if (threadIdx.x % 32 == static_cast<unsigned>(__ffs(group) - 1)) {
      atomicAdd(&gathered[s], static_cast<unsigned long long>(__popc(group)));
      atomicMax(&gathered[kRhoBins + s], rb);
      atomicMax(&gathered[2 * kRhoBins + s], tb);
    }
    pending &= ~group;
  }
  __syncthreads();
  for (int i = threadIdx.x; i < 2 * kBinSlots; i += blockDim.x) {
    const int within = i % kBinSlots;  // count, largest rho or largest tau of bin within % kRhoBins
    if (gathered[i - within + within % kRhoBins] == 0) continue;  // the bin holds none of the block's rows
    if (within < kRhoBins) atomicAdd(bins + i, gathered[i]);
    else atomicMax(bins + i, gathered[i]);
  }
}

// Per row of A (r < M) and of B (r >= M, R = M + N rows in all): e (amax < 2^e), or kBad; over each operand's
// finite non-zero rows, the largest rho = 2^e / mean |x| into rho_max[0] (A) or rho_max[1] (B) and the largest
// tau = rms / mean |x| = sqrt(K sum x^2) / sum |x| (at most sqrt(rho): rms^2 <= max |x| mean |x|) into tau_max[0]
// or [1], and each such row into its rho bin (kBinSlots slots from bins: A's, then B's). With `norm`, e is the
// row's norm exponent (ozaki.hpp, norm_exponent) where its tau is measured, rho is taken at it, and the largest
// magnitudes' rho goes to spread_max[0] or [1] (without, the same as rho); with `exact` as well, the row's factor
// (ozaki.hpp, norm_factor) goes to m_out[r], its reciprocal (rounded) to m_out[R + r], and rho is divided by it (every
// other row's factor: 1). The block is whole warps, each thread one row.
__global__ void exponents_kernel(std::size_t M, std::size_t R, int K, bool norm, bool exact,
                                 const unsigned long long* amax, const double* sum, const double* sumsq, int* e,
                                 double* m_out, unsigned long long* rho_max,
                                 unsigned long long* tau_max, unsigned long long* bins,
                                 unsigned long long* spread_max) {
  const std::size_t r = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned long long rho_bits = 0, tau_bits = 0, spread_bits = 0;
  int bin = -1;
  if (r < R) {
    const double m = __longlong_as_double(static_cast<long long>(amax[r]));
    double factor = 1;
    int ex = kBad;
    if (isfinite(m)) {
      ex = 0;
      if (m > 0) {
        frexp(m, &ex);
        const double spread = row_rho(K, sum[r], ex);
        double tau = sqrt(spread);
        const bool measured = m >= kTauLow && m <= kTauHigh;
        if (measured) tau = fmin(tau, sqrt(K * sumsq[r]) / sum[r]);
        const double rms = sqrt(sumsq[r] / K) / kSumScale;
        const int used = norm && measured ? norm_exponent(rms, ex) : ex;
        if (norm && measured && exact) factor = norm_factor(rms, used, ex);
        const double rho = (used == ex ? spread : row_rho(K, sum[r], used)) / factor;
        rho_bits = max_bits(rho);
        tau_bits = max_bits(tau);
        spread_bits = max_bits(spread);
        bin = isfinite(rho) ? rho_bin(rho) : kRhoBins - 1;  // an infinite rho (or tau) makes the estimate infinite
        ex = used;
      }
    }
    e[r] = ex;
    m_out[r] = factor;
    m_out[R + r] = 1 / factor;
  }
  // A warp may hold rows of both operands: each side's maximum apart.
  const bool b_row = r >= M;
  warp_atomic_max(rho_max, b_row ? 0 : rho_bits);
  warp_atomic_max(rho_max + 1, b_row ? rho_bits : 0);
  warp_atomic_max(tau_max, b_row ? 0 : tau_bits);
  warp_atomic_max(tau_max + 1, b_row ? tau_bits : 0);
  warp_atomic_max(spread_max, b_row ? 0 : spread_bits);
  warp_atomic_max(spread_max + 1, b_row ? spread_bits : 0);
  block_bin(bins, bin < 0 ? -1 : b_row ? kBinSlots + bin : bin, rho_bits, tau_bits);
}

// Row i of the coarse product W (M x N, column-major, ld ldw): its largest element into wmax[i] (atomics over
// the column ranges of the grid's y blocks).
__global__ void coarse_row_max_kernel(int M, int N, const int* W, int ldw, unsigned* wmax) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= M) return;
  unsigned m = 0;
  for (int j = blockIdx.y; j < N; j += gridDim.y) m = max(m, static_cast<unsigned>(W[i + static_cast<std::size_t>(j) * ldw]));
  atomicMax(wmax + i, m);
}

// The coarse shift of each row (from wmax; columns: given) and, over the finite non-zero rows, the largest
// rho_i 2^-min(s_i, c) for every cap c (ozaki.hpp, Shifts), into rho_eff[0..kShiftCap]. The block is whole warps.
__global__ void coarse_shift_kernel(int R, int K, const unsigned* wmax, const unsigned long long* amax,
                                    const double* sum, const int* e, int* shift, unsigned long long* rho_eff) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  bool counts = false;
  int s = 0, er = 0;
  double sr = 0;
  if (r < R) {
    s = wmax ? coarse_shift(wmax[r], K) : shift[r];
    if (wmax) shift[r] = s;
    const double m = __longlong_as_double(static_cast<long long>(amax[r]));
    er = e[r];
    sr = sum[r];
    counts = er != kBad && m > 0;
  }
  for (int c = 0; c <= kShiftCap; ++c)
    warp_atomic_max(rho_eff + c, counts ? max_bits(row_rho(K, sr, er - min(s, c))) : 0);
}

// The shifts the decision leaves room for, folded into the exponents: e_r -= min(s_r, cap).
__global__ void apply_shifts_kernel(int R, const int* shift, int cap, int* e) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < R && e[r] != kBad) e[r] -= min(shift[r], cap);
}

// Column j of W: t_j from max_i 2^s_i W_ij (s the rows' shifts), one block per column.
__global__ void coarse_col_shift_kernel(int M, int K, const int* W, int ldw, const int* s_row, int* t_col) {
  const int j = blockIdx.x;
  const int* w = W + static_cast<std::size_t>(j) * ldw;
  unsigned long long m = 0;
  for (int i = threadIdx.x; i < M; i += blockDim.x)
    m = max(m, static_cast<unsigned long long>(static_cast<unsigned>(w[i])) << s_row[i]);
  for (int o = 16; o > 0; o >>= 1) m = max(m, __shfl_xor_sync(0xffffffffu, m, o));
  __shared__ unsigned long long part[32];
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int t = 1; t < static_cast<int>(blockDim.x / 32); ++t) m = max(m, part[t]);
    t_col[j] = coarse_shift(m, K);
  }
}

// The low bytes of four words into one, least significant first, each byte XOR x.
__device__ __forceinline__ unsigned pack4(unsigned b0, unsigned b1, unsigned b2, unsigned b3, unsigned x) {
  return __byte_perm(__byte_perm(b0, b1, 0x0040), __byte_perm(b2, b3, 0x0040), 0x5410) ^ x;
}
// Eight bytes (each in [0, 256)) into two words, least significant first, each byte XOR x.
__device__ __forceinline__ uint2 pack8(const unsigned (&b)[kChunk], unsigned x) {
  return make_uint2(pack4(b[0], b[1], b[2], b[3], x), pack4(b[4], b[5], b[6], b[7], x));
}

// Accurate scaling's U (or V): ceil(|x| 2^(kCoarseBits - e_r)) in [0, 64], laid out as one modulus's residues
// (below); zero for rows marked kBad.
template <bool KContiguous>
__global__ void __launch_bounds__(kThreads) coarse_kernel(const double* x, int ld, int R, int K, int Kp,
                                                          TileOrder order, const int* e, signed char* out) {
  __shared__ double t[kTile * kTile];
  const TileOrigin o = tile_origin(order);
  const RowValues<int> ex = row_values(o, R, Kp, e, 0);
  load_tile<KContiguous>(t, x, ld, R, K, o.r0, o.k0);
  __syncthreads();
  for (int pass = 0; pass < 2; ++pass) {
    int rr, kk0, r, k;
    if (!tile_slot(o, pass, R, Kp, rr, kk0, r, k)) continue;
    const int er = ex.of(pass);
    uint2* dst = reinterpret_cast<uint2*>(out + static_cast<std::size_t>(r) * Kp + k);
    if (er == kBad) {
      *dst = make_uint2(0, 0);
      continue;
    }
    const Pow2 f = pow2(kCoarseBits - er);
    const TileChunk ch = tile_chunk(rr, kk0);
    unsigned u[kChunk];
#pragma unroll
    for (int i = 0; i < kChunk; ++i) u[i] = static_cast<unsigned>(ceil(times(fabs(t[ch.base + (i ^ ch.c)]), f)));
    *dst = pack8(u, 0);
  }
}

// Whether the residues kernel gives half of its values to the FP64 form: where the FP64 units run at half the FP32
// rate (compute capability 6.0, 7.0, 8.0, 9.0, 10.0: P100, V100, A100, H100 and H200, B200). On the others (sm_75,
// sm_86, sm_89 and the like: 1/32 or 1/64 of it) five FP64 operations a modulus would cost far more than the integer
// form's six, so the integer form takes all eight.
__device__ constexpr bool fp64_residues() {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 600 || __CUDA_ARCH__ == 700 || __CUDA_ARCH__ == 800 || \
                               __CUDA_ARCH__ == 900 || __CUDA_ARCH__ == 1000)
  return true;
#else
  return false;
#endif
}

// 1/m_l for the FP64 residues (fp64_residue), where the kernels read it as an operand from the constant bank: as a
// compile-time constant, ptxas held each modulus's in two registers across the loop over a thread's elements.
struct InvModuli {
  double v[kMaxModuli];
};
template <std::size_t... L>
constexpr InvModuli inv_moduli(std::index_sequence<L...>) {
  return {{fp64_residue_constants(static_cast<int>(L)).inv_m...}};
}
__constant__ InvModuli kInvModuli = inv_moduli(std::make_index_sequence<kMaxModuli>{});

// The residues of round-to-nearest(x 2^(q - e_r) m_r) modulo every modulus (m_r the row's factor, ozaki.hpp:
// round_scaled), int8, row r of the view at out[l stride + r Kp + k]; zero for k in [K, Kp) and for rows marked
// kBad. Modulus 256's byte is v's own. For the others a thread's first four values take the integer form: each
// is split once into the pieces of residue_plus_128 (two multiply-adds, an add, a multiply-high, a shift and a
// multiply-subtract a modulus, where a 64-bit remainder by a constant costs several times as many instructions;
// ten cycles of the integer multiplier, the FMA pipe's heavy half, a warp). Its last four take the FP64 form: v's
// halves as doubles (fp64_residue: five FP64 operations, ten cycles of the FP64 pipe). So both pipes share the
// work, and each modulus's eight bytes are still one 8-byte store (docs/gemm-notes.md, step 70). Where the FP64
// units run at a small fraction of the FP32 rate (fp64_residues), all eight take the integer form.
template <int N, bool KContiguous>
__global__ void __launch_bounds__(kThreads, 4) residues_kernel(const double* x, int ld, int R, int K, int Kp,
                                                               TileOrder order, const int* e, const double* m, int q,
                                                               signed char* out, std::size_t stride) {
  __shared__ double t[kTile * kTile];
  const TileOrigin o = tile_origin(order);
  const RowValues<int> ex = row_values(o, R, Kp, e, 0);
  const RowValues<double> mr = row_values(o, R, Kp, m, 1.0);
  load_tile<KContiguous>(t, x, ld, R, K, o.r0, o.k0);
  __syncthreads();
  for (int pass = 0; pass < 2; ++pass) {
    int rr, kk0, r, k;
    if (!tile_slot(o, pass, R, Kp, rr, kk0, r, k)) continue;
    const int er = ex.of(pass);
    signed char* dst = out + static_cast<std::size_t>(r) * Kp + k;
    if (er == kBad) {
#pragma unroll
      for (int l = 0; l < N; ++l) *reinterpret_cast<uint2*>(dst + l * stride) = make_uint2(0, 0);
      continue;
    }
    const Pow2 f = pow2(q - er);
    const double mf = mr.of(pass);
    const TileChunk ch = tile_chunk(rr, kk0);
    // The first kInt values take the integer form, the other kFp (none, or the last four) the FP64 form.
    constexpr int kInt = fp64_residues() ? kChunk / 2 : kChunk, kFp = kChunk - kInt;
    static_assert(kFp == 0 || kFp == kInt, "value i of the FP64 form goes beside value i of the integer form");
    unsigned low[kChunk], w[kInt], v1[kInt], v0[kInt];
    double hi[kFp > 0 ? kFp : 1], lo[kFp > 0 ? kFp : 1];
#pragma unroll
    for (int i = 0; i < kChunk; ++i) {
      const long long v = round_scaled(times(t[ch.base + (i ^ ch.c)], f), mf);
      low[i] = static_cast<unsigned>(v);
      if (i < kInt) {
        residue_pieces(v, w[i], v1[i], v0[i]);
      } else {  // v's halves as doubles
        hi[i - kInt] = int_as_double(static_cast<int>(v >> 32));
        lo[i - kInt] = uint_as_double(low[i]);
      }
    }
    *reinterpret_cast<uint2*>(dst) = pack8(low, 0);  // modulus 256: v mod 256 is v's low byte, as int8
#pragma unroll
    for (int l = 1; l < N; ++l) {
      Fp64ResidueConstants c = fp64_residue_constants(l);
      c.inv_m = kInvModuli.v[l];
      unsigned b[kChunk];
#pragma unroll
      for (int i = 0; i < kInt; ++i) {
        b[i] = residue_plus_128(w[i], v1[i], v0[i], l);
        if constexpr (kFp > 0) b[i + kInt] = static_cast<unsigned>(__double2loint(fp64_residue(hi[i], lo[i], c)));
      }
      constexpr unsigned kFlipHigh = kFp > 0 ? 0 : 0x80808080u;  // the FP64 form's bytes are the residues as they are
      *reinterpret_cast<uint2*>(dst + l * stride) =
          make_uint2(pack4(b[0], b[1], b[2], b[3], 0x80808080u), pack4(b[4], b[5], b[6], b[7], kFlipHigh));
    }
  }
}

// X of R elements from their INT32 products p[r][l] (the residues are p_l mod m_l), or with Reduced from the residues
// themselves (in [0, m_l)), into x[r]. In FP64, exactly where it matters (ozaki.hpp, Crt): the sums
// s_t = sum_l r_l wd[l][t] of each 40-bit piece are exact, so S = sum_t s_t 2^(40 t) = sum_l r_l w_l is held
// exactly; n = round(S / P) from S's double (relative error about 2^-52, while X / P lies in (-1/2, 1/2)); the
// pieces of X = S - n P, s_t - n pd[t], are exact integers below 2^53; X is their sum in two or three roundings
// (within one unit in the last place; where the pieces cancel, the leading ones' sum is small and exact).
// The R elements go through the sums together, each weight read once for all of them: element by element the
// compiler read each weight from the constant bank again for every element, about a sixth of the recombination's
// instructions (docs/gemm-notes.md, step 69).
template <int N, bool Reduced, int R>
__device__ __forceinline__ void crt_values(const int (&p)[R][N], const Crt& c, double (&x)[R]) {
  constexpr int T = pieces(N);
  double s[R][T] = {};
#pragma unroll
  for (int l = 0; l < N; ++l) {
    const int m = modulus(l);
    double rd[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      int v = p[r][l];
      if constexpr (!Reduced) {
        v %= m;
        v += v < 0 ? m : 0;
      }
      rd[r] = uint_as_double(static_cast<unsigned>(v));  // v in [0, 256)
    }
#pragma unroll
    for (int t = 0; t < T; ++t) {
      const double w = c.wd[l][t];
#pragma unroll
      for (int r = 0; r < R; ++r) s[r][t] = fma(rd[r], w, s[r][t]);
    }
  }
#pragma unroll
  for (int r = 0; r < R; ++r) {
    double S = s[r][T - 1];
#pragma unroll
    for (int t = T - 2; t >= 0; --t) S = fma(S, 0x1p40, s[r][t]);
    const double n = rounded_product(S, c.inv_P);  // |S / P| < 2^13
    double xr = fma(-n, c.pd[T - 1], s[r][T - 1]);
#pragma unroll
    for (int t = T - 2; t >= 0; --t) xr = fma(xr, 0x1p40, fma(-n, c.pd[t], s[r][t]));
    x[r] = xr;
  }
}

// x 2^e, rounded once as ldexp rounds it: where 2^e is a normal double, one multiplication (the exact product rounded
// once) in place of ldexp's range handling; ldexp elsewhere.
__device__ __forceinline__ double scaled_by_pow2(double x, int e) {
  if (e >= -1022 && e <= 1023) return x * normal_pow2(e);
  return ldexp(x, e);
}

// x / d for d = m_i n_j, the factors' product (exact, ozaki.hpp: norm_factor), from inv within a few units of
// 1 / d (the product of their rounded reciprocals): the quotient x inv corrected once by its remainder (exact by an
// FMA), within about half a unit of x / d. Where d = 1 (the power-of-two scalings), x itself.
__device__ __forceinline__ double divide_by_factors(double x, double d, double inv) {
  if (d == 1) return x;
  const double q = x * inv;
  return fma(fma(-q, d, x), inv, q);
}

// Rows of C per thread of the recombination: each product is read with one 16-byte load (ldp is a multiple of
// 4, the products 256-byte aligned), or each residue byte plane with one 4-byte load, so the addressing and the
// per-thread work are shared by four elements.
constexpr int kRecombineRows = 4;
constexpr int kRecombineThreads = 128;

// Four consecutive products of one plane as loaded: residue_products' bytes packed in a word (unsigned char), or
// INT32 products (int); element r of them by extract().
template <class P>
using Four = std::conditional_t<std::is_same_v<P, unsigned char>, unsigned, int4>;
// Byte r of w, zero-extended (one PRMT).
__device__ __forceinline__ int extract(unsigned w, int r) { return __byte_perm(w, 0, 0x4440 | r); }
__device__ __forceinline__ int extract(const int4& q, int r) { return r == 0 ? q.x : r == 1 ? q.y : r == 2 ? q.z : q.w; }
__device__ __forceinline__ void put(unsigned& w, int r, unsigned char x) { w |= static_cast<unsigned>(x) << (8 * r); }
__device__ __forceinline__ void put(int4& q, int r, int x) { (r == 0 ? q.x : r == 1 ? q.y : r == 2 ? q.z : q.w) = x; }

// C_ij = alpha X_ij 2^(e_i + f_j - S) / (m_i n_j) + beta C_ij (S = qa + qb; m_i and n_j the rows' and columns'
// factors, ma and mb, their reciprocals at ma + ldm and mb + ldm), X_ij from its products P (int: INT32 products;
// unsigned char: residues). `a` gives op(A) and op(B) for the rows and columns holding Inf or NaN. Rows from M to
// ldp are never read (initcheck-clean).
// A thread computes four consecutive rows, but C is written through shared memory, each of a warp's stores 32
// consecutive rows: four 8-byte stores 32 bytes apart across the lanes wrote every 32-byte sector in four pieces,
// which cost a fifth to a third of the kernel's time (docs/gemm-notes.md, step 47).
template <int N, class P>
__global__ void __launch_bounds__(kRecombineThreads) recombine_kernel(int M, int Ncols, int K, int S, const P* prod,
                                                                      int ldp, std::size_t p_stride, const int* ea,
                                                                      const int* fb, const double* ma,
                                                                      const double* mb, std::size_t ldm, Crt c,
                                                                      GemmArgs a) {
  constexpr bool kReduced = std::is_same_v<P, unsigned char>;
  constexpr int kWarpRows = 32 * kRecombineRows;
  __shared__ double staged[kRecombineThreads * kRecombineRows];
  const int lane = threadIdx.x % 32;
  double* const warp_rows = staged + (threadIdx.x / 32) * kWarpRows;
  const int i0 = (blockIdx.x * blockDim.x + threadIdx.x) * kRecombineRows;
  const int warp_i0 = i0 - lane * kRecombineRows;
  if (warp_i0 >= M) return;  // the whole warp (it syncs below)
  for (int j = blockIdx.y; j < Ncols; j += gridDim.y) {
    const P* p = prod + static_cast<std::size_t>(j) * ldp + i0;
    Four<P> four[N];
    if (i0 + kRecombineRows <= M) {
#pragma unroll
      for (int l = 0; l < N; ++l) four[l] = *reinterpret_cast<const Four<P>*>(p + l * p_stride);
    } else {
#pragma unroll
      for (int l = 0; l < N; ++l) {
        four[l] = {};
#pragma unroll
        for (int r = 0; r < kRecombineRows; ++r)
          if (i0 + r < M) put(four[l], r, p[l * p_stride + r]);
      }
    }
    const int fj = fb[j];
    const double nj = mb[j], inv_nj = mb[ldm + j];
    int v[kRecombineRows][N];
#pragma unroll
    for (int r = 0; r < kRecombineRows; ++r)
#pragma unroll
      for (int l = 0; l < N; ++l) v[r][l] = extract(four[l], r);
    double x[kRecombineRows];
    crt_values<N, kReduced>(v, c, x);  // rows past M: residues 0 (never stored)
#pragma unroll
    for (int r = 0; r < kRecombineRows; ++r) {
      const int i = i0 + r;
      if (i >= M) break;
      const int ei = ea[i];
      if (ei == kBad || fj == kBad) {  // Inf or NaN in the row or column: the plain dot product, as native
        x[r] = 0;
#pragma unroll 1
        for (int k = 0; k < K; ++k) x[r] = fma(a.A[a.a_index(i, k)], a.B[a.b_index(k, j)], x[r]);
      } else {
        x[r] = scaled_by_pow2(divide_by_factors(x[r], ma[i] * nj, ma[ldm + i] * inv_nj), ei + fj - S);
      }
    }
    sync_warp();  // the warp's stores of the column before have read warp_rows
#pragma unroll
    for (int r = 0; r < kRecombineRows; ++r) warp_rows[lane * kRecombineRows + r] = x[r];
    sync_warp();
    double* const cj = a.C + static_cast<std::size_t>(j) * a.ldc;
#pragma unroll
    for (int q = 0; q < kRecombineRows; ++q) {
      const int i = warp_i0 + q * 32 + lane;
      if (i < M) scale_store(cj + i, a.alpha, a.beta, warp_rows[q * 32 + lane]);
    }
  }
}

}  // namespace dev

namespace {

// Device scratch of one launch: the statistics, then (once the count is known) the residues and products.
struct DeviceStats {
  unsigned long long* amax;  // M + N
  double* sum;               // M + N
  double* sumsq;             // M + N
  int* e;                    // M + N
  double* m;                 // M + N factors (exact norm scaling; else all 1), then their M + N reciprocals
  unsigned long long* rho;   // the slots below: A's and B's rho and tau; with accurate scaling the effective rho
  int* shift;                // M + N coarse shifts (accurate scaling), else null
};
// st.rho's slots: A's rho, B's rho, A's tau, B's tau, A's rho bins and B's (dev::kBinSlots each), A's and B's spread
// (Stats); with accurate scaling then kShiftCap + 1 of A's effective rho (one per cap), and as many of B's.
constexpr int kRhoA = 0, kRhoB = 1, kTauA = 2, kTauB = 3, kBinsA = 4, kBinsB = kBinsA + dev::kBinSlots;
constexpr int kSpreadA = kBinsB + dev::kBinSlots, kSpreadB = kSpreadA + 1;
constexpr int kShiftedA = kSpreadB + 1, kShiftedB = kShiftedA + kShiftCap + 1;
constexpr int kRhoSlots = kShiftedB + kShiftCap + 1;

// The row views of the operands: A's rows are op(A)'s (k contiguous where op(A) = A^T), B's are op(B)'s columns
// (k contiguous where op(B) = B). Calls f(std::bool_constant<KContiguous>) for the view of A (b false) or B.
template <class F>
void with_view(const GemmArgs& a, bool b, F&& f) {
  const bool k_contiguous = b ? a.transb == Op::N : a.transa == Op::T;
  if (k_contiguous)
    f(std::true_type{});
  else
    f(std::false_type{});
}

// The grid of the tiled kernels (statistics, coarse values, residues) over R rows of a view K deep, in the order
// k_fastest says (dev::TileOrder).
struct Tiled {
  unsigned blocks;
  dev::TileOrder order;
};
Tiled tiled(int R, int K, bool k_fastest) {
  const int row_tiles = (R + dev::kTile - 1) / dev::kTile, k_tiles = (K + dev::kTile - 1) / dev::kTile;
  const long long blocks = static_cast<long long>(row_tiles) * k_tiles;
  if (blocks > INT_MAX) throw std::runtime_error("ozaki: an operand of more than 2^31 - 1 tiles of 64 x 64");
  return {static_cast<unsigned>(blocks), {row_tiles, k_tiles, k_fastest}};
}

// Throws workspace_refusal's message where w does not fit what the device has free plus this context's scratch.
// Where this launch's scratch can still take w without allocating, it fits: the device's free memory is not asked
// (cudaMemGetInfo costs about 20 us, on the path between the statistics' read-back and the residues).
void refuse_unless_fits(const Workspace& w, int n, ExecContext& ctx) {
  if (w.bytes <= ctx.device_scratch_room()) return;
  std::size_t free_bytes = 0, total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  const std::string refusal = workspace_refusal(w, n, free_bytes, ctx.device_scratch_capacity());
  if (!refusal.empty()) throw std::runtime_error(refusal);
}

using Key = std::tuple<const void*, const void*, int, int, int, int, int, Op, Op, int, bool, Scaling>;
std::mutex cache_mutex;
std::map<Key, Decision>& decisions() {
  static std::map<Key, Decision> m;
  return m;
}

// The decision for these operands, and in *read the statistics it read back (left alone where it read none).
// Between enqueueing the read-back and waiting for it, before_wait(remembered) runs: remembered is the decision an
// earlier launch of this process made for the same operands (pointers, shape, count, scaling), or null; the copy
// is followed by an event, so work before_wait enqueues runs while the host waits and decides.
template <class BeforeWait>
Decision choose(const GemmArgs& a, ExecContext& ctx, const DeviceStats& st, int fixed, Scaling scaling,
                std::optional<Stats>* read, BeforeWait&& before_wait) {
  const bool accurate = st.shift != nullptr, norm = scaling != Scaling::kLargest;
  const Key key{a.A, a.B, a.M, a.N, a.K, a.lda, a.ldb, a.transa, a.transb, fixed, accurate, scaling};
  Shifts shifts;  // unset entries count as 1 (decide takes max(rho, 1))
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  CUDA_CHECK(cudaStreamIsCapturing(ctx.stream(), &capture));
  std::optional<Decision> remembered;
  {
    const std::lock_guard<std::mutex> lock(cache_mutex);
    const auto it = decisions().find(key);
    if (it != decisions().end()) remembered = it->second;
  }
  if (capture != cudaStreamCaptureStatusNone) {
    if (remembered) return *remembered;
    Stats none;
    none.norm = norm;
    Decision d = decide(a.M, a.N, a.K, none, fixed ? fixed : kMaxModuli, accurate ? &shifts : nullptr);
    if (d.moduli)
      d.reason = "captured without statistics: " + std::to_string(d.moduli) + " moduli" +
                 (d.accurate ? ", accurate scaling" : "");
    return d;
  }
  const int slots = accurate ? kRhoSlots : kShiftedA;
  auto* host = static_cast<unsigned long long*>(ctx.pinned_scratch(slots * sizeof(unsigned long long)));
  CUDA_CHECK(cudaMemcpyAsync(host, st.rho, slots * sizeof(unsigned long long), cudaMemcpyDeviceToHost, ctx.stream()));
  const Event& copied = ctx.sync_events(1)[0];
  copied.record(ctx.stream());
  before_wait(remembered ? &*remembered : nullptr);
  CUDA_CHECK(cudaEventSynchronize(copied.get()));
  double rho[kRhoSlots] = {};  // slots not read back stay 0, which decide() takes as 1
  for (int t = 0; t < slots; ++t) {
    std::memcpy(&rho[t], &host[t], sizeof(double));
    rho[t] = host[t] == 0 ? 1.0 : std::max(rho[t], 1.0);  // no finite non-zero row: nothing to lose
  }
  std::copy(rho + kShiftedA, rho + kShiftedB, shifts.rho_a);
  std::copy(rho + kShiftedB, rho + kRhoSlots, shifts.rho_b);
  Stats s{rho[kRhoA], rho[kTauA], rho[kRhoB], rho[kTauB]};
  s.spread_a = rho[kSpreadA];
  s.spread_b = rho[kSpreadB];
  s.norm = norm;
  for (const auto& [bins, at] : {std::pair{&s.bins_a, host + kBinsA}, std::pair{&s.bins_b, host + kBinsB}})
    for (int b = 0; b < kRhoBins; ++b) {  // counts as integers, maxima as the bits of doubles (at least 1, as above)
      bins->count[b] = static_cast<double>(at[b]);
      std::memcpy(&bins->rho[b], &at[kRhoBins + b], sizeof(double));
      std::memcpy(&bins->tau[b], &at[2 * kRhoBins + b], sizeof(double));
      bins->rho[b] = std::max(bins->rho[b], 1.0);
      bins->tau[b] = std::max(bins->tau[b], 1.0);
    }
  *read = s;
  Decision d = decide(a.M, a.N, a.K, s, fixed, accurate ? &shifts : nullptr);
  const std::lock_guard<std::mutex> lock(cache_mutex);
  decisions()[key] = d;
  return d;
}

// Rows M to w.ldp of `count` planes of A's residues (w.a_stride apart), which the products read (products.hpp) and
// no kernel writes: zero.
void zero_padding_rows(signed char* planes, int count, int M, const Workspace& w, cudaStream_t s) {
  if (w.ldp > M)
    CUDA_CHECK(cudaMemset2DAsync(planes + static_cast<std::size_t>(M) * w.Kp, w.a_stride, 0,
                                 static_cast<std::size_t>(w.ldp - M) * w.Kp, count, s));
}

// Accurate scaling's coarse product W = U^T V, the shifts it allows and their effect on rho (ozaki.hpp).
void coarse_shifts(const GemmArgs& a, ExecContext& ctx, DeviceStats& st) {
  const cudaStream_t s = ctx.stream();
  const Workspace w = workspace(a.M, a.N, a.K, 1);
  auto* u = static_cast<signed char*>(ctx.device_scratch(w.a_stride));
  auto* v = static_cast<signed char*>(ctx.device_scratch(w.b_stride));
  auto* W = static_cast<int*>(ctx.device_scratch(w.p_stride));
  auto* wmax = static_cast<unsigned*>(ctx.device_scratch(static_cast<std::size_t>(a.M) * 4));
  int* shift = st.shift = static_cast<int*>(ctx.device_scratch((static_cast<std::size_t>(a.M) + a.N) * 4));
  with_view(a, false, [&](auto kc) {
    constexpr bool KC = decltype(kc)::value;
    const Tiled g = tiled(a.M, w.Kp, true);
    dev::coarse_kernel<KC><<<g.blocks, dev::kThreads, 0, s>>>(a.A, a.lda, a.M, a.K, w.Kp, g.order, st.e, u);
  });
  CUDA_CHECK(cudaGetLastError());
  with_view(a, true, [&](auto kc) {
    constexpr bool KC = decltype(kc)::value;
    const Tiled g = tiled(a.N, w.Kp, true);
    dev::coarse_kernel<KC><<<g.blocks, dev::kThreads, 0, s>>>(a.B, a.ldb, a.N, a.K, w.Kp, g.order, st.e + a.M, v);
  });
  CUDA_CHECK(cudaGetLastError());
  zero_padding_rows(u, 1, a.M, w, s);
  int8_products(ctx, s, a.N, w, u, v, W, 1, "ozaki_coarse_product");
  CUDA_CHECK(cudaMemsetAsync(wmax, 0, static_cast<std::size_t>(a.M) * 4, s));
  dev::coarse_row_max_kernel<<<dim3((a.M + 255) / 256, std::min(a.N, 256)), 256, 0, s>>>(a.M, a.N, W, w.ldp, wmax);
  CUDA_CHECK(cudaGetLastError());
  dev::coarse_shift_kernel<<<(a.M + 255) / 256, 256, 0, s>>>(a.M, a.K, wmax, st.amax, st.sum, st.e, shift,
                                                              st.rho + kShiftedA);
  CUDA_CHECK(cudaGetLastError());
  dev::coarse_col_shift_kernel<<<a.N, 256, 0, s>>>(a.M, a.K, W, w.ldp, shift, shift + a.M);
  CUDA_CHECK(cudaGetLastError());
  dev::coarse_shift_kernel<<<(a.N + 255) / 256, 256, 0, s>>>(a.N, a.K, nullptr, st.amax + a.M, st.sum + a.M,
                                                              st.e + a.M, shift + a.M, st.rho + kShiftedB);
  CUDA_CHECK(cudaGetLastError());
}

DeviceStats statistics(const GemmArgs& a, ExecContext& ctx, bool accurate, Scaling scaling) {
  const bool norm = scaling != Scaling::kLargest, exact = scaling == Scaling::kNormExact;
  const std::size_t R = static_cast<std::size_t>(a.M) + a.N;
  DeviceStats st{};
  // The maxima the kernels take, in one region zeroed by one memset (each memset is a few microseconds of the
  // host's before the first kernel can be enqueued); the tiles' sums and the rows' are written whole.
  auto* zeroed = static_cast<unsigned long long*>(ctx.device_scratch((R + kRhoSlots) * 8));
  st.amax = zeroed;
  st.rho = zeroed + R;
  st.sum = static_cast<double*>(ctx.device_scratch(2 * R * 8));
  st.sumsq = st.sum + R;
  st.e = static_cast<int*>(ctx.device_scratch(R * 4));
  st.m = static_cast<double*>(ctx.device_scratch(2 * R * 8));
  const cudaStream_t s = ctx.stream();
  CUDA_CHECK(cudaMemsetAsync(zeroed, 0, (R + kRhoSlots) * 8, s));
  const Tiled ga = tiled(a.M, a.K, false), gb = tiled(a.N, a.K, false);
  if (static_cast<unsigned long long>(ga.blocks) + gb.blocks > INT_MAX)
    throw std::runtime_error("ozaki: operands of more than 2^31 - 1 tiles of 64 x 64 together");
  // Each tile's sums (k_tiles slots a row: 16 bytes a row and 64 of K, 1/56 of 14 moduli's residues)
  const int k_tiles = ga.order.k_tiles;
  auto* slots = static_cast<double*>(ctx.device_scratch(2 * R * k_tiles * 8));
  double* slots_sq = slots + R * k_tiles;
  const dev::StatsView va{a.A, a.lda, a.M, ga.order, st.amax, slots, slots_sq, R};
  const dev::StatsView vb{a.B, a.ldb, a.N, gb.order, st.amax + a.M, slots + a.M, slots_sq + a.M, R};
  with_view(a, false, [&](auto kca) {
    with_view(a, true, [&](auto kcb) {
      dev::stats_kernel<decltype(kca)::value, decltype(kcb)::value>
          <<<ga.blocks + gb.blocks, dev::kThreads, 0, s>>>(va, vb, a.K, ga.blocks);
    });
  });
  CUDA_CHECK(cudaGetLastError());
  dev::sum_slots_kernel<<<static_cast<unsigned>((R + 31) / 32), 32 * dev::kSumWarps, 0, s>>>(
      R, k_tiles, slots, slots_sq, st.sum, st.sumsq);
  CUDA_CHECK(cudaGetLastError());
  static_assert(kRhoB == kRhoA + 1 && kTauB == kTauA + 1 && kBinsB == kBinsA + dev::kBinSlots &&
                    kSpreadB == kSpreadA + 1,
                "exponents_kernel writes A's slot, then B's");
  dev::exponents_kernel<<<static_cast<unsigned>((R + 255) / 256), 256, 0, s>>>(
      static_cast<std::size_t>(a.M), R, a.K, norm, exact, st.amax, st.sum, st.sumsq, st.e, st.m, st.rho + kRhoA,
      st.rho + kTauA, st.rho + kBinsA, st.rho + kSpreadA);
  CUDA_CHECK(cudaGetLastError());
  if (accurate) coarse_shifts(a, ctx, st);
  return st;
}

// Columns [n0, n0 + n) of op(B) and C, as a problem of their own.
GemmArgs columns(const GemmArgs& a, int n0, int n) {
  GemmArgs c = a;
  c.N = n;
  c.B = a.B + a.b_index(0, n0);
  c.C = a.C + static_cast<std::size_t>(n0) * a.ldc;
  return c;
}

// The residues of op(A)'s rows (b false) or op(B)'s columns (b true), row r of the view at out + r Kp.
template <int N>
void residues(const GemmArgs& a, bool b, const int* e, const double* m, int q, signed char* out, const Workspace& w,
              cudaStream_t s) {
  const int R = b ? a.N : a.M;
  with_view(a, b, [&](auto kc) {
    constexpr bool KC = decltype(kc)::value;
    const Tiled g = tiled(R, w.Kp, true);
    dev::residues_kernel<N, KC><<<g.blocks, dev::kThreads, 0, s>>>(
        b ? a.B : a.A, b ? a.ldb : a.lda, R, a.K, w.Kp, g.order, e, m, q, out, b ? w.b_stride : w.a_stride);
  });
  CUDA_CHECK(cudaGetLastError());
}

// C from the products (prod: column 0 of a's C, w.ldp apart; P as recombine_kernel has it).
template <int N, class P>
void recombine(const GemmArgs& a, const P* prod, const Workspace& w, const int* ea, const int* fb, const double* ma,
               const double* mb, std::size_t ldm, int S, cudaStream_t s) {
  constexpr int kRowsPerBlock = dev::kRecombineThreads * dev::kRecombineRows;
  const dim3 grid((a.M + kRowsPerBlock - 1) / kRowsPerBlock, std::min(a.N, 65535));
  dev::recombine_kernel<N, P><<<grid, dev::kRecombineThreads, 0, s>>>(a.M, a.N, a.K, S, prod, w.ldp, w.p_stride / 4,
                                                                      ea, fb, ma, mb, ldm, crt(N), a);
  CUDA_CHECK(cudaGetLastError());
}

// Which kernel forms the INT8 products: cuBLASLt (INT32 products), or residue_products (products.hpp: each reduced
// to a byte before it is stored) where it runs.
enum class Products { kCublasLt, kOwn };

// The residue planes of op(A) and op(B) for one decision, in device scratch.
struct Residues {
  signed char* a8 = nullptr;
  signed char* b8 = nullptr;
};

// Enqueues the residues of d (its count N, its split qa + qb and, with accurate scaling, its shifts applied to the
// exponents first).
template <int N>
Residues enqueue_residues(const GemmArgs& a, ExecContext& ctx, const DeviceStats& st, const Decision& d,
                          const Workspace& w) {
  const cudaStream_t s = ctx.stream();
  const Residues r{static_cast<signed char*>(ctx.device_scratch(N * w.a_stride)),
                   static_cast<signed char*>(ctx.device_scratch(N * w.b_stride))};
  if (d.accurate) {
    dev::apply_shifts_kernel<<<(a.M + 255) / 256, 256, 0, s>>>(a.M, st.shift, d.cap_a, st.e);
    CUDA_CHECK(cudaGetLastError());
    dev::apply_shifts_kernel<<<(a.N + 255) / 256, 256, 0, s>>>(a.N, st.shift + a.M, d.cap_b, st.e + a.M);
    CUDA_CHECK(cudaGetLastError());
  }
  residues<N>(a, false, st.e, st.m, d.qa, r.a8, w, s);
  zero_padding_rows(r.a8, N, a.M, w, s);
  residues<N>(a, true, st.e + a.M, st.m + a.M, d.qb, r.b8, w, s);
  return r;
}

// Emulates with d's N moduli; r: the residues where they are already enqueued (the speculation in launch()), else
// enqueued here.
template <int N>
void emulate(const GemmArgs& a, ExecContext& ctx, const DeviceStats& st, const Decision& d, const Workspace& w,
             int width, Products route, Residues r) {
  const cudaStream_t s = ctx.stream();
  const bool own = route == Products::kOwn;
  if (!r.a8) r = enqueue_residues<N>(a, ctx, st, d, w);
  signed char *a8 = r.a8, *b8 = r.b8;
  // The residue bytes sit at the INT32 products' element offsets: a quarter of the products' bytes.
  void* prod = ctx.device_scratch(own ? N * w.p_stride / 4 : N * w.p_stride);
  const int S = d.qa + d.qb;
  const int* fb = st.e + a.M;
  const double* mb = st.m + a.M;
  const std::size_t ldm = static_cast<std::size_t>(a.M) + a.N;  // the factors' reciprocals follow them
  ctx.mark_phase("residues");
  // Columns [n0, n0 + cols) of the products, on `stream`, and their recombination on s.
  auto products = [&](cudaStream_t stream, std::size_t n0, int cols) {
    if (own)
      residue_products(stream, cols, w, a8, b8 + n0 * w.Kp, static_cast<unsigned char*>(prod) + n0 * w.ldp, N);
    else
      int8_products(ctx, stream, cols, w, a8, b8 + n0 * w.Kp, static_cast<int*>(prod) + n0 * w.ldp, N,
                    "ozaki_products");
  };
  auto recombine_columns = [&](std::size_t n0, int cols) {
    const GemmArgs part = columns(a, static_cast<int>(n0), cols);
    if (own)
      recombine<N>(part, static_cast<const unsigned char*>(prod) + n0 * w.ldp, w, st.e, fb + n0, st.m, mb + n0, ldm, S,
                   s);
    else recombine<N>(part, static_cast<const int*>(prod) + n0 * w.ldp, w, st.e, fb + n0, st.m, mb + n0, ldm, S, s);
  };
  if (own)
    ctx.notes()["ozaki_products"] = "residue_products: wgmma.m64n256k32 INT8, 128 x 256 tiles, reduced to bytes";
  if (width >= a.N) {
    products(s, 0, a.N);
    ctx.mark_phase("int8_products");
    recombine_columns(0, a.N);
    ctx.mark_phase("recombination");
    return;
  }
  // The pipeline (ozaki.hpp): block j's products on the priority stream, its recombination on s once they are
  // done, while block j + 1's products run. cuBLASLt's choice of algorithm is timed (first launch of a block width)
  // before anything runs beside the products.
  const int blocks = (a.N + width - 1) / width;
  auto columns_of = [&](int j) { return std::min(width, a.N - j * width); };  // block j's; the last takes the rest
  if (!own) {
    prepare_int8_products(ctx, width, w, a8, b8, static_cast<int*>(prod), N);
    if (columns_of(blocks - 1) != width)
      prepare_int8_products(ctx, columns_of(blocks - 1), w, a8, b8, static_cast<int*>(prod), N);
  }
  const cudaStream_t ps = ctx.priority_stream();
  const std::vector<Event>& done = ctx.sync_events(static_cast<std::size_t>(blocks) + 1);
  done[0].record(s);
  CUDA_CHECK(cudaStreamWaitEvent(ps, done[0].get()));
  for (int j = 0; j < blocks; ++j) {
    products(ps, static_cast<std::size_t>(j) * width, columns_of(j));
    done[j + 1].record(ps);
  }
  for (int j = 0; j < blocks; ++j) {  // s waits for every block's products: the priority stream rejoins it
    CUDA_CHECK(cudaStreamWaitEvent(s, done[j + 1].get()));
    recombine_columns(static_cast<std::size_t>(j) * width, columns_of(j));
  }
  std::ostringstream os;
  os << blocks << " column blocks of " << width << ": each block's recombination beside the next block's products";
  ctx.notes()["ozaki_pipeline"] = os.str();
  ctx.mark_phase("products_and_recombination");
}

// f(std::integral_constant<int, n>) for a count n from kMinModuli to kMaxModuli.
template <class F, int... I>
void with_moduli(int n, F&& f, std::integer_sequence<int, I...>) {
  ((n == kMinModuli + I ? f(std::integral_constant<int, kMinModuli + I>{}) : void()), ...);
}
template <class F>
void with_moduli(int n, F&& f) {
  with_moduli(n, f, std::make_integer_sequence<int, kMaxModuli - kMinModuli + 1>{});
}

// What the launch read and chose, reported with the harness's row.
void note(ExecContext& ctx, const GemmArgs& a, const Decision& d, const std::optional<Stats>& read, Scaling scaling) {
  if (read) {
    std::ostringstream inputs;  // every digit: the statistics' bits, which the same operands repeat on every launch
    inputs.precision(17);
    inputs << "rho_a=" << read->rho_a << " rho_b=" << read->rho_b << " tau_a=" << read->tau_a
           << " tau_b=" << read->tau_b;
    if (read->norm) inputs << " (at the norms' scaling; the largest magnitudes' rho_a=" << read->spread_a
                           << " rho_b=" << read->spread_b << ")";
    ctx.notes()["ozaki_inputs"] = inputs.str();
    std::ostringstream bins;  // each side's bins as "largest rho:rows", A's, then B's after " |"
    bins.precision(9);
    for (const RhoBins* b : {&read->bins_a, &read->bins_b}) {
      if (b == &read->bins_b) bins << " |";
      for (int i = 0; i < kRhoBins; ++i)
        if (b->count[i] > 0) bins << ' ' << b->rho[i] << ':' << b->count[i];
    }
    ctx.notes()["ozaki_rho_bins"] = bins.str();
  }
  ctx.notes()["ozaki_moduli"] = std::to_string(d.moduli);
  if (read)
    ctx.notes()["ozaki_scaling"] = d.accurate ? "largest magnitudes, then the coarse product's shifts (accurate)"
                                   : scaling == Scaling::kNormExact
                                       ? "rows' and columns' 2-norms, exact factors (Cauchy-Schwarz bound)"
                                   : scaling == Scaling::kNormPow2
                                       ? "rows' and columns' 2-norms at powers of two (Cauchy-Schwarz bound)"
                                       : "largest magnitudes";
  ctx.notes()["ozaki_decision"] = d.reason;
  if (d.moduli) {
    std::ostringstream os;
    os.precision(3);
    os << d.predicted_ratio;
    ctx.notes()["ozaki_predicted_error"] = os.str();
    if (read && read->binned() && !d.accurate) {  // what the worst row against the worst column would have said
      const Stats unbinned{read->rho_a, read->tau_a, read->rho_b, read->tau_b};  // at d's split
      std::ostringstream u;
      u.precision(3);
      u << predicted_ratio(unbinned, a.M, a.N, a.K, d.qa, d.qb);
      ctx.notes()["ozaki_predicted_error_unbinned"] = u.str();
    }
  }
}

// The products by residue_products where it runs (compute capability 9.0 with sm_90a code), unless cublaslt_only;
// else by cuBLASLt (the notes say why). With residue_products the recombination reads a quarter of the bytes, and
// the rule does not pipeline (pipeline_always still does): measured in docs/gemm-notes.md, step 40. Accurate
// scaling scales by the largest magnitudes (its coarse values are fractions of them), whatever `scaling` says.
void launch(const GemmArgs& a, ExecContext& ctx, int fixed, bool accurate, bool pipeline_always = false,
            bool cublaslt_only = false, Scaling scaling = Scaling::kNormExact) {
  if (accurate) scaling = Scaling::kLargest;
  // Native whatever the data where the shape decides it (and the statistics' grid has K / 64 rows).
  const std::string by_shape = native_by_shape(a.M, a.N, a.K, fixed, accurate);
  const bool data_free = !by_shape.empty();
  // With accurate scaling the coarse product's arrays come first: refuse before taking them.
  if (accurate && !data_free) refuse_unless_fits(workspace(a.M, a.N, a.K, 0, true), 0, ctx);
  const DeviceStats st = data_free ? DeviceStats{} : statistics(a, ctx, accurate, scaling);
  const std::string own_refusal = cublaslt_only ? std::string() : residue_products_refusal();
  const Products route = !cublaslt_only && own_refusal.empty() ? Products::kOwn : Products::kCublasLt;
  // The workspace sized as the route stores its products: counted as INT32 planes, residue_products' workspace
  // exceeded what its launches ever took, so every launch asked the device's free memory (cudaMemGetInfo, about
  // 20 us between the read-back and the residues).
  const bool bytes = route == Products::kOwn;
  Decision d;
  std::optional<Stats> read;
  // The speculation: where a launch before made a decision for these operands and emulated with fast scaling, its
  // residues are enqueued behind the read-back, so the GPU computes them while the host waits for the statistics
  // and decides, instead of idling until the host enqueues them (docs/gemm-notes.md, step 46). They are kept where
  // this launch's decision has the same count and split (the residues depend on nothing else but the exponents,
  // which this launch's statistics wrote), else computed again. Only where the scratch holds the whole workspace
  // without an allocation.
  Decision guess;
  Residues guessed;
  auto speculate = [&](const Decision* remembered) {
    if (!remembered || remembered->moduli == 0 || remembered->accurate) return;
    const Workspace gw = workspace(a.M, a.N, a.K, remembered->moduli, false, bytes);
    if (gw.bytes > ctx.device_scratch_room()) return;
    ctx.mark_phase("scaling");
    guess = *remembered;
    with_moduli(guess.moduli, [&](auto n) { guessed = enqueue_residues<decltype(n)::value>(a, ctx, st, guess, gw); });
  };
  if (data_free) d.reason = by_shape;
  else d = choose(a, ctx, st, fixed, scaling, &read, speculate);
  const bool speculated = guessed.a8 != nullptr;  // and its "scaling" phase marked
  const bool kept = speculated && d.moduli == guess.moduli && d.qa == guess.qa && d.qb == guess.qb && !d.accurate;
  if (speculated) {
    ctx.notes()["ozaki_speculated"] = kept ? "kept: the residues of the decision before, enqueued before the read-back"
                                           : "not kept: this launch's count or split differs from the launch's before";
    if (!kept) {
      ctx.mark_phase("residues_not_kept");
      guessed = {};
    }
  }
  // From the read-back on, the GPU waits for the host (unless it computes the speculated residues meanwhile): the
  // notes' strings are written after the kernels are enqueued.
  if (d.moduli == 0) {
    registry().find("cublas")->launch(a, ctx);
    ctx.mark_phase("native");
    note(ctx, a, d, read, scaling);
    return;
  }
  const Workspace w = workspace(a.M, a.N, a.K, d.moduli, d.accurate, bytes);
  if (!speculated) ctx.mark_phase("scaling");  // once a launch: the harness keeps one time a phase name
  if (!kept) refuse_unless_fits(w, d.moduli, ctx);  // kept: the room held all of w before the residues took theirs
  if (!own_refusal.empty()) ctx.notes()["ozaki_own_products"] = "not run: " + own_refusal;
  const int width = route == Products::kOwn && !pipeline_always ? a.N : pipeline_width(a.M, a.N, a.K, pipeline_always);
  with_moduli(d.moduli, [&](auto n) { emulate<decltype(n)::value>(a, ctx, st, d, w, width, route, guessed); });
  note(ctx, a, d, read, scaling);
}

}  // namespace
}  // namespace ks::gemm::ozaki

namespace ks::gemm {

KS_GEMM_VARIANT({.info = {.name = "ozaki",
                          .summary = "INT8 tensor cores, Ozaki scheme II: residues of scaled A and B per modulus, "
                                     "INT8 GEMMs (a wgmma kernel of our own on sm_90a, else cuBLASLt), CRT "
                                     "recombination; moduli count (or native) by a rule",
                          .min_cc = 75,
                          .phases = true},
                 .launch = [](const GemmArgs& a, ExecContext& ctx) { ozaki::launch(a, ctx, 0, false); },
                 .ops = kOpsAll});
KS_GEMM_VARIANT({.info = {.name = "ozaki_14",
                          .summary = "ozaki with 14 moduli, whatever the inputs",
                          .min_cc = 75,
                          .tuning = true,
                          .phases = true},
                 .launch = [](const GemmArgs& a, ExecContext& ctx) { ozaki::launch(a, ctx, 14, false); },
                 .ops = kOpsAll});
KS_GEMM_VARIANT({.info = {.name = "ozaki_16",
                          .summary = "ozaki with 16 moduli, whatever the inputs",
                          .min_cc = 75,
                          .tuning = true,
                          .phases = true},
                 .launch = [](const GemmArgs& a, ExecContext& ctx) { ozaki::launch(a, ctx, 16, false); },
                 .ops = kOpsAll});
// The pipeline at any size (the rule takes it from 16384^3): for measuring it elsewhere, and for the tests,
// whose small shapes it splits into column blocks of 256.
KS_GEMM_VARIANT({.info = {.name = "ozaki_14_pipelined",
                          .summary = "ozaki_14 with C in column blocks, each block's recombination beside the next "
                                     "block's INT8 products, whatever the size",
                          .min_cc = 75,
                          .tuning = true,
                          .phases = true},
                 .launch = [](const GemmArgs& a, ExecContext& ctx) { ozaki::launch(a, ctx, 14, false, true); },
                 .ops = kOpsAll});

// The INT8 products by cuBLASLt wherever the launch would take residue_products (products.hpp): for measuring one
// against the other, and for the tests (the same bits as ozaki_14).
KS_GEMM_VARIANT({.info = {.name = "ozaki_14_cublaslt",
                          .summary = "ozaki_14 with the INT8 products by cuBLASLt (INT32 planes) where ozaki takes "
                                     "its own wgmma kernel",
                          .min_cc = 75,
                          .tuning = true,
                          .phases = true},
                 .launch = [](const GemmArgs& a, ExecContext& ctx) { ozaki::launch(a, ctx, 14, false, false, true); },
                 .ops = kOpsAll});

// The scalings the exact norm scaling replaced (ozaki.hpp; docs/gemm-notes.md, steps 66 and 68), for measuring
// one against the other: the norms at powers of two, and the rows' largest magnitudes.
KS_GEMM_VARIANT({.info = {.name = "ozaki_norm_pow2",
                          .summary = "ozaki with each row of A and column of B scaled by the power of two at or "
                                     "above its root mean square (no factor); moduli count (or native) by the rule",
                          .min_cc = 75,
                          .tuning = true,
                          .phases = true},
                 .launch = [](const GemmArgs& a, ExecContext& ctx) {
                   ozaki::launch(a, ctx, 0, false, false, false, ozaki::Scaling::kNormPow2);
                 },
                 .ops = kOpsAll});
KS_GEMM_VARIANT({.info = {.name = "ozaki_max_scaling",
                          .summary = "ozaki with each row of A and column of B scaled by its largest magnitude (the "
                                     "fast scaling before the norms); moduli count (or native) by the rule",
                          .min_cc = 75,
                          .tuning = true,
                          .phases = true},
                 .launch = [](const GemmArgs& a, ExecContext& ctx) {
                   ozaki::launch(a, ctx, 0, false, false, false, ozaki::Scaling::kLargest);
                 },
                 .ops = kOpsAll});

// Accurate scaling is a tuning variant, not the rule's choice: on the H100 and H200 it costs more (the coarse
// INT8 product and two passes, 0.35-1.8 ms at 4096^3-8192^3) than the one modulus it saved over the scaling by the
// largest magnitudes at PHI 0.5-1, which norm scaling now saves without it, and on uniform data it saves none
// (docs/gemm-notes.md, steps 17 and 66). It lowers the error (0.42-0.56 against 0.64-0.75
// eps |A||B| on uniform data with 14 moduli).
KS_GEMM_VARIANT({.info = {.name = "ozaki_accurate",
                          .summary = "ozaki with accurate scaling: a coarse INT8 product |A||B| gives rows and columns "
                                     "up to 8 more bits each; moduli count (or native) by the rule",
                          .min_cc = 75,
                          .tuning = true,
                          .phases = true},
                 .launch = [](const GemmArgs& a, ExecContext& ctx) { ozaki::launch(a, ctx, 0, true); },
                 .ops = kOpsAll});
KS_GEMM_VARIANT({.info = {.name = "ozaki_14_accurate",
                          .summary = "ozaki_accurate with 14 moduli, whatever the inputs",
                          .min_cc = 75,
                          .tuning = true,
                          .phases = true},
                 .launch = [](const GemmArgs& a, ExecContext& ctx) { ozaki::launch(a, ctx, 14, true); },
                 .ops = kOpsAll});

}  // namespace ks::gemm
