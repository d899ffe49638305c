// Read ceiling: how fast a one-pass sum reads 256 MiB to 4 GiB from device memory, by grid size, loads in flight
// a thread, the order blocks read in and the cache hint of the loads, against cub::DeviceReduce::Sum in the same
// process. The record of an experiment (docs/reduce-notes.md, issue 36's large-n cells), not part of the build:
// nvcc -O3 -arch=sm_90 -std=c++17 2026-11-27-read-ceiling-probe.cu -o rp && ./rp
// Every configuration and CUB are timed in turn, round after round (21 rounds, medians), one launch a sample
// after an L2 flush as kbench times launches over 50 us, so that clock and temperature drift falls on all of
// them alike.
#include <cub/device/device_reduce.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

constexpr int kRounds = 21;
constexpr size_t kFlushBytes = size_t(256) << 20;  // five times the H100's L2

#define CHECK(x)                                                                     \
  do {                                                                               \
    cudaError_t e = (x);                                                             \
    if (e != cudaSuccess) {                                                          \
      std::printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e));          \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

enum Hint { Plain, Nc, Streaming, EvictFirst, NcEvictFirst };
const char* hint_name[] = {"plain", "nc.L1::no_allocate", "cs", "L2 policy evict_first",
                           "nc.L1::no_allocate, L2 policy evict_first"};

template <int H>
__device__ __forceinline__ uint4 load(const uint4* p) {
  uint4 v;
  if constexpr (H == Plain) {
    v = *p;
  } else if constexpr (H == Nc) {
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  } else if constexpr (H == Streaming) {
    asm volatile("ld.global.cs.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  } else if constexpr (H == EvictFirst) {
    asm volatile("{\n .reg .b64 pol;\n createpolicy.fractional.L2::evict_first.b64 pol, 1.0;\n"
                 " ld.global.L1::no_allocate.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], pol;\n}"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  } else {
    asm volatile("{\n .reg .b64 pol;\n createpolicy.fractional.L2::evict_first.b64 pol, 1.0;\n"
                 " ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], pol;\n}"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  }
  return v;
}

template <class T>
__device__ __forceinline__ T add16(T a, uint4 v) {
  if constexpr (sizeof(T) == 8) {
    return a + __hiloint2double(v.y, v.x) + __hiloint2double(v.w, v.z);
  } else {
    return a + (long long)(int)v.x + (int)v.y + (int)v.z + (int)v.w;
  }
}

// Chunked: block b reads the contiguous vectors [b * chunk, (b + 1) * chunk); else the whole grid strides.
template <class T, int U, int H, bool Chunked>
__global__ void sum(const uint4* in, size_t nvec, T* out) {
  size_t begin = 0, end = nvec, i, stride;
  if (Chunked) {
    const size_t chunk = (nvec + gridDim.x - 1) / gridDim.x;
    begin = min(nvec, blockIdx.x * chunk);
    end = min(nvec, begin + chunk);
    i = begin + threadIdx.x;
    stride = blockDim.x;
  } else {
    i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    stride = (size_t)gridDim.x * blockDim.x;
  }
  T acc[U] = {};
  for (; i + (U - 1) * stride < end; i += U * stride) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = load<H>(in + i + u * stride);
#pragma unroll
    for (int u = 0; u < U; ++u) acc[u] = add16(acc[u], v[u]);
  }
  for (; i < end; i += stride) acc[0] = add16(acc[0], load<H>(in + i));
  T s = 0;
#pragma unroll
  for (int u = 0; u < U; ++u) s += acc[u];
  for (int o = 16; o > 0; o /= 2) s += __shfl_down_sync(~0u, s, o);
  __shared__ T w[32];
  if (threadIdx.x % 32 == 0) w[threadIdx.x / 32] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int k = 1; k < blockDim.x / 32; ++k) s += w[k];
    if constexpr (sizeof(T) == 8 && T(0.5) != T(0))
      atomicAdd(out, s);
    else
      atomicAdd(reinterpret_cast<unsigned long long*>(out), static_cast<unsigned long long>(s));
  }
}

struct Config {
  std::string name;
  std::function<void()> run;
  std::vector<float> us;
};

// oversub: the grid is that many times what is resident at once (blocks then run in waves; with Chunked each
// block's chunk is that much shorter), as CUB's even-share grid over-subscribes the GPU.
template <class T, int U, int H, bool Chunked>
Config make(const uint4* in, size_t nvec, T* out, int sms, int per_sm, int threads, int oversub = 1) {
  auto k = sum<T, U, H, Chunked>;
  int occ = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, k, threads, 0));
  const int grid = sms * std::min(per_sm, occ) * oversub;
  char name[160];
  std::snprintf(name, sizeof name, "%5d x %4d, %d loads, %-7s %s", grid, threads, U, Chunked ? "chunked" : "strided",
                hint_name[H]);
  return {name, [=] { k<<<grid, threads>>>(in, nvec, out); }, {}};
}

