// The skinny DGEMM: C of at most kMaxSide rows or columns, the large operand streamed once (gemm/skinny.hpp gives the
// canonical form out(s, l) = sum_k X(s, k) Y(l, k)). The ladder's step for the shapes the tensor-core tiles cannot
// win: dmma_tma's rule runs it where C is that thin (gemm/dmma_shapes.hpp, skinny_pick and skinny_split_pick), and
// the tuning variant `skinny` runs it on any shape. 1 and 2 rows or columns, and 9 to 16 (a pass of a wider C), run
// on the FP64 FMA units (the dot, split dot and axpy forms below); 3 to 8 on the FP64 tensor cores (the tensor-core
// forms, further down), one 16 x 8 x 16 product for 16 elements of Y by 8 of C's short side, where the FMA forms'
// S FMAs per element of Y were more instructions than the loads could hide (docs/gemm-notes.md, step 60); on Hopper
// the tensor-core dot form brings Y into shared memory by bulk copies (step 61).
//
// Both kernels read Y, the large operand, exactly once, with streaming loads (evict-first: X, read once per
// block, stays in L2), one chunk of k ahead in registers; X goes through shared memory by cp.async, two chunks
// deep, zero-filled outside X and the K range. Every element of C is one thread's sum in a fixed order:
// deterministic, no atomics, no second kernel.
//
// Dot form (Y contiguous along k, as B is for C of few rows with op(B) = B): a warp owns kDotCols columns l
// and its 32 lanes take interleaved k, so each load of Y is one 256-byte row; per k a lane reads the S values
// X(., k) from shared memory (X stored s-major, consecutive k in consecutive banks: conflict-free) and makes
// S x kDotCols FMAs; at the end each column's S sums are reduced across the warp by shuffles.
//
// Split dot form (S <= 2, Y's columns 16-byte aligned, X contiguous along k or packed): a block owns a few columns l
// and its warps take alternate chunks of k, so each column is read in runs of a block's warps x 1 KB, where the dot
// form reads 1 KB runs of every column at once; with few rows of X (S <= 2) a lane loads its X(s, k) from global
// memory beside its Y (cached, read by every block), with no shared-memory staging and no barrier per chunk. The
// grid is the blocks that fit at once, each walking column groups. 1 x 16384 x 16384 on an H200: 4.52 TB/s against
// cuBLAS's 4.46 in the same process, where the dot form streamed 4.08 (docs/gemm-notes.md, step 59).
//
// Axpy form (Y contiguous along l, as A is for C of few columns with op(A) = A): a lane owns one l (a block
// 32 consecutive l), and the block's warps split K in interleaved 16-deep chunks, each warp with its own X
// buffer; per k a lane reads X(k, 0 .. S - 1) as S / 2 broadcast 16-byte loads (the same address in every
// lane) and makes S FMAs. The warps' partial sums are added in warp order through shared memory.
//
// Measurements and the ceilings: docs/gemm-notes.md, steps 29, 59 and 60.
#include "common/dispatch.hpp"
#include "common/per_device.hpp"
#include "gemm/cp_async_pipeline.cuh"
#include "gemm/dmma_mma.cuh"
#include "gemm/hopper.cuh"
#include "gemm/skinny.hpp"

#include <algorithm>
#include <iterator>

