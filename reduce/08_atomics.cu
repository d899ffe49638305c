// atomic_global and atomic_shared: step 8, reductions finished with atomics, fewer and fewer per element.
//   atomic_global  every element is one atomicAdd on the single result in global memory: all of them
//                  serialise on one address in L2. The simplest correct parallel sum, and the slowest.
//   atomic_shared  a block first accumulates into one shared-memory word (shared atomics are resolved in the
//                  SM), then adds its total to the result with a single global atomic.
// The order in which atomics land varies from run to run, so float and double results are not bitwise
// reproducible (integer sums are exact either way). The result is zeroed on the stream before the kernel.
// Any n; block sizes kPowerOfTwoBlocks (two warps to 1024). atomic_shared computes the midpoint integral in
// float and double, atomic_global only in double: in float its atomics add terms of ~3e-4 to a running sum that
// reaches 3e4, whose half-ulp (1e-3) is larger than what is added, so much of each addition rounds away
// (docs/reduce-notes.md measures it).
// Run: build/bench/kbench run --suite reduce --variants 'atomic_.*' --sizes 2^20,2^24 --types int32,double
#include "reduce/kernels.cuh"

namespace ks::reduce {
namespace {

template <class Source>
__global__ void atomic_global_kernel(Source src, std::size_t n, typename Source::acc_type* out) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) atomic_combine(out, src(i));
}

template <class Source>
__global__ void atomic_shared_kernel(Source src, std::size_t n, typename Source::acc_type* out) {
  using A = typename Source::acc_type;
  __shared__ A block_sum;
  if (threadIdx.x == 0) block_sum = 0;
  __syncthreads();
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) atomic_combine(&block_sum, src(i));
  __syncthreads();
  if (threadIdx.x == 0) atomic_combine(out, block_sum);
}

template <bool kShared>
struct Atomic {
  template <class Source>
  static void run(const Source& src, std::size_t n, typename Source::acc_type* out, int block,
                  ExecContext& ctx) {
    const cudaStream_t s = ctx.stream();
    CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(*out), s));
    const unsigned blocks = blocks_for(n, static_cast<std::size_t>(block));
    if constexpr (kShared) atomic_shared_kernel<<<blocks, block, 0, s>>>(src, n, out);
    else atomic_global_kernel<<<blocks, block, 0, s>>>(src, n, out);
    CUDA_CHECK_LAUNCH();
  }
};

}  // namespace

KS_REDUCE_VARIANT({.info = {.name = "atomic_global", .summary = "one global atomicAdd per element", .deterministic = false},
                   .block_sizes = kPowerOfTwoBlocks,
                   .launch = array_launch<Atomic<false>>(),
                   .integral = integral_launch<Atomic<false>>(),
                   .integral_types = {DType::F64}});
KS_REDUCE_VARIANT({.info = {.name = "atomic_shared",
                            .summary = "shared-memory atomics per block, one global atomic per block",
                            .deterministic = false},
                   .block_sizes = kPowerOfTwoBlocks,
                   .launch = array_launch<Atomic<true>>(),
                   .integral = integral_launch<Atomic<true>>()});

}  // namespace ks::reduce
