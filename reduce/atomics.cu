// Reductions finished with atomics: fewer and fewer atomic operations per element.
//
//   atomic_global  every element is one atomicAdd on the single result in global memory: all of them
//                  serialise on one address in L2. The simplest correct parallel sum, and the slowest.
//   atomic_shared  a block first accumulates into one shared-memory word (shared atomics are resolved in the
//                  SM), then adds its total to the result with a single global atomic.
//   shuffle        each warp sums its 32 values with __shfl_down_sync (registers only, no shared memory, no
//                  barrier) and lane 0 issues one global atomic per warp.
// The order in which atomics land varies from run to run, so float and double results are not bitwise
// reproducible (integer sums are exact either way). The result is zeroed on the stream before the kernel.
// Any n; block sizes 64..1024. atomic_shared computes the midpoint integral in float and double;
// atomic_global and shuffle only in double. In float their atomics add small partials (one term of ~3e-4,
// or one warp's ~1e-2) to a running sum that reaches 3e4, whose half-ulp (1e-3) is comparable to or larger
// than what is added, so much of each addition rounds away: measured on an H200, shuffle's float integral
// was off by 2.2e-3 relative (the check allows 1e-3). A lesson about float accumulation, not a bug.
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

template <class Source>
__global__ void shuffle_kernel(Source src, std::size_t n, typename Source::acc_type* out) {
  using A = typename Source::acc_type;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  // Every lane takes part in the shuffles, also past n (with zero).
  const A v = warp_reduce(i < n ? src(i) : A(0));
  if ((threadIdx.x & 31u) == 0) atomic_combine(out, v);
}

enum class Kind { Global, Shared, Shuffle };

template <Kind kind>
struct Atomic {
  template <class Source>
  static void run(const Source& src, std::size_t n, typename Source::acc_type* out, int block,
                  ExecContext& ctx) {
    const cudaStream_t s = ctx.stream();
    CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(*out), s));
    const unsigned blocks = blocks_for(n, static_cast<std::size_t>(block));
    if constexpr (kind == Kind::Global) atomic_global_kernel<<<blocks, block, 0, s>>>(src, n, out);
    if constexpr (kind == Kind::Shared) atomic_shared_kernel<<<blocks, block, 0, s>>>(src, n, out);
    if constexpr (kind == Kind::Shuffle) shuffle_kernel<<<blocks, block, 0, s>>>(src, n, out);
    CUDA_CHECK_LAUNCH();
  }
};

ReduceVariant atomic_global() {
  ReduceVariant v = device_variant<Atomic<Kind::Global>>(
      nondeterministic("atomic_global", "one global atomicAdd per element", 100), power_of_two_blocks(), true);
  v.integral_types = {DType::F64};
  return v;
}

const auto& kGlobal = registry().add(atomic_global());
const auto& kShared = registry().add(device_variant<Atomic<Kind::Shared>>(
    nondeterministic("atomic_shared", "shared-memory atomics per block, one global atomic per block", 110),
    power_of_two_blocks(), true));
ReduceVariant shuffle() {
  ReduceVariant v = device_variant<Atomic<Kind::Shuffle>>(
      nondeterministic("shuffle", "warp shuffle reduction, one global atomic per warp", 120), power_of_two_blocks(),
      true);
  v.integral_types = {DType::F64};
  return v;
}

const auto& kShuffle = registry().add(shuffle());

}  // namespace
}  // namespace ks::reduce