namespace ks::gemm::skinny {

namespace {

__device__ __forceinline__ void store(const Form& f, int s, int l, double acc) {
  scale_store(f.out.at(s, l), f.alpha, f.beta, acc);
}

// The sum of v over the warp's lanes, in every lane (a butterfly of shuffles: the same order in every lane).
__device__ __forceinline__ double warp_sum(double v) {
#pragma unroll
  for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}

// Copies X(s, k0 + kk), s < SMAX, kk < KC, to dst[index(s, kk)] (zero where s >= S or k0 + kk >= K) by the
// `threads` threads numbered t; consecutive threads take consecutive elements along X's contiguous side.
template <int SMAX, int KC, class Index>
__device__ __forceinline__ void copy_x(const Form& f, int k0, double* dst, int t, int threads, Index index) {
  const bool s_fast = f.x.rs == 1;
  for (int e = t; e < SMAX * KC; e += threads) {
    const int s = s_fast ? e % SMAX : e / KC, kk = s_fast ? e / SMAX : e % KC;
    const bool in = s < f.S && k0 + kk < f.K;
    pipeline::cp_async<8>(dst + index(s, kk), in ? f.x.at(s, k0 + kk) : f.x.p, in ? 8 : 0);
  }
}

// ---- dot form ----

constexpr int kDotWarps = 4, kDotCols = 4, kDotDepth = 4;  // warps per block; columns per warp; k per lane per chunk
constexpr int kDotKc = 32 * kDotDepth;                     // k per chunk
constexpr int kDotPitch = kDotKc + 1;                      // X's row pitch in shared memory (doubles)

template <int SMAX>
__global__ void __launch_bounds__(32 * kDotWarps) dot_kernel(Form f) {
  __shared__ double xs[2][SMAX * kDotPitch];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int l0 = (blockIdx.x * kDotWarps + warp) * kDotCols;
  const auto index = [](int s, int kk) { return s * kDotPitch + kk; };
  double acc[kDotCols][SMAX] = {};
  double y[kDotCols][kDotDepth], next[kDotCols][kDotDepth];
  const auto load_y = [&](double (&v)[kDotCols][kDotDepth], int k0) {
#pragma unroll
    for (int c = 0; c < kDotCols; ++c)
#pragma unroll
      for (int u = 0; u < kDotDepth; ++u) {
        const int l = l0 + c, k = k0 + lane + 32 * u;
        v[c][u] = l < f.L && k < f.K ? __ldcs(f.y.p + l * f.y.rs + k) : 0.0;
      }
  };
  const int chunks = ceil_div(f.K, kDotKc);
  copy_x<SMAX, kDotKc>(f, 0, xs[0], threadIdx.x, 32 * kDotWarps, index);
  pipeline::cp_async_commit();
  if (chunks > 1) copy_x<SMAX, kDotKc>(f, kDotKc, xs[1], threadIdx.x, 32 * kDotWarps, index);
  pipeline::cp_async_commit();
  load_y(y, 0);
  for (int ch = 0; ch < chunks; ++ch) {
    if (ch + 1 < chunks) load_y(next, (ch + 1) * kDotKc);
    pipeline::cp_async_wait<1>();  // chunk ch's copies (this thread's); the barrier makes them everyone's
    __syncthreads();
    const double* x = xs[ch & 1];
#pragma unroll
    for (int u = 0; u < kDotDepth; ++u)
#pragma unroll
      for (int s = 0; s < SMAX; ++s) {
        const double xv = x[index(s, lane + 32 * u)];
#pragma unroll
        for (int c = 0; c < kDotCols; ++c) acc[c][s] = fma(xv, y[c][u], acc[c][s]);
      }
    __syncthreads();  // every warp is done with the buffer the next copies overwrite
    if (ch + 2 < chunks) copy_x<SMAX, kDotKc>(f, (ch + 2) * kDotKc, xs[ch & 1], threadIdx.x, 32 * kDotWarps, index);
    pipeline::cp_async_commit();
#pragma unroll
    for (int c = 0; c < kDotCols; ++c)
#pragma unroll
      for (int u = 0; u < kDotDepth; ++u) y[c][u] = next[c][u];
  }
#pragma unroll
  for (int c = 0; c < kDotCols; ++c) {
    double mine = 0;
#pragma unroll
    for (int s = 0; s < SMAX; ++s) {
      const double v = warp_sum(acc[c][s]);
      if (lane == s) mine = v;
    }
    if (lane < f.S && l0 + c < f.L) store(f, lane, l0 + c, mine);
  }
}

// ---- split dot form ----

// Per width: warps (along k), columns a block, 16-byte loads of a column a lane per chunk, chunks in flight a warp
// (the best of the forms measured at S = 1 and 2, step 59).
template <int SMAX>
struct Split;
template <>
struct Split<1> {
  static constexpr int kWarps = 8, kCols = 2, kDepth = 2, kRing = 2;
};
template <>
struct Split<2> {
  static constexpr int kWarps = 8, kCols = 4, kDepth = 2, kRing = 1;
};
constexpr int kSplitMaxS = 2;

template <int SMAX>
__global__ void __launch_bounds__(32 * Split<SMAX>::kWarps) split_kernel(Form f) {
  using P = Split<SMAX>;
  constexpr int W = P::kWarps, COLS = P::kCols, D = P::kDepth, RING = P::kRing;
  constexpr int KC = 64 * D;  // k per chunk: D pairs a lane
  __shared__ double red[W][COLS][SMAX];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int groups = ceil_div(f.L, COLS), chunks = ceil_div(f.K, KC);
  for (int g = blockIdx.x; g < groups; g += gridDim.x) {
    const int l0 = g * COLS;
    double acc[COLS][SMAX] = {};
    double2 y[RING][COLS][D];
    double x[RING][SMAX][2 * D];
    const auto load = [&](int r, int ch) {
      const int k0 = ch * KC;
      const bool whole = k0 + KC <= f.K;  // the last chunk of an uneven K loads element by element
#pragma unroll
      for (int c = 0; c < COLS; ++c)
#pragma unroll
        for (int u = 0; u < D; ++u) {
          const int l = l0 + c, k = k0 + 2 * (lane + 32 * u);
          if (l >= f.L) {
            y[r][c][u] = make_double2(0.0, 0.0);
          } else {
            const double* p = f.y.at(l, k);
            y[r][c][u] = whole ? __ldcs(reinterpret_cast<const double2*>(p))
                               : make_double2(k < f.K ? __ldcs(p) : 0.0, k + 1 < f.K ? __ldcs(p + 1) : 0.0);
          }
        }
#pragma unroll
      for (int s = 0; s < SMAX; ++s)
#pragma unroll
        for (int u = 0; u < D; ++u)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int k = k0 + 2 * (lane + 32 * u) + e;
            x[r][s][2 * u + e] = s < f.S && k < f.K ? __ldg(f.x.at(s, k)) : 0.0;
          }
    };
    const auto compute = [&](int r) {
#pragma unroll
      for (int u = 0; u < D; ++u)
#pragma unroll
        for (int s = 0; s < SMAX; ++s)
#pragma unroll
          for (int c = 0; c < COLS; ++c) {
            acc[c][s] = fma(x[r][s][2 * u], y[r][c][u].x, acc[c][s]);
            acc[c][s] = fma(x[r][s][2 * u + 1], y[r][c][u].y, acc[c][s]);
          }
    };
    // This warp's chunks: warp, warp + W, ...; RING of them in flight.
#pragma unroll
    for (int r = 0; r < RING; ++r)
      if (warp + r * W < chunks) load(r, warp + r * W);
    for (int ch = warp; ch < chunks; ch += RING * W) {
#pragma unroll
      for (int r = 0; r < RING; ++r) {
        const int mine = ch + r * W;
        if (mine < chunks) {
          compute(r);
          if (mine + RING * W < chunks) load(r, mine + RING * W);
        }
      }
    }
    // Each column's sums across the warp, then the warps' in warp order.
#pragma unroll
    for (int c = 0; c < COLS; ++c)
#pragma unroll
      for (int s = 0; s < SMAX; ++s) {
        const double v = warp_sum(acc[c][s]);
        if (lane == 0) red[warp][c][s] = v;
      }
    __syncthreads();
    if (threadIdx.x < COLS * SMAX) {
      const int c = threadIdx.x / SMAX, s = threadIdx.x % SMAX;
      double sum = 0;
#pragma unroll
      for (int w = 0; w < W; ++w) sum += red[w][c][s];
      if (s < f.S && l0 + c < f.L) store(f, s, l0 + c, sum);
    }
    __syncthreads();  // red is rewritten by the next group
  }
}

template <int SMAX>
void launch_split(const Form& f, cudaStream_t stream) {
  static PerDevice<int> fit([](int) { return device_resident_blocks(split_kernel<SMAX>, 32 * Split<SMAX>::kWarps); });
  const int groups = ceil_div(f.L, Split<SMAX>::kCols);
  split_kernel<SMAX><<<std::min(groups, fit.get()), 32 * Split<SMAX>::kWarps, 0, stream>>>(f);
}

// ---- axpy form ----

constexpr int kAxWarps = 4, kAxKc = 16;  // warps per block (each its own k chunks); k per chunk

template <int SMAX>
__global__ void __launch_bounds__(32 * kAxWarps) axpy_kernel(Form f) {
  constexpr int kPairs = SMAX >= 2 ? SMAX / 2 : 1;
  // Per warp two chunks of X, row kk holding X(0 .. SMAX - 1, k0 + kk) with its pairs of doubles permuted by
  // kk (pair p at p ^ (kk % kPairs)): the cp.async of a column of X (consecutive kk, one s) then spreads over
  // the banks; a row's read is one broadcast 16-byte load per pair either way. Afterwards the same memory holds
  // the warps' partial sums.
  constexpr int kPitch = SMAX + 1;  // of the partial sums: thread (warp, lane) at row warp * 32 + lane
  constexpr int kXDoubles = 2 * kAxKc * SMAX;  // a warp's two chunks
  __shared__ __align__(16) double smem[std::max(kAxWarps * kXDoubles, kAxWarps * 32 * kPitch)];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int l = blockIdx.x * 32 + lane;
  const auto index = [](int s, int kk) {
    return SMAX == 1 ? kk : kk * SMAX + 2 * ((s / 2) ^ (kk % kPairs)) + s % 2;
  };
  double acc[SMAX] = {};
  double y[kAxKc], next[kAxKc];
  const auto load_y = [&](double (&v)[kAxKc], int k0) {
#pragma unroll
    for (int kk = 0; kk < kAxKc; ++kk) {
      const int k = k0 + kk;
      v[kk] = l < f.L && k < f.K ? __ldcs(f.y.p + l + static_cast<long long>(k) * f.y.cs) : 0.0;
    }
  };
  // This warp's chunks: warp, warp + kAxWarps, ...
  const int chunks = ceil_div(f.K, kAxKc);
  const int mine = chunks > warp ? ceil_div(chunks - warp, kAxWarps) : 0;
  const auto chunk_k = [&](int i) { return (warp + i * kAxWarps) * kAxKc; };
  if (mine > 0) copy_x<SMAX, kAxKc>(f, chunk_k(0), smem + warp * kXDoubles, lane, 32, index);
  pipeline::cp_async_commit();
  if (mine > 1) copy_x<SMAX, kAxKc>(f, chunk_k(1), smem + warp * kXDoubles + kAxKc * SMAX, lane, 32, index);
  pipeline::cp_async_commit();
  if (mine > 0) load_y(y, chunk_k(0));
  for (int i = 0; i < mine; ++i) {
    if (i + 1 < mine) load_y(next, chunk_k(i + 1));
    pipeline::cp_async_wait<1>();
    __syncwarp();
    const double* x = smem + warp * kXDoubles + (i & 1) * kAxKc * SMAX;
#pragma unroll
    for (int kk = 0; kk < kAxKc; ++kk) {
      if constexpr (SMAX == 1) {
        acc[0] = fma(x[kk], y[kk], acc[0]);
      } else {
#pragma unroll
        for (int p = 0; p < kPairs; ++p) {
          const double2 xv = *reinterpret_cast<const double2*>(x + index(2 * p, kk));
          acc[2 * p] = fma(xv.x, y[kk], acc[2 * p]);
          acc[2 * p + 1] = fma(xv.y, y[kk], acc[2 * p + 1]);
        }
      }
    }
    __syncwarp();
    if (i + 2 < mine) copy_x<SMAX, kAxKc>(f, chunk_k(i + 2), smem + warp * kXDoubles + (i & 1) * kAxKc * SMAX, lane, 32, index);
    pipeline::cp_async_commit();
#pragma unroll
    for (int kk = 0; kk < kAxKc; ++kk) y[kk] = next[kk];
  }
  pipeline::cp_async_wait<0>();
  __syncthreads();
  // The partial sums, pitch SMAX + 1 (conflict-free both ways).
  double* part = smem;
#pragma unroll
  for (int s = 0; s < SMAX; ++s) part[(warp * 32 + lane) * kPitch + s] = acc[s];
  __syncthreads();
  for (int e = threadIdx.x; e < 32 * SMAX; e += 32 * kAxWarps) {
    const int r = e % 32, s = e / 32, lr = blockIdx.x * 32 + r;
    double sum = 0;
#pragma unroll
    for (int w = 0; w < kAxWarps; ++w) sum += part[(w * 32 + r) * kPitch + s];
    if (s < f.S && lr < f.L) store(f, s, lr, sum);
  }
}

// ---- tensor-core forms (kTcMinS to kTcMaxS rows or columns) ----

// c += a b for one 16 x 8 x 16 tile on the FP64 tensor cores (gemm/dmma_mma.cuh: fragments as mma.m16n8k16's).
__device__ __forceinline__ void tc_mma(double (&c)[4], const double (&a)[8], const double (&b)[4]) {
#if __CUDA_ARCH__ >= 900
  dmma::mma_16x8x16<dmma::Instr::K16>(c, a, b);
#else
  dmma::mma_16x8x16<dmma::Instr::K4>(c, a, b);
#endif
}

// The first THREADS threads of the block at a barrier of their own (named barrier 1): all of a tensor-core kernel's
// threads, or the bulk dot form's consumers without its copying warp.
template <int THREADS>
__device__ __forceinline__ void tc_sync() {
  asm volatile("bar.sync 1, %0;\n" ::"n"(THREADS) : "memory");
}

// Ends a block's share of one group of C's N sums (e: 0 .. N - 1; sum(e) the block's, put(e, v) stores v into C):
// with one part, stores them; otherwise writes them to the part's slot of `partial`, and the last of the group's
// parts to arrive (a ticket per group, zero before and after the kernel) adds the slots in part order and stores the
// totals. Deterministic whichever part arrives last. The block's first THREADS threads call it.
template <int N, int THREADS, class Sum, class Put>
__device__ __forceinline__ void tc_combine(int parts, int grp, int part, double* partial, unsigned* tickets, Sum sum,
                                           Put put) {
  __shared__ bool last;
  if (parts == 1) {
    for (int e = threadIdx.x; e < N; e += THREADS) put(e, sum(e));
    return;
  }
  double* slot = partial + (static_cast<long long>(grp) * parts + part) * N;
  for (int e = threadIdx.x; e < N; e += THREADS) slot[e] = sum(e);
  __threadfence();  // this block's sums, before its ticket
  tc_sync<THREADS>();
  if (threadIdx.x == 0) {
    last = atomicAdd(tickets + grp, 1u) == static_cast<unsigned>(parts - 1);
    if (last) tickets[grp] = 0;  // every part has arrived: zero again for the next launch
  }
  tc_sync<THREADS>();
  if (!last) return;
  __threadfence();
  const double* all = partial + static_cast<long long>(grp) * parts * N;
  for (int e = threadIdx.x; e < N; e += THREADS) {
    double v = 0;
    for (int q = 0; q < parts; ++q) v += __ldcg(all + static_cast<long long>(q) * N + e);
    put(e, v);
  }
}

// A warp's chunks of a part, first, first + STEP, ... below end: each loaded one chunk ahead of its compute (the
// other warps of the SM hide the rest of the latency).
template <int STEP, class Load, class Compute>
__device__ __forceinline__ void tc_stream(int first, int end, Load&& load, Compute&& compute) {
  if (first < end) load(first);
  for (int ch = first; ch < end; ch += STEP) {
    compute();
    if (ch + STEP < end) load(ch + STEP);
  }
}

// The tensor-core forms' end of an item of ROWS = TILES x 16 of the long side from l0: each warp's sums c[tile][r] =
// out(2 t + r % 2, l0 + lc) into red (warp w's entry 8 lc + s at red[w ROWS 8 + 8 lc + s]), then the warps' sums in
// warp order and the group's parts (tc_combine) into C. MMA row g of a tile is its l g and row g + 8 its g + 8 in the
// dot forms, 2 g and 2 g + 1 in the axpy form (AXPY); the combine's entry e is s = e % 8 of lc = e / 8 in the dot
// forms, lc = e % ROWS of s = e / ROWS in the axpy form (consecutive threads, consecutive l). The block's first 32 W
// threads call it.
template <int TILES, int W, bool AXPY = false>
__device__ __forceinline__ void tc_finish(const Form& f, const double (&c)[TILES][4], double* red, int l0, int parts,
                                          int grp, int part, double* partial, unsigned* tickets) {
  constexpr int ROWS = TILES * 16, N = ROWS * 8;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
#pragma unroll
  for (int tile = 0; tile < TILES; ++tile)
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      if constexpr (AXPY)
        red[warp * N + (16 * tile + 2 * g + r / 2) * 8 + 2 * t + r % 2] = c[tile][r];
      else
        red[warp * N + (16 * tile + g + 8 * (r / 2)) * 8 + 2 * t + r % 2] = c[tile][r];
    }
  tc_sync<32 * W>();
  tc_combine<N, 32 * W>(
      parts, grp, part, partial, tickets,
      [&](int e) {
        double v = 0;
#pragma unroll
        for (int w = 0; w < W; ++w) v += red[w * N + (AXPY ? (e % ROWS) * 8 + e / ROWS : e)];
        return v;
      },
      [&](int e, double v) {
        if constexpr (AXPY) {
          if (e / ROWS < f.S && l0 + e % ROWS < f.L) store(f, e / ROWS, l0 + e % ROWS, v);
        } else {
          if (e % 8 < f.S && l0 + e / 8 < f.L) store(f, e % 8, l0 + e / 8, v);
        }
      });
  tc_sync<32 * W>();  // red is rewritten by the next item
}

