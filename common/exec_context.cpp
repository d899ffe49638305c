#include "common/exec_context.hpp"

namespace ks {
namespace {
std::size_t elements_for(std::size_t bytes) {
  return (bytes + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t);
}
}  // namespace

cublasHandle_t ExecContext::cublas() {
  if (!cublas_) {
    cublas_ = std::make_unique<CublasHandle>();
    CUBLAS_CHECK(cublasSetStream(cublas_->get(), stream_));
    // An explicit workspace keeps cuBLAS from allocating during stream capture (CUDA graphs); 32 MiB is
    // what cuBLAS documents for Hopper.
    cublas_workspace_ = DeviceBuffer<unsigned char>(32u << 20);
    // Zeroed once, so that the workspace's contents are defined whatever cuBLAS reads of it. (The
    // uninitialized reads initcheck once reported inside cuBLAS kernels came from graph mode's warm-up launch on
    // unwritten operands, fixed in gemm/modes.cpp, not from this workspace.)
    CUDA_CHECK(cudaMemsetAsync(cublas_workspace_.data(), 0, cublas_workspace_.bytes(), stream_));
    CUBLAS_CHECK(cublasSetWorkspace(cublas_->get(), cublas_workspace_.data(), cublas_workspace_.bytes()));
  }
  return cublas_->get();
}

void* ExecContext::device_scratch(std::size_t bytes) {
  if (device_scratch_.bytes() < bytes) {
    CUDA_CHECK(cudaStreamSynchronize(stream_));  // the old buffer may still be in use
    device_scratch_ = DeviceBuffer<std::max_align_t>(elements_for(bytes));
  }
  return device_scratch_.data();
}

void* ExecContext::pinned_scratch(std::size_t bytes) {
  if (pinned_scratch_.bytes() < bytes) {
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    pinned_scratch_ = PinnedBuffer<std::max_align_t>(elements_for(bytes));
  }
  return pinned_scratch_.data();
}

unsigned* ExecContext::zeroed_counters(std::size_t count) {
  if (counters_.size() < count) {
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    counters_ = DeviceBuffer<unsigned>(count);
    CUDA_CHECK(cudaMemsetAsync(counters_.data(), 0, counters_.bytes(), stream_));
  }
  return counters_.data();
}

const std::vector<Stream>& ExecContext::extra_streams(std::size_t count) {
  while (streams_.size() < count) streams_.emplace_back();
  return streams_;
}

const std::vector<Event>& ExecContext::sync_events(std::size_t count) {
  while (events_.size() < count) events_.emplace_back(cudaEventDisableTiming);
  return events_;
}

}  // namespace ks
