// shared: square tiles of A and B staged in shared memory, one element of C per thread.
//
// Each BS x BS block loads a tile of A and a tile of B once and every thread reuses them BS times, so
// global traffic drops by a factor of BS over the naive kernel. The thread layout is still the naive one
// (threadIdx.x along the columns of C), so the global loads of both tiles stride by lda/ldb across a warp:
// the reuse is there, the coalescing is not; the next step fixes that.
// Edge tiles are zero-filled, so any M, N, K works. Tile: BS (template, 16 as in the tutorial's kernel).
// Run: build/bench/kbench run --suite gemm --variants shared --sizes 1024,2048,4096
#include "gemm/kernel_common.cuh"

namespace ks::gemm {
namespace {

template <int BS>
__global__ void __launch_bounds__(BS* BS) shared_kernel(GemmArgs a) {
  __shared__ double As[BS][BS];  // As[r][kk] = A(i0 + r, k0 + kk)
  __shared__ double Bs[BS][BS];  // Bs[kk][c] = B(k0 + kk, j0 + c)
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int i = blockIdx.y * BS + ty;
  const int j = blockIdx.x * BS + tx;
  double acc = 0.0;
  for (int k0 = 0; k0 < a.K; k0 += BS) {
    As[ty][tx] = (i < a.M && k0 + tx < a.K) ? a.A[i + static_cast<size_t>(k0 + tx) * a.lda] : 0.0;
    Bs[ty][tx] = (k0 + ty < a.K && j < a.N) ? a.B[k0 + ty + static_cast<size_t>(j) * a.ldb] : 0.0;
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BS; ++kk) acc += As[ty][kk] * Bs[kk][tx];
    __syncthreads();
  }
  if (i < a.M && j < a.N) store_c(a, i, j, acc);
}

template <int BS>
void shared_launch(const GemmArgs& a, ExecContext& ctx) {
  shared_kernel<BS><<<tile_grid(a.N, BS, a.M, BS), dim3(BS, BS), 0, ctx.stream()>>>(a);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

KS_GEMM_VARIANT({.info = {.name = "shared",
                          .summary = "shared-memory tiles of A and B, one C element per thread (reuse, not yet coalesced)"},
                 .launch = shared_launch<16>});

}  // namespace ks::gemm
