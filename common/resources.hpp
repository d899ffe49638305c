// RAII owners for every CUDA resource the suite touches: device, pinned and mapped host buffers; streams,
// events, graphs and graph executables; cuBLAS handles. Move-only; destructors never throw.
#pragma once

#include "common/cuda_check.hpp"

#include "common/gpu_runtime.hpp"

#if !defined(KS_HIP)  // cuBLAS: the CUDA build only
#include <cublasLt.h>
#include <cublas_v2.h>
#endif

#include <cstddef>
#include <utility>

namespace ks {

namespace detail {

// Owns one handle of an opaque CUDA type and releases it with Deleter.
template <class Handle, class Deleter>
class UniqueHandle {
 public:
  UniqueHandle() = default;
  explicit UniqueHandle(Handle h) : h_(h) {}
  UniqueHandle(const UniqueHandle&) = delete;
  UniqueHandle& operator=(const UniqueHandle&) = delete;
  UniqueHandle(UniqueHandle&& o) noexcept : h_(std::exchange(o.h_, Handle{})) {}
  UniqueHandle& operator=(UniqueHandle&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, Handle{});
    }
    return *this;
  }
  ~UniqueHandle() { reset(); }

  Handle get() const noexcept { return h_; }
  explicit operator bool() const noexcept { return h_ != Handle{}; }
  void reset() noexcept {
    if (h_ != Handle{}) Deleter{}(h_);
    h_ = Handle{};
  }

 private:
  Handle h_{};
};

struct DeviceFree { void operator()(void* p) const noexcept { CUDA_CHECK_NOEXCEPT(cudaFree(p)); } };
struct HostFree { void operator()(void* p) const noexcept { CUDA_CHECK_NOEXCEPT(cudaFreeHost(p)); } };
struct StreamDestroy {
  void operator()(cudaStream_t s) const noexcept { CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(s)); }
};
struct EventDestroy {
  void operator()(cudaEvent_t e) const noexcept { CUDA_CHECK_NOEXCEPT(cudaEventDestroy(e)); }
};
struct GraphDestroy {
  void operator()(cudaGraph_t g) const noexcept { CUDA_CHECK_NOEXCEPT(cudaGraphDestroy(g)); }
};
struct GraphExecDestroy {
  void operator()(cudaGraphExec_t g) const noexcept { CUDA_CHECK_NOEXCEPT(cudaGraphExecDestroy(g)); }
};
#if !defined(KS_HIP)
struct CublasDestroy {
  void operator()(cublasHandle_t h) const noexcept { cublasDestroy(h); }
};
struct CublasLtDestroy {
  void operator()(cublasLtHandle_t h) const noexcept { cublasLtDestroy(h); }
};
#endif

}  // namespace detail

// A typed array of `count` elements whose storage comes from one CUDA allocator.
template <class T, class Free>
class Buffer {
 public:
  Buffer() = default;
  std::size_t size() const noexcept { return count_; }
  std::size_t bytes() const noexcept { return count_ * sizeof(T); }
  T* data() const noexcept { return static_cast<T*>(mem_.get()); }
  bool empty() const noexcept { return count_ == 0; }

 protected:
  Buffer(void* p, std::size_t count) : mem_(p), count_(count) {}

 private:
  detail::UniqueHandle<void*, Free> mem_;
  std::size_t count_ = 0;
};

// Device global memory (cudaMalloc).
template <class T>
class DeviceBuffer : public Buffer<T, detail::DeviceFree> {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : Buffer<T, detail::DeviceFree>(alloc(count), count) {}

 private:
  static void* alloc(std::size_t count) {
    void* p = nullptr;
    if (count) CUDA_CHECK(cudaMalloc(&p, count * sizeof(T)));
    return p;
  }
};

// Page-locked host memory from cudaHostAlloc with the given flags.
template <class T, unsigned Flags>
class HostBuffer : public Buffer<T, detail::HostFree> {
 public:
  HostBuffer() = default;
  explicit HostBuffer(std::size_t count) : Buffer<T, detail::HostFree>(alloc(count), count) {}

 private:
  static void* alloc(std::size_t count) {
    void* p = nullptr;
    if (count) CUDA_CHECK(cudaHostAlloc(&p, count * sizeof(T), Flags));
    return p;
  }
};

// Pinned host memory: asynchronous copies, graph capture.
template <class T>
using PinnedBuffer = HostBuffer<T, cudaHostAllocDefault>;

