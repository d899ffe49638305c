// fast and fast_compensated: step 13, one launch, 16-byte loads, deterministic; the suite's answer to CUB.
//
// CUB's DeviceReduce runs two kernels (per-block partials, then one block over them) where the input is more
// than one tile. This runs one, in one of three shapes by size, and on Hopper (sm_90) lets its launch overlap the
// kernel before it:
// - One block (up to 4096 16-byte vectors: 64 KiB): 256 or 1024 threads, no combine across blocks at all.
// - One cluster (sm_90, up to 256 KiB, for the compensated sums): a grid of up to 16 blocks of 1024 threads, one
//   per SM, that is one thread-block cluster; each block writes its partial into block 0's shared memory
//   (distributed shared memory) and one cluster barrier hands them over: no global atomic, no fence, no read of
//   partials from L2.
// - The resident grid (above, and everywhere before sm_90): each block that finishes hands its partial over and
//   counts itself on a device counter; the block that counts last sums all partials in a fixed order, writes the
//   result and resets the counter to zero for the next launch (no memset per launch). On sm_90 (sums of at most
//   8 bytes) the partial travels in a 16-byte slot with a non-zero tag, written by one atomic exchange beside a
//   relaxed count: no fence; the last block exchanges each slot back to zero, polling a slot whose write has
//   not landed yet (it was issued before its block counted). Elsewhere the partial is stored and the count is an
//   acquire-release atomic (the release publishes the partial, the acquire lets the last block read them), whose
//   fence made the grid path 0.1-0.3 us a launch slower from 2^16 to 2^20 on an H100 (docs/reduce-notes.md).
// - Programmatic dependent launch (sm_90): the kernel waits (griddepcontrol.wait) for the kernel before it in
//   the stream to finish before it reads anything, and lets the next one launch at once; the launch's own
//   latency then overlaps the kernel before it. Before it waits, each thread asks the L2 for its first step of
//   loads (prefetch.global.L2), so that their DRAM round trip overlaps the kernel before it as well.
// Since every thread's share of the input, every block's tree and the final order are fixed for a given
// device, path and n, float and double results are bitwise identical run to run.
// Bandwidth: each thread keeps kUnroll 16-byte loads in flight (int4, longlong2, float4, double2), coalesced
// across the warp, over a grid-stride loop. A scalar head up to the first 16-byte boundary and a scalar tail make
// any element-aligned pointer and any n work.
// fast_compensated keeps a Neumaier (compensated) sum per thread and merges the (sum, compensation) pairs,
// for ill-conditioned floating-point inputs; integer sums are exact and take the plain path.
// Limits: one counter per context, so two launches of this variant must not run concurrently on different
// streams of one context. Measurements: docs/reduce-notes.md.
// Run: build/bench/kbench run --suite reduce --variants 'fast.*' --sizes 2^16,2^20,2^24,2^28 --types int32,double
#include "common/per_device.hpp"
#include "reduce/kernels.cuh"

#if !defined(KS_HIP)
#include <cuda/atomic>
#endif

#include <algorithm>
#include <cstdint>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#include <cooperative_groups.h>
#define KS_FAST_SM90 1
#endif

