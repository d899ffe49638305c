// One source for two GPU runtimes. The suite is written against the CUDA runtime; where a HIP compiler builds
// it (the `hip` preset: KS_HIP defined, AMD gfx9 targets), this header maps the CUDA runtime names and the
// warp intrinsics the suite uses onto HIP's, the way large CUDA codebases keep one source instead of a
// converted copy. Every file that talks to the GPU runtime includes this instead of <cuda_runtime.h>.
//
// It also gives the lane count of the target's warp (wavefront) as a compile-time constant, ks::kWarpSize: 32
// on NVIDIA GPUs, 64 on the gfx9 AMD GPUs the HIP build targets (gfx906, gfx90a; Hygon's DCUs are of this
// class). Warp-level code takes its lane count from here, never from a literal 32.
#pragma once

#if defined(KS_HIP)

#include <hip/hip_runtime.h>

// Types and constants.
#define cudaDeviceAttr hipDeviceAttribute_t
#define cudaDeviceProp hipDeviceProp_t
#define cudaError_t hipError_t
#define cudaEvent_t hipEvent_t
#define cudaFuncAttributes hipFuncAttributes
#define cudaGraphExec_t hipGraphExec_t
#define cudaGraph_t hipGraph_t
#define cudaMemcpyKind hipMemcpyKind
#define cudaStream_t hipStream_t
#define cudaDevAttrClockRate hipDeviceAttributeClockRate
#define cudaDevAttrComputeCapabilityMajor hipDeviceAttributeComputeCapabilityMajor
#define cudaDevAttrComputeCapabilityMinor hipDeviceAttributeComputeCapabilityMinor
#define cudaDevAttrL2CacheSize hipDeviceAttributeL2CacheSize
#define cudaDevAttrMaxSharedMemoryPerMultiprocessor hipDeviceAttributeMaxSharedMemoryPerMultiprocessor
#define cudaDevAttrMaxThreadsPerMultiProcessor hipDeviceAttributeMaxThreadsPerMultiProcessor
#define cudaDevAttrMemoryClockRate hipDeviceAttributeMemoryClockRate
#define cudaDevAttrMultiProcessorCount hipDeviceAttributeMultiprocessorCount
#define cudaDevAttrSingleToDoublePrecisionPerfRatio hipDeviceAttributeSingleToDoublePrecisionPerfRatio
#define cudaErrorNotReady hipErrorNotReady
#define cudaEventDefault hipEventDefault
#define cudaEventDisableTiming hipEventDisableTiming
#define cudaHostAllocDefault hipHostMallocDefault
#define cudaHostAllocMapped hipHostMallocMapped
#define cudaHostRegisterPortable hipHostRegisterPortable
#define cudaMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define cudaMemcpyDeviceToHost hipMemcpyDeviceToHost
#define cudaMemcpyHostToDevice hipMemcpyHostToDevice
#define cudaStreamCaptureModeThreadLocal hipStreamCaptureModeThreadLocal
#define cudaStreamNonBlocking hipStreamNonBlocking
#define cudaSuccess hipSuccess