// Dot form: a block's warps take alternate chunks of 32 k of the same 16 columns l0 .. l0 + 15 (each column read in
// runs of kTcDotWarps x 256 bytes); lane 4 g + t loads k0 + 8 t .. 8 t + 7 of columns l0 + g and l0 + g + 8 (four
// 16-byte loads each where Y's columns are 16-byte aligned) and the same k of X's row g from global memory (cached;
// X is small and every block reads it). Logical k t + 4 q of the chunk's MMA j is k0 + 8 t + 4 j + q. (Lanes reading
// 16 bytes in turn, k0 + 8 u + 2 t, so that each load of the warp reads whole sectors, streamed 5% slower at
// 8 x 16384 x 16384: step 60.) Where the column groups are fewer than the blocks that fit, `parts` blocks split K
// for each group as the axpy form's do (tc_combine).
constexpr int kTcDotWarps = 8, kTcDotLaneK = 8;  // warps (along k); k per lane per chunk (two MMAs)

constexpr int kTcDotChunk = 4 * kTcDotLaneK;      // k per chunk

__global__ void __launch_bounds__(32 * kTcDotWarps, 2)
    tc_dot_kernel(Form f, int parts, double* partial, unsigned* tickets) {
  constexpr int W = kTcDotWarps, CH = kTcDotLaneK, KC = kTcDotChunk;
  __shared__ double red[W][16 * 8];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
  const int groups = ceil_div(f.L, 16), chunks = ceil_div(f.K, KC), per = ceil_div(chunks, parts);
  const bool pairs = f.y.rs % 2 == 0 && reinterpret_cast<uintptr_t>(f.y.p) % 16 == 0;
  for (int item = blockIdx.x; item < groups * parts; item += gridDim.x) {
    const int grp = item / parts, part = item % parts, l0 = grp * 16;
    const int c1 = min(chunks, (part + 1) * per);
    double c[1][4] = {};
    double2 y[2][CH / 2];
    double x[CH];
    const auto load = [&](int ch) {
      const int k0 = ch * KC + CH * t;  // element e at k0 + e
      const bool whole = pairs && ch * KC + KC <= f.K;  // otherwise element by element
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int l = l0 + g + 8 * h;
        const double* p = f.y.p + static_cast<long long>(l < f.L ? l : 0) * f.y.rs + k0;
#pragma unroll
        for (int u = 0; u < CH / 2; ++u) {
          const int k = k0 + 2 * u;
          if (l >= f.L)
            y[h][u] = make_double2(0.0, 0.0);
          else if (whole)
            y[h][u] = __ldcs(reinterpret_cast<const double2*>(p + 2 * u));
          else
            y[h][u] = make_double2(k < f.K ? __ldcs(p + 2 * u) : 0.0, k + 1 < f.K ? __ldcs(p + 2 * u + 1) : 0.0);
        }
      }
#pragma unroll
      for (int e = 0; e < CH; ++e) x[e] = g < f.S && k0 + e < f.K ? __ldg(f.x.at(g, k0 + e)) : 0.0;
    };
    const auto compute = [&] {
#pragma unroll
      for (int j = 0; j < CH / 4; ++j) {
        double a[8], b[4];
#pragma unroll
        for (int q = 0; q < 4; ++q) b[q] = x[4 * j + q];
#pragma unroll
        for (int i = 0; i < 8; ++i) {  // A(g + 8 (i % 2), t + 4 (i / 2)): column h = i % 2, element 4 j + i / 2
          const double2 v = y[i % 2][(4 * j + i / 2) / 2];
          a[i] = (i / 2) % 2 ? v.y : v.x;
        }
        tc_mma(c[0], a, b);
      }
    };
    tc_stream<W>(part * per + warp, c1, load, compute);
    tc_finish<1, W>(f, c, &red[0][0], l0, parts, grp, part, partial, tickets);
  }
}