namespace ks::reduce {
namespace {

constexpr int kBlock = 256;          // the grid path's block
constexpr int kClusterBlock = 1024;  // the cluster path's block: one per SM, as many loads in flight as fit
[[maybe_unused]] constexpr int kMaxCluster = 16;  // the largest cluster sm_90 allows (8 is the portable size)
constexpr int kUnroll = 4;
// The rule: where the grid path hands its partials over through a count (compensated sums, GPUs before sm_90),
// the cluster path up to this many bytes of input (where its 16 SMs read the input sooner than the counted
// handover costs), the grid path above; where the grid path has the slots, the grid path from one block up (it
// was the faster of the two at every size and type the cluster path took: docs/reduce-notes.md).
constexpr std::size_t kClusterMaxBytes = std::size_t(256) << 10;

template <class T> struct Vec16;
template <> struct Vec16<std::int32_t> { using type = int4; };
template <> struct Vec16<std::int64_t> { using type = longlong2; };
template <> struct Vec16<float> { using type = float4; };
template <> struct Vec16<double> { using type = double2; };
template <class T> constexpr int kWidth = 16 / sizeof(T);

// Plain running sum: reduce/warp.hpp's fold value; read from another block's partial through L2 (volatile: never
// a stale L1 line).
template <class A>
using PlainSum = PlainFold<A>;
template <class A>
__device__ __forceinline__ PlainSum<A> load_coherent(const PlainSum<A>* p) {
  const volatile A* v = &p->v;
  return {*v};
}

// Neumaier's compensated sum: c collects the low-order bits each addition loses.
template <class A>
struct CompensatedSum {
  A s, c;
  static __device__ __forceinline__ CompensatedSum zero() { return {A(0), A(0)}; }
  __device__ __forceinline__ void add(A x) {
    const A t = s + x;
    c += fabs(s) >= fabs(x) ? (s - t) + x : (x - t) + s;
    s = t;
  }
  __device__ __forceinline__ void merge(const CompensatedSum& o) {
    add(o.s);
    c += o.c;
  }
  template <class Thread>
  __device__ __forceinline__ CompensatedSum shfl_down(const Thread& t, unsigned offset) const {
    return {t.shfl_down(s, offset), t.shfl_down(c, offset)};
  }
  __device__ __forceinline__ A value() const { return s + c; }
};
template <class A>
__device__ __forceinline__ CompensatedSum<A> load_coherent(const CompensatedSum<A>* p) {
  const volatile A* s = &p->s;
  const volatile A* c = &p->c;
  return {*s, *c};
}

// Merges over a block of Block threads; the result is valid in thread 0. Fixed shape: deterministic.
template <int Block, class Sum>
__device__ __forceinline__ Sum block_merge(Sum v) {
  __shared__ Sum warp_sums[Block / kWarpSize];
  return block_fold<kWarpSize>(v, warp_sums, DeviceThread<Block>{});
}

// Where the input's 16-byte vectors lie: a scalar head up to the first 16-byte boundary, nvec vectors from vin,
// a scalar tail from element `tail`.
template <class T>
struct Vectors {
  std::size_t head, nvec, tail;
  const typename Vec16<T>::type* vin;
  __device__ __forceinline__ Vectors(const T* in, std::size_t n) {
    constexpr int W = kWidth<T>;
    const std::size_t misaligned = (reinterpret_cast<std::uintptr_t>(in) % 16) / sizeof(T);
    head = misaligned ? min(n, static_cast<std::size_t>(W) - misaligned) : 0;
    nvec = (n - head) / W;
    tail = head + nvec * W;
    vin = reinterpret_cast<const typename Vec16<T>::type*>(in + head);
  }
};

// Programmatic dependent launch (sm_90; nothing elsewhere): wait until the kernel before this one in the stream
// has finished and its writes are visible, then let the kernel after this one launch. Before the wait, where
// `prefetch`, the L2 is asked for this thread's first step of vectors (the loads thread_share issues first), so
// that their DRAM round trip overlaps the kernel before instead of following it (docs/reduce-notes.md). That is
// safe while that kernel may still be writing the input: the L2 is device memory's point of coherence, so a line
// fetched early is updated there by the later writes, and prefetch.global.L2 puts nothing in this SM's L1.
template <class T>
__device__ __forceinline__ void follow_predecessor([[maybe_unused]] const T* in, [[maybe_unused]] std::size_t n,
                                                   [[maybe_unused]] std::size_t tid,
                                                   [[maybe_unused]] std::size_t threads,
                                                   [[maybe_unused]] bool prefetch) {
#ifdef KS_FAST_SM90
  if (prefetch) {
    const Vectors<T> v(in, n);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (tid + u * threads < v.nvec) asm volatile("prefetch.global.L2 [%0];\n" ::"l"(v.vin + tid + u * threads));
  }
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

// This thread's share of the input: thread tid of `threads`, a grid-stride loop over 16-byte vectors with the
// scalar head and tail.
template <class T, Op op, class Sum>
__device__ __forceinline__ Sum thread_share(const T* __restrict__ in, std::size_t n, std::size_t tid,
                                            std::size_t threads) {
  using V = typename Vec16<T>::type;
  constexpr int W = kWidth<T>;
  const Vectors<T> layout(in, n);
  const std::size_t head = layout.head, nvec = layout.nvec, tail = layout.tail;

  // One running sum per unrolled load: with a single chain of dependent adds, ptxas issued each 16-byte
  // load just before its adds (the same registers for all four), so every load waited out the memory latency
  // alone; four independent chains keep the four loads in flight together. Merged at the end in a fixed order.
  Sum acc[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) acc[u] = Sum::zero();
  if (tid < head) acc[0].add(transform<op>(in[tid]));
  const V* vin = layout.vin;
  auto add_vec = [&](Sum& a, const V& v) {
    const T* e = reinterpret_cast<const T*>(&v);
#pragma unroll
    for (int k = 0; k < W; ++k) a.add(transform<op>(e[k]));
  };
  std::size_t i = tid;
  for (; i + (kUnroll - 1) * threads < nvec; i += kUnroll * threads) {
    V v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = vin[i + u * threads];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) add_vec(acc[u], v[u]);
  }
  // At most kUnroll - 1 vectors are left for this thread: one guarded step keeps their loads in flight
  // together (a plain remainder loop would wait for each load in turn).
  {
    V v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (i + u * threads < nvec) v[u] = vin[i + u * threads];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (i + u * threads < nvec) add_vec(acc[u], v[u]);
  }
  if (tid < n - tail) acc[0].add(transform<op>(in[tail + tid]));
#pragma unroll
  for (int u = 1; u < kUnroll; ++u) acc[0].merge(acc[u]);
  return acc[0];
}

// The grid path's handover on sm_90: a block's partial (at most 8 bytes) and a non-zero tag in one 16-byte slot,
// written and taken by 16-byte atomic exchanges (atom.exch.b128: sm_90), so a slot is never seen half written.
// The slots are zero between launches: the last block exchanges each back to zero as it takes it.
struct alignas(16) Slot {
  unsigned long long bits, tag;
};
template <class Sum>
constexpr bool kSlotted = sizeof(Sum) <= sizeof(unsigned long long);
constexpr int kSlotsPerThread = 4;  // the last block's threads take slots t, t + kBlock, ...: at most this many
constexpr unsigned kMaxSlots = kBlock * kSlotsPerThread;

#ifdef KS_FAST_SM90
__device__ __forceinline__ Slot exchange(Slot* slot, unsigned long long bits, unsigned long long tag) {
  Slot old;
  asm volatile(
      "{\n .reg .b128 d, v;\n mov.b128 v, {%2, %3};\n atom.relaxed.gpu.global.exch.b128 d, [%4], v;\n"
      " mov.b128 {%0, %1}, d;\n}"
      : "=l"(old.bits), "=l"(old.tag)
      : "l"(bits), "l"(tag), "l"(slot)
      : "memory");
  return old;
}
template <class Sum>
__device__ __forceinline__ unsigned long long to_bits(const Sum& v) {
  unsigned long long b = 0;
  memcpy(&b, &v, sizeof(Sum));
  return b;
}
template <class Sum>
__device__ __forceinline__ Sum from_bits(unsigned long long b) {
  Sum v;
  memcpy(&v, &b, sizeof(Sum));
  return v;
}

// The last block's side: every slot of this thread exchanged at once (the round trips overlap), those not yet
// written exchanged again until they are; merged in the order of the blocks, as the counted path does.
template <class Sum>
__device__ __forceinline__ Sum take_slots(Slot* slots) {
  Slot got[kSlotsPerThread];
#pragma unroll
  for (int k = 0; k < kSlotsPerThread; ++k) {
    const unsigned b = threadIdx.x + k * kBlock;
    got[k] = b < gridDim.x ? exchange(slots + b, 0, 0) : Slot{0, 1};
  }
  Sum v = Sum::zero();
#pragma unroll
  for (int k = 0; k < kSlotsPerThread; ++k) {
    const unsigned b = threadIdx.x + k * kBlock;
    if (b >= gridDim.x) break;
    while (got[k].tag == 0) got[k] = exchange(slots + b, 0, 0);
    v.merge(from_bits<Sum>(got[k].bits));
  }
  return v;
}
#endif

// slots: the sm_90 handover (a sum that fits one; the grid at most kMaxSlots); nullptr: the counted one.
template <class T, Op op, class Sum>
__global__ void __launch_bounds__(kBlock, 4) fast_grid_kernel(const T* __restrict__ in, std::size_t n, Acc<T>* out,
                                                          Sum* partials, unsigned* counter,
                                                          [[maybe_unused]] Slot* slots, bool prefetch) {
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * kBlock + threadIdx.x;
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * kBlock;
  follow_predecessor(in, n, tid, threads, prefetch);
  Sum acc = thread_share<T, op, Sum>(in, n, tid, threads);
  acc = block_merge<kBlock>(acc);
  __shared__ bool last_block;
#ifdef KS_FAST_SM90
  if constexpr (kSlotted<Sum>) {
    if (slots != nullptr) {
      if (threadIdx.x == 0) {
        exchange(slots + blockIdx.x, to_bits(acc), 1);
        // Relaxed: the count only names the last block; the tag, not an order, tells it a slot is written.
        cuda::atomic_ref<unsigned, cuda::thread_scope_device> count(*counter);
        last_block = count.fetch_add(1u, cuda::memory_order_relaxed) == gridDim.x - 1;
      }
      __syncthreads();
      if (!last_block) return;
      Sum v = block_merge<kBlock>(take_slots<Sum>(slots));
      if (threadIdx.x == 0) {
        *out = v.value();
        *counter = 0;
      }
      return;
    }
  }
#endif
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = acc;
    // Release: the partial above is visible to whoever acquires the count after it; acquire: the block that
    // counts last sees every partial released before its count.
#if defined(KS_HIP)
    last_block = __hip_atomic_fetch_add(counter, 1u, __ATOMIC_ACQ_REL, __HIP_MEMORY_SCOPE_AGENT) == gridDim.x - 1;
#else
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> count(*counter);
    last_block = count.fetch_add(1u, cuda::memory_order_acq_rel) == gridDim.x - 1;
#endif
  }
  __syncthreads();  // orders thread 0's acquire before the other threads' reads below
  if (!last_block) return;
  Sum v = Sum::zero();
  for (unsigned b = threadIdx.x; b < gridDim.x; b += kBlock) v.merge(load_coherent(partials + b));
  v = block_merge<kBlock>(v);
  if (threadIdx.x == 0) {
    *out = v.value();
    *counter = 0;  // self-resetting for the next launch
  }
}

// One block, or (sm_90; the host launches it so nowhere else) a grid that is one cluster of Block-thread blocks.
template <class T, Op op, class Sum, int Block>
__global__ void __launch_bounds__(Block, 1) fast_block_kernel(const T* __restrict__ in, std::size_t n, Acc<T>* out,
                                                              bool prefetch) {
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * Block + threadIdx.x;
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * Block;
  follow_predecessor(in, n, tid, threads, prefetch);
#ifdef KS_FAST_SM90
  // A block may write into block 0's shared memory only once block 0 has started: every thread arrives at the
  // cluster barrier as it starts and waits there before the write (by then, after the loads, a formality).
  if (gridDim.x > 1) asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
#endif
  Sum acc = thread_share<T, op, Sum>(in, n, tid, threads);
  acc = block_merge<Block>(acc);
  if (gridDim.x == 1) {
    if (threadIdx.x == 0) *out = acc.value();
    return;
  }
#ifdef KS_FAST_SM90
  __shared__ Sum block_partials[kMaxCluster];  // block 0's copy receives every block's partial
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory");
  if (threadIdx.x == 0) *cluster.map_shared_rank(&block_partials[blockIdx.x], 0) = acc;
  cluster.sync();  // release by every block, acquire by every block: block 0 sees all partials
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  Sum v = block_partials[0];
  for (unsigned b = 1; b < gridDim.x; ++b) v.merge(block_partials[b]);
  *out = v.value();
#endif
}

// What this device and build allow: programmatic dependent launch and the cluster path need sm_90 code on a
// device of compute capability 9.0 or above; the largest cluster of kClusterBlock threads that fits.
struct Sm90 {
  bool pdl = false;
  int max_cluster = 0;  // 0: no cluster path
  // Dynamic shared memory the cluster path asks for (and does not use): more than half an SM's, so that no two
  // of its blocks share an SM (at 32 registers a thread two would fit, and the cluster would read through half
  // as many SMs).
  std::size_t one_per_sm_smem = 0;
};

#if defined(KS_HIP)
// HIP: no thread-block clusters and no programmatic dependent launch; the grid and one-block paths only.
template <class Kernel>
Sm90 read_sm90(int, Kernel) {
  return {};
}

template <class Kernel, class... Args>
void launch(Kernel kernel, unsigned grid, int block, std::size_t smem, unsigned, bool, cudaStream_t stream,
            Args... args) {
  kernel<<<grid, block, smem, stream>>>(args...);
  CUDA_CHECK_LAUNCH();
}
#else
// The launch attribute that makes a grid's blocks clusters of `blocks`.
cudaLaunchAttribute cluster_of(unsigned blocks) {
  cudaLaunchAttribute a{};
  a.id = cudaLaunchAttributeClusterDimension;
  a.val.clusterDim.x = blocks;
  a.val.clusterDim.y = a.val.clusterDim.z = 1;
  return a;
}

template <class Kernel>
Sm90 read_sm90(int device, Kernel cluster_kernel) {
  Sm90 s;
  if (!runs_sm90_code(device, cluster_kernel)) return s;
  s.pdl = true;
  int per_sm = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
  s.one_per_sm_smem = static_cast<std::size_t>(per_sm) / 2 + 1;
  CUDA_CHECK(cudaFuncSetAttribute(cluster_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(s.one_per_sm_smem)));
  CUDA_CHECK(cudaFuncSetAttribute(cluster_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(kMaxCluster);
  cfg.blockDim = dim3(kClusterBlock);
  cfg.dynamicSmemBytes = s.one_per_sm_smem;
  cudaLaunchAttribute a = cluster_of(kMaxCluster);
  cfg.attrs = &a;
  cfg.numAttrs = 1;
  int size = 0;
  CUDA_CHECK(cudaOccupancyMaxPotentialClusterSize(&size, cluster_kernel, &cfg));
  s.max_cluster = std::min(size, kMaxCluster);
  return s;
}

// Launches kernel on grid x block threads (smem bytes of dynamic shared memory), as one cluster of `cluster`
// blocks where cluster > 1, with programmatic dependent launch where pdl.
template <class Kernel, class... Args>
void launch(Kernel kernel, unsigned grid, int block, std::size_t smem, unsigned cluster, bool pdl,
            cudaStream_t stream, Args... args) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(grid);
  cfg.blockDim = dim3(static_cast<unsigned>(block));
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attrs[2]{};
  unsigned count = 0;
  if (cluster > 1) attrs[count++] = cluster_of(cluster);
  if (pdl) {
    attrs[count].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attrs[count].val.programmaticStreamSerializationAllowed = 1;
    ++count;
  }
  cfg.attrs = attrs;
  cfg.numAttrs = count;
  CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, args...));
}
#endif

