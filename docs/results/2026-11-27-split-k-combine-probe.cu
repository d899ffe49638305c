// Probe: the cost of split-K's combine in dmma_tma's two schemes against a reduce-scatter over co-resident blocks.
// Not part of the build. nvcc -O3 -arch=sm_90a -o combine_probe combine_probe.cu
//
// Tree config (256 x 256 x 16384's plan: 16 tiles of 128 x 32 split 8 ways, 128 blocks): a block's partial is 4096
// doubles held 32 a thread by 128 threads. Schemes: 0 none (each block writes its partial, the last share stores
// C), 1 the Fenwick tree of gemm/stream_k.hpp, 2 reduce-scatter (every share writes, waits for the tile's S flags,
// sums its S-th of the tile over the S partials in share order, stores it).
// Cluster config (128 x 128 x 262144: 1 tile, 30 clusters of 4, each block a 4096-double slice after the cluster's
// exchange, 256 threads x 16): 0 none, 1 the last cluster reads the 29 others' slices in order, 2 reduce-scatter.
// Every block first spins `work_ns` (+ a per-block jitter) to stand in for its share of the product.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                       \
  do {                                                                              \
    cudaError_t e = (x);                                                            \
    if (e != cudaSuccess) {                                                         \
      std::printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
      std::exit(1);                                                                 \
    }                                                                               \
  } while (0)

__device__ __forceinline__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ void wait_epoch(const unsigned* f, unsigned epoch) {
  for (;;) {
    unsigned up;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(up) : "l"(f) : "memory");
    if (up >= epoch) break;
    __nanosleep(64);
  }
}
__device__ __forceinline__ void release(unsigned* f, unsigned epoch) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;\n" ::"l"(f), "r"(epoch) : "memory");
}
__device__ __forceinline__ int lowbit(int i) { return i & -i; }

struct Args {
  int S, E, per;  // shares a tile (tree) or clusters (cluster config); doubles a partial; doubles a thread
  int scheme;
  unsigned epoch;
  long long work_ns, jitter_ns;
  double* partials;  // grid x E
  unsigned* flags;   // grid, one per block (raised after the block's stores)
  double* c;         // tiles x E
};

__device__ void spin(const Args& a, int v) {
  if (threadIdx.x == 0) {
    const unsigned long long t0 = now_ns();
    const long long w = a.work_ns + (a.jitter_ns > 0 ? (v * 7919LL) % a.jitter_ns : 0);
    while (static_cast<long long>(now_ns() - t0) < w) {}
  }
  __syncthreads();
}

// Block v's flag raised once all its threads' stores are done (bar.sync orders them before thread 0's release).
template <int PER>
__device__ __forceinline__ void write_and_raise(const Args& a, int v, const double (&acc)[PER]) {
  double* slot = a.partials + static_cast<size_t>(v) * a.E;
#pragma unroll
  for (int q = 0; q < PER; ++q) __stcg(slot + q * blockDim.x + threadIdx.x, acc[q]);
  __syncthreads();
  if (threadIdx.x == 0) release(a.flags + v, a.epoch);
}

// Every thread acquires flag o itself before reading block o's partial.
template <int PER>
__device__ __forceinline__ void add_from(const Args& a, int o, double (&acc)[PER]) {
  wait_epoch(a.flags + o, a.epoch);
  const double* slot = a.partials + static_cast<size_t>(o) * a.E;
#pragma unroll
  for (int q = 0; q < PER; ++q) acc[q] += __ldcg(slot + q * blockDim.x + threadIdx.x);
}

// sum over o = 0 .. S - 1 of p[o * stride], in order, 8 loads in flight at a time.
__device__ __forceinline__ double sum_strided(const double* p, size_t stride, int S) {
  double s = 0;
  for (int o0 = 0; o0 < S; o0 += 8) {
    double x[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) x[j] = o0 + j < S ? __ldcg(p + (o0 + j) * stride) : 0.0;
#pragma unroll
    for (int j = 0; j < 8; ++j) s += x[j];
  }
  return s;
}