// Axpy form: a warp owns kTcAxGroups x 16 consecutive l and the block's warps take alternate 16-k chunks; MMA row g
// is l 2 g and row g + 8 is 2 g + 1 of the 16 (one 16-byte load where Y's columns are 16-byte aligned), k in order
// (lane t's k0 + t + 4 q: X's loads read whole sectors whichever way X is stored). Where the groups of rows are
// fewer than the blocks that fit, `parts` blocks split K for each group (tc_combine).
constexpr int kTcAxWarps = 4, kTcAxGroups = 2;  // warps (along k); 16-row groups per warp
constexpr int kTcAxRows = 16 * kTcAxGroups;     // l per block

__global__ void __launch_bounds__(32 * kTcAxWarps, 4)
    tc_axpy_kernel(Form f, int parts, double* partial, unsigned* tickets) {
  constexpr int W = kTcAxWarps, LG = kTcAxGroups, ROWS = kTcAxRows;
  __shared__ double red[W][ROWS * 8];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
  const int groups = ceil_div(f.L, ROWS), chunks = ceil_div(f.K, 16), per = ceil_div(chunks, parts);
  const bool pairs = f.y.cs % 2 == 0 && reinterpret_cast<uintptr_t>(f.y.p) % 16 == 0;
  for (int item = blockIdx.x; item < groups * parts; item += gridDim.x) {
    const int grp = item / parts, part = item % parts, l0 = grp * ROWS;
    const int c1 = min(chunks, (part + 1) * per);
    double c[LG][4] = {};
    double2 y[LG][4];
    double x[4];
    const auto load = [&](int ch) {
      const int k0 = ch * 16 + t;
#pragma unroll
      for (int lg = 0; lg < LG; ++lg) {
        const int l = l0 + 16 * lg + 2 * g;
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          const int k = k0 + 4 * q;
          const double* p = f.y.p + l + static_cast<long long>(k < f.K ? k : 0) * f.y.cs;
          if (pairs && k < f.K && l + 1 < f.L)
            y[lg][q] = __ldcs(reinterpret_cast<const double2*>(p));
          else
            y[lg][q] = make_double2(k < f.K && l < f.L ? __ldcs(p) : 0.0, k < f.K && l + 1 < f.L ? __ldcs(p + 1) : 0.0);
        }
      }
#pragma unroll
      for (int q = 0; q < 4; ++q) x[q] = g < f.S && k0 + 4 * q < f.K ? __ldg(f.x.at(g, k0 + 4 * q)) : 0.0;
    };
    const auto compute = [&] {
#pragma unroll
      for (int lg = 0; lg < LG; ++lg) {
        double a[8];
#pragma unroll
        for (int i = 0; i < 8; ++i) a[i] = i % 2 ? y[lg][i / 2].y : y[lg][i / 2].x;
        tc_mma(c[lg], a, x);
      }
    };
    tc_stream<W>(part * per + warp, c1, load, compute);
    // c[lg][r] = out(2 t + r % 2, l0 + 16 lg + 2 g + r / 2)
    tc_finish<LG, W, true>(f, c, &red[0][0], l0, parts, grp, part, partial, tickets);
  }
}

