// A value read once per CUDA device and kept for the process: what a kernel's rule needs to know about the GPU
// (SM count, resident blocks, whether a kernel's code loads there). get() returns the current device's, reading it
// with `read(device)` the first time, under a lock (launches from several host threads share one reading).
#pragma once

#include "common/cuda_check.hpp"

#include "common/gpu_runtime.hpp"

#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <utility>

namespace ks {

template <class V>
class PerDevice {
 public:
  explicit PerDevice(std::function<V(int device)> read) : read_(std::move(read)) {}
  PerDevice(const PerDevice&) = delete;
  PerDevice& operator=(const PerDevice&) = delete;

  V get() {
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = values_.find(device);
    if (it == values_.end()) it = values_.emplace(device, read_(device)).first;
    return it->second;
  }

 private:
  std::function<V(int)> read_;
  std::mutex mutex_;
  std::map<int, V> values_;
};

// Blocks of `block` threads that fit on the current device at once for kernel k (resident blocks per SM times the
// SM count; at least one a SM): the grid of a grid-stride kernel, read once per device through a PerDevice.
template <class Kernel>
int device_resident_blocks(Kernel k, int block, std::size_t dynamic_smem = 0) {
  int dev = 0, sms = 0, per_sm = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, block, dynamic_smem));
  return sms * (per_sm > 0 ? per_sm : 1);
}

// Whether `device` runs kernel k's code for compute capability 9.0 or later: the device is 9.0 or later and the code
// that runs there was compiled from 9.0 or later (JIT from an older virtual architecture keeps that one, where the
// kernel's sm_90 body is compiled out).
template <class Kernel>
bool runs_sm90_code(int device, Kernel k) {
  int major = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  cudaFuncAttributes fa{};
  CUDA_CHECK(cudaFuncGetAttributes(&fa, k));
  return major >= 9 && fa.ptxVersion >= 90;
}

}  // namespace ks
