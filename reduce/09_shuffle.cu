// shuffle: step 9. Each warp sums its values (32 lanes; 64 on wave64 AMD GPUs) with shuffles (registers only, no
// shared memory, no barrier) and lane 0 issues one global atomic per warp. As with step 8 the atomics land in
// varying order, so float and double results are not bitwise reproducible. Any n; block sizes kPowerOfTwoBlocks
// (two warps to 1024). The midpoint integral in double only: in float, adding one warp's ~1e-2 to a running sum
// of 3e4 loses most of it (step 8 says why).
// Run: build/bench/kbench run --suite reduce --variants shuffle --sizes 2^20,2^24 --types int32,double
#include "reduce/kernels.cuh"

namespace ks::reduce {
namespace {

template <class Source>
__global__ void shuffle_kernel(Source src, std::size_t n, typename Source::acc_type* out) {
  using A = typename Source::acc_type;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  // Every lane takes part in the shuffles, also past n (with zero).
  const A v = warp_reduce(i < n ? src(i) : A(0));
  if (threadIdx.x % kWarpSize == 0) atomic_combine(out, v);
}

struct Shuffle {
  template <class Source>
  static void run(const Source& src, std::size_t n, typename Source::acc_type* out, int block,
                  ExecContext& ctx) {
    const cudaStream_t s = ctx.stream();
    CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(*out), s));
    shuffle_kernel<<<blocks_for(n, static_cast<std::size_t>(block)), block, 0, s>>>(src, n, out);
    CUDA_CHECK_LAUNCH();
  }
};

}  // namespace

KS_REDUCE_VARIANT({.info = {.name = "shuffle",
                            .summary = "warp shuffle reduction, one global atomic per warp",
                            .deterministic = false},
                   .block_sizes = kPowerOfTwoBlocks,
                   .launch = array_launch<Shuffle>(),
                   .integral = integral_launch<Shuffle>(),
                   .integral_types = {DType::F64}});

}  // namespace ks::reduce
