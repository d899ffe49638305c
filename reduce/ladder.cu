// The classic reduction ladder, one step per registered variant, all in one family so the steps read side
// by side. Every step: each block loads (and, from unroll2 on, first folds U blocks' worth of) elements into
// a shared-memory array of accumulators, reduces it with a tree, and writes one partial per block; a second,
// one-block kernel sums the partials in a fixed order (so every step is deterministic).
//
//   neighbored       stride 1, 2, 4, ...; thread tid works when tid % (2*stride) == 0. Active threads are
//                    scattered over every warp, so each warp diverges at every level, and % is slow.
//   neighbored_less  same pairs, but thread tid works on index 2*stride*tid: the active threads are packed
//                    into the first warps, which stay converged while the others idle (less divergence).
//                    The cost moves to shared memory: the strided indices cause bank conflicts.
//   interleaved      stride halves from blockDim/2: thread tid adds tid + stride. Active threads are
//                    contiguous and accesses are unit-stride: no divergence, no bank conflicts.
//   unroll2/4/8      interleaved, but each block first folds 2, 4 or 8 blocks' worth of data while loading,
//                    so there are 2-8x fewer blocks and more independent loads in flight per thread.
//   unroll8_warp     unroll8 with the last 32 elements reduced by one warp without __syncthreads.
//                    The seeds did this through a `volatile` pointer with no synchronisation, relying on the
//                    warp running in lockstep. Since Volta, threads of a warp are scheduled independently, so
//                    that form is a data race: a lane may read s[tid + 16] before the lane that owns it has
//                    written its previous step. Here each step reads, __syncwarp()s, writes, __syncwarp()s.
//   complete_unroll  unroll8_warp with the block size a template parameter: every level is unrolled at
//                    compile time and the dead ones vanish (the seeds' UnrollAllReduce).
//
// The seeds reduced in place in the input array; here the tree lives in shared memory so the input stays
// const and int32 can sum into int64. Any n: loads beyond n contribute zero. Block sizes 64..1024 (powers
// of two). Measured figures: docs/reduce-results.md.
#include "reduce/kernels.cuh"

