// Timeline of fast's grid path (double sum): where a launch's time goes, per block, from %globaltimer.
// The record of an experiment (docs/reduce-notes.md, "fast's grid handover without a fence"), not part of the build:
// nvcc -O3 -arch=sm_90 -std=c++17 2026-11-25-fast-timeline.cu -o tl && ./tl [log2 n ...]
#include <cub/cub.cuh>
#include <cuda/atomic>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CK(x)                                                                        \
  do {                                                                               \
    cudaError_t e_ = (x);                                                            \
    if (e_ != cudaSuccess) {                                                         \
      std::printf("CUDA %s at %s:%d: %s\n", cudaGetErrorString(e_), __FILE__, __LINE__, #x); \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

constexpr int kBlock = 256, kUnroll = 4, kStamps = 6;
using u64 = unsigned long long;

__device__ __forceinline__ u64 gtime() {
  u64 t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ void pdl_wait() {
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
}

__device__ __forceinline__ double block_sum(double v) {
  __shared__ double ws[kBlock / 32];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(~0u, v, o);
  if (threadIdx.x % 32 == 0) ws[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < kBlock / 32 ? ws[threadIdx.x] : 0.0;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(~0u, v, o);
  }
  __syncthreads();  // ws reusable
  return v;
}

// Each thread: kUnroll 16-byte loads at a grid stride (n a multiple of 2 * threads * kUnroll here, or smaller).
__device__ __forceinline__ double share(const double* in, size_t n, size_t tid, size_t threads) {
  const double2* v = reinterpret_cast<const double2*>(in);
  const size_t nvec = n / 2;
  double a[kUnroll];
  double2 x[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    a[u] = 0;
    if (tid + u * threads < nvec) x[u] = v[tid + u * threads]; else x[u] = make_double2(0, 0);
  }
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) a[u] = x[u].x + x[u].y;
  return (a[0] + a[1]) + (a[2] + a[3]);
}

struct Slot {
  u64 bits, tag;
};
__device__ __forceinline__ Slot exch(Slot* s, u64 bits, u64 tag) {
  Slot r;
  asm volatile(
      "{ .reg .b128 d, v; mov.b128 v, {%2, %3}; atom.relaxed.gpu.global.exch.b128 d, [%4], v; mov.b128 {%0, %1}, d; }"
      : "=l"(r.bits), "=l"(r.tag)
      : "l"(bits), "l"(tag), "l"(s)
      : "memory");
  return r;
}
__device__ __forceinline__ Slot ld_slot(const Slot* s) {
  Slot r;
  asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];" : "=l"(r.bits), "=l"(r.tag) : "l"(s) : "memory");
  return r;
}
__device__ __forceinline__ void st_slot(Slot* s, u64 bits, u64 tag) {
  asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(s), "l"(bits), "l"(tag) : "memory");
}
__device__ __forceinline__ double ld_relaxed(const double* p) {
  double r;
  asm volatile("ld.relaxed.gpu.global.f64 %0, [%1];" : "=d"(r) : "l"(p) : "memory");
  return r;
}
__device__ __forceinline__ u64 ld_relaxed_u64(const u64* p) {
  u64 r;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(r) : "l"(p) : "memory");
  return r;
}

struct State {
  double* partials;
  unsigned* counter;
  Slot* slots;   // mode 2: zero between launches
  Slot* slots3;  // mode 3: tagged with the epoch
  u64* epoch;
};

