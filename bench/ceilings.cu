#include "bench/ceilings.hpp"

#include "common/resources.hpp"
#include "common/timing.hpp"

#include <functional>
#include <vector>

namespace ks::bench {
namespace {

__global__ void elementwise_kernel(const float4* __restrict__ x, float4* __restrict__ y, std::size_t n4, float a,
                                   float b, float c) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n4;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float4 v = x[i];
    y[i] = make_float4(a * v.x * v.x + b * v.x + c, a * v.y * v.y + b * v.y + c, a * v.z * v.z + b * v.z + c,
                       a * v.w * v.w + b * v.w + c);
  }
}

// Streams through x with four independent 16-byte loads in flight per thread; stores only an impossible value.
__global__ void read_kernel(const uint4* __restrict__ x, std::size_t n16, unsigned* sink) {
  unsigned acc = 0;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n16; i += 4 * stride) {
    uint4 v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) v[u] = x[i + u * stride];
#pragma unroll
    for (int u = 0; u < 4; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < n16; i += stride) acc ^= x[i].x ^ x[i].y ^ x[i].z ^ x[i].w;
  if (acc == 0x9e3779b9u) *sink = acc;
}

constexpr int kChains = 8;
constexpr int kFmaIterations = 4096;

// kChains independent dependency chains per thread keep the FP64 pipes busy; the result is stored only if
// it is an impossible value, so the compiler keeps the work and memory sees nothing.
__global__ void dfma_kernel(double seed, double* sink) {
  double r[kChains];
#pragma unroll
  for (int k = 0; k < kChains; ++k) r[k] = seed + threadIdx.x + k;
  const double m = 0.999999, c = 1e-7;
  for (int i = 0; i < kFmaIterations; ++i) {
#pragma unroll
    for (int k = 0; k < kChains; ++k) r[k] = fma(r[k], m, c);
  }
  double s = 0;
#pragma unroll
  for (int k = 0; k < kChains; ++k) s += r[k];
  if (s == -1.0) *sink = s;
}

// Times one launch sequence with the suite's timer: a fixed number of repetitions after a long warm-up (a GPU
// that was idle raises its clocks over the first tens of milliseconds of work).
TimingStats time_fixed(cudaStream_t stream, int repetitions, const std::function<void()>& run,
                       bool blocks_host = false) {
  const TimingOptions opt{.warmup = 50, .min_repetitions = repetitions, .max_repetitions = repetitions};
  return time_on_stream(stream, opt, {.run = [&run](int) { run(); }, .blocks_host = blocks_host});
}

struct DeviceShape {
  int sms = 0, threads_per_sm = 0;
  int cc = 0;  // e.g. 90
};

DeviceShape current_device_shape() {
  DeviceShape d;
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&d.sms, cudaDevAttrMultiProcessorCount, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&d.threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, dev));
  int major = 0, minor = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  d.cc = major * 10 + minor;
  return d;
}

// Read + write bandwidth (GB/s) of an elementwise kernel over 2^28 floats.
double elementwise_bandwidth(cudaStream_t stream, int repetitions, const DeviceShape& dev) {
  const std::size_t n = std::size_t(1) << 28;
  DeviceBuffer<float> x(n), y(n);
  CUDA_CHECK(cudaMemsetAsync(x.data(), 0, x.bytes(), stream));
  const int grid = dev.sms * (dev.threads_per_sm / 256);
  const TimingStats t = time_fixed(stream, repetitions, [&] {
    elementwise_kernel<<<grid, 256, 0, stream>>>(reinterpret_cast<const float4*>(x.data()),
                                                 reinterpret_cast<float4*>(y.data()), n / 4, 0.5f, 0.25f, 1.0f);
    CUDA_CHECK_LAUNCH();
  });
  return 2.0 * n * sizeof(float) / (t.median_ms * 1e6);
}

// Read-only bandwidth (GB/s) over 2 GiB: the ceiling of a reduction.
double read_bandwidth(cudaStream_t stream, int repetitions, const DeviceShape& dev) {
  const std::size_t bytes = std::size_t(2) << 30;
  DeviceBuffer<uint4> x(bytes / sizeof(uint4));
  DeviceBuffer<unsigned> sink(1);
  CUDA_CHECK(cudaMemsetAsync(x.data(), 1, x.bytes(), stream));
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, read_kernel, 256, 0));
  const int grid = dev.sms * per_sm;
  const TimingStats t = time_fixed(stream, repetitions, [&] {
    read_kernel<<<grid, 256, 0, stream>>>(x.data(), x.size(), sink.data());
    CUDA_CHECK_LAUNCH();
  });
  return bytes / (t.median_ms * 1e6);
}

// FP64 FMA throughput (TFLOP/s) of the CUDA cores.
double fp64_fma_throughput(cudaStream_t stream, int repetitions, const DeviceShape& dev) {
  DeviceBuffer<double> sink(1);
  const int grid = dev.sms * (dev.threads_per_sm / 256);
  const TimingStats t = time_fixed(stream, repetitions, [&] {
    dfma_kernel<<<grid, 256, 0, stream>>>(1.0, sink.data());
    CUDA_CHECK_LAUNCH();
  });
  return 2.0 * grid * 256.0 * kChains * kFmaIterations / (t.median_ms * 1e9);
}