template <class T>
void run_size(const char* type, size_t n, void* buf, void* flush, int sms) {
  const size_t bytes = n * sizeof(T), nvec = bytes / 16;
  const T* in = static_cast<const T*>(buf);
  const uint4* v = static_cast<const uint4*>(buf);
  T* out;
  CHECK(cudaMalloc(&out, 64));
  void* temp = nullptr;
  size_t temp_bytes = 0;
  CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, in, out + 1, n));
  CHECK(cudaMalloc(&temp, temp_bytes));
  std::vector<Config> c;
  c.push_back({"cub::DeviceReduce::Sum", [=]() mutable { cub::DeviceReduce::Sum(temp, temp_bytes, in, out + 1, n); }, {}});
  // The suite's shape (256 threads, four loads, whole-grid stride) at 1 to 8 blocks an SM.
  for (int per_sm : {1, 2, 3, 4, 6, 8}) c.push_back(make<T, 4, Plain, false>(v, nvec, out, sms, per_sm, 256));
  c.push_back(make<T, 2, Plain, false>(v, nvec, out, sms, 8, 256));
  c.push_back(make<T, 8, Plain, false>(v, nvec, out, sms, 4, 256));
  c.push_back(make<T, 8, Plain, false>(v, nvec, out, sms, 2, 256));
  c.push_back(make<T, 4, Plain, false>(v, nvec, out, sms, 1, 1024));
  c.push_back(make<T, 4, Plain, false>(v, nvec, out, sms, 2, 512));
  for (int per_sm : {2, 4, 8}) c.push_back(make<T, 4, Plain, true>(v, nvec, out, sms, per_sm, 256));
  c.push_back(make<T, 4, Nc, false>(v, nvec, out, sms, 8, 256));
  c.push_back(make<T, 4, Streaming, false>(v, nvec, out, sms, 8, 256));
  c.push_back(make<T, 4, EvictFirst, false>(v, nvec, out, sms, 8, 256));
  c.push_back(make<T, 4, NcEvictFirst, false>(v, nvec, out, sms, 8, 256));
  c.push_back(make<T, 4, Nc, false>(v, nvec, out, sms, 4, 256));
  c.push_back(make<T, 4, Streaming, false>(v, nvec, out, sms, 4, 256));
  c.push_back(make<T, 4, EvictFirst, true>(v, nvec, out, sms, 4, 256));
  // CUB-like: contiguous chunks over an over-subscribed grid (2, 5 and 20 times the resident blocks).
  for (int over : {2, 5, 20}) c.push_back(make<T, 4, Plain, true>(v, nvec, out, sms, 4, 256, over));
  for (int over : {2, 5}) c.push_back(make<T, 4, Plain, false>(v, nvec, out, sms, 4, 256, over));

  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (auto& x : c) x.run();  // warm-up, one launch each
  CHECK(cudaDeviceSynchronize());
  // As kbench times a launch over 50 us: one launch a sample, the L2 flushed before it (outside the events).
  for (int r = 0; r < kRounds; ++r)
    for (auto& x : c) {
      CHECK(cudaMemsetAsync(flush, r, kFlushBytes));
      CHECK(cudaEventRecord(a));
      x.run();
      CHECK(cudaEventRecord(b));
      CHECK(cudaEventSynchronize(b));
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, a, b));
      x.us.push_back(ms * 1e3f);
    }
  CHECK(cudaGetLastError());
  auto median = [](std::vector<float> t) {
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  const float cub_us = median(c[0].us);
  std::printf("\n%s n = 2^%d (%zu MiB), CUB %.2f us (%.3f TB/s)\n", type, __builtin_ctzll(n), bytes >> 20, cub_us,
              bytes / cub_us / 1e6);
  for (auto& x : c) {
    const float m = median(x.us);
    const float lo = *std::min_element(x.us.begin(), x.us.end()), hi = *std::max_element(x.us.begin(), x.us.end());
    std::printf("  %-58s %9.2f us  %.3f TB/s  %6.2f%% of CUB  (range %.2f-%.2f)\n", x.name.c_str(), m,
                bytes / m / 1e6, 100.0 * cub_us / m, lo, hi);
  }
  CHECK(cudaFree(temp));
  CHECK(cudaFree(out));
}

__global__ void fill(unsigned* p, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    p[i] = (unsigned)(i * 2654435761u) >> 12;  // small non-negative ints; as doubles, small finite values
}

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp p{};
  CHECK(cudaGetDeviceProperties(&p, 0));
  std::printf("%s, %d SMs\n", p.name, sms);
  const size_t max_bytes = size_t(4) << 30;
  void* buf;
  CHECK(cudaMalloc(&buf, max_bytes));
  void* flush;
  CHECK(cudaMalloc(&flush, kFlushBytes));
  fill<<<sms * 8, 256>>>(static_cast<unsigned*>(buf), max_bytes / 4);
  CHECK(cudaDeviceSynchronize());
  run_size<int>("int32", size_t(1) << 26, buf, flush, sms);
  run_size<int>("int32", size_t(1) << 28, buf, flush, sms);
  run_size<double>("double", size_t(1) << 27, buf, flush, sms);
  run_size<double>("double", size_t(1) << 29, buf, flush, sms);
  CHECK(cudaFree(buf));
  return 0;
}
