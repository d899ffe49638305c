// What the two microbenchmarks of 2026-11-29 (2026-11-29-dmma-pipe-microbenchmark.cu and
// 2026-11-29-dmma-pipe-boundary-microbenchmark.cu; docs/gemm-notes.md, step 72) share: the 64 x 32 warp tile's
// accumulators, and one 16-deep step of dmma_tma's fragment loads from shared memory with its 16 DMMA.16x8x16, issued
// through the project's own wrappers (gemm/dmma_mma.cuh, and gemm/hopper.cuh for the mbarriers), so that they time the
// instructions dmma_tma issues. Built from the repository root (-I.).
#pragma once

#include "gemm/dmma_mma.cuh"
#include "gemm/hopper.cuh"

namespace pipe_bench {

using Acc = double[4][4][4];  // [m-tile][n-tile][element]: the 64 x 32 warp tile's 16 mma tiles

__device__ __forceinline__ void zero(Acc& acc) {
#pragma unroll
  for (int m = 0; m < 4; ++m)
#pragma unroll
    for (int n = 0; n < 4; ++n)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[m][n][r] = 0.0;
}

__device__ __forceinline__ double sum(const Acc& acc) {  // written out, so that no DMMA is dead code
  double s = 0.0;
#pragma unroll
  for (int m = 0; m < 4; ++m)
#pragma unroll
    for (int n = 0; n < 4; ++n)
#pragma unroll
      for (int r = 0; r < 4; ++r) s += acc[m][n][r];
  return s;
}

__device__ __forceinline__ void mma(double (&c)[4], const double (&a)[8], const double (&b)[4]) {
  ks::gemm::dmma::mma_16x8x16<ks::gemm::dmma::Instr::K16>(c, a, b);
}

// One 16-deep step as dmma_tma runs it: B's four n-tiles (16 LDS.64), then each m-tile's A fragment (8) and its four
// DMMAs. f: this lane's first double of the step's 48 x 32 in shared memory (each lane's doubles 8 bytes apart, so
// conflict-free). after(m, a, b) runs after m-tile m's DMMAs.
template <class After>
__device__ __forceinline__ void shared_step(Acc& acc, const double* f, After&& after) {
  double b[4][4];
#pragma unroll
  for (int n = 0; n < 4; ++n)
#pragma unroll
    for (int i = 0; i < 4; ++i) b[n][i] = f[(n * 4 + i) * 32];
#pragma unroll
  for (int m = 0; m < 4; ++m) {
    double a[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) a[i] = f[(16 + m * 8 + i) * 32];
#pragma unroll
    for (int n = 0; n < 4; ++n) mma(acc[m][n], a, b[n]);
    after(m, a, b);
  }
}

}  // namespace pipe_bench
