// register_tiled: each thread computes a TM x TN block of C in registers, as outer products of a column of A's
// tile and a row of B's tile, both read from shared memory.
//
// The coalesced kernel needs two shared-memory loads per FMA, so shared-memory bandwidth caps it near a
// quarter of the FP64 rate. Here a block computes a BM x BN = 128 x 128 tile of C with 256 threads, each
// owning TM x TN = 8 x 8 elements: per step of k a thread makes four 16-byte loads of A and four of B (16
// doubles) for 64 FMAs. Thread (tx, ty) owns rows 2 tx + {0, 1} + 32 q and columns 2 ty + {0, 1} + 32 q
// (q = 0..3), so a quarter-warp's 16-byte loads of A cover 128 contiguous bytes (conflict-free) and a warp's
// loads of B touch two addresses (broadcasts). While a 16-deep tile is being multiplied, the next one is
// already loading into registers (prefetch), so global-memory latency overlaps the arithmetic; two barriers per
// tile.
// Tiles are stored k-major (As[k][i], Bs[k][j]); the global loads are coalesced along i for A and along k for
// B. Edge tiles are zero-filled and stores are guarded, so any M, N, K and leading dimension works. The global
// loads are 8 bytes wide: 16-byte loads need lda and ldb even and aligned bases, which general shapes do not
// guarantee. 64 accumulators per thread: about 240 registers, one block (8 warps) per SM on sm_90. No minimum
// compute capability. Measurements, and the designs it was chosen over: docs/gemm-notes.md.
// Run: build/bench/kbench run --suite gemm --variants register_tiled --sizes 1024,2048,4096
#include "gemm/kernel_common.cuh"

namespace ks::gemm {
namespace {

constexpr int BM = 128, BN = 128, BK = 16;
constexpr int TX = 16, TY = 16;  // threads per block: TX x TY
constexpr int TM = 8, TN = 8;    // C elements per thread: rows 2 tx + {0, 1} + 32 q, columns 2 ty + {0, 1} + 32 q
constexpr int kThreads = TX * TY;
constexpr int kALoads = BM * BK / kThreads;  // A elements each thread stages per tile
constexpr int kBLoads = BK * BN / kThreads;
constexpr int kPadB = 2;  // Bs rows of 130 doubles: a warp's transposing stores hit each bank pair twice (optimal)
static_assert(TM * TX == BM && TN * TY == BN, "the thread tiles cover the block tile");

__global__ void __launch_bounds__(kThreads, 1) register_tiled_kernel(GemmArgs a) {
  __shared__ __align__(16) double As[BK][BM];
  __shared__ __align__(16) double Bs[BK][BN + kPadB];
  const int t = threadIdx.x;
  const int tx = t % TX, ty = t / TX;
  const int i0 = blockIdx.x * BM, j0 = blockIdx.y * BN;

  // Staging: thread t moves A(i0 + t % BM, k0 + t / BM + r * (kThreads / BM)) and
  // B(k0 + t % BK, j0 + t / BK + r * (kThreads / BK)).
  const int a_row = t % BM, a_col = t / BM;
  const int b_row = t % BK, b_col = t / BK;
  double a_stage[kALoads], b_stage[kBLoads];
  // The staged elements of tile k0 = 0: A(i0 + a_row, a_col + r * kAStep), B(b_row, j0 + b_col + r * kBStep).
  // Each tile moves A's pointer BK columns right and B's BK rows down.
  constexpr int kAStep = kThreads / BM, kBStep = kThreads / BK;
  const double* a_src = a.A + (i0 + a_row) + static_cast<size_t>(a_col) * a.lda;
  const double* b_src = a.B + b_row + static_cast<size_t>(j0 + b_col) * a.ldb;
  const size_t a_step = static_cast<size_t>(kAStep) * a.lda, b_step = static_cast<size_t>(kBStep) * a.ldb;
  const bool a_row_in = i0 + a_row < a.M;
  auto load_tile = [&](int k0) {  // k0 >= K loads nothing and stages zeros
#pragma unroll
    for (int r = 0; r < kALoads; ++r)
      a_stage[r] = a_row_in && k0 + a_col + r * kAStep < a.K ? a_src[r * a_step] : 0.0;
#pragma unroll
    for (int r = 0; r < kBLoads; ++r)
      b_stage[r] = k0 + b_row < a.K && j0 + b_col + r * kBStep < a.N ? b_src[r * b_step] : 0.0;
    a_src += static_cast<size_t>(BK) * a.lda;
    b_src += BK;
  };
  auto store_tile = [&] {
#pragma unroll
    for (int r = 0; r < kALoads; ++r) As[a_col + r * kAStep][a_row] = a_stage[r];
#pragma unroll
    for (int r = 0; r < kBLoads; ++r) Bs[b_row][b_col + r * kBStep] = b_stage[r];
  };

  double acc[TM][TN] = {};
  load_tile(0);
  store_tile();
  __syncthreads();
  for (int k0 = 0; k0 < a.K; k0 += BK) {
    const bool more = k0 + BK < a.K;
    // The next tile's loads, in flight while this one is multiplied. Not under `if (more)`: inside such a
    // branch the compiler may sink them past the arithmetic to the stores that use them, and each tile would
    // wait out a full global-memory latency (the last tile's loads are all predicated off instead).
    load_tile(k0 + BK);
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      // Four 16-byte loads each: A rows 2 tx + {0, 1} + 32 q, B columns 2 ty + {0, 1} + 32 q.
      double av[TM], bv[TN];
#pragma unroll
      for (int q = 0; q < TM / 2; ++q) {
        const double2 v = *reinterpret_cast<const double2*>(&As[k][2 * tx + 32 * q]);
        av[2 * q] = v.x;
        av[2 * q + 1] = v.y;
      }
#pragma unroll
      for (int q = 0; q < TN / 2; ++q) {
        const double2 v = *reinterpret_cast<const double2*>(&Bs[k][2 * ty + 32 * q]);
        bv[2 * q] = v.x;
        bv[2 * q + 1] = v.y;
      }
#pragma unroll
      for (int m = 0; m < TM; ++m)
#pragma unroll
        for (int n = 0; n < TN; ++n) acc[m][n] = fma(av[m], bv[n], acc[m][n]);
    }
    __syncthreads();  // everyone is done reading this tile
    if (more) {
      store_tile();
      __syncthreads();
    }
  }
#pragma unroll
  for (int m = 0; m < TM; ++m) {
#pragma unroll
    for (int n = 0; n < TN; ++n) {
      const int i = i0 + 2 * tx + m % 2 + 32 * (m / 2), j = j0 + 2 * ty + n % 2 + 32 * (n / 2);
      if (i < a.M && j < a.N) store_c(a, i, j, acc[m][n]);
    }
  }
}

void register_tiled_launch(const GemmArgs& a, ExecContext& ctx) {
  register_tiled_kernel<<<tile_grid(a.M, BM, a.N, BN), kThreads, 0, ctx.stream()>>>(a);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

KS_GEMM_VARIANT({.info = {.name = "register_tiled",
                          .summary = "128x128 block tiles, 8x8 C elements per thread in registers, 16-byte shared "
                                     "loads, next tile prefetched"},
                 .launch = register_tiled_launch});

}  // namespace ks::gemm
