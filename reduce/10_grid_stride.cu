// grid_stride: step 10. Launch only as many blocks as the GPU holds at once (the occupancy calculator times the
// SM count) and let each thread loop over the input with a grid-wide stride, so the per-element work is one load
// and one add, and the per-block overhead is paid once per resident block. Then a shuffle-based block reduction
// and one global atomic per block: few atomics, but their order still varies, so float and double results are
// not bitwise reproducible. Any n; block sizes kPowerOfTwoBlocks (two warps to 1024); also computes the
// midpoint integral.
// Run: build/bench/kbench run --suite reduce --variants grid_stride --sizes 2^20,2^24 --types int32,double
#include "common/per_device.hpp"
#include "reduce/kernels.cuh"

namespace ks::reduce {
namespace {

template <class Source>
__global__ void grid_stride_atomic_kernel(Source src, std::size_t n, typename Source::acc_type* out) {
  const auto v = block_reduce(grid_stride_accumulate(src, n));
  if (threadIdx.x == 0) atomic_combine(out, v);
}

struct GridStride {
  template <class Source>
  static void run(const Source& src, std::size_t n, typename Source::acc_type* out, int block,
                  ExecContext& ctx) {
    const cudaStream_t s = ctx.stream();
    const int grid = device_resident_blocks(grid_stride_atomic_kernel<Source>, block);
    CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(*out), s));
    grid_stride_atomic_kernel<<<grid, block, 0, s>>>(src, n, out);
    CUDA_CHECK_LAUNCH();
  }
};

}  // namespace

KS_REDUCE_VARIANT({.info = {.name = "grid_stride",
                            .summary = "resident grid, grid-stride loop, shuffles, one atomic per block",
                            .deterministic = false},
                   .block_sizes = kPowerOfTwoBlocks,
                   .launch = array_launch<GridStride>(),
                   .integral = integral_launch<GridStride>()});

}  // namespace ks::reduce