#if defined(KS_HIP)
// No cuBLAS in the HIP build: the INT8 ceiling is not measured (0, as below compute capability 7.5).
double int8_gemm_throughput(cudaStream_t, int, const DeviceShape&) { return 0; }
#else
__global__ void fill_bytes_kernel(unsigned* p, std::size_t n) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    unsigned x = static_cast<unsigned>(i) * 2654435761u + 0x9E3779B9u;  // a hash: every byte value, no pattern
    x ^= x >> 15;
    x *= 2246822519u;
    x ^= x >> 13;
    p[i] = x;
  }
}

// cuBLAS INT8 GEMM throughput (TOPS): C = A^T B, int8 in, int32 out and accumulation, 8192^3, operands of
// pseudo-random bytes (zeros would draw less power and run at higher clocks than real data).
double int8_gemm_throughput(cudaStream_t stream, int repetitions, const DeviceShape& dev) {
  if (dev.cc < 75) return 0;
  constexpr int n = 8192;
  DeviceBuffer<signed char> a(std::size_t(n) * n), b(std::size_t(n) * n);
  DeviceBuffer<int> c(std::size_t(n) * n);
  fill_bytes_kernel<<<1024, 256, 0, stream>>>(reinterpret_cast<unsigned*>(a.data()), a.bytes() / 4);
  CUDA_CHECK_LAUNCH();
  fill_bytes_kernel<<<1024, 256, 0, stream>>>(reinterpret_cast<unsigned*>(b.data()), b.bytes() / 4);
  CUDA_CHECK_LAUNCH();
  CublasHandle h;
  CUBLAS_CHECK(cublasSetStream(h.get(), stream));
  const int one = 1, zero = 0;
  auto gemm = [&] {
    CUBLAS_CHECK(cublasGemmEx(h.get(), CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &one, a.data(), CUDA_R_8I, n, b.data(),
                              CUDA_R_8I, n, &zero, c.data(), CUDA_R_32I, n, CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT));
  };
  gemm();  // cuBLAS's first call picks its kernel
  const TimingStats t = time_fixed(stream, repetitions, gemm);
  return 2.0 * n * n * double(n) / (t.median_ms * 1e9);
}
#endif

// Host <-> device copy bandwidths (GB/s) of 256 MiB: pinned both ways, pageable up.
void copy_bandwidths(cudaStream_t stream, int repetitions, Ceilings& c) {
  const std::size_t bytes = std::size_t(256) << 20;
  DeviceBuffer<unsigned char> d(bytes);
  PinnedBuffer<unsigned char> pinned(bytes);
  std::vector<unsigned char> pageable(bytes, 1);
  const TimingStats tp = time_fixed(stream, repetitions, [&] {
    CUDA_CHECK(cudaMemcpyAsync(d.data(), pinned.data(), bytes, cudaMemcpyHostToDevice, stream));
  });
  // A copy from pageable memory returns only once it is staged: it waits for the stream.
  const TimingStats tq = time_fixed(
      stream, repetitions,
      [&] { CUDA_CHECK(cudaMemcpyAsync(d.data(), pageable.data(), bytes, cudaMemcpyHostToDevice, stream)); }, true);
  const TimingStats td = time_fixed(stream, repetitions, [&] {
    CUDA_CHECK(cudaMemcpyAsync(pinned.data(), d.data(), bytes, cudaMemcpyDeviceToHost, stream));
  });
  c.h2d_pinned_gbs = bytes / (tp.median_ms * 1e6);
  c.h2d_pageable_gbs = bytes / (tq.median_ms * 1e6);
  c.d2h_pinned_gbs = bytes / (td.median_ms * 1e6);
}

__global__ void empty_kernel() {}

// Time per launch (us) of an empty one-block kernel, in graph batches like the small reductions.
double graph_launch_floor(cudaStream_t stream, int repetitions) {
  const TimingStats t = time_fixed(stream, repetitions, [&] {
    empty_kernel<<<1, 32, 0, stream>>>();
    CUDA_CHECK_LAUNCH();
  });
  return t.median_ms * 1e3;
}

}  // namespace

Ceilings measure_ceilings(cudaStream_t stream, int repetitions) {
  Ceilings c;
  const DeviceShape dev = current_device_shape();
  c.device_bandwidth_gbs = elementwise_bandwidth(stream, repetitions, dev);
  c.device_read_bandwidth_gbs = read_bandwidth(stream, repetitions, dev);
  c.fp64_fma_tflops = fp64_fma_throughput(stream, repetitions, dev);
  c.int8_gemm_tops = int8_gemm_throughput(stream, repetitions, dev);
  c.graph_launch_us = graph_launch_floor(stream, repetitions);
  copy_bandwidths(stream, repetitions, c);
  measure_host_ceilings(c, 3);
  return c;
}

}  // namespace ks::bench
