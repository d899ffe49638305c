// Code that both the host and the GPU compile: the warp-level algorithms of reduce/warp.hpp, which the unit
// tests also run on the host (tests/test_warp_model.cpp). No runtime header: a plain C++ compiler builds it.
#pragma once

// Host and device, always inlined on the GPU; plain inline C++ where no GPU compiler builds.
#if defined(__CUDACC__) || defined(__HIPCC__)
#define KS_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define KS_HOST_DEVICE inline
#endif

// Asks the device compiler to unroll the loop that follows (nothing in a host pass, whose compiler would warn).
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define KS_UNROLL _Pragma("unroll")
#else
#define KS_UNROLL
#endif