template <int PER>
__global__ void __launch_bounds__(256) tree_kernel(Args a) {
  const int v = blockIdx.x, tile = v / a.S, i = v % a.S + 1;
  double acc[PER];
#pragma unroll
  for (int q = 0; q < PER; ++q) acc[q] = 1e-3 * (v + 1) + q;
  spin(a, v);
  double* c = a.c + static_cast<size_t>(tile) * a.E;
  if (a.scheme == 0) {
    if (i == a.S)
      for (int q = 0; q < PER; ++q) c[q * blockDim.x + threadIdx.x] = acc[q];
    else
      write_and_raise(a, v, acc);
  } else if (a.scheme == 1) {
    const int low = lowbit(i);
    for (int d = 1; d < low; d <<= 1) add_from(a, v - d, acc);
    if (i == a.S) {
      for (int j = i - low; j > 0; j -= lowbit(j)) add_from(a, v - (i - j), acc);
      for (int q = 0; q < PER; ++q) c[q * blockDim.x + threadIdx.x] = acc[q];
    } else {
      write_and_raise(a, v, acc);
    }
  } else {
    write_and_raise(a, v, acc);
    // This share's piece: elements [p0, p0 + n) of the tile, one a thread per round.
    const int n = a.E / a.S, p0 = (i - 1) * n;
    const int first = v - (i - 1);
    // Lanes poll the S flags at once, then the warp barrier orders their acquires before every lane's loads.
    const int lane = threadIdx.x % 32;
    for (int o = lane; o < a.S; o += 32) wait_epoch(a.flags + first + o, a.epoch);
    __syncwarp();
    for (int e = threadIdx.x; e < n; e += blockDim.x) {
      c[p0 + e] = sum_strided(a.partials + static_cast<size_t>(first) * a.E + p0 + e, static_cast<size_t>(a.E), a.S);
    }
  }
}

// Cluster config: block v = 4 c + r (cluster c of S, rank r), a slice of E doubles.
template <int PER>
__global__ void __launch_bounds__(256) cluster_kernel(Args a) {
  const int v = blockIdx.x, c = v / 4, r = v % 4;
  double acc[PER];
#pragma unroll
  for (int q = 0; q < PER; ++q) acc[q] = 1e-3 * (v + 1) + q;
  spin(a, v);
  double* cout = a.c + static_cast<size_t>(r) * a.E;
  if (a.scheme == 0) {
    if (c == a.S - 1)
      for (int q = 0; q < PER; ++q) cout[q * blockDim.x + threadIdx.x] = acc[q];
    else
      write_and_raise(a, v, acc);
  } else if (a.scheme == 1) {
    if (c < a.S - 1) {
      write_and_raise(a, v, acc);
      return;
    }
    const int lane = threadIdx.x % 32;
    for (int o = lane; o < c; o += 32) wait_epoch(a.flags + 4 * o + r, a.epoch);
    __syncwarp();
    for (int o = 0; o < c; ++o) {
      const double* slot = a.partials + static_cast<size_t>(4 * o + r) * a.E;
      for (int q = 0; q < PER; ++q) acc[q] += __ldcg(slot + q * blockDim.x + threadIdx.x);
    }
    for (int q = 0; q < PER; ++q) cout[q * blockDim.x + threadIdx.x] = acc[q];
  } else {
    write_and_raise(a, v, acc);
    const int n0 = a.E * c / a.S, n1 = a.E * (c + 1) / a.S;
    const int lane = threadIdx.x % 32;
    for (int o = lane; o < a.S; o += 32) wait_epoch(a.flags + 4 * o + r, a.epoch);
    __syncwarp();
    for (int e = n0 + static_cast<int>(threadIdx.x); e < n1; e += blockDim.x) {
      cout[e] = sum_strided(a.partials + static_cast<size_t>(r) * a.E + e, 4 * static_cast<size_t>(a.E), a.S);
    }
  }
}

