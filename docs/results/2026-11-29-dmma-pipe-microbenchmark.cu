// The FP64 tensor pipe's ceiling for a loop of mma.sync from registers alone (docs/gemm-notes.md, step 72): no shared
// memory, no barrier, W warps a sub-partition each issuing the 64 x 32 warp tile's 16 DMMA.16x8x16 a 16-deep step
// (or the same work as 32 DMMA.16x8x8, cuBLAS's instruction at 8192^3). Each warp times its loop with clock64; the
// figure is the pipe's cycles a DMMA.16x8x16's worth of work a sub-partition (64.0 is one each 64 cycles, the rate at
// which ptxas spaces one warp's DMMAs). Second kernel: the same 16 DMMA.16x8x16 a step with the 64 x 32 warp tile's
// fragments loaded from shared memory as dmma_tma loads them (B's four n-tiles, 16 LDS.64, then A's m-tiles, 8 each,
// 48 a step; two steps a 32-deep stage, the same SASS load order as dmma_tma's 128 x 128 x 32 kernel), and after each
// stage one of the ways of releasing it (lds_kernel's FENCE). The DMMA.16x8x16 and the mbarriers go through the
// project's wrappers (2026-11-29-dmma-pipe-common.cuh); its SASS is the same as that of the program before it used
// them, which produced the figures (cuobjdump). A microbenchmark, not part of the build; from the repository root:
//   nvcc -O3 -std=c++20 -arch=sm_90a -I. -o dmma_pipe docs/results/2026-11-29-dmma-pipe-microbenchmark.cu
//   ./dmma_pipe
#include <cstdio>
#include <vector>

#include "2026-11-29-dmma-pipe-common.cuh"

template <bool K8>
__global__ void pipe_kernel(int iters, double seed, double* out, long long* cycles) {
  double acc[4][4][4];
  double a[8], b[4];
#pragma unroll
  for (int i = 0; i < 8; ++i) a[i] = seed * (threadIdx.x + i);
#pragma unroll
  for (int i = 0; i < 4; ++i) b[i] = seed * (threadIdx.x - i);
  pipe_bench::zero(acc);
  __syncthreads();
  const long long t0 = clock64();
  for (int it = 0; it < iters; ++it) {
    if constexpr (K8) {  // the two 8-deep halves in turn over the 16 tiles, so no DMMA waits for the one before
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int m = 0; m < 4; ++m)
#pragma unroll
          for (int n = 0; n < 4; ++n) {
            double(&c)[4] = acc[m][n];
            asm volatile(
                "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                "{%0,%1,%2,%3};\n"
                : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
                : "d"(a[4 * h]), "d"(a[4 * h + 1]), "d"(a[4 * h + 2]), "d"(a[4 * h + 3]), "d"(b[2 * h]),
                  "d"(b[2 * h + 1]));
          }
    } else {
#pragma unroll
      for (int m = 0; m < 4; ++m)
#pragma unroll
        for (int n = 0; n < 4; ++n) pipe_bench::mma(acc[m][n], a, b);
    }
  }
  const long long t1 = clock64();
  out[blockIdx.x * blockDim.x + threadIdx.x] = pipe_bench::sum(acc);
  if (threadIdx.x % 32 == 0) cycles[blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32] = t1 - t0;
}

