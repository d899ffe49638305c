// The GPU's clocks, temperature, power and throttling, read through NVML (the driver's management library)
// opened at run time, so kbench starts on machines without a driver and builds without nvml.h. Read at the
// start of a run and before and after every row: a row during which the GPU throttled is flagged.
#pragma once

#include <string>

namespace ks::bench {

struct GpuState {
  bool known = false;  // false: NVML missing or the device not found; `why` says which
  std::string why;
  unsigned sm_clock_mhz = 0, memory_clock_mhz = 0, graphics_clock_mhz = 0;
  unsigned temperature_c = 0;
  double power_w = 0;
  unsigned long long throttle_reasons = 0;  // NVML clocks-event reasons at the time of reading
  // Time the GPU has spent held below its clocks by the power and by the thermal policy since the driver
  // loaded (ns); where NVML does not report it, violations_known is false.
  bool violations_known = false;
  unsigned long long power_violation_ns = 0, thermal_violation_ns = 0;
};

// What happened between two reads around a row.
struct Throttle {
  bool throttled = false;
  std::string why;  // e.g. "sw power cap; power policy 3.2 ms"
};
Throttle throttle_between(const GpuState& before, const GpuState& after);

// The NVML reasons that mean slower clocks (power cap, slowdowns, thermal), as text; "" when none.
std::string slowdown_reasons(unsigned long long reasons);

// NVML for one device (its PCI bus id as cudaDeviceGetPCIBusId writes it, e.g. "0000:00:06.0"), open from
// construction to destruction.
class Nvml {
 public:
  explicit Nvml(const std::string& pci_bus_id);
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;
  GpuState read() const;

 private:
  struct Api;
  Api* api_ = nullptr;
  std::string why_;  // why nothing can be read
};

}  // namespace ks::bench
