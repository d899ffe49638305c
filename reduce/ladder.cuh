// The classic reduction ladder's kernels, side by side: steps 01-06 of reduce/ (each numbered file declares
// its variant and says what its step adds). Every step: each block loads (and, from unroll2 on, first folds U
// blocks' worth of) elements into a shared-memory array of accumulators, reduces it with a tree, and writes
// one partial per block; a second, one-block kernel sums the partials in a fixed order (so every step is
// deterministic). The trees:
//   Neighbored       stride 1, 2, 4, ...; thread tid works when tid % (2*stride) == 0.
//   NeighboredLess   the same pairs, thread tid working on index 2*stride*tid.
//   Interleaved      stride halves from blockDim/2: thread tid adds tid + stride.
//   InterleavedWarp  Interleaved down to two warps' worth, then the first warp's steps with a warp
//                    synchronisation between them (warp_tail).
//   Complete         InterleavedWarp with the block size a template parameter: every level unrolled.
// The tutorial's kernels reduced in place in the input array; here the tree lives in shared memory so the input
// stays const and int32 can sum into int64. Any n: loads beyond n contribute zero. Block sizes: the powers of
// two in kPowerOfTwoBlockSizes. The trees that end in a warp's steps (reduce/warp.hpp) take the lane count of
// the target's warp, 32 or 64.
#pragma once

#include "reduce/kernels.cuh"

#include <iterator>
#include <string>
#include <utility>

namespace ks::reduce::ladder {

enum class Tree { Neighbored, NeighboredLess, Interleaved, InterleavedWarp, Complete };

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
    tree_interleaved(s, tid, bd, 0, DeviceThread<>{});
  } else if constexpr (tree == Tree::InterleavedWarp) {
    tree_interleaved(s, tid, bd, kWarpSize, DeviceThread<>{});
    warp_tail<kWarpSize>(s, tid, DeviceThread<>{});
  } else {
    tree_complete<BS, kWarpSize>(s, tid, DeviceThread<>{});
  }
  if (tid == 0) partials[blockIdx.x] = s[0];
}

// The complete_unroll kernel is one instantiation per block size: the one for `block`.
template <int U, class Source, std::size_t... I>
void launch_unrolled(const Source& src, std::size_t n, typename Source::acc_type* partials, int block,
                     std::size_t smem, cudaStream_t s, std::index_sequence<I...>) {
  const unsigned blocks = blocks_for(n, static_cast<std::size_t>(block) * U);
  bool launched = false;
  ((block == kPowerOfTwoBlockSizes[I]
        ? (ladder_kernel<Tree::Complete, U, kPowerOfTwoBlockSizes[I]><<<blocks, kPowerOfTwoBlockSizes[I], smem, s>>>(
               src, n, partials),
           launched = true)
        : false),
   ...);
  if (!launched) throw std::invalid_argument("complete_unroll: unsupported block size " + std::to_string(block));
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
      launch_unrolled<U>(src, n, partials, block, smem, s,
                         std::make_index_sequence<std::size(kPowerOfTwoBlockSizes)>{});
    } else {
      ladder_kernel<tree, U, 0><<<blocks, block, smem, s>>>(src, n, partials);
    }
    CUDA_CHECK_LAUNCH();
    finish_partials(partials, blocks, out, s);
  }
};

}  // namespace ks::reduce::ladder
