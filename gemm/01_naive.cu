// naive: one thread per element of C, reading A and B straight from global memory.
//
// The starting point of the ladder. Threads are laid out the way row-major code is usually written:
// threadIdx.x walks the columns of C. In column-major storage that puts neighbouring threads of a warp
// ldc (and ldb) elements apart, so every load of B and every store of C is uncoalesced, and A's loads are
// broadcasts that bring no reuse: each thread streams 2K doubles from memory for 2K flops.
// Tile: BS x BS threads (template, 16 as in the tutorial's kernel). Any shape; no minimum compute capability.
// What it measures and why: docs/gemm-notes.md.
// Run: build/bench/kbench run --suite gemm --variants naive --sizes 1024,2048,4096
#include "gemm/kernel_common.cuh"

namespace ks::gemm {
namespace {

template <int BS>
__global__ void __launch_bounds__(BS* BS) naive_kernel(GemmArgs a) {
  const int j = blockIdx.x * BS + threadIdx.x;
  const int i = blockIdx.y * BS + threadIdx.y;
  if (i >= a.M || j >= a.N) return;
  const double* arow = a.A + i;
  const double* bcol = a.B + static_cast<size_t>(j) * a.ldb;
  double acc = 0.0;
  for (int k = 0; k < a.K; ++k) acc += arow[static_cast<size_t>(k) * a.lda] * bcol[k];
  store_c(a, i, j, acc);
}

template <int BS>
void naive_launch(const GemmArgs& a, ExecContext& ctx) {
  naive_kernel<BS><<<tile_grid(a.N, BS, a.M, BS), dim3(BS, BS), 0, ctx.stream()>>>(a);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

KS_GEMM_VARIANT({.info = {.name = "naive",
                          .summary = "one thread per C element, operands from global memory (uncoalesced, the baseline)"},
                 .launch = naive_launch<16>});

}  // namespace ks::gemm