// Functions.
#define cudaDeviceGetAttribute hipDeviceGetAttribute
#define cudaDeviceGetPCIBusId hipDeviceGetPCIBusId
#define cudaDeviceSynchronize hipDeviceSynchronize
#define cudaDriverGetVersion hipDriverGetVersion
#define cudaEventCreateWithFlags hipEventCreateWithFlags
#define cudaEventDestroy hipEventDestroy
#define cudaEventElapsedTime hipEventElapsedTime
#define cudaEventQuery hipEventQuery
#define cudaEventRecord hipEventRecord
#define cudaEventSynchronize hipEventSynchronize
#define cudaFree hipFree
#define cudaFreeHost hipHostFree
#define cudaFuncGetAttributes hipFuncGetAttributes
#define cudaGetDevice hipGetDevice
#define cudaGetDeviceCount hipGetDeviceCount
#define cudaGetDeviceProperties hipGetDeviceProperties
#define cudaGetErrorName hipGetErrorName
#define cudaGetErrorString hipGetErrorString
#define cudaGetLastError hipGetLastError
#define cudaGraphDestroy hipGraphDestroy
#define cudaGraphExecDestroy hipGraphExecDestroy
#define cudaGraphInstantiate(exec, graph, flags) hipGraphInstantiate(exec, graph, nullptr, nullptr, 0)
#define cudaGraphLaunch hipGraphLaunch
#define cudaHostAlloc hipHostMalloc
#define cudaHostGetDevicePointer hipHostGetDevicePointer
#define cudaHostRegister hipHostRegister
#define cudaHostUnregister hipHostUnregister
#define cudaMalloc hipMalloc
#define cudaMemGetInfo hipMemGetInfo
#define cudaMemcpy hipMemcpy
#define cudaMemcpy2DAsync hipMemcpy2DAsync
#define cudaMemcpyAsync hipMemcpyAsync
#define cudaMemset hipMemset
#define cudaMemsetAsync hipMemsetAsync
#define cudaOccupancyMaxActiveBlocksPerMultiprocessor hipOccupancyMaxActiveBlocksPerMultiprocessor
#define cudaRuntimeGetVersion hipRuntimeGetVersion
#define cudaSetDevice hipSetDevice
#define cudaStreamBeginCapture hipStreamBeginCapture
#define cudaStreamCreateWithFlags hipStreamCreateWithFlags
#define cudaStreamCreateWithPriority hipStreamCreateWithPriority
#define cudaDeviceGetStreamPriorityRange hipDeviceGetStreamPriorityRange
#define cudaStreamDestroy hipStreamDestroy
#define cudaStreamEndCapture hipStreamEndCapture
#define cudaStreamSynchronize hipStreamSynchronize
#define cudaStreamWaitEvent hipStreamWaitEvent

#else

#include <cuda_runtime.h>

#endif

#include "common/host_device.hpp"

// __launch_bounds__(threads, blocks): CUDA reads the second number as the blocks an SM should hold at once and
// budgets registers for them; HIP reads it as waves per SIMD, a different and much stronger limit (two waves
// halve a wave's registers). KS_LAUNCH_BOUNDS(threads, blocks) passes the block count to CUDA only.
#if defined(KS_HIP)
#define KS_LAUNCH_BOUNDS(threads, blocks) __launch_bounds__(threads)
#else
#define KS_LAUNCH_BOUNDS(threads, blocks) __launch_bounds__(threads, blocks)
#endif

namespace ks {

// The runtime's name, for messages: "no HIP device is visible".
#if defined(KS_HIP)
inline constexpr const char* kRuntimeName = "HIP";
#else
inline constexpr const char* kRuntimeName = "CUDA";
#endif

// Lanes of the target's warp (wavefront). The HIP build targets wave64 GPUs only (CMake passes
// KS_HIP_WAVEFRONT and refuses a target list of mixed widths); its device passes check the compiler agrees.
#if defined(KS_HIP)
inline constexpr int kWarpSize = KS_HIP_WAVEFRONT;
#if defined(__HIP_DEVICE_COMPILE__)
static_assert(__AMDGCN_WAVEFRONT_SIZE == KS_HIP_WAVEFRONT, "the target's wavefront is not the build's lane count");
#endif
#else
inline constexpr int kWarpSize = 32;
#endif

#if defined(__CUDACC__) || defined(__HIPCC__)
// The value of lane (this lane + offset) of the warp, or this lane's own where that is past the last lane. Every
// lane of the warp calls it together.
template <class T>
__device__ __forceinline__ T shfl_down(T v, unsigned offset) {
#if defined(KS_HIP)
  return __shfl_down(v, offset);  // a wavefront runs its lanes together: no mask
#else
  return __shfl_down_sync(0xffffffffu, v, offset);
#endif
}

// Orders the shared-memory accesses of the lanes of one warp: what a lane wrote before it is visible to the
// others after it. CUDA: __syncwarp (since Volta the lanes of a warp are scheduled independently). HIP on gfx9:
// the lanes of a wavefront execute together, so a workgroup-memory fence at wavefront scope and a barrier the
// compiler may not move code across suffice.
__device__ __forceinline__ void sync_warp() {
#if defined(KS_HIP)
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "wavefront");
  __builtin_amdgcn_wave_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "wavefront");
#else
  __syncwarp();
#endif
}
#endif

}  // namespace ks
