// two_pass: step 11, "space for time". The grid-stride first pass of step 10 writes one partial per block to
// memory instead of an atomic; a second, one-block kernel sums the partials with 16-byte vector loads. A fixed
// grid and a fixed order make it deterministic, and it needs no zeroing of the result. Any n; block sizes
// kPowerOfTwoBlocks (two warps to 1024); also computes the midpoint integral.
// Run: build/bench/kbench run --suite reduce --variants two_pass --sizes 2^20,2^24 --types int32,double
#include "common/per_device.hpp"
#include "reduce/kernels.cuh"

namespace ks::reduce {
namespace {

// 16 bytes of accumulators: two 8-byte or four 4-byte values.
template <class A> struct Vec16;
template <> struct Vec16<float> { using type = float4; static constexpr int width = 4; };
template <> struct Vec16<double> { using type = double2; static constexpr int width = 2; };
template <> struct Vec16<std::int64_t> { using type = longlong2; static constexpr int width = 2; };

template <class A>
__device__ __forceinline__ A lanes_sum(const float4& v) { return combine(combine(v.x, v.y), combine(v.z, v.w)); }
template <class A>
__device__ __forceinline__ A lanes_sum(const double2& v) { return combine(v.x, v.y); }
template <class A>
__device__ __forceinline__ A lanes_sum(const longlong2& v) {
  return combine(static_cast<A>(v.x), static_cast<A>(v.y));
}

// Second pass: one block; partials are 16-byte aligned (device scratch), the tail is read as scalars.
template <class A>
__global__ void __launch_bounds__(1024) sum_partials_vec16_kernel(const A* partials, std::size_t count, A* out) {
  using V = typename Vec16<A>::type;
  constexpr int W = Vec16<A>::width;
  const V* vec = reinterpret_cast<const V*>(partials);
  const std::size_t nvec = count / W;
  A v = 0;
  for (std::size_t i = threadIdx.x; i < nvec; i += blockDim.x) v = combine(v, lanes_sum<A>(vec[i]));
  for (std::size_t i = nvec * W + threadIdx.x; i < count; i += blockDim.x) v = combine(v, partials[i]);
  v = block_reduce(v);
  if (threadIdx.x == 0) *out = v;
}

struct TwoPass {
  template <class Source>
  static void run(const Source& src, std::size_t n, typename Source::acc_type* out, int block,
                  ExecContext& ctx) {
    using A = typename Source::acc_type;
    const cudaStream_t s = ctx.stream();
    const int grid = device_resident_blocks(grid_stride_partials_kernel<Source>, block);
    A* partials = scratch_as<A>(ctx, static_cast<std::size_t>(grid));
    grid_stride_partials_kernel<<<grid, block, 0, s>>>(src, n, partials);
    CUDA_CHECK_LAUNCH();
    sum_partials_vec16_kernel<A><<<1, 1024, 0, s>>>(partials, static_cast<std::size_t>(grid), out);
    CUDA_CHECK_LAUNCH();
  }
};

}  // namespace

KS_REDUCE_VARIANT({.info = {.name = "two_pass",
                            .summary = "resident grid writes per-block partials; a second kernel sums them with 16-byte loads"},
                   .block_sizes = kPowerOfTwoBlocks,
                   .launch = array_launch<TwoPass>(),
                   .integral = integral_launch<TwoPass>()});

}  // namespace ks::reduce
