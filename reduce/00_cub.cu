// cub: the anchor of the reduction ladder, CUB's device-wide reduction from the CUDA Toolkit. In the HIP build
// (AMD GPUs) the anchor is rocPRIM's device-wide reduction instead, `rocprim` (rocprim::reduce over the same
// element transform; its grid and passes are its own), and every call below is rocPRIM's.
// float and double sums are cub::DeviceReduce::Sum itself; int64 sums are DeviceReduce::Sum over the same
// bits read as uint64 (so overflow wraps with defined behaviour, as the reference does). int32 (which must
// sum into int64) and every sum of squares go through DeviceReduce::TransformReduce with the element
// transform the other variants use. The integral is TransformReduce over a counting iterator.
// CUB chooses its own grid (two kernel launches: per-block partials, then a single-block pass), and its
// results are deterministic run to run.
// Run: build/bench/kbench run --suite reduce --variants cub --sizes 2^20,2^24,2^28 --types int32,double
#include "reduce/kernels.cuh"

#if defined(KS_HIP)
#include <iostream>  // rocPRIM 5.3's device_reduce.hpp uses std::cout without including it
#include <rocprim/device/device_reduce.hpp>
#include <rocprim/iterator/counting_iterator.hpp>
#include <rocprim/iterator/transform_iterator.hpp>
#else
#include <cub/device/device_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>
#endif

namespace ks::reduce {
namespace {

struct Combine {
  template <class A>
  __host__ __device__ __forceinline__ A operator()(A a, A b) const { return combine(a, b); }
};

template <class T, Op op>
struct Transform {
  __host__ __device__ __forceinline__ Acc<T> operator()(T x) const { return transform<op>(x); }
};

template <class T>
struct MidpointTerm {
  MidpointSource<T> src;
  __device__ __forceinline__ T operator()(std::int64_t i) const { return src(static_cast<std::size_t>(i)); }
};

// Runs a CUB algorithm twice: once to size its temporary storage, once for real, in context scratch.
template <class F>
void with_temp_storage(ExecContext& ctx, F&& algorithm) {
  std::size_t bytes = 0;
  CUDA_CHECK(algorithm(nullptr, bytes));
  CUDA_CHECK(algorithm(ctx.device_scratch(bytes), bytes));
}

#if defined(KS_HIP)
template <class T, Op op>
void cub_reduce(const T* in, std::size_t n, Acc<T>* out, ExecContext& ctx) {
  const auto first = rocprim::make_transform_iterator(in, Transform<T, op>{});
  with_temp_storage(ctx, [&](void* temp, std::size_t& bytes) {
    return rocprim::reduce(temp, bytes, first, out, Acc<T>(0), n, Combine{}, ctx.stream());
  });
}
#else
template <class T, Op op>
void cub_reduce(const T* in, std::size_t n, Acc<T>* out, ExecContext& ctx) {
  const cudaStream_t s = ctx.stream();
  with_temp_storage(ctx, [&](void* temp, std::size_t& bytes) {
    if constexpr (op == Op::Sum && std::is_floating_point_v<T>) {
      return cub::DeviceReduce::Sum(temp, bytes, in, out, n, s);
    } else if constexpr (op == Op::Sum && std::is_same_v<T, std::int64_t>) {
      return cub::DeviceReduce::Sum(temp, bytes, reinterpret_cast<const unsigned long long*>(in),
                                    reinterpret_cast<unsigned long long*>(out), n, s);
    } else {
      return cub::DeviceReduce::TransformReduce(temp, bytes, in, out, n, Combine{}, Transform<T, op>{},
                                                Acc<T>(0), s);
    }
  });
}
#endif

ReduceLaunch cub_launch() {
  return [](const ReduceCall& c, ExecContext& ctx) {
    dispatch(c.dtype, c.op, [&](auto zero, auto op) {
      using T = decltype(zero);
      cub_reduce<T, decltype(op)::value>(static_cast<const T*>(c.in), c.n, static_cast<Acc<T>*>(c.out), ctx);
    });
  };
}

IntegralLaunch cub_integral() {
  return [](const IntegralCall& c, ExecContext& ctx) {
    auto go = [&](auto zero) {
      using T = decltype(zero);
      const MidpointTerm<T> term{{static_cast<T>(c.a), static_cast<T>((c.b - c.a) / static_cast<double>(c.n))}};
#if defined(KS_HIP)
      const auto first = rocprim::make_transform_iterator(rocprim::counting_iterator<std::int64_t>(0), term);
      with_temp_storage(ctx, [&](void* temp, std::size_t& bytes) {
        return rocprim::reduce(temp, bytes, first, static_cast<T*>(c.out), T(0), static_cast<std::size_t>(c.n),
                               Combine{}, ctx.stream());
      });
#else
      const thrust::counting_iterator<std::int64_t> first(0);
      with_temp_storage(ctx, [&](void* temp, std::size_t& bytes) {
        return cub::DeviceReduce::TransformReduce(temp, bytes, first, static_cast<T*>(c.out), c.n, Combine{},
                                                  term, T(0), ctx.stream());
      });
#endif
    };
    if (c.dtype == DType::F32) go(float{});
    else go(double{});
  };
}

}  // namespace

#if defined(KS_HIP)
KS_REDUCE_VARIANT({.info = {.name = "rocprim", .summary = "rocprim::reduce over the element transform: the anchor",
                            .anchor = true},
                   .launch = cub_launch(),
                   .integral = cub_integral()});
#else
KS_REDUCE_VARIANT({.info = {.name = "cub", .summary = "cub::DeviceReduce::Sum / TransformReduce: the anchor", .anchor = true},
                   .launch = cub_launch(),
                   .integral = cub_integral()});
#endif

}  // namespace ks::reduce
