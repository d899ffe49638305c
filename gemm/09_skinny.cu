// The skinny DGEMM: C of at most kMaxSide rows or columns on the FP64 FMA units (gemm/skinny.hpp gives the
// canonical form out(s, l) = sum_k X(s, k) Y(l, k) and why the tensor cores do not pay there). The ladder's
// step for the shapes the tensor cores cannot win: dmma_tma's rule runs it where C is that thin
// (gemm/dmma_shapes.hpp, skinny_pick and skinny_split_pick), and the tuning variant `skinny` runs it on any shape.
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
// Measurements and the ceilings: docs/gemm-notes.md, step 29.
#include "common/dispatch.hpp"
#include "common/per_device.hpp"
#include "gemm/cp_async_pipeline.cuh"
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

// The kernels' instantiations: SMAX = 1, 2, 4, 8, 16, the smallest at least a pass's S.
constexpr int kWidths[] = {1, 2, 4, 8, 16};
static_assert(kWidths[std::size(kWidths) - 1] == kMaxSide, "the widest instantiation is a pass's S");

int width_row(int s) {
  int i = 0;
  while (kWidths[i] < s) ++i;
  return i;
}

}  // namespace

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
  return std::string(split_form(f) ? "split dot" : f.dot() ? "dot" : "axpy") + " form, " + std::to_string(f.S) +
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
                          .summary = "FP64 FMA, the large operand streamed once (dmma_tma's route for C of at most 8 rows "
                                     "or columns); dot (split along k for 1 or 2) or axpy form as op, C's "
                                     "orientation and the layout make it; any shape, in passes of 16 rows or columns",
                          .min_cc = pipeline::kCpAsyncCc,
                          .tuning = true},
                 .launch = launch,
                 .ops = kOpsAll});

}  // namespace

}  // namespace ks::gemm::skinny