// Which path: the rule (one block; one cluster up to kClusterMaxBytes where sm_90 allows it and the grid's
// handover would be the counted one; the grid), or one forced (tuning variants).
enum class Path { Rule, Grid, Cluster };
struct Config {
  Path path = Path::Rule;
  bool pdl = true;    // where sm_90 allows it
  bool slots = true;  // the grid path's slot handover, where sm_90 allows it (else the counted one)
  bool prefetch = true;  // with pdl: the first step of loads asked of the L2 before the wait (follow_predecessor)
};

template <class T, Op op, class Sum>
void run_fast(const T* in, std::size_t n, Acc<T>* out, Config config, ExecContext& ctx) {
  const auto grid_kernel = fast_grid_kernel<T, op, Sum>;
  const auto cluster_kernel = fast_block_kernel<T, op, Sum, kClusterBlock>;
  const auto small_kernel = fast_block_kernel<T, op, Sum, kBlock>;
  static PerDevice<Sm90> sm90([cluster_kernel](int device) { return read_sm90(device, cluster_kernel); });
  static PerDevice<int> resident([grid_kernel](int) { return device_resident_blocks(grid_kernel, kBlock); });
  const Sm90 s = sm90.get();
  const bool pdl = config.pdl && s.pdl;
  const bool prefetch = pdl && config.prefetch;
  const std::size_t nvec = n / kWidth<T>;
  if (config.path == Path::Rule && nvec <= static_cast<std::size_t>(kClusterBlock) * kUnroll) {
    // One block where kUnroll vectors a thread cover the input: no combine across blocks at all; 256 threads
    // where they suffice (fewer warps to start and merge), else 1024.
    if (nvec <= static_cast<std::size_t>(kBlock) * kUnroll)
      launch(small_kernel, 1, kBlock, 0, 1, pdl, ctx.stream(), in, n, out, prefetch);
    else
      launch(cluster_kernel, 1, kClusterBlock, 0, 1, pdl, ctx.stream(), in, n, out, prefetch);
    return;
  }
  const std::size_t per_block = static_cast<std::size_t>(kBlock) * kUnroll * kWidth<T>;
  const int grid = static_cast<int>(
      std::max<std::size_t>(1, std::min<std::size_t>(resident.get(), (n + per_block - 1) / per_block)));
  const bool slotted = kSlotted<Sum> && config.slots && s.pdl && static_cast<unsigned>(grid) <= kMaxSlots;
  if (s.max_cluster > 0 &&
      (config.path == Path::Cluster ||
       (config.path == Path::Rule && !slotted && n * sizeof(T) <= kClusterMaxBytes))) {
    // One cluster with as many blocks (SMs) as give every thread at least one vector, up to the largest cluster.
    const auto blocks = static_cast<unsigned>(std::clamp<std::size_t>((nvec + kClusterBlock - 1) / kClusterBlock, 1,
                                                                      static_cast<std::size_t>(s.max_cluster)));
    launch(cluster_kernel, blocks, kClusterBlock, s.one_per_sm_smem, blocks, pdl, ctx.stream(), in, n, out,
           prefetch);
    return;
  }
  // The counter, then (16-byte aligned) the slots: one buffer of the context's, zero between launches. Sized for
  // the largest grid, so that it is allocated once, before any stream capture.
  const std::size_t slot_words = sizeof(Slot) / sizeof(unsigned);
  unsigned* counter = ctx.zeroed_counters(slot_words * (1 + static_cast<std::size_t>(resident.get())));
  Slot* slots = slotted ? reinterpret_cast<Slot*>(counter + slot_words) : nullptr;
  Sum* partials = slots ? nullptr : scratch_as<Sum>(ctx, static_cast<std::size_t>(grid));
  launch(grid_kernel, static_cast<unsigned>(grid), kBlock, 0, 1, pdl, ctx.stream(), in, n, out, partials, counter,
         slots, prefetch);
}

