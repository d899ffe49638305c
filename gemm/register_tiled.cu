// register_tiled: each thread computes a TM x TN block of C in registers, as outer products of a column of A's
// tile and a row of B's tile, both read from shared memory.
//
// The coalesced kernel needs two shared-memory loads per FMA, so shared-memory bandwidth caps it near a
// quarter of the FP64 rate. Here a block computes a BM x BN = 128 x 64 tile of C with 256 threads, each
// owning TM x TN = 8 x 4 elements: per step of k a thread loads 8 values of A and 4 of B and does 32 FMAs,
// 2.7 FMAs per load. Thread (tx, ty) owns rows tx + 16m and columns ty + 16n: in shared memory a half-warp
// (16 consecutive tx, one ty) reads 16 consecutive doubles of A (conflict-free) and one double of B (a
// broadcast). While a tile is being multiplied, the next one is already loading into registers (prefetch),
// so global-memory latency overlaps the arithmetic. Tiles are stored k-major (As[k][i], Bs[k][j]); the global
// loads are coalesced along i for A and along k for B. Edge tiles are zero-filled and stores are guarded, so
// any M, N, K and leading dimension works. The loads are 8 bytes wide: 16-byte loads need lda and ldb even
// and aligned bases, which general shapes do not guarantee (a specialisation for them is a next step).
// No minimum compute capability. Measured: docs/gemm-notes.md.
#include "gemm/kernel_common.cuh"

namespace ks::gemm {
namespace {

constexpr int BM = 128, BN = 64, BK = 16;
constexpr int TX = 16, TY = 16;  // threads per block: TX x TY
constexpr int TM = BM / TX, TN = BN / TY;
constexpr int kThreads = TX * TY;
constexpr int kALoads = BM * BK / kThreads;  // A elements each thread stages per tile
constexpr int kBLoads = BK * BN / kThreads;

__global__ void __launch_bounds__(kThreads) register_tiled_kernel(GemmArgs a) {
  __shared__ double As[BK][BM];
  __shared__ double Bs[BK][BN];
  const int t = threadIdx.x;
  const int tx = t % TX, ty = t / TX;
  const int i0 = blockIdx.x * BM, j0 = blockIdx.y * BN;

  // Staging: thread t moves A(i0 + t % BM, k0 + t / BM + r * (kThreads / BM)) and
  // B(k0 + t % BK, j0 + t / BK + r * (kThreads / BK)).
  const int a_row = t % BM, a_col = t / BM;
  const int b_row = t % BK, b_col = t / BK;
  double a_stage[kALoads], b_stage[kBLoads];
  auto load_tile = [&](int k0) {
#pragma unroll
    for (int r = 0; r < kALoads; ++r) {
      const int i = i0 + a_row, k = k0 + a_col + r * (kThreads / BM);
      a_stage[r] = (i < a.M && k < a.K) ? a.A[i + static_cast<size_t>(k) * a.lda] : 0.0;
    }
#pragma unroll
    for (int r = 0; r < kBLoads; ++r) {
      const int k = k0 + b_row, j = j0 + b_col + r * (kThreads / BK);
      b_stage[r] = (k < a.K && j < a.N) ? a.B[k + static_cast<size_t>(j) * a.ldb] : 0.0;
    }
  };
  auto store_tile = [&] {
#pragma unroll
    for (int r = 0; r < kALoads; ++r) As[a_col + r * (kThreads / BM)][a_row] = a_stage[r];
#pragma unroll
    for (int r = 0; r < kBLoads; ++r) Bs[b_row][b_col + r * (kThreads / BK)] = b_stage[r];
  };

  double acc[TM][TN] = {};
  load_tile(0);
  store_tile();
  __syncthreads();
  for (int k0 = 0; k0 < a.K; k0 += BK) {
    const bool more = k0 + BK < a.K;
    if (more) load_tile(k0 + BK);  // in flight while this tile is multiplied
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      double av[TM], bv[TN];
#pragma unroll
      for (int m = 0; m < TM; ++m) av[m] = As[k][tx + TX * m];
#pragma unroll
      for (int n = 0; n < TN; ++n) bv[n] = Bs[k][ty + TY * n];
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
      const int i = i0 + tx + TX * m, j = j0 + ty + TY * n;
      if (i < a.M && j < a.N) store_c(a, i, j, acc[m][n]);
    }
  }
}

void launch(const GemmArgs& a, ExecContext& ctx) {
  check_args(a);
  register_tiled_kernel<<<tile_grid(a.M, BM, a.N, BN), kThreads, 0, ctx.stream()>>>(a);
  CUDA_CHECK_LAUNCH();
}

const auto& kRegistered = registry().add(
    {{"register_tiled", "128x64 block tiles, 8x4 C elements per thread in registers, next tile prefetched", 0, 40},
     launch});

}  // namespace
}  // namespace ks::gemm
