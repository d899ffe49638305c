#include "bench/clocks.hpp"

#include <dlfcn.h>

namespace ks::bench {
namespace {

// The few NVML entry points used, with their documented C signatures (nvml.h): return 0 on success.
using Device = void*;
using InitFn = int (*)();
using HandleFn = int (*)(const char*, Device*);
using ClockFn = int (*)(Device, int, unsigned*);
using TemperatureFn = int (*)(Device, int, unsigned*);
using PowerFn = int (*)(Device, unsigned*);
constexpr int kClockGraphics = 0, kClockSm = 1, kClockMem = 2, kTemperatureGpu = 0;

template <class F>
F symbol(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

}  // namespace

GpuState read_gpu_state(const std::string& pci_bus_id) {
  GpuState s;
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    s.why = "NVML (libnvidia-ml.so.1) not found";
    return s;
  }
  const auto init = symbol<InitFn>(lib, "nvmlInit_v2");
  const auto shutdown = symbol<InitFn>(lib, "nvmlShutdown");
  const auto handle = symbol<HandleFn>(lib, "nvmlDeviceGetHandleByPciBusId_v2");
  const auto clock = symbol<ClockFn>(lib, "nvmlDeviceGetClockInfo");
  const auto temperature = symbol<TemperatureFn>(lib, "nvmlDeviceGetTemperature");
  const auto power = symbol<PowerFn>(lib, "nvmlDeviceGetPowerUsage");
  if (!init || !shutdown || !handle || !clock) {
    s.why = "NVML lacks the expected entry points";
  } else if (init() != 0) {
    s.why = "nvmlInit failed";
  } else {
    Device d = nullptr;
    if (handle(pci_bus_id.c_str(), &d) != 0) {
      s.why = "NVML does not know PCI device " + pci_bus_id;
    } else {
      s.known = clock(d, kClockSm, &s.sm_clock_mhz) == 0 && clock(d, kClockMem, &s.memory_clock_mhz) == 0 &&
                clock(d, kClockGraphics, &s.graphics_clock_mhz) == 0;
      if (!s.known) s.why = "nvmlDeviceGetClockInfo failed";
      if (temperature) temperature(d, kTemperatureGpu, &s.temperature_c);
      unsigned mw = 0;
      if (power && power(d, &mw) == 0) s.power_w = mw / 1000.0;
    }
    shutdown();
  }
  dlclose(lib);
  return s;
}

}  // namespace ks::bench