// Bulk dot form (Hopper; Y's columns 16-byte aligned): the dot form with Y brought into shared memory by bulk copies
// (cp.async.bulk, one a column and stage, completing on the stage's mbarrier) from a copying warp's lanes, where the
// form above has every lane load its 64 bytes a column (one lane issuing a stage's 32 copies cost 9-18% where a block
// has an SM to itself, 5 x 4608 x 6144 and 8 x 1024 x 8192, step 61). A group is kTcBulkTiles x 16 columns; each stage
// holds kTcBulkStageK k of them (a column kTcBulkPitch doubles apart: consecutive columns 64 bytes apart in the banks,
// so a quarter-warp's 16-byte loads are conflict-free), kTcBulkStages stages deep. The kTcBulkWarps consumer warps split a
// stage's k, 32 each: lane 4 g + t reads k 2 t + 8 u (u = 0 .. 3) of columns g and g + 8 of each tile from shared
// memory, and X's row g at the same k from global memory (16-byte pairs where X is contiguous along k) before the
// stage's wait, using it for every tile of the group. Element e of the lane is k 8 (e / 2) + 2 t + e % 2; logical k
// t + 4 q of MMA j is element 4 j + q. Each group sweeps its k from a stage of its own (29 x the group index, modulo
// its part's stages), so that the groups streaming at once read different offsets of their columns rather than
// addresses a whole number of columns apart (8 x 16384^2 on an H200, 16 columns a group: 528.4 us from k = 0, 514.6
// turned, DRAM 84.8% -> 88.3% of peak under ncu; docs/gemm-notes.md, step 61); the order depends on the group alone,
// so the result does not depend on the grid. The copies read with an L2 evict-first policy (X, read by every block,
// stays in L2). Parts of K as in the other forms.
constexpr int kTcBulkWarps = 4, kTcBulkTiles = 2, kTcBulkStageK = 128, kTcBulkStages = 3;
constexpr int kTcBulkCols = 16 * kTcBulkTiles;     // columns l a group
constexpr int kTcBulkPitch = kTcBulkStageK + 8;   // doubles a column of a stage
static_assert(kTcBulkStageK == 32 * kTcBulkWarps, "each consumer warp takes 32 k of a stage");
constexpr std::size_t kTcBulkSmem =
    sizeof(double) * (kTcBulkStages * kTcBulkCols * kTcBulkPitch + kTcBulkWarps * kTcBulkCols * 8);