// mode 0: counted (acq_rel atomic), volatile partial reads (as the suite). 1: counted, relaxed.gpu reads.
// 2: ticket at start, partials in tagged slots by atom.exch.b128, last ticket polls (exchange back to zero).
// 3: count at the end without a fence (relaxed), partial in a slot tagged with the launch's epoch (plain v2
//    store beside the count); the last to count polls the slots for the epoch (no spinning for slow blocks).
template <int MODE>
__global__ void __launch_bounds__(kBlock, 4) grid_kernel(const double* in, size_t n, double* out, State s, u64* rec) {
  u64 t0 = gtime();
  pdl_wait();
  u64 t1 = gtime(), t3 = 0, t4 = 0;
  __shared__ unsigned ticket;
  __shared__ u64 ep;
  if (MODE == 2 && threadIdx.x == 0) ticket = atomicAdd(s.counter, 1u);
  if (MODE >= 3 && threadIdx.x == 0) ep = ld_relaxed_u64(s.epoch) + 1;
  double acc = share(in, n, size_t(blockIdx.x) * kBlock + threadIdx.x, size_t(gridDim.x) * kBlock);
  acc = block_sum(acc);
  u64 t2 = gtime();
  __shared__ bool last;
  if (MODE <= 1) {
    if (threadIdx.x == 0) {
      s.partials[blockIdx.x] = acc;
      cuda::atomic_ref<unsigned, cuda::thread_scope_device> c(*s.counter);
      last = c.fetch_add(1u, cuda::memory_order_acq_rel) == gridDim.x - 1;
    }
    __syncthreads();
    t3 = gtime();
    if (last) {
      double v = 0;
      for (unsigned b = threadIdx.x; b < gridDim.x; b += kBlock)
        v += MODE == 0 ? *(volatile double*)(s.partials + b) : ld_relaxed(s.partials + b);
      t4 = gtime();
      v = block_sum(v);
      if (threadIdx.x == 0) {
        *out = v;
        *s.counter = 0;
      }
    }
  } else if (MODE == 2) {
    if (threadIdx.x == 0) {
      if (ticket != gridDim.x - 1) exch(s.slots + blockIdx.x, __double_as_longlong(acc), 1ull);
      last = ticket == gridDim.x - 1;
    }
    __syncthreads();
    t3 = gtime();
    if (last) {
      double v = 0;
      for (unsigned b = threadIdx.x; b < gridDim.x; b += kBlock) {
        if (b == blockIdx.x) continue;
        Slot got;
        do got = exch(s.slots + b, 0, 0); while (got.tag == 0);
        v += __longlong_as_double(got.bits);
      }
      t4 = gtime();
      __shared__ double own;
      if (threadIdx.x == 0) own = acc;
      __syncthreads();
      if (threadIdx.x == blockIdx.x % kBlock) v += own;
      v = block_sum(v);
      if (threadIdx.x == 0) {
        *out = v;
        *s.counter = 0;
      }
    }
  } else {
    if (threadIdx.x == 0) {
      if (MODE == 4) exch(s.slots3 + blockIdx.x, __double_as_longlong(acc), ep);
      else st_slot(s.slots3 + blockIdx.x, __double_as_longlong(acc), ep);
      cuda::atomic_ref<unsigned, cuda::thread_scope_device> c(*s.counter);
      last = c.fetch_add(1u, cuda::memory_order_relaxed) == gridDim.x - 1;
    }
    __syncthreads();
    t3 = gtime();
    if (last) {
      double v = 0;
      const u64 e = ep;
      for (unsigned b = threadIdx.x; b < gridDim.x; b += kBlock) {
        Slot got;
        do got = ld_slot(s.slots3 + b); while (got.tag != e);
        v += __longlong_as_double(got.bits);
      }
      t4 = gtime();
      v = block_sum(v);
      if (threadIdx.x == 0) {
        *out = v;
        *s.counter = 0;
        *s.epoch = e;
      }
    }
  }
  if (rec && threadIdx.x == 0) {
    u64* r = rec + size_t(blockIdx.x) * kStamps;
    r[0] = t0; r[1] = t1; r[2] = t2; r[3] = t3; r[4] = t4; r[5] = gtime();
  }
}

__global__ void __launch_bounds__(kBlock, 1) one_block(const double* in, size_t n, double* out, u64* rec) {
  u64 t0 = gtime();
  pdl_wait();
  u64 t1 = gtime();
  double acc = share(in, n, threadIdx.x, kBlock);
  acc = block_sum(acc);
  if (threadIdx.x == 0) *out = acc;
  if (rec && threadIdx.x == 0) {
    u64 t = gtime();
    rec[0] = t0; rec[1] = t1; rec[2] = t; rec[3] = t; rec[4] = t; rec[5] = t;
  }
}

__global__ void empty_kernel(u64* rec) {
  u64 t0 = gtime();
  pdl_wait();
  if (rec && threadIdx.x == 0) {
    u64 t = gtime();
    rec[0] = t0; rec[1] = t; rec[2] = t; rec[3] = t; rec[4] = t; rec[5] = t;
  }
}

__global__ void granularity(u64* out) {
  u64 prev = gtime(), best = ~0ull, distinct = 0;
  for (int i = 0; i < 20000; ++i) {
    u64 t = gtime();
    if (t != prev) { best = min(best, t - prev); ++distinct; prev = t; }
  }
  out[0] = best;
  out[1] = distinct;
}

template <class K, class... A>
void launch(K k, unsigned grid, cudaStream_t st, A... a) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(grid);
  cfg.blockDim = dim3(kBlock);
  cfg.stream = st;
  cudaLaunchAttribute at{};
  at.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at.val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = &at;
  cfg.numAttrs = 1;
  CK(cudaLaunchKernelEx(&cfg, k, a...));
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

