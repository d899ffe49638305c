// Device pieces every reduction variant shares: accumulator types, the element transform (sum or sum of
// squares), where elements come from (an array, or the integrand of the midpoint rule), warp and block
// reductions, atomics, the deterministic finishing kernel, and the glue that builds a variant's launch
// functions for every element type and operation.
#pragma once

#include "common/cuda_check.hpp"
#include "common/gpu_runtime.hpp"
#include "reduce/reduce.hpp"
#include "reduce/warp.hpp"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <type_traits>

namespace ks::reduce {

template <class T> struct AccumFor { using type = T; };
template <> struct AccumFor<std::int32_t> { using type = std::int64_t; };
// Accumulator of an element type: int32 sums into int64; the others sum in their own type.
template <class T> using Acc = typename AccumFor<T>::type;

template <Op op, class T>
__host__ __device__ __forceinline__ Acc<T> transform(T x) {
  const Acc<T> v = static_cast<Acc<T>>(x);
  if constexpr (op == Op::Sum) {
    return v;
  } else if constexpr (std::is_integral_v<Acc<T>>) {
    using U = std::make_unsigned_t<Acc<T>>;
    return static_cast<Acc<T>>(static_cast<U>(v) * static_cast<U>(v));
  } else {
    return v * v;
  }
}

// Element i of an array, transformed by the operation.
template <class T, Op op>
struct ArraySource {
  using acc_type = Acc<T>;
  const T* p;
  __device__ __forceinline__ acc_type operator()(std::size_t i) const { return transform<op>(p[i]); }
};

// Term i of the midpoint rule for f(x) = sin^2(2x) cos^2(x), in T arithmetic throughout.
template <class T>
struct MidpointSource {
  using acc_type = T;
  T a, h;
  __device__ __forceinline__ T operator()(std::size_t i) const {
    const T x = a + (static_cast<T>(i) + T(0.5)) * h;
    T s, c;
    if constexpr (std::is_same_v<T, float>) {
      s = sinf(2.0f * x);
      c = cosf(x);
    } else {
      s = sin(2.0 * x);
      c = cos(x);
    }
    return s * s * c * c * h;
  }
};

// A thread of a kernel, as reduce/warp.hpp's algorithms see it. Block: the block size where the kernel fixes
// it at compile time (0: blockDim.x).
template <unsigned Block = 0>
struct DeviceThread {
  __device__ __forceinline__ unsigned tid() const { return threadIdx.x; }
  __device__ __forceinline__ unsigned block_size() const { return Block ? Block : blockDim.x; }
  __device__ __forceinline__ void sync_block() const { __syncthreads(); }
  __device__ __forceinline__ void sync_warp() const { ks::sync_warp(); }
  template <class T>
  __device__ __forceinline__ T shfl_down(T v, unsigned offset) const { return ks::shfl_down(v, offset); }
};

// Sum over the warp (all lanes call it); the result is valid in lane 0.
template <class A>
__device__ __forceinline__ A warp_reduce(A v) {
  return warp_fold<kWarpSize>(PlainFold<A>{v}, DeviceThread<>{}).v;
}

// Sum over the block (blockDim.x a multiple of kWarpSize); the result is valid in thread 0. One call per kernel.
template <class A>
__device__ __forceinline__ A block_reduce(A v) {
  __shared__ PlainFold<A> warp_sums[kMaxWarps<kWarpSize>];
  return block_fold<kWarpSize>(PlainFold<A>{v}, warp_sums, DeviceThread<>{}).v;
}

__device__ __forceinline__ void atomic_combine(std::int64_t* out, std::int64_t v) {
  atomicAdd(reinterpret_cast<unsigned long long*>(out), static_cast<unsigned long long>(v));
}
__device__ __forceinline__ void atomic_combine(float* out, float v) { atomicAdd(out, v); }
__device__ __forceinline__ void atomic_combine(double* out, double v) { atomicAdd(out, v); }

// Each thread's share of a grid-stride loop over [0, n).
template <class Source>
__device__ __forceinline__ typename Source::acc_type grid_stride_accumulate(const Source& src, std::size_t n) {
  typename Source::acc_type v = 0;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    v = combine(v, src(i));
  return v;
}

// One partial per block of a grid-stride pass.
template <class Source>
__global__ void grid_stride_partials_kernel(Source src, std::size_t n, typename Source::acc_type* partials) {
  const auto v = block_reduce(grid_stride_accumulate(src, n));
  if (threadIdx.x == 0) partials[blockIdx.x] = v;
}

// Sums `count` partials in a fixed order with one block: deterministic.
template <class A>
__global__ void __launch_bounds__(1024) finish_partials_kernel(const A* partials, std::size_t count, A* out) {
  A v = 0;
  for (std::size_t i = threadIdx.x; i < count; i += blockDim.x) v = combine(v, partials[i]);
  v = block_reduce(v);
  if (threadIdx.x == 0) *out = v;
}

template <class A>
void finish_partials(const A* partials, std::size_t count, A* out, cudaStream_t stream) {
  finish_partials_kernel<A><<<1, 1024, 0, stream>>>(partials, count, out);
  CUDA_CHECK_LAUNCH();
}

inline unsigned blocks_for(std::size_t n, std::size_t per_block) {
  const std::size_t b = (n + per_block - 1) / per_block;
  if (b > 0x7fffffffu) throw std::invalid_argument("reduction: n too large for a one-pass grid");
  return static_cast<unsigned>(b);
}

template <class A>
A* scratch_as(ExecContext& ctx, std::size_t count) {
  return static_cast<A*>(ctx.device_scratch(count * sizeof(A)));
}

// Calls f(T{}, std::integral_constant<Op, op>{}) for the call's element type and operation.
template <class F>
void dispatch(DType t, Op op, F&& f) {
  auto with_op = [&](auto zero) {
    if (op == Op::Sum) f(zero, std::integral_constant<Op, Op::Sum>{});
    else f(zero, std::integral_constant<Op, Op::SumSquares>{});
  };
  switch (t) {
    case DType::I32: with_op(std::int32_t{}); break;
    case DType::I64: with_op(std::int64_t{}); break;
    case DType::F32: with_op(float{}); break;
    case DType::F64: with_op(double{}); break;
  }
}

// The launch functions of a variant whose Impl has
//   template <class Source>
//   static void run(const Source&, std::size_t n, typename Source::acc_type* out, int block, ExecContext&);
// array_launch: device arrays of every type, both operations; integral_launch: the midpoint integral.
template <class Impl>
ReduceLaunch array_launch() {
  return [](const ReduceCall& c, ExecContext& ctx) {
    dispatch(c.dtype, c.op, [&](auto zero, auto op) {
      using T = decltype(zero);
      const ArraySource<T, decltype(op)::value> src{static_cast<const T*>(c.in)};
      Impl::run(src, c.n, static_cast<Acc<T>*>(c.out), c.block_size, ctx);
    });
  };
}

template <class Impl>
IntegralLaunch integral_launch() {
  return [](const IntegralCall& c, ExecContext& ctx) {
    auto go = [&](auto zero) {
      using T = decltype(zero);
      const T h = static_cast<T>((c.b - c.a) / static_cast<double>(c.n));
      const MidpointSource<T> src{static_cast<T>(c.a), h};
      Impl::run(src, static_cast<std::size_t>(c.n), static_cast<T*>(c.out), c.block_size, ctx);
    };
    if (c.dtype == DType::F32) go(float{});
    else go(double{});
  };
}

}  // namespace ks::reduce