// Mapped (zero-copy) host memory: kernels read and write it through device_data() over the bus.
template <class T>
class MappedBuffer : public HostBuffer<T, cudaHostAllocMapped> {
 public:
  MappedBuffer() = default;
  explicit MappedBuffer(std::size_t count) : HostBuffer<T, cudaHostAllocMapped>(count) {
    if (count) {
      void* d = nullptr;
      CUDA_CHECK(cudaHostGetDevicePointer(&d, this->data(), 0));
      device_ = static_cast<T*>(d);
    }
  }
  T* device_data() const noexcept { return device_; }

 private:
  T* device_ = nullptr;
};

// A host-to-device copy that has landed when this returns. cudaMemcpy from pageable memory may return once
// the data is staged, before its DMA completes, and the suite's streams are non-blocking, so they do not wait
// for it: work enqueued next on them could run first. Setup code (untimed) uploads through this.
inline void upload_now(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaDeviceSynchronize());
}

// Restores the calling thread's current device when the scope ends: for work that visits several devices
// (the pipelined modes, cuBLASXt) and must leave the caller's later streams and events on its own device.
class CurrentDevice {
 public:
  CurrentDevice() noexcept {
    if (cudaGetDevice(&device_) != cudaSuccess) {  // no device: nothing to restore, the next call reports it
      (void)cudaGetLastError();
      device_ = -1;
    }
  }
  ~CurrentDevice() {
    if (device_ >= 0) CUDA_CHECK_NOEXCEPT(cudaSetDevice(device_));
  }
  CurrentDevice(const CurrentDevice&) = delete;
  CurrentDevice& operator=(const CurrentDevice&) = delete;

 private:
  int device_ = 0;
};

class Stream : public detail::UniqueHandle<cudaStream_t, detail::StreamDestroy> {
 public:
  Stream() : UniqueHandle(create()) {}
  // The device's greatest priority: its blocks are scheduled first wherever an SM frees up.
  struct Greatest {};
  explicit Stream(Greatest) : UniqueHandle(create_greatest()) {}
  void synchronize() const { CUDA_CHECK(cudaStreamSynchronize(get())); }

 private:
  static cudaStream_t create() {
    cudaStream_t s = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return s;
  }
  static cudaStream_t create_greatest() {
    int least = 0, greatest = 0;
    CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    cudaStream_t s = nullptr;
    CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, greatest));
    return s;
  }
};

class Event : public detail::UniqueHandle<cudaEvent_t, detail::EventDestroy> {
 public:
  explicit Event(unsigned flags = cudaEventDefault) : UniqueHandle(create(flags)) {}
  void record(cudaStream_t s) const { CUDA_CHECK(cudaEventRecord(get(), s)); }

 private:
  static cudaEvent_t create(unsigned flags) {
    cudaEvent_t e = nullptr;
    CUDA_CHECK(cudaEventCreateWithFlags(&e, flags));
    return e;
  }
};

using Graph = detail::UniqueHandle<cudaGraph_t, detail::GraphDestroy>;

class GraphExec : public detail::UniqueHandle<cudaGraphExec_t, detail::GraphExecDestroy> {
 public:
  GraphExec() = default;
  explicit GraphExec(const Graph& g) : UniqueHandle(instantiate(g)) {}
  void launch(cudaStream_t s) const { CUDA_CHECK(cudaGraphLaunch(get(), s)); }

 private:
  static cudaGraphExec_t instantiate(const Graph& g) {
    cudaGraphExec_t e = nullptr;
    CUDA_CHECK(cudaGraphInstantiate(&e, g.get(), 0));
    return e;
  }
};

#if !defined(KS_HIP)
class CublasHandle : public detail::UniqueHandle<cublasHandle_t, detail::CublasDestroy> {
 public:
  CublasHandle() : UniqueHandle(create()) {}

 private:
  static cublasHandle_t create() {
    cublasHandle_t h = nullptr;
    CUBLAS_CHECK(cublasCreate(&h));
    return h;
  }
};

class CublasLtHandle : public detail::UniqueHandle<cublasLtHandle_t, detail::CublasLtDestroy> {
 public:
  CublasLtHandle() : UniqueHandle(create()) {}

 private:
  static cublasLtHandle_t create() {
    cublasLtHandle_t h = nullptr;
    CUBLAS_CHECK(cublasLtCreate(&h));
    return h;
  }
};
#endif

}  // namespace ks
