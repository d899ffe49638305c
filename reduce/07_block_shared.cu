// block_shared: step 7, the tutorial's sum-of-squares layout: a small fixed grid (32 blocks of blockDim
// threads, 256 in the tutorial), each thread accumulating a strided slice of the input, a shared-memory tree per
// block, and the 32 partials finished on the host. The tutorial timed its blocks with clock() inside the kernel;
// here the whole operation, the partials' copy to the host and the host sum included, is timed with events
// like every other variant, which shows what finishing on the host costs. The host sum has a fixed order, so
// the result is deterministic. Any n; block sizes kPowerOfTwoBlocks (two warps to 1024). The launch waits for
// the device (blocks_host).
// Run: build/bench/kbench run --suite reduce --variants block_shared --sizes 2^20,2^24 --types int32,double
#include "reduce/kernels.cuh"

namespace ks::reduce {
namespace {

constexpr int kBlocks = 32;

template <class Source>
__global__ void block_shared_kernel(Source src, std::size_t n, typename Source::acc_type* partials) {
  using A = typename Source::acc_type;
  extern __shared__ __align__(16) unsigned char smem[];
  A* s = reinterpret_cast<A*>(smem);
  const unsigned tid = threadIdx.x;
  s[tid] = grid_stride_accumulate(src, n);
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (tid < stride) s[tid] = combine(s[tid], s[tid + stride]);
    __syncthreads();
  }
  if (tid == 0) partials[blockIdx.x] = s[0];
}

struct BlockShared {
  template <class Source>
  static void run(const Source& src, std::size_t n, typename Source::acc_type* out, int block,
                  ExecContext& ctx) {
    using A = typename Source::acc_type;
    const cudaStream_t s = ctx.stream();
    A* partials = scratch_as<A>(ctx, kBlocks);
    A* host = static_cast<A*>(ctx.pinned_scratch((kBlocks + 1) * sizeof(A)));
    block_shared_kernel<<<kBlocks, block, block * sizeof(A), s>>>(src, n, partials);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpyAsync(host, partials, kBlocks * sizeof(A), cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    A total = 0;
    for (int b = 0; b < kBlocks; ++b) total = combine(total, host[b]);
    host[kBlocks] = total;
    CUDA_CHECK(cudaMemcpyAsync(out, host + kBlocks, sizeof(A), cudaMemcpyHostToDevice, s));
  }
};

}  // namespace

KS_REDUCE_VARIANT({.info = {.name = "block_shared",
                            .summary = "32 blocks of strided per-thread sums, shared tree, partials finished on the host"},
                   .block_sizes = kPowerOfTwoBlocks,
                   .blocks_host = true,
                   .launch = array_launch<BlockShared>()});

}  // namespace ks::reduce