__global__ void __launch_bounds__(32 * (kTcBulkWarps + 1), 2)
    tc_bulk_kernel(Form f, int parts, double* partial, unsigned* tickets) {
#if __CUDA_ARCH__ >= 900
  constexpr int W = kTcBulkWarps, NST = kTcBulkStages, KS = kTcBulkStageK, PITCH = kTcBulkPitch, COLS = kTcBulkCols;
  constexpr int kTurn = 29;  // a group's first stage: kTurn x its index, modulo its part's stages
  extern __shared__ __align__(128) double smem[];  // NST x COLS x PITCH, then the warps' sums red[W][COLS * 8]
  __shared__ __align__(8) uint64_t full[NST], empty[NST];
  double* red = smem + NST * COLS * PITCH;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
  const int groups = ceil_div(f.L, COLS), stages = ceil_div(f.K, KS), per = ceil_div(stages, parts);
  const int k_pairs = f.K & ~1;  // the copies end here; an odd K's last element comes from global memory
  // Item `item`'s stages: i-th of its part's n at (first + (i + turn) mod n).
  const auto span = [&](int item, int& first, int& n, int& turn) {
    const int grp = item / parts, part = item % parts;
    first = part * per;
    n = max(0, min(stages, first + per) - first);
    turn = n > 0 ? static_cast<int>(static_cast<long long>(grp) * kTurn % n) : 0;
  };
  if (threadIdx.x == 0) {
    for (int s = 0; s < NST; ++s) {
      tma::bar_init(tma::smem_addr(&full[s]), 1);
      tma::bar_init(tma::smem_addr(&empty[s]), 32 * W);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  int it = 0;  // stages taken so far: stage buffer it % NST, in its (it / NST)-th use
  if (warp == W) {  // the copying warp: each lane waits for the stage itself, then copies its columns
    const uint64_t policy = tma::evict_first_policy();
    for (int item = blockIdx.x; item < groups * parts; item += gridDim.x) {
      const int l0 = item / parts * COLS, ncols = min(COLS, f.L - l0);
      int first, n, turn;
      span(item, first, n, turn);
      for (int i = 0; i < n; ++i, ++it) {
        const int s = it % NST, k0 = (first + (i + turn) % n) * KS;
        const int bytes = 8 * (min(k0 + KS, k_pairs) - k0);  // >= 0, a multiple of 16
        if (it >= NST) tma::bar_wait(tma::smem_addr(&empty[s]), ((it / NST) & 1) ^ 1);
        if (lane == 0) tma::bar_arrive_expect(tma::smem_addr(&full[s]), bytes > 0 ? bytes * ncols : 0);
        __syncwarp();  // the stage's bytes expected before any of its copies completes
        if (bytes > 0)
          for (int c = lane; c < ncols; c += 32)
            tma::bulk_load(tma::smem_addr(smem + (s * COLS + c) * PITCH), f.y.at(l0 + c, k0), bytes,
                           tma::smem_addr(&full[s]), policy);
      }
    }
    return;
  }
  const bool x_pairs = f.x.cs == 1 && f.x.rs % 2 == 0 && reinterpret_cast<uintptr_t>(f.x.p) % 16 == 0;
  for (int item = blockIdx.x; item < groups * parts; item += gridDim.x) {
    const int grp = item / parts, part = item % parts, l0 = grp * COLS;
    int first, n, turn;
    span(item, first, n, turn);
    double c[kTcBulkTiles][4] = {};
    for (int i = 0; i < n; ++i, ++it) {
      const int s = it % NST, kk = 32 * warp, kb = (first + (i + turn) % n) * KS + kk + 2 * t;
      const bool whole = kb - 2 * t + 32 <= k_pairs;  // the warp's 32 k all copied
      double x[8];
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int k = kb + 8 * u;
        if (x_pairs && whole) {
          const double2 v = g < f.S ? __ldg(reinterpret_cast<const double2*>(f.x.at(g, k))) : make_double2(0.0, 0.0);
          x[2 * u] = v.x;
          x[2 * u + 1] = v.y;
        } else {
          x[2 * u] = g < f.S && k < f.K ? __ldg(f.x.at(g, k)) : 0.0;
          x[2 * u + 1] = g < f.S && k + 1 < f.K ? __ldg(f.x.at(g, k + 1)) : 0.0;
        }
      }
      tma::bar_wait(tma::smem_addr(&full[s]), (it / NST) & 1);
      const double* ys = smem + s * COLS * PITCH;
#pragma unroll
      for (int tile = 0; tile < kTcBulkTiles; ++tile) {
        double2 y[2][4];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int c = 16 * tile + g + 8 * h;
#pragma unroll
          for (int u = 0; u < 4; ++u) {
            const int k = kb + 8 * u;
            if (l0 + c >= f.L)  // past C's last column: nothing was copied
              y[h][u] = make_double2(0.0, 0.0);
            else if (whole)
              y[h][u] = *reinterpret_cast<const double2*>(ys + c * PITCH + kk + 8 * u + 2 * t);
            else  // the copied pairs, an odd K's last element from global memory, zeros past K
              y[h][u] = make_double2(k < k_pairs ? ys[c * PITCH + kk + 8 * u + 2 * t]
                                     : k < f.K   ? *f.y.at(l0 + c, k)
                                                 : 0.0,
                                     k + 1 < k_pairs ? ys[c * PITCH + kk + 8 * u + 2 * t + 1] : 0.0);
          }
        }
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          double a[8], b[4];
#pragma unroll
          for (int q = 0; q < 4; ++q) b[q] = x[4 * j + q];
#pragma unroll
          for (int r = 0; r < 8; ++r) {  // A(g + 8 (r % 2), t + 4 (r / 2)): column h = r % 2, element 4 j + r / 2
            const int e = 4 * j + r / 2;
            const double2 v = y[r % 2][e / 2];
            a[r] = e % 2 ? v.y : v.x;
          }
          tc_mma(c[tile], a, b);
        }
      }
      // Every thread releases the stage after its own shared-memory loads (an mbarrier arrive releases the arriving
      // thread's accesses only: with one lane's arrive a warp, racecheck saw the next copies race its lanes' loads),
      // fenced so that ptxas does not issue the arrive ahead of them (as dmma_tma's consumers found,
      // gemm/08_dmma_tma.cu); the copy into it waits for all 32 W.
      asm volatile("fence.acq_rel.cta;\n" ::: "memory");
      tma::bar_arrive(tma::smem_addr(&empty[s]));
    }
    tc_finish<kTcBulkTiles, W>(f, c, red, l0, parts, grp, part, partial, tickets);
  }
