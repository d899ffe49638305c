// fast and fast_compensated: step 13, one launch, 16-byte loads, deterministic; the suite's answer to CUB.
//
// CUB's DeviceReduce runs two kernels (per-block partials, then one block over them). At 2^20 elements the
// data is read in about 2 us, so the second launch and the gap before it are a large share of the time.
// Here the blocks that finish write their partial, fence, and count themselves on a device counter; the block
// that counts last sums all partials in a fixed order and writes the result, then resets the counter to zero
// for the next launch (no memset per launch). Since every thread's share of the input, every block's tree
// and the final order are fixed for a given device and n, float and double results are bitwise identical run
// to run.
// Bandwidth: each thread keeps kUnroll 16-byte loads in flight (int4, longlong2, float4, double2), coalesced
// across the warp, over a grid-stride loop on a resident grid (occupancy calculator x SM count). A scalar
// head up to the first 16-byte boundary and a scalar tail make any element-aligned pointer and any n work.
// fast_compensated keeps a Neumaier (compensated) sum per thread and merges the (sum, compensation) pairs,
// for ill-conditioned floating-point inputs; integer sums are exact and take the plain path.
// Limits: one counter per context, so two launches of this variant must not run concurrently on different
// streams of one context. Measurements: docs/reduce-notes.md.
// Run: build/bench/kbench run --suite reduce --variants 'fast.*' --sizes 2^16,2^20,2^24,2^28 --types int32,double
#include "reduce/kernels.cuh"

#include <cstdint>

namespace ks::reduce {
namespace {

constexpr int kBlock = 256;
constexpr int kUnroll = 4;

template <class T> struct Vec16;
template <> struct Vec16<std::int32_t> { using type = int4; };
template <> struct Vec16<std::int64_t> { using type = longlong2; };
template <> struct Vec16<float> { using type = float4; };
template <> struct Vec16<double> { using type = double2; };
template <class T> constexpr int kWidth = 16 / sizeof(T);

// Plain running sum.
template <class A>
struct PlainSum {
  A s;
  static __device__ __forceinline__ PlainSum zero() { return {A(0)}; }
  __device__ __forceinline__ void add(A x) { s = combine(s, x); }
  __device__ __forceinline__ void merge(const PlainSum& o) { s = combine(s, o.s); }
  __device__ __forceinline__ PlainSum shfl_down(int offset) const {
    return {__shfl_down_sync(0xffffffffu, s, offset)};
  }
  __device__ __forceinline__ A value() const { return s; }
  // Reads another block's partial through L2 (volatile: never a stale L1 line).
  static __device__ __forceinline__ PlainSum load_coherent(const PlainSum* p) {
    const volatile A* s = &p->s;
    return {*s};
  }
};

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
  __device__ __forceinline__ CompensatedSum shfl_down(int offset) const {
    return {__shfl_down_sync(0xffffffffu, s, offset), __shfl_down_sync(0xffffffffu, c, offset)};
  }
  __device__ __forceinline__ A value() const { return s + c; }
  static __device__ __forceinline__ CompensatedSum load_coherent(const CompensatedSum* p) {
    const volatile A* s = &p->s;
    const volatile A* c = &p->c;
    return {*s, *c};
  }
};

// Merges over the block; the result is valid in thread 0. Fixed shape: deterministic.
template <class Sum>
__device__ __forceinline__ Sum block_merge(Sum v) {
  __shared__ Sum warp_sums[kBlock / 32];
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v.merge(v.shfl_down(offset));
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kBlock / 32 ? warp_sums[lane] : Sum::zero();
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v.merge(v.shfl_down(offset));
  }
  return v;
}

