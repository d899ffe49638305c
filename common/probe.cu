// A do-nothing kernel compiled like every other: the driver's choice of image for it (SASS or JIT from PTX)
// is the choice it makes for the whole binary.
#include "common/device_info.hpp"

#include "common/gpu_runtime.hpp"

namespace ks {
namespace {
__global__ void image_probe_kernel() {}
}  // namespace

LoadedImage probe_loaded_image(int device) {
  LoadedImage out;
  cudaError_t err = cudaSetDevice(device);
  cudaFuncAttributes attr{};
  if (err == cudaSuccess) err = cudaFuncGetAttributes(&attr, reinterpret_cast<const void*>(image_probe_kernel));
  if (err != cudaSuccess) {
    out.error = std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
    (void)cudaGetLastError();  // not sticky: clear it
    return out;
  }
  out.ok = true;
  out.binary_version = attr.binaryVersion;
  out.ptx_version = attr.ptxVersion;
  return out;
}

}  // namespace ks
