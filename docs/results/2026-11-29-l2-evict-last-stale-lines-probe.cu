// Prepared in the sixty-third session (docs/gemm-notes.md, step 74), not run yet.
// Whether L2 lines read with an evict-last policy keep crowding the L2 after the kernel that read them: time a
// reuse-sensitive pass over R (its bytes read `reps` times) after a kernel read X (a) plainly, (b) evict-last,
// (c) evict-last and then applypriority evict_normal over X, (d) evict-last then 1, 5, 20 unrelated streaming kernels.
// Build: nvcc -O3 -arch=sm_90a 2026-11-29-l2-evict-last-stale-lines-probe.cu -o probe. Expect: with X plain, R (0.6 of the L2) stays in the
// L2 and a pass runs from it; if X's evict-last lines keep their priority, R's lines go first and a pass slows.
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>
#include <vector>
#include <algorithm>

__device__ __forceinline__ uint64_t policy_last() {
  uint64_t p;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  return p;
}
__device__ __forceinline__ double ld_last(const double* a, uint64_t p) {
  double v;
  asm volatile("ld.global.L2::cache_hint.f64 %0, [%1], %2;" : "=d"(v) : "l"(a), "l"(p));
  return v;
}
__global__ void read_x(const double* x, size_t n, int last, double* sink) {
  double s = 0;
  const uint64_t p = policy_last();
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    s += last ? ld_last(x + i, p) : x[i];
  if (s == 1234.5) *sink = s;
}
__global__ void demote(const double* x, size_t n) {  // one thread per 128-byte line
  for (size_t l = blockIdx.x * (size_t)blockDim.x + threadIdx.x; l < n / 16; l += (size_t)gridDim.x * blockDim.x)
    asm volatile("applypriority.global.L2::evict_normal [%0], 128;" ::"l"(x + 16 * l) : "memory");
}
__global__ void reuse(const double* r, size_t n, int reps, double* sink) {
  double s = 0;
  for (int k = 0; k < reps; ++k)
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) s += r[i];
  if (s == 1234.5) *sink = s;
}
__global__ void stream_w(double* w, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) w[i] = i;
}

int main() {
  int l2 = 0;
  cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0);
  double *x, *r, *w, *sink;
  const size_t max_x = (size_t)l2 / 8, nr = (size_t)l2 * 6 / 10 / 8, nw = (size_t)1 << 27;  // R: 0.6 L2; W: 1 GiB
  cudaMalloc(&x, max_x * 8); cudaMalloc(&r, nr * 8); cudaMalloc(&w, nw * 8); cudaMalloc(&sink, 8);
  cudaMemset(x, 0, max_x * 8); cudaMemset(r, 0, nr * 8);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  const int grid = 132 * 8, block = 256, reps = 20;
  auto time_reuse = [&]() {
    cudaEventRecord(e0);
    reuse<<<grid, block>>>(r, nr, reps, sink);
    cudaEventRecord(e1); cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1); return ms;
  };
  auto flush = [&]() { stream_w<<<grid, block>>>(w, nw); };
  printf("L2 %d bytes; R %.1f MB read %d times a pass\n", l2, nr * 8 / 1e6, reps);
  for (double xf : {0.5, 0.9}) {
    const size_t n = (size_t)(l2 * xf / 8);
    for (int c = 0; c < 6; ++c) {
      std::vector<float> t;
      for (int rep = 0; rep < 5; ++rep) {
        flush();                                              // 1 GiB written: the L2 holds none of X or R
        read_x<<<grid, block>>>(x, n, c > 0, sink);           // X plain (c 0) or evict-last
        if (c == 2) demote<<<grid, block>>>(x, n);
        const int streams = c == 3 ? 1 : c == 4 ? 5 : c == 5 ? 20 : 0;
        for (int s = 0; s < streams; ++s) stream_w<<<grid, block>>>(w, nw / 8);  // 128 MiB each
        reuse<<<grid, block>>>(r, nr, 1, sink);               // R brought in once
        t.push_back(time_reuse());                            // then read `reps` times: L2 hits where it stayed
      }
      std::sort(t.begin(), t.end());
      const char* what[] = {"X plain", "X evict-last", "X evict-last, then demoted", "X evict-last, 1 stream",
                            "X evict-last, 5 streams", "X evict-last, 20 streams"};
      printf("X %.0f%% of L2  %-28s reuse pass median %.3f ms (min %.3f)\n", 100 * xf, what[c], t[2], t[0]);
    }
  }
  printf("%s\n", cudaGetErrorString(cudaGetLastError()));
}
