// coalesced: shared-memory tiles with warps reading consecutive addresses, A's tile transposed and padded.
//
// threadIdx.x now walks the rows of C, which are contiguous in column-major storage: the loads of A's
// tile (consecutive rows), of B's tile (consecutive k) and the stores of C are all coalesced.
// A's tile is stored transposed, As[row][k], so each thread's inner loop walks one row. Without padding a
// row is BS doubles = 128 bytes for BS = 16: shared memory has 32 banks of 4 bytes, an 8-byte word covers
// two banks, and a warp's 64-bit accesses are served per half-warp (16 threads x 8 bytes = all 32 banks).
// With a 128-byte row stride, the 16 threads of a half-warp reading As[tx][kk] all hit the same two banks:
// a 16-way conflict. Padding each row by one double makes the stride 136 bytes = 34 banks, so thread tx
// lands on banks 2*tx and 2*tx+1 (mod 32): all distinct, conflict-free. The padded stride also keeps the
// transposing stores As[tx][ty] conflict-free. B's tile is read as Bs[ty][kk], one address per half-warp
// (a broadcast), and needs no padding.
// Edge tiles are zero-filled, so any M, N, K works. Tile: BS (template, 16 as in the tutorial's kernel).
// Run: build/bench/kbench run --suite gemm --variants coalesced --sizes 1024,2048,4096
#include "gemm/kernel_common.cuh"

namespace ks::gemm {
namespace {

template <int BS>
__global__ void __launch_bounds__(BS* BS) coalesced_kernel(GemmArgs a) {
  __shared__ double As[BS][BS + 1];  // As[r][kk] = A(i0 + r, k0 + kk), padded row
  __shared__ double Bs[BS][BS];      // Bs[c][kk] = B(k0 + kk, j0 + c)
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int i = blockIdx.x * BS + tx;
  const int j = blockIdx.y * BS + ty;
  double acc = 0.0;
  for (int k0 = 0; k0 < a.K; k0 += BS) {
    As[tx][ty] = (i < a.M && k0 + ty < a.K) ? a.A[i + static_cast<size_t>(k0 + ty) * a.lda] : 0.0;
    Bs[ty][tx] = (k0 + tx < a.K && j < a.N) ? a.B[k0 + tx + static_cast<size_t>(j) * a.ldb] : 0.0;
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BS; ++kk) acc += As[tx][kk] * Bs[ty][kk];
    __syncthreads();
  }
  if (i < a.M && j < a.N) store_c(a, i, j, acc);
}

template <int BS>
void coalesced_launch(const GemmArgs& a, ExecContext& ctx) {
  coalesced_kernel<BS><<<tile_grid(a.M, BS, a.N, BS), dim3(BS, BS), 0, ctx.stream()>>>(a);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

KS_GEMM_VARIANT({.info = {.name = "coalesced",
                          .summary = "shared-memory tiles, coalesced loads, A tile transposed with a +1 padded row"},
                 .launch = coalesced_launch<16>,
                 .suite_modes = SuiteModes::All});

}  // namespace ks::gemm