int main(int argc, char** argv) {
  const int L = 64;  // launches per graph
  int dev = 0;
  CK(cudaSetDevice(dev));
  cudaDeviceProp p{};
  CK(cudaGetDeviceProperties(&p, dev));
  int occ = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, grid_kernel<0>, kBlock, 0));
  const int resident = occ * p.multiProcessorCount;
  std::printf("# %s, %d SMs, %d resident grid blocks\n", p.name, p.multiProcessorCount, resident);
  const size_t pool_bytes = size_t(256) << 20;
  double* pool;
  CK(cudaMalloc(&pool, pool_bytes));
  {
    std::vector<double> h(pool_bytes / 8);
    for (size_t i = 0; i < h.size(); ++i) h[i] = double((i * 2654435761u) % 1000) / 1000.0;
    CK(cudaMemcpy(pool, h.data(), pool_bytes, cudaMemcpyHostToDevice));
  }
  double* out;
  CK(cudaMalloc(&out, 8 * L));
  State s{};
  CK(cudaMalloc(&s.partials, 8 * 1024));
  CK(cudaMalloc(&s.counter, 4 * 32));
  CK(cudaMalloc(&s.slots, sizeof(Slot) * 1024));
  CK(cudaMalloc(&s.epoch, 8 * 16));
  CK(cudaMalloc(&s.slots3, sizeof(Slot) * 1024));
  CK(cudaMemset(s.slots3, 0, sizeof(Slot) * 1024));
  CK(cudaMemset(s.counter, 0, 4 * 32));
  CK(cudaMemset(s.slots, 0, sizeof(Slot) * 1024));
  CK(cudaMemset(s.epoch, 0, 8 * 16));
  u64* rec;
  const size_t rec_per_launch = size_t(1024) * kStamps;
  CK(cudaMalloc(&rec, 8 * rec_per_launch * L));
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));

  std::vector<int> logs = {10, 12, 14, 16, 17, 18, 19, 20};
  if (argc > 1) {
    logs.clear();
    for (int i = 1; i < argc; ++i) logs.push_back(std::atoi(argv[i]));
  }
  std::printf("| n | path | blocks | us/launch (timed, no stamps) | us/launch (stamped) | release gap | loads (first go -> last partial) | partial -> collector's t3 | t3 -> partials read | -> end | end -> next go |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int lg : logs) {
    const size_t n = size_t(1) << lg, bytes = n * 8;
    const size_t copies = std::max<size_t>(2, std::min<size_t>(pool_bytes / bytes, 4096));
    const unsigned grid = unsigned(std::max<size_t>(1, std::min<size_t>(resident, (n + 2047) / 2048)));
    void* cub_tmp = nullptr;
    size_t cub_bytes = 0;
    CK(cub::DeviceReduce::Sum(nullptr, cub_bytes, pool, out, int(n), st));
    CK(cudaMalloc(&cub_tmp, cub_bytes));
    for (int path = -2; path <= 5; ++path) {
      // -2 empty, -1 one block (n <= 2048 only), 0..4 grid modes, 5 CUB
      if (path == -1 && n > 2048) continue;
      if (path == -2 && lg != logs.front()) continue;
      auto capture = [&](bool stamped, size_t& next_copy) {
        cudaGraph_t g;
        CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
        for (int i = 0; i < L; ++i) {
          const double* in = pool + (next_copy % copies) * n;
          next_copy += 1;
          u64* r = stamped ? rec + i * rec_per_launch : nullptr;
          switch (path) {
            case -2: launch(empty_kernel, 1, st, r); break;
            case -1: launch(one_block, 1, st, in, n, out + i, r); break;
            case 0: launch(grid_kernel<0>, grid, st, in, n, out + i, s, r); break;
            case 1: launch(grid_kernel<1>, grid, st, in, n, out + i, s, r); break;
            case 2: launch(grid_kernel<2>, grid, st, in, n, out + i, s, r); break;
            case 3: launch(grid_kernel<3>, grid, st, in, n, out + i, s, r); break;
            case 4: launch(grid_kernel<4>, grid, st, in, n, out + i, s, r); break;
            case 5: CK(cub::DeviceReduce::Sum(cub_tmp, cub_bytes, in, out + i, int(n), st)); break;
          }
        }
        CK(cudaStreamEndCapture(st, &g));
        cudaGraphExec_t ge;
        CK(cudaGraphInstantiate(&ge, g, 0));
        CK(cudaGraphDestroy(g));
        return ge;
      };
      // Enough graphs with different offsets that rotation covers the copies.
      size_t next_copy = 0;
      const int graphs = int(std::min<size_t>(8, (copies + L - 1) / L));
      std::vector<cudaGraphExec_t> plain, stamped;
      for (int g = 0; g < graphs; ++g) plain.push_back(capture(false, next_copy));
      next_copy = 0;
      for (int g = 0; g < graphs; ++g) stamped.push_back(capture(true, next_copy));
      auto time_graphs = [&](std::vector<cudaGraphExec_t>& gs) {
        for (int w = 0; w < 3; ++w)
          for (auto& ge : gs) CK(cudaGraphLaunch(ge, st));
        std::vector<double> per;
        for (int rep = 0; rep < 40; ++rep) {
          auto& ge = gs[rep % gs.size()];
          CK(cudaEventRecord(e0, st));
          CK(cudaGraphLaunch(ge, st));
          CK(cudaEventRecord(e1, st));
          CK(cudaEventSynchronize(e1));
          float ms;
          CK(cudaEventElapsedTime(&ms, e0, e1));
          per.push_back(ms * 1000.0 / L);
        }
        return median(per);
      };
      const double t_plain = time_graphs(plain);
      const double t_stamped = time_graphs(stamped);
      // The last graph launched was stamped[(40 - 1) % size]: read its stamps.
      std::vector<u64> h(rec_per_launch * L);
      CK(cudaStreamSynchronize(st));
      CK(cudaMemcpy(h.data(), rec, 8 * h.size(), cudaMemcpyDeviceToHost));
      if (path == 5) {
        std::printf("| 2^%d | CUB | | %.2f | | | | | | | |\n", lg, t_plain);
      } else {
        const unsigned blocks = path < 0 ? 1 : grid;
        std::vector<double> rel, loads, part, coll, fin, gap;
        std::vector<u64> go(L), end(L);
        for (int i = 0; i < L; ++i) {
          const u64* r = h.data() + i * rec_per_launch;
          u64 first_go = ~0ull, last_part = 0, coll_t3 = 0, coll_t4 = 0, coll_end = 0, first_start = ~0ull;
          for (unsigned b = 0; b < blocks; ++b) {
            const u64* q = r + size_t(b) * kStamps;
            first_go = std::min(first_go, q[1]);
            first_start = std::min(first_start, q[0]);
            last_part = std::max(last_part, q[2]);
            if (q[5] >= coll_end) { coll_end = q[5]; coll_t3 = q[3]; coll_t4 = q[4]; }
          }
          go[i] = first_go;
          end[i] = coll_end;
          rel.push_back(double(first_go) - double(first_start));
          loads.push_back(double(last_part) - double(first_go));
          part.push_back(double(coll_t3) - double(last_part));
          coll.push_back(double(coll_t4) - double(coll_t3));
          fin.push_back(double(coll_end) - double(coll_t4));
        }
        for (int i = 2; i + 1 < L; ++i) gap.push_back(double(go[i + 1]) - double(end[i]));
        const char* names[] = {"empty", "one block", "counted (volatile reads)", "counted (relaxed reads)",
                               "ticket + exch slots", "count + epoch slots (v2 store)", "count + epoch slots (exch.b128)"};
        std::printf("| 2^%d | %s | %u | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", lg, names[path + 2], blocks,
                    t_plain, t_stamped, median(rel) / 1e3, median(loads) / 1e3, median(part) / 1e3, median(coll) / 1e3,
                    median(fin) / 1e3, median(gap) / 1e3);
        if (std::getenv("TL_DUMP") && path >= 0) {
          // One launch's blocks in full (launch 10), sorted by partial time.
          const u64* r = h.data() + 10 * rec_per_launch;
          u64 base = ~0ull;
          for (unsigned b = 0; b < blocks; ++b) base = std::min(base, r[b * kStamps + 1]);
          for (unsigned b = 0; b < blocks; b += std::max(1u, blocks / 16)) {
            const u64* q = r + size_t(b) * kStamps;
            std::printf("    block %u: start %.2f go %.2f partial %.2f t3 %.2f t4 %.2f end %.2f\n", b,
                        (double(q[0]) - base) / 1e3, (double(q[1]) - base) / 1e3, (double(q[2]) - base) / 1e3,
                        (double(q[3]) - base) / 1e3, q[4] ? (double(q[4]) - base) / 1e3 : 0.0,
                        (double(q[5]) - base) / 1e3);
          }
        }
      }
      for (auto& ge : plain) CK(cudaGraphExecDestroy(ge));
      for (auto& ge : stamped) CK(cudaGraphExecDestroy(ge));
      CK(cudaGetLastError());
    }
    // Check the modes agree with CUB's sum on one input (sanity).
    CK(cudaFree(cub_tmp));
  }
  // globaltimer granularity: smallest non-zero difference between consecutive reads in one thread.
  granularity<<<1, 1>>>(rec);
  u64 g[2];
  CK(cudaMemcpy(g, rec, 16, cudaMemcpyDeviceToHost));
  std::printf("# globaltimer: smallest step %llu ns, %llu distinct values in 20000 reads\n", g[0], g[1]);
  return 0;
}