ReduceLaunch fast_launch(bool compensated, Config config = {}) {
  return [compensated, config](const ReduceCall& c, ExecContext& ctx) {
    dispatch(c.dtype, c.op, [&](auto zero, auto op_tag) {
      using T = decltype(zero);
      constexpr Op op = decltype(op_tag)::value;
      const T* in = static_cast<const T*>(c.in);
      auto* out = static_cast<Acc<T>*>(c.out);
      if constexpr (std::is_floating_point_v<T>) {
        if (compensated) return run_fast<T, op, CompensatedSum<T>>(in, c.n, out, config, ctx);
      }
      run_fast<T, op, PlainSum<Acc<T>>>(in, c.n, out, config, ctx);
    });
  };
}

}  // namespace

KS_REDUCE_VARIANT({.info = {.name = "fast",
                            .summary = "one launch, 16-byte loads: one block or a resident grid whose last block "
                                       "combines the partials (handed over in tagged slots on sm_90), by size; fixed "
                                       "order (deterministic); programmatic dependent launch (sm_90)"},
                   .launch = fast_launch(false)});
KS_REDUCE_VARIANT({.info = {.name = "fast_compensated",
                            .summary = "fast with Neumaier compensated sums per thread and in the combine (float, "
                                       "double); one cluster combining in distributed shared memory up to 256 KiB "
                                       "(sm_90)"},
                   .launch = fast_launch(true)});
