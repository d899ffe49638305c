// warp_tiled: the FFMA kernel of register_tiled, reorganised the way the tensor-core kernel is: each warp owns
// a rectangle of the block tile, and the block's k-tiles arrive through the cp.async multi-stage pipeline of
// gemm/cp_async_pipeline.cuh instead of through registers (minimum CC 8.0).
//
// What changes against register_tiled, and why it might pay:
// - Copies bypass the registers. register_tiled stages every element of the next tile in a register (16 per
//   thread) and stores it to shared memory after the arithmetic, with two barriers per tile. Here cp.async
//   writes shared memory directly, STAGES - 1 k-tiles ahead, with one barrier per k-tile and no staging
//   registers, and the copies issue between the FMAs.
// - Warp tiles. A block computes BM x BN of C (128 x 64: 2 x 2 warps) with each warp a 64 x 32 rectangle as
//   8 x 4 lanes of 8 x 8 elements. Per k a warp reads 64 + 32 distinct doubles of A and B from shared memory,
//   against 128 + 16 for register_tiled's 128 x 16 warp footprint.
//
// Thread (lm, ln) = (lane % 8, lane / 8) of warp (wm, wn) owns rows wm WTM + 2 lm + {0, 1} + 16 q and columns
// wn WTN + ln + 4 n (q = 0..3, n = 0..7). A's k-tile is k-major (As[k][m]): a 16-byte load gives two rows at
// one k, and the 8 lm of a warp cover 128 contiguous bytes (the 4 ln read the same addresses). B's is n-major
// (Bs[n][k], pitch 20 doubles = 160 bytes): a 16-byte load gives one column at two consecutive k, and the 4
// ln of a warp touch offsets 160 ln (mod 128) = 0, 32, 64, 96 bytes, distinct banks. So per two steps of k a
// thread makes 8 loads of A and 8 of B (16 bytes each) for 128 FMAs, as in register_tiled, all conflict-free.
//
// Any shape through the pipeline's zero-filled edge copies and guarded stores; 16-byte copies where lda and
// ldb are even and A and B 16-byte aligned, 8-byte copies otherwise. Measurements: docs/gemm-notes.md.
// Run: build/bench/kbench run --suite gemm --variants 'warp_tiled.*' --sizes 1024,2048,4096
#include "gemm/cp_async_pipeline.cuh"

