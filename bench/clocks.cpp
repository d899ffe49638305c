#include "bench/clocks.hpp"

#include <dlfcn.h>

#include <cstdio>

namespace ks::bench {

// The NVML entry points used, with their documented C signatures (nvml.h): each returns 0 on success. Named, not
// anonymous: Nvml::Api holds them, and a class of external linkage holding a type of internal linkage is what GCC's
// -Wsubobject-linkage reports (and GCC 13 crashed on) where the file is compiled inside a unity source
// (cmake/KsCompileOptions.cmake, KS_UNITY_HOST).
namespace nvml_abi {
using Device = void*;
using InitFn = int (*)();
using HandleFn = int (*)(const char*, Device*);
using ClockFn = int (*)(Device, int, unsigned*);
using TemperatureFn = int (*)(Device, int, unsigned*);
using PowerFn = int (*)(Device, unsigned*);
using ReasonsFn = int (*)(Device, unsigned long long*);
struct ViolationTime {
  unsigned long long reference_time;
  unsigned long long violation_time;
};
using ViolationFn = int (*)(Device, int, ViolationTime*);
}  // namespace nvml_abi

namespace {
constexpr int kClockGraphics = 0, kClockSm = 1, kClockMem = 2, kTemperatureGpu = 0;
constexpr int kPolicyPower = 0, kPolicyThermal = 1;

// nvmlClocksEventReason* bits that lower the clocks (idle, application and display settings do not count).
struct Reason {
  unsigned long long bit;
  const char* name;
};
constexpr Reason kSlowdowns[] = {{0x4, "sw power cap"},
                                 {0x8, "hw slowdown"},
                                 {0x20, "sw thermal slowdown"},
                                 {0x40, "hw thermal slowdown"},
                                 {0x80, "hw power brake"}};

template <class F>
F symbol(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

}  // namespace

struct Nvml::Api {
  void* lib = nullptr;
  nvml_abi::InitFn shutdown = nullptr;
  nvml_abi::ClockFn clock = nullptr;
  nvml_abi::TemperatureFn temperature = nullptr;
  nvml_abi::PowerFn power = nullptr;
  nvml_abi::ReasonsFn reasons = nullptr;
  nvml_abi::ViolationFn violation = nullptr;
  nvml_abi::Device device = nullptr;
};

Nvml::Nvml(const std::string& pci_bus_id) {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    why_ = "NVML (libnvidia-ml.so.1) not found";
    return;
  }
  const auto init = symbol<nvml_abi::InitFn>(lib, "nvmlInit_v2");
  const auto handle = symbol<nvml_abi::HandleFn>(lib, "nvmlDeviceGetHandleByPciBusId_v2");
  auto api = new Api{lib,
                     symbol<nvml_abi::InitFn>(lib, "nvmlShutdown"),
                     symbol<nvml_abi::ClockFn>(lib, "nvmlDeviceGetClockInfo"),
                     symbol<nvml_abi::TemperatureFn>(lib, "nvmlDeviceGetTemperature"),
                     symbol<nvml_abi::PowerFn>(lib, "nvmlDeviceGetPowerUsage"),
                     symbol<nvml_abi::ReasonsFn>(lib, "nvmlDeviceGetCurrentClocksEventReasons"),
                     symbol<nvml_abi::ViolationFn>(lib, "nvmlDeviceGetViolationStatus"),
                     nullptr};
  if (!api->reasons) api->reasons = symbol<nvml_abi::ReasonsFn>(lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
  if (!init || !api->shutdown || !handle || !api->clock) {
    why_ = "NVML lacks the expected entry points";
  } else if (init() != 0) {
    why_ = "nvmlInit failed";
  } else if (handle(pci_bus_id.c_str(), &api->device) != 0) {
    why_ = "NVML does not know PCI device " + pci_bus_id;
    api->shutdown();
  } else {
    api_ = api;
    return;
  }
  delete api;
  dlclose(lib);
}

Nvml::~Nvml() {
  if (!api_) return;
  api_->shutdown();
  dlclose(api_->lib);
  delete api_;
}

GpuState Nvml::read() const {
  GpuState s;
  if (!api_) {
    s.why = why_;
    return s;
  }
  const nvml_abi::Device d = api_->device;
  s.known = api_->clock(d, kClockSm, &s.sm_clock_mhz) == 0 && api_->clock(d, kClockMem, &s.memory_clock_mhz) == 0 &&
            api_->clock(d, kClockGraphics, &s.graphics_clock_mhz) == 0;
  if (!s.known) s.why = "nvmlDeviceGetClockInfo failed";
  if (api_->temperature) api_->temperature(d, kTemperatureGpu, &s.temperature_c);
  unsigned mw = 0;
  if (api_->power && api_->power(d, &mw) == 0) s.power_w = mw / 1000.0;
  if (api_->reasons) api_->reasons(d, &s.throttle_reasons);
  nvml_abi::ViolationTime power{}, thermal{};
  s.violations_known = api_->violation && api_->violation(d, kPolicyPower, &power) == 0 &&
                       api_->violation(d, kPolicyThermal, &thermal) == 0;
  s.power_violation_ns = power.violation_time;
  s.thermal_violation_ns = thermal.violation_time;
  return s;
}

std::string slowdown_reasons(unsigned long long reasons) {
  std::string out;
  for (const Reason& r : kSlowdowns)
    if (reasons & r.bit) out += (out.empty() ? "" : ", ") + std::string(r.name);
  return out;
}

Throttle throttle_between(const GpuState& before, const GpuState& after) {
  Throttle t;
  if (!before.known || !after.known) return t;
  t.why = slowdown_reasons(after.throttle_reasons);
  if (before.violations_known && after.violations_known) {
    char buf[96];
    const unsigned long long power = after.power_violation_ns - before.power_violation_ns;
    const unsigned long long thermal = after.thermal_violation_ns - before.thermal_violation_ns;
    if (power > 0) {
      std::snprintf(buf, sizeof buf, "power policy %.3g ms", power / 1e6);
      t.why += (t.why.empty() ? "" : "; ") + std::string(buf);
    }
    if (thermal > 0) {
      std::snprintf(buf, sizeof buf, "thermal policy %.3g ms", thermal / 1e6);
      t.why += (t.why.empty() ? "" : "; ") + std::string(buf);
    }
  }
  t.throttled = !t.why.empty();
  return t;
}

}  // namespace ks::bench
