// copy_reduce and streams: step 12, host-resident input. The data starts in pinned host memory, and the copy to
// the device is part of the work.
//
//   copy_reduce  the plain way: one cudaMemcpyAsync of the whole array, then a grid-stride reduction.
//                Copy and compute are serialised: time = copy + reduce.
//   streams      double buffering: the array is cut into chunks; chunk c is copied and reduced on stream
//                c % 2 into device buffer c % 2, so chunk c+1's copy overlaps chunk c's reduction (the copy
//                engine and the SMs work at once), and buffer reuse is ordered by its own stream. Each chunk
//                leaves per-block partials; one final kernel sums them all in a fixed order
//                (deterministic). Bound by the host-to-device link: time ~ copy + one chunk's reduction.
// Both are timed end to end (the copy included). Any n; block sizes kPowerOfTwoBlocks (two warps to 1024).
// Run: build/bench/kbench run --suite reduce --variants 'copy_reduce|streams' --sizes 2^20,2^24 --types int32,double
#include "common/per_device.hpp"
#include "reduce/kernels.cuh"

#include <algorithm>

namespace ks::reduce {
namespace {

// Chunks of at least 2^20 elements, about 8 of them for large inputs.
std::size_t chunk_elements(std::size_t n) { return std::max<std::size_t>(std::size_t(1) << 20, (n + 7) / 8); }

template <class T, Op op>
void run_from_host(const T* host, std::size_t n, Acc<T>* out, int block, ExecContext& ctx, bool overlap) {
  using A = Acc<T>;
  using Src = ArraySource<T, op>;
  const cudaStream_t main = ctx.stream();
  const std::size_t chunk = overlap ? std::min(n, chunk_elements(n)) : n;
  const std::size_t chunks = (n + chunk - 1) / chunk;
  const int buffers = overlap && chunks > 1 ? 2 : 1;
  const int grid = device_resident_blocks(grid_stride_partials_kernel<Src>, block);
  const std::size_t partial_count = chunks * static_cast<std::size_t>(grid);
  A* partials = scratch_as<A>(ctx, partial_count);
  T* device_buffers = scratch_as<T>(ctx, buffers * chunk);

  const std::vector<Stream>* streams = nullptr;
  const std::vector<Event>* events = nullptr;
  if (buffers == 2) {
    streams = &ctx.extra_streams(2);
    events = &ctx.sync_events(3);
    (*events)[0].record(main);  // fork: the side streams start after what `main` holds
    for (int k = 0; k < 2; ++k) CUDA_CHECK(cudaStreamWaitEvent((*streams)[k].get(), (*events)[0].get(), 0));
  }
  for (std::size_t c = 0; c < chunks; ++c) {
    const cudaStream_t s = buffers == 2 ? (*streams)[c % 2].get() : main;
    T* buf = device_buffers + (c % buffers) * chunk;
    const std::size_t len = std::min(chunk, n - c * chunk);
    CUDA_CHECK(cudaMemcpyAsync(buf, host + c * chunk, len * sizeof(T), cudaMemcpyHostToDevice, s));
    grid_stride_partials_kernel<<<grid, block, 0, s>>>(Src{buf}, len, partials + c * grid);
    CUDA_CHECK_LAUNCH();
  }
  if (buffers == 2) {
    for (int k = 0; k < 2; ++k) {  // join
      (*events)[1 + k].record((*streams)[k].get());
      CUDA_CHECK(cudaStreamWaitEvent(main, (*events)[1 + k].get(), 0));
    }
  }
  finish_partials(partials, partial_count, out, main);
}

ReduceLaunch host_launch(bool overlap) {
  return [overlap](const ReduceCall& c, ExecContext& ctx) {
    dispatch(c.dtype, c.op, [&](auto zero, auto op) {
      using T = decltype(zero);
      run_from_host<T, decltype(op)::value>(static_cast<const T*>(c.in), c.n, static_cast<Acc<T>*>(c.out),
                                             c.block_size, ctx, overlap);
    });
  };
}

}  // namespace

KS_REDUCE_VARIANT({.info = {.name = "copy_reduce",
                            .summary = "host input: one copy of the whole array, then a grid-stride reduction"},
                   .block_sizes = kPowerOfTwoBlocks,
                   .input_on_host = true,
                   .launch = host_launch(false)});
KS_REDUCE_VARIANT({.info = {.name = "streams",
                            .summary = "host input: chunks copied on two streams (double buffering) while the previous "
                                       "one reduces"},
                   .block_sizes = kPowerOfTwoBlocks,
                   .input_on_host = true,
                   .launch = host_launch(true)});

}  // namespace ks::reduce