namespace ks::gemm {
namespace warp_tiled {

// The threads that own one warp tile, as 8 x 4 lanes: a warp on NVIDIA GPUs, half a 64-lane wavefront on gfx9.
// They share no data through warp-level operations, so the group need not be the hardware's warp.
constexpr int kGroup = 32;

// 16-deep k-tiles; warps of 64 x 32; BLOCKS: the resident blocks per SM __launch_bounds__ asks for.
template <int BM, int BN, int STAGES, int VEC, int BLOCKS>
struct Tile : pipeline::Layout<BM, BN, 16, STAGES, VEC, kGroup * (BM / 64) * (BN / 32)> {
  static constexpr int WTM = 64, WTN = 32;
  static constexpr int WARPS_M = BM / WTM;
  static constexpr int TM = WTM / 8, TN = WTN / 4;  // elements per thread: 8 x 8
  static constexpr int kBlocksPerSm = BLOCKS;
  static_assert(BM % WTM == 0 && BN % WTN == 0, "the block tile holds whole warp tiles");
};

template <class T>
__global__ void KS_LAUNCH_BOUNDS(T::kThreads, T::kBlocksPerSm) warp_tiled_kernel(GemmArgs a) {
#if KS_PIPELINE_COPIES
  extern __shared__ __align__(16) double smem[];
  const int warp = threadIdx.x / kGroup, lane = threadIdx.x % kGroup;
  const int lm = lane % 8, ln = lane / 8;
  const int wm = warp % T::WARPS_M, wn = warp / T::WARPS_M;
  int tile_m, tile_n;
  pipeline::block_tile(tile_m, tile_n);
  const int i0 = tile_m * T::BM, j0 = tile_n * T::BN;
  const pipeline::KTileCopier<T> copier(a, smem, i0, j0, 0, a.K);

  double acc[T::TM][T::TN] = {};
  const int a_off = wm * T::WTM + 2 * lm;       // As[k][a_off + 16 q]: rows a_off + 16 q + {0, 1}
  const int b_off = (wn * T::WTN + ln) * T::LDB;  // Bs[b_off / LDB + 4 n][k]

  // The copies of k-tile `next` go one or two per pair of k steps.
  constexpr int kPairs = T::BK / 2;
  constexpr int kCopiesPerPair = (T::kCopies + kPairs - 1) / kPairs;
  pipeline::run(copier, [&](auto unchecked, int kt, int next, bool load) {
    const double* as = copier.a_stage(kt % T::STAGES) + a_off;
    const double* bs = copier.b_stage(kt % T::STAGES) + b_off;
#pragma unroll
    for (int kp = 0; kp < kPairs; ++kp) {
      double bv[T::TN][2];  // B(2 kp + {0, 1}, column n)
#pragma unroll
      for (int n = 0; n < T::TN; ++n) {
        const double2 v = *reinterpret_cast<const double2*>(bs + 4 * n * T::LDB + 2 * kp);
        bv[n][0] = v.x;
        bv[n][1] = v.y;
      }
#pragma unroll
      for (int kk = 0; kk < 2; ++kk) {
        double av[T::TM];  // A(row m, 2 kp + kk)
#pragma unroll
        for (int q = 0; q < T::TM / 2; ++q) {
          const double2 v = *reinterpret_cast<const double2*>(as + (2 * kp + kk) * T::LDA + 16 * q);
          av[2 * q] = v.x;
          av[2 * q + 1] = v.y;
        }
#pragma unroll
        for (int m = 0; m < T::TM; ++m)
#pragma unroll
          for (int n = 0; n < T::TN; ++n) acc[m][n] = fma(av[m], bv[n][kk], acc[m][n]);
      }
#pragma unroll
      for (int q = 0; q < kCopiesPerPair; ++q) {
        const int c = kp * kCopiesPerPair + q;
        if (c < T::kCopies && load) copier.copy(unchecked, c, next % T::STAGES, next);
      }
    }
  });

#pragma unroll
  for (int m = 0; m < T::TM; ++m) {
#pragma unroll
    for (int n = 0; n < T::TN; ++n) {
      const int i = i0 + a_off + 16 * (m / 2) + m % 2, j = j0 + wn * T::WTN + ln + 4 * n;
      if (i < a.M && j < a.N) store_c(a, i, j, acc[m][n]);
    }
  }
#else
  __trap();  // pipeline::prepare refuses code compiled below compute_80
#endif
}

}  // namespace warp_tiled

namespace {

using warp_tiled::Tile;
using warp_tiled::warp_tiled_kernel;

template <class T>
void launch_tile(const GemmArgs& a, ExecContext& ctx) {
  pipeline::prepare<T, warp_tiled_kernel<T>>("warp_tiled");
  warp_tiled_kernel<T><<<tile_grid(a.M, T::BM, a.N, T::BN), T::kThreads, T::kSmemBytes, ctx.stream()>>>(a);
  CUDA_CHECK_LAUNCH();
}

template <int BM, int BN, int STAGES, int BLOCKS>
GemmLaunch launcher() {
  return [](const GemmArgs& a, ExecContext& ctx) {
    if (pipeline::wide_loads(a))
      launch_tile<Tile<BM, BN, STAGES, 2, BLOCKS>>(a, ctx);
    else
      launch_tile<Tile<BM, BN, STAGES, 1, BLOCKS>>(a, ctx);
  };
}

}  // namespace

// 128x64 tiles: 4 warps, two blocks per SM (up to 255 registers each), so one block's barrier wait overlaps
// the other's arithmetic. 128x128 with 8 warps and one block per SM is the tuning alternative.
#if defined(KS_HIP)
// AMD GPUs: plain copies, and two stages, as a compute unit's 64 KiB of LDS holds two 128x64 stages (53 KiB) but
// not three (80 KiB); the 128x128 tile, 73 KiB in two stages, does not fit at all. "Warps" stay groups of 32
// threads (the lane layout above), two to a 64-lane wavefront. So a compute unit holds one block, two waves:
// half its four SIMDs have no wave (docs/gemm-notes.md, step 31, says what would be tried on such a GPU).
KS_GEMM_VARIANT({.info = {.name = "warp_tiled",
                          .summary = "FFMA, 128x64 block tiles of 64x32 warp tiles, 8x8 per thread, 2-stage pipeline "
                                     "of plain copies, 1 block (2 waves) per CU by LDS"},
                 .launch = launcher<128, 64, 2, 1>()});
#else
KS_GEMM_VARIANT({.info = {.name = "warp_tiled",
                          .summary = "FFMA, 128x64 block tiles of 64x32 warp tiles, 8x8 per thread, cp.async 3-stage "
                                     "pipeline, 2 blocks/SM (sm_80+)",
                          .min_cc = pipeline::kCpAsyncCc},
                 .launch = launcher<128, 64, 3, 2>()});
KS_GEMM_VARIANT({.info = {.name = "warp_tiled_128x128",
                          .summary = "warp_tiled with 128x128 block tiles (8 warps), 3 stages, 1 block per SM",
                          .min_cc = pipeline::kCpAsyncCc,
                          .tuning = true},
                 .launch = launcher<128, 128, 3, 1>()});
#endif

}  // namespace ks::gemm
