// Device facts (what check_cc prints and every benchmark result carries) and the question "does this
// binary carry code for this GPU?".
#pragma once

#include "common/json.hpp"

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace ks {

// No driver, no device, or an index that does not exist: one clear line for the user.
class NoDeviceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Number of visible CUDA devices; throws NoDeviceError when there is none or no usable driver.
int visible_device_count();
// Throws NoDeviceError unless 0 <= index < visible_device_count().
void require_device(int index);
// True when at least one device is visible (never throws): used by tests to skip.
bool gpu_available(std::string* why_not = nullptr);

// Peak device-memory bandwidth, GB/s, from the memory clock (kHz) and the bus width: double data rate, two
// transfers per memory clock across the bus.
inline double dram_bandwidth_gbs(int mem_clock_khz, int bus_width_bits) {
  return 2.0 * mem_clock_khz * 1e3 * (bus_width_bits / 8.0) / 1e9;
}

struct DeviceFacts {
  int index = 0;
  std::string name;
  std::string pci_bus_id;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int max_threads_per_block = 0;
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;
  int warp_size = 32;
  int regs_per_block = 0, regs_per_sm = 0;
  std::size_t smem_per_block = 0, smem_per_block_optin = 0, smem_per_sm = 0;
  int l2_bytes = 0;
  std::size_t global_mem_bytes = 0;
  int sm_clock_khz = 0;   // peak
  int mem_clock_khz = 0;  // peak
  int bus_width_bits = 0;
  int fp32_to_fp64_ratio = 0;  // from the device; 0 when it does not say
  int driver_version = 0, runtime_version = 0;
  std::string gfx_arch;  // AMD GPUs (the HIP build): the target, "gfx90a"; empty on NVIDIA GPUs

  int cc() const { return cc_major * 10 + cc_minor; }
  int max_warps_per_sm() const { return warp_size ? max_threads_per_sm / warp_size : 0; }
  double theoretical_bandwidth_gbs() const { return dram_bandwidth_gbs(mem_clock_khz, bus_width_bits); }
};

DeviceFacts query_device(int index);

// An embedded CUDA architecture: 90 for sm_90/compute_90, with 'a' (arch-specific) or 'f' (family) suffix.
struct CudaArch {
  int number = 0;
  char suffix = 0;
  std::string str() const;
};

// Which images the binary carries, from the build's CUDA architecture list.
struct ImageSet {
  bool known = false;     // false when the build used native/all/all-major (no explicit list)
  std::string spec;       // the build's description, e.g. "sass:75,86,90;ptx:75,86,90"
  std::vector<CudaArch> sass;
  std::vector<CudaArch> ptx;
  std::vector<std::string> gfx;  // the HIP build ("hip:gfx906,gfx90a"): the AMD targets of its code objects
};

ImageSet parse_image_spec(const std::string& spec);  // throws std::invalid_argument on a malformed spec
ImageSet compiled_images();                            // this binary's

enum class ImageKind { Sass, Ptx, None, Unknown };

struct ImageVerdict {
  ImageKind kind = ImageKind::Unknown;
  CudaArch arch;       // the image that will be used
  std::string text;    // one line for the user
  std::string advice;  // the CMAKE_CUDA_ARCHITECTURES value to build with, when not SASS
};

// The driver prefers SASS of the same major version and a minor <= the device's; otherwise it JIT-compiles
// the newest PTX whose version is <= the device's; 'a' images run only on exactly their architecture.
ImageVerdict image_for_device(const ImageSet& images, int cc_major, int cc_minor);
// The same for a device as queried: on an AMD GPU (gfx_arch set), code objects run only on exactly their target.
ImageVerdict image_for_device(const ImageSet& images, const DeviceFacts& d);

// What the driver actually loaded for a probe kernel on that device (cudaFuncGetAttributes).
struct LoadedImage {
  bool ok = false;
  int binary_version = 0;  // architecture of the machine code that runs, e.g. 90
  int ptx_version = 0;     // virtual architecture it came from
  std::string error;
};
LoadedImage probe_loaded_image(int device);

std::string format_version(int cuda_version);  // 12040 -> "12.4"
std::string fp64_ratio_text(int fp32_to_fp64_ratio);

std::string format_device_text(const DeviceFacts& d, const ImageVerdict& verdict, const LoadedImage& loaded);
void write_device_json(json::Writer& w, const DeviceFacts& d, const ImageVerdict& verdict,
                       const LoadedImage& loaded);

}  // namespace ks
