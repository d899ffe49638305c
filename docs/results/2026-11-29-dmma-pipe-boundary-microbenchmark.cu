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
// 12 x 32 x 216 > 65,536, which is why dmma_tma's producer is a warpgroup that gives its registers to the consumers
// (setmaxnreg). That form of this program (2026-11-29-dmma-pipe-boundary-producer-group-not-run.patch) has not run.
// A microbenchmark, not part of the build:
//   nvcc -O3 -arch=sm_90a -o dmma_boundary 2026-11-29-dmma-pipe-boundary-microbenchmark.cu && ./dmma_boundary
#include <cstdio>
#include <vector>

constexpr int kConsumers = 8, kProducerBytes = 64 * 1024;

__device__ __forceinline__ unsigned smem(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ void wait_parity(unsigned bar, unsigned parity) {
  asm volatile(
      "{\n .reg .pred p;\n"
      "W_%=:\n"
      " mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      " @!p bra W_%=;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

template <bool FENCE, bool WAIT, int PRODUCER>  // PRODUCER: 0 none, 1 paced, 2 back to back
__global__ void boundary_kernel(int iters, double seed, const double* src, double* out, long long* cycles) {
  extern __shared__ __align__(128) unsigned char area[];  // the producer's copies land here
  __shared__ double buf[8][48 * 32];
  __shared__ __align__(8) unsigned long long released, ready, copied;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem(&released)), "r"(kConsumers));
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smem(&ready)));
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smem(&copied)));
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem(&ready)) : "memory");  // phase 0 complete
  }
  for (int i = threadIdx.x; i < 8 * 48 * 32; i += blockDim.x) (&buf[0][0])[i] = seed * i;
  __syncthreads();
  if (warp == kConsumers) {  // the producer
    if (lane != 0) return;
    const long long start = clock64();
    for (int r = 0; r < iters / 2; ++r) {
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem(&copied)), "r"(kProducerBytes)
                   : "memory");
      for (int q = 0; q < 4; ++q)
        asm volatile(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                smem(area + q * (kProducerBytes / 4))),
            "l"(src + q * (kProducerBytes / 32)), "n"(kProducerBytes / 4), "r"(smem(&copied))
            : "memory");
      wait_parity(smem(&copied), r & 1);
      if (PRODUCER == 1)
        while (clock64() - start < 4096ll * (r + 1)) {
        }
    }
    return;
  }
  double acc[4][4][4];
#pragma unroll
  for (int m = 0; m < 4; ++m)
#pragma unroll
    for (int n = 0; n < 4; ++n)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[m][n][r] = 0.0;
  const long long t0 = clock64();
#pragma unroll 2
  for (int it = 0; it < iters; ++it) {
    if (WAIT && it % 2 == 0) wait_parity(smem(&ready), 0);
    const double* f = buf[it % 8] + lane;
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
      for (int n = 0; n < 4; ++n) {
        double(&c)[4] = acc[m][n];
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, "
            "{%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
            : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
            : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(b[n][0]),
              "d"(b[n][1]), "d"(b[n][2]), "d"(b[n][3]));
      }
    }
    if (FENCE && it % 2 == 1) {
      asm volatile("fence.acq_rel.cta;\n" ::: "memory");
      __syncwarp();
      if (lane == 0) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem(&released)) : "memory");
    }
  }
  const long long t1 = clock64();
  double s = 0.0;
#pragma unroll
  for (int m = 0; m < 4; ++m)
#pragma unroll
    for (int n = 0; n < 4; ++n)
#pragma unroll
      for (int r = 0; r < 4; ++r) s += acc[m][n][r];
  out[blockIdx.x * kConsumers * 32 + threadIdx.x] = s;
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