// Tuning variants: the rule's two paths forced at every n, the grid path's two handovers, and the rule without
// programmatic dependent launch.
KS_REDUCE_VARIANT({.info = {.name = "fast_grid",
                            .summary = "fast, always the resident grid with the last-block combine (partials in tagged "
                                       "slots on sm_90)",
                            .tuning = true},
                   .launch = fast_launch(false, {Path::Grid, true})});
KS_REDUCE_VARIANT({.info = {.name = "fast_grid_counted",
                            .summary = "fast_grid with the partials stored and counted by an acquire-release atomic "
                                       "(the handover before sm_90), on every GPU",
                            .tuning = true},
                   .launch = fast_launch(false, {Path::Grid, true, false})});
KS_REDUCE_VARIANT({.info = {.name = "fast_cluster",
                            .summary = "fast, always one cluster of up to 16 blocks (sm_90; the grid path elsewhere)",
                            .tuning = true},
                   .launch = fast_launch(false, {Path::Cluster, true})});
KS_REDUCE_VARIANT({.info = {.name = "fast_no_prefetch",
                            .summary = "fast without the L2 prefetch of its first loads before the programmatic "
                                       "dependent launch's wait",
                            .tuning = true},
                   .launch = fast_launch(false, {.prefetch = false})});
KS_REDUCE_VARIANT({.info = {.name = "fast_no_pdl",
                            .summary = "fast without programmatic dependent launch",
                            .tuning = true},
                   .launch = fast_launch(false, {Path::Rule, false})});

}  // namespace ks::reduce
