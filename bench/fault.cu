// kbench's KS_BENCH_FAULT test hook: a kernel that traps, leaving the sticky error a broken kernel would.
#include "common/cuda_check.hpp"

#include "common/gpu_runtime.hpp"

namespace ks::bench {
namespace {
__global__ void trap_kernel() {
#if defined(KS_HIP)
  __builtin_trap();
#else
  __trap();
#endif
}
}  // namespace

void trap_kernel_launch(cudaStream_t stream) {
  trap_kernel<<<1, 1, 0, stream>>>();
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace ks::bench