#endif
}

// The kernels' instantiations: SMAX = 1, 2, 4, 8, 16, the smallest at least a pass's S.
constexpr int kWidths[] = {1, 2, 4, 8, 16};
static_assert(kWidths[std::size(kWidths) - 1] == kMaxSide, "the widest instantiation is a pass's S");

// One tensor-core kernel for `f` (`fit` of its blocks of `threads` resident at once, `smem` bytes of dynamic shared
// memory each): a grid of the blocks that fit, `parts` of them for each group of C's `group_side` rows or columns
// where the groups are fewer (tc_parts, with `warps` taking alternate chunks of `chunk` k), their partial sums in
// device scratch.
template <class Kernel>
void launch_tc_kernel(Kernel kernel, int fit, int threads, int warps, int group_side, int chunk, const Form& f,
                      ExecContext& ctx, std::size_t smem = 0) {
  const int groups = ceil_div(f.L, group_side), parts = tc_parts(groups, ceil_div(f.K, chunk), fit, warps);
  double* partial = nullptr;
  unsigned* tickets = nullptr;
  if (parts > 1) {
    partial = static_cast<double*>(
        ctx.device_scratch(sizeof(double) * group_side * 8 * static_cast<std::size_t>(groups) * parts));
    tickets = ctx.zeroed_counters(static_cast<std::size_t>(groups));
  }
  kernel<<<std::min(groups * parts, fit), threads, smem, ctx.stream()>>>(f, parts, partial, tickets);
}

// Whether this GPU runs the bulk dot form's code (compute capability 9.0 or later and code compiled for 9.0 or later:
// the kernel is empty below); with it, the kernel's shared memory granted. Read once per device.
bool bulk_runs() {
  static PerDevice<bool> runs([](int device) {
    if (!runs_sm90_code(device, tc_bulk_kernel)) return false;
    CUDA_CHECK(cudaFuncSetAttribute(tc_bulk_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(kTcBulkSmem)));
    return true;
  });
  return runs.get();
}

// Whether a pass runs the bulk dot form here: what launch_tc runs and describe names.
bool takes_bulk(const Form& f) { return bulk_form(f) && bulk_runs(); }

void launch_tc(const Form& f, ExecContext& ctx) {
  static PerDevice<int> dot_fit([](int) { return device_resident_blocks(tc_dot_kernel, 32 * kTcDotWarps); });
  static PerDevice<int> axpy_fit([](int) { return device_resident_blocks(tc_axpy_kernel, 32 * kTcAxWarps); });
  if (takes_bulk(f)) {
    static PerDevice<int> bulk_fit([](int) {
      return device_resident_blocks(tc_bulk_kernel, 32 * (kTcBulkWarps + 1), kTcBulkSmem);
    });
    // The consumers share every stage: a part is at least four stages.
    launch_tc_kernel(tc_bulk_kernel, bulk_fit.get(), 32 * (kTcBulkWarps + 1), 1, kTcBulkCols, kTcBulkStageK, f, ctx,
                     kTcBulkSmem);
  } else if (f.dot()) {
    launch_tc_kernel(tc_dot_kernel, dot_fit.get(), 32 * kTcDotWarps, kTcDotWarps, 16, kTcDotChunk, f, ctx);
  } else {
    launch_tc_kernel(tc_axpy_kernel, axpy_fit.get(), 32 * kTcAxWarps, kTcAxWarps, kTcAxRows, 16, f, ctx);
  }
}