namespace ks::reduce {
namespace {

enum class Tree { Neighbored, NeighboredLess, Interleaved, InterleavedWarp, Complete };

// The last warp's steps, 32 down to 1, correctly synchronised (see the header).
template <class A>
__device__ __forceinline__ void warp_tail(A* s, unsigned tid) {
  if (tid < 32) {
    A v = s[tid];
#pragma unroll
    for (unsigned offset = 32; offset >= 1; offset >>= 1) {
      v = combine(v, s[tid + offset]);
      __syncwarp();
      s[tid] = v;
      __syncwarp();
    }
  }
}

template <class A>
__device__ void tree_neighbored(A* s, unsigned tid, unsigned bd) {
  for (unsigned stride = 1; stride < bd; stride *= 2) {
    if (tid % (2 * stride) == 0) s[tid] = combine(s[tid], s[tid + stride]);
    __syncthreads();
  }
}

template <class A>
__device__ void tree_neighbored_less(A* s, unsigned tid, unsigned bd) {
  for (unsigned stride = 1; stride < bd; stride *= 2) {
    const unsigned index = 2 * stride * tid;
    if (index < bd) s[index] = combine(s[index], s[index + stride]);
    __syncthreads();
  }
}

// Halves the stride from bd/2 down to (and excluding) `stop`.
template <class A>
__device__ void tree_interleaved(A* s, unsigned tid, unsigned bd, unsigned stop) {
  for (unsigned stride = bd / 2; stride > stop; stride >>= 1) {
    if (tid < stride) s[tid] = combine(s[tid], s[tid + stride]);
    __syncthreads();
  }
}

template <int BS, class A>
__device__ void tree_complete(A* s, unsigned tid) {
  if (BS >= 1024 && tid < 512) s[tid] = combine(s[tid], s[tid + 512]);
  if (BS >= 1024) __syncthreads();
  if (BS >= 512 && tid < 256) s[tid] = combine(s[tid], s[tid + 256]);
  if (BS >= 512) __syncthreads();
  if (BS >= 256 && tid < 128) s[tid] = combine(s[tid], s[tid + 128]);
  if (BS >= 256) __syncthreads();
  if (BS >= 128 && tid < 64) s[tid] = combine(s[tid], s[tid + 64]);
  if (BS >= 128) __syncthreads();
  warp_tail(s, tid);
}

// BS = 0: block size from blockDim (every tree but Complete).
template <Tree tree, int U, int BS, class Source>
__global__ void ladder_kernel(Source src, std::size_t n, typename Source::acc_type* partials) {
  using A = typename Source::acc_type;
  extern __shared__ __align__(16) unsigned char smem[];
  A* s = reinterpret_cast<A*>(smem);
  const unsigned tid = threadIdx.x;
  const unsigned bd = BS ? BS : blockDim.x;
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * bd * U + tid;
  A v = 0;
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const std::size_t i = first + static_cast<std::size_t>(u) * bd;
    if (i < n) v = combine(v, src(i));
  }
  s[tid] = v;
  __syncthreads();
  if constexpr (tree == Tree::Neighbored) {
    tree_neighbored(s, tid, bd);
  } else if constexpr (tree == Tree::NeighboredLess) {
    tree_neighbored_less(s, tid, bd);
  } else if constexpr (tree == Tree::Interleaved) {
    tree_interleaved(s, tid, bd, 0);
  } else if constexpr (tree == Tree::InterleavedWarp) {
    tree_interleaved(s, tid, bd, 32);
    warp_tail(s, tid);
  } else {
    tree_complete<BS>(s, tid);
  }
  if (tid == 0) partials[blockIdx.x] = s[0];
}

template <Tree tree, int U>
struct Ladder {
  template <class Source>
  static void run(const Source& src, std::size_t n, typename Source::acc_type* out, int block,
                  ExecContext& ctx) {
    using A = typename Source::acc_type;
    const unsigned blocks = blocks_for(n, static_cast<std::size_t>(block) * U);
    A* partials = scratch_as<A>(ctx, blocks);
    const std::size_t smem = static_cast<std::size_t>(block) * sizeof(A);
    const cudaStream_t s = ctx.stream();
    if constexpr (tree == Tree::Complete) {
      switch (block) {
        case 64: ladder_kernel<tree, U, 64><<<blocks, 64, smem, s>>>(src, n, partials); break;
        case 128: ladder_kernel<tree, U, 128><<<blocks, 128, smem, s>>>(src, n, partials); break;
        case 256: ladder_kernel<tree, U, 256><<<blocks, 256, smem, s>>>(src, n, partials); break;
        case 512: ladder_kernel<tree, U, 512><<<blocks, 512, smem, s>>>(src, n, partials); break;
        case 1024: ladder_kernel<tree, U, 1024><<<blocks, 1024, smem, s>>>(src, n, partials); break;
        default: throw std::invalid_argument("complete_unroll: unsupported block size");
      }
    } else {
      ladder_kernel<tree, U, 0><<<blocks, block, smem, s>>>(src, n, partials);
    }
    CUDA_CHECK_LAUNCH();
    finish_partials(partials, blocks, out, s);
  }
};

template <Tree tree, int U>
const ReduceVariant& add(const char* name, const char* summary, int rank) {
  return registry().add(device_variant<Ladder<tree, U>>({name, summary, 0, rank}, power_of_two_blocks(), false));
}

const auto& kNeighbored = add<Tree::Neighbored, 1>(
    "neighbored", "adjacent pairs, tid % (2*stride) == 0: divergent warps at every level", 10);
const auto& kNeighboredLess = add<Tree::NeighboredLess, 1>(
    "neighbored_less", "adjacent pairs at index 2*stride*tid: active threads packed, less divergence", 20);
const auto& kInterleaved = add<Tree::Interleaved, 1>(
    "interleaved", "stride halves from blockDim/2: contiguous active threads, unit-stride access", 30);
const auto& kUnroll2 = add<Tree::Interleaved, 2>("unroll2", "interleaved, each block first folds 2 blocks' data", 40);
const auto& kUnroll4 = add<Tree::Interleaved, 4>("unroll4", "interleaved, each block first folds 4 blocks' data", 50);
const auto& kUnroll8 = add<Tree::Interleaved, 8>("unroll8", "interleaved, each block first folds 8 blocks' data", 60);
const auto& kUnroll8Warp = add<Tree::InterleavedWarp, 8>(
    "unroll8_warp", "unroll8 with the last warp unrolled (__syncwarp between steps, race-free)", 70);
const auto& kComplete = add<Tree::Complete, 8>(
    "complete_unroll", "unroll8_warp with the block size a template: every level unrolled", 80);

}  // namespace
}  // namespace ks::reduce
