// Write ceiling: how fast the GPU writes a C of M x N doubles (beta 0) with nothing else to do, as a grid-stride
// kernel of 16-byte stores, cudaMemsetAsync, and 128 x 128 tiles one block per SM (a GEMM epilogue's pattern).
// The record of an experiment (docs/gemm-notes.md, step 43), not part of the build:
// nvcc -O3 -arch=sm_90 2026-11-26-write-ceiling-probe.cu -o wp && ./wp
#include <cuda_runtime.h>
#include <cstdio>
#include <vector>
#include <algorithm>
__global__ void wr(double2* p, size_t n2, double v) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n2; i += (size_t)gridDim.x * blockDim.x) p[i] = make_double2(v, v);
}
// each block writes contiguous 128x128 tiles column by column as a GEMM epilogue would (8-byte stores, 64 B runs)
__global__ void wr_tiles(double* c, int M, int N, double v) {
  int tiles_m = M / 128, tiles = tiles_m * (N / 128);
  for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
    int m0 = (t % tiles_m) * 128, n0 = (t / tiles_m) * 128;
    for (int j = threadIdx.x / 16; j < 128; j += blockDim.x / 16)
      for (int i = threadIdx.x % 16; i < 128; i += 16) c[(size_t)(n0 + j) * M + m0 + i] = v;
  }
}
__global__ void rd(const double2* p, size_t n2, double* out) {
  double s = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n2; i += (size_t)gridDim.x * blockDim.x) { double2 x = p[i]; s += x.x + x.y; }
  if (s == 12345.678) *out = s;
}
template <class F> float med(F f) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b); std::vector<float> t;
  for (int r = 0; r < 25; ++r) { cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); if (r >= 5) t.push_back(ms); }
  std::sort(t.begin(), t.end()); return t[t.size() / 2];
}
int main() {
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  size_t shapes[][2] = {{4096, 4096}, {5000, 3000}, {8192, 8192}};
  double* p; cudaMalloc(&p, 8192ull * 8192 * 8 + 4096); double* o; cudaMalloc(&o, 8);
  for (auto& s : shapes) {
    size_t n = s[0] * s[1], bytes = n * 8;
    for (int bpsm : {1, 2, 4, 8}) {
      float ms = med([&] { wr<<<sms * bpsm, 256>>>((double2*)p, n / 2, 1.0); });
      printf("%zux%zu write %4d blocks: %.2f us %.3f TB/s\n", s[0], s[1], sms * bpsm, ms * 1e3, bytes / ms / 1e9);
    }
    float ms = med([&] { cudaMemsetAsync(p, 0, bytes); });
    printf("%zux%zu memset: %.2f us %.3f TB/s\n", s[0], s[1], ms * 1e3, bytes / ms / 1e9);
    if (s[0] % 128 == 0) { ms = med([&] { wr_tiles<<<sms, 256>>>(p, (int)s[0], (int)s[1], 1.0); });
      printf("%zux%zu tile writes 1 block/SM: %.2f us %.3f TB/s\n", s[0], s[1], ms * 1e3, bytes / ms / 1e9); }
    ms = med([&] { rd<<<sms * 4, 256>>>((const double2*)p, n / 2, o); });
    printf("%zux%zu read (L2 warm where it fits): %.2f us %.3f TB/s\n", s[0], s[1], ms * 1e3, bytes / ms / 1e9);
  }
  return cudaGetLastError();
}