int width_row(int s) {
  int i = 0;
  while (kWidths[i] < s) ++i;
  return i;
}

}  // namespace

bool tc_form(const Form& f) { return f.S >= kTcMinS && f.S <= kTcMaxS && !split_form(f); }

bool bulk_form(const Form& f) {
  return tc_form(f) && f.dot() && f.y.rs % 2 == 0 && reinterpret_cast<uintptr_t>(f.y.p) % 16 == 0;
}

int tc_parts(int groups, int chunks, int resident, int warps) {
  if (groups <= 0 || resident < 2 * groups) return 1;  // half a wave or more without splitting
  // At most two waves of blocks (a whole number of parts per group: no short last wave), four chunks a warp at least.
  return std::max(1, std::min(2 * resident / groups, chunks / (4 * warps)));
}

bool split_form(const Form& f) {
  const bool x_coalesced = f.x.cs == 1 || (f.S == 2 && f.x.rs == 1 && f.x.cs == 2);  // X's loads coalesce
  return f.dot() && f.S <= kSplitMaxS && x_coalesced && f.y.rs % 2 == 0 &&
         reinterpret_cast<uintptr_t>(f.y.p) % 16 == 0;
}

Form canonical(const GemmArgs& a) {
  // op(A)(i, k) and op(B)(k, j) as strided views: N is (1, ld), T is (ld, 1).
  const View<const double> opa{a.A, a.transa == Op::N ? 1 : a.lda, a.transa == Op::N ? a.lda : 1};
  const View<const double> opb{a.B, a.transb == Op::N ? 1 : a.ldb, a.transb == Op::N ? a.ldb : 1};  // (k, j)
  Form f;
  f.K = a.K;
  f.alpha = a.alpha;
  f.beta = a.beta;
  if (a.M <= a.N) {  // s = i, l = j: X = op(A), Y(j, k) = op(B)(k, j), out(i, j) = C(i, j)
    f.S = a.M;
    f.L = a.N;
    f.x = opa;
    f.y = {opb.p, opb.cs, opb.rs};
    f.out = {a.C, 1, a.ldc};
  } else {  // s = j, l = i: X(j, k) = op(B)(k, j), Y = op(A), out(j, i) = C(i, j)
    f.S = a.N;
    f.L = a.M;
    f.x = {opb.p, opb.cs, opb.rs};
    f.y = opa;
    f.out = {a.C, a.ldc, 1};
  }
  return f;
}

std::string describe(const GemmArgs& a) {
  const Form f = canonical(a);
  const int passes = ceil_div(f.S, kMaxSide);
  const char* form = split_form(f) ? "split dot"
                     : takes_bulk(f)  ? "tensor-core dot (bulk copies)"
                     : tc_form(f)     ? (f.dot() ? "tensor-core dot" : "tensor-core axpy")
                     : f.dot()        ? "dot"
                                      : "axpy";
  return std::string(form) + " form, " + std::to_string(f.S) +
         " x " + std::to_string(f.L) + " (S x L), " + std::to_string(passes) + (passes == 1 ? " pass" : " passes");
}

void launch(const GemmArgs& a, ExecContext& ctx) {
  // Every instantiation comes from this file's one set of code images: one kernel's stands for all.
  static PerDevice<bool> loads([](int) {
    pipeline::require_cp_async("skinny", reinterpret_cast<const void*>(dot_kernel<1>));
    return true;
  });
  loads.get();
  const Form whole = canonical(a);
  for (int s0 = 0; s0 < whole.S; s0 += kMaxSide) {  // passes of at most kMaxSide of the small side
    Form f = whole;
    f.S = std::min(kMaxSide, whole.S - s0);
    f.x.p = whole.x.at(s0, 0);
    f.out.p = whole.out.at(s0, 0);
    if (split_form(f)) {
      if (f.S == 1)
        launch_split<1>(f, ctx.stream());
      else
        launch_split<2>(f, ctx.stream());
      CUDA_CHECK_LAUNCH();
      continue;
    }
    if (tc_form(f)) {
      launch_tc(f, ctx);
      CUDA_CHECK_LAUNCH();
      continue;
    }
    with_index<static_cast<int>(std::size(kWidths))>(width_row(f.S), [&](auto w) {
      constexpr int SMAX = kWidths[decltype(w)::value];
      if (f.dot())
        dot_kernel<SMAX><<<ceil_div(f.L, kDotWarps * kDotCols), 32 * kDotWarps, 0, ctx.stream()>>>(f);
      else
        axpy_kernel<SMAX><<<ceil_div(f.L, 32), 32 * kAxWarps, 0, ctx.stream()>>>(f);
    }, "skinny widths");
    CUDA_CHECK_LAUNCH();
  }
}

namespace {

KS_GEMM_VARIANT({.info = {.name = "skinny",
                          .summary = "the large operand streamed once (dmma_tma's route for C of at most 8 rows or "
                                     "columns): FP64 tensor cores for 3 to 8, FP64 FMA otherwise; dot (split along k "
                                     "for 1 or 2) or axpy form as op, C's orientation and the layout make it; any "
                                     "shape, in passes of 16 rows or columns",
                          .min_cc = pipeline::kCpAsyncCc,
                          .tuning = true},
                 .launch = launch,
                 .ops = kOpsAll});

}  // namespace

}  // namespace ks::gemm::skinny