// How a warp releases a stage after its last fragment loads: 0 not at all, 1 dmma_tma's fence.acq_rel.cta then lane 0's
// mbarrier.arrive, 2 every lane's mbarrier.arrive (release semantics, no fence), 3 lane 0's arrive taking the last mma
// tile's fragments as operands (operands the instruction does not name: ptxas waits for nothing), no fence, 4
// fence.proxy.async.shared::cta then lane 0's arrive.
template <int FENCE>
__global__ void lds_kernel(int iters, double seed, double* out, long long* cycles) {
  __shared__ double buf[8][48 * 32];  // eight steps' fragments, each lane's doubles 8 bytes apart: conflict-free
  __shared__ __align__(8) unsigned long long bar;
  const uint32_t bar_addr = ks::gemm::tma::smem_addr(&bar);
  if (threadIdx.x == 0) ks::gemm::tma::bar_init(bar_addr, FENCE == 2 ? blockDim.x : blockDim.x / 32);
  for (int i = threadIdx.x; i < 8 * 48 * 32; i += blockDim.x) (&buf[0][0])[i] = seed * i;
  double acc[4][4][4];
  pipe_bench::zero(acc);
  __syncthreads();
  const int lane = threadIdx.x % 32;
  double last_a[8] = {}, last_b[16] = {};  // FENCE 3: the last mma tile's fragments
  const long long t0 = clock64();
#pragma unroll 2  // two steps a stage, as dmma_tma's 32-deep stages: the second step's loads may overlap the first
  for (int it = 0; it < iters; ++it) {
    pipe_bench::shared_step(acc, buf[it % 8] + lane, [&](int m, const double(&a)[8], const double(&b)[4][4]) {
      if (m == 3) {
#pragma unroll
        for (int i = 0; i < 8; ++i) last_a[i] = a[i];
#pragma unroll
        for (int i = 0; i < 16; ++i) last_b[i] = b[i / 4][i % 4];
      }
    });
    if (FENCE == 1 && it % 2 == 1) {
      asm volatile("fence.acq_rel.cta;\n" ::: "memory");
      __syncwarp();
      if (lane == 0) ks::gemm::tma::bar_arrive(bar_addr);
    }
    if (FENCE == 4 && it % 2 == 1) {
      asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
      __syncwarp();
      if (lane == 0) ks::gemm::tma::bar_arrive(bar_addr);
    }
    if (FENCE == 2 && it % 2 == 1) ks::gemm::tma::bar_arrive(bar_addr);
    if (FENCE == 3 && it % 2 == 1) {
      __syncwarp();
      if (lane == 0)
        asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar_addr), "d"(last_a[0]), "d"(last_a[7]),
                     "d"(last_b[0]), "d"(last_b[15])
                     : "memory");
    }
  }
  const long long t1 = clock64();
  out[blockIdx.x * blockDim.x + threadIdx.x] = pipe_bench::sum(acc);
  if (threadIdx.x % 32 == 0) cycles[blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32] = t1 - t0;
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const int iters = 20000;
  for (int k8 = 0; k8 < 7; ++k8)   // m16n8k16, m16n8k8 twice, fragments from shared memory, released three ways
    for (int w = 1; w <= 2; ++w) {  // warps a sub-partition
      const int threads = 128 * w, n = sms * threads;
      double* out;
      long long* cyc;
      cudaMalloc(&out, n * sizeof(double));
      cudaMalloc(&cyc, n / 32 * sizeof(long long));
      auto run = [&] {
        if (k8 >= 2) {
          if (k8 == 2) lds_kernel<0><<<sms, threads>>>(iters, 1e-9, out, cyc);
          if (k8 == 3) lds_kernel<1><<<sms, threads>>>(iters, 1e-9, out, cyc);
          if (k8 == 4) lds_kernel<2><<<sms, threads>>>(iters, 1e-9, out, cyc);
          if (k8 == 5) lds_kernel<3><<<sms, threads>>>(iters, 1e-9, out, cyc);
          if (k8 == 6) lds_kernel<4><<<sms, threads>>>(iters, 1e-9, out, cyc);
        }
        else if (k8)
          pipe_kernel<true><<<sms, threads>>>(iters, 1e-9, out, cyc);
        else
          pipe_kernel<false><<<sms, threads>>>(iters, 1e-9, out, cyc);
      };
      run();
      cudaEvent_t e0, e1;
      cudaEventCreate(&e0);
      cudaEventCreate(&e1);
      cudaEventRecord(e0);
      run();
      cudaEventRecord(e1);
      cudaEventSynchronize(e1);
      float ms = 0;
      cudaEventElapsedTime(&ms, e0, e1);
      std::vector<long long> c(n / 32);
      cudaMemcpy(c.data(), cyc, c.size() * sizeof(long long), cudaMemcpyDeviceToHost);
      long long mx = 0, sum = 0;
      for (long long x : c) {
        mx = x > mx ? x : mx;
        sum += x;
      }
      const double per = static_cast<double>(mx) / (static_cast<double>(iters) * 16 * w);  // cycles a 16x8x16 a SMSP
      const double tflops = 2.0 * 16 * 8 * 16 * 16.0 * iters * (n / 32) / (ms * 1e-3) / 1e12;
      std::printf("%s, %d warp(s) a sub-partition: %.2f cycles a DMMA.16x8x16's work a sub-partition (slowest warp; "
                  "mean %.2f), %.2f TFLOP/s, %.3f ms %s\n",
                  k8 == 6   ? "shared fragments, proxy fence and lane 0 arrives"
                  : k8 == 5 ? "shared fragments, lane 0 arrives on the last fragments"
                  : k8 == 4 ? "shared fragments, every lane arrives"
                  : k8 == 3 ? "shared fragments, fence and lane 0 arrives"
                  : k8 == 2 ? "shared fragments"
                  : k8      ? "m16n8k8 x2"
                            : "m16n8k16",
                  w, per,
                  static_cast<double>(sum) / c.size() / (static_cast<double>(iters) * 16 * w), tflops, ms,
                  cudaGetErrorString(cudaGetLastError()));
      cudaFree(out);
      cudaFree(cyc);
    }
  return 0;
}