template <class T, Op op, class Sum>
__global__ void __launch_bounds__(kBlock) fast_kernel(const T* __restrict__ in, std::size_t n, Acc<T>* out,
                                                     Sum* partials, unsigned* counter) {
  using V = typename Vec16<T>::type;
  constexpr int W = kWidth<T>;
  const std::size_t misaligned = (reinterpret_cast<std::uintptr_t>(in) % 16) / sizeof(T);
  const std::size_t head = misaligned ? min(n, static_cast<std::size_t>(W) - misaligned) : 0;
  const std::size_t nvec = (n - head) / W;
  const std::size_t tail = head + nvec * W;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * kBlock + threadIdx.x;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kBlock;

  Sum acc = Sum::zero();
  if (tid < head) acc.add(transform<op>(in[tid]));
  const V* vin = reinterpret_cast<const V*>(in + head);
  auto add_vec = [&](const V& v) {
    const T* e = reinterpret_cast<const T*>(&v);
#pragma unroll
    for (int k = 0; k < W; ++k) acc.add(transform<op>(e[k]));
  };
  std::size_t i = tid;
  for (; i + (kUnroll - 1) * stride < nvec; i += kUnroll * stride) {
    V v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = vin[i + u * stride];  // all loads issued before any add
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) add_vec(v[u]);
  }
  // At most kUnroll - 1 vectors are left for this thread: one guarded step keeps their loads in flight
  // together (a plain remainder loop would wait for each load in turn).
  {
    V v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (i + u * stride < nvec) v[u] = vin[i + u * stride];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (i + u * stride < nvec) add_vec(v[u]);
  }
  if (tid < n - tail) acc.add(transform<op>(in[tail + tid]));

  acc = block_merge(acc);
  __shared__ bool last_block;
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = acc;
    __threadfence();  // the partial is visible device-wide before this block is counted
    last_block = atomicAdd(counter, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last_block) return;
  // Every other block's partial is visible: each fenced before counting itself.
  Sum v = Sum::zero();
  for (unsigned b = threadIdx.x; b < gridDim.x; b += kBlock) v.merge(Sum::load_coherent(partials + b));
  v = block_merge(v);
  if (threadIdx.x == 0) {
    *out = v.value();
    *counter = 0;  // self-resetting for the next launch
  }
}

template <class T, Op op, class Sum>
void run_fast(const T* in, std::size_t n, Acc<T>* out, ExecContext& ctx) {
  const auto kernel = fast_kernel<T, op, Sum>;
  const std::size_t per_block = static_cast<std::size_t>(kBlock) * kUnroll * kWidth<T>;
  const int grid = static_cast<int>(
      std::max<std::size_t>(1, std::min<std::size_t>(device_resident_blocks(kernel, kBlock), (n + per_block - 1) / per_block)));
  Sum* partials = scratch_as<Sum>(ctx, static_cast<std::size_t>(grid));
  kernel<<<grid, kBlock, 0, ctx.stream()>>>(in, n, out, partials, ctx.zeroed_counters(1));
  CUDA_CHECK_LAUNCH();
}

ReduceLaunch fast_launch(bool compensated) {
  return [compensated](const ReduceCall& c, ExecContext& ctx) {
    dispatch(c.dtype, c.op, [&](auto zero, auto op_tag) {
      using T = decltype(zero);
      constexpr Op op = decltype(op_tag)::value;
      const T* in = static_cast<const T*>(c.in);
      auto* out = static_cast<Acc<T>*>(c.out);
      if constexpr (std::is_floating_point_v<T>) {
        if (compensated) return run_fast<T, op, CompensatedSum<T>>(in, c.n, out, ctx);
      }
      run_fast<T, op, PlainSum<Acc<T>>>(in, c.n, out, ctx);
    });
  };
}

}  // namespace

KS_REDUCE_VARIANT({.info = {.name = "fast",
                            .summary = "one launch: 16-byte loads, resident grid, last-block combine in fixed order "
                                       "(deterministic)"},
                   .launch = fast_launch(false)});
KS_REDUCE_VARIANT({.info = {.name = "fast_compensated",
                            .summary = "fast with Neumaier compensated sums per thread and in the combine (float, double)"},
                   .launch = fast_launch(true)});

}  // namespace ks::reduce
