// What dmma_tma's stage boundary costs the FP64 tensor pipe, piece by piece (docs/gemm-notes.md, step 72): two warps a
// sub-partition run the 64 x 32 warp tile's 16 DMMA.16x8x16 a 16-deep step with the fragments loaded from shared
// memory as in 2026-11-29-dmma-pipe-microbenchmark.cu (two steps a 32-deep stage), and at each stage's end
//   FENCE: fence.acq_rel.cta, then lane 0's mbarrier.arrive (dmma_tma's release);
//   WAIT:  an mbarrier.try_wait loop on a barrier already complete (dmma_tma's wait for the next stage, data ready);
// and PRODUCER, a ninth warp, copies 64 KB a round from global memory (L2-resident) into a shared-memory area no
// consumer reads, by four 16 KB cp.async.bulk completing on an mbarrier: paced at one round each 4,096 cycles (a
// stage's 128 x 32 + 128 x 32 doubles at dmma_tma's 8192^3 rate) or back to back. Figures: cycles a DMMA.16x8x16's
// work a sub-partition (64 = the pipe's rate), slowest consumer warp. On the H200 (2026-11-29) the three forms with a
// producer did not launch ("too many resources requested"): a block of nine warps is given registers as for twelve,
// 12 x 32 x 216 > 65,536 (dmma_tma's producer warpgroup gives its registers to the consumers by setmaxnreg instead).
// That form of this program (2026-11-29-dmma-pipe-boundary-producer-group-not-run.patch) has not run. The DMMAs and
// mbarriers go through the project's wrappers (2026-11-29-dmma-pipe-common.cuh); the SASS is the same as that of the
// program before it used them, which produced the figures (cuobjdump). A microbenchmark, not part of the build; from
// the repository root:
//   nvcc -O3 -std=c++20 -arch=sm_90a -I. -o dmma_boundary docs/results/2026-11-29-dmma-pipe-boundary-microbenchmark.cu
//   ./dmma_boundary
#include <cstdio>
#include <vector>

#include "2026-11-29-dmma-pipe-common.cuh"

constexpr int kConsumers = 8, kProducerBytes = 64 * 1024;

using ks::gemm::tma::bar_arrive, ks::gemm::tma::bar_init, ks::gemm::tma::bar_wait, ks::gemm::tma::smem_addr;

template <bool FENCE, bool WAIT, int PRODUCER>  // PRODUCER: 0 none, 1 paced, 2 back to back
__global__ void boundary_kernel(int iters, double seed, const double* src, double* out, long long* cycles) {
  extern __shared__ __align__(128) unsigned char area[];  // the producer's copies land here
  __shared__ double buf[8][48 * 32];
  __shared__ __align__(8) unsigned long long released, ready, copied;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    bar_init(smem_addr(&released), kConsumers);
    bar_init(smem_addr(&ready), 1);
    bar_init(smem_addr(&copied), 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    bar_arrive(smem_addr(&ready));  // phase 0 complete
  }
  for (int i = threadIdx.x; i < 8 * 48 * 32; i += blockDim.x) (&buf[0][0])[i] = seed * i;
  __syncthreads();
  if (warp == kConsumers) {  // the producer
    if (lane != 0) return;
    const long long start = clock64();
    for (int r = 0; r < iters / 2; ++r) {
      ks::gemm::tma::bar_arrive_expect(smem_addr(&copied), kProducerBytes);
      for (int q = 0; q < 4; ++q)
        asm volatile(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                smem_addr(area + q * (kProducerBytes / 4))),
            "l"(src + q * (kProducerBytes / 32)), "n"(kProducerBytes / 4), "r"(smem_addr(&copied))
            : "memory");
      bar_wait(smem_addr(&copied), r & 1);
      if (PRODUCER == 1)
        while (clock64() - start < 4096ll * (r + 1)) {
        }
    }
    return;
  }
  pipe_bench::Acc acc;
  pipe_bench::zero(acc);
  const long long t0 = clock64();
#pragma unroll 2
  for (int it = 0; it < iters; ++it) {
    if (WAIT && it % 2 == 0) bar_wait(smem_addr(&ready), 0);
    pipe_bench::shared_step(acc, buf[it % 8] + lane, [](int, const double(&)[8], const double(&)[4][4]) {});
    if (FENCE && it % 2 == 1) {
      asm volatile("fence.acq_rel.cta;\n" ::: "memory");
      __syncwarp();
      if (lane == 0) bar_arrive(smem_addr(&released));
    }
  }
  const long long t1 = clock64();
  out[blockIdx.x * kConsumers * 32 + threadIdx.x] = pipe_bench::sum(acc);
  if (lane == 0) cycles[blockIdx.x * kConsumers + warp] = t1 - t0;
}

template <bool FENCE, bool WAIT, int PRODUCER>
void measure(const char* name, int sms, const double* src, double* out, long long* cyc) {
  const int iters = 20000, threads = 32 * (kConsumers + (PRODUCER ? 1 : 0));
  auto kernel = boundary_kernel<FENCE, WAIT, PRODUCER>;
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kProducerBytes);
  kernel<<<sms, threads, kProducerBytes>>>(iters, 1e-9, src, out, cyc);  // warm-up
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  cudaEventRecord(e0);
  kernel<<<sms, threads, kProducerBytes>>>(iters, 1e-9, src, out, cyc);
  cudaEventRecord(e1);
  cudaEventSynchronize(e1);
  float ms = 0;
  cudaEventElapsedTime(&ms, e0, e1);
  std::vector<long long> c(static_cast<size_t>(sms) * kConsumers);
  cudaMemcpy(c.data(), cyc, c.size() * sizeof(long long), cudaMemcpyDeviceToHost);
  long long mx = 0;
  for (long long x : c) mx = x > mx ? x : mx;
  std::printf("%-58s %.2f cycles a DMMA.16x8x16's work a sub-partition, %.3f ms %s\n", name,
              static_cast<double>(mx) / (iters * 16.0 * 2), ms, cudaGetErrorString(cudaGetLastError()));
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  double *src, *out;
  long long* cyc;
  cudaMalloc(&src, kProducerBytes);
  cudaMemset(src, 0, kProducerBytes);
  cudaMalloc(&out, static_cast<size_t>(sms) * kConsumers * 32 * sizeof(double));
  cudaMalloc(&cyc, static_cast<size_t>(sms) * kConsumers * sizeof(long long));
  for (int round = 0; round < 2; ++round) {
    measure<false, false, 0>("shared fragments", sms, src, out, cyc);
    measure<true, false, 0>("+ release fence and arrive", sms, src, out, cyc);
    measure<true, true, 0>("+ release, + wait on a ready barrier", sms, src, out, cyc);
    measure<false, false, 1>("shared fragments, producer paced", sms, src, out, cyc);
    measure<true, true, 1>("+ release, + wait, producer paced", sms, src, out, cyc);
    measure<true, true, 2>("+ release, + wait, producer back to back", sms, src, out, cyc);
  }
  return 0;
}
