// The reduction ladder's warp-level algorithms, written once for any lane count W (32 on NVIDIA GPUs, 64 on the
// wave64 AMD GPUs of the HIP build) and for any executor of a thread's steps:
//   - on the GPU, kernels.cuh's DeviceThread (threadIdx, __syncthreads, ks::sync_warp, ks::shfl_down);
//   - on the host, the unit tests' model of a block (tests/test_warp_model.cpp): one std::thread a lane,
//     barriers for the synchronisations and an exchange buffer for the shuffles, at 32 and at 64 lanes.
// A Thread provides tid(), block_size(), sync_block(), sync_warp() and shfl_down(v, offset) (the value of lane +
// offset, or the caller's own past the warp's last lane, as on both GPUs).
// Shared memory is any S with s[i]: a pointer on the GPU, a bounds-checked view in the model.
#pragma once

#include "common/host_device.hpp"

#include <array>
#include <cstddef>
#include <type_traits>

namespace ks::reduce {

// a + b; integers are added as unsigned, so overflow wraps (two's complement) with defined behaviour.
template <class A>
KS_HOST_DEVICE A combine(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    using U = std::make_unsigned_t<A>;
    return static_cast<A>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

// A plain running sum as a fold value: what warp_fold and block_fold need of a value is zero(), merge() and
// shfl_down() (the fast reduction's compensated sums provide the same three); add() and value() are for
// accumulating and reading one.
template <class A>
struct PlainFold {
  A v;
  static KS_HOST_DEVICE PlainFold zero() { return {A(0)}; }
  KS_HOST_DEVICE void add(A x) { v = combine(v, x); }
  KS_HOST_DEVICE void merge(const PlainFold& o) { v = combine(v, o.v); }
  KS_HOST_DEVICE A value() const { return v; }
  template <class Thread>
  KS_HOST_DEVICE PlainFold shfl_down(const Thread& t, unsigned offset) const {
    return {t.shfl_down(v, offset)};
  }
};

// Folds the W lanes of a warp with shuffles, halving the distance from W/2: the result is valid in lane 0.
template <int W, class Fold, class Thread>
KS_HOST_DEVICE Fold warp_fold(Fold v, const Thread& t) {
  static_assert(W >= 2 && (W & (W - 1)) == 0, "lanes per warp: a power of two");
KS_UNROLL
  for (unsigned offset = W / 2; offset > 0; offset >>= 1) v.merge(v.shfl_down(t, offset));
  return v;
}

// Warps the largest block (1024 threads) holds: the slots block_fold needs in shared memory.
template <int W>
inline constexpr int kMaxWarps = 1024 / W;

// Folds a block whose size is a multiple of W (at most W * W threads): each warp folds its lanes, lane 0 of
// each warp leaves its value in warp_sums[warp], and warp 0 folds those. The result is valid in thread 0.
template <int W, class Fold, class Thread, class S>
KS_HOST_DEVICE Fold block_fold(Fold v, S warp_sums, const Thread& t) {
  const unsigned lane = t.tid() % W, warp = t.tid() / W;
  v = warp_fold<W>(v, t);
  if (lane == 0) warp_sums[warp] = v;
  t.sync_block();
  if (warp == 0) {
    v = lane < t.block_size() / W ? warp_sums[lane] : Fold::zero();
    v = warp_fold<W>(v, t);
  }
  return v;
}

// The last steps of a shared-memory tree, done by the first warp alone: s[0 .. 2W) hold the values, and each
// step adds s[tid + offset] for offset W, W/2, ..., 1, with the warp synchronised between the read and the
// write and after the write. Needs a block of at least 2W threads. The result is s[0].
template <int W, class Thread, class S>
KS_HOST_DEVICE void warp_tail(S s, unsigned tid, const Thread& t) {
  if (tid < W) {
    auto v = s[tid];
KS_UNROLL
    for (unsigned offset = W; offset >= 1; offset >>= 1) {
      v = combine(v, s[tid + offset]);
      t.sync_warp();
      s[tid] = v;
      t.sync_warp();
    }
  }
}

// The smallest block the trees that end in warp_tail take.
template <int W>
inline constexpr int kMinTreeBlock = 2 * W;

// The block sizes the trees take at W lanes: the powers of two from kMinTreeBlock<W> to 1024.
template <int W>
inline constexpr auto kTreeBlocks = [] {
  constexpr auto count = [] {
    std::size_t n = 0;
    for (int b = kMinTreeBlock<W>; b <= 1024; b *= 2) ++n;
    return n;
  }();
  std::array<int, count> sizes{};
  int b = kMinTreeBlock<W>;
  for (int& s : sizes) {
    s = b;
    b *= 2;
  }
  return sizes;
}();

// One level of the fully unrolled tree of a BS-thread block: threads below Stride add s[tid + Stride]. Levels
// of Stride W and below are warp_tail's.
template <int BS, int W, unsigned Stride, class Thread, class S>
KS_HOST_DEVICE void complete_level(S s, unsigned tid, const Thread& t) {
  if constexpr (BS >= 2 * Stride && Stride > W) {
    if (tid < Stride) s[tid] = combine(s[tid], s[tid + Stride]);
    t.sync_block();
  }
}

// The tree of a BS-thread block, every level unrolled: block levels down to 2W, then the warp's tail.
template <int BS, int W, class Thread, class S>
KS_HOST_DEVICE void tree_complete(S s, unsigned tid, const Thread& t) {
  static_assert(BS >= kMinTreeBlock<W> && BS <= 1024, "complete tree: a block of 2W to 1024 threads");
  complete_level<BS, W, 512>(s, tid, t);
  complete_level<BS, W, 256>(s, tid, t);
  complete_level<BS, W, 128>(s, tid, t);
  complete_level<BS, W, 64>(s, tid, t);
  warp_tail<W>(s, tid, t);
}

// Halves the stride from bd/2 down to (and excluding) `stop`: threads below the stride add s[tid + stride].
template <class Thread, class S>
KS_HOST_DEVICE void tree_interleaved(S s, unsigned tid, unsigned bd, unsigned stop, const Thread& t) {
  for (unsigned stride = bd / 2; stride > stop; stride >>= 1) {
    if (tid < stride) s[tid] = combine(s[tid], s[tid + stride]);
    t.sync_block();
  }
}

}  // namespace ks::reduce
