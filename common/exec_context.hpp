// What a variant's launch function gets besides its arguments: the stream to enqueue on, and lazily created
// shared resources (a cuBLAS handle bound to the stream, scratch memory, extra streams) so that variants
// never allocate or create handles on their own inside a timed region after the warm-up.
#pragma once

#include "common/resources.hpp"

#include <cstddef>
#include <memory>
#include <vector>

namespace ks {

class ExecContext {
 public:
  explicit ExecContext(cudaStream_t stream) : stream_(stream) {}
  ExecContext(const ExecContext&) = delete;
  ExecContext& operator=(const ExecContext&) = delete;

  cudaStream_t stream() const noexcept { return stream_; }

  // A cuBLAS handle bound to stream(), created on first use.
  cublasHandle_t cublas();

  // Device scratch of at least `bytes`, 256-byte aligned; grows (and so may move) on a larger request.
  void* device_scratch(std::size_t bytes);
  // Pinned host scratch of at least `bytes`; grows likewise.
  void* pinned_scratch(std::size_t bytes);
  // `count` 32-bit device counters, zeroed once when first allocated. Kernels that use them must leave them
  // zero when they finish (self-resetting), so no memset is needed per launch.
  unsigned* zeroed_counters(std::size_t count);
  // `count` non-blocking streams besides stream(), created on first use.
  const std::vector<Stream>& extra_streams(std::size_t count);
  // Events for ordering extra streams against stream(), created on first use.
  const std::vector<Event>& sync_events(std::size_t count);

 private:
  cudaStream_t stream_;
  std::unique_ptr<CublasHandle> cublas_;
  DeviceBuffer<unsigned char> cublas_workspace_;
  DeviceBuffer<std::max_align_t> device_scratch_;
  PinnedBuffer<std::max_align_t> pinned_scratch_;
  DeviceBuffer<unsigned> counters_;
  std::vector<Stream> streams_;
  std::vector<Event> events_;
};

}  // namespace ks