__global__ void __cluster_dims__(4, 1, 1) cluster_noop(int* x) {
  if (threadIdx.x == 0) atomicAdd(x, 1);
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 200;
  int sms;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int smem = 200 * 1024;  // one block an SM, as dmma_tma's
  CK(cudaFuncSetAttribute(tree_kernel<32>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  CK(cudaFuncSetAttribute(tree_kernel<64>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  CK(cudaFuncSetAttribute(cluster_kernel<16>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  double *partials, *c;
  unsigned* flags;
  CK(cudaMalloc(&partials, 256LL * 16384 * 8));
  CK(cudaMalloc(&c, 64LL * 16384 * 8));
  CK(cudaMalloc(&flags, 4096 * 4));
  CK(cudaMemset(flags, 0, 4096 * 4));
  unsigned epoch = 0;
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));

  // Can a cluster launch be cooperative?
  {
    int* x;
    CK(cudaMalloc(&x, 4));
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(120);
    cfg.blockDim = dim3(128);
    cudaLaunchAttribute at[2];
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = 4;
    at[0].val.clusterDim.y = 1;
    at[0].val.clusterDim.z = 1;
    at[1].id = cudaLaunchAttributeCooperative;
    at[1].val.cooperative = 1;
    cfg.attrs = at;
    cfg.numAttrs = 2;
    cudaError_t err = cudaLaunchKernelEx(&cfg, cluster_noop, x);
    cudaError_t err2 = cudaDeviceSynchronize();
    std::printf("cluster + cooperative launch: %s / %s\n", cudaGetErrorString(err), cudaGetErrorString(err2));
    cudaGetLastError();
  }

  struct Case {
    const char* name;
    bool cluster;
    int S, tiles, threads, per;
  };
  const Case cases[] = {
      {"tree: 16 tiles x 8 ways, 128x32 partial (256x256x16384)", false, 8, 16, 128, 32},
      {"tree: 8 tiles x 16 ways, 128x64 partial (256x256x65536)", false, 16, 8, 128, 64},
      {"tree: 1 tile x 64 ways, 128x128 partial", false, 64, 1, 256, 64},
      {"clusters: 30 x 4, 4096-double slices (128x128x262144)", true, 30, 1, 256, 16},
  };
  for (const Case& k : cases) {
    for (long long work : {0LL, 20000LL}) {
      for (long long jitter : {0LL, 2000LL}) {
        float best[3] = {1e9f, 1e9f, 1e9f}, mean[3] = {0, 0, 0};
        for (int rep = 0; rep < reps; ++rep) {
          for (int scheme = 0; scheme < 3; ++scheme) {
            Args a{};
            a.S = k.S;
            a.per = k.per;
            a.E = k.per * k.threads;
            a.scheme = scheme;
            a.epoch = ++epoch;
            a.work_ns = work;
            a.jitter_ns = jitter;
            a.partials = partials;
            a.flags = flags;
            a.c = c;
            const int grid = k.cluster ? 4 * k.S : k.S * k.tiles;
            if (grid > sms) continue;
            void* params[] = {&a};
            CK(cudaEventRecord(e0));
            CK(cudaLaunchCooperativeKernel(k.cluster ? (void*)cluster_kernel<16> : k.per == 32 ? (void*)tree_kernel<32> : (void*)tree_kernel<64>, dim3(grid),
                                           dim3(k.threads), params, smem, 0));
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            if (rep >= 5) {
              best[scheme] = std::min(best[scheme], ms * 1000);
              mean[scheme] += ms * 1000 / (reps - 5);
            }
          }
        }
        std::printf("%-58s work %5lld ns jitter %4lld: none %6.2f/%6.2f  %s %6.2f/%6.2f  reduce-scatter %6.2f/%6.2f us (best/mean)\n",
                    k.name, work, jitter, best[0], mean[0], k.cluster ? "last cluster" : "tree", best[1], mean[1], best[2],
                    mean[2]);
      }
    }
  }
  CK(cudaDeviceSynchronize());
  return 0;
}
