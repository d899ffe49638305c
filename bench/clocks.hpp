// The GPU's clocks, temperature and power at the start of a run, read through NVML (the driver's management
// library) opened at run time, so kbench starts on machines without a driver and builds without nvml.h.
#pragma once

#include <string>

namespace ks::bench {

struct GpuState {
  bool known = false;  // false: NVML missing or the device not found; `why` says which
  std::string why;
  unsigned sm_clock_mhz = 0, memory_clock_mhz = 0, graphics_clock_mhz = 0;
  unsigned temperature_c = 0;
  double power_w = 0;
};

// `pci_bus_id` as cudaDeviceGetPCIBusId writes it (e.g. "0000:00:06.0").
GpuState read_gpu_state(const std::string& pci_bus_id);

}  // namespace ks::bench
